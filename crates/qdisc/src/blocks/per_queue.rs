//! Where a block finds its part of each queue's state.
//!
//! The FIFO ([`PooledQueues`]), the DRR round ([`DrrRing`]) and the length
//! table ([`QueueLengths`]) each keep a small record per queue. Used alone,
//! a block keeps its records in a vector of their own (`[T]`). The DRR
//! queue set ([`DrrQueues`]) keeps the three records of a queue side by
//! side in one cache line instead, so that serving a queue (its FIFO, its
//! deficit, its length) touches one line, not three: with many flows,
//! round robin serves a different queue at every packet and each of those
//! lines is a cache miss.
//!
//! [`PooledQueues`]: crate::blocks::PooledQueues
//! [`DrrRing`]: crate::blocks::DrrRing
//! [`QueueLengths`]: crate::blocks::QueueLengths
//! [`DrrQueues`]: crate::blocks::DrrQueues

/// Records of type `T`, one per queue, indexed by queue number.
pub trait PerQueue<T> {
    fn of(&self, q: usize) -> &T;
    fn of_mut(&mut self, q: usize) -> &mut T;
}

/// A block's records in a table of their own.
impl<T> PerQueue<T> for [T] {
    #[inline(always)]
    fn of(&self, q: usize) -> &T {
        &self[q]
    }
    #[inline(always)]
    fn of_mut(&mut self, q: usize) -> &mut T {
        &mut self[q]
    }
}
