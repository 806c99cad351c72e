//! The event list. Time is integer nanoseconds; events at the same time run
//! in the order of their key (kind, then component: [`Event`]'s order),
//! whatever the order they were scheduled in. The order of ties is then part
//! of the model: a run is exactly repeatable, and an acceleration that
//! schedules an event sooner or later than the reference would, or not at
//! all, cannot change the order of the others.
//!
//! A calendar queue (Brown 1988) in its timing-wheel form: 2^13 slots of
//! 8192 ns cover the next 67 ms, where nearly every packet event falls. A
//! slot is an unordered list, pushed at its head (one cache line touched
//! besides the new node), and sorted by time and key when the wheel reaches
//! it; a bitmap of non-empty slots lets sparse runs skip idle time. Later
//! events (retransmission timers, flow starts) wait on a second wheel of
//! 2^13 coarse slots of 2.1 ms (17 s), each spread onto the fine wheel just
//! before anything can be scheduled into it directly; only events beyond
//! 17 s wait in a binary heap. Push and pop are O(1) amortized instead of
//! O(log n).
//! The slot width was chosen by measurement (docs/performance.md): 1, 2 and
//! 4 µs slots cost more instructions on the 1,000-flow dumbbell and were no
//! faster.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::pool::{Bag, List, Pool, Walk};
use crate::scenario::Ties;
use crate::Time;

/// What happens. The payload is an index into the arena the event is about.
///
/// Events at one nanosecond run by kind, in the order of the variants: the
/// measurement window opens and samples are taken first, so that they see
/// the state at the end of the nanosecond before; then transmitters that
/// free up start their next packet, before any arrival at their link (a
/// FIFO's departure at the nanosecond of an arrival leaves room for it);
/// then disciplines' timers; then packets arrive, at links and hosts; then
/// hosts' timers and sources fire (an ACK arriving at its sender's
/// retransmission deadline is taken in first; a transfer due to start when
/// its flow stops does not). Events of one kind run in the order of the
/// scenario's `ties` (`tie_order`): by default one drawn afresh for each
/// nanosecond from their components' numbers, since a fixed order would
/// give the lowest-numbered link every tie at a shared queue (two packets
/// arriving at one nanosecond, one dropped), a bias that equal delays would
/// make systematic; or that fixed order, ns-2's, to reproduce it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Snapshot counters: the measurement window opens.
    WarmupEnd,
    /// Take a time-series sample.
    Sample,
    /// The link's transmitter finished a packet and may start the next.
    TxDone(u32),
    /// The link's queue discipline asked to be woken (clocked disciplines).
    QdiscWake(u32),
    /// The packet at the head of the link's propagation pipe arrives.
    PipeHead(u32),
    /// A TCP receiver's delayed-ACK timer.
    DelayedAck(u32),
    /// A TCP flow's retransmission timer (lazily cancelled).
    RtoTimer(u32),
    /// A TCP flow's application stops writing (its group's `stop`).
    FlowStop(u32),
    /// A flow starts (or an on-off source starts its next transfer).
    FlowStart(u32),
    /// A UDP source sends its next packet.
    UdpSend(u32),
    /// The next flow arrival of an arrival process.
    Arrival(u32),
    /// A change to the packets in flight made ahead of its time falls due
    /// (`Ledger::fall_due`): the change, as an `i32`'s bits. Only the
    /// accelerations schedule it.
    InFlight(u32),
}

impl Event {
    /// The kinds' names, in the order of `kind`.
    pub const KINDS: [&'static str; 12] = [
        "WarmupEnd",
        "Sample",
        "TxDone",
        "QdiscWake",
        "PipeHead",
        "DelayedAck",
        "RtoTimer",
        "FlowStop",
        "FlowStart",
        "UdpSend",
        "Arrival",
        "InFlight",
    ];

    /// The event's kind, as an index into `KINDS`.
    pub fn kind(self) -> usize {
        self.split().0 as usize
    }

    /// Its kind and payload.
    #[inline(always)]
    fn split(self) -> (u64, u32) {
        match self {
            Event::WarmupEnd => (0, 0),
            Event::Sample => (1, 0),
            Event::TxDone(x) => (2, x),
            Event::QdiscWake(x) => (3, x),
            Event::PipeHead(x) => (4, x),
            Event::DelayedAck(x) => (5, x),
            Event::RtoTimer(x) => (6, x),
            Event::FlowStop(x) => (7, x),
            Event::FlowStart(x) => (8, x),
            Event::UdpSend(x) => (9, x),
            Event::Arrival(x) => (10, x),
            Event::InFlight(x) => (11, x),
        }
    }

    /// Its place among the events at `time`, as a number (`KEY_BITS`
    /// bits): its kind, then its payload's `tie_order` there.
    #[inline(always)]
    pub fn key(self, time: Time, ties: Ties) -> u64 {
        let (kind, payload) = self.split();
        kind << 32 | tie_order(ties, payload, time) as u64
    }
}

/// The order of events of one kind at `time`, a bijection of their payloads
/// (components' numbers): `hashed_order`, or the numbers themselves.
#[inline(always)]
pub fn tie_order(ties: Ties, payload: u32, time: Time) -> u32 {
    match ties {
        Ties::Hashed => hashed_order(payload, time),
        Ties::Numbered => payload,
    }
}

/// An order that looks random and changes with the time (lowbias32, an
/// invertible integer hash by Chris Wellons, after the time's own hash is
/// added). Reproducible, so any acceleration can order ties as the
/// reference does; fair, so that no component wins ties for good.
#[inline(always)]
fn hashed_order(payload: u32, time: Time) -> u32 {
    mix32(payload.wrapping_add(mix32(time as u32 ^ (time >> 32) as u32)))
}

#[inline(always)]
fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ x >> 16
}

/// Bits of `Event::key`.
const KEY_BITS: u32 = 36;

/// An event on a wheel or in the far heap, with its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    time: Time,
    event: Event,
}

impl Entry {
    #[inline(always)]
    fn key(&self, ties: Ties) -> u64 {
        self.event.key(self.time, ties)
    }
}

/// An event in the far heap, ordered by time alone: the heap's order of
/// ties is never seen, since `pull_far` takes all the events of a time at
/// once and each is put in its place by key where it lands.
#[derive(Clone, Copy, Debug)]
struct Far(Entry);

impl Ord for Far {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.time.cmp(&other.0.time)
    }
}

impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Far {
    fn eq(&self, other: &Self) -> bool {
        self.0.time == other.0.time
    }
}

impl Eq for Far {}

const SLOT_BITS: u32 = 13; // 8192 ns per slot
const WHEEL_BITS: u32 = 13; // 8192 slots: a 67 ms horizon
const SLOTS: u64 = 1 << WHEEL_BITS;
const MASK: u64 = SLOTS - 1;
const SPAN_BITS: u32 = 8; // a coarse slot spans 256 slots (2.1 ms)
const SPAN: u64 = 1 << SPAN_BITS;
const COARSE_SHIFT: u32 = SLOT_BITS + SPAN_BITS;
const COARSE_BITS: u32 = 13; // 8192 coarse slots: a 17 s horizon
const COARSE_SLOTS: u64 = 1 << COARSE_BITS;
/// No slot.
const NONE: u64 = u64::MAX;
/// Fine slots (524 µs) before a coarse slot opens from which its list is
/// walked (`coarse_ahead`).
const COARSE_WALK_LEAD: u64 = 64;
/// `current` is this short when the next slot is taken (`take_following`):
/// the deepest event `peek` is asked for, and one more.
const LOOKAHEAD: usize = 5;

/// The last coarse slot spread onto the fine wheel when the cursor is at
/// slot `cursor`: the fine wheel takes a coarse slot once the first of its
/// slots is less than `SLOTS - SPAN` ahead, so that all of it fits.
#[inline(always)]
fn opened(cursor: u64) -> u64 {
    (cursor + SLOTS - SPAN - 1) >> SPAN_BITS
}

/// The first cursor at which coarse slot `c` is open (the inverse of
/// `opened`).
fn opening(c: u64) -> u64 {
    ((c + 1) << SPAN_BITS) + 1 - SLOTS
}

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
    /// The next slot's events, sorted as `current` is, taken off the wheel
    /// before `current` drains (if `walk_ahead`) so that `peek` sees past
    /// the slot's end: otherwise the first events of every slot (a slot
    /// holds some 17 at 50,000 flows) had nothing fetched ahead.
    following: Vec<Entry>,
    /// The slot of `following` (`NONE` if it is not taken).
    following_slot: u64,
    /// `opened(cursor)`: coarse slots up to it are on the fine wheel.
    open: u64,
    /// Coarse slots `open + 1 ..= open + COARSE_SLOTS` (modulo the wheel),
    /// each in scheduling order, in the same pool.
    coarse: Vec<List>,
    coarse_occupied: Vec<u64>,
    /// The earliest non-empty coarse slot (`u64::MAX` if none).
    coarse_first: u64,
    on_coarse: usize,
    /// Events beyond the coarse wheel's horizon.
    far: BinaryHeap<Reverse<Far>>,
    /// The coarse slot of the earliest far event (`u64::MAX` if none), so
    /// that a turn of the wheel need not read the heap to know it has
    /// nothing due.
    far_coarse: u64,
    on_wheel: usize,
    /// The next slot's bag, walked while `current` drains (if
    /// `walk_ahead`), by turns with the bag after it (`ahead_after`): a
    /// node every other pop each. A node is found through the one before,
    /// fetched the step before; one event (some 450 ns at 50,000 flows)
    /// was often too short for it to arrive, two are not, and each bag
    /// still gets as many steps, over two slots' events.
    ahead: Walk,
    /// The bag of the slot after `ahead`'s, and that slot (`NONE`: none).
    ahead_after: Walk,
    ahead_after_slot: u64,
    /// Which of the two walks steps at the next pop.
    step_after: bool,
    /// The earliest coarse slot's list, walked a node per pop (if
    /// `walk_ahead`) in the last `COARSE_WALK_LEAD` slots before it opens:
    /// spread onto the fine wheel in one go, each node found through the
    /// one before, its events were a miss after another (at 50,000 flows,
    /// a tenth of the event loop's time). Walked from the moment the slot
    /// became the earliest, most of a slot's few hundred events had left
    /// the caches again by its opening, thousands of events later.
    coarse_ahead: Walk,
    /// The cursor from which `coarse_ahead` is walked.
    coarse_walk_from: u64,
    walk_ahead: bool,
    /// The order of events of one kind at one time.
    ties: Ties,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self {
            slots: vec![Bag::default(); SLOTS as usize],
            pool: Pool::default(),
            occupied: vec![0; SLOTS as usize / 64],
            current: Vec::new(),
            cursor: 0,
            following: Vec::new(),
            following_slot: NONE,
            open: opened(0),
            coarse: vec![List::default(); COARSE_SLOTS as usize],
            coarse_occupied: vec![0; COARSE_SLOTS as usize / 64],
            coarse_first: u64::MAX,
            on_coarse: 0,
            far: BinaryHeap::new(),
            far_coarse: u64::MAX,
            on_wheel: 0,
            ahead: Walk::default(),
            ahead_after: Walk::default(),
            ahead_after_slot: NONE,
            step_after: false,
            coarse_ahead: Walk::default(),
            coarse_walk_from: NONE,
            walk_ahead: false,
            ties: Ties::default(),
        }
    }
}

impl EventQueue {
    /// An empty calendar whose events of one kind at one time run in the
    /// order `ties`.
    pub fn new(ties: Ties) -> Self {
        Self {
            ties,
            ..Self::default()
        }
    }

    /// Schedule `event` at `time`, which must not be before the last popped
    /// event's time.
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: Event) {
        debug_assert!(
            time >> SLOT_BITS >= self.cursor,
            "event scheduled in the past"
        );
        self.place(time, event);
    }

    /// Into the slot being drained, onto the fine wheel if its coarse slot
    /// is open, or further.
    #[inline(always)]
    fn place(&mut self, time: Time, event: Event) {
        let slot = time >> SLOT_BITS;
        if slot == self.cursor {
            insert_sorted(&mut self.current, Entry { time, event }, self.ties);
        } else if time >> COARSE_SHIFT <= self.open {
            self.put_on_wheel(slot, Entry { time, event });
        } else {
            self.place_later(time, event);
        }
    }

    /// Onto the coarse wheel if within its horizon, else into the heap.
    #[inline(never)]
    fn place_later(&mut self, time: Time, event: Event) {
        let c = time >> COARSE_SHIFT;
        if c <= self.open + COARSE_SLOTS {
            let i = (c & (COARSE_SLOTS - 1)) as usize;
            self.pool
                .push_back(&mut self.coarse[i], Entry { time, event });
            self.coarse_occupied[i >> 6] |= 1 << (i & 63);
            if c < self.coarse_first {
                self.coarse_first = c;
                self.walk_coarse_first();
            }
            self.on_coarse += 1;
        } else {
            self.far.push(Reverse(Far(Entry { time, event })));
            self.far_coarse = self.far_coarse.min(c);
        }
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
        if self.walk_ahead {
            self.step_after = !self.step_after;
            if self.step_after {
                self.pool.step_ahead(&mut self.ahead_after);
            } else {
                self.pool.step_ahead(&mut self.ahead);
            }
            if self.cursor >= self.coarse_walk_from {
                self.pool.step_ahead(&mut self.coarse_ahead);
            }
            if self.current.len() <= LOOKAHEAD && self.following_slot == NONE {
                self.take_following();
            }
        }
        self.current.pop().map(|e| (e.time, e.event))
    }

    /// Take the next non-empty slot off the wheel into `following`, sorted,
    /// if the wheel gets there without opening a coarse slot or pulling far
    /// events (which could only place events far past it, but is left to
    /// `advance`).
    #[inline(never)]
    fn take_following(&mut self) {
        if self.on_wheel == 0 {
            return;
        }
        let n = next_set(&self.occupied, self.cursor);
        let open = opened(n);
        if self.coarse_first <= open || self.far_coarse <= open + COARSE_SLOTS {
            return;
        }
        let bag = self.lift_slot(n);
        self.on_wheel -= self.pool.take_all(bag, &mut self.following);
        sort_slot(&mut self.following, n, self.ties);
        self.following_slot = n;
        self.walk_next_slot(n);
    }

    /// Events scheduled into slot `slot` after it was taken off the wheel
    /// (`take_following`) went into its bag: into `current`, which holds
    /// the rest of the slot, after those at the same time. (A check at
    /// each `schedule` for the slot taken cost every run 1% of its
    /// instructions; events come here a few times a window.)
    fn take_late_arrivals(&mut self, slot: u64) {
        let i = (slot & MASK) as usize;
        if self.occupied[i >> 6] & (1 << (i & 63)) == 0 {
            return;
        }
        let bag = self.lift_slot(slot);
        let mut late = std::mem::take(&mut self.following);
        self.on_wheel -= self.pool.take_all(bag, &mut late);
        for entry in late.drain(..) {
            insert_sorted(&mut self.current, entry, self.ties);
        }
        self.following = late;
    }

    /// Take slot `slot`'s bag off the wheel (its events are still counted
    /// in `on_wheel`).
    #[inline(always)]
    fn lift_slot(&mut self, slot: u64) -> Bag {
        let i = (slot & MASK) as usize;
        self.occupied[i >> 6] &= !(1 << (i & 63));
        std::mem::take(&mut self.slots[i])
    }

    /// Walk the bags of the first two non-empty slots after `slot`
    /// (`ahead`, `ahead_after`), going on with the walk of the first if it
    /// was the second's.
    #[inline(always)]
    fn walk_next_slot(&mut self, slot: u64) {
        if !self.walk_ahead || self.on_wheel == 0 {
            (self.ahead, self.ahead_after) = (Walk::default(), Walk::default());
            self.ahead_after_slot = NONE;
            return;
        }
        let n = next_set(&self.occupied, slot);
        self.ahead = if n == self.ahead_after_slot {
            self.ahead_after
        } else {
            self.pool.walk(&self.slots[(n & MASK) as usize])
        };
        // With no other slot occupied this is `n` a turn of the wheel on:
        // its bag again, walked in vain (a walk only reads).
        let after = next_set(&self.occupied, n);
        self.ahead_after = self.pool.walk(&self.slots[(after & MASK) as usize]);
        self.ahead_after_slot = after;
    }

    /// The event `k` places after the one `pop` just returned (0: the
    /// next), when it is already at hand (in the slot being drained), to
    /// fetch its data early.
    #[inline]
    pub fn peek(&self, k: usize) -> Option<Event> {
        match self.current.len().checked_sub(k + 1) {
            Some(i) => Some(self.current[i].event),
            None => {
                let k = k - self.current.len();
                let i = self.following.len().checked_sub(k + 1)?;
                Some(self.following[i].event)
            }
        }
    }

    /// Turn the wheel to the next non-empty slot and sort it into `current`.
    fn advance(&mut self) -> bool {
        if self.following_slot != NONE
            && (self.on_wheel == 0 || next_set(&self.occupied, self.cursor) >= self.following_slot)
        {
            // No event was scheduled into a slot before it since it was
            // taken (into it, maybe: `take_late_arrivals`). A coarse slot
            // scheduled into since, that opens on the way, opens now: its
            // events go far past this slot.
            let slot = std::mem::replace(&mut self.following_slot, NONE);
            std::mem::swap(&mut self.current, &mut self.following);
            self.take_late_arrivals(slot);
            self.move_to(slot);
            return true;
        }
        loop {
            let next = (self.on_wheel > 0).then(|| next_set(&self.occupied, self.cursor));
            // A coarse slot opens before the wheel passes its opening (and
            // lands after it: the slot at the opening is drained next).
            if self.on_coarse > 0 {
                let at = opening(self.coarse_first);
                if next.is_none_or(|n| at <= n) {
                    self.move_to(at);
                    if next != Some(at) {
                        continue;
                    }
                }
            }
            let Some(next) = next else {
                // Nothing on the wheels: jump to the earliest far event's
                // slot. It, and any other far event of that slot, land in
                // `current`.
                let Some(&Reverse(Far(Entry { time, .. }))) = self.far.peek() else {
                    return false;
                };
                self.move_to(time >> SLOT_BITS);
                return true;
            };
            self.move_to(next);
            let bag = self.lift_slot(next);
            self.on_wheel -= self.pool.take_all(bag, &mut self.current);
            if !self.current.is_empty() {
                sort_slot(&mut self.current, next, self.ties);
                self.walk_next_slot(next);
                return true;
            }
        }
    }

    /// Set the cursor (the wheel is empty up to `cursor`), spread the coarse
    /// slot that opens there, if any, and then (as they may fall in the
    /// same coarse wheel position) bring the far events now within the
    /// coarse horizon onto the wheels.
    fn move_to(&mut self, cursor: u64) {
        self.cursor = cursor;
        self.open = opened(cursor);
        if self.coarse_first <= self.open {
            self.open_coarse();
        }
        if self.far_coarse <= self.open + COARSE_SLOTS {
            self.pull_far();
        }
    }

    /// Spread the earliest coarse slot, which just opened, onto the fine
    /// wheel, keeping its scheduling order.
    fn open_coarse(&mut self) {
        let c = self.coarse_first;
        debug_assert_eq!(c, self.open);
        let i = (c & (COARSE_SLOTS - 1)) as usize;
        self.coarse_occupied[i >> 6] &= !(1 << (i & 63));
        let list = std::mem::take(&mut self.coarse[i]);
        let occupied = &mut self.occupied;
        let n = self.pool.scatter(list, &mut self.slots, |e| {
            let j = ((e.time >> SLOT_BITS) & MASK) as usize;
            occupied[j >> 6] |= 1 << (j & 63);
            j
        });
        self.on_coarse -= n;
        self.on_wheel += n;
        self.coarse_first = if self.on_coarse > 0 {
            next_set(&self.coarse_occupied, c)
        } else {
            u64::MAX
        };
        self.walk_coarse_first();
    }

    /// Start walking the earliest coarse slot's list (`coarse_ahead`).
    fn walk_coarse_first(&mut self) {
        if self.walk_ahead && self.coarse_first != u64::MAX {
            let i = (self.coarse_first & (COARSE_SLOTS - 1)) as usize;
            self.coarse_ahead = self.pool.walk_list(&self.coarse[i]);
            self.coarse_walk_from = opening(self.coarse_first).saturating_sub(COARSE_WALK_LEAD);
        } else {
            self.coarse_walk_from = NONE;
        }
    }

    /// Move far events that now fall within the coarse horizon onto the
    /// wheels (or into `current` if they belong to the cursor's slot).
    #[inline(never)]
    fn pull_far(&mut self) {
        self.far_coarse = u64::MAX;
        while let Some(&Reverse(Far(Entry { time, event }))) = self.far.peek() {
            let c = time >> COARSE_SHIFT;
            if c > self.open + COARSE_SLOTS {
                self.far_coarse = c;
                break;
            }
            self.far.pop();
            self.place(time, event);
        }
    }

    /// Walk each slot's events ahead of draining it (`Pool::step_ahead`):
    /// worth it only when the events are too many to stay in the caches.
    pub fn walk_ahead(&mut self, on: bool) {
        self.walk_ahead = on;
    }

    pub fn len(&self) -> usize {
        self.current.len() + self.following.len() + self.on_wheel + self.on_coarse + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Into a slot's sorted events (`current`, `following`), latest first, in
/// its place. Such an event is mostly due soon, so it is shifted in from the
/// end (the next to pop): cheaper than a binary search, which mispredicts.
/// Times alone decide until one equals the event's; only then are keys
/// computed (ties are rare, a key takes a hash).
#[inline(always)]
fn insert_sorted(events: &mut Vec<Entry>, entry: Entry, ties: Ties) {
    events.push(entry);
    let v = &mut events[..];
    let mut i = v.len() - 1;
    while i > 0 && v[i - 1].time < entry.time {
        v[i] = v[i - 1];
        i -= 1;
    }
    if i > 0 && v[i - 1].time == entry.time {
        let key = entry.key(ties);
        while i > 0 && v[i - 1].time == entry.time && v[i - 1].key(ties) < key {
            v[i] = v[i - 1];
            i -= 1;
        }
    }
    v[i] = entry;
}

/// Order each run of events at one time in a slot sorted by time alone,
/// latest key first (a scan: runs are rare).
#[inline(always)]
fn order_ties(events: &mut [Entry], ties: Ties) {
    let mut start = 0;
    for i in 1..=events.len() {
        if i == events.len() || events[i].time != events[start].time {
            if i - start > 1 {
                let run = &mut events[start..i];
                run.sort_unstable_by_key(|e| Reverse(e.key(ties)));
            }
            start = i;
        }
    }
}

/// Sort a slot's events, latest first. All of them are in slot `slot`, so
/// an event's time is its offset in the slot (`SLOT_BITS` bits), which goes
/// above the event's key in one number to sort by (one comparison instead
/// of two: the sort was 2.5% of the 50,000-flow backbone's run, whose slots
/// hold dozens of events); the times are put back after.
#[inline(always)]
fn sort_slot(events: &mut [Entry], slot: u64, ties: Ties) {
    if events.len() <= 16 {
        // Few: an insertion sort by time, then ties by key.
        events.sort_by_key(|e| Reverse(e.time));
        order_ties(events, ties);
        return;
    }
    for e in events.iter_mut() {
        debug_assert_eq!(e.time >> SLOT_BITS, slot);
        e.time = (e.time & ((1 << SLOT_BITS) - 1)) << KEY_BITS | e.key(ties);
    }
    events.sort_unstable_by_key(|e| Reverse(e.time));
    for e in events.iter_mut() {
        e.time = slot << SLOT_BITS | e.time >> KEY_BITS;
    }
}

/// The absolute number of the first set bit after `after` in a wheel's
/// bitmap (one bit per slot, slot `k` at bit `k` modulo the wheel), which
/// must have one.
fn next_set(bitmap: &[u64], after: u64) -> u64 {
    let mask = (bitmap.len() * 64 - 1) as u64;
    let start = ((after + 1) & mask) as usize;
    let words = bitmap.len();
    let mut w = start >> 6;
    let mut bits = bitmap[w] & (!0u64 << (start & 63));
    for _ in 0..=words {
        if bits != 0 {
            let i = (w << 6) + bits.trailing_zeros() as usize;
            let offset = (i as u64).wrapping_sub(start as u64) & mask;
            return after + 1 + offset;
        }
        w = (w + 1) % words;
        bits = bitmap[w];
    }
    unreachable!("a wheel with events but no slot occupied")
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_qdisc::rng::Rng;

    /// The calendar gives exactly the order of a binary heap on (time,
    /// key), for a random mix of near, same-slot and far events.
    #[test]
    fn matches_a_binary_heap() {
        compare_with_heap(
            Ties::Hashed,
            3,
            &[(1, 0), (5, 20_000), (3, 70_000_000), (1, 2_000_000_000)],
            1,
        );
    }

    /// Sparse runs: the wheel is often empty and the list jumps from far
    /// event to far event, with events at the same time as the last one.
    #[test]
    fn matches_a_binary_heap_when_sparse() {
        compare_with_heap(
            Ties::Hashed,
            4,
            &[(2, 0), (1, 5_000), (7, 3_000_000_000)],
            1,
        );
    }

    /// Many ties: times on a 1 ms grid, so events at one time reach a slot
    /// both from the far heap and directly, and the sort sees many ties
    /// (in either order of ties).
    #[test]
    fn matches_a_binary_heap_with_ties() {
        for ties in Ties::ALL {
            compare_with_heap(
                ties,
                5,
                &[(1, 0), (4, 60_000_000), (2, 200_000_000)],
                1_000_000,
            );
        }
    }

    /// Beyond the coarse wheel's 17 s: events move from the heap to the
    /// coarse wheel, or straight to the fine one when the list jumps, with
    /// ties among all three (times on a 1 ms grid).
    #[test]
    fn matches_a_binary_heap_beyond_the_coarse_wheel() {
        for ties in Ties::ALL {
            compare_with_heap(
                ties,
                6,
                &[
                    (3, 0),
                    (2, 30_000_000),
                    (2, 1_000_000_000),
                    (1, 40_000_000_000),
                ],
                1_000_000,
            );
        }
    }

    /// Times on the coarse slots' 2.1 ms grid, around the fine wheel's
    /// horizon, so that coarse slots open just as events are scheduled into
    /// them and each is one run of ties.
    #[test]
    fn matches_a_binary_heap_at_coarse_slot_edges() {
        for ties in Ties::ALL {
            compare_with_heap(
                ties,
                7,
                &[(2, 0), (1, 20_000_000), (4, 80_000_000)],
                1 << 21,
            );
        }
    }

    /// Walking ahead, the next slot is taken off the wheel before the
    /// current one drains: events scheduled after that into it, at a tie,
    /// and into a slot before it still come in order.
    #[test]
    fn the_following_slot_taken_early_keeps_the_order() {
        let slot = 1 << SLOT_BITS;
        let mut cal = EventQueue::default();
        cal.walk_ahead(true);
        for i in 0..8 {
            cal.schedule(10 + i, Event::PipeHead(i as u32));
        }
        cal.schedule(3 * slot + 5, Event::PipeHead(100));
        cal.schedule(3 * slot + 5, Event::PipeHead(101));
        let mut popped = Vec::new();
        while cal.following_slot == NONE {
            popped.push(cal.pop().unwrap());
        }
        assert_eq!(cal.following_slot, 3);
        let first = [100, 101].map(Event::PipeHead);
        let first = *first
            .iter()
            .min_by_key(|e| e.key(3 * slot + 5, Ties::Hashed))
            .unwrap();
        assert_eq!(cal.peek(cal.current.len()), Some(first));
        cal.schedule(3 * slot + 5, Event::PipeHead(102));
        cal.schedule(3 * slot + 1, Event::PipeHead(103));
        cal.schedule(slot + 7, Event::PipeHead(104));
        while let Some(e) = cal.pop() {
            popped.push(e);
        }
        let mut expected: Vec<_> = (0..8)
            .map(|i| (10 + i, Event::PipeHead(i as u32)))
            .collect();
        let mut tie: Vec<_> = [100, 101, 102].map(Event::PipeHead).into();
        tie.sort_by_key(|e| e.key(3 * slot + 5, Ties::Hashed));
        expected.extend([
            (slot + 7, Event::PipeHead(104)),
            (3 * slot + 1, Event::PipeHead(103)),
        ]);
        expected.extend(tie.into_iter().map(|e| (3 * slot + 5, e)));
        assert_eq!(popped, expected);
        assert!(cal.is_empty());
    }

    /// Events at one nanosecond scheduled in a muddled order, and the
    /// times to schedule them at: in the slot being drained, on the wheel,
    /// on the coarse wheel and in the far heap.
    const TIE: [Event; 8] = [
        Event::InFlight(3),
        Event::RtoTimer(9),
        Event::PipeHead(7),
        Event::PipeHead(2),
        Event::QdiscWake(1),
        Event::TxDone(5),
        Event::Sample,
        Event::WarmupEnd,
    ];
    const TIE_TIMES: [Time; 5] = [100, 5 * (1 << SLOT_BITS), 30_000_000, 20_000_000_000, 0];

    /// What a calendar ordering ties by `ties` pops when `TIE` is
    /// scheduled at `at` (after an event at 0).
    fn pop_tie(ties: Ties, at: Time) -> Vec<Event> {
        let mut cal = EventQueue::new(ties);
        cal.schedule(0, Event::Sample);
        assert_eq!(cal.pop(), Some((0, Event::Sample)));
        for e in TIE {
            cal.schedule(at, e);
        }
        std::iter::from_fn(|| cal.pop())
            .map(|(t, e)| {
                assert_eq!(t, at);
                e
            })
            .collect()
    }

    /// Events at one nanosecond run by kind, then component, whatever order
    /// they were scheduled in, wherever they wait.
    #[test]
    fn ties_run_in_key_order_not_scheduling_order() {
        for ties in Ties::ALL {
            for at in TIE_TIMES {
                let mut sorted = TIE.to_vec();
                sorted.sort_by_key(|e| e.key(at, ties));
                assert_eq!(sorted[0], Event::WarmupEnd);
                assert_eq!(sorted[2], Event::TxDone(5));
                assert_eq!(pop_tie(ties, at), sorted, "{ties:?} at {at}");
            }
        }
    }

    /// Under `Ties::Numbered`, events of one kind run lowest component
    /// first, at every nanosecond.
    #[test]
    fn numbered_ties_run_by_component_number() {
        use Event::*;
        let expected = [
            WarmupEnd,
            Sample,
            TxDone(5),
            QdiscWake(1),
            PipeHead(2),
            PipeHead(7),
            RtoTimer(9),
            InFlight(3),
        ];
        for at in TIE_TIMES.into_iter().flat_map(|t| t..t + 50) {
            assert_eq!(pop_tie(Ties::Numbered, at), expected, "at {at}");
        }
        for time in (0..1 << 40).step_by(1 << 27) {
            assert!((0..100).all(|c| tie_order(Ties::Numbered, c, time) == c));
        }
    }

    /// Ties of one kind are ordered by a bijection of the components'
    /// numbers that changes from one nanosecond to the next: no component
    /// comes first at every tie.
    #[test]
    fn the_order_of_ties_is_fair() {
        let mut firsts = [0u32; 4];
        for time in 0..4_000u64 {
            let order: Vec<u32> = (0..4).map(|c| tie_order(Ties::Hashed, c, time)).collect();
            let first = (0..4).min_by_key(|&c| order[c]).unwrap();
            firsts[first] += 1;
            let mut distinct = order.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), 4, "a bijection");
        }
        for n in firsts {
            assert!(
                (900..1100).contains(&n),
                "first at {firsts:?} of 4,000 ties"
            );
        }
    }

    /// Drive both with random delays: `mix` is (weight, max delay in ns),
    /// and delays are multiples of `grain` ns. The heap holds (time, key,
    /// the event's place in `scheduled`).
    fn compare_with_heap(ties: Ties, seed: u64, mix: &[(u64, u64)], grain: u64) {
        let total: u64 = mix.iter().map(|m| m.0).sum();
        let mut rng = Rng::new(seed);
        let mut cal = EventQueue::new(ties);
        let mut scheduled = Vec::new();
        // The walk ahead only reads: half the tests run with it.
        cal.walk_ahead(seed % 2 == 1);
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
                // Distinct events of several kinds, so that ties must pop
                // in the order of their keys, not of their scheduling.
                order += 1;
                let ev = match rng.below(3) {
                    0 => Event::PipeHead(u32::MAX - order as u32),
                    1 => Event::TxDone(order as u32),
                    _ => Event::RtoTimer(rng.below(1 << 31) as u32 * 2 + order as u32 % 2),
                };
                cal.schedule(now + dt, ev);
                heap.push(Reverse((now + dt, ev.key(now + dt, ties), scheduled.len())));
                scheduled.push(ev);
            }
            let a = cal.pop();
            let b = heap.pop().map(|Reverse((t, _, i))| (t, scheduled[i]));
            assert_eq!(a, b, "{ties:?}, step {step}");
            now = a.unwrap().0;
        }
        while let Some(Reverse((t, _, i))) = heap.pop() {
            assert_eq!(cal.pop(), Some((t, scheduled[i])));
        }
        assert_eq!(cal.pop(), None);
        assert!(cal.is_empty());
    }
}
