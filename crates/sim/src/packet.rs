//! The simulator's packet: a small plain value (40 bytes) that is moved
//! through queues and pipes, never boxed.

use aqmlab_qdisc::{Ecn, Packet, TrafficClass};

use crate::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// TCP data segment; `seq` is its packet-granular sequence number.
    Data,
    /// TCP cumulative ACK; `seq` is the next sequence number expected.
    Ack,
    Syn,
    SynAck,
    Udp,
}

impl Kind {
    /// Whether the packet travels the flow's reverse path.
    #[inline]
    pub fn is_reverse(self) -> bool {
        matches!(self, Kind::Ack | Kind::SynAck)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct SimPacket {
    /// Time it was sent by its source (data), or the echoed send time of
    /// the data packet it acknowledges (ACK): the RTT sample.
    pub stamp: Time,
    /// While queued: when it entered the queue (its queueing delay). While
    /// propagating: when the packet behind it on the link reaches the far
    /// end (the pipe's head event carries the head's own time), so a pipe
    /// holds bare packets and its head is popped without reading the next.
    pub at: Time,
    pub flow: u32,
    /// The route it follows (set when a host sends it).
    pub route: u32,
    pub seq: u32,
    pub size: u32,
    /// Transfer number of an on-off source: packets of an earlier transfer
    /// still in flight are told apart and ignored.
    pub epoch: u16,
    /// Index in the route of the link it is on or queued for.
    pub hop: u8,
    pub kind: Kind,
    pub class: TrafficClass,
    pub ecn: Ecn,
    /// ACK echoes a CE mark (ECN-Echo).
    pub ece: bool,
    /// ACK: the tag of its SACK option, filed beside it
    /// (`crate::tcp::SackOptions`); 0: none. Data: its place among the
    /// data packets sent in the same nanosecond (saturating at 255),
    /// the order a retransmission sent after new data in one instant needs
    /// (`crate::trace::FlowStats`). (In what was padding.)
    pub tag: u8,
}

impl Packet for SimPacket {
    #[inline]
    fn size(&self) -> u32 {
        self.size
    }
    #[inline]
    fn flow_key(&self) -> u64 {
        self.flow as u64
    }
    #[inline]
    fn class(&self) -> TrafficClass {
        self.class
    }
    #[inline]
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    #[inline]
    fn mark_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }
}
