//! A packet with the instant it was queued: CoDel, FQ-CoDel and PIE measure
//! sojourn time, which the [`Packet`] trait does not carry. Wrapping keeps
//! [`crate::FlowQueues`] usable as the storage of time-stamping disciplines.

use crate::{Ecn, Packet, Time, TrafficClass};

#[derive(Clone, Debug, PartialEq)]
pub struct Stamped<P> {
    pub packet: P,
    /// When the packet entered the queue.
    pub at: Time,
}

impl<P> Stamped<P> {
    #[inline]
    pub fn new(packet: P, at: Time) -> Self {
        Self { packet, at }
    }
}

impl<P: Packet> Packet for Stamped<P> {
    #[inline]
    fn size(&self) -> u32 {
        self.packet.size()
    }
    #[inline]
    fn flow_key(&self) -> u64 {
        self.packet.flow_key()
    }
    #[inline]
    fn class(&self) -> TrafficClass {
        self.packet.class()
    }
    #[inline]
    fn ecn(&self) -> Ecn {
        self.packet.ecn()
    }
    #[inline]
    fn mark_ce(&mut self) {
        self.packet.mark_ce()
    }
}
