//! The storage and scheduler every multi-queue discipline of seed 000 shares:
//! a [`QueueMap`] (per-flow queues, buckets or Bloom distribution), the
//! FIFOs ([`PooledQueues`]), the DRR round ([`DrrRound`]) and, for the
//! disciplines that look for the longest queue, the O(1) length table
//! ([`QueueLengths`]). The discard policies (LQD, TDRR, QSDRR, DTDRR,
//! DSDRR) and WDRR differ only in what they do around it.
//!
//! The report states that its discard policies are not specific to DRR
//! (digest 000, section 2.4): the scheduler here is DRR throughout.

use crate::blocks::{DrrRound, FlowWeights, PooledQueues, QueueLengths, QueueMap};
use crate::{Backlog, Limit, Packet, Time};

#[derive(Debug)]
pub struct DrrQueues<P> {
    map: QueueMap,
    queues: PooledQueues<P>,
    round: DrrRound,
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
            queues: PooledQueues::new(n),
            round: DrrRound::new(n, quantum),
            lengths: track_lengths.then(|| QueueLengths::new(n)),
            quantum,
            weights: None,
        }
    }

    /// WDRR: a new flow's queue gets `quantum * weight(flow)` bytes.
    pub fn with_weights(mut self, weights: FlowWeights) -> Self {
        self.weights = Some(weights);
        self
    }

    /// The queue of an arriving packet, allocated if its flow is new.
    #[inline]
    pub fn classify(&mut self, key: u64) -> usize {
        let q = self.map.classify(key);
        if self.queues.count() <= q {
            self.add_queues(q, key);
        }
        q
    }

    /// Queues up to `q` for the new flow `key` (once per flow).
    #[cold]
    fn add_queues(&mut self, q: usize, key: u64) {
        while self.queues.count() <= q {
            let w = self.weights.as_ref().map_or(1, |w| w.get(key)) as u64;
            self.queues.add_queue();
            self.round.add_queue(self.quantum * w);
            if let Some(l) = &mut self.lengths {
                l.add_queue();
            }
        }
    }

    /// Number of queues that exist now.
    #[inline]
    pub fn count(&self) -> usize {
        self.queues.count()
    }

    /// Write `packet` into queue `q` (from [`Self::classify`]).
    #[inline]
    pub fn push(&mut self, q: usize, packet: P) {
        self.map.enqueued(packet.flow_key());
        self.queues.push_back(q, packet);
        if let Some(l) = &mut self.lengths {
            l.inc(q);
        }
        self.round.activate(q);
    }

    /// Take the packet at the front of queue `q` to discard it.
    #[inline]
    pub fn discard_front(&mut self, q: usize) -> Option<P> {
        let p = self.queues.pop_front(q)?;
        self.discarded(q, &p);
        Some(p)
    }

    /// Take the packet at the tail of queue `q` to discard it.
    #[inline]
    pub fn discard_back(&mut self, q: usize) -> Option<P> {
        let p = self.queues.pop_back(q)?;
        self.discarded(q, &p);
        Some(p)
    }

    #[inline]
    fn discarded(&mut self, q: usize, p: &P) {
        if let Some(l) = &mut self.lengths {
            l.dec(q);
        }
        self.map.left(p.flow_key(), false);
        if self.queues.is_empty(q) {
            // Digest 000, section 2.4 [REC]: a queue emptied by a discard
            // leaves the active list with its deficit reset.
            self.round.remove(q);
        }
    }

    /// The next packet by DRR and its queue.
    #[inline]
    pub fn dequeue(&mut self) -> Option<(usize, P)> {
        let (q, p) = self.round.next(&mut self.queues)?;
        if let Some(l) = &mut self.lengths {
            l.dec(q);
        }
        self.map.left(p.flow_key(), true);
        Some((q, p))
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        self.queues.total()
    }

    /// Packets in queue `q`.
    #[inline]
    pub fn len(&self, q: usize) -> usize {
        self.queues.len(q)
    }

    #[inline]
    pub fn is_empty(&self, q: usize) -> bool {
        self.queues.is_empty(q)
    }

    /// Queue `q`'s size in the unit of `limit` (packets or bytes).
    #[inline]
    pub fn size_in(&self, q: usize, limit: Limit) -> u64 {
        match limit {
            Limit::Packets(_) => self.queues.len(q) as u64,
            Limit::Bytes(_) => self.queues.bytes(q),
        }
    }

    /// The length table (present when built with `track_lengths`).
    #[inline]
    pub fn lengths(&self) -> &QueueLengths {
        self.lengths.as_ref().expect("built with track_lengths")
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
