//! One FIFO with its byte count: the buffer of the single-queue disciplines
//! (DropTail, RED and Linux's RED, Blue, CBT, FRED, SFED, PIE), whose limits and
//! averages read packets or bytes. CHOKe keeps Linux's ring with holes.

use std::collections::VecDeque;

use crate::{Backlog, Packet};

#[derive(Debug)]
pub struct CountedFifo<P> {
    packets: VecDeque<P>,
    bytes: u64,
}

impl<P> Default for CountedFifo<P> {
    fn default() -> Self {
        Self {
            packets: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<P: Packet> CountedFifo<P> {
    #[inline]
    pub fn push_back(&mut self, packet: P) {
        self.bytes += packet.size() as u64;
        self.packets.push_back(packet);
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<P> {
        let packet = self.packets.pop_front()?;
        self.bytes -= packet.size() as u64;
        Some(packet)
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        Backlog {
            packets: self.packets.len() as u64,
            bytes: self.bytes,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn front(&self) -> Option<&P> {
        self.packets.front()
    }

    pub fn iter(&self) -> impl Iterator<Item = &P> {
        self.packets.iter()
    }
}
