//! DropTail: a FIFO that refuses arrivals when full. Linux `pfifo`/`bfifo`;
//! ns-2/ns-3 `DropTail`. The baseline every seed compares against.

use std::collections::VecDeque;

use crate::{Backlog, DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

pub struct DropTail<P> {
    queue: VecDeque<P>,
    limit: Limit,
    bytes: u64,
}

impl<P: Packet> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        Self {
            queue: VecDeque::new(),
            limit,
            bytes: 0,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The packet that would leave next.
    #[inline]
    pub fn front(&self) -> Option<&P> {
        self.queue.front()
    }

    #[inline]
    pub fn admits(&self, packet: &P) -> bool {
        self.limit.admits(self.backlog(), packet.size())
    }
}

impl<P: Packet> QueueDiscipline<P> for DropTail<P> {
    fn name(&self) -> &'static str {
        "droptail"
    }

    #[inline]
    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        if self.admits(&packet) {
            self.bytes += packet.size() as u64;
            self.queue.push_back(packet);
        } else {
            verdicts.refuse(packet, DropReason::Overflow);
        }
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front()?;
        self.bytes -= packet.size() as u64;
        Some(packet)
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        Backlog {
            packets: self.queue.len() as u64,
            bytes: self.bytes,
        }
    }
}
