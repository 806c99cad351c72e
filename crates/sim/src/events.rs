//! The event list. Time is integer nanoseconds; events at the same time run
//! in the order they were scheduled, so a run is exactly repeatable.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    time: Time,
    order: u64,
    event: Event,
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    scheduled: u64,
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.scheduled += 1;
        self.heap.push(Reverse(Entry { time, order: self.scheduled, event }));
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|Reverse(e)| (e.time, e.event))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(e)| e.time)
    }

    pub fn scheduled(&self) -> u64 {
        self.scheduled
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}
