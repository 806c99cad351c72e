//! MQFQ, Multiple Queue Fair Queuing (Georg, Jechlitschek and Gorinsky,
//! WUCSE-2007-30; seed file `001_a4224a25d34df164.txt`, sections III-IV;
//! digest 001, sections 2.3-2.4).
//!
//! `queues` FIFO queues served by deficit round robin, as SFQ, but each flow
//! has `hashes` (d) candidate queues, one per independent hash function of
//! its key. An arriving packet joins the candidate that will serve it
//! soonest: the smallest Rounds-Before-Service (eq. 1 of the report),
//!
//! ```text
//! RBS(i, p) = max(ceil((bytes_i + p - dfc_i - w_i) / w_i), 0)
//! ```
//!
//! ties going to the queue the round-robin pointer reaches first, an empty
//! queue counting 0 and joining the tail. The candidates may coincide (the
//! report's analysis lets them). The shared-buffer admission rule is SFQ's
//! ([`crate::sfq`], ns-2 code by default, `admission = "prose"` for the
//! report's wording), applied to the chosen queue.
//!
//! With equal-size packets MQFQ never reorders a flow (section IV). With
//! mixed sizes it can; `reorder` selects one of the report's two fixes:
//! - `resequence`: a packet leaving the scheduler waits in an output buffer
//!   until the round in progress when it left has finished (every queue in
//!   the ring then has had its turn), and is released after any earlier
//!   packet of its flow. The report's bound (an earlier packet leaves at most
//!   one round after a later one) holds when packets are not larger than the
//!   quantum. The output buffer counts toward `limit`.
//! - `cells`: a packet is cut into `cell`-byte cells, each placed by RBS and
//!   scheduled on its own; the packet leaves when its last cell is served.
//!   Cells are equal in size, so the theorem applies to them. In this mode
//!   `limit` and the admission rule count cells, and a packet is refused if
//!   any of its cells would be.
//!
//! Parameters, their defaults and sources: [`MqfqParams`]. No per-flow
//! state; O(d) per packet (O(1) for fixed d); `resequence` adds a scan of
//! the output buffer (one round of packets) per departure.

use std::collections::VecDeque;

use crate::params::{checked_packets, nonzero, packets_only, params, refuse, SpecError};
use crate::sfq::{SfqAdmission, SharedBuffer};
use crate::spec::QdiscParams;
use crate::Verdicts;
use crate::{
    Backlog, DropReason, DrrRound, Ecn, FlowQueues, HashFamily, Packet, QueueDiscipline, Time,
    TrafficClass,
};

params! {
    /// MQFQ's parameters (the report, sections III-V).
    #[derive(PartialEq)]
    pub struct MqfqParams {
        #[flatten] pub buffer: SharedBuffer,
        /// Queues, k: 16 (section V; 32 in V-C).
        pub queues: usize [Number] = 16,
        /// Hash functions, d: 2, "MQFQ" (MQFQd for d = 3..6).
        pub hashes: usize [Number] = 2,
        /// DRR's quantum, w: 1500 bytes (the report asks only that it exceed
        /// the largest packet; 1000 with 1000-byte packets is ns-2's packet
        /// round robin).
        pub quantum: u64 [Bytes] = 1500,
        /// How a flow is kept in order with mixed sizes: not at all (section
        /// IV's fixes are `resequence` and `cells`).
        pub reorder: MqfqReorder [Choice] = MqfqReorder::None,
        /// The cell of `reorder = "cells"`: 64 bytes (not in the report; a
        /// common switch-fabric cell).
        pub cell: u32 [Bytes] = 64,
    }
}

impl QdiscParams for MqfqParams {
    const SUMMARY: &'static str =
        "multiple-queue fair queueing: d hashes, rounds-before-service choice";

    fn validate(&self) -> Result<(), SpecError> {
        packets_only(
            self.buffer.limit,
            "the ns-2 admission rule counts packets, or cells in cell mode",
        )?;
        if self.queues == 0 {
            return refuse("queues", "must be at least 1");
        }
        if self.hashes == 0 {
            return refuse("hashes", "must be at least 1");
        }
        nonzero("quantum", self.quantum)?;
        nonzero("cell", self.cell)
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Mqfq::new(
            checked_packets(self.buffer.limit),
            self.queues,
            self.hashes,
            self.quantum,
            self.reorder,
            self.cell,
            self.buffer.admission,
            seed,
        ))
    }
}

/// How MQFQ keeps a flow in order when packet sizes differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MqfqReorder {
    /// Nothing: packets of mixed sizes may be reordered.
    None,
    /// One-round resequencing buffer at the output.
    Resequence,
    /// Fixed-size cells, reassembled at the output.
    Cells,
}

/// What the scheduler queues hold: a whole packet or one cell of it. The
/// packet itself waits in `held`.
#[derive(Clone, Copy, Debug)]
struct Unit {
    slot: u32,
    size: u32,
}

impl Packet for Unit {
    fn size(&self) -> u32 {
        self.size
    }
    fn flow_key(&self) -> u64 {
        0
    }
    fn class(&self) -> TrafficClass {
        TrafficClass::Tcp
    }
    fn ecn(&self) -> Ecn {
        Ecn::NotEct
    }
    fn mark_ce(&mut self) {}
}

struct Held<P> {
    packet: P,
    /// Units of this packet still in the queues.
    remaining: u32,
    /// Arrival order, for resequencing.
    seq: u64,
}

pub struct Mqfq<P> {
    queues: FlowQueues<Unit>,
    drr: DrrRound,
    hashes: HashFamily,
    limit: u64,
    fairshare: u64,
    quantum: u64,
    reorder: MqfqReorder,
    cell: u32,
    admission: SfqAdmission,
    /// Units in the buffer for the admission rule (with the output buffer).
    occupied: u64,
    held: Vec<Option<Held<P>>>,
    free: Vec<u32>,
    next_seq: u64,
    /// Resequencing buffer: packets out of the scheduler, with the ticket
    /// the front of the ring must reach before they may leave.
    out: VecDeque<(P, u64, u64)>,
    backlog: Backlog,
    /// Scratch for the candidates of one arrival (queue, extra bytes, extra
    /// units, virtual ticket if activated by this packet).
    scratch: Vec<(usize, u64, u64, Option<u64>)>,
    /// Scratch: the queue chosen for each unit of one arrival.
    placed: Vec<usize>,
}

impl<P: Packet> Mqfq<P> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        limit: u64,
        queues: usize,
        hashes: usize,
        quantum: u64,
        reorder: MqfqReorder,
        cell: u32,
        admission: SfqAdmission,
        seed: u64,
    ) -> Self {
        Self {
            queues: FlowQueues::new(queues),
            drr: DrrRound::new(queues, quantum),
            hashes: HashFamily::new(hashes, seed),
            limit,
            fairshare: limit / queues as u64,
            quantum,
            reorder,
            cell,
            admission,
            occupied: 0,
            held: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            out: VecDeque::new(),
            backlog: Backlog::default(),
            scratch: Vec::with_capacity(hashes),
            placed: Vec::new(),
        }
    }

    /// Rounds before service and service order of candidate `c` of the
    /// scratch list for a unit of `size` bytes.
    fn rank(&self, c: usize, size: u64) -> (u64, u64) {
        let (q, extra, _, virtual_ticket) = self.scratch[c];
        let (deficit, ticket) = match (self.drr.ticket(q), virtual_ticket) {
            (Some(t), _) => (self.drr.deficit(q), t),
            // Activated by an earlier cell of this packet: it will join the
            // ring with a full quantum, in that order.
            (None, Some(t)) => (self.quantum, t),
            // Empty: served at its first visit, after every queue in the ring.
            (None, None) => return (0, u64::MAX),
        };
        let need = (self.queues.bytes(q) + extra + size) as i64 - deficit as i64;
        let rbs = if need <= 0 {
            0
        } else {
            (need as u64).div_ceil(self.quantum)
        };
        (rbs, ticket)
    }

    /// Emit the packet at the head of the resequencing buffer, or an
    /// earlier packet of its flow that is still waiting there.
    fn release(&mut self) -> Option<P> {
        let (head, _, _) = self.out.front()?;
        let flow = head.flow_key();
        let mut best = 0;
        for (i, (p, seq, _)) in self.out.iter().enumerate().skip(1) {
            if p.flow_key() == flow && *seq < self.out[best].1 {
                best = i;
            }
        }
        let (p, _, _) = self.out.remove(best).expect("index in range");
        self.occupied -= 1;
        self.left(&p);
        Some(p)
    }

    fn left(&mut self, p: &P) {
        self.backlog.packets -= 1;
        self.backlog.bytes -= p.size() as u64;
    }

    /// Whether the head of the resequencing buffer has waited its round.
    fn head_due(&self) -> bool {
        match (self.out.front(), self.drr.current()) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some((_, _, due)), Some(front)) => self.drr.ticket(front).is_some_and(|t| t >= *due),
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Mqfq<P> {
    fn name(&self) -> &'static str {
        "mqfq"
    }

    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        let key = packet.flow_key();
        let (units, unit_size) = match self.reorder {
            MqfqReorder::Cells => (packet.size().div_ceil(self.cell).max(1), self.cell),
            _ => (1, packet.size()),
        };
        // Candidates, with duplicates merged (a flow's hashes may collide).
        self.scratch.clear();
        for j in 0..self.hashes.len() {
            let q = self.hashes.bucket(j, key, self.queues.count());
            if !self.scratch.iter().any(|c| c.0 == q) {
                self.scratch.push((q, 0, 0, None));
            }
        }
        // Place every unit tentatively; commit only if all are admitted.
        let mut next_virtual = self.drr.next_ticket();
        let mut placed = std::mem::take(&mut self.placed);
        placed.clear();
        for u in 0..units as u64 {
            let mut best = 0;
            let mut best_rank = self.rank(0, unit_size as u64);
            for c in 1..self.scratch.len() {
                let r = self.rank(c, unit_size as u64);
                if r < best_rank {
                    best = c;
                    best_rank = r;
                }
            }
            let (q, _, extra_units, _) = self.scratch[best];
            let used = self.queues.len(q) as u64 + extra_units;
            if !self.admission.admits(
                used,
                self.occupied + u,
                self.limit,
                self.queues.count(),
                self.fairshare,
            ) {
                self.placed = placed;
                verdicts.refuse(packet, DropReason::Overflow);
                return;
            }
            let c = &mut self.scratch[best];
            c.1 += unit_size as u64;
            c.2 += 1;
            if !self.drr.is_active(q) && c.3.is_none() {
                c.3 = Some(next_virtual);
                next_virtual += 1;
            }
            placed.push(q);
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.held.push(None);
                (self.held.len() - 1) as u32
            }
        };
        self.backlog.packets += 1;
        self.backlog.bytes += packet.size() as u64;
        self.held[slot as usize] = Some(Held {
            packet,
            remaining: units,
            seq: self.next_seq,
        });
        self.next_seq += 1;
        for &q in &placed {
            self.queues.push_back(
                q,
                Unit {
                    slot,
                    size: unit_size,
                },
            );
            self.drr.activate(q);
            self.occupied += 1;
        }
        self.placed = placed;
    }

    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        loop {
            if self.head_due() {
                return self.release();
            }
            let Some((_, unit)) = self.drr.next(&mut self.queues) else {
                // The scheduler is empty: flush the output buffer.
                return self.release();
            };
            // The round in progress now must finish before a packet
            // completed here may leave the resequencing buffer.
            let due = self.drr.next_ticket();
            // As ns-2's SFQ (which the report modified): the visit ends as
            // soon as the head no longer fits, so a queue activated before
            // the next departure joins behind this one.
            self.drr.end_spent_visit(&self.queues);
            let slot = unit.slot as usize;
            let h = self.held[slot].as_mut().expect("unit of a held packet");
            h.remaining -= 1;
            if h.remaining > 0 {
                self.occupied -= 1;
                continue;
            }
            let Held { packet, seq, .. } = self.held[slot].take().expect("held");
            self.free.push(slot as u32);
            if self.reorder == MqfqReorder::Resequence {
                // Stays in the buffer (and in `occupied`) for one round.
                self.out.push_back((packet, seq, due));
                continue;
            }
            self.occupied -= 1;
            self.left(&packet);
            return Some(packet);
        }
    }

    fn queues_of(&self, key: u64) -> Vec<u32> {
        let k = self.queues.count();
        (0..self.hashes.len())
            .map(|j| self.hashes.bucket(j, key, k) as u32)
            .collect()
    }

    fn backlog(&self) -> Backlog {
        self.backlog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::testkit::TestPacket;

    fn mqfq(reorder: MqfqReorder, k: usize, quantum: u64) -> Mqfq<TestPacket> {
        Mqfq::new(1000, k, 2, quantum, reorder, 100, SfqAdmission::Ns2, 9)
    }

    fn candidates(m: &Mqfq<TestPacket>, flow: u64) -> (usize, usize) {
        let k = m.queues.count();
        (m.hashes.bucket(0, flow, k), m.hashes.bucket(1, flow, k))
    }

    #[test]
    fn a_flows_packets_go_only_to_the_queues_it_reports() {
        let mut m = mqfq(MqfqReorder::None, 16, 1000);
        let mut v = Verdicts::new();
        for flow in 0..40u64 {
            let q = QueueDiscipline::<TestPacket>::queues_of(&m, flow);
            assert_eq!(q.len(), 2);
            for seq in 0..6 {
                m.enqueue(TestPacket::new(flow, seq, 1000), 0, &mut v);
            }
            let used: Vec<u32> = (0..16)
                .filter(|&i| m.queues.len(i) > 0)
                .map(|i| i as u32)
                .collect();
            // six packets spread over both candidates (or one, when they coincide)
            let mut want = q.clone();
            want.sort_unstable();
            want.dedup();
            assert_eq!(used, want, "flow {flow}");
            while m.dequeue(0, &mut v).is_some() {}
        }
    }

    /// A flow whose two candidate queues differ, and flows that hash only
    /// into the first or only into the second of them.
    fn find_flows(m: &Mqfq<TestPacket>) -> (u64, u64, u64) {
        let main = (0..).find(|&f| {
            let (a, b) = candidates(m, f);
            a != b
        });
        let main = main.unwrap();
        let (a, b) = candidates(m, main);
        let only = |q: usize| (1000..).find(|&f| candidates(m, f) == (q, q)).unwrap();
        (main, only(a), only(b))
    }

    #[test]
    fn joins_the_candidate_with_fewer_rounds_before_service() {
        let mut m = mqfq(MqfqReorder::None, 8, 1000);
        let mut v = Verdicts::new();
        let (f, fa, fb) = find_flows(&m);
        let (qa, qb) = candidates(&m, f);
        // Queue a holds 3 packets of 1000 B, queue b holds 1.
        for i in 0..3 {
            m.enqueue(TestPacket::new(fa, i, 1000), 0, &mut v);
        }
        m.enqueue(TestPacket::new(fb, 0, 1000), 0, &mut v);
        assert_eq!((m.queues.len(qa), m.queues.len(qb)), (3, 1));
        // RBS(a) = 3, RBS(b) = 1: the flow's packets go to b until b holds
        // as many as a; then the tie goes to a, which is served first.
        for i in 0..3 {
            m.enqueue(TestPacket::new(f, i, 1000), 0, &mut v);
        }
        assert_eq!((m.queues.len(qa), m.queues.len(qb)), (4, 3));
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| m.dequeue(0, &mut v))
            .map(|p| (p.flow, p.seq))
            .collect();
        let mine: Vec<u64> = order.iter().filter(|x| x.0 == f).map(|x| x.1).collect();
        assert_eq!(mine, vec![0, 1, 2]);
    }

    #[test]
    fn reproduces_the_mixed_size_reordering_of_fig_2_and_both_fixes() {
        // Digest 001, section 2.4: w = 1500, the flow's candidates {Q3, Q1},
        // Q3 at the pointer holding 500 B of other traffic, Q1 empty. A
        // 1500 B packet goes to Q1, the following 1000 B packet to Q3 and
        // leaves first.
        for reorder in [MqfqReorder::None, MqfqReorder::Resequence] {
            let mut m = mqfq(reorder, 8, 1500);
            let mut v = Verdicts::new();
            let (f, f3, _) = find_flows(&m);
            m.enqueue(TestPacket::new(f3, 0, 500), 0, &mut v);
            m.enqueue(TestPacket::new(f, 0, 1500), 0, &mut v);
            m.enqueue(TestPacket::new(f, 1, 1000), 0, &mut v);
            let order: Vec<(u64, u64)> = std::iter::from_fn(|| m.dequeue(0, &mut v))
                .map(|p| (p.flow, p.seq))
                .collect();
            let expect = match reorder {
                MqfqReorder::None => vec![(f3, 0), (f, 1), (f, 0)],
                _ => vec![(f3, 0), (f, 0), (f, 1)],
            };
            assert_eq!(order, expect, "{reorder:?}");
        }
        // Two 1000 B packets in the same situation stay in order.
        let mut m = mqfq(MqfqReorder::None, 8, 1500);
        let mut v = Verdicts::new();
        let (f, f3, _) = find_flows(&m);
        m.enqueue(TestPacket::new(f3, 0, 500), 0, &mut v);
        m.enqueue(TestPacket::new(f, 0, 1000), 0, &mut v);
        m.enqueue(TestPacket::new(f, 1, 1000), 0, &mut v);
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| m.dequeue(0, &mut v))
            .map(|p| (p.flow, p.seq))
            .collect();
        assert_eq!(order, vec![(f3, 0), (f, 0), (f, 1)]);
    }

    /// Random arrivals and departures of many flows over few queues; returns
    /// whether any flow was reordered.
    fn reorders(reorder: MqfqReorder, sizes: &[u32], seed: u64) -> bool {
        let mut m = Mqfq::new(60, 4, 2, 1500, reorder, 100, SfqAdmission::Ns2, seed);
        let mut v = Verdicts::new();
        let mut rng = Rng::new(seed);
        let mut next = [0u64; 12];
        let mut last = [None::<u64>; 12];
        let mut bad = false;
        for _ in 0..4000 {
            if rng.chance(0.6) {
                let f = rng.below(12);
                let size = sizes[rng.below(sizes.len() as u64) as usize];
                m.enqueue(TestPacket::new(f, next[f as usize], size), 0, &mut v);
                next[f as usize] += 1;
            } else if let Some(p) = m.dequeue(0, &mut v) {
                bad |= last[p.flow as usize].is_some_and(|l| p.seq < l);
                last[p.flow as usize] = Some(p.seq);
            }
            v.drain(|_| {});
        }
        bad
    }

    #[test]
    fn never_reorders_a_flow_of_equal_size_packets() {
        // The theorem of section IV, for several sizes and seeds.
        for seed in 0..10 {
            for size in [40, 1000, 1500] {
                assert!(
                    !reorders(MqfqReorder::None, &[size], seed),
                    "size {size} seed {seed}"
                );
            }
        }
    }

    #[test]
    fn mixed_sizes_reorder_without_a_fix_and_not_with_one() {
        let sizes = [40, 576, 1000, 1500];
        assert!((0..10).any(|s| reorders(MqfqReorder::None, &sizes, s)));
        for s in 0..10 {
            assert!(
                !reorders(MqfqReorder::Resequence, &sizes, s),
                "resequence, seed {s}"
            );
            assert!(!reorders(MqfqReorder::Cells, &sizes, s), "cells, seed {s}");
        }
    }

    #[test]
    fn with_one_hash_and_a_packet_quantum_it_is_sfq() {
        // Digest 001 section 8: d = 1 behaves exactly like SFQ (equal-size
        // packets, DRR quantum = packet size = ns-2 packet round robin).
        use crate::{Sfq, SfqHash};
        for seed in 0..5 {
            let mut m = Mqfq::new(
                30,
                4,
                1,
                1000,
                MqfqReorder::None,
                64,
                SfqAdmission::Ns2,
                seed,
            );
            let mut s = Sfq::new(30, 4, SfqHash::Improved, SfqAdmission::Ns2, seed);
            let mut rng = Rng::new(seed);
            let (mut vm, mut vs) = (Verdicts::new(), Verdicts::new());
            for i in 0..3000 {
                if rng.chance(0.55) {
                    let p = TestPacket::new(rng.below(10), i, 1000);
                    m.enqueue(p, 0, &mut vm);
                    s.enqueue(p, 0, &mut vs);
                } else {
                    assert_eq!(m.dequeue(0, &mut vm), s.dequeue(0, &mut vs));
                }
                assert_eq!(vm.dropped(), vs.dropped());
                vm.drain(|_| {});
                vs.drain(|_| {});
            }
        }
    }

    #[test]
    fn cells_count_against_the_limit_and_refuse_whole_packets() {
        // limit 10 cells, one queue pair: a 1500 B packet is 15 cells of 100.
        let mut m = Mqfq::new(
            10,
            4,
            2,
            1500,
            MqfqReorder::Cells,
            100,
            SfqAdmission::Ns2,
            3,
        );
        let mut v = Verdicts::new();
        m.enqueue(TestPacket::new(1, 0, 1500), 0, &mut v);
        assert_eq!(m.backlog().packets, 0);
        assert_eq!(v.dropped().len(), 1);
        m.enqueue(TestPacket::new(1, 1, 200), 0, &mut v);
        assert_eq!(
            m.backlog(),
            Backlog {
                packets: 1,
                bytes: 200
            }
        );
        assert_eq!(m.occupied, 2);
        assert_eq!(m.dequeue(0, &mut v).map(|p| p.seq), Some(1));
        assert_eq!(m.occupied, 0);
    }
}
