//! SFQ as ns-2 implements it (`Queue/SFQ`, Villamizar 1997), the baseline of
//! seed 001 (Georg, Jechlitschek and Gorinsky, "Improving Individual Flow
//! Performance with Multiple Queue Fair Queuing", WUCSE-2007-30; seed file
//! `001_a4224a25d34df164.txt`, digest 001 section 2.2).
//!
//! `buckets` FIFO queues share one buffer of `limit` packets; a hash of the
//! flow picks the queue; the non-empty queues are served packet by packet in
//! round robin (one packet per visit, not byte DRR). The admission rule is
//! the ns-2 code's, which lets a queue grow only while the free space is at
//! least twice its length plus two (digest 001, ambiguity A3: the code, not
//! the report's prose, "free space at least the queue size plus two"):
//!
//! ```text
//! used = packets in the chosen queue; left = limit - occupied
//! drop if used >= left/2  or  (left < buckets and used > limit/buckets)  or  left <= 0
//! ```
//!
//! `admission = "prose"` takes the report's words instead: a queue may grow
//! beyond its fair share `limit/buckets` only while the free space is at
//! least its length plus two.
//!
//! Parameters, their defaults and sources: [`SfqParams`]. `hash`: `improved`
//! (the report replaced ns-2's hash, section 2.1; a seeded 64-bit mixer stands in
//! for its CRC-with-random-bits, which the digest accepts) or `ns2` (the
//! original `(s + (s>>8) + ~(s>>4)) % (2^20 - 1)` over src+dst, which puts
//! consecutive addresses into adjacent queues). No perturbation: ns-2 has
//! none. O(1) per packet.

use std::collections::VecDeque;

use crate::params::{checked_packets, packets_only, params, refuse, SpecError};
use crate::spec::QdiscParams;
use crate::{
    Backlog, DropReason, FlowQueues, HashFamily, Limit, Packet, QueueDiscipline, Time, Verdicts,
};

params! {
    /// The buffer SFQ's queues share and its admission rule, as ns-2 has them
    /// (MQFQ shares them too).
    #[derive(Copy, PartialEq)]
    pub struct SharedBuffer {
        /// The buffer, in packets: 40 (ns-2's `maxqueue_`; the report uses
        /// 100).
        pub limit: Limit [Buffer] = Limit::Packets(40),
        /// The admission rule: ns-2's code (digest 001, ambiguity A3).
        pub admission: SfqAdmission [Choice] = SfqAdmission::Ns2,
    }
}

params! {
    /// SFQ's parameters, with ns-2's defaults (`sfq.cc`).
    #[derive(PartialEq)]
    pub struct SfqParams {
        #[flatten] pub buffer: SharedBuffer,
        /// Queues: 16 (ns-2's `buckets_`; the report uses 16, and 32 in
        /// section V-C).
        pub buckets: usize [Number] = 16,
        /// The flow hash: `improved` (the report replaced ns-2's, section
        /// 2.1).
        pub hash: SfqHash [Choice] = SfqHash::Improved,
    }
}

impl QdiscParams for SfqParams {
    const SUMMARY: &'static str = "stochastic fair queueing as ns-2 implements it";

    fn validate(&self) -> Result<(), SpecError> {
        packets_only(self.buffer.limit, "ns-2 SFQ counts its buffer in packets")?;
        if self.buckets == 0 {
            return refuse("buckets", "must be at least 1");
        }
        Ok(())
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Sfq::new(
            checked_packets(self.buffer.limit),
            self.buckets,
            self.hash,
            self.buffer.admission,
            seed,
        ))
    }
}

/// Which hash maps a flow to its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SfqHash {
    /// A seeded hash of the whole flow key (the report's "improved hash").
    Improved,
    /// ns-2's default: the sum of source and destination address. The flow
    /// key's low 32 bits stand for the source, its high 32 bits for the
    /// destination.
    Ns2,
}

/// The shared-buffer admission rule (digest 001, ambiguity A3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SfqAdmission {
    /// The ns-2 code: refuse if `used >= left/2`, or if `left < queues` and
    /// `used > limit/queues`, or if `left <= 0`.
    Ns2,
    /// The report's prose: a queue may grow beyond its fair share
    /// (`limit/queues`) only while the free space is at least its length
    /// plus two.
    Prose,
}

impl SfqAdmission {
    /// May a queue holding `used` units take one more when `occupied` of
    /// `limit` are in use?
    #[inline]
    pub fn admits(
        self,
        used: u64,
        occupied: u64,
        limit: u64,
        queues: usize,
        fairshare: u64,
    ) -> bool {
        let used = used as i64;
        let left = limit as i64 - occupied as i64;
        match self {
            SfqAdmission::Ns2 => {
                !(used >= (left >> 1)
                    || (left < queues as i64 && used > fairshare as i64)
                    || left <= 0)
            }
            SfqAdmission::Prose => left > 0 && (used < fairshare as i64 || left >= used + 2),
        }
    }
}

/// ns-2's SFQ hash of a flow key, reduced to `buckets` queues. ns-2 takes C's
/// `%` of a value that can be negative (an out-of-range index when `s` is
/// 0); here the remainder is taken the Euclidean way.
pub fn ns2_hash(key: u64, buckets: usize) -> usize {
    let src = key as u32 as i32;
    let dst = (key >> 32) as u32 as i32;
    let s = src.wrapping_add(dst);
    let h = s.wrapping_add(s >> 8).wrapping_add(!(s >> 4)) % ((2 << 19) - 1);
    h.rem_euclid(buckets as i32) as usize
}

pub struct Sfq<P> {
    queues: FlowQueues<P>,
    /// The non-empty queues in service order; the front is ns-2's `active`.
    ring: VecDeque<usize>,
    limit: u64,
    fairshare: u64,
    hash: SfqHash,
    admission: SfqAdmission,
    hashes: HashFamily,
}

impl<P: Packet> Sfq<P> {
    pub fn new(
        limit: u64,
        buckets: usize,
        hash: SfqHash,
        admission: SfqAdmission,
        seed: u64,
    ) -> Self {
        Self {
            queues: FlowQueues::new(buckets),
            ring: VecDeque::with_capacity(buckets),
            limit,
            fairshare: limit / buckets as u64,
            hash,
            admission,
            hashes: HashFamily::new(1, seed),
        }
    }

    fn bucket(&self, key: u64) -> usize {
        match self.hash {
            SfqHash::Improved => self.hashes.bucket(0, key, self.queues.count()),
            SfqHash::Ns2 => ns2_hash(key, self.queues.count()),
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Sfq<P> {
    fn name(&self) -> &'static str {
        "sfq"
    }

    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        let q = self.bucket(packet.flow_key());
        let used = self.queues.len(q) as u64;
        let occupied = self.queues.total().packets;
        if !self.admission.admits(
            used,
            occupied,
            self.limit,
            self.queues.count(),
            self.fairshare,
        ) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        self.queues.push_back(q, packet);
        if self.queues.len(q) == 1 {
            // Joins at the tail of the current cycle (just before `active`).
            self.ring.push_back(q);
        }
    }

    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let &q = self.ring.front()?;
        let packet = self
            .queues
            .pop_front(q)
            .expect("queues in the ring are not empty");
        if self.queues.is_empty(q) {
            self.ring.pop_front();
        } else {
            // One packet per visit: the next queue's turn.
            self.ring.rotate_left(1);
        }
        Some(packet)
    }

    fn queues_of(&self, key: u64) -> Vec<u32> {
        vec![self.bucket(key) as u32]
    }

    fn backlog(&self) -> Backlog {
        self.queues.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn drain(q: &mut Sfq<TestPacket>) -> Vec<(u64, u64)> {
        let mut v = Verdicts::new();
        std::iter::from_fn(|| q.dequeue(0, &mut v))
            .map(|p| (p.flow, p.seq))
            .collect()
    }

    #[test]
    fn admission_caps_a_lone_queue_at_a_third_of_the_buffer() {
        // B = 100, one active queue: accepted while 2*used + 2 <= left, i.e.
        // used = 33 is the last one accepted (left = 67 >> 1 = 33 refuses it).
        let mut q = Sfq::new(100, 16, SfqHash::Improved, SfqAdmission::Ns2, 1);
        let mut v = Verdicts::new();
        for i in 0..50 {
            q.enqueue(TestPacket::new(7, i, 1000), 0, &mut v);
        }
        assert_eq!(q.backlog().packets, 33);
        assert_eq!(v.dropped().len(), 17);
        assert!(v
            .dropped()
            .iter()
            .all(|d| d.reason == DropReason::Overflow && !d.buffered));
    }

    #[test]
    fn prose_admission_lets_a_lone_queue_reach_half_the_buffer() {
        // left >= used + 2 with left = 100 - used: used <= 49 is accepted.
        let mut q = Sfq::new(100, 16, SfqHash::Improved, SfqAdmission::Prose, 1);
        let mut v = Verdicts::new();
        for i in 0..60 {
            q.enqueue(TestPacket::new(7, i, 1000), 0, &mut v);
        }
        assert_eq!(q.backlog().packets, 50);
    }

    fn ns2_admits(used: u64, occupied: u64, limit: u64, queues: usize, fairshare: u64) -> bool {
        SfqAdmission::Ns2.admits(used, occupied, limit, queues, fairshare)
    }

    #[test]
    fn admission_rule_matches_ns2_code() {
        // left >= k: only the "half of the free space" test bites.
        assert!(ns2_admits(10, 70, 100, 16, 6)); // left 30, 10 < 15
        assert!(!ns2_admits(15, 70, 100, 16, 6)); // 15 >= 15
                                                  // left < k: a queue above its fair share is refused even if small.
        assert!(!ns2_admits(3, 22, 32, 16, 2)); // left 10 < 16 and 3 > 2, though 3 < 5
        assert!(ns2_admits(2, 22, 32, 16, 2));
        assert!(!ns2_admits(0, 100, 100, 16, 6)); // left 0
    }

    #[test]
    fn packet_round_robin_one_packet_per_visit() {
        // Flows 0 and 1 under the ns-2 hash land in queues 15 and 0
        // (s = 0 -> h = -1 -> 15; s = 1 -> 0): distinct queues.
        let mut q = Sfq::new(100, 16, SfqHash::Ns2, SfqAdmission::Ns2, 0);
        let mut v = Verdicts::new();
        for i in 0..3 {
            q.enqueue(TestPacket::new(0, i, 1500), 0, &mut v);
        }
        for i in 0..3 {
            q.enqueue(TestPacket::new(1, i, 40), 0, &mut v);
        }
        // One packet per visit whatever its size: not byte fair.
        assert_eq!(
            drain(&mut q),
            vec![(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
        );
    }

    #[test]
    fn new_queue_joins_the_tail_of_the_cycle() {
        let mut q = Sfq::new(100, 16, SfqHash::Ns2, SfqAdmission::Ns2, 0);
        let mut v = Verdicts::new();
        // Flow keys 0, 1, 2 map to queues 15, 0, 1 under the ns-2 hash.
        q.enqueue(TestPacket::new(0, 0, 100), 0, &mut v);
        q.enqueue(TestPacket::new(0, 1, 100), 0, &mut v);
        q.enqueue(TestPacket::new(1, 0, 100), 0, &mut v);
        q.enqueue(TestPacket::new(1, 1, 100), 0, &mut v);
        assert_eq!(q.dequeue(0, &mut v).map(|p| p.flow), Some(0));
        // Flow 2 becomes active after flow 1's turn is already due.
        q.enqueue(TestPacket::new(2, 0, 100), 0, &mut v);
        assert_eq!(drain(&mut q), vec![(1, 0), (0, 1), (2, 0), (1, 1)]);
    }

    #[test]
    fn a_flow_is_queued_where_queues_of_says() {
        let mut q: Sfq<TestPacket> = Sfq::new(100, 16, SfqHash::Improved, SfqAdmission::Ns2, 5);
        let mut v = Verdicts::new();
        for flow in 0..40u64 {
            q.enqueue(TestPacket::new(flow, 0, 1000), 0, &mut v);
            let at = QueueDiscipline::<TestPacket>::queues_of(&q, flow);
            assert_eq!(at.len(), 1);
            assert_eq!(q.queues.tail(at[0] as usize).map(|p| p.flow), Some(flow));
        }
    }

    #[test]
    fn ns2_hash_puts_consecutive_keys_in_adjacent_queues() {
        // The flaw the report names (digest 001, section 2.1).
        let b: Vec<usize> = (100..108).map(|k| ns2_hash(k, 16)).collect();
        let adjacent = b
            .windows(2)
            .filter(|w| (w[1] + 16 - w[0]) % 16 <= 1)
            .count();
        assert!(adjacent >= 6, "{b:?}");
        assert_eq!(ns2_hash(0, 16), 15);
        assert_eq!(ns2_hash(1, 16), 0);
    }
}
