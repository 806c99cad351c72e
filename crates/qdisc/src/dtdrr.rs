//! Dynamic Threshold DRR: kind `dtdrr`.
//!
//! Source: Kantawala and Turner, WUCSE-2005-11 (seed
//! `000_36d3c99b5bba185e.txt`), section 6.2 item 1, equation 6.1; digest
//! 000, section 2.8. The rule is Choudhury and Hahne's dynamic threshold for
//! shared-memory switches (IEEE/ACM ToN 1998).
//!
//! DRR queues in one shared buffer; an arriving packet for queue i is
//! dropped on arrival if `Q_i(t) >= alpha * F(t)`, F the free buffer space,
//! and enqueued otherwise. When F = 0 the rule always drops. No packet is
//! ever removed once queued, so no memory bandwidth is spent writing packets
//! that are later dropped (the point of chapter 6).
//!
//! Parameters, their defaults and sources: [`DtdrrParams`].
//!
//! Choices: Q_i and F are counted in the unit of `limit`, packets or bytes
//! (A-DT1 recommends packets, matching the packet-denominated buffers; with
//! fixed-size packets both agree). An arrival that does not fit is dropped
//! whatever alpha (F is less than the packet). Drops are `overflow`: the
//! queue's share of the buffer is full.
//!
//! With n equally backlogged queues the rule settles at
//! Q = alpha * B / (1 + alpha * n) (digest 2.8 [D]), keeping a small reserve
//! of free buffer.
//!
//! O(1) per packet.

use crate::blocks::{delegate_to_drr_queues, free_space, DrrQueues, PerFlowQueues, QueueMap};
use crate::params::{params, positive, positive_limit, SpecError};
use crate::spec::QdiscParams;
use crate::{DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// DTDRR's parameters (section 6.2).
    #[derive(PartialEq)]
    pub struct DtdrrParams {
        required {
            /// The shared buffer B, packets or bytes; no default.
            pub limit: Limit [Buffer],
        }
        #[flatten] pub per_flow: PerFlowQueues,
        /// alpha of the threshold `alpha F`: 2 (section 6.2, "we set alpha to
        /// 2 for evaluating this policy").
        pub alpha: f64 [Number] = 2.0,
    }
}

impl QdiscParams for DtdrrParams {
    const SUMMARY: &'static str = "DRR with dynamic per-queue thresholds alpha*B/(1+alpha*n)";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.per_flow.validate()?;
        positive("alpha", self.alpha)
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Dtdrr::new(
            self.limit,
            self.per_flow.quantum,
            self.per_flow.map(seed),
            self.alpha,
        ))
    }
}

pub struct Dtdrr<P> {
    q: DrrQueues<P>,
    limit: Limit,
    alpha: f64,
}

impl<P: Packet> Dtdrr<P> {
    pub fn new(limit: Limit, quantum: u32, map: QueueMap, alpha: f64) -> Self {
        Self {
            q: DrrQueues::new(map, quantum as u64, false),
            limit,
            alpha,
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Dtdrr<P> {
    fn name(&self) -> &'static str {
        "dtdrr"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.q.wakeup(now);
        let dst = self.q.classify(packet.flow_key());
        let backlog = self.q.backlog();
        let free = free_space(self.limit, backlog) as f64;
        if !self.limit.admits(backlog, packet.size())
            || self.q.size_in(dst, self.limit) as f64 >= self.alpha * free
        {
            verdicts.refuse(packet, DropReason::Overflow);
        } else {
            self.q.push(dst, packet);
        }
    }

    delegate_to_drr_queues!(lookup, dequeue, clock);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn settle(b: u64, n: u64, alpha: f64) -> (Vec<usize>, u64) {
        let mut d = Dtdrr::new(
            Limit::Packets(b),
            1500,
            QueueMap::Modulo { count: n as usize },
            alpha,
        );
        let mut v = Verdicts::new();
        // Every flow offers far more than its share, round robin, no service.
        for round in 0..b {
            for f in 0..n {
                d.enqueue(TestPacket::new(f, round, 1500), 0, &mut v);
            }
        }
        let mut refused = 0;
        v.drain(|x| {
            assert_eq!((x.reason, x.buffered), (DropReason::Overflow, false));
            refused += 1;
        });
        ((0..n as usize).map(|q| d.q.len(q)).collect(), refused)
    }

    #[test]
    fn equilibrium_queue_length_is_alpha_b_over_one_plus_alpha_n() {
        // alpha = 2, B = 1000, n = 2: Q = 2000 / 5 = 400 each, 200 free.
        let (lens, refused) = settle(1000, 2, 2.0);
        assert_eq!(lens, vec![400, 400]);
        assert_eq!(refused, 2000 - 800);
        // B = 900, n = 4: Q = 1800 / 9 = 200 each.
        assert_eq!(settle(900, 4, 2.0).0, vec![200; 4]);
        // alpha = 0.5, B = 600, n = 2: Q = 300 / 2 = 150.
        assert_eq!(settle(600, 2, 0.5).0, vec![150, 150]);
    }

    #[test]
    fn threshold_decisions_on_a_small_trace() {
        // B = 6, alpha = 2. Queue 0 alone: accepts while Q0 < 2 F.
        // Q0 = 0, F = 6: ok; 1 < 10 ok; 2 < 8 ok; 3 < 6 ok; 4 >= 4 drop.
        let mut d = Dtdrr::new(Limit::Packets(6), 1500, QueueMap::per_flow(), 2.0);
        let mut v = Verdicts::new();
        for s in 0..5 {
            d.enqueue(TestPacket::new(0, s, 1500), 0, &mut v);
        }
        assert_eq!(d.backlog().packets, 4);
        assert_eq!(
            v.dropped().iter().map(|x| x.packet.seq).collect::<Vec<_>>(),
            vec![4]
        );
        // Another queue still gets in: Q1 = 0 < 2 * 2; then 1 < 2; then
        // 2 >= 0 (F = 0): dropped.
        for s in 0..3 {
            d.enqueue(TestPacket::new(1, s, 1500), 0, &mut v);
        }
        assert_eq!(d.backlog().packets, 6);
        assert_eq!(v.dropped().len(), 2);
        // Nothing queued was ever discarded.
        assert!(v.dropped().iter().all(|x| !x.buffered));
    }
}
