//! The storage and scheduler every multi-queue discipline of seed 000 shares:
//! a [`QueueMap`] (per-flow queues, buckets or Bloom distribution), the
//! FIFOs ([`PooledQueues`]), the DRR round ([`DrrRing`]) and, for the
//! disciplines that look for the longest queue, the O(1) length table
//! ([`QueueLengths`]), with each queue's records of the three in one cache
//! line ([`crate::blocks::PerQueue`]). The discard policies (LQD, TDRR, QSDRR, DTDRR,
//! DSDRR) and WDRR differ only in what they do around it.
//!
//! The report states that its discard policies are not specific to DRR
//! (digest 000, section 2.4): the scheduler here is DRR throughout.

use crate::blocks::queue_map::{check_map, Mapping};
use crate::blocks::{
    BloomParams, DrrRing, Fifo, Fifos, FlowWeights, Member, PerQueue, Place, PooledQueues,
    QueueLengths, QueueMap,
};
use crate::params::{nonzero, params, SpecError};
use crate::{Backlog, Limit, Packet, Time};

params! {
    /// The queues of seed 000's DRR disciplines, as a scenario gives them:
    /// how many, how flows map to them (see
    /// `docs/disciplines/queue-mapping.md`), and DRR's quantum.
    #[derive(Copy, PartialEq)]
    pub struct PerFlowQueues {
        /// DRR's quantum: 1500 bytes, the MTU (digest 000, 2.4, recommended): with
        /// the 1500-byte packets of every experiment DRR is packet round
        /// robin.
        pub quantum: u32 [Bytes] = 1500,
        /// The number of queues (buckets); unset: one queue per flow
        /// (section 4.0).
        pub queues: Option<u32> [Number] = None,
        /// How flows are spread over `queues`: by a hash when unset (digest
        /// 000, 2.10 and 2.11).
        pub mapping: Option<Mapping> [Choice] = None,
        /// The Bloom-filter distributor of `mapping = "bloom"` (chapter 5).
        pub bloom: BloomParams [Table] = BloomParams::default(),
    }
}

impl PerFlowQueues {
    /// Refuse an impossible quantum or queue map.
    pub fn validate(&self) -> Result<(), SpecError> {
        nonzero("quantum", self.quantum)?;
        check_map(self.queues, self.mapping, &self.bloom)
    }

    /// Which queue a packet joins; `seed` feeds the hash.
    pub fn map(&self, seed: u64) -> QueueMap {
        QueueMap::new(self.queues, self.mapping, &self.bloom, seed)
    }
}

/// Everything the queue set keeps of one queue, in one cache line: its
/// FIFO (24 bytes), its place in the DRR round (32) and its place in the
/// length table (8). With many flows round robin serves a different queue
/// at each packet, and each of a queue's records is then a cache miss:
/// kept in three tables they were three misses (more when a record
/// straddled two lines), here one. Disciplines without the length table
/// leave its 8 bytes unused.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct QueueRecord {
    fifo: Fifo,
    member: Member,
    place: Place,
}

const _: () = assert!(std::mem::size_of::<QueueRecord>() == 64);

macro_rules! records_of {
    ($($t:ty => $field:ident),*) => {$(
        impl PerQueue<$t> for [QueueRecord] {
            #[inline(always)]
            fn of(&self, q: usize) -> &$t {
                &self[q].$field
            }
            #[inline(always)]
            fn of_mut(&mut self, q: usize) -> &mut $t {
                &mut self[q].$field
            }
        }
    )*};
}
records_of!(Fifo => fifo, Member => member, Place => place);

/// The packet pool and the records, seen together as the FIFOs and the
/// members of the DRR round ([`DrrRing::next`]).
struct Served<'a, P> {
    pool: &'a mut PooledQueues<P>,
    records: &'a mut [QueueRecord],
}

impl<P: Packet> Fifos<P> for Served<'_, P> {
    #[inline(always)]
    fn head(&self, q: usize) -> Option<&P> {
        self.pool.head(&self.records[q].fifo)
    }
    #[inline(always)]
    fn head_size(&self, q: usize) -> Option<u64> {
        self.records[q].fifo.head_size()
    }
    #[inline(always)]
    fn pop_front(&mut self, q: usize) -> Option<P> {
        self.pool.pop_front(&mut self.records[q].fifo)
    }
    #[inline(always)]
    fn is_empty(&self, q: usize) -> bool {
        self.records[q].fifo.is_empty()
    }
}

impl<P> PerQueue<Member> for Served<'_, P> {
    #[inline(always)]
    fn of(&self, q: usize) -> &Member {
        &self.records[q].member
    }
    #[inline(always)]
    fn of_mut(&mut self, q: usize) -> &mut Member {
        &mut self.records[q].member
    }
}

#[derive(Debug)]
pub struct DrrQueues<P> {
    map: QueueMap,
    /// One record per queue (FIFO, DRR member, length place).
    records: Vec<QueueRecord>,
    pool: PooledQueues<P>,
    round: DrrRing,
    lengths: Option<QueueLengths>,
    quantum: u64,
    weights: Option<FlowWeights>,
}

impl<P: Packet> DrrQueues<P> {
    /// `quantum` bytes per queue per round; `track_lengths` keeps the O(1)
    /// longest / shortest table.
    pub fn new(map: QueueMap, quantum: u64, track_lengths: bool) -> Self {
        let n = map.queue_count();
        Self {
            map,
            records: vec![Self::empty_queue(quantum); n],
            pool: PooledQueues::new(),
            round: DrrRing::default(),
            lengths: track_lengths.then(QueueLengths::new),
            quantum,
            weights: None,
        }
    }

    fn empty_queue(quantum: u64) -> QueueRecord {
        QueueRecord {
            fifo: Fifo::EMPTY,
            member: Member::idle(quantum),
            place: Place::default(),
        }
    }

    /// WDRR: a new flow's queue gets `quantum * weight(flow)` bytes, rounded
    /// to the byte (at least one: weights need not be integers).
    pub fn with_weights(mut self, weights: FlowWeights) -> Self {
        self.weights = Some(weights);
        self
    }

    /// The queue of an arriving packet, allocated if its flow is new.
    #[inline]
    pub fn classify(&mut self, key: u64) -> usize {
        let q = self.map.classify(key);
        if self.records.len() <= q {
            self.add_queues(q, key);
        }
        q
    }

    /// Queues up to `q` for the new flow `key` (once per flow).
    #[cold]
    fn add_queues(&mut self, q: usize, key: u64) {
        while self.records.len() <= q {
            let quantum = match &self.weights {
                Some(w) => ((self.quantum as f64 * w.get(key)).round() as u64).max(1),
                None => self.quantum,
            };
            self.records.push(Self::empty_queue(quantum));
        }
    }

    /// The queue flow `key` goes to, for `QueueDiscipline::queues_of`:
    /// none with one queue per flow.
    pub fn queues_of(&self, key: u64) -> Vec<u32> {
        self.map
            .queue_of(key)
            .map(|q| q as u32)
            .into_iter()
            .collect()
    }

    /// Number of queues that exist now.
    #[inline]
    pub fn count(&self) -> usize {
        self.records.len()
    }

    /// Write `packet` into queue `q` (from [`Self::classify`]).
    #[inline]
    pub fn push(&mut self, q: usize, packet: P) {
        self.map.enqueued(packet.flow_key());
        self.pool.push_back(&mut self.records[q].fifo, packet);
        if let Some(l) = &mut self.lengths {
            l.inc(&mut self.records[..], q);
        }
        self.round.activate(&mut self.records[..], q);
    }

    /// Take the packet at the front of queue `q` to discard it.
    #[inline]
    pub fn discard_front(&mut self, q: usize) -> Option<P> {
        let p = self.pool.pop_front(&mut self.records[q].fifo)?;
        self.discarded(q, &p);
        Some(p)
    }

    /// Take the packet at the tail of queue `q` to discard it.
    #[inline]
    pub fn discard_back(&mut self, q: usize) -> Option<P> {
        let p = self.pool.pop_back(&mut self.records[q].fifo)?;
        self.discarded(q, &p);
        Some(p)
    }

    #[inline]
    fn discarded(&mut self, q: usize, p: &P) {
        if let Some(l) = &mut self.lengths {
            l.dec(&mut self.records[..], q);
        }
        self.map.left(p.flow_key(), false);
        if self.records[q].fifo.is_empty() {
            // Digest 000, section 2.4 [REC]: a queue emptied by a discard
            // leaves the active list with its deficit reset.
            self.round.remove(&mut self.records[..], q);
        }
    }

    /// The next packet by DRR and its queue.
    #[inline]
    pub fn dequeue(&mut self) -> Option<(usize, P)> {
        let (q, p) = self.round.next(&mut Served {
            pool: &mut self.pool,
            records: &mut self.records,
        })?;
        if let Some(l) = &mut self.lengths {
            l.dec(&mut self.records[..], q);
        }
        self.map.left(p.flow_key(), true);
        Some((q, p))
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        self.pool.total()
    }

    /// Packets in queue `q`.
    #[inline]
    pub fn len(&self, q: usize) -> usize {
        self.records[q].fifo.len()
    }

    #[inline]
    pub fn is_empty(&self, q: usize) -> bool {
        self.records[q].fifo.is_empty()
    }

    /// Queue `q`'s size in the unit of `limit` (packets or bytes).
    #[inline]
    pub fn size_in(&self, q: usize, limit: Limit) -> u64 {
        let f = &self.records[q].fifo;
        match limit {
            Limit::Packets(_) => f.len() as u64,
            Limit::Bytes(_) => f.bytes(),
        }
    }

    /// The length table (present when built with `track_lengths`).
    #[inline]
    pub fn lengths(&self) -> &QueueLengths {
        self.lengths.as_ref().expect("built with track_lengths")
    }

    /// Whether queue `q` is non-empty and strictly shorter than every other
    /// non-empty queue (needs `track_lengths`).
    #[inline]
    pub fn is_strictly_shortest(&self, q: usize) -> bool {
        self.lengths().is_strictly_shortest(&self.records[..], q)
    }

    pub fn map(&self) -> &QueueMap {
        &self.map
    }

    pub fn next_wakeup(&self) -> Option<Time> {
        self.map.next_wakeup()
    }

    /// Whether the queue map runs a clock (the Bloom distributor).
    pub fn has_clock(&self) -> bool {
        matches!(self.map, QueueMap::Bloom(_))
    }

    /// Run the queue map's clock (Bloom recounting and rebalancing).
    #[inline]
    pub fn wakeup(&mut self, now: Time) {
        self.map.wakeup(now);
    }
}

/// Free space of a shared buffer in the unit of `limit`.
#[inline]
pub fn free_space(limit: Limit, backlog: Backlog) -> u64 {
    match limit {
        Limit::Packets(max) => max.saturating_sub(backlog.packets),
        Limit::Bytes(max) => max.saturating_sub(backlog.bytes),
    }
}

/// Whether a packet of `size` bytes could fit in the empty buffer (a push-out
/// discipline must not empty the buffer for a packet that never fits).
#[inline]
pub fn ever_fits(limit: Limit, size: u32) -> bool {
    limit.admits(Backlog::default(), size)
}

/// Writes, inside the `impl QueueDiscipline<P>` of a discipline of the DRR
/// family, the methods it hands unchanged to its [`DrrQueues`] (its field
/// `q`), by group:
/// - `lookup`: `backlog` and `queues_of`;
/// - `dequeue`: the next packet by DRR, the queue map's clock run first;
/// - `clock`: `has_clock`, `next_wakeup` and `wakeup`, for a discipline
///   whose only clock is its queue map's (the Bloom distributor's).
///
/// A macro rather than a blanket implementation: coherence forbids
/// implementing `QueueDiscipline` both for every type of a family trait
/// and for each other discipline.
macro_rules! delegate_to_drr_queues {
    ($($group:ident),+) => {
        $( $crate::blocks::drr_queues::delegate_to_drr_queues!(@$group); )+
    };
    (@lookup) => {
        fn backlog(&self) -> $crate::Backlog {
            self.q.backlog()
        }

        fn queues_of(&self, key: u64) -> Vec<u32> {
            self.q.queues_of(key)
        }
    };
    (@dequeue) => {
        fn dequeue(&mut self, now: $crate::Time, _verdicts: &mut $crate::Verdicts<P>) -> Option<P> {
            self.q.wakeup(now);
            self.q.dequeue().map(|(_, p)| p)
        }
    };
    (@clock) => {
        fn has_clock(&self) -> bool {
            self.q.has_clock()
        }

        fn next_wakeup(&self) -> Option<$crate::Time> {
            self.q.next_wakeup()
        }

        fn wakeup(&mut self, now: $crate::Time, _verdicts: &mut $crate::Verdicts<P>) {
            self.q.wakeup(now);
        }
    };
}

pub(crate) use delegate_to_drr_queues;
