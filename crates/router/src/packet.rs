//! A real IPv4 packet as the disciplines see it (the [`Packet`] trait of
//! crates/qdisc), classified once from its headers when it enters the router.
//!
//! - Flow key: a hash of the 5-tuple (protocol, addresses, ports), or of the
//!   address pair where a discipline keys flows by host pair (seed 004's DCBT
//!   option, [`FlowKeyMode`]).
//! - Traffic class: TCP; UDP whose DSCP equals the run's multimedia tag is
//!   tagged (seed 004 tagged multimedia by source address, its digest's
//!   `mm-match tos`: we carry the tag in the TOS byte, set by the sender);
//!   every other packet (UDP, ICMP) is untagged.
//! - ECN: the two low bits of the TOS byte (RFC 3168, section 5); a mark sets
//!   CE and rewrites the header checksum (RFC 1624's incremental update).

use aqmlab_qdisc::rng::mix;
use aqmlab_qdisc::{Ecn, Packet, Time, TrafficClass};
use serde::Deserialize;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Bytes of an IPv4 header without options.
const IPV4_HEADER: usize = 20;

/// What a discipline's flow is, for the router's flow key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKeyMode {
    /// Protocol, source and destination address and port.
    #[default]
    FiveTuple,
    /// Source and destination address (seed 004's DCBT, `flow-key hostpair`).
    HostPair,
}

/// The 5-tuple of a packet; ports are 0 for protocols without them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FiveTuple {
    pub proto: u8,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
}

impl FiveTuple {
    /// The tuple's key under `mode`: equal for one flow, mixed so that the
    /// disciplines' own hash families see well-spread bits.
    pub fn key(&self, mode: FlowKeyMode) -> u64 {
        let addresses = ((self.src as u64) << 32) | self.dst as u64;
        match mode {
            FlowKeyMode::HostPair => mix(addresses, 0),
            FlowKeyMode::FiveTuple => {
                let rest =
                    ((self.proto as u64) << 32) | ((self.sport as u64) << 16) | self.dport as u64;
                mix(addresses, rest)
            }
        }
    }
}

/// Why a buffer read from a TUN device is not a packet the router forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotForwarded {
    /// IPv6, or anything but a well-formed IPv4 header.
    NotIpv4,
    /// A fragment after the first: it has no ports (hosts send none here).
    Fragment,
}

/// The fields the router reads from an IPv4 header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headers {
    pub tuple: FiveTuple,
    pub tos: u8,
    /// Total length from the IP header: the packet's bytes on the wire.
    pub length: u16,
}

impl Headers {
    /// Parse an IPv4 packet (no link-layer header: IFF_NO_PI).
    pub fn parse(buf: &[u8]) -> Result<Self, NotForwarded> {
        if buf.len() < IPV4_HEADER || buf[0] >> 4 != 4 {
            return Err(NotForwarded::NotIpv4);
        }
        let ihl = (buf[0] & 0x0f) as usize * 4;
        let length = u16::from_be_bytes([buf[2], buf[3]]);
        if ihl < IPV4_HEADER || buf.len() < ihl || (length as usize) != buf.len() {
            return Err(NotForwarded::NotIpv4);
        }
        let fragment_offset = u16::from_be_bytes([buf[6], buf[7]]) & 0x1fff;
        let proto = buf[9];
        let has_ports = matches!(proto, PROTO_TCP | PROTO_UDP);
        if has_ports && fragment_offset != 0 {
            return Err(NotForwarded::Fragment);
        }
        let word = |at: usize| u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
        let (sport, dport) = if has_ports && buf.len() >= ihl + 4 {
            (
                u16::from_be_bytes([buf[ihl], buf[ihl + 1]]),
                u16::from_be_bytes([buf[ihl + 2], buf[ihl + 3]]),
            )
        } else {
            (0, 0)
        };
        Ok(Self {
            tuple: FiveTuple {
                proto,
                src: word(12),
                dst: word(16),
                sport,
                dport,
            },
            tos: buf[1],
            length,
        })
    }

    /// The traffic class: TCP, tagged UDP (DSCP `tag`), or untagged.
    pub fn class(&self, tag: Option<u8>) -> TrafficClass {
        match self.tuple.proto {
            PROTO_TCP => TrafficClass::Tcp,
            PROTO_UDP if tag.is_some_and(|t| dscp(t) == dscp(self.tos)) => TrafficClass::UdpTagged,
            _ => TrafficClass::UdpUntagged,
        }
    }
}

/// The DSCP of a TOS byte (its six high bits; the low two are ECN).
fn dscp(tos: u8) -> u8 {
    tos >> 2
}

/// A packet in the router: its bytes and what was read from them.
pub struct RealPacket {
    pub data: Vec<u8>,
    pub key: u64,
    pub class: TrafficClass,
    /// Index of its flow in the router's flow table.
    pub flow: u32,
    /// Index of the host it is addressed to.
    pub dst_host: u32,
    /// When it entered the router (read from its sender's device).
    pub entered: Time,
    /// When it entered the queue of the link it is on.
    pub enqueued: Time,
}

impl Packet for RealPacket {
    #[inline]
    fn size(&self) -> u32 {
        self.data.len() as u32
    }
    #[inline]
    fn flow_key(&self) -> u64 {
        self.key
    }
    #[inline]
    fn class(&self) -> TrafficClass {
        self.class
    }
    #[inline]
    fn ecn(&self) -> Ecn {
        match self.data[1] & 0b11 {
            0b00 => Ecn::NotEct,
            0b11 => Ecn::Ce,
            _ => Ecn::Ect,
        }
    }
    fn mark_ce(&mut self) {
        set_ce(&mut self.data);
    }
}

/// Set CE in an IPv4 header and update its checksum (RFC 1624, eqn. 3:
/// HC' = ~(~HC + ~m + m'), over the 16-bit word holding the TOS byte).
pub fn set_ce(header: &mut [u8]) {
    let old = u16::from_be_bytes([header[0], header[1]]);
    header[1] |= 0b11;
    let new = u16::from_be_bytes([header[0], header[1]]);
    let checksum = u16::from_be_bytes([header[10], header[11]]);
    let mut sum = (!checksum) as u32 + (!old) as u32 + new as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    header[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// The Internet checksum of an IPv4 header (RFC 1071): 0 when it is valid.
pub fn header_checksum(header: &[u8]) -> u16 {
    let ihl = (header[0] & 0x0f) as usize * 4;
    let mut sum: u32 = header[..ihl]
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An IPv4 packet of `len` bytes with a valid header checksum.
    pub fn ipv4(
        proto: u8,
        src: [u8; 4],
        dst: [u8; 4],
        ports: (u16, u16),
        tos: u8,
        len: u16,
    ) -> Vec<u8> {
        let mut p = vec![0u8; len as usize];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&len.to_be_bytes());
        p[8] = 64;
        p[9] = proto;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&ports.0.to_be_bytes());
        p[22..24].copy_from_slice(&ports.1.to_be_bytes());
        let c = header_checksum(&p);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    #[test]
    fn reads_the_five_tuple_and_length() {
        let p = ipv4(
            PROTO_UDP,
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            (5000, 6000),
            0,
            100,
        );
        let h = Headers::parse(&p).unwrap();
        assert_eq!(h.tuple.sport, 5000);
        assert_eq!(h.tuple.dport, 6000);
        assert_eq!(h.tuple.src, 0x0a00_0001);
        assert_eq!(h.length, 100);
        assert_eq!(h.class(None), TrafficClass::UdpUntagged);
    }

    #[test]
    fn refuses_ipv6_and_truncated_packets() {
        let mut p = ipv4(PROTO_TCP, [10, 0, 0, 1], [10, 0, 0, 2], (1, 2), 0, 60);
        assert_eq!(Headers::parse(&p[..40]), Err(NotForwarded::NotIpv4));
        p[0] = 0x60;
        assert_eq!(Headers::parse(&p), Err(NotForwarded::NotIpv4));
    }

    #[test]
    fn tagged_udp_is_told_by_its_dscp_not_its_ecn_bits() {
        let ef = 0xb8;
        let p = ipv4(
            PROTO_UDP,
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            (1, 2),
            ef | 0b10,
            60,
        );
        let h = Headers::parse(&p).unwrap();
        assert_eq!(h.class(Some(ef)), TrafficClass::UdpTagged);
        assert_eq!(h.class(Some(0x20)), TrafficClass::UdpUntagged);
        let t = ipv4(PROTO_TCP, [10, 0, 0, 1], [10, 0, 0, 2], (1, 2), ef, 60);
        assert_eq!(
            Headers::parse(&t).unwrap().class(Some(ef)),
            TrafficClass::Tcp
        );
    }

    #[test]
    fn marking_sets_ce_and_keeps_the_checksum_valid() {
        for tos in [0b01u8, 0b10, 0xb8 | 0b10, 0xff ^ 0b01] {
            let mut p = ipv4(
                PROTO_TCP,
                [10, 9, 8, 7],
                [10, 1, 2, 3],
                (80, 443),
                tos,
                1500,
            );
            assert_eq!(header_checksum(&p), 0);
            set_ce(&mut p);
            assert_eq!(p[1] & 0b11, 0b11);
            assert_eq!(p[1] >> 2, tos >> 2, "DSCP unchanged");
            assert_eq!(
                header_checksum(&p),
                0,
                "checksum valid after marking tos {tos:#x}"
            );
        }
    }

    #[test]
    fn host_pair_keys_ignore_ports_and_five_tuple_keys_do_not() {
        let a = Headers::parse(&ipv4(
            PROTO_TCP,
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            (1, 2),
            0,
            60,
        ))
        .unwrap();
        let b = Headers::parse(&ipv4(
            PROTO_TCP,
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            (3, 2),
            0,
            60,
        ))
        .unwrap();
        assert_eq!(
            a.tuple.key(FlowKeyMode::HostPair),
            b.tuple.key(FlowKeyMode::HostPair)
        );
        assert_ne!(
            a.tuple.key(FlowKeyMode::FiveTuple),
            b.tuple.key(FlowKeyMode::FiveTuple)
        );
    }
}
