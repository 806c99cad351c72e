//! A capture of chosen links in the pcap format (nanosecond timestamps,
//! LINKTYPE_RAW: each frame an IPv4 packet; the formats are described at
//! <https://www.tcpdump.org/manpages/pcap-savefile.5.html> and
//! <https://www.tcpdump.org/linktypes.html>), readable by tshark and
//! Wireshark. A packet is captured as it starts on a link's transmitter, as
//! tcpdump sees it on the sending interface.
//!
//! The simulator's packets carry no headers, so each frame's headers are
//! synthesized from the packet and its flow:
//! - IPv4 (RFC 791): node `n` is 10.0.0.0 + n + 1; total length the
//!   packet's size; the ECN field (RFC 3168 section 5) from the packet's
//!   ECN codepoint; DF set, TTL 64, the header checksum computed.
//! - TCP (RFC 9293), 20 bytes, no options: flow `f` from port
//!   1024 + f mod 64512 to port 1024 + (f / 64512) mod 64512; sequence
//!   numbers count bytes, data packet `s` starting at byte 1 + the bytes
//!   of the packets before it (a SYN's sequence number is 0, so the data
//!   is where it would be after one), each packet carrying its size less
//!   40 bytes of headers; an ACK acknowledges the bytes of the packets it
//!   acknowledges, and sets ECE when it echoes a mark; window 65535; the
//!   checksum is left 0 (there is no payload to sum).
//! - UDP (RFC 768), 8 bytes, the same ports.
//!
//! Only the headers are captured (the captured length); each frame's
//! original length is the packet's size, so byte counts (`tshark -z
//! io,stat`) are the simulator's.

use aqmlab_qdisc::Ecn;

use super::Filter;
use crate::packet::{Kind, SimPacket};
use crate::scenario::TcpProfile;
use crate::tcp::{packets_for, payload_of};
use crate::Time;

/// IPv4 header bytes, without options.
const IPV4: u32 = 20;
/// TCP header bytes, without options.
const TCP: u32 = 20;
const UDP: u32 = 8;
/// The headers a TCP packet's size includes here.
const TCP_HEADERS: u32 = IPV4 + TCP;
/// The pcap file's magic number for nanosecond timestamps.
const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each frame is an IP packet.
const LINKTYPE_RAW: u32 = 101;
/// The most bytes an IPv4 packet has.
const MAX_LENGTH: u32 = 65_535;
/// Ports are 1024 and up.
const PORTS: u32 = 65_536 - 1024;

/// What a packet's headers are made of (24 bytes).
#[derive(Clone, Copy, Debug)]
struct Captured {
    time: Time,
    flow: u32,
    seq: u32,
    size: u32,
    kind: Kind,
    ecn: Ecn,
    ece: bool,
}

/// The packets captured so far, in the order they started on their links.
pub struct Capture {
    filter: Filter,
    packets: Vec<Captured>,
}

impl Capture {
    pub fn new(filter: Filter) -> Self {
        Self {
            filter,
            packets: Vec::new(),
        }
    }

    /// `packet` starts on link `link` now.
    pub fn record(&mut self, now: Time, link: u32, packet: &SimPacket) {
        if self.filter.matches(link, packet.flow) {
            self.packets.push(Captured {
                time: now,
                flow: packet.flow,
                seq: packet.seq,
                size: packet.size,
                kind: packet.kind,
                ecn: packet.ecn,
                ece: packet.ece,
            });
        }
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// The capture as a pcap file; `flows[f]` says what flow `f`'s
    /// headers are made of.
    pub fn file(&self, flows: &[FlowHeaders]) -> Vec<u8> {
        let per_packet = 16 + (IPV4 + TCP) as usize;
        let mut out = Vec::with_capacity(24 + per_packet * self.packets.len());
        for word in [MAGIC_NS, 0x0004_0002, 0, 0, MAX_LENGTH, LINKTYPE_RAW] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        for p in &self.packets {
            frame(&mut out, p, &flows[p.flow as usize]);
        }
        out
    }
}

/// What a flow's headers are made of: its end nodes and, for TCP, how its
/// sequence numbers count bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowHeaders {
    /// Data goes from node `src` to node `dst`; ACKs come back.
    pub src: u32,
    pub dst: u32,
    /// `None` for UDP.
    pub tcp: Option<ByteSequence>,
}

/// Where a TCP flow's data packets start in its byte sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct ByteSequence {
    /// Bytes a full data packet carries past the headers.
    full: u32,
    /// The last packet of a finite transfer, and the bytes it carries.
    last: Option<(u32, u32)>,
}

impl ByteSequence {
    /// The byte sequence of a flow with profile `p` sending `bytes` of
    /// payload (`None`: without end).
    pub fn new(p: &TcpProfile, bytes: Option<u64>) -> Self {
        let carried = |payload: u32| (payload + p.header_size).saturating_sub(TCP_HEADERS);
        let last = bytes.map(|b| {
            let last = packets_for(p, Some(b)) - 1;
            (last, carried(payload_of(p, Some(b), last)))
        });
        Self {
            full: p.packet_size.saturating_sub(TCP_HEADERS),
            last,
        }
    }

    /// The first byte of data packet `seq`, which is also the
    /// acknowledgement number of the packets before it (modulo 2^32).
    pub fn start(&self, seq: u32) -> u32 {
        let before = match self.last {
            Some((last, bytes)) if seq > last => last as u64 * self.full as u64 + bytes as u64,
            _ => seq as u64 * self.full as u64,
        };
        (1 + before) as u32
    }
}

/// Node `n`'s IPv4 address, 10.0.0.0 + n + 1 (within 10.0.0.0/8).
fn address(node: u32) -> [u8; 4] {
    (0x0A00_0000 | (node.wrapping_add(1) & 0x00FF_FFFF)).to_be_bytes()
}

/// Flow `f`'s ports, source then destination.
fn ports(flow: u32) -> [u16; 2] {
    [flow % PORTS, (flow / PORTS) % PORTS].map(|p| (1024 + p) as u16)
}

/// The IPv4 ECN field of a codepoint (RFC 3168 section 5): ECT is ECT(0).
fn ecn_bits(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => 0b00,
        Ecn::Ect => 0b10,
        Ecn::Ce => 0b11,
    }
}

const FLAG_SYN: u8 = 0x02;
const FLAG_ACK: u8 = 0x10;
const FLAG_ECE: u8 = 0x40;

/// One frame: its record header, then the packet's synthesized headers.
fn frame(out: &mut Vec<u8>, p: &Captured, flow: &FlowHeaders) {
    let transport = if p.kind == Kind::Udp { UDP } else { TCP };
    let captured = IPV4 + transport;
    let length = p.size.clamp(captured, MAX_LENGTH);
    let seconds = (p.time / 1_000_000_000) as u32;
    let nanoseconds = (p.time % 1_000_000_000) as u32;
    for word in [seconds, nanoseconds, captured, length] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    let (mut ends, mut ports) = ([flow.src, flow.dst], ports(p.flow));
    if p.kind.is_reverse() {
        ends.reverse();
        ports.reverse();
    }
    ipv4(out, p, length, ends.map(address));
    out.extend_from_slice(&ports[0].to_be_bytes());
    out.extend_from_slice(&ports[1].to_be_bytes());
    match &flow.tcp {
        Some(bytes) if p.kind != Kind::Udp => tcp(out, p, bytes),
        _ => {
            out.extend_from_slice(&((length - IPV4) as u16).to_be_bytes());
            out.extend_from_slice(&[0, 0]); // no checksum
        }
    }
}

/// The IPv4 header of a packet of `length` bytes from `ends[0]` to
/// `ends[1]`.
fn ipv4(out: &mut Vec<u8>, p: &Captured, length: u32, ends: [[u8; 4]; 2]) {
    let protocol = if p.kind == Kind::Udp { 17 } else { 6 };
    let mut header = [0u8; IPV4 as usize];
    header[0] = 0x45; // version 4, five 32-bit words
    header[1] = ecn_bits(p.ecn);
    header[2..4].copy_from_slice(&(length as u16).to_be_bytes());
    header[6] = 0x40; // don't fragment
    header[8] = 64; // time to live
    header[9] = protocol;
    header[12..16].copy_from_slice(&ends[0]);
    header[16..20].copy_from_slice(&ends[1]);
    let checksum = !ones_complement_sum(&header);
    header[10..12].copy_from_slice(&checksum.to_be_bytes());
    out.extend_from_slice(&header);
}

/// The TCP header past its ports: sequence and acknowledgement numbers in
/// bytes, flags, window.
fn tcp(out: &mut Vec<u8>, p: &Captured, bytes: &ByteSequence) {
    let (seq, ack, flags) = match p.kind {
        Kind::Data => (bytes.start(p.seq), 1, FLAG_ACK),
        Kind::Ack => (
            1,
            bytes.start(p.seq),
            FLAG_ACK | if p.ece { FLAG_ECE } else { 0 },
        ),
        Kind::Syn => (0, 0, FLAG_SYN),
        Kind::SynAck => (0, 1, FLAG_SYN | FLAG_ACK),
        Kind::Udp => unreachable!("a UDP packet has no TCP header"),
    };
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&ack.to_be_bytes());
    out.push(((TCP / 4) as u8) << 4); // data offset, in 32-bit words
    out.push(flags);
    out.extend_from_slice(&u16::MAX.to_be_bytes()); // window
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
}

/// The 16-bit ones' complement sum of RFC 1071.
fn ones_complement_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|w| u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0)))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

#[cfg(test)]
mod tests {
    use aqmlab_qdisc::Ecn;

    use super::*;
    use crate::trace::tests::packet;

    fn profile() -> TcpProfile {
        serde_json::from_value(serde_json::json!({
            "variant": "reno", "packet_size": 1000, "header_size": 40, "ack_size": 40,
            "initial_window": 2, "initial_ssthresh": 100, "receiver_window": 100,
            "delayed_ack": false, "delayed_ack_timeout_ns": 100, "dupack_threshold": 3,
            "min_rto_ns": 1, "max_rto_ns": 1, "initial_rto_ns": 1,
            "clock_granularity_ns": 1, "syn": false
        }))
        .unwrap()
    }

    fn u16_at(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }

    fn le32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn a_finite_transfer_counts_its_short_last_packet() {
        // 2,500 bytes in packets of 960: 960, 960, 580.
        let bytes = ByteSequence::new(&profile(), Some(2_500));
        let starts: Vec<u32> = (0..4).map(|s| bytes.start(s)).collect();
        assert_eq!(starts, [1, 961, 1_921, 2_501]);
        let endless = ByteSequence::new(&profile(), None);
        assert_eq!(endless.start(5_000_000), (1 + 5_000_000u64 * 960) as u32);
    }

    #[test]
    fn frames_carry_the_packets_headers() {
        let flow = FlowHeaders {
            src: 2,
            dst: 300,
            tcp: Some(ByteSequence::new(&profile(), None)),
        };
        let udp = FlowHeaders {
            src: 4,
            dst: 5,
            tcp: None,
        };
        let mut capture = Capture::new(Filter::new(Some(&[1]), None, 2));
        let mut data = packet(64_513, 3, Kind::Data);
        data.ecn = Ecn::Ce;
        let mut ack = packet(64_513, 4, Kind::Ack);
        ack.size = 40;
        ack.ece = true;
        let mut datagram = packet(1, 0, Kind::Udp);
        datagram.ecn = Ecn::NotEct;
        datagram.size = 500;
        capture.record(1_500_000_007, 1, &data);
        capture.record(1_600_000_000, 0, &data); // not on link 1
        capture.record(2_000_000_001, 1, &ack);
        capture.record(3_000_000_000, 1, &datagram);
        assert_eq!(capture.len(), 3);
        let mut flows = vec![udp.clone(); 64_514];
        flows[64_513] = flow;
        let file = capture.file(&flows);
        assert_eq!(le32_at(&file, 0), 0xa1b2_3c4d);
        assert_eq!(le32_at(&file, 20), 101, "LINKTYPE_RAW");
        // The data packet: time, lengths, then its headers.
        let (record, ip) = (24, 40);
        assert_eq!(le32_at(&file, record), 1);
        assert_eq!(le32_at(&file, record + 4), 500_000_007);
        assert_eq!(le32_at(&file, record + 8), 40, "captured: the headers");
        assert_eq!(le32_at(&file, record + 12), 1000, "original: the packet");
        let header = &file[ip..ip + 20];
        assert_eq!(header[0], 0x45);
        assert_eq!(header[1] & 0b11, 0b11, "CE");
        assert_eq!(u16_at(header, 2), 1000);
        assert_eq!(header[9], 6);
        assert_eq!(ones_complement_sum(header), 0xFFFF, "checksum");
        assert_eq!(&header[12..20], &[10, 0, 0, 3, 10, 0, 1, 45]);
        let tcp = &file[ip + 20..ip + 40];
        assert_eq!([u16_at(tcp, 0), u16_at(tcp, 2)], [1025, 1025]);
        assert_eq!(u32_at(tcp, 4), 1 + 3 * 960);
        assert_eq!(tcp[13], FLAG_ACK);
        // The ACK comes back, and acknowledges packets 0 to 3.
        let ip = ip + 40 + 16;
        let header = &file[ip..ip + 20];
        assert_eq!(u16_at(header, 2), 40);
        assert_eq!(&header[12..20], &[10, 0, 1, 45, 10, 0, 0, 3]);
        let tcp = &file[ip + 20..ip + 40];
        assert_eq!([u16_at(tcp, 0), u16_at(tcp, 2)], [1025, 1025]);
        assert_eq!([u32_at(tcp, 4), u32_at(tcp, 8)], [1, 1 + 4 * 960]);
        assert_eq!(tcp[13], FLAG_ACK | FLAG_ECE);
        // The datagram: 28 bytes of headers.
        let record = ip + 40;
        assert_eq!(le32_at(&file, record + 8), 28);
        assert_eq!(le32_at(&file, record + 12), 500);
        let header = &file[record + 16..record + 36];
        assert_eq!((header[1], header[9]), (0, 17));
        assert_eq!(ones_complement_sum(header), 0xFFFF);
        let udp = &file[record + 36..record + 44];
        assert_eq!(
            [u16_at(udp, 0), u16_at(udp, 2), u16_at(udp, 4)],
            [1025, 1024, 480]
        );
        assert_eq!(file.len(), record + 44);
    }
}
