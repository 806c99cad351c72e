//! FRED: Flow Random Early Drop (Lin and Morris, "Dynamics of Random Early
//! Detection", SIGCOMM 1997, section 4 and the algorithm figure).
//!
//! RED with per-active-flow accounting. For each flow with packets queued
//! FRED keeps `qlen` (its packets in the queue) and `strike` (how often it
//! overran); `nactive` such flows share the average, `avgcq = avg/nactive`
//! (at least 1). On an arrival of flow i:
//!
//! ```text
//! maxq = min_th, or 2 once avg >= max_th
//! if qlen_i >= maxq || (avg >= max_th && qlen_i > 2 avgcq) || (qlen_i >= avgcq && strike_i > 1):
//!     strike_i += 1; drop                        (non-adaptive flow: Policy)
//! if min_th <= avg < max_th:
//!     count += 1
//!     if qlen_i >= max(minq, avgcq): drop with RED's p_a, count = 0   (Early)
//! elif avg < min_th: count = -1
//! else: count = 0; drop                            (Early)
//! ```
//!
//! so flows with fewer than `minq` packets queued are never dropped at
//! random, and a flow that keeps overrunning is held to the average share.
//! The average is computed on arrival only when the queue is empty (the
//! idle decay) and just before accepting a packet, and on every departure
//! (FRED's fix of RED's arrival-only average); the idle time starts when a
//! departure empties the queue. Per-flow state lives while the flow has
//! packets queued.
//!
//! Parameters, their defaults and sources: [`FredParams`]. O(1) per packet
//! (a hash map of active flows).

use std::collections::HashMap;

use crate::blocks::{CountedFifo, Ewma};
use crate::params::{
    link_rate, nonzero, not_negative, params, probability, thresholds, weight, SpecError,
    DEFAULT_LINK_RATE_BPS,
};
use crate::red::{spread_probability, tx_time_ns};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// FRED's parameters: RED's, and the per-flow minimum.
    #[derive(PartialEq)]
    pub struct FredParams {
        /// The buffer: 60 packets, 4 x `max_th` (ours).
        pub limit: u64 [Packets] = 60,
        /// Lower threshold on the average, packets: 5 (RED's, FJ93).
        pub min_th: f64 [Number] = 5.0,
        /// Upper threshold, packets: 15 (RED's).
        pub max_th: f64 [Number] = 15.0,
        /// Weight of the average: 0.002 (RED's).
        pub w_q: f64 [Number] = 0.002,
        /// Drop probability at `max_th`: 0.02 (RED's).
        pub max_p: f64 [Number] = 0.02,
        /// Packets a flow may always queue, `minq`: 2 (Lin and Morris: 2 for
        /// small buffers, 4 for large ones).
        pub min_q: f64 [Number] = 2.0,
        /// The typical packet of the idle decay: 1000 bytes.
        pub mean_packet_size: u32 [Bytes] = 1000,
        /// The rate of the link the queue feeds, for the idle decay: the
        /// simulator fills in the link's (10 Mb/s if unknown).
        pub link_rate_bps: Option<u64> [Rate] = None,
    }
}

impl QdiscParams for FredParams {
    const SUMMARY: &'static str = "flow RED (Lin and Morris 1997)";

    fn validate(&self) -> Result<(), SpecError> {
        nonzero("limit", self.limit)?;
        thresholds(self.min_th, self.max_th)?;
        weight("w_q", self.w_q)?;
        probability("max_p", self.max_p)?;
        not_negative("min_q", self.min_q)?;
        nonzero("mean_packet_size", self.mean_packet_size)?;
        link_rate(self.link_rate_bps)
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.link_rate_bps.get_or_insert(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Fred::new(self.clone(), seed))
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    qlen: u64,
    strike: u64,
}

pub struct Fred<P> {
    queue: CountedFifo<P>,
    flows: HashMap<u64, FlowState>,
    params: FredParams,
    avg: Ewma,
    avgcq: f64,
    count: i64,
    q_time: Time,
    s_ns: f64,
    rng: Rng,
}

impl<P: Packet> Fred<P> {
    pub fn new(params: FredParams, seed: u64) -> Self {
        Self {
            queue: CountedFifo::default(),
            flows: HashMap::new(),
            avg: Ewma::new(params.w_q),
            avgcq: 1.0,
            count: -1,
            q_time: 0,
            s_ns: tx_time_ns(
                params.mean_packet_size,
                params.link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS),
            ),
            rng: Rng::stream(seed, 0xF8ED),
            params,
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg.value()
    }

    /// Active flows (with packets queued).
    pub fn nactive(&self) -> usize {
        self.flows.len()
    }

    /// "calculate average queue length".
    fn calc_avg(&mut self, now: Time, departure: bool) {
        let q = self.queue.len();
        if q > 0 || departure {
            self.avg.update(q as f64);
        } else {
            self.avg
                .decay_idle(now.saturating_sub(self.q_time), self.s_ns);
            // Decayed up to now: a second call while still idle adds nothing.
            self.q_time = now;
        }
        let n = self.flows.len();
        self.avgcq = if n > 0 {
            self.avg.value() / n as f64
        } else {
            self.avg.value()
        }
        .max(1.0);
        if q == 0 && departure {
            self.q_time = now;
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Fred<P> {
    fn name(&self) -> &'static str {
        "fred"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        let key = packet.flow_key();
        let FlowState { qlen, strike } = self.flows.get(&key).copied().unwrap_or_default();
        let qlen = qlen as f64;
        if self.queue.is_empty() {
            self.calc_avg(now, false);
        }
        let p = &self.params;
        let avg = self.avg.value();
        let maxq = if avg >= p.max_th { 2.0 } else { p.min_th };
        // Identify and manage non-adaptive flows.
        if qlen >= maxq
            || (avg >= p.max_th && qlen > 2.0 * self.avgcq)
            || (qlen >= self.avgcq && strike > 1)
        {
            if let Some(f) = self.flows.get_mut(&key) {
                f.strike += 1;
            }
            verdicts.refuse(packet, DropReason::Policy);
            return;
        }
        if p.min_th <= avg && avg < p.max_th {
            // Random drop mode, only from robust flows.
            self.count += 1;
            if qlen >= p.min_q.max(self.avgcq) {
                let pb = p.max_p * (avg - p.min_th) / (p.max_th - p.min_th);
                if self.rng.chance(spread_probability(pb, self.count)) {
                    self.count = 0;
                    verdicts.refuse(packet, DropReason::Early);
                    return;
                }
            }
        } else if avg < p.min_th {
            self.count = -1;
        } else {
            // Drop-tail mode.
            self.count = 0;
            verdicts.refuse(packet, DropReason::Early);
            return;
        }
        if self.queue.len() as u64 >= self.params.limit {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        self.flows.entry(key).or_default().qlen += 1;
        self.calc_avg(now, false);
        self.queue.push_back(packet);
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front()?;
        let key = packet.flow_key();
        let left = {
            let f = self
                .flows
                .get_mut(&key)
                .expect("a queued packet's flow has state");
            f.qlen -= 1;
            f.qlen
        };
        self.calc_avg(now, true);
        if left == 0 {
            self.flows.remove(&key);
        }
        Some(packet)
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn fred(params: FredParams) -> Fred<TestPacket> {
        Fred::new(params, 2)
    }

    #[test]
    fn a_flow_is_capped_at_min_th_packets_and_struck() {
        // w_q tiny: avg stays ~0 (< min_th): only the per-flow cap acts.
        let mut f = fred(FredParams {
            w_q: 1e-9,
            ..Default::default()
        });
        let mut v = Verdicts::new();
        for i in 0..8 {
            f.enqueue(TestPacket::new(1, i, 1000), 0, &mut v);
        }
        // maxq = min_th = 5: packets 5, 6, 7 refused, three strikes.
        assert_eq!(f.backlog().packets, 5);
        let d: Vec<u64> = v.dropped().iter().map(|d| d.packet.seq).collect();
        assert_eq!(d, vec![5, 6, 7]);
        assert!(v.dropped().iter().all(|d| d.reason == DropReason::Policy));
        assert_eq!(f.flows[&1].strike, 3);
        // Struck more than once: held to avgcq (= 1 here) even below maxq.
        v.drain(|_| {});
        for _ in 0..4 {
            f.dequeue(0, &mut v);
        }
        assert_eq!(f.flows[&1].qlen, 1);
        f.enqueue(TestPacket::new(1, 8, 1000), 0, &mut v);
        assert_eq!(v.dropped().len(), 1, "qlen 1 >= avgcq 1 with strike 3");
        // Another flow, never struck, gets in.
        f.enqueue(TestPacket::new(2, 0, 1000), 0, &mut v);
        assert_eq!(f.backlog().packets, 2);
        // State goes when the flow leaves the queue.
        f.dequeue(0, &mut v);
        assert!(!f.flows.contains_key(&1));
        assert_eq!(f.nactive(), 1);
    }

    #[test]
    fn fragile_flows_are_not_dropped_at_random() {
        // avg between the thresholds with p_b high; a flow with fewer than
        // minq (2) packets queued is never dropped at random.
        let mut f = fred(FredParams {
            w_q: 1e-9,
            max_p: 1.0,
            max_th: 100.0,
            limit: 1000,
            ..Default::default()
        });
        let mut v = Verdicts::new();
        f.avg.set(99.0);
        f.q_time = 0;
        // Keep the queue non-empty so no idle decay: one packet of flow 0.
        f.enqueue(TestPacket::new(0, 0, 100), 0, &mut v);
        v.drain(|_| {});
        for flow in 1..200 {
            f.avg.set(99.0);
            f.enqueue(TestPacket::new(flow, 0, 100), 0, &mut v);
        }
        assert!(
            v.dropped().is_empty(),
            "one packet per flow: never random-dropped"
        );
        // A robust flow (qlen >= max(minq, avgcq)) is: p_b = (99 - 5)/95 = 0.99
        f.avg.set(99.0);
        f.enqueue(TestPacket::new(7, 1, 100), 0, &mut v); // qlen 1 < 2: passes
        f.avg.set(99.0);
        f.enqueue(TestPacket::new(7, 2, 100), 0, &mut v); // qlen 2 >= 2: p ~ 1
        assert_eq!(v.dropped().len(), 1);
        assert_eq!(v.dropped()[0].reason, DropReason::Early);
    }

    #[test]
    fn above_max_th_each_flow_gets_two_and_the_rest_is_dropped() {
        let mut f = fred(FredParams {
            w_q: 1e-9,
            limit: 1000,
            ..Default::default()
        });
        let mut v = Verdicts::new();
        f.avg.set(20.0); // >= max_th 15: maxq = 2, drop-tail mode
        f.enqueue(TestPacket::new(1, 0, 100), 0, &mut v);
        assert_eq!(v.dropped()[0].reason, DropReason::Early);
    }
}
