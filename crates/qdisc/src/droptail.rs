//! DropTail: a FIFO that refuses arrivals when full. Linux `pfifo`/`bfifo`;
//! ns-2/ns-3 `DropTail`. The baseline every seed compares against.

use std::collections::VecDeque;

use crate::{Backlog, DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

pub struct DropTail<P> {
    /// Allocated when the first packet waits: most FIFOs of a simulated
    /// network (every access link) never hold one, and an empty `VecDeque`
    /// with its byte count would cost them 40 bytes each.
    buffer: Option<Box<Buffer<P>>>,
    limit: Limit,
}

/// Buffers of at most this capacity are freed when they empty.
const SMALL: usize = 8;

struct Buffer<P> {
    queue: VecDeque<P>,
    bytes: u64,
}

impl<P: Packet> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        Self {
            buffer: None,
            limit,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buffer.as_ref().is_none_or(|b| b.queue.is_empty())
    }

    /// The packet that would leave next.
    #[inline]
    pub fn front(&self) -> Option<&P> {
        self.buffer.as_ref()?.queue.front()
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
            let buffer = self.buffer.get_or_insert_with(|| {
                Box::new(Buffer {
                    queue: VecDeque::new(),
                    bytes: 0,
                })
            });
            buffer.bytes += packet.size() as u64;
            buffer.queue.push_back(packet);
        } else {
            verdicts.refuse(packet, DropReason::Overflow);
        }
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let buffer = self.buffer.as_mut()?;
        let packet = buffer.queue.pop_front()?;
        buffer.bytes -= packet.size() as u64;
        if buffer.queue.is_empty() && buffer.queue.capacity() <= SMALL {
            // A short burst (an access link in slow start) is over: give the
            // memory back rather than keep it for every flow. A buffer that
            // has held more (a bottleneck) keeps its allocation.
            self.buffer = None;
        }
        Some(packet)
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        match &self.buffer {
            Some(b) => Backlog {
                packets: b.queue.len() as u64,
                bytes: b.bytes,
            },
            None => Backlog {
                packets: 0,
                bytes: 0,
            },
        }
    }
}
