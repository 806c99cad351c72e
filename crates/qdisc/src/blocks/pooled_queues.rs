//! FIFO queues, each with its packet and byte count, and the totals, like
//! [`FlowQueues`]: the storage of the DRR family
//! ([`crate::blocks::DrrQueues`]), where queues are many and most are short.
//!
//! The queues are linked lists through one shared pool of packet slots, not
//! one ring buffer per queue: a queue's head, tail and counts fit in 24
//! bytes (a [`Fifo`], which the caller keeps, [`crate::blocks::PerQueue`]),
//! and a packet goes into the slot the last packet to leave freed (the free
//! slots form a stack), so the packets of a buffer of B packets live in the
//! B slots most recently used, whatever the number of queues. With one ring
//! per flow, each flow's packets were in its own allocation: at 1,000 flows
//! and more, nearly every enqueue and dequeue missed the cache there. The
//! pool grows to the peak backlog and is kept.
//!
//! A few long queues are better served by [`FlowQueues`]' rings: a list
//! costs more instructions per packet than a ring (CoDel's single queue
//! measured about a third slower on the pool).
//!
//! [`FlowQueues`]: crate::blocks::FlowQueues

use crate::{Backlog, Packet};

/// No slot.
const NIL: u32 = u32::MAX;

/// One queue: its first and last slots, and its counts (24 bytes). The
/// caller keeps one per queue ([`crate::blocks::PerQueue`]) and hands it
/// to the pool's operations.
#[derive(Clone, Copy, Debug)]
pub struct Fifo {
    head: u32,
    tail: u32,
    len: u32,
    /// The head packet's size (in what was padding): DRR tests a queue's
    /// deficit against it, and a queue whose visit ends (nearly every
    /// visit, with a quantum of one packet) is then sent to the back
    /// without its head slot being read, a cache miss with many queues.
    head_size: u32,
    bytes: u64,
}

impl Fifo {
    pub const EMPTY: Self = Self {
        head: NIL,
        tail: NIL,
        len: 0,
        head_size: 0,
        bytes: 0,
    };

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The size of the packet at the head, if any.
    #[inline]
    pub fn head_size(&self) -> Option<u64> {
        (self.head != NIL).then_some(self.head_size as u64)
    }
}

impl Default for Fifo {
    fn default() -> Self {
        Self::EMPTY
    }
}

/// A slot of the pool: a packet and its neighbours in its queue, or a free
/// slot (no packet) whose `next` is the next free slot.
///
/// `prev` is kept for the tail's sake (`pop_back`): it is exact for every
/// packet but the head of its queue, whose `prev` is never read (a pop from
/// the front does not write the new head's slot).
///
/// A slot is a cache line of its own: packed, half of the simulator's
/// 48-byte slots straddled two lines, and serving a packet then missed the
/// cache twice (the 1,000-flow QSDRR dumbbell: 0.5 fewer L1 misses per
/// packet aligned; the links in a table apart from the packets measured
/// worse, 0.6 more).
#[derive(Debug)]
#[repr(align(64))]
struct Slot<P> {
    packet: Option<P>,
    next: u32,
    prev: u32,
    /// The size of the packet in `next` (when this slot is queued and not
    /// the tail): the new head's size, known when this one is popped
    /// without reading the new head's slot.
    next_size: u32,
}

/// The pool of packet slots and the totals; each queue's [`Fifo`] is the
/// caller's.
#[derive(Debug)]
pub struct PooledQueues<P> {
    slots: Vec<Slot<P>>,
    /// The most recently freed slot (top of the free stack).
    free: u32,
    total: Backlog,
}

impl<P: Packet> Default for PooledQueues<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Packet> PooledQueues<P> {
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            free: NIL,
            total: Backlog::default(),
        }
    }

    #[inline]
    pub fn total(&self) -> Backlog {
        self.total
    }

    /// The packet at the head of queue `f`.
    #[inline]
    pub fn head(&self, f: &Fifo) -> Option<&P> {
        self.packet(f.head)
    }

    /// The packet at the tail of queue `f`.
    #[inline]
    pub fn tail(&self, f: &Fifo) -> Option<&P> {
        self.packet(f.tail)
    }

    #[inline]
    fn packet(&self, s: u32) -> Option<&P> {
        if s == NIL {
            None
        } else {
            self.slots[s as usize].packet.as_ref()
        }
    }

    #[inline]
    pub fn push_back(&mut self, f: &mut Fifo, packet: P) {
        let size = packet.size() as u64;
        self.total.bytes += size;
        self.total.packets += 1;
        let tail = f.tail;
        f.bytes += size;
        f.len += 1;
        let s = if self.free == NIL {
            self.slots.push(Slot {
                packet: Some(packet),
                next: NIL,
                prev: tail,
                next_size: 0,
            });
            (self.slots.len() - 1) as u32
        } else {
            let s = self.free;
            let slot = &mut self.slots[s as usize];
            self.free = slot.next;
            *slot = Slot {
                packet: Some(packet),
                next: NIL,
                prev: tail,
                next_size: 0,
            };
            s
        };
        f.tail = s;
        if tail == NIL {
            f.head = s;
            f.head_size = size as u32;
        } else {
            let before = &mut self.slots[tail as usize];
            before.next = s;
            before.next_size = size as u32;
        }
    }

    #[inline]
    pub fn pop_front(&mut self, f: &mut Fifo) -> Option<P> {
        let s = f.head;
        if s == NIL {
            return None;
        }
        let slot = &self.slots[s as usize];
        let next = slot.next;
        f.head = next;
        f.head_size = slot.next_size;
        if next == NIL {
            f.tail = NIL;
        }
        let packet = self.release(s);
        self.took(f, &packet);
        Some(packet)
    }

    #[inline]
    pub fn pop_back(&mut self, f: &mut Fifo) -> Option<P> {
        let s = f.tail;
        if s == NIL {
            return None;
        }
        if s == f.head {
            f.head = NIL;
            f.tail = NIL;
        } else {
            let prev = self.slots[s as usize].prev;
            f.tail = prev;
            self.slots[prev as usize].next = NIL;
        }
        let packet = self.release(s);
        self.took(f, &packet);
        Some(packet)
    }

    /// Take the packet out of slot `s` and put the slot on the free stack.
    #[inline]
    fn release(&mut self, s: u32) -> P {
        let slot = &mut self.slots[s as usize];
        slot.next = self.free;
        self.free = s;
        slot.packet.take().expect("a queued slot holds a packet")
    }

    #[inline]
    fn took(&mut self, f: &mut Fifo, packet: &P) {
        let size = packet.size() as u64;
        f.len -= 1;
        f.bytes -= size;
        self.total.bytes -= size;
        self.total.packets -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::testkit::TestPacket;
    use std::collections::VecDeque;

    /// Against one `VecDeque` per queue, on random pushes and pops at both
    /// ends: the same packets come out, and the counts agree.
    #[test]
    fn matches_a_deque_per_queue() {
        let mut rng = Rng::new(5);
        let mut q = PooledQueues::new();
        let mut f = vec![Fifo::EMPTY; 3];
        let mut model: Vec<VecDeque<TestPacket>> = vec![VecDeque::new(); 3];
        for i in 0..20_000u64 {
            if i % 1000 == 0 {
                f.push(Fifo::EMPTY);
                model.push(VecDeque::new());
            }
            let n = rng.below(model.len() as u64) as usize;
            match rng.below(5) {
                0 | 1 => {
                    let p = TestPacket::new(n as u64, i, 100 + rng.below(1400) as u32);
                    q.push_back(&mut f[n], p);
                    model[n].push_back(p);
                }
                2 | 3 => assert_eq!(q.pop_front(&mut f[n]), model[n].pop_front()),
                _ => assert_eq!(q.pop_back(&mut f[n]), model[n].pop_back()),
            }
            assert_eq!(q.head(&f[n]), model[n].front());
            assert_eq!(f[n].head_size(), model[n].front().map(|p| p.size() as u64));
            assert_eq!(q.tail(&f[n]), model[n].back());
            assert_eq!(f[n].len(), model[n].len());
            assert_eq!(f[n].is_empty(), model[n].is_empty());
            let bytes: u64 = model[n].iter().map(|p| p.size() as u64).sum();
            assert_eq!(f[n].bytes(), bytes);
        }
        let packets: usize = model.iter().map(VecDeque::len).sum();
        assert_eq!(q.total().packets, packets as u64);
        // The pool holds no more slots than the peak backlog.
        assert!(q.slots.len() <= 20_000);
    }
}
