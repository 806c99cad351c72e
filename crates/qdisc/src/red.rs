//! RED: Random Early Detection (Floyd and Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993), with the
//! "gentle" variant (Floyd, "Recommendation on using the gentle_ variant of
//! RED", 2000) and ECN marking (RFC 3168, section 7).
//!
//! On every arrival (FJ93 figure 2):
//! - the average: `avg <- (1-w_q) avg + w_q q` if the queue is non-empty,
//!   else `avg <- (1-w_q)^m avg` with `m = idle time / s`, `s` the
//!   transmission time of a typical packet (section 11; the shared
//!   [`Ewma`] block);
//! - `avg < min_th`: accept, `count = -1`;
//! - `min_th <= avg < max_th`: `count += 1`,
//!   `p_b = max_p (avg - min_th)/(max_th - min_th)`, in byte mode
//!   `p_b <- p_b size / max_packet_size`, `p_a = p_b / (1 - count p_b)`;
//!   with probability `p_a` drop (or mark) and `count = 0`;
//! - gentle, `max_th <= avg < 2 max_th`: as above with
//!   `p_b = max_p + (1 - max_p)(avg - max_th)/max_th`;
//! - above: drop, `count = 0`.
//!
//! Parameters, their defaults and sources: [`RedParams`]; the queue is
//! measured in packets or bytes (section 4 allows either), and byte mode
//! scales `p_b` by size (figure 2's byte-mode line). O(1) per packet.

use serde::{Deserialize, Serialize};

use crate::blocks::{CountedFifo, Ewma};
use crate::params::{
    link_rate, nonzero, params, positive_limit, probability, thresholds, weight, SpecError,
    DEFAULT_LINK_RATE_BPS,
};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Ecn, Limit, Packet, QueueDiscipline, Time, Verdicts};

/// Whether RED measures the queue (and its thresholds) in packets or bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedMode {
    #[default]
    Packets,
    /// Queue in bytes, and the drop probability scaled by packet size.
    Bytes,
}

params! {
    /// RED's parameters, with the defaults of FJ93's simulations.
    #[derive(PartialEq)]
    pub struct RedParams {
        /// The buffer: 60 packets, 4 x `max_th` (ours; FJ93 leaves it to the
        /// gateway).
        pub limit: Limit [Buffer] = Limit::Packets(60),
        /// Whether the queue and its thresholds count packets or bytes (FJ93
        /// section 4 allows either; bytes also scales `p_b` by size).
        pub mode: RedMode [Choice] = RedMode::Packets,
        /// Lower threshold on the average, in packets or bytes by `mode`: 5
        /// (FJ93 section 6's simulations).
        pub min_th: f64 [Number] = 5.0,
        /// Upper threshold on the average: 15 (FJ93 section 6).
        pub max_th: f64 [Number] = 15.0,
        /// Weight of the average: 0.002 (FJ93 section 6).
        pub w_q: f64 [Number] = 0.002,
        /// Drop probability at `max_th`: 0.02 = 1/50 (FJ93 section 6).
        pub max_p: f64 [Number] = 0.02,
        /// Rise from `max_p` to 1 between `max_th` and `2 max_th` (Floyd 2000).
        pub gentle: bool [Flag] = false,
        /// ns-2's `wait_` (true in every ns-2 release): at least `1/p_b`
        /// packets between early drops, `p_a = p_b / (2 - count p_b)` from
        /// there, so gaps are uniform on `[1/p_b, 2/p_b]` where FJ93's are on
        /// `[1, 1/p_b]` (`REDQueue::modify_p`).
        pub wait: bool [Flag] = false,
        /// Mark ECN-capable packets instead of dropping them in the random
        /// region; forced drops stay drops (RFC 3168).
        pub ecn: bool [Flag] = false,
        /// FJ93's rules, or ns-2's with its two additions ([`RedVariant`]).
        pub variant: RedVariant [Choice] = RedVariant::Fj93,
        /// The typical packet of section 11's idle-time correction: 1000 bytes
        /// (ours).
        pub mean_packet_size: u32 [Bytes] = 1000,
        /// Byte mode's MaximumPacketSize (FJ93 figure 2): 1500 bytes.
        pub max_packet_size: u32 [Bytes] = 1500,
        /// The rate of the link the queue feeds, for the transmission time of
        /// a typical packet: the simulator fills in the link's (10 Mb/s if
        /// unknown).
        pub link_rate_bps: Option<u64> [Rate] = None,
    }
}

impl QdiscParams for RedParams {
    const SUMMARY: &'static str =
        "random early detection (Floyd-Jacobson 1993), gentle, byte mode, ECN";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        thresholds(self.min_th, self.max_th)?;
        weight("w_q", self.w_q)?;
        probability("max_p", self.max_p)?;
        nonzero("mean_packet_size", self.mean_packet_size)?;
        nonzero("max_packet_size", self.max_packet_size)?;
        link_rate(self.link_rate_bps)
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.link_rate_bps.get_or_insert(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Red::new(self.clone(), seed))
    }
}

/// Whose RED: FJ93's figure 2, or ns-2's `red.cc`, which adds two rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedVariant {
    #[default]
    Fj93,
    /// ns-2 2.35 `REDQueue::enque`: no drop, early or forced, unless the
    /// queue holds more than one packet (more than one byte in byte mode),
    /// and the first arrival in the early region (again after every spell
    /// below `min_th` or at one packet) is let through with `count = 1`.
    Ns2,
}

/// What RED decided for an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RedVerdict {
    Accept,
    /// Random drop (or mark) in the early region.
    Random,
    /// Forced drop above `max_th` (or `2 max_th` when gentle).
    Forced,
}

/// FJ93's `p_a = p_b / (1 - count p_b)`, 1 once `count p_b >= 1`.
#[inline]
pub(crate) fn spread_probability(pb: f64, count: i64) -> f64 {
    let c = count.max(0) as f64 * pb;
    if c >= 1.0 {
        1.0
    } else {
        pb / (1.0 - c)
    }
}

/// ns-2's `wait_`: no drop while `count p_b < 1`, then `p_b / (2 - count
/// p_b)`, 1 once `count p_b >= 2` (`REDQueue::modify_p`).
#[inline]
pub(crate) fn waiting_probability(pb: f64, count: i64) -> f64 {
    let c = count.max(0) as f64 * pb;
    if c < 1.0 {
        0.0
    } else if c < 2.0 {
        pb / (2.0 - c)
    } else {
        1.0
    }
}

/// Transmission time in ns of `bytes` at `bps`.
#[inline]
pub(crate) fn tx_time_ns(bytes: u32, bps: u64) -> f64 {
    if bps == 0 {
        0.0
    } else {
        bytes as f64 * 8.0e9 / bps as f64
    }
}

pub struct Red<P> {
    queue: CountedFifo<P>,
    params: RedParams,
    avg: Ewma,
    /// Packets since the last drop while in the early region; -1 outside.
    count: i64,
    /// Start of the current idle period (FJ93's `q_time`), while empty.
    idle_since: Option<Time>,
    /// `s`: ns to send a typical packet.
    s_ns: f64,
    rng: Rng,
}

impl<P: Packet> Red<P> {
    pub fn new(params: RedParams, seed: u64) -> Self {
        let bps = params.link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS);
        let s_ns = tx_time_ns(params.mean_packet_size, bps);
        Self {
            queue: CountedFifo::default(),
            avg: Ewma::new(params.w_q),
            count: -1,
            idle_since: Some(0),
            s_ns,
            rng: Rng::stream(seed, 0x8ED),
            params,
        }
    }

    fn link_bps(&self) -> u64 {
        self.params.link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS)
    }

    pub fn params(&self) -> &RedParams {
        &self.params
    }

    /// The average queue, in packets or bytes by mode.
    pub fn avg(&self) -> f64 {
        self.avg.value()
    }

    pub(crate) fn set_max_p(&mut self, max_p: f64) {
        self.params.max_p = max_p;
    }

    #[inline]
    fn current(&self) -> f64 {
        match self.params.mode {
            RedMode::Packets => self.queue.len() as f64,
            RedMode::Bytes => self.queue.bytes() as f64,
        }
    }

    /// Step 1 of an arrival: the average.
    #[inline]
    pub(crate) fn update_average(&mut self, now: Time) {
        match self.idle_since {
            Some(since) if self.queue.is_empty() && now >= since => {
                let idle = now - since;
                if self.params.variant == RedVariant::Ns2 {
                    // ns-2's estimator(): m = int(ptc x idle) samples of 0, then
                    // the arrival's own sample of the (empty) queue.
                    self.avg.decay((idle as f64 / self.s_ns).floor());
                    self.avg.update(0.0);
                } else {
                    self.avg.decay_idle(idle, self.s_ns);
                }
                // Still idle: a later arrival decays only by the time since.
                self.idle_since = Some(now);
            }
            _ => {
                let q = self.current();
                self.avg.update(q);
            }
        }
    }

    /// ns-2's guard: a queue of one packet (or, counted in bytes, an
    /// empty one) is never dropped from.
    #[inline]
    fn ns2_spares(&self) -> bool {
        self.params.variant == RedVariant::Ns2 && self.current() <= 1.0
    }

    /// Step 2: the decision for a packet of `size` bytes.
    #[inline]
    pub(crate) fn decide(&mut self, size: u32) -> RedVerdict {
        let p = &self.params;
        let avg = self.avg.value();
        if avg < p.min_th || self.ns2_spares() {
            self.count = -1;
            return RedVerdict::Accept;
        }
        let pb = if avg < p.max_th {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            return RedVerdict::Forced;
        };
        if self.count < 0 && p.variant == RedVariant::Ns2 {
            self.count = 1;
            return RedVerdict::Accept;
        }
        self.count += 1;
        let pb = match p.mode {
            RedMode::Packets => pb,
            RedMode::Bytes => pb * size as f64 / p.max_packet_size as f64,
        };
        let pa = if p.wait {
            waiting_probability(pb, self.count)
        } else {
            spread_probability(pb, self.count)
        };
        if self.rng.chance(pa) {
            self.count = 0;
            RedVerdict::Random
        } else {
            RedVerdict::Accept
        }
    }

    /// Step 3: act on the verdict.
    #[inline]
    pub(crate) fn apply(&mut self, mut packet: P, verdict: RedVerdict, verdicts: &mut Verdicts<P>) {
        let mark = match verdict {
            RedVerdict::Accept => false,
            RedVerdict::Random if self.params.ecn && packet.ecn() != Ecn::NotEct => true,
            RedVerdict::Random | RedVerdict::Forced => {
                verdicts.refuse(packet, DropReason::Early);
                return;
            }
        };
        if !self.params.limit.admits(self.backlog(), packet.size()) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        if mark {
            packet.mark_ce();
            verdicts.mark(packet.size());
        }
        self.idle_since = None;
        self.queue.push_back(packet);
    }
}

impl<P: Packet> QueueDiscipline<P> for Red<P> {
    fn name(&self) -> &'static str {
        "red"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.update_average(now);
        let v = self.decide(packet.size());
        self.apply(packet, v, verdicts);
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front();
        if self.queue.is_empty() && self.idle_since.is_none() {
            // ns-2 counts the idle time from when the link finds the queue
            // empty, once this last packet is sent (REDQueue::deque).
            let sent = match (&packet, self.params.variant) {
                (Some(p), RedVariant::Ns2) => tx_time_ns(p.size(), self.link_bps()) as Time,
                _ => 0,
            };
            self.idle_since = Some(now + sent);
        }
        packet
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn pkt(seq: u64) -> TestPacket {
        TestPacket::new(1, seq, 1000)
    }

    #[test]
    fn average_follows_the_ewma_and_decays_when_idle() {
        // w_q = 0.5 for hand arithmetic; 1000 B at 8 Mb/s = 1 ms per packet.
        let params = RedParams {
            w_q: 0.5,
            min_th: 100.0,
            max_th: 200.0,
            link_rate_bps: Some(8_000_000),
            ..Default::default()
        };
        let mut red = Red::new(params, 1);
        let mut v = Verdicts::new();
        // Empty queue at t=0 and idle since 0: no decay of 0.
        red.enqueue(pkt(0), 0, &mut v);
        assert_eq!(red.avg(), 0.0);
        red.enqueue(pkt(1), 0, &mut v); // q = 1
        assert_eq!(red.avg(), 0.5);
        red.enqueue(pkt(2), 0, &mut v); // q = 2
        assert_eq!(red.avg(), 1.25);
        for _ in 0..3 {
            red.dequeue(1_000_000, &mut v);
        }
        // Idle from 1 ms to 4 ms: m = 3 packet times, avg *= 0.5^3.
        red.enqueue(pkt(3), 4_000_000, &mut v);
        assert!((red.avg() - 1.25 / 8.0).abs() < 1e-12);
    }

    #[test]
    fn count_spreads_drops_uniformly() {
        // p_b = 0.1: p_a = 0.1/(1 - count 0.1) reaches 1 at count = 10, so
        // with avg held in the early region no more than 10 packets pass
        // between drops.
        assert_eq!(spread_probability(0.1, 0), 0.1);
        assert!((spread_probability(0.1, 5) - 0.2).abs() < 1e-12);
        assert_eq!(spread_probability(0.1, 10), 1.0);
        let params = RedParams {
            w_q: 1.0,
            min_th: 0.0,
            max_th: 2.0,
            max_p: 0.2,
            limit: Limit::Packets(1000),
            ..Default::default()
        };
        let mut red = Red::new(params, 7);
        let mut v = Verdicts::new();
        red.enqueue(pkt(0), 0, &mut v); // avg 0 -> accept
        let mut since_drop = 0;
        for i in 1..2000 {
            // keep exactly one packet queued: avg = 1 with w_q = 1, p_b = 0.1
            red.enqueue(pkt(i), 0, &mut v);
            let dropped = !v.dropped().is_empty();
            v.drain(|_| {});
            if dropped {
                assert!(since_drop <= 9, "{since_drop} packets passed between drops");
                since_drop = 0;
            } else {
                since_drop += 1;
                red.dequeue(0, &mut v);
            }
        }
    }

    /// ns-2's `wait_`: with p_b = 0.1 held, 10 to 19 packets pass between
    /// drops (FJ93's count lets 0 to 9 pass), so drops are a third as
    /// frequent on average.
    #[test]
    fn wait_spaces_drops_between_one_and_two_over_p_b() {
        assert_eq!(waiting_probability(0.1, 9), 0.0);
        assert!((waiting_probability(0.1, 10) - 0.1).abs() < 1e-12);
        assert!((waiting_probability(0.1, 15) - 0.2).abs() < 1e-12);
        assert_eq!(waiting_probability(0.1, 20), 1.0);
        let gaps = |wait: bool| {
            let params = RedParams {
                w_q: 1.0,
                min_th: 0.0,
                max_th: 2.0,
                max_p: 0.2,
                wait,
                limit: Limit::Packets(1000),
                ..Default::default()
            };
            let mut red = Red::new(params, 7);
            let mut v = Verdicts::new();
            red.enqueue(pkt(0), 0, &mut v);
            let (mut gaps, mut since_drop) = (Vec::new(), 0);
            for i in 1..20_000 {
                // one packet queued: avg = 1, p_b = 0.1
                red.enqueue(pkt(i), 0, &mut v);
                let dropped = !v.dropped().is_empty();
                v.drain(|_| {});
                if dropped {
                    gaps.push(since_drop);
                    since_drop = 0;
                } else {
                    since_drop += 1;
                    red.dequeue(0, &mut v);
                }
            }
            gaps.remove(0); // the first gap starts at count -1
            gaps
        };
        let waiting = gaps(true);
        assert!(waiting.iter().all(|g| (9..=19).contains(g)), "{waiting:?}");
        let mean = |g: &[i32]| g.iter().sum::<i32>() as f64 / g.len() as f64;
        assert!((mean(&waiting) - 13.5).abs() < 0.5, "{}", mean(&waiting));
        assert!(mean(&gaps(false)) < 5.0);
    }

    #[test]
    fn thresholds_gentle_and_forced() {
        let base = RedParams {
            w_q: 1.0,
            min_th: 5.0,
            max_th: 10.0,
            max_p: 0.1,
            limit: Limit::Packets(100),
            ..Default::default()
        };
        // avg = 12 > max_th: forced without gentle, random (p_b = 0.28) with.
        let mut red: Red<TestPacket> = Red::new(base.clone(), 3);
        for i in 0..13 {
            red.queue.push_back(pkt(i));
        }
        red.idle_since = None;
        red.avg.set(12.0);
        assert_eq!(red.decide(1000), RedVerdict::Forced);
        let mut gentle: Red<TestPacket> = Red::new(
            RedParams {
                gentle: true,
                ..base.clone()
            },
            3,
        );
        gentle.avg.set(12.0);
        let mut drops = 0;
        for _ in 0..10_000 {
            gentle.count = -1;
            if gentle.decide(1000) == RedVerdict::Random {
                drops += 1;
            }
        }
        // first packet of an episode: count 0, p_a = p_b = 0.1 + 0.9 * 2/10 = 0.28
        assert!((drops as f64 / 10_000.0 - 0.28).abs() < 0.02, "{drops}");
        gentle.avg.set(20.0);
        assert_eq!(gentle.decide(1000), RedVerdict::Forced);
        // below min_th: accept and reset count
        gentle.avg.set(4.9);
        assert_eq!(gentle.decide(1000), RedVerdict::Accept);
        assert_eq!(gentle.count, -1);
    }

    /// ns-2's two rules (red.cc, `REDQueue::enque`): a queue of one packet is
    /// never dropped from, whatever the average; the first arrival in the
    /// early region passes and starts `count` at 1, so the second is dropped
    /// with `p_b / (1 - 2 p_b)`.
    #[test]
    fn ns2_variant_spares_a_one_packet_queue_and_the_first_early_arrival() {
        let params = RedParams {
            variant: RedVariant::Ns2,
            w_q: 1.0,
            min_th: 5.0,
            max_th: 10.0,
            max_p: 0.1,
            limit: Limit::Packets(100),
            ..Default::default()
        };
        let mut red: Red<TestPacket> = Red::new(params, 5);
        red.idle_since = None;
        red.queue.push_back(pkt(0));
        red.avg.set(50.0);
        assert_eq!(red.decide(1000), RedVerdict::Accept, "one packet waits");
        assert_eq!(red.count, -1);
        red.queue.push_back(pkt(1));
        assert_eq!(
            red.decide(1000),
            RedVerdict::Forced,
            "two wait, avg above max_th"
        );
        red.avg.set(7.5); // p_b = 0.05
        let mut drops = 0;
        for _ in 0..20_000 {
            red.count = -1;
            assert_eq!(
                red.decide(1000),
                RedVerdict::Accept,
                "the first arrival passes"
            );
            assert_eq!(red.count, 1);
            if red.decide(1000) == RedVerdict::Random {
                drops += 1;
            }
        }
        let expected = 0.05 / (1.0 - 2.0 * 0.05);
        assert!(
            (drops as f64 / 20_000.0 - expected).abs() < 0.006,
            "{drops}"
        );
    }

    /// ns-2 counts idle time from when the link finds the queue empty, after
    /// the last packet's transmission, and samples the empty queue once more
    /// (`m + 1` in `estimator()`, m whole packet times).
    #[test]
    fn ns2_variant_decays_whole_packet_times_from_the_end_of_the_last_transmission() {
        let params = RedParams {
            variant: RedVariant::Ns2,
            w_q: 0.5,
            min_th: 100.0,
            max_th: 200.0,
            link_rate_bps: Some(8_000_000), // 1000 B = 1 ms
            ..Default::default()
        };
        let mut red = Red::new(params, 1);
        let mut v = Verdicts::new();
        red.enqueue(pkt(0), 0, &mut v);
        red.enqueue(pkt(1), 0, &mut v);
        red.enqueue(pkt(2), 0, &mut v);
        assert_eq!(red.avg(), 1.25);
        red.dequeue(0, &mut v);
        red.dequeue(1_000_000, &mut v);
        red.dequeue(2_000_000, &mut v); // sent by 3 ms: idle from then
        red.enqueue(pkt(3), 2_500_000, &mut v); // the link still busy: q = 0 sampled
        assert_eq!(red.avg(), 0.625);
        red.dequeue(2_500_000, &mut v); // idle from 3.5 ms
        red.enqueue(pkt(4), 6_000_000, &mut v); // 2.5 ms idle: m = 2, then q = 0
        assert_eq!(red.avg(), 0.625 / 8.0);
    }

    #[test]
    fn byte_mode_scales_by_size_and_ecn_marks() {
        let params = RedParams {
            mode: RedMode::Bytes,
            w_q: 1.0,
            min_th: 0.0,
            max_th: 3000.0,
            max_p: 1.0,
            ecn: true,
            limit: Limit::Bytes(100_000),
            ..Default::default()
        };
        let mut red: Red<TestPacket> = Red::new(params, 9);
        red.avg.set(1500.0);
        red.idle_since = None;
        // p_b = 0.5, scaled by 150/1500 -> 0.05 for small packets.
        let mut small = 0;
        for _ in 0..20_000 {
            red.count = -1;
            if red.decide(150) == RedVerdict::Random {
                small += 1;
            }
        }
        assert!((small as f64 / 20_000.0 - 0.05).abs() < 0.01, "{small}");
        // An ECN-capable packet is marked, not dropped, in the random region.
        let mut v = Verdicts::new();
        let mut p = pkt(0);
        p.ecn = Ecn::Ect;
        red.apply(p, RedVerdict::Random, &mut v);
        assert_eq!(v.marked(), 1);
        assert!(v.dropped().is_empty());
        assert_eq!(red.queue.front().unwrap().ecn, Ecn::Ce);
        // ...but a forced drop stays a drop.
        red.apply(p, RedVerdict::Forced, &mut v);
        assert_eq!(v.dropped().len(), 1);
        assert_eq!(v.dropped()[0].reason, DropReason::Early);
    }
}
