//! The event list. Time is integer nanoseconds; events at the same time run
//! in the order they were scheduled, so a run is exactly repeatable.
//!
//! A calendar queue (Brown 1988) in its timing-wheel form: 2^13 slots of
//! 8192 ns cover the next 67 ms, where nearly every packet event falls;
//! later events (retransmission timers, flow starts) wait in a binary heap
//! and move onto the wheel as it turns. A slot is an unordered list, pushed
//! at its head (one cache line touched besides the new node), and sorted
//! by time alone when the wheel reaches it (`advance` says why that keeps
//! ties in scheduling order); a bitmap of non-empty slots lets sparse runs
//! skip idle time. Push and pop are O(1) amortized instead of O(log n).
//! The slot width was chosen by measurement (docs/performance.md): 1, 2 and
//! 4 µs slots cost more instructions on the 1,000-flow dumbbell and were no
//! faster.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::pool::{Bag, Pool};
use crate::Time;

/// What happens. The payload is an index into the arena the event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The link's transmitter finished a packet and may start the next.
    TxDone(u32),
    /// The packet at the head of the link's propagation pipe arrives.
    PipeHead(u32),
    /// The link's queue discipline asked to be woken (clocked disciplines).
    QdiscWake(u32),
    /// A TCP flow's retransmission timer (lazily cancelled).
    RtoTimer(u32),
    /// A TCP receiver's delayed-ACK timer.
    DelayedAck(u32),
    /// A flow starts (or an on-off source starts its next transfer).
    FlowStart(u32),
    /// A UDP source sends its next packet.
    UdpSend(u32),
    /// The next flow arrival of an arrival process.
    Arrival(u32),
    /// Snapshot counters: the measurement window opens.
    WarmupEnd,
    /// Take a time-series sample.
    Sample,
}

/// An event on the wheel. It needs no sequence number: a slot's events are
/// kept in the order they were scheduled (16 bytes instead of 24).
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    event: Event,
}

/// An event beyond the horizon: (time, scheduling order, event), so that
/// the heap gives ties in the order they were scheduled.
type FarEntry = (Time, u64, Event);

const SLOT_BITS: u32 = 13; // 8192 ns per slot
const WHEEL_BITS: u32 = 13; // 8192 slots: a 67 ms horizon
const SLOTS: usize = 1 << WHEEL_BITS;
const MASK: u64 = SLOTS as u64 - 1;

pub struct EventQueue {
    /// Unsorted events per slot; slot `k` holds times in
    /// `[k << SLOT_BITS, (k + 1) << SLOT_BITS)` modulo the wheel. The lists
    /// share one pool, so memory follows the most events ever pending.
    slots: Vec<Bag>,
    pool: Pool<Entry>,
    /// One bit per slot: non-empty.
    occupied: Vec<u64>,
    /// The slot being drained, sorted latest first (popped from the end).
    current: Vec<Entry>,
    /// Absolute slot number (time >> SLOT_BITS) of `current`.
    cursor: u64,
    /// Events beyond the wheel's horizon.
    far: BinaryHeap<Reverse<FarEntry>>,
    /// The slot of the earliest far event (`u64::MAX` if none), so that a
    /// turn of the wheel need not read the heap to know it has nothing due.
    far_slot: u64,
    on_wheel: usize,
    scheduled: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self {
            slots: vec![Bag::default(); SLOTS],
            pool: Pool::default(),
            occupied: vec![0; SLOTS / 64],
            current: Vec::new(),
            cursor: 0,
            far: BinaryHeap::new(),
            far_slot: u64::MAX,
            on_wheel: 0,
            scheduled: 0,
        }
    }
}

impl EventQueue {
    /// Schedule `event` at `time`, which must not be before the last popped
    /// event's time.
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.scheduled += 1;
        let slot = time >> SLOT_BITS;
        debug_assert!(slot >= self.cursor, "event scheduled in the past");
        if slot == self.cursor {
            self.insert_current(Entry { time, event });
        } else if slot - self.cursor < SLOTS as u64 {
            self.put_on_wheel(slot, Entry { time, event });
        } else {
            self.far.push(Reverse((time, self.scheduled, event)));
            self.far_slot = self.far_slot.min(slot);
        }
    }

    /// Into the slot being drained, kept sorted latest first, after (so
    /// popped after) any event at the same time: those were scheduled
    /// earlier. Such an event is mostly due soon, so it is shifted in from
    /// the end (the next to pop): cheaper than a binary search, which
    /// mispredicts.
    #[inline]
    fn insert_current(&mut self, entry: Entry) {
        self.current.push(entry);
        let v = &mut self.current[..];
        let mut i = v.len() - 1;
        while i > 0 && v[i - 1].time <= entry.time {
            v[i] = v[i - 1];
            i -= 1;
        }
        v[i] = entry;
    }

    #[inline(always)]
    fn put_on_wheel(&mut self, slot: u64, entry: Entry) {
        let i = (slot & MASK) as usize;
        self.pool.put(&mut self.slots[i], entry);
        self.occupied[i >> 6] |= 1 << (i & 63);
        self.on_wheel += 1;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        if self.current.is_empty() && !self.advance() {
            return None;
        }
        self.current.pop().map(|e| (e.time, e.event))
    }

    /// The event after the one `pop` just returned, when it is already at
    /// hand (in the slot being drained), to fetch its data early.
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        self.current.last().map(|e| e.event)
    }

    /// Turn the wheel to the next non-empty slot and sort it into `current`.
    fn advance(&mut self) -> bool {
        loop {
            if self.on_wheel == 0 {
                // Nothing near: jump to the earliest far event's slot. It,
                // and any other far event of that slot, land in `current`.
                if self.far.is_empty() {
                    return false;
                }
                self.cursor = self.far_slot;
                self.pull_far();
                return true;
            }
            let next = self.next_occupied();
            self.cursor = next;
            if self.far_slot - next < SLOTS as u64 {
                self.pull_far();
            }
            let i = (next & MASK) as usize;
            self.occupied[i >> 6] &= !(1 << (i & 63));
            let bag = std::mem::take(&mut self.slots[i]);
            self.on_wheel -= self.pool.take_all(bag, &mut self.current);
            if !self.current.is_empty() {
                // A bag gives its events latest scheduled first. Far events
                // reach a slot before any is scheduled into it directly
                // (it was beyond the horizon until the wheel turned), and in
                // heap order, so the scheduling order of events at one time
                // is kept in reverse, and a stable sort by time alone
                // orders them exactly as (time, order) would.
                self.current.sort_by_key(|e| Reverse(e.time));
                return true;
            }
        }
    }

    /// The absolute number of the next occupied slot after `cursor`.
    fn next_occupied(&self) -> u64 {
        let start = ((self.cursor + 1) & MASK) as usize;
        let words = self.occupied.len();
        let mut w = start >> 6;
        let mut bits = self.occupied[w] & (!0u64 << (start & 63));
        for _ in 0..=words {
            if bits != 0 {
                let i = (w << 6) + bits.trailing_zeros() as usize;
                let offset = (i as u64).wrapping_sub(start as u64) & MASK;
                return self.cursor + 1 + offset;
            }
            w = (w + 1) % words;
            bits = self.occupied[w];
        }
        unreachable!("on_wheel > 0 but no slot is occupied")
    }

    /// Move far events that now fall within the horizon onto the wheel (or
    /// into `current` if they belong to the cursor's slot).
    #[inline(never)]
    fn pull_far(&mut self) {
        self.far_slot = u64::MAX;
        while let Some(&Reverse((time, _, event))) = self.far.peek() {
            let slot = time >> SLOT_BITS;
            if slot - self.cursor >= SLOTS as u64 {
                self.far_slot = slot;
                break;
            }
            self.far.pop();
            if slot == self.cursor {
                self.insert_current(Entry { time, event });
            } else {
                self.put_on_wheel(slot, Entry { time, event });
            }
        }
    }

    pub fn scheduled(&self) -> u64 {
        self.scheduled
    }

    pub fn len(&self) -> usize {
        self.current.len() + self.on_wheel + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_qdisc::rng::Rng;

    /// The calendar gives exactly the order of a binary heap on (time,
    /// insertion order), for a random mix of near, same-slot and far events.
    #[test]
    fn matches_a_binary_heap() {
        compare_with_heap(
            3,
            &[(1, 0), (5, 20_000), (3, 70_000_000), (1, 2_000_000_000)],
            1,
        );
    }

    /// Sparse runs: the wheel is often empty and the list jumps from far
    /// event to far event, with events at the same time as the last one.
    #[test]
    fn matches_a_binary_heap_when_sparse() {
        compare_with_heap(4, &[(2, 0), (1, 5_000), (7, 3_000_000_000)], 1);
    }

    /// Many ties: times on a 1 ms grid, so events at one time reach a slot
    /// both from the far heap and directly, and the sort sees many ties.
    #[test]
    fn matches_a_binary_heap_with_ties() {
        compare_with_heap(5, &[(1, 0), (4, 60_000_000), (2, 200_000_000)], 1_000_000);
    }

    /// Drive both with random delays: `mix` is (weight, max delay in ns),
    /// and delays are multiples of `grain` ns.
    fn compare_with_heap(seed: u64, mix: &[(u64, u64)], grain: u64) {
        let total: u64 = mix.iter().map(|m| m.0).sum();
        let mut rng = Rng::new(seed);
        let mut cal = EventQueue::default();
        let mut heap = BinaryHeap::new();
        let mut order = 0u64;
        let mut now = 0u64;
        for step in 0..200_000u32 {
            let pushes = if step % 3 == 0 { 2 } else { 1 };
            for _ in 0..pushes {
                let mut pick = rng.below(total);
                let &(_, max) = mix
                    .iter()
                    .find(|m| {
                        pick < m.0 || {
                            pick -= m.0;
                            false
                        }
                    })
                    .unwrap();
                let dt = if max == 0 {
                    0
                } else {
                    rng.below(max / grain) * grain
                };
                // Distinct events, so that ties must pop in order.
                order += 1;
                let ev = Event::PipeHead(order as u32);
                cal.schedule(now + dt, ev);
                heap.push(Reverse((now + dt, order, ev)));
            }
            let a = cal.pop();
            let b = heap.pop().map(|Reverse((t, _, e))| (t, e));
            assert_eq!(a, b, "step {step}");
            now = a.unwrap().0;
        }
        while let Some(Reverse((t, _, e))) = heap.pop() {
            assert_eq!(cal.pop(), Some((t, e)));
        }
        assert_eq!(cal.pop(), None);
        assert!(cal.is_empty());
    }
}
