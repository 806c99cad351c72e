//! WF2Q+: kind `wf2q_plus`.
//!
//! Source: J. C. R. Bennett and H. Zhang, "Hierarchical packet fair queueing
//! algorithms", IEEE/ACM ToN 5(5), 1997, section 4 (WF2Q+), the
//! low-complexity form of WF2Q (Bennett and Zhang, INFOCOM 1996) that
//! chapter 7 of Kantawala and Turner, WUCSE-2005-11 (seed
//! `000_36d3c99b5bba185e.txt`) compares; digest 000, section 2.12.
//!
//! One queue per flow, tags per flow (not per packet). When flow i's queue
//! becomes non-empty, its head gets S_i = max(F_i, V) and F_i = S_i + L/w_i;
//! after flow i sends a packet and still has one, S_i = F_i and
//! F_i = S_i + L/w_i for the new head. A flow is eligible when S_i <= V; the
//! eligible flow with the smallest F_i sends. The system virtual time is
//! V <- max(V + W, min_{backlogged} S_i), W the work done.
//!
//! Parameters, their defaults and sources: [`Wf2qPlusParams`]; an arrival
//! that does not fit the buffer is refused (chapter 7 never fills it).
//!
//! Choices: the discipline does not know the link rate, so weights are
//! normalised by the backlogged flows, as BSD dummynet's WF2Q+ does: after a
//! packet of L bytes is sent, V advances by L / (sum of the weights of the
//! backlogged flows, counting the sender). Within a busy period this is the
//! virtual time of a GPS server shared by those flows. At the end of a busy
//! period (the last queued packet leaves) V and every F are reset to 0.
//! Equal tags go to the lower queue number.
//!
//! Complexity: O(log n) per packet, n the number of backlogged flows (two
//! heaps: eligible flows by F, the others by S).

use crate::blocks::{FlowWeights, IndexedHeap, WeightParams, WeightedQueues};
use crate::params::{params, positive_limit, SpecError};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// WF2Q+'s parameters (seed 000, chapter 7).
    #[derive(PartialEq)]
    pub struct Wf2qPlusParams {
        required {
            /// The shared buffer, packets or bytes; no default (chapter 7:
            /// never full; an arrival that does not fit is refused).
            pub limit: Limit [Buffer],
        }
        #[flatten] pub weighting: WeightParams,
    }
}

impl QdiscParams for Wf2qPlusParams {
    const SUMMARY: &'static str = "WF2Q+ (O(log n))";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.weighting.validate()
    }

    fn build<P: Packet + Send + 'static>(&self, _seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Wf2qPlus::new(self.limit, self.weighting.table()))
    }
}

pub struct Wf2qPlus<P> {
    queues: WeightedQueues<P>,
    start: Vec<f64>,
    finish: Vec<f64>,
    /// Busy period in which each flow's `finish` was set.
    epoch_of: Vec<u64>,
    epoch: u64,
    /// Eligible flows (S <= V) by F, and the others by S.
    eligible: IndexedHeap<f64>,
    waiting: IndexedHeap<f64>,
    virtual_time: f64,
    backlogged_weight: f64,
}

impl<P: Packet> Wf2qPlus<P> {
    pub fn new(limit: Limit, weights: FlowWeights) -> Self {
        Self {
            queues: WeightedQueues::new(limit, weights),
            start: Vec::new(),
            finish: Vec::new(),
            epoch_of: Vec::new(),
            epoch: 0,
            eligible: IndexedHeap::new(0),
            waiting: IndexedHeap::new(0),
            virtual_time: 0.0,
            backlogged_weight: 0.0,
        }
    }

    pub fn virtual_time(&self) -> f64 {
        self.virtual_time
    }

    fn place(&mut self, q: usize) {
        if self.start[q] <= self.virtual_time {
            self.eligible.set(q, self.finish[q]);
        } else {
            self.waiting.set(q, self.start[q]);
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Wf2qPlus<P> {
    fn name(&self) -> &'static str {
        "wf2q_plus"
    }

    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        if !self.queues.admits(&packet) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        let q = self.queues.classify(packet.flow_key());
        if q == self.start.len() {
            self.start.push(0.0);
            self.finish.push(0.0);
            self.epoch_of.push(self.epoch);
            self.eligible.grow();
            self.waiting.grow();
        }
        let was_idle = self.queues.is_empty(q);
        let size = packet.size() as f64;
        self.queues.push_back(q, packet);
        if was_idle {
            let previous = if self.epoch_of[q] == self.epoch {
                self.finish[q]
            } else {
                0.0
            };
            self.start[q] = previous.max(self.virtual_time);
            self.finish[q] = self.start[q] + size / self.queues.weight(q);
            self.epoch_of[q] = self.epoch;
            self.backlogged_weight += self.queues.weight(q);
            self.place(q);
        }
    }

    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        if self.eligible.is_empty() {
            // V = max(V, min S): someone becomes eligible.
            let (_, s) = self.waiting.peek()?;
            self.virtual_time = self.virtual_time.max(s);
        }
        while let Some((q, s)) = self.waiting.peek() {
            if s > self.virtual_time {
                break;
            }
            self.waiting.remove(q);
            self.eligible.set(q, self.finish[q]);
        }
        let (q, _) = self.eligible.pop().expect("an eligible flow");
        let packet = self.queues.pop_front(q).expect("backlogged");
        self.virtual_time += packet.size() as f64 / self.backlogged_weight;
        match self.queues.head(q) {
            Some(head) => {
                self.start[q] = self.finish[q];
                self.finish[q] = self.start[q] + head.size() as f64 / self.queues.weight(q);
                self.place(q);
            }
            None => self.backlogged_weight -= self.queues.weight(q),
        }
        if self.queues.total().packets == 0 {
            // End of the busy period.
            self.epoch += 1;
            self.virtual_time = 0.0;
            self.backlogged_weight = 0.0;
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

    fn order(d: &mut Wf2qPlus<TestPacket>, n: usize) -> Vec<u64> {
        let mut v = Verdicts::new();
        (0..n).map(|_| d.dequeue(0, &mut v).unwrap().flow).collect()
    }

    #[test]
    fn the_weight_ten_flow_is_spread_out_not_bursted() {
        // Bennett and Zhang's example shape: one flow of weight 10 and ten of
        // weight 1, all backlogged with equal packets. WFQ would send the big
        // flow's ten packets back to back; WF2Q+ interleaves them, never
        // more than its share ahead.
        let mut d = Wf2qPlus::new(Limit::Packets(1000), FlowWeights::new([(0, 10.0)], 1.0));
        let mut v = Verdicts::new();
        for s in 0..20 {
            for f in 0..11 {
                d.enqueue(TestPacket::new(f, s, 1000), 0, &mut v);
            }
        }
        let out = order(&mut d, 20);
        // Total weight 20: after 2k packets the big flow has sent k (+-1).
        for k in 1..=10 {
            let sent = out[..2 * k].iter().filter(|&&f| f == 0).count();
            assert!(
                sent.abs_diff(k) <= 1,
                "after {} packets flow 0 sent {sent}: {out:?}",
                2 * k
            );
        }
        assert_eq!(out[0], 0);
    }

    #[test]
    fn hand_worked_tags_and_eligibility() {
        // Flows 1 and 2 with weights 1 and 3, 300-byte packets.
        let mut d = Wf2qPlus::new(Limit::Packets(100), FlowWeights::new([(2, 3.0)], 1.0));
        let mut v = Verdicts::new();
        for s in 0..3 {
            d.enqueue(TestPacket::new(1, s, 300), 0, &mut v);
            d.enqueue(TestPacket::new(2, s, 300), 0, &mut v);
        }
        // Enqueue: S1 = 0, F1 = 300; S2 = 0, F2 = 100; both eligible at V = 0.
        // 1. Flow 2 (F 100). V += 300/4 = 75. Flow 2: S 100, F 200, waiting.
        // 2. Only flow 1 is eligible (F 300). V = 150. Flow 1: S 300, F 600.
        // 3. Flow 2 is eligible again (S 100 <= 150). V = 225; S 200, F 300.
        // 4. Flow 2 (S 200 <= 225; flow 1's S 300 > 225). V = 300; flow 2
        //    empties, the backlogged weight is 1.
        // 5, 6. Flow 1 (S 300 <= 300), V = 600, then 900.
        let out = order(&mut d, 6);
        assert_eq!(out, vec![2, 1, 2, 2, 1, 1]);
        assert_eq!(d.virtual_time(), 0.0, "reset at the end of the busy period");
    }

    #[test]
    fn a_flow_returning_after_idle_starts_at_the_virtual_time() {
        let mut d = Wf2qPlus::new(Limit::Packets(100), FlowWeights::default());
        let mut v = Verdicts::new();
        for s in 0..4 {
            d.enqueue(TestPacket::new(1, s, 1000), 0, &mut v);
        }
        d.enqueue(TestPacket::new(2, 0, 1000), 0, &mut v);
        // Flow 2 has one packet; after it leaves, flow 1 alone runs V up.
        assert_eq!(order(&mut d, 3), vec![1, 2, 1]);
        // V = 500 + 500 (two flows) + 1000 (flow 1 alone) = 2000. Flow 2
        // returns: S2 = max(F2 = 1000, V) = 2000, no credit for its idle
        // time; F2 = 3000 ties flow 1's F and the lower queue goes first.
        d.enqueue(TestPacket::new(2, 1, 1000), 0, &mut v);
        assert_eq!(d.virtual_time(), 2000.0);
        assert_eq!(order(&mut d, 3), vec![1, 2, 1]);
    }
}
