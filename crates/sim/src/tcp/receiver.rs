//! The receiving side (ns-2's TCPSink, DelAckSink with delayed ACKs, and
//! the SACK sink for the variants that use SACK): cumulative ACKs, the
//! packets above a hole held in a bitmap.

use aqmlab_qdisc::{Ecn, TrafficClass};

use super::holes::Holes;
use super::sacker::{Arrival, Sacker};
use super::Outbox;
use crate::packet::{Kind, SimPacket};
use crate::scenario::TcpProfile;
use crate::{MaybeTime, Time};

#[derive(Clone, Debug, Default)]
pub struct TcpReceiver {
    /// Next in-order sequence number expected (the cumulative ACK).
    pub next_expected: u32,
    /// What is kept only while there is a hole: an in-order flow (nearly
    /// all the time) carries 8 bytes of it.
    above: Option<Box<Reordering>>,
    /// An in-order packet is received and not yet acknowledged (delayed
    /// ACKs hold one at most).
    unacked: bool,
    /// Stamp to echo in the next delayed ACK.
    echo: Time,
    ece: bool,
    pub epoch: u16,
    /// Deadline of the delayed-ACK timer, if armed.
    pub delack_deadline: MaybeTime,
}

/// A receiver's state while a hole is open: 40 bytes, one box.
#[derive(Clone, Debug, Default)]
struct Reordering {
    /// The packets received above the hole.
    holes: Holes,
    /// The blocks reported last, for a SACK receiver.
    sacker: Option<Box<Sacker>>,
}

/// What a data arrival did at the receiver.
pub struct Delivery {
    /// Packets that became in-order (first delivery only: goodput).
    pub new_in_order: u32,
    /// First in-order sequence number among them.
    pub first: u32,
    /// The packet had arrived before (a retransmission of a packet that was
    /// not lost, or a copy).
    pub duplicate: bool,
}

impl TcpReceiver {
    pub fn restart(&mut self, epoch: u16) {
        *self = Self {
            epoch,
            ..Self::default()
        };
    }

    /// Where the out-of-order map lies while a hole is open, without
    /// reading it: a cache miss of its own, for a caller that fetches it
    /// early.
    #[inline]
    pub fn holes(&self) -> Option<&impl Sized> {
        self.above.as_deref()
    }

    /// A data packet (or SYN) arrived; ACK it now or later.
    pub fn on_data(
        &mut self,
        pkt: &SimPacket,
        now: Time,
        p: &TcpProfile,
        out: &mut Outbox,
    ) -> Delivery {
        let none = Delivery {
            new_in_order: 0,
            first: self.next_expected,
            duplicate: false,
        };
        if pkt.epoch != self.epoch {
            if pkt.epoch.wrapping_sub(self.epoch) < u16::MAX / 2 {
                // A newer transfer of an on-off source: fresh state.
                self.restart(pkt.epoch);
            } else {
                return none;
            }
        }
        if pkt.kind == Kind::Syn {
            self.send_ack(Kind::SynAck, pkt.flow, pkt.stamp, p, out);
            return none;
        }
        let ce = pkt.ecn == Ecn::Ce;
        self.ece |= ce;
        let first = self.next_expected;
        // In order, with nothing held above it: neither filling a gap nor
        // leaving one.
        let in_order = pkt.seq == self.next_expected && self.above.is_none();
        let mut duplicate = pkt.seq < self.next_expected;
        if !duplicate {
            let idx = (pkt.seq - self.next_expected) as usize;
            match &mut self.above {
                // In order with no hole: the common case, no map at all.
                None if idx == 0 => self.next_expected += 1,
                above => {
                    let r = above.get_or_insert_with(Default::default);
                    duplicate = !r.holes.insert(idx);
                    self.next_expected += r.holes.take_in_order();
                    if r.holes.is_empty() {
                        *above = None;
                    }
                }
            }
        }
        let new_in_order = self.next_expected - first;
        // Delay only an in-order packet that fills no hole and is not marked;
        // anything else is acknowledged at once (RFC 5681 section 4.2; ns-2's
        // DelAckSink with RFC2581_immediate_ack_).
        let may_delay = p.delayed_ack && in_order && !ce;
        self.echo = pkt.stamp;
        if may_delay && !self.unacked {
            self.unacked = true;
            self.delack_deadline = MaybeTime::at(now + p.delayed_ack_timeout_ns);
        } else {
            self.flush(pkt.flow, p, out);
            if self.above.is_some() && p.uses_sack() {
                self.add_sack(pkt.seq, out);
            }
        }
        Delivery {
            new_in_order,
            first,
            duplicate,
        }
    }

    /// Give the ACK just sent for packet `seq`, taken in while a hole is
    /// open, the SACK blocks ns-2's SACK sink would send.
    #[inline(never)]
    fn add_sack(&mut self, seq: u32, out: &mut Outbox) {
        let next_expected = self.next_expected;
        let Some(r) = &mut self.above else {
            unreachable!("a hole is open");
        };
        let arrival = if seq > next_expected {
            let (start, end) = r.holes.run((seq - next_expected) as usize);
            Arrival::AboveHole((next_expected + start as u32, next_expected + end as u32))
        } else {
            Arrival::Below { next_expected }
        };
        let sacker = r.sacker.get_or_insert_with(Default::default);
        let blocks = sacker.report(arrival, next_expected);
        if !blocks.is_empty() {
            let Outbox { packets, sack, .. } = out;
            let ack = packets.last_mut().expect("the ACK just sent");
            ack.size += blocks.wire_bytes();
            sack.file(ack, blocks);
        }
    }

    /// Send the cumulative ACK now (delayed-ACK timer or second packet).
    pub fn flush(&mut self, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        self.unacked = false;
        self.delack_deadline = MaybeTime::NONE;
        let echo = self.echo;
        self.send_ack(Kind::Ack, flow, echo, p, out);
    }

    fn send_ack(&mut self, kind: Kind, flow: u32, echo: Time, p: &TcpProfile, out: &mut Outbox) {
        out.packets.push(SimPacket {
            stamp: echo,
            at: 0,
            flow,
            route: 0,
            seq: self.next_expected,
            size: p.ack_size,
            epoch: self.epoch,
            hop: 0,
            kind,
            class: TrafficClass::Tcp,
            ecn: Ecn::NotEct,
            ece: std::mem::take(&mut self.ece),
            tag: 0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpVariant;
    use crate::tcp::sack_blocks::Block;
    use crate::tcp::testing::{data, profile};

    #[test]
    fn receiver_acks_cumulatively_and_fills_holes() {
        let p = profile(TcpVariant::Reno);
        let mut r = TcpReceiver::default();
        let mut out = Outbox::default();
        let mut acks = |r: &mut TcpReceiver, seq| {
            let d = r.on_data(&data(seq), 0, &p, &mut out);
            let a = out.packets.pop().unwrap();
            assert_eq!(a.tag, 0, "Reno's receiver sends no SACK blocks");
            (a.seq, d.new_in_order)
        };
        assert_eq!(acks(&mut r, 0), (1, 1));
        assert_eq!(acks(&mut r, 2), (1, 0), "a hole gives a dupACK");
        assert_eq!(acks(&mut r, 3), (1, 0));
        assert_eq!(acks(&mut r, 1), (4, 3), "the hole filled: the ACK jumps");
        assert_eq!(acks(&mut r, 1), (4, 0), "a duplicate delivers nothing");
    }

    #[test]
    fn receiver_knows_a_packet_it_had() {
        let p = profile(TcpVariant::Reno);
        let mut r = TcpReceiver::default();
        let mut out = Outbox::default();
        let mut dup = |seq| r.on_data(&data(seq), 0, &p, &mut out).duplicate;
        // 0 in order, 2 and 3 above the hole at 1; then 3 again (held above
        // the hole), 0 again (below it), 1 (fills it), 2 again (below it now).
        let seen: Vec<bool> = [0, 2, 3, 3, 0, 1, 2].into_iter().map(&mut dup).collect();
        assert_eq!(seen, [false, false, false, true, true, false, true]);
    }

    #[test]
    fn delayed_ack_every_second_packet() {
        let mut p = profile(TcpVariant::Reno);
        p.delayed_ack = true;
        let mut r = TcpReceiver::default();
        let mut out = Outbox::default();
        r.on_data(&data(0), 0, &p, &mut out);
        assert!(out.packets.is_empty());
        assert_eq!(r.delack_deadline.get(), Some(100_000_000));
        r.on_data(&data(1), 10, &p, &mut out);
        assert_eq!(out.packets.pop().map(|a| a.seq), Some(2));
        r.on_data(&data(3), 20, &p, &mut out);
        assert_eq!(
            out.packets.pop().map(|a| a.seq),
            Some(2),
            "out of order: ACK at once"
        );
        r.on_data(&data(2), 30, &p, &mut out);
        assert_eq!(
            out.packets.pop().map(|a| a.seq),
            Some(4),
            "filling the gap: ACK at once, though nothing is left above it"
        );
        assert_eq!(r.delack_deadline.get(), None);
    }

    /// The SACK sink's blocks over a window with holes at 2 and 5 (ns-2's
    /// `Sacker`): the newest run first, then the older ones; filling a
    /// hole drops the blocks below the new cumulative ACK; the ACK grows 8
    /// bytes a block.
    #[test]
    fn sack_receiver_reports_runs_most_recent_first() {
        let p = profile(TcpVariant::Sack);
        let mut r = TcpReceiver::default();
        let mut out = Outbox::default();
        let mut ack = |seq| {
            r.on_data(&data(seq), 0, &p, &mut out);
            let a = out.packets.pop().unwrap();
            let blocks: Vec<Block> = out.sack.take(&a).iter().collect();
            assert_eq!(a.size, 40 + 8 * blocks.len() as u32);
            (a.seq, blocks)
        };
        assert_eq!(ack(0), (1, vec![]));
        assert_eq!(ack(1), (2, vec![]));
        assert_eq!(ack(3), (2, vec![(3, 4)]));
        assert_eq!(ack(4), (2, vec![(3, 5)]));
        assert_eq!(ack(6), (2, vec![(6, 7), (3, 5)]));
        assert_eq!(ack(8), (2, vec![(8, 9), (6, 7), (3, 5)]));
        assert_eq!(ack(9), (2, vec![(8, 10), (6, 7), (3, 5)]));
        assert_eq!(ack(2), (5, vec![(8, 10), (6, 7)]), "the hole at 2 filled");
        assert_eq!(ack(7), (5, vec![(6, 10)]));
        assert_eq!(ack(5), (10, vec![]), "no hole: no blocks");
        assert_eq!(ack(11), (10, vec![(11, 12)]), "a new hole, a new history");
    }
}
