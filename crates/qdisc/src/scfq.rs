//! Self-Clocked Fair Queueing: kind `scfq`.
//!
//! Source: S. J. Golestani, "A self-clocked fair queueing scheme for
//! broadband applications", IEEE INFOCOM 1994, section 3; compared in chapter
//! 7 of Kantawala and Turner, WUCSE-2005-11 (seed `000_36d3c99b5bba185e.txt`);
//! digest 000, section 2.12.
//!
//! One queue per flow. The k-th packet of flow i, of L bytes, is stamped on
//! arrival with the finish tag F_i^k = max(F_i^(k-1), v(t)) + L / w_i, where
//! the system virtual time v(t) is the tag of the packet in service; the
//! packet with the smallest tag is sent next.
//!
//! Parameters, their defaults and sources: [`ScfqParams`]; an arrival that
//! does not fit the buffer is refused (chapter 7 never fills it).
//!
//! Choices: "the packet in service" is the packet most recently dequeued
//! (the discipline does not see the end of transmission), so v is its tag.
//! Golestani resets v and the tags to 0 at the end of each busy period; as
//! served tags never decrease and every queued tag is at least v, the
//! reset only shifts all tags equally and is left out. Equal tags go to the
//! lower queue number (flows are numbered in order of first arrival). Tags
//! are f64 bytes-per-weight: exact for integer sizes and weights until 2^53.
//!
//! Complexity: O(log n) per packet, n the number of backlogged flows (a heap
//! of head-of-line tags), as for every sorted-priority scheduler.

use std::collections::VecDeque;

use crate::blocks::{FlowWeights, IndexedHeap, WeightParams, WeightedQueues};
use crate::params::{params, positive_limit, SpecError};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// SCFQ's parameters (seed 000, chapter 7).
    #[derive(PartialEq)]
    pub struct ScfqParams {
        required {
            /// The shared buffer, packets or bytes; no default (chapter 7:
            /// never full; an arrival that does not fit is refused).
            pub limit: Limit [Buffer],
        }
        #[flatten] pub weighting: WeightParams,
    }
}

impl QdiscParams for ScfqParams {
    const SUMMARY: &'static str = "self-clocked fair queueing (O(log n))";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.weighting.validate()
    }

    fn build<P: Packet + Send + 'static>(&self, _seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Scfq::new(self.limit, self.weighting.table()))
    }
}

pub struct Scfq<P> {
    queues: WeightedQueues<P>,
    /// Finish tags of the queued packets, per flow.
    tags: Vec<VecDeque<f64>>,
    last_finish: Vec<f64>,
    /// Backlogged flows by head-of-line tag.
    heads: IndexedHeap<f64>,
    /// v(t): the tag of the packet in service.
    virtual_time: f64,
}

impl<P: Packet> Scfq<P> {
    pub fn new(limit: Limit, weights: FlowWeights) -> Self {
        Self {
            queues: WeightedQueues::new(limit, weights),
            tags: Vec::new(),
            last_finish: Vec::new(),
            heads: IndexedHeap::new(0),
            virtual_time: 0.0,
        }
    }

    /// The system virtual time v.
    pub fn virtual_time(&self) -> f64 {
        self.virtual_time
    }
}

impl<P: Packet> QueueDiscipline<P> for Scfq<P> {
    fn name(&self) -> &'static str {
        "scfq"
    }

    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        if !self.queues.admits(&packet) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        let q = self.queues.classify(packet.flow_key());
        if q == self.tags.len() {
            self.tags.push(VecDeque::new());
            self.last_finish.push(0.0);
            self.heads.grow();
        }
        let finish = self.last_finish[q].max(self.virtual_time)
            + packet.size() as f64 / self.queues.weight(q);
        self.last_finish[q] = finish;
        if self.tags[q].is_empty() {
            self.heads.set(q, finish);
        }
        self.tags[q].push_back(finish);
        self.queues.push_back(q, packet);
    }

    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let (q, tag) = self.heads.peek()?;
        let packet = self.queues.pop_front(q).expect("backlogged");
        self.tags[q].pop_front();
        self.virtual_time = tag;
        match self.tags[q].front() {
            Some(&next) => self.heads.set(q, next),
            None => self.heads.remove(q),
        }
        Some(packet)
    }

    fn backlog(&self) -> Backlog {
        self.queues.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    #[test]
    fn tags_and_order_on_a_hand_worked_trace() {
        // Flow 1 weight 1, flow 2 weight 2, 1000-byte packets.
        let mut d = Scfq::new(Limit::Packets(100), FlowWeights::new([(2, 2.0)], 1.0));
        let mut v = Verdicts::new();
        // t = 0: flow 1 x2 -> tags 1000, 2000; flow 2 x3 -> 500, 1000, 1500.
        for s in 0..2 {
            d.enqueue(TestPacket::new(1, s, 1000), 0, &mut v);
        }
        for s in 0..3 {
            d.enqueue(TestPacket::new(2, s, 1000), 0, &mut v);
        }
        // Serve: 2.0 (500), then the tie at 1000: flow 1 (queue 0) first.
        let a = d.dequeue(0, &mut v).unwrap();
        assert_eq!((a.flow, a.seq, d.virtual_time()), (2, 0, 500.0));
        let b = d.dequeue(0, &mut v).unwrap();
        assert_eq!((b.flow, b.seq, d.virtual_time()), (1, 0, 1000.0));
        // A new flow 3 (weight 1) arrives now: max(0, v = 1000) + 1000.
        d.enqueue(TestPacket::new(3, 0, 1000), 0, &mut v);
        let order: Vec<(u64, u64)> =
            std::iter::from_fn(|| d.dequeue(0, &mut v).map(|p| (p.flow, p.seq))).collect();
        // Remaining tags: flow 2: 1000, 1500; flow 1: 2000; flow 3: 2000.
        assert_eq!(order, vec![(2, 1), (2, 2), (1, 1), (3, 0)]);
        assert_eq!(d.virtual_time(), 2000.0);
    }

    #[test]
    fn backlogged_flows_share_bytes_by_weight() {
        let mut d = Scfq::new(Limit::Packets(10_000), FlowWeights::new([(0, 3.0)], 1.0));
        let mut v = Verdicts::new();
        for s in 0..1000 {
            d.enqueue(TestPacket::new(0, s, 500), 0, &mut v);
            d.enqueue(TestPacket::new(1, s, 1500), 0, &mut v);
        }
        let mut bytes = [0u64; 2];
        for _ in 0..800 {
            let p = d.dequeue(0, &mut v).unwrap();
            bytes[p.flow as usize] += p.size as u64;
        }
        // 3 : 1 within one packet.
        assert!(
            (bytes[0] as i64 - 3 * bytes[1] as i64).abs() <= 3 * 1500,
            "{bytes:?}"
        );
    }
}
