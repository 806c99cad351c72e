//! DRR with longest-queue drop (LQD): kind `drr`.
//!
//! Source: Kantawala and Turner, WUCSE-2005-11 (seed
//! `000_36d3c99b5bba185e.txt`), section 3.2 item 1 "DRR with Longest Queue
//! Drop"; digest 000, sections 2.4 and 2.5. The discard policy is part of
//! the original DRR proposal (Shreedhar and Varghese 1995) and goes back to
//! McKenney's SFQ.
//!
//! Per-flow queues (or buckets) in one shared buffer, served by DRR. When a
//! packet arrives to a full buffer, a packet is discarded from the longest
//! queue, then the arrival is enqueued (even if it belongs to that queue).
//!
//! Parameters, their defaults and sources: [`DrrParams`]. Dropping from the
//! front as QSDRR does keeps the victim's choice the only difference between
//! DRR, TDRR and QSDRR.
//!
//! Choices: lengths are in packets and compared before the arrival is added
//! (A-Q3); ties between longest queues are broken at random with the
//! discipline's seed (A-Q2); a queue emptied by a discard leaves the DRR
//! round with its deficit reset (digest 2.4 [REC]).
//!
//! O(1) per packet: the longest queue comes from the length table.

use serde::{Deserialize, Serialize};

use crate::blocks::{delegate_to_drr_queues, ever_fits, DrrQueues, PerFlowQueues, QueueMap};
use crate::params::{params, positive_limit, SpecError};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

/// Which end of the victim queue a push-out takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropEnd {
    #[default]
    Front,
    Tail,
}

params! {
    /// DRR with LQD's parameters (section 3.2 item 1; digest 000, 2.4-2.5).
    #[derive(PartialEq)]
    pub struct DrrParams {
        required {
            /// The shared buffer B, packets or bytes; no default: the report
            /// sweeps it (100 to 20,000 packets).
            pub limit: Limit [Buffer],
        }
        #[flatten] pub per_flow: PerFlowQueues,
        /// Which end of the longest queue a push-out takes: `front`, the end
        /// QSDRR takes (digest 000, 2.5 and A-Q1, recommended); `tail` is the
        /// ablation.
        pub drop_from: DropEnd [Choice] = DropEnd::Front,
    }
}

impl QdiscParams for DrrParams {
    const SUMMARY: &'static str = "per-flow queues, deficit round robin, longest-queue drop";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.per_flow.validate()
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(DrrLqd::new(
            self.limit,
            self.per_flow.quantum,
            self.per_flow.map(seed),
            self.drop_from,
            seed,
        ))
    }
}

pub struct DrrLqd<P> {
    q: DrrQueues<P>,
    limit: Limit,
    drop_from: DropEnd,
    rng: Rng,
}

impl<P: Packet> DrrLqd<P> {
    pub fn new(limit: Limit, quantum: u32, map: QueueMap, drop_from: DropEnd, seed: u64) -> Self {
        Self {
            q: DrrQueues::new(map, quantum as u64, true),
            limit,
            drop_from,
            rng: Rng::stream(seed, 0x11d),
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for DrrLqd<P> {
    fn name(&self) -> &'static str {
        "drr"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.q.wakeup(now);
        if !ever_fits(self.limit, packet.size()) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        let dst = self.q.classify(packet.flow_key());
        while !self.limit.admits(self.q.backlog(), packet.size()) {
            let victim = self
                .q
                .lengths()
                .longest_random(&mut self.rng)
                .expect("a full buffer has a longest queue");
            let dropped = match self.drop_from {
                DropEnd::Front => self.q.discard_front(victim),
                DropEnd::Tail => self.q.discard_back(victim),
            };
            verdicts.discard(dropped.expect("non-empty"), DropReason::PushOut);
        }
        self.q.push(dst, packet);
    }

    delegate_to_drr_queues!(lookup, dequeue, clock);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;
    use crate::Backlog;

    fn lqd(limit: u64, drop_from: DropEnd) -> DrrLqd<TestPacket> {
        DrrLqd::new(
            Limit::Packets(limit),
            1500,
            QueueMap::per_flow(),
            drop_from,
            1,
        )
    }

    fn drops(v: &mut Verdicts<TestPacket>) -> Vec<(u64, u64, bool)> {
        let mut out = Vec::new();
        v.drain(|d| {
            assert_eq!(d.reason, DropReason::PushOut);
            out.push((d.packet.flow, d.packet.seq, d.buffered))
        });
        out
    }

    #[test]
    fn pushes_out_the_front_of_the_longest_queue() {
        let mut d = lqd(5, DropEnd::Front);
        let mut v = Verdicts::new();
        // Flow 0 holds 3 packets, flow 1 holds 2: the buffer (5) is full.
        for s in 0..3 {
            d.enqueue(TestPacket::new(0, s, 1500), 0, &mut v);
        }
        for s in 0..2 {
            d.enqueue(TestPacket::new(1, s, 1500), 0, &mut v);
        }
        assert!(v.is_empty());
        // An arrival of flow 1 pushes out flow 0's head (0, 0).
        d.enqueue(TestPacket::new(1, 2, 1500), 0, &mut v);
        assert_eq!(drops(&mut v), vec![(0, 0, true)]);
        // Now 2 and 3 packets: flow 1 is the longest; an arrival of flow 1
        // itself pushes out flow 1's head and is still enqueued.
        d.enqueue(TestPacket::new(1, 3, 1500), 0, &mut v);
        assert_eq!(drops(&mut v), vec![(1, 0, true)]);
        assert_eq!(d.backlog().packets, 5);
        // DRR serves round robin from flow 0 (activated first).
        let out: Vec<(u64, u64)> =
            std::iter::from_fn(|| d.dequeue(0, &mut v).map(|p| (p.flow, p.seq))).collect();
        assert_eq!(out, vec![(0, 1), (1, 1), (0, 2), (1, 2), (1, 3)]);
    }

    #[test]
    fn with_buckets_the_longest_queue_is_a_bucket_not_a_flow() {
        // Two buckets by flow mod 2: flows 0 and 2 share bucket 0.
        let mut d = DrrLqd::new(
            Limit::Packets(5),
            1500,
            QueueMap::Modulo { count: 2 },
            DropEnd::Front,
            1,
        );
        let mut v = Verdicts::new();
        for s in 0..2 {
            d.enqueue(TestPacket::new(0, s, 1500), 0, &mut v);
            d.enqueue(TestPacket::new(2, s, 1500), 0, &mut v);
        }
        d.enqueue(TestPacket::new(1, 0, 1500), 0, &mut v);
        // Flow 1 alone holds 1 packet, flows 0 and 2 two each: bucket 0 (4
        // packets) is the longest; its front is flow 0's first packet.
        d.enqueue(TestPacket::new(1, 1, 1500), 0, &mut v);
        assert_eq!(drops(&mut v), vec![(0, 0, true)]);
    }

    #[test]
    fn tail_variant_drops_the_newest_packet_of_the_longest_queue() {
        let mut d = lqd(3, DropEnd::Tail);
        let mut v = Verdicts::new();
        for s in 0..3 {
            d.enqueue(TestPacket::new(0, s, 1500), 0, &mut v);
        }
        d.enqueue(TestPacket::new(1, 0, 1500), 0, &mut v);
        assert_eq!(drops(&mut v), vec![(0, 2, true)]);
    }

    #[test]
    fn byte_limit_pushes_out_until_the_arrival_fits() {
        let mut d = DrrLqd::new(
            Limit::Bytes(3000),
            1500,
            QueueMap::per_flow(),
            DropEnd::Front,
            1,
        );
        let mut v = Verdicts::new();
        for s in 0..3 {
            d.enqueue(TestPacket::new(0, s, 1000), 0, &mut v);
        }
        // A 1500-byte arrival needs two 1000-byte packets out.
        d.enqueue(TestPacket::new(1, 0, 1500), 0, &mut v);
        assert_eq!(drops(&mut v), vec![(0, 0, true), (0, 1, true)]);
        assert_eq!(
            d.backlog(),
            Backlog {
                packets: 2,
                bytes: 2500
            }
        );
        // A packet larger than the whole buffer is refused, nothing pushed out.
        d.enqueue(TestPacket::new(2, 0, 4000), 0, &mut v);
        let mut refused = Vec::new();
        v.drain(|x| refused.push((x.packet.flow, x.reason, x.buffered)));
        assert_eq!(refused, vec![(2, DropReason::Overflow, false)]);
    }
}
