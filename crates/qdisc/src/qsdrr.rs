//! Queue State DRR: kind `qsdrr`.
//!
//! Source: Kantawala and Turner, WUCSE-2005-11 (seed
//! `000_36d3c99b5bba185e.txt`), section 3.2 item 3 and Figure 3.1 (the
//! algorithm), section 4.1 (its analysis); digest 000, sections 2.7 and 3.3.
//!
//! Longest-queue drop with hysteresis. A state variable Q, undefined at
//! first, names the drop queue. When a packet arrives and there is no room:
//! if Q is undefined, or Q is shorter than all other non-empty queues, let Q
//! be the longest queue now; then discard from the front of Q until the
//! packet fits, and enqueue it. Once a queue is picked it keeps being hit
//! until it is the shortest, so few flows are hit per congestion episode:
//! TCP flows desynchronise and a buffer far below the bandwidth-delay
//! product keeps the link busy.
//!
//! Parameters, their defaults and sources: [`QsdrrParams`].
//!
//! Choices (digest 000, section 2.7 and A-Q2, A-Q3):
//! - "Shorter than all other non-empty queues" is strict: a tie keeps Q.
//!   The analysis (section 4.1: the k-th chosen queue discards k packets
//!   before the choice moves) holds only with the strict test.
//! - A Q that has emptied (served out or discarded) is treated as shorter
//!   than every non-empty queue: a new Q is chosen.
//! - The test is made once per arrival, on lengths in packets before the
//!   arrival is added. If Q empties before the arrival fits (variable
//!   sizes), the longest queue is chosen and discarding goes on.
//! - "The longest queue now" may be Q again; ties between longest queues
//!   are broken at random with the discipline's seed.
//!
//! O(1) per packet: the longest and the shortest non-empty queue come from
//! the bucket-by-length table (digest 2.7 [REC]).

use crate::blocks::{delegate_to_drr_queues, ever_fits, DrrQueues, PerFlowQueues, QueueMap};
use crate::params::{params, positive_limit, SpecError};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// QSDRR's parameters: the buffer and the queues, nothing to tune (that
    /// is its point).
    #[derive(PartialEq)]
    pub struct QsdrrParams {
        required {
            /// The shared buffer, packets or bytes; no default.
            pub limit: Limit [Buffer],
        }
        #[flatten] pub per_flow: PerFlowQueues,
    }
}

impl QdiscParams for QsdrrParams {
    const SUMMARY: &'static str =
        "DRR with queue-state discard: front drops from a sticky chosen queue";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.per_flow.validate()
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Qsdrr::new(
            self.limit,
            self.per_flow.quantum,
            self.per_flow.map(seed),
            seed,
        ))
    }
}

pub struct Qsdrr<P> {
    q: DrrQueues<P>,
    limit: Limit,
    /// The drop queue Q of Figure 3.1.
    drop_queue: Option<usize>,
    rng: Rng,
}

impl<P: Packet> Qsdrr<P> {
    pub fn new(limit: Limit, quantum: u32, map: QueueMap, seed: u64) -> Self {
        Self {
            q: DrrQueues::new(map, quantum as u64, true),
            limit,
            drop_queue: None,
            rng: Rng::stream(seed, 0x05d),
        }
    }

    /// The current drop queue Q.
    pub fn drop_queue(&self) -> Option<usize> {
        self.drop_queue
    }

    /// Figure 3.1's test, made once per overflowing arrival: keep Q unless
    /// it is undefined, empty, or strictly the shortest non-empty queue.
    fn choose(&mut self) -> usize {
        let keep = self
            .drop_queue
            .filter(|&q| self.q.len(q) > 0 && !self.q.is_strictly_shortest(q));
        let q = match keep {
            Some(q) => q,
            None => self.longest(),
        };
        self.drop_queue = Some(q);
        q
    }

    fn longest(&mut self) -> usize {
        self.q
            .lengths()
            .longest_random(&mut self.rng)
            .expect("a full buffer has a longest queue")
    }

    /// Discard from the front of Q until a packet of `size` bytes fits.
    fn make_room(&mut self, size: u32, verdicts: &mut Verdicts<P>) {
        let mut q = self.choose();
        while !self.limit.admits(self.q.backlog(), size) {
            if self.q.is_empty(q) {
                q = self.longest();
                self.drop_queue = Some(q);
            }
            let p = self.q.discard_front(q).expect("non-empty");
            verdicts.discard(p, DropReason::PushOut);
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Qsdrr<P> {
    fn name(&self) -> &'static str {
        "qsdrr"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.q.wakeup(now);
        if !ever_fits(self.limit, packet.size()) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        let dst = self.q.classify(packet.flow_key());
        if !self.limit.admits(self.q.backlog(), packet.size()) {
            self.make_room(packet.size(), verdicts);
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

    fn qsdrr(limit: u64) -> Qsdrr<TestPacket> {
        Qsdrr::new(
            Limit::Packets(limit),
            1500,
            QueueMap::Modulo { count: 8 },
            7,
        )
    }

    fn fill(d: &mut Qsdrr<TestPacket>, flow: u64, n: u64, v: &mut Verdicts<TestPacket>) {
        for s in 0..n {
            d.enqueue(TestPacket::new(flow, s, 1500), 0, v);
        }
    }

    fn lens(d: &Qsdrr<TestPacket>, n: usize) -> Vec<u32> {
        (0..n).map(|q| d.q.len(q) as u32).collect()
    }

    /// Digest 000, section 3.3: with synchronized flows of equal queues, the
    /// 1st chosen queue discards 1 packet, the 2nd 2, the 3rd 3, ... before
    /// the choice moves. The analysis counts the decisions with the arrivals'
    /// growth spread evenly over the flows not hit; here each overflow is one
    /// decision of Figure 3.1 and one front discard, the arrival itself left
    /// out so that no single queue absorbs it (an integer trace cannot keep
    /// the unhit queues level otherwise).
    #[test]
    fn the_kth_chosen_queue_discards_exactly_k_packets() {
        let mut d = qsdrr(60);
        let mut v = Verdicts::new();
        for f in 0..6 {
            fill(&mut d, f, 10, &mut v);
        }
        let mut victims: Vec<(usize, u32)> = Vec::new();
        for _ in 0..15 {
            // The buffer is full: one decision of Figure 3.1, one discard.
            d.limit = Limit::Packets(d.backlog().packets);
            d.make_room(1500, &mut v);
            let q = d.drop_queue().unwrap();
            match victims.last_mut() {
                Some((last, n)) if *last == q => *n += 1,
                _ => victims.push((q, 1)),
            }
        }
        assert_eq!(v.dropped().len(), 15);
        let counts: Vec<u32> = victims.iter().map(|&(_, n)| n).collect();
        assert_eq!(counts, vec![1, 2, 3, 4, 5], "victims {victims:?}");
        // Five distinct queues were hit, at levels 9, 8, 7, 6, 5.
        let mut hit: Vec<usize> = victims.iter().map(|&(q, _)| q).collect();
        hit.sort();
        hit.dedup();
        assert_eq!(hit.len(), 5);
        let mut levels: Vec<u32> = victims.iter().map(|&(q, _)| d.q.len(q) as u32).collect();
        levels.sort();
        assert_eq!(levels, vec![5, 6, 7, 8, 9]);
    }

    /// Table 4.2 (analytical column): N = 100 flows with equal queues in a
    /// buffer of 4000 packets must shed N packets; QSDRR hits
    /// X = ceil((sqrt(8N + 1) - 1) / 2) = 14 flows (equation 4.4), against
    /// the ~100 flows a tail drop of 100 arrivals would hit.
    #[test]
    fn table_4_2_one_hundred_discards_hit_fourteen_flows() {
        let mut d = Qsdrr::new(
            Limit::Packets(4000),
            1500,
            QueueMap::Modulo { count: 100 },
            3,
        );
        let mut v = Verdicts::new();
        for f in 0..100 {
            fill(&mut d, f, 40, &mut v);
        }
        let mut hit = std::collections::BTreeSet::new();
        for _ in 0..100 {
            d.limit = Limit::Packets(d.backlog().packets);
            d.make_room(1500, &mut v);
            hit.insert(d.drop_queue().unwrap());
        }
        assert_eq!(hit.len(), 14);
        // N = 10, B = 400: X = 4.
        let mut d = Qsdrr::new(Limit::Packets(400), 1500, QueueMap::Modulo { count: 10 }, 3);
        for f in 0..10 {
            fill(&mut d, f, 40, &mut v);
        }
        let mut hit = std::collections::BTreeSet::new();
        for _ in 0..10 {
            d.limit = Limit::Packets(d.backlog().packets);
            d.make_room(1500, &mut v);
            hit.insert(d.drop_queue().unwrap());
        }
        assert_eq!(hit.len(), 4);
    }

    #[test]
    fn a_tie_keeps_the_drop_queue_and_strictly_shortest_moves_it() {
        let mut d = qsdrr(9);
        let mut v = Verdicts::new();
        fill(&mut d, 0, 4, &mut v);
        fill(&mut d, 1, 3, &mut v);
        fill(&mut d, 2, 2, &mut v);
        // Lengths [4, 3, 2], full. Arrival of flow 2: Q undefined -> the
        // longest, 0; its head goes.
        d.enqueue(TestPacket::new(2, 2, 1500), 0, &mut v);
        assert_eq!(d.drop_queue(), Some(0));
        assert_eq!(lens(&d, 3), vec![3, 3, 3]);
        // Q = 0 at 3 ties 1 and 2: not strictly shorter, Q stays.
        d.enqueue(TestPacket::new(1, 3, 1500), 0, &mut v);
        assert_eq!(d.drop_queue(), Some(0));
        assert_eq!(lens(&d, 3), vec![2, 4, 3]);
        // Now Q = 0 at 2 is strictly the shortest: Q moves to the longest, 1.
        d.enqueue(TestPacket::new(2, 3, 1500), 0, &mut v);
        assert_eq!(d.drop_queue(), Some(1));
        assert_eq!(lens(&d, 3), vec![2, 3, 4]);
        let mut out = Vec::new();
        v.drain(|x| out.push((x.packet.flow, x.packet.seq, x.reason, x.buffered)));
        assert_eq!(
            out,
            vec![
                (0, 0, DropReason::PushOut, true),
                (0, 1, DropReason::PushOut, true),
                (1, 0, DropReason::PushOut, true)
            ]
        );
    }

    #[test]
    fn an_emptied_drop_queue_is_replaced() {
        let mut d = qsdrr(4);
        let mut v = Verdicts::new();
        fill(&mut d, 0, 1, &mut v);
        fill(&mut d, 1, 3, &mut v);
        // Arrival of flow 0: Q = longest = 1.
        d.enqueue(TestPacket::new(0, 1, 1500), 0, &mut v);
        assert_eq!(d.drop_queue(), Some(1));
        // Serve everything away: DRR serves 0, 1, 0, 1.
        for _ in 0..4 {
            d.dequeue(0, &mut v);
        }
        assert_eq!(lens(&d, 2), vec![0, 0]);
        fill(&mut d, 3, 4, &mut v);
        // Q = 1 is empty: the next overflow picks the longest, 3.
        d.enqueue(TestPacket::new(4, 0, 1500), 0, &mut v);
        assert_eq!(d.drop_queue(), Some(3));
    }

    #[test]
    fn a_large_arrival_keeps_discarding_from_q_then_moves_on() {
        // Bytes: Q empties before the arrival fits; the longest is next.
        let mut d = Qsdrr::new(Limit::Bytes(4000), 1500, QueueMap::Modulo { count: 4 }, 1);
        let mut v = Verdicts::new();
        for s in 0..2 {
            d.enqueue(TestPacket::new(0, s, 1000), 0, &mut v);
        }
        d.enqueue(TestPacket::new(1, 0, 500), 0, &mut v);
        d.enqueue(TestPacket::new(1, 1, 500), 0, &mut v);
        d.enqueue(TestPacket::new(1, 2, 500), 0, &mut v);
        // Bytes 2000 + 1500 = 3500; a 3000-byte arrival needs 2500 out.
        // Lengths [2, 3]: Q = 1 (longest); its 1500 bytes go, then Q is
        // empty and the longest, 0, gives one 1000-byte packet.
        d.enqueue(TestPacket::new(2, 0, 3000), 0, &mut v);
        let mut out = Vec::new();
        v.drain(|x| out.push((x.packet.flow, x.packet.seq)));
        assert_eq!(out, vec![(1, 0), (1, 1), (1, 2), (0, 0)]);
        assert_eq!(d.drop_queue(), Some(0));
        assert_eq!(
            d.backlog(),
            Backlog {
                packets: 2,
                bytes: 4000
            }
        );
    }
}
