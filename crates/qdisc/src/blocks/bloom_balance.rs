//! Bloom-filter flow distribution: spreading flows evenly over a few queues.
//!
//! Seed 000, chapter 5 (digest 000, section 2.11). Flows are hashed into
//! `N_f` Bloom filters (more filters than queues); each filter counts the
//! flows it has seen and is mapped to exactly one queue; a packet goes to
//! `map[filter(packet)]`. Filters cannot see flows leave, so every `period`
//! T the filters and their counts are cleared and recounted for `delta`
//! (Figure 5.7); no rebalancing happens inside that window.
//!
//! - Static greedy assignment (Figure 5.3): filters by descending count,
//!   each to the queue with the fewest flows so far. Done once, at the end of
//!   the first counting window.
//! - Periodic Balancing, PB (Figure 5.8): at the end of every counting
//!   window, move filters with no packets queued from queues above the
//!   threshold (flows / queues) to the queue with the fewest flows while it
//!   is below the threshold.
//! - Balancing at Dequeue, DB (Figure 5.9): after a dequeue that leaves its
//!   filter with no packets queued, if the filter's queue is above the
//!   threshold, move the filter to the queue with the fewest flows.
//!
//! A filter moves only while none of its packets is queued, so no flow is
//! ever reordered (the report's requirement, section 5.2).
//!
//! Choices where the report is silent (digest 000, section 7):
//! - A-BF1: a filter's count grows by one per packet that turns at least one
//!   bit from 0 to 1 (so it estimates flows, not bits).
//! - A-BF2: the flow-to-filter hash and the two bit hashes are independent
//!   members of one [`HashFamily`]; bit positions by double hashing.
//! - A-BF4: PB takes the filters of an over-full queue by descending count,
//!   and by default recomputes Q_min after every move (the digest's
//!   recommendation). `pb_target = "each_queue"` follows Figure 5.8 as
//!   printed instead: Q_min is chosen once for each over-full queue, which
//!   then gives filters to that one queue only, until it reaches the
//!   threshold.
//! - A-BF5: DB follows Figure 5.9 literally (no guard on Q_min's count).
//! - The greedy assignment at the end of the first window keeps a filter
//!   that has packets queued on its queue (moving it could reorder its
//!   flows): those filters are placed first, then the others by descending
//!   count. Filters that counted no flow stay where they are (the initial
//!   map is filter f -> queue f mod N_q) rather than all piling onto the
//!   least-loaded queue.
//!
//! Cost: k bit updates per packet inside the counting window; DB is
//! O(log N_q) per dequeue (a heap over queue flow counts, as the digest
//! recommends); PB and the greedy assignment sort, O(N_f log N_f), once per
//! period, in `wakeup`.

use serde::{Deserialize, Serialize};

use crate::blocks::bloom::MAX_HASHES;
use crate::blocks::{BloomFilters, HashFamily, IndexedHeap};
use crate::params::{params, refuse, SpecError, MS};
use crate::Time;

/// Which dynamic rebalancing runs after the static greedy assignment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Balancing {
    /// The greedy assignment only, held for the whole run.
    Static,
    /// Periodic Balancing (Figure 5.8).
    Periodic,
    /// Balancing at Dequeue (Figure 5.9): the report's conclusion, "DB alone
    /// is sufficient" (section 5.3.2).
    #[default]
    Dequeue,
    /// PB and DB together.
    Both,
}

/// Where Periodic Balancing sends an over-full queue's filters (A-BF4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PbTarget {
    /// The least-loaded queue, found again after every move.
    #[default]
    EachMove,
    /// Figure 5.8 as printed: "Let Q_min be the queue with the minimum
    /// number of flows" stands before the loop, so it is chosen once for
    /// each over-full queue.
    EachQueue,
}

impl PbTarget {
    fn is_each_move(&self) -> bool {
        *self == PbTarget::EachMove
    }
}

impl Balancing {
    fn periodic(self) -> bool {
        matches!(self, Balancing::Periodic | Balancing::Both)
    }
    fn at_dequeue(self) -> bool {
        matches!(self, Balancing::Dequeue | Balancing::Both)
    }
}

params! {
    /// The distributor's parameters, as a scenario gives them (digest 000,
    /// section 2.11).
    #[derive(Copy, PartialEq)]
    pub struct BloomParams {
        /// Bloom filters, N_f; unset: 10 per queue (Table 5.1's 20,000 for
        /// 2,000 queues; the 200/20 and 2,000/200 of sections 5.2 and 5.3).
        pub filters: Option<u32> [Number] = None,
        /// Bits per filter, m: 50 (Table 5.1: under 1% false positives at 5
        /// flows a filter).
        pub bits: u32 [Number] = 50,
        /// Hash functions, k: 7 = round(ln 2 m/n) (digest A-BF2).
        pub hashes: u32 [Number] = 7,
        /// The clearing period T: 200 ms (section 5.2).
        pub period: Time [Time] = 200 * MS,
        /// The counting window delta: 50 ms (section 5.2).
        pub delta: Time [Time] = 50 * MS,
        /// The rebalancing: `dequeue` ("DB alone is sufficient", section
        /// 5.3.2).
        pub balancing: Balancing [Choice] = Balancing::Dequeue,
        /// Periodic Balancing's target queue: `each_move` (the least-loaded
        /// queue after every move, digest A-BF4's recommendation) or
        /// `each_queue` (chosen once for each over-full queue, Figure 5.8
        /// as printed). Written out only when set, so that every other
        /// discipline's spec, and run hash, stays as it was.
        #[serde(skip_serializing_if = "PbTarget::is_each_move")]
        pub pb_target: PbTarget [Choice] = PbTarget::EachMove,
    }
}

impl BloomParams {
    /// Refuse impossible parameters (they sit in a discipline's `bloom`).
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.filters == Some(0) {
            return refuse("bloom.filters", "must be at least 1");
        }
        if self.bits == 0 {
            return refuse("bloom.bits", "must be at least 1");
        }
        if self.hashes == 0 {
            return refuse("bloom.hashes", "must be at least 1");
        }
        if self.hashes > self.bits.min(MAX_HASHES) {
            // k distinct bit positions need k <= m.
            return refuse(
                "bloom.hashes",
                format!("must be at most bloom.bits and at most {MAX_HASHES}"),
            );
        }
        if self.period == 0 {
            return refuse("bloom.period", "must be positive");
        }
        if self.delta >= self.period {
            return refuse("bloom.delta", "must be shorter than bloom.period");
        }
        Ok(())
    }

    /// The distributor's configuration over `queues` queues.
    pub fn config(&self, queues: usize) -> BloomConfig {
        BloomConfig {
            queues,
            filters: self.filters.map_or(10 * queues, |f| f as usize),
            bits: self.bits,
            hashes: self.hashes,
            period: self.period,
            delta: self.delta,
            balancing: self.balancing,
            pb_target: self.pb_target,
        }
    }
}

/// The distributor's configuration (plain units: bits, nanoseconds).
#[derive(Clone, Copy, Debug)]
pub struct BloomConfig {
    pub queues: usize,
    pub filters: usize,
    pub bits: u32,
    pub hashes: u32,
    pub period: Time,
    pub delta: Time,
    pub balancing: Balancing,
    pub pb_target: PbTarget,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// End of a counting window: update queue counts, assign or rebalance.
    Update,
    /// Start of a period: clear the filters and counts.
    Clear,
}

#[derive(Clone, Debug)]
pub struct BloomBalancer {
    hashes: HashFamily,
    bloom: BloomFilters,
    /// Flows counted by each filter in the current period.
    count: Vec<u32>,
    /// Packets queued of each filter's flows.
    queued: Vec<u32>,
    queue_of: Vec<u32>,
    /// The filters mapped to each queue, and each filter's place there.
    members: Vec<Vec<u32>>,
    member_pos: Vec<u32>,
    /// Queue flow counts (sum of their filters' counts), min-heap.
    flows: IndexedHeap<u64>,
    threshold: f64,
    balancing: Balancing,
    pb_target: PbTarget,
    period: Time,
    delta: Time,
    counting: bool,
    assigned: bool,
    next: Next,
    next_at: Option<Time>,
}

impl BloomBalancer {
    pub fn new(cfg: BloomConfig, seed: u64) -> Self {
        let (nq, nf) = (cfg.queues, cfg.filters);
        let queue_of: Vec<u32> = (0..nf).map(|f| (f % nq) as u32).collect();
        let mut members = vec![Vec::new(); nq];
        let mut member_pos = vec![0; nf];
        for (f, &q) in queue_of.iter().enumerate() {
            member_pos[f] = members[q as usize].len() as u32;
            members[q as usize].push(f as u32);
        }
        let mut flows = IndexedHeap::new(nq);
        for q in 0..nq {
            flows.set(q, 0);
        }
        Self {
            hashes: HashFamily::new(3, seed),
            bloom: BloomFilters::new(nf, cfg.bits, cfg.hashes),
            count: vec![0; nf],
            queued: vec![0; nf],
            queue_of,
            members,
            member_pos,
            flows,
            threshold: 0.0,
            balancing: cfg.balancing,
            pb_target: cfg.pb_target,
            period: cfg.period,
            delta: cfg.delta,
            // t = 0 starts a clearing period.
            counting: true,
            assigned: false,
            next: Next::Update,
            next_at: Some(cfg.delta),
        }
    }

    pub fn queues(&self) -> usize {
        self.members.len()
    }

    #[inline]
    pub fn filter_of(&self, key: u64) -> usize {
        self.hashes.bucket(0, key, self.count.len())
    }

    /// The queue of a flow now (no counting).
    #[inline]
    pub fn queue_of_flow(&self, key: u64) -> usize {
        self.queue_of[self.filter_of(key)] as usize
    }

    /// The queue of an arriving packet; counts its flow inside the window.
    #[inline]
    pub fn classify(&mut self, key: u64) -> usize {
        let f = self.filter_of(key);
        if self.counting
            && self
                .bloom
                .insert(f, self.hashes.hash(1, key), self.hashes.hash(2, key))
        {
            self.count[f] += 1;
        }
        self.queue_of[f] as usize
    }

    /// A packet of flow `key` was written into its queue.
    #[inline]
    pub fn enqueued(&mut self, key: u64) {
        let f = self.filter_of(key);
        self.queued[f] += 1;
    }

    /// A packet of flow `key` left its queue, by dequeue or by a discard.
    /// After a dequeue, Balancing at Dequeue may move the filter.
    #[inline]
    pub fn left(&mut self, key: u64, dequeued: bool) {
        let f = self.filter_of(key);
        self.queued[f] -= 1;
        if dequeued
            && self.queued[f] == 0
            && self.balancing.at_dequeue()
            && self.assigned
            && !self.counting
        {
            let q = self.queue_of[f] as usize;
            if self.flows.key(q) as f64 > self.threshold {
                let (qmin, _) = self.flows.peek().expect("queues exist");
                if qmin != q {
                    self.move_filter(f, qmin);
                }
            }
        }
    }

    /// Estimated flows on queue `q` (held between counting windows).
    pub fn estimated_flows(&self, q: usize) -> u64 {
        self.flows.key(q)
    }

    /// Ideal flows per queue from the last counting window.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    pub fn next_wakeup(&self) -> Option<Time> {
        self.next_at
    }

    /// Run the clearing and counting-window events due at `now`.
    pub fn wakeup(&mut self, now: Time) {
        while let Some(at) = self.next_at.filter(|&t| t <= now) {
            match self.next {
                Next::Clear => {
                    // Whole idle periods with no packet count no flows: jump
                    // to the last clearing instant at or before `now`.
                    let skipped = (now - at) / self.period;
                    let at = at + skipped * self.period;
                    if skipped > 0 {
                        self.count.fill(0);
                        self.set_queue_counts_from_filters();
                    }
                    self.bloom.clear();
                    self.count.fill(0);
                    self.counting = true;
                    self.next = Next::Update;
                    self.next_at = Some(at + self.delta);
                }
                Next::Update => {
                    self.counting = false;
                    self.set_queue_counts_from_filters();
                    if !self.assigned {
                        self.greedy();
                        self.assigned = true;
                    } else if self.balancing.periodic() {
                        self.periodic();
                    }
                    self.next = Next::Clear;
                    // Static assignment needs no more counting.
                    self.next_at = (self.balancing != Balancing::Static)
                        .then(|| at - self.delta + self.period);
                }
            }
        }
    }

    fn set_queue_counts_from_filters(&mut self) {
        let mut total = 0u64;
        for q in 0..self.members.len() {
            let c: u64 = self.members[q]
                .iter()
                .map(|&f| self.count[f as usize] as u64)
                .sum();
            total += c;
            self.flows.set(q, c);
        }
        self.threshold = total as f64 / self.members.len() as f64;
    }

    /// Figure 5.3, keeping filters with queued packets in place.
    fn greedy(&mut self) {
        let nq = self.members.len();
        let mut load = vec![0u64; nq];
        let mut free: Vec<u32> = Vec::new();
        for f in 0..self.count.len() {
            if self.queued[f] > 0 || self.count[f] == 0 {
                load[self.queue_of[f] as usize] += self.count[f] as u64;
            } else {
                free.push(f as u32);
            }
        }
        free.sort_by(|&a, &b| {
            self.count[b as usize]
                .cmp(&self.count[a as usize])
                .then(a.cmp(&b))
        });
        for (q, &l) in load.iter().enumerate() {
            self.flows.set(q, l);
        }
        for f in free {
            let (qmin, l) = self.flows.peek().expect("queues exist");
            let f = f as usize;
            self.relink(f, qmin);
            self.flows.set(qmin, l + self.count[f] as u64);
        }
    }

    /// Figure 5.8.
    fn periodic(&mut self) {
        let thr = self.threshold;
        let mut over: Vec<usize> = (0..self.members.len())
            .filter(|&q| self.flows.key(q) as f64 > thr)
            .collect();
        over.sort_by(|&a, &b| self.flows.key(b).cmp(&self.flows.key(a)).then(a.cmp(&b)));
        for qi in over {
            let mut s: Vec<u32> = self.members[qi]
                .iter()
                .copied()
                .filter(|&f| self.queued[f as usize] == 0 && self.count[f as usize] > 0)
                .collect();
            s.sort_by(|&a, &b| {
                self.count[b as usize]
                    .cmp(&self.count[a as usize])
                    .then(a.cmp(&b))
            });
            let mut target = self.flows.peek().expect("queues exist").0;
            for f in s {
                if self.pb_target == PbTarget::EachMove {
                    target = self.flows.peek().expect("queues exist").0;
                }
                let below = (self.flows.key(target) as f64) < thr;
                if !(below && self.flows.key(qi) as f64 > thr) {
                    break;
                }
                self.move_filter(f as usize, target);
            }
        }
    }

    /// Move filter `f` and its flow count to queue `to`.
    fn move_filter(&mut self, f: usize, to: usize) {
        let from = self.queue_of[f] as usize;
        let c = self.count[f] as u64;
        self.relink(f, to);
        self.flows.set(from, self.flows.key(from) - c);
        self.flows.set(to, self.flows.key(to) + c);
    }

    fn relink(&mut self, f: usize, to: usize) {
        debug_assert_eq!(
            self.queued[f], 0,
            "a filter with queued packets must not move"
        );
        let from = self.queue_of[f] as usize;
        let p = self.member_pos[f] as usize;
        self.members[from].swap_remove(p);
        if let Some(&moved) = self.members[from].get(p) {
            self.member_pos[moved as usize] = p as u32;
        }
        self.member_pos[f] = self.members[to].len() as u32;
        self.members[to].push(f as u32);
        self.queue_of[f] = to as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    fn cfg(queues: usize, filters: usize, balancing: Balancing) -> BloomConfig {
        BloomConfig {
            queues,
            filters,
            bits: 50,
            hashes: 7,
            period: 200 * MS,
            delta: 50 * MS,
            balancing,
            pb_target: PbTarget::EachMove,
        }
    }

    /// Max/min of the true flows per queue.
    fn ratio(b: &BloomBalancer, flows: impl Iterator<Item = u64>) -> f64 {
        let mut per = vec![0u64; b.queues()];
        for k in flows {
            per[b.queue_of_flow(k)] += 1;
        }
        *per.iter().max().unwrap() as f64 / *per.iter().min().unwrap() as f64
    }

    #[test]
    fn counts_flows_and_greedy_balances_them() {
        // Table 5.2's smallest case: 1000 flows, 200 filters, 20 queues;
        // the report's Bloom + greedy average is 1.04 (hashing: 1.62).
        let mut b = BloomBalancer::new(cfg(20, 200, Balancing::Static), 5);
        for k in 0..1000u64 {
            b.classify(k);
            b.classify(k); // a second packet of a flow is not a new flow
        }
        let counted: u32 = b.count.iter().sum();
        assert!(
            (980..=1000).contains(&counted),
            "counted {counted} of 1000 flows"
        );
        assert_eq!(b.next_wakeup(), Some(50 * MS));
        b.wakeup(50 * MS);
        assert_eq!(b.next_wakeup(), None, "static assignment is held");
        let r = ratio(&b, 0..1000);
        assert!(r < 1.25, "greedy max/min {r}");
        assert!((b.threshold() - counted as f64 / 20.0).abs() < 1e-9);
    }

    #[test]
    fn a_filter_with_queued_packets_never_moves() {
        let mut b = BloomBalancer::new(cfg(2, 8, Balancing::Dequeue), 1);
        // Flow 7's filter keeps one packet queued through the assignment.
        let q7 = b.classify(7);
        b.enqueued(7);
        for k in 100..200u64 {
            b.classify(k);
        }
        b.wakeup(50 * MS);
        assert_eq!(b.queue_of_flow(7), q7);
    }

    #[test]
    fn balancing_at_dequeue_moves_an_idle_filter_to_the_least_loaded_queue() {
        let mut b = BloomBalancer::new(cfg(2, 4, Balancing::Dequeue), 3);
        // Put every flow's filter on queue 0 by hand, counts 3, 2, 1, 0.
        for f in 0..4 {
            b.relink(f, 0);
        }
        b.count = vec![3, 2, 1, 0];
        b.assigned = true;
        b.counting = false;
        b.set_queue_counts_from_filters();
        assert_eq!(
            (b.estimated_flows(0), b.estimated_flows(1), b.threshold()),
            (6, 0, 3.0)
        );
        // A packet of a flow of filter 1 leaves; the filter has nothing
        // queued and queue 0 (6 flows) is over the threshold (3): it moves.
        let key = (0..).find(|&k| b.filter_of(k) == 1).unwrap();
        b.enqueued(key);
        b.left(key, true);
        assert_eq!(b.queue_of_flow(key), 1);
        assert_eq!((b.estimated_flows(0), b.estimated_flows(1)), (4, 2));
        // A discard (not a dequeue) never moves a filter.
        let key0 = (0..).find(|&k| b.filter_of(k) == 0).unwrap();
        b.enqueued(key0);
        b.left(key0, false);
        assert_eq!(b.queue_of_flow(key0), 0);
    }

    /// Periodic Balancing's pass over three queues, every filter on queue 0
    /// with counts 4, 3, 2, 2, 1, 0 (12, 0, 0 flows; threshold 4); returns
    /// the filters' queues and the queues' flows.
    fn periodic_pass(target: PbTarget) -> (Vec<u32>, [u64; 3]) {
        let mut b = BloomBalancer::new(cfg(3, 6, Balancing::Periodic), 3);
        b.pb_target = target;
        for f in 0..6 {
            b.relink(f, 0);
        }
        b.count = vec![4, 3, 2, 2, 1, 0];
        b.assigned = true;
        b.counting = false;
        b.set_queue_counts_from_filters();
        b.periodic();
        let flows = [0, 1, 2].map(|q| b.estimated_flows(q));
        (b.queue_of, flows)
    }

    #[test]
    fn periodic_balancing_moves_filters_down_to_the_threshold() {
        // Queue 0 (12 > 4): filter 0 (4) -> queue 1 (0 < 4); filter 1 (3) ->
        // queue 2; filter 2 (2) -> queue 2 (3 < 4, queue 0 at 5 > 4);
        // then queue 0 holds 3 <= 4 and the loop stops.
        assert_eq!(
            periodic_pass(PbTarget::EachMove),
            (vec![1, 2, 2, 0, 0, 0], [3, 4, 5])
        );
    }

    #[test]
    fn figure_5_8_as_printed_fills_one_target_per_over_full_queue() {
        // Q_min is queue 1, chosen once: filter 0 (4) fills it to the
        // threshold and the loop ends, queue 0 still over it, queue 2 empty.
        assert_eq!(
            periodic_pass(PbTarget::EachQueue),
            (vec![1, 0, 0, 0, 0, 0], [8, 4, 0])
        );
    }

    #[test]
    fn the_pb_target_is_written_only_when_set() {
        // Specs written before it, and their run hashes, stay as they were.
        let mut p = BloomParams::default();
        let spec = serde_json::to_value(p).unwrap();
        assert!(spec.get("balancing").is_some() && spec.get("pb_target").is_none());
        p.pb_target = PbTarget::EachQueue;
        assert_eq!(serde_json::to_value(p).unwrap()["pb_target"], "each_queue");
    }

    #[test]
    fn clears_every_period_and_skips_idle_periods() {
        let mut b = BloomBalancer::new(cfg(2, 4, Balancing::Both), 3);
        b.classify(1);
        b.wakeup(50 * MS);
        assert_eq!(b.next_wakeup(), Some(200 * MS));
        b.wakeup(200 * MS);
        assert_eq!(b.count.iter().sum::<u32>(), 0);
        assert_eq!(b.next_wakeup(), Some(250 * MS));
        b.wakeup(250 * MS);
        b.wakeup(10_000 * MS + 1);
        assert_eq!(b.next_wakeup(), Some(10_050 * MS));
    }
}
