//! Packet-granular TCP with ns-2's one-way semantics: sequence numbers and
//! windows count packets, the sink returns cumulative ACKs (with SACK
//! blocks for the variants that use them), there is no connection
//! teardown.
//!
//! What every variant shares is written once: the sender's sequence
//! space, ACK processing and sending ([`TcpSender`]), its retransmission
//! timer ([`rto`]: RFC 6298's or ns-2's), the receiver ([`TcpReceiver`])
//! with its out-of-order map and the SACK blocks it reports ([`sacker`]),
//! and the sender's SACK scoreboard ([`scoreboard`]). What tells the variants
//! apart is in two places:
//!
//! - [`cc`]: the [`CongestionControl`] trait, how the window grows on new
//!   ACKs and shrinks on a loss, an ECN echo or a timeout, with the window
//!   and ssthresh as its state: RFC 5681's AIMD or CUBIC (RFC 9438);
//! - [`recovery`]: what the sender does from the duplicate ACK that
//!   signals a loss until the data then outstanding is acknowledged:
//!   Tahoe, Reno, NewReno (RFC 6582) or ns-2's Sack1.
//!
//! | variant | window ([`cc`]) | loss recovery ([`recovery`]) |
//! |---|---|---|
//! | `tahoe` | AIMD | Tahoe |
//! | `reno` | AIMD | Reno |
//! | `newreno` | AIMD | NewReno |
//! | `sack` | AIMD | Sack1 |
//! | `cubic` | CUBIC | Sack1, or NewReno (`cubic.recovery`) |
//!
//! The split is Linux's (a `tcp_congestion_ops` beside the loss recovery
//! every one of them shares) and the RFCs' (RFC 9438 leaves loss recovery
//! to RFC 6675 or RFC 6582): CUBIC takes SACK's recovery as it is instead
//! of a copy of it.
//!
//! The state machines do not touch the network: they write the packets
//! to send into an [`Outbox`] and state their timer deadline, and the
//! simulator delivers and schedules.

pub mod cc;
mod holes;
mod receiver;
pub mod recovery;
pub mod rto;
pub mod sack_blocks;
pub mod sacker;
pub mod scoreboard;
mod sender;

pub use cc::{CongestionControl, Window};
pub use receiver::{Delivery, TcpReceiver};
pub use sack_blocks::{SackBlocks, SackOptions};
pub use sender::TcpSender;

use crate::packet::SimPacket;
use crate::scenario::TcpProfile;
use crate::Time;

/// What the state machines put on the wire: the packets to send, drained
/// by the simulator, and the SACK options of the ACKs among them, kept
/// here until the ACKs arrive (`sack_blocks`).
#[derive(Default)]
pub struct Outbox {
    pub packets: Vec<SimPacket>,
    pub sack: SackOptions,
    /// The nanosecond of the last data packet sent, and how many data
    /// packets (of any flow) went before it in that nanosecond.
    instant: Time,
    sent_in_instant: u8,
}

impl Outbox {
    /// The place of a data packet sent now among those sent in this
    /// nanosecond (saturating at 255): a flow may send a retransmission
    /// after new data in one instant (an ACK, then its timer), so sequence
    /// numbers alone cannot order them (`SimPacket::tag`). Counted across
    /// flows, which keeps each flow's order, in state the senders need not
    /// carry.
    #[inline(always)]
    pub fn place_in_instant(&mut self, now: Time) -> u8 {
        if now == self.instant {
            self.sent_in_instant = self.sent_in_instant.saturating_add(1);
        } else {
            self.instant = now;
            self.sent_in_instant = 0;
        }
        self.sent_in_instant
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    SynSent,
    Established,
    Done,
}

/// Counters of one flow, across all its transfers.
#[derive(Clone, Debug, Default)]
pub struct TcpCounters {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// 32 bits, as the sequence numbers they count in (4 of 32 bytes in
    /// the sender's lines).
    pub retransmissions: u32,
    pub timeouts: u32,
    pub fast_retransmits: u32,
}

/// Payload bytes carried by each full data packet.
#[inline]
pub fn mss(p: &TcpProfile) -> u32 {
    p.packet_size - p.header_size
}

/// Packets needed for `bytes` of payload (`u32::MAX`: unlimited).
pub fn packets_for(p: &TcpProfile, bytes: Option<u64>) -> u32 {
    match bytes {
        None => u32::MAX,
        Some(b) => b.div_ceil(mss(p) as u64).clamp(1, u32::MAX as u64 - 1) as u32,
    }
}

/// Payload of data packet `seq`: full, except the last one of a transfer.
#[inline]
pub fn payload_of(p: &TcpProfile, bytes: Option<u64>, seq: u32) -> u32 {
    let mss = mss(p);
    match bytes {
        Some(b) if (seq as u64 + 1) * mss as u64 > b => {
            (b.saturating_sub(seq as u64 * mss as u64)).max(1) as u32
        }
        _ => mss,
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! What the variants' tests share: a profile, ACKs and data packets
    //! written by hand, and a sender grown to a known window.

    use aqmlab_qdisc::{Ecn, TrafficClass};

    use super::{Outbox, SackBlocks, TcpSender};
    use crate::packet::{Kind, SimPacket};
    use crate::scenario::{CubicParams, RttEstimator, TcpProfile, TcpVariant};
    use crate::Time;

    pub fn profile(variant: TcpVariant) -> TcpProfile {
        TcpProfile {
            variant,
            packet_size: 1000,
            header_size: 40,
            ack_size: 40,
            initial_window: 2,
            initial_ssthresh: 10_000,
            receiver_window: 10_000,
            delayed_ack: false,
            delayed_ack_timeout_ns: 100_000_000,
            dupack_threshold: 3,
            min_rto_ns: 200_000_000,
            max_rto_ns: 60_000_000_000,
            initial_rto_ns: 1_000_000_000,
            clock_granularity_ns: 10_000_000,
            syn: false,
            ecn: false,
            cubic: CubicParams::default(),
            rtt_estimator: RttEstimator::Rfc6298,
            timeout_cwnd: Default::default(),
        }
    }

    pub fn ack(seq: u32, stamp: Time) -> SimPacket {
        SimPacket {
            stamp,
            at: 0,
            flow: 0,
            route: 0,
            seq,
            size: 40,
            epoch: 0,
            hop: 0,
            kind: Kind::Ack,
            class: TrafficClass::Tcp,
            ecn: Ecn::NotEct,
            ece: false,
            tag: 0,
        }
    }

    /// An ACK of `seq` that SACKs `blocks` (most recent first), its option
    /// filed in `out`.
    pub fn sack(out: &mut Outbox, seq: u32, blocks: &[(u32, u32)]) -> SimPacket {
        let mut a = ack(seq, 0);
        out.sack
            .file(&mut a, SackBlocks::new(seq, blocks.iter().copied()));
        a
    }

    pub fn data(seq: u32) -> SimPacket {
        SimPacket {
            kind: Kind::Data,
            seq,
            size: 1000,
            ..ack(0, 7)
        }
    }

    pub fn sent(out: &mut Outbox) -> Vec<u32> {
        out.packets.drain(..).map(|p| p.seq).collect()
    }

    /// Open a connection and grow it to `cwnd` = 10 with nothing lost:
    /// packets 8..18 are outstanding.
    pub fn grown(variant: TcpVariant) -> (TcpSender, TcpProfile, Outbox) {
        let p = profile(variant);
        let mut s = TcpSender::new(&p, None);
        let mut out = Outbox::default();
        s.open(0, 0, &p, &mut out);
        assert_eq!(sent(&mut out), vec![0, 1]);
        // Slow start: each ACK adds one packet to cwnd and sends two.
        for a in 1..=8 {
            s.on_ack(&ack(a, 0), 100, &p, &mut out);
        }
        assert_eq!(s.cwnd(), 10.0);
        assert_eq!(sent(&mut out), (2..18).collect::<Vec<_>>());
        (s, p, out)
    }
}
