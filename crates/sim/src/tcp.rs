//! Packet-granular TCP with ns-2's one-way semantics: sequence numbers and
//! windows count packets, the sink returns cumulative ACKs, there is no
//! connection teardown. Tahoe, Reno and NewReno (RFC 5681, RFC 6582); the
//! retransmission timer follows RFC 6298.
//!
//! The state machines here do not touch the network: they write the packets
//! to send into an [`Outbox`] and state their timer deadline, and the
//! simulator delivers and schedules.

use std::num::NonZeroU64;

use aqmlab_qdisc::{Ecn, TrafficClass};

use crate::holes::Holes;
use crate::packet::{Kind, SimPacket};
use crate::scenario::{TcpProfile, TcpVariant};
use crate::{MaybeTime, Time};

/// Packets a state machine wants sent, drained by the simulator.
#[derive(Default)]
pub struct Outbox {
    pub packets: Vec<SimPacket>,
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
    /// 32 bits, as the sequence numbers they count in (4 of 40 bytes in the
    /// sender's lines, room for `TcpSender::rto_event_at`).
    pub retransmissions: u32,
    pub timeouts: u32,
    pub fast_retransmits: u32,
}

/// The sending side of one connection.
#[derive(Clone, Debug)]
pub struct TcpSender {
    pub phase: Phase,
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Lowest unacknowledged sequence number.
    pub snd_una: u32,
    /// Next sequence number to send (moves back on a timeout: go-back-N).
    snd_nxt: u32,
    /// One past the highest sequence number ever sent.
    snd_max: u32,
    dupacks: u32,
    in_recovery: bool,
    /// NewReno's `recover`: snd_max when recovery began.
    recover: u32,
    /// No further ECN reduction until this is acknowledged.
    ecn_recover: u32,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    backoff: u32,
    /// Payload bytes of this transfer; `None` for a long-lived source
    /// (`NonZeroU64`: 8 bytes, not 16).
    bytes: Option<NonZeroU64>,
    /// Packets in this transfer; `u32::MAX` for a long-lived source.
    pub total: u32,
    /// Retransmission timer deadline, if armed.
    pub rto_deadline: MaybeTime,
    /// Time of the simulator's pending `RtoTimer` event for this sender, if
    /// any (lazily cancelled: an event later than the deadline is left in
    /// the list and ignored). The simulator's bookkeeping, kept here beside
    /// the deadline so that an ACK reads none of the flow's last line.
    pub(crate) rto_event_at: MaybeTime,
    pub epoch: u16,
    pub counters: TcpCounters,
}

const MAX_BACKOFF: u32 = 6; // RTO doubles at most 64 times its base.

impl TcpSender {
    pub fn new(profile: &TcpProfile, bytes: Option<u64>) -> Self {
        Self {
            phase: Phase::Idle,
            cwnd: profile.initial_window as f64,
            ssthresh: profile.initial_ssthresh as f64,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            ecn_recover: 0,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            backoff: 0,
            bytes: bytes.and_then(NonZeroU64::new),
            total: packets_for(profile, bytes),
            rto_deadline: MaybeTime::NONE,
            rto_event_at: MaybeTime::NONE,
            epoch: 0,
            counters: TcpCounters::default(),
        }
    }

    /// Start a (fresh) transfer of `total` packets: a new connection state,
    /// as seed 000's on-off sources and each arriving flow have.
    pub fn restart(&mut self, profile: &TcpProfile) {
        let counters = std::mem::take(&mut self.counters);
        let epoch = self.epoch.wrapping_add(1);
        // The pending timer event stays in the list: remember it.
        let rto_event_at = self.rto_event_at;
        *self = Self::new(profile, self.bytes());
        self.counters = counters;
        self.epoch = epoch;
        self.rto_event_at = rto_event_at;
    }

    /// Payload bytes of this transfer; `None` for a long-lived source.
    #[inline]
    pub fn bytes(&self) -> Option<u64> {
        self.bytes.map(NonZeroU64::get)
    }

    pub fn is_in_congestion_avoidance(&self) -> bool {
        self.phase == Phase::Established && self.cwnd >= self.ssthresh
    }

    /// Packets sent and not yet acknowledged.
    pub fn outstanding(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// The sending window: cwnd capped by the receiver's window.
    pub fn window(&self, p: &TcpProfile) -> u32 {
        (self.cwnd as u32).min(p.receiver_window).max(1)
    }

    fn rto(&self, p: &TcpProfile) -> Time {
        let base = if self.has_rtt {
            let g = p.clock_granularity_ns as f64;
            ((self.srtt + (4.0 * self.rttvar).max(g)) as Time).max(p.min_rto_ns)
        } else {
            p.initial_rto_ns
        };
        (base << self.backoff).min(p.max_rto_ns)
    }

    fn arm_timer(&mut self, now: Time, p: &TcpProfile) {
        self.rto_deadline = MaybeTime::at(now + self.rto(p));
    }

    /// RFC 6298 (2.2, 2.3): fold one RTT sample into SRTT and RTTVAR.
    fn rtt_sample(&mut self, sample: f64) {
        if self.has_rtt {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - sample).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * sample;
        } else {
            self.srtt = sample;
            self.rttvar = sample / 2.0;
            self.has_rtt = true;
        }
    }

    /// Begin the connection at `now`.
    pub fn open(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        if p.syn {
            self.phase = Phase::SynSent;
            self.send_control(Kind::Syn, now, flow, p, out);
            self.arm_timer(now, p);
        } else {
            self.phase = Phase::Established;
            self.send_new(now, flow, p, out);
        }
    }

    fn send_control(&mut self, kind: Kind, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        out.packets.push(SimPacket {
            stamp: now,
            at: now,
            flow,
            route: 0,
            seq: 0,
            size: p.ack_size,
            epoch: self.epoch,
            hop: 0,
            kind,
            class: TrafficClass::Tcp,
            ecn: Ecn::NotEct,
            ece: false,
        });
    }

    fn send_data(&mut self, seq: u32, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        let size = payload_of(p, self.bytes(), seq) + p.header_size;
        self.counters.packets_sent += 1;
        self.counters.bytes_sent += size as u64;
        if seq < self.snd_max {
            self.counters.retransmissions += 1;
        }
        self.snd_max = self.snd_max.max(seq + 1);
        out.packets.push(SimPacket {
            stamp: now,
            at: now,
            flow,
            route: 0,
            seq,
            size,
            epoch: self.epoch,
            hop: 0,
            kind: Kind::Data,
            class: TrafficClass::Tcp,
            ecn: if p.ecn { Ecn::Ect } else { Ecn::NotEct },
            ece: false,
        });
        if self.rto_deadline.is_none() {
            self.arm_timer(now, p);
        }
    }

    /// Send what the window allows.
    fn send_new(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        let limit = self.snd_una.saturating_add(self.window(p)).min(self.total);
        while self.snd_nxt < limit {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.send_data(seq, now, flow, p, out);
        }
    }

    /// An ACK (or SYN-ACK) arrived. Returns true when the transfer completes.
    pub fn on_ack(&mut self, ack: &SimPacket, now: Time, p: &TcpProfile, out: &mut Outbox) -> bool {
        if ack.epoch != self.epoch || self.phase == Phase::Done {
            return false;
        }
        let flow = ack.flow;
        if ack.kind == Kind::SynAck {
            if self.phase == Phase::SynSent {
                self.rtt_sample(now.saturating_sub(ack.stamp) as f64);
                self.backoff = 0;
                self.rto_deadline = MaybeTime::NONE;
                self.phase = Phase::Established;
                self.send_new(now, flow, p, out);
            }
            return false;
        }
        if self.phase != Phase::Established {
            return false;
        }
        let acked = ack.seq;
        if acked > self.snd_una {
            self.on_new_ack(ack, now, p, out);
            if self.snd_una >= self.total {
                self.phase = Phase::Done;
                self.rto_deadline = MaybeTime::NONE;
                return true;
            }
        } else if acked == self.snd_una && self.snd_una < self.snd_max {
            self.on_dupack(now, flow, p, out);
        }
        false
    }

    fn on_new_ack(&mut self, ack: &SimPacket, now: Time, p: &TcpProfile, out: &mut Outbox) {
        let newly = ack.seq - self.snd_una;
        self.snd_una = ack.seq;
        // Go-back-N after a timeout: never resend what is now acknowledged.
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        self.rtt_sample(now.saturating_sub(ack.stamp) as f64);
        self.backoff = 0;

        if self.in_recovery {
            if p.variant == TcpVariant::Newreno && ack.seq < self.recover {
                // RFC 6582 partial ACK: retransmit the next hole, deflate the
                // window by what was acknowledged, stay in recovery.
                self.send_data(self.snd_una, now, ack.flow, p, out);
                self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                self.arm_timer(now, p);
                self.send_new(now, ack.flow, p, out);
                return;
            }
            // Full ACK (or Reno's first new ACK): deflate to ssthresh.
            self.in_recovery = false;
            self.cwnd = self.ssthresh;
        } else if ack.ece && p.ecn && self.snd_una > self.ecn_recover {
            // RFC 3168: halve once per window on ECN-Echo, no retransmission.
            self.ssthresh = (self.cwnd / 2.0).max(2.0);
            self.cwnd = self.ssthresh;
            self.ecn_recover = self.snd_max;
        } else if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        self.dupacks = 0;
        if self.snd_una < self.snd_max {
            self.arm_timer(now, p);
        } else {
            self.rto_deadline = MaybeTime::NONE;
        }
        self.send_new(now, ack.flow, p, out);
    }

    fn on_dupack(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        self.dupacks += 1;
        if self.in_recovery {
            // Window inflation: each dupACK means a packet left the network.
            self.cwnd += 1.0;
            self.send_new(now, flow, p, out);
            return;
        }
        if self.dupacks != p.dupack_threshold {
            return;
        }
        // RFC 6582 section 3.2: dupACKs that cover only data sent before the
        // last recovery do not start another one.
        if p.variant == TcpVariant::Newreno && self.snd_una <= self.recover && self.recover > 0 {
            return;
        }
        self.counters.fast_retransmits += 1;
        self.ssthresh = (self.window(p) as f64 / 2.0).floor().max(2.0);
        match p.variant {
            TcpVariant::Tahoe => {
                // Fast retransmit, then slow start from one packet, resending
                // everything after the hole (ns-2 Tahoe).
                self.cwnd = 1.0;
                self.snd_nxt = self.snd_una;
                self.dupacks = 0;
                self.arm_timer(now, p);
                self.send_new(now, flow, p, out);
            }
            TcpVariant::Reno | TcpVariant::Newreno => {
                self.in_recovery = true;
                self.recover = self.snd_max;
                self.cwnd = self.ssthresh + p.dupack_threshold as f64;
                self.send_data(self.snd_una, now, flow, p, out);
                self.arm_timer(now, p);
                self.send_new(now, flow, p, out);
            }
        }
    }

    /// The retransmission timer expired at `now` (its deadline has passed).
    pub fn on_timeout(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        self.rto_deadline = MaybeTime::NONE;
        match self.phase {
            Phase::SynSent => {
                self.counters.timeouts += 1;
                self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
                self.send_control(Kind::Syn, now, flow, p, out);
                self.arm_timer(now, p);
            }
            Phase::Established if self.snd_una < self.snd_max => {
                self.counters.timeouts += 1;
                self.ssthresh = (self.window(p) as f64 / 2.0).floor().max(2.0);
                self.cwnd = 1.0;
                self.snd_nxt = self.snd_una;
                self.dupacks = 0;
                self.in_recovery = false;
                self.recover = self.snd_max;
                self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
                self.send_new(now, flow, p, out);
                if self.rto_deadline.is_none() {
                    self.arm_timer(now, p);
                }
            }
            _ => {}
        }
    }
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

/// The receiving side (ns-2's TCPSink, or DelAckSink with delayed ACKs):
/// cumulative ACKs, out-of-order packets held in a bitmap.
#[derive(Clone, Debug, Default)]
pub struct TcpReceiver {
    /// Next in-order sequence number expected (the cumulative ACK).
    pub next_expected: u32,
    /// Packets received beyond `next_expected`, only while there is a
    /// hole: an in-order flow (nearly all the time) carries no map, 8
    /// bytes.
    above: Option<Box<Holes>>,
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

/// What a data arrival did at the receiver.
pub struct Delivery {
    /// Packets that became in-order (first delivery only: goodput).
    pub new_in_order: u32,
    /// First in-order sequence number among them.
    pub first: u32,
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
        let in_order = pkt.seq == self.next_expected;
        if pkt.seq >= self.next_expected {
            let idx = (pkt.seq - self.next_expected) as usize;
            match &mut self.above {
                // In order with no hole: the common case, no map at all.
                None if idx == 0 => self.next_expected += 1,
                above => {
                    let holes = above.get_or_insert_with(Default::default);
                    holes.insert(idx);
                    self.next_expected += holes.take_in_order();
                    if holes.is_empty() {
                        *above = None;
                    }
                }
            }
        }
        let new_in_order = self.next_expected - first;
        // Delay only an in-order packet that fills no hole and is not marked;
        // anything else is acknowledged at once (RFC 5681 section 4.2).
        let may_delay = p.delayed_ack && in_order && self.above.is_none() && !ce;
        self.echo = pkt.stamp;
        if may_delay && !self.unacked {
            self.unacked = true;
            self.delack_deadline = MaybeTime::at(now + p.delayed_ack_timeout_ns);
        } else {
            self.flush(pkt.flow, p, out);
        }
        Delivery {
            new_in_order,
            first,
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
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(variant: TcpVariant) -> TcpProfile {
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
        }
    }

    fn ack(seq: u32, stamp: Time) -> SimPacket {
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
        }
    }

    fn sent(out: &mut Outbox) -> Vec<u32> {
        out.packets.drain(..).map(|p| p.seq).collect()
    }

    /// Open a connection and grow it to `cwnd` = 10 with nothing lost:
    /// packets 0..=19 are outstanding... returns the sender.
    fn grown(variant: TcpVariant) -> (TcpSender, TcpProfile, Outbox) {
        let p = profile(variant);
        let mut s = TcpSender::new(&p, None);
        let mut out = Outbox::default();
        s.open(0, 0, &p, &mut out);
        assert_eq!(sent(&mut out), vec![0, 1]);
        // Slow start: each ACK adds one packet to cwnd and sends two.
        for a in 1..=8 {
            s.on_ack(&ack(a, 0), 100, &p, &mut out);
        }
        assert_eq!(s.cwnd, 10.0);
        assert_eq!(sent(&mut out), (2..18).collect::<Vec<_>>());
        (s, p, out)
    }

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let (mut s, mut p, mut out) = grown(TcpVariant::Reno);
        s.ssthresh = 10.0;
        p.initial_ssthresh = 10;
        s.on_ack(&ack(9, 0), 200, &p, &mut out);
        assert!(
            (s.cwnd - 10.1).abs() < 1e-9,
            "CA adds 1/cwnd per ACK, got {}",
            s.cwnd
        );
    }

    #[test]
    fn reno_fast_retransmit_and_recovery() {
        let (mut s, p, mut out) = grown(TcpVariant::Reno);
        // Packet 8 is lost: ACKs for 9, 10, 11 all say 8.
        for _ in 0..2 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        assert!(sent(&mut out).is_empty(), "two dupACKs do nothing");
        s.on_ack(&ack(8, 0), 300, &p, &mut out);
        // ssthresh = window/2 = 5, cwnd = 5 + 3, and packet 8 is resent.
        assert_eq!(s.ssthresh, 5.0);
        assert_eq!(s.cwnd, 8.0);
        assert_eq!(sent(&mut out), vec![8]);
        assert_eq!(s.counters.retransmissions, 1);
        // Inflation: with 10 outstanding (8..18), cwnd must pass 18 - 8 = 10
        // before new data goes out: the 6th dupACK brings cwnd to 11.
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 310, &p, &mut out);
        }
        assert_eq!(s.cwnd, 11.0);
        assert_eq!(sent(&mut out), vec![18]);
        // The retransmission's ACK ends recovery: cwnd deflates to ssthresh.
        s.on_ack(&ack(19, 0), 400, &p, &mut out);
        assert_eq!(s.cwnd, 5.0);
        assert_eq!(s.counters.fast_retransmits, 1);
    }

    #[test]
    fn newreno_partial_ack_retransmits_the_next_hole() {
        let (mut s, p, mut out) = grown(TcpVariant::Newreno);
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        assert_eq!(sent(&mut out), vec![8]);
        // 8 and 12 were lost: the retransmitted 8 brings a partial ACK of 12.
        s.on_ack(&ack(12, 0), 400, &p, &mut out);
        let resent = sent(&mut out);
        assert_eq!(resent.first(), Some(&12), "partial ACK resends 12 at once");
        assert!(s.in_recovery);
        // cwnd = 8 - 4 acknowledged + 1.
        assert_eq!(s.cwnd, 5.0);
        // Full ACK ends recovery with cwnd = ssthresh.
        s.on_ack(&ack(18, 0), 500, &p, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd, 5.0);
    }

    #[test]
    fn tahoe_restarts_from_one_packet_and_goes_back() {
        let (mut s, p, mut out) = grown(TcpVariant::Tahoe);
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        assert_eq!(s.cwnd, 1.0);
        assert_eq!(s.ssthresh, 5.0);
        assert_eq!(sent(&mut out), vec![8]);
        // The next ACK slides the window: 9 and 10 are resent (go-back-N).
        s.on_ack(&ack(9, 0), 400, &p, &mut out);
        assert_eq!(sent(&mut out), vec![9, 10]);
    }

    #[test]
    fn timeout_backs_off_and_restarts_from_one_packet() {
        let (mut s, p, mut out) = grown(TcpVariant::Reno);
        let first = s.rto_deadline.get().unwrap();
        s.on_timeout(first, 0, &p, &mut out);
        assert_eq!(s.cwnd, 1.0);
        assert_eq!(s.ssthresh, 5.0);
        assert_eq!(sent(&mut out), vec![8]);
        assert_eq!(s.counters.timeouts, 1);
        // The RTT was 100 ns: RTO = max(min_rto, srtt + max(G, 4 rttvar)) =
        // 200 ms, doubled once by the back-off.
        assert_eq!(s.rto_deadline.get(), Some(first + 400_000_000));
    }

    #[test]
    fn rto_follows_rfc6298() {
        let p = profile(TcpVariant::Reno);
        let mut s = TcpSender::new(&p, None);
        assert_eq!(s.rto(&p), 1_000_000_000, "initial RTO");
        s.rtt_sample(300e6);
        // SRTT = 300 ms, RTTVAR = 150 ms: RTO = 300 + 4 * 150 = 900 ms.
        assert_eq!(s.rto(&p), 900_000_000);
        s.rtt_sample(100e6);
        // RTTVAR = 3/4 150 + 1/4 |300 - 100| = 162.5; SRTT = 275.
        assert_eq!(s.rto(&p), 925_000_000);
    }

    #[test]
    fn finite_transfer_completes_with_a_short_last_packet() {
        let p = profile(TcpVariant::Reno);
        let mut s = TcpSender::new(&p, Some(2000)); // 960 + 960 + 80
        assert_eq!(s.total, 3);
        assert_eq!(payload_of(&p, Some(2000), 2), 80);
        let mut out = Outbox::default();
        s.open(0, 0, &p, &mut out);
        assert!(!s.on_ack(&ack(2, 0), 10, &p, &mut out));
        let last = out.packets.pop().unwrap();
        assert_eq!((last.seq, last.size), (2, 120));
        assert!(s.on_ack(&ack(3, 0), 20, &p, &mut out));
        assert_eq!(s.phase, Phase::Done);
        assert_eq!(s.rto_deadline.get(), None);
    }

    fn data(seq: u32) -> SimPacket {
        SimPacket {
            kind: Kind::Data,
            seq,
            size: 1000,
            ..ack(0, 7)
        }
    }

    #[test]
    fn receiver_acks_cumulatively_and_fills_holes() {
        let p = profile(TcpVariant::Reno);
        let mut r = TcpReceiver::default();
        let mut out = Outbox::default();
        let mut acks = |r: &mut TcpReceiver, seq| {
            let d = r.on_data(&data(seq), 0, &p, &mut out);
            (out.packets.pop().unwrap().seq, d.new_in_order)
        };
        assert_eq!(acks(&mut r, 0), (1, 1));
        assert_eq!(acks(&mut r, 2), (1, 0), "a hole gives a dupACK");
        assert_eq!(acks(&mut r, 3), (1, 0));
        assert_eq!(acks(&mut r, 1), (4, 3), "the hole filled: the ACK jumps");
        assert_eq!(acks(&mut r, 1), (4, 0), "a duplicate delivers nothing");
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
    }
}
