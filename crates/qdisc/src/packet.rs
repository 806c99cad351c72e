/// The traffic classes that class-based disciplines tell apart (seed 004: CBT
/// and DCBT keep separate thresholds for TCP, tagged UDP and untagged UDP;
/// ChIPS gives tagged multimedia its cut-in queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum TrafficClass {
    #[default]
    Tcp = 0,
    /// UDP marked as well-behaved multimedia (CBT's "tagged" class).
    UdpTagged = 1,
    /// Any other UDP.
    UdpUntagged = 2,
}

impl TrafficClass {
    pub const COUNT: usize = 3;

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The ECN field of the IP header (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect = 1,
    Ce = 3,
}

/// What a queue discipline may know of a packet.
pub trait Packet {
    /// Bytes on the wire, headers included.
    fn size(&self) -> u32;

    /// A key that is equal for packets of one flow and, with high probability,
    /// different across flows. Disciplines hash it with their own seeds.
    fn flow_key(&self) -> u64;

    fn class(&self) -> TrafficClass;

    fn ecn(&self) -> Ecn;

    /// Set Congestion Experienced. Only called on ECN-capable packets.
    fn mark_ce(&mut self);
}
