//! PIE: Proportional Integral controller Enhanced (RFC 8033; Pan et al.,
//! HPSR 2013), as the RFC's pseudocode (section 5 and appendix A).
//!
//! A FIFO whose arrivals are dropped at random with probability
//! `drop_prob`, which a PI controller on the queueing delay updates every
//! `T_UPDATE` (section 4.2):
//!
//! ```text
//! p = alpha (qdelay - QDELAY_REF) + beta (qdelay - qdelay_old)
//! p scaled down by 2048/512/128/32/8/2 while drop_prob < 1e-6/1e-5/1e-4/1e-3/1e-2/0.1
//! p <= 0.02 once drop_prob >= 0.1;      drop_prob += p
//! drop_prob *= 0.98 when qdelay and qdelay_old are both 0; clamp to [0, 1]
//! ```
//!
//! The delay is estimated from the departure rate (section 4.3: the time
//! `avg_dq_time` to send `DQ_THRESHOLD` bytes, measured while that much is
//! queued; `qdelay = bytes avg_dq_time / DQ_THRESHOLD`) or, as an option,
//! from time stamps (the last departed packet's sojourn). Random drops are
//! bypassed while `burst_allowance > 0` (section 4.4: reset to `MAX_BURST`
//! when the queue has been calm, decremented by `T_UPDATE` per update), when
//! `qdelay_old < QDELAY_REF/2` and `drop_prob < 0.2`, or when at most two
//! packets are queued (section 4.1); drops are de-randomized with the
//! accumulated probability (section 5.1: none below 0.85, always at 8.5).
//! With ECN, an ECN-capable packet is marked instead of dropped while
//! `drop_prob <= mark_ecn_threshold` (section 5.1, 10%).
//!
//! The periodic update is computed lazily, at the next enqueue or dequeue,
//! for every `T_UPDATE` tick that has passed: between two calls the queue
//! does not change, so this equals a timer (and costs nothing when idle).
//! O(1) amortized per packet.

use serde::{Deserialize, Serialize};

use crate::blocks::{CountedFifo, Stamped};
use crate::params::{
    link_rate, nonzero, not_negative, params, positive_limit, probability, SpecError, MS,
};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Ecn, Limit, Packet, QueueDiscipline, Time, Verdicts};

/// How PIE estimates the queueing delay (RFC 8033 section 4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PieEstimator {
    /// Little's law with the measured departure rate (the RFC's pseudocode).
    #[default]
    DequeueRate,
    /// Sojourn time of the last departed packet.
    Timestamp,
}

params! {
    /// PIE's parameters (RFC 8033).
    #[derive(PartialEq)]
    pub struct PieParams {
        /// The buffer, TAIL_DROP: 1000 packets (Linux `sch_pie`'s default).
        pub limit: Limit [Buffer] = Limit::Packets(1000),
        /// QDELAY_REF, the target queueing delay: 15 ms (RFC 8033 section 4).
        pub target: Time [Time] = 15 * MS,
        /// T_UPDATE, the period of the controller: 15 ms (RFC 8033).
        pub t_update: Time [Time] = 15 * MS,
        /// MAX_BURST, the burst let through unharmed: 150 ms (RFC 8033).
        pub max_burst: Time [Time] = 150 * MS,
        /// The controller's gain on the delay's distance from its target,
        /// per second: 0.125 (RFC 8033).
        pub alpha: f64 [Number] = 0.125,
        /// The controller's gain on the delay's change, per second: 1.25
        /// (RFC 8033).
        pub beta: f64 [Number] = 1.25,
        /// Mark ECN-capable packets instead of dropping them (RFC 8033
        /// section 5.1).
        pub ecn: bool [Flag] = false,
        /// The drop probability up to which ECN-capable packets are marked:
        /// 0.1 (RFC 8033 section 5.1).
        pub mark_ecn_threshold: f64 [Number] = 0.1,
        /// How the queueing delay is estimated (RFC 8033 section 4.3).
        pub estimator: PieEstimator [Choice] = PieEstimator::DequeueRate,
        /// DQ_THRESHOLD, the bytes of one departure-rate sample: 2^14 (RFC
        /// 8033).
        pub dq_threshold: u64 [Bytes] = 1 << 14,
        /// MEAN_PKTSIZE: no random drop with at most two of these queued;
        /// 1500 bytes (the value is ours).
        pub mean_packet_size: u32 [Bytes] = 1500,
        /// If set, the first departure-rate estimate is `dq_threshold` at
        /// this rate (the RFC starts at 0); the simulator fills in the
        /// link's.
        pub link_rate_bps: Option<u64> [Rate] = None,
    }
}

impl QdiscParams for PieParams {
    const SUMMARY: &'static str = "PIE (RFC 8033)";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        nonzero("target", self.target)?;
        nonzero("t_update", self.t_update)?;
        not_negative("alpha", self.alpha)?;
        not_negative("beta", self.beta)?;
        probability("mark_ecn_threshold", self.mark_ecn_threshold)?;
        nonzero("dq_threshold", self.dq_threshold)?;
        nonzero("mean_packet_size", self.mean_packet_size)?;
        link_rate(self.link_rate_bps)
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.link_rate_bps.get_or_insert(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Pie::new(self.clone(), seed))
    }
}

pub struct Pie<P> {
    queue: CountedFifo<Stamped<P>>,
    params: PieParams,
    drop_prob: f64,
    accu_prob: f64,
    /// Delays in ns.
    qdelay_old: f64,
    /// The last time-stamp sample (timestamp estimator).
    sample_qdelay: f64,
    burst_allowance: Time,
    in_measurement: bool,
    dq_count: u64,
    measurement_start: Time,
    /// ns to send DQ_THRESHOLD bytes; 0 until measured.
    avg_dq_time: f64,
    next_update: Time,
    rng: Rng,
}

impl<P: Packet> Pie<P> {
    pub fn new(params: PieParams, seed: u64) -> Self {
        let avg_dq_time = params
            .link_rate_bps
            .map_or(0.0, |bps| params.dq_threshold as f64 * 8.0e9 / bps as f64);
        Self {
            queue: CountedFifo::default(),
            drop_prob: 0.0,
            accu_prob: 0.0,
            qdelay_old: 0.0,
            sample_qdelay: 0.0,
            burst_allowance: params.max_burst,
            in_measurement: false,
            dq_count: 0,
            measurement_start: 0,
            avg_dq_time,
            next_update: params.t_update,
            rng: Rng::stream(seed, 0x919),
            params,
        }
    }

    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    pub fn burst_allowance(&self) -> Time {
        self.burst_allowance
    }

    /// The current delay estimate, ns.
    pub fn current_qdelay(&self) -> f64 {
        match self.params.estimator {
            PieEstimator::DequeueRate => {
                self.queue.bytes() as f64 * self.avg_dq_time / self.params.dq_threshold as f64
            }
            PieEstimator::Timestamp => self.sample_qdelay,
        }
    }

    /// `calculate_drop_prob`, once per T_UPDATE.
    fn update(&mut self) {
        let p = &self.params;
        let cur = self.current_qdelay();
        let old = self.qdelay_old;
        let target = p.target as f64;
        let mut delta = (p.alpha * (cur - target) + p.beta * (cur - old)) * 1e-9;
        // Small probabilities move in small steps (section 4.2).
        delta /= match self.drop_prob {
            d if d < 1e-6 => 2048.0,
            d if d < 1e-5 => 512.0,
            d if d < 1e-4 => 128.0,
            d if d < 1e-3 => 32.0,
            d if d < 1e-2 => 8.0,
            d if d < 1e-1 => 2.0,
            _ => 1.0,
        };
        if self.drop_prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        self.drop_prob += delta;
        if cur == 0.0 && old == 0.0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        if self.drop_prob == 0.0 && cur < target / 2.0 && old < target / 2.0 {
            self.burst_allowance = p.max_burst;
        }
        self.burst_allowance = self.burst_allowance.saturating_sub(p.t_update);
        self.qdelay_old = cur;
    }

    /// Run the updates due by `now`; once an update changes nothing, the
    /// rest until `now` would not either.
    fn catch_up(&mut self, now: Time) {
        let step = self.params.t_update.max(1);
        while now >= self.next_update {
            let before = (self.drop_prob, self.qdelay_old, self.burst_allowance);
            self.update();
            self.next_update += step;
            if before == (self.drop_prob, self.qdelay_old, self.burst_allowance)
                && now >= self.next_update
            {
                self.next_update += (now - self.next_update) / step * step + step;
            }
        }
    }

    /// `drop_early` (section 5.1, with de-randomization).
    fn drop_early(&mut self) -> bool {
        let p = &self.params;
        if (self.qdelay_old < p.target as f64 / 2.0 && self.drop_prob < 0.2)
            || self.queue.bytes() <= 2 * p.mean_packet_size as u64
        {
            return false;
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            return true;
        }
        if self.rng.uniform() < self.drop_prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl<P: Packet> QueueDiscipline<P> for Pie<P> {
    fn name(&self) -> &'static str {
        "pie"
    }

    fn enqueue(&mut self, mut packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.catch_up(now);
        if !self.params.limit.admits(self.backlog(), packet.size()) {
            self.accu_prob = 0.0;
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        if self.drop_early() && self.burst_allowance == 0 {
            if self.params.ecn
                && packet.ecn() != Ecn::NotEct
                && self.drop_prob <= self.params.mark_ecn_threshold
            {
                packet.mark_ce();
                verdicts.mark(packet.size());
                self.accu_prob = 0.0;
            } else {
                self.accu_prob = 0.0;
                verdicts.refuse(packet, DropReason::Early);
                return;
            }
        }
        self.queue.push_back(Stamped::new(packet, now));
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        self.catch_up(now);
        let s = self.queue.pop_front()?;
        let left = self.queue.bytes();
        match self.params.estimator {
            PieEstimator::DequeueRate => {
                if self.in_measurement {
                    self.dq_count += s.size() as u64;
                    if self.dq_count >= self.params.dq_threshold {
                        let dq_time = (now - self.measurement_start) as f64;
                        self.avg_dq_time = if self.avg_dq_time == 0.0 {
                            dq_time
                        } else {
                            // weight = DQ_THRESHOLD / 2^16 (0.25 at the default).
                            let w = (self.params.dq_threshold as f64 / 65536.0).min(1.0);
                            dq_time * w + self.avg_dq_time * (1.0 - w)
                        };
                        self.in_measurement = false;
                    }
                }
                if left >= self.params.dq_threshold && !self.in_measurement {
                    self.in_measurement = true;
                    self.measurement_start = now;
                    self.dq_count = 0;
                }
            }
            PieEstimator::Timestamp => {
                self.sample_qdelay = if left == 0 { 0.0 } else { (now - s.at) as f64 };
            }
        }
        Some(s.packet)
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    const MS: Time = 1_000_000;

    fn pie(params: PieParams) -> Pie<TestPacket> {
        Pie::new(params, 4)
    }

    #[test]
    fn controller_steps_are_scaled_by_the_current_probability() {
        let mut q = pie(PieParams {
            estimator: PieEstimator::Timestamp,
            ..Default::default()
        });
        q.sample_qdelay = 30.0 * MS as f64;
        // p = 0.125 (0.030 - 0.015) + 1.25 (0.030 - 0) = 0.039375; < 1e-6: /2048.
        q.update();
        let p1 = 0.039375 / 2048.0;
        assert!((q.drop_prob - p1).abs() < 1e-15);
        // Same delay: p = 0.125 x 0.015 = 0.001875; drop_prob < 1e-4: /128.
        q.update();
        let p2 = p1 + 0.001875 / 128.0;
        assert!((q.drop_prob - p2).abs() < 1e-15);
        // Above 10%, a step is capped at 2%.
        q.drop_prob = 0.2;
        q.sample_qdelay = 500.0 * MS as f64;
        q.update();
        assert!((q.drop_prob - 0.22).abs() < 1e-12);
        // Zero delay twice in a row: decay by 2% (after the negative step).
        q.sample_qdelay = 0.0;
        q.update();
        let after_step = 0.22 + (0.125 * -0.015 + 1.25 * -0.5);
        assert_eq!(q.drop_prob, 0.0_f64.max(after_step));
        q.drop_prob = 0.5;
        q.update();
        let p = (0.5 + 0.125 * -0.015) * 0.98;
        assert!((q.drop_prob - p).abs() < 1e-12);
    }

    #[test]
    fn burst_allowance_protects_a_burst_then_runs_out() {
        let mut q = pie(PieParams {
            estimator: PieEstimator::Timestamp,
            limit: Limit::Packets(100_000),
            ..Default::default()
        });
        let mut v = Verdicts::new();
        // A congested state: high probability, high delay, but a fresh burst allowance.
        q.drop_prob = 0.5;
        q.qdelay_old = 100.0 * MS as f64;
        q.sample_qdelay = 100.0 * MS as f64;
        assert_eq!(q.burst_allowance(), 150 * MS);
        for i in 0..200 {
            q.enqueue(TestPacket::new(1, i, 1000), 0, &mut v);
        }
        assert!(v.dropped().is_empty(), "no drop during the burst allowance");
        // Each update takes 15 ms off: 0 after 10 updates (150 ms).
        q.enqueue(TestPacket::new(1, 200, 1000), 135 * MS, &mut v);
        assert_eq!(q.burst_allowance(), 15 * MS);
        assert!(v.dropped().is_empty());
        q.enqueue(TestPacket::new(1, 201, 1000), 150 * MS, &mut v);
        assert_eq!(q.burst_allowance(), 0);
        let mut dropped = 0;
        for i in 0..100 {
            q.enqueue(TestPacket::new(1, 202 + i, 1000), 150 * MS, &mut v);
            dropped = v.dropped().len();
        }
        assert!(dropped > 20, "{dropped}");
        assert!(v
            .dropped()
            .iter()
            .all(|d| d.reason == DropReason::Early && !d.buffered));
    }

    #[test]
    fn derandomized_drops_and_the_safeguards() {
        let mut q = pie(PieParams::default());
        q.burst_allowance = 0;
        q.qdelay_old = 30.0 * MS as f64;
        for i in 0..10 {
            q.queue
                .push_back(Stamped::new(TestPacket::new(1, i, 1000), 0));
        }
        // drop_prob 0.1: accu 0.1 ... 0.8 never drops (8 packets), and the
        // accumulated probability forces a drop by 8.5 at the latest.
        q.drop_prob = 0.1;
        for _ in 0..8 {
            assert!(!q.drop_early());
        }
        q.accu_prob = 8.45;
        assert!(q.drop_early());
        // Safeguards: low delay with drop_prob < 0.2, or <= 2 packets queued.
        q.accu_prob = 8.45;
        q.qdelay_old = 7.0 * MS as f64;
        assert!(!q.drop_early());
        q.qdelay_old = 30.0 * MS as f64;
        while q.queue.len() > 4 {
            q.queue.pop_front();
        }
        assert!(q.drop_early());
        q.accu_prob = 8.45;
        q.queue.pop_front();
        assert!(!q.drop_early(), "4000 B > 2 x 1500 B but 3000 B is not");
    }

    #[test]
    fn ecn_marks_below_the_threshold_and_drops_above() {
        let mut q = pie(PieParams {
            ecn: true,
            ..Default::default()
        });
        let mut v = Verdicts::new();
        q.burst_allowance = 0;
        q.qdelay_old = 30.0 * MS as f64;
        for i in 0..10 {
            q.queue
                .push_back(Stamped::new(TestPacket::new(1, i, 1000), 0));
        }
        let mut p = TestPacket::new(2, 0, 1000);
        p.ecn = Ecn::Ect;
        q.drop_prob = 0.1;
        q.accu_prob = 9.0;
        q.enqueue(p, 0, &mut v);
        assert_eq!(v.marked(), 1);
        assert!(v.dropped().is_empty());
        q.drop_prob = 0.3;
        q.accu_prob = 9.0;
        q.enqueue(p, 0, &mut v);
        assert_eq!(v.dropped().len(), 1);
    }

    #[test]
    fn departure_rate_is_measured_over_dq_threshold_bytes() {
        let mut q = pie(PieParams::default());
        let mut v = Verdicts::new();
        for i in 0..40 {
            q.enqueue(TestPacket::new(1, i, 1024), 0, &mut v);
        }
        // One 1024 B packet per ms: the first dequeue leaves 39 KiB >= 16 KiB
        // and starts a measurement; 16 more packets (16 KiB) end it at 17 ms.
        for t in 1..=17 {
            q.dequeue(t * MS, &mut v);
        }
        assert_eq!(q.avg_dq_time, 16.0 * MS as f64);
        // 23 packets left: qdelay = 23552 x 16 ms / 16384 = 23 ms.
        assert!((q.current_qdelay() - 23.0 * MS as f64).abs() < 1.0);
        // The next measurement starts at 17 ms; at 2 ms per packet it takes
        // 32 ms and blends in with weight 16384/65536 = 0.25: 20 ms.
        for t in 0..16 {
            q.dequeue(17 * MS + 2 * MS * (t + 1), &mut v);
        }
        assert_eq!(q.avg_dq_time, 20.0 * MS as f64);
    }
}
