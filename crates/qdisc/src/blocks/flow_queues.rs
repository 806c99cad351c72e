//! A set of FIFO queues, indexed by number, each with its packet and byte
//! count, and the totals: one ring buffer per queue. The storage of the
//! multi-queue disciplines but the DRR family (which keeps its many short
//! queues in one pool, [`crate::blocks::PooledQueues`]), and of CoDel and
//! PIE's single queue.

use std::collections::VecDeque;

use crate::{Backlog, Packet};

/// What a scheduler ([`crate::DrrRound`]) needs of a set of FIFOs.
pub trait Fifos<P> {
    fn head(&self, q: usize) -> Option<&P>;
    /// The size in bytes of the packet at the head of queue `q`: DRR's test
    /// of a queue's deficit, which a FIFO that keeps it beside its counts
    /// answers without reading the packet.
    #[inline]
    fn head_size(&self, q: usize) -> Option<u64>
    where
        P: Packet,
    {
        self.head(q).map(|p| p.size() as u64)
    }
    fn pop_front(&mut self, q: usize) -> Option<P>;
    fn is_empty(&self, q: usize) -> bool;
}

#[derive(Debug)]
pub struct FlowQueues<P> {
    queues: Vec<VecDeque<P>>,
    bytes: Vec<u64>,
    total: Backlog,
}

impl<P: Packet> FlowQueues<P> {
    pub fn new(count: usize) -> Self {
        Self {
            queues: (0..count).map(|_| VecDeque::new()).collect(),
            bytes: vec![0; count],
            total: Backlog::default(),
        }
    }

    pub fn count(&self) -> usize {
        self.queues.len()
    }

    /// Add one empty queue (per-flow queueing allocates a queue when a new
    /// flow appears); returns its number.
    pub fn add_queue(&mut self) -> usize {
        self.queues.push(VecDeque::new());
        self.bytes.push(0);
        self.queues.len() - 1
    }

    /// The packet at the tail of queue `q`.
    #[inline]
    pub fn tail(&self, q: usize) -> Option<&P> {
        self.queues[q].back()
    }

    #[inline]
    pub fn total(&self) -> Backlog {
        self.total
    }

    #[inline]
    pub fn len(&self, q: usize) -> usize {
        self.queues[q].len()
    }

    #[inline]
    pub fn is_empty(&self, q: usize) -> bool {
        self.queues[q].is_empty()
    }

    #[inline]
    pub fn bytes(&self, q: usize) -> u64 {
        self.bytes[q]
    }

    #[inline]
    pub fn head(&self, q: usize) -> Option<&P> {
        self.queues[q].front()
    }

    #[inline]
    pub fn push_back(&mut self, q: usize, packet: P) {
        let size = packet.size() as u64;
        self.bytes[q] += size;
        self.total.bytes += size;
        self.total.packets += 1;
        self.queues[q].push_back(packet);
    }

    #[inline]
    pub fn pop_front(&mut self, q: usize) -> Option<P> {
        let packet = self.queues[q].pop_front()?;
        self.took(q, &packet);
        Some(packet)
    }

    #[inline]
    pub fn pop_back(&mut self, q: usize) -> Option<P> {
        let packet = self.queues[q].pop_back()?;
        self.took(q, &packet);
        Some(packet)
    }

    /// Remove the packet at `index` of queue `q` (CHOKe's random victim).
    pub fn remove(&mut self, q: usize, index: usize) -> Option<P> {
        let packet = self.queues[q].remove(index)?;
        self.took(q, &packet);
        Some(packet)
    }

    pub fn get(&self, q: usize, index: usize) -> Option<&P> {
        self.queues[q].get(index)
    }

    #[inline]
    fn took(&mut self, q: usize, packet: &P) {
        let size = packet.size() as u64;
        self.bytes[q] -= size;
        self.total.bytes -= size;
        self.total.packets -= 1;
    }
}

impl<P: Packet> Fifos<P> for FlowQueues<P> {
    #[inline]
    fn head(&self, q: usize) -> Option<&P> {
        FlowQueues::head(self, q)
    }
    #[inline]
    fn pop_front(&mut self, q: usize) -> Option<P> {
        FlowQueues::pop_front(self, q)
    }
    #[inline]
    fn is_empty(&self, q: usize) -> bool {
        FlowQueues::is_empty(self, q)
    }
}
