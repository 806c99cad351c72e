//! The sending side of a connection: its sequence space, the ACKs it
//! takes in, what it sends, its retransmission timer ([`super::rto`]). The
//! variants plug in as a window policy ([`super::cc`]) and a loss
//! recovery ([`super::recovery`]).

use aqmlab_qdisc::{Ecn, TrafficClass};

use super::cc::{Ack, Aimd, CongestionControl, Cubic, Policy, Window};
use super::recovery::{Progress, Recovery, Sack1};
use super::rto::{Backoff, Estimator};
use super::{mss, packets_for, payload_of, Outbox, Phase, TcpCounters};
use crate::packet::{Kind, SimPacket};
use crate::scenario::{TcpProfile, TcpVariant, TimeoutCwnd};
use crate::{MaybeTime, Time};

/// The sending side of one connection.
///
/// 128 bytes, two cache lines, which every ACK reads: what only some
/// variants keep (CUBIC's state, Sack1's scoreboard) is boxed, 8 bytes
/// here, so that a Reno flow carries none of it.
#[derive(Debug)]
pub struct TcpSender {
    pub phase: Phase,
    /// The congestion control's state.
    pub(super) window: Window,
    /// Lowest unacknowledged sequence number.
    pub snd_una: u32,
    /// Next sequence number to send (moves back on a timeout: go-back-N).
    pub(super) snd_nxt: u32,
    /// One past the highest sequence number ever sent.
    pub(super) snd_max: u32,
    /// Packets this transfer sends: all of it (`u32::MAX` for a
    /// long-lived source), or what was sent when the flow stopped.
    pub total: u32,
    /// Payload bytes of packet `total - 1`.
    last_payload: u32,
    /// Duplicate ACKs in a row (saturating: more than a window's worth
    /// cannot come, and 16 bits keep the sender in two cache lines).
    pub(super) dupacks: u16,
    pub(super) in_recovery: bool,
    /// A partial ACK came in this recovery (NewReno resets its timer at
    /// the first only).
    pub(super) partially_acked: bool,
    /// `snd_max` when the last recovery or timeout began (NewReno's and
    /// Sack1's `recover`).
    pub(super) recover: u32,
    /// No further ECN reduction until this is acknowledged.
    ecn_recover: u32,
    rtt: Estimator,
    backoff: Backoff,
    /// The variant's loss recovery (kept here: no profile read to find it).
    pub(super) recovery: Recovery,
    /// The application stopped writing (`stop`); and did so before the
    /// transfer was all sent, so that its end is no completion.
    stopped: bool,
    cut_short: bool,
    /// Retransmission timer deadline, if armed.
    pub rto_deadline: MaybeTime,
    /// Time of the simulator's pending `RtoTimer` event for this sender, if
    /// any (lazily cancelled: an event later than the deadline is left in
    /// the list and ignored). The simulator's bookkeeping, kept here beside
    /// the deadline so that an ACK reads none of the flow's last line.
    pub(crate) rto_event_at: MaybeTime,
    pub epoch: u16,
    pub counters: TcpCounters,
    variant: Option<Box<VariantState>>,
}

/// What only some variants keep: CUBIC's window state, Sack1's recovery
/// state (CUBIC has both, unless it recovers as NewReno).
#[derive(Debug)]
struct VariantState {
    cubic: Option<Cubic>,
    sack: Option<Sack1>,
}

impl VariantState {
    fn of(p: &TcpProfile) -> Option<Box<Self>> {
        let cubic = (p.variant == TcpVariant::Cubic).then(Cubic::default);
        let sack = p.uses_sack().then(Sack1::default);
        (cubic.is_some() || sack.is_some()).then(|| Box::new(Self { cubic, sack }))
    }
}

impl TcpSender {
    pub fn new(profile: &TcpProfile, bytes: Option<u64>) -> Self {
        let total = packets_for(profile, bytes);
        Self {
            phase: Phase::Idle,
            window: Window {
                cwnd: profile.initial_window as f64,
                ssthresh: profile.initial_ssthresh as f64,
            },
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            total,
            last_payload: payload_of(profile, bytes, total - 1),
            dupacks: 0,
            in_recovery: false,
            partially_acked: false,
            recover: 0,
            ecn_recover: 0,
            rtt: Estimator::new(profile),
            backoff: Backoff::default(),
            recovery: Recovery::of(profile),
            stopped: false,
            cut_short: false,
            rto_deadline: MaybeTime::NONE,
            rto_event_at: MaybeTime::NONE,
            epoch: 0,
            counters: TcpCounters::default(),
            variant: VariantState::of(profile),
        }
    }

    /// Start a fresh transfer of the same size. By default a new
    /// connection state, as each arriving flow has. A connection kept over
    /// `kept_idle` carries its window, slow-start threshold, RTT estimate
    /// and variant state over, as ns-2's `Agent/TCP` given more data
    /// (`advanceby`) does; but ns-2 leaves its retransmission timer armed
    /// when all is acknowledged (tcp.cc, `newtimer`), and when it fires with
    /// nothing outstanding (`slow_start_restart_`, on by default) the window
    /// closes to one packet, the threshold kept (`timeout`): so an idle time
    /// of an RTO or more restarts slow start.
    pub fn restart(&mut self, profile: &TcpProfile, kept_idle: Option<Time>) {
        debug_assert!(!self.stopped, "a stopped flow starts no transfer");
        let fresh = Self {
            total: self.total,
            last_payload: self.last_payload,
            counters: std::mem::take(&mut self.counters),
            epoch: self.epoch.wrapping_add(1),
            // The pending timer event stays in the list: remember it.
            rto_event_at: self.rto_event_at,
            ..Self::new(profile, None)
        };
        let old = std::mem::replace(self, fresh);
        if let Some(idle) = kept_idle {
            self.window = old.window;
            self.rtt = old.rtt;
            // Sequence numbers start again: the old timed packet is not this one.
            self.rtt.stop_timing(profile);
            self.backoff = old.backoff;
            self.variant = old.variant;
            if idle >= self.rtt.rto(self.backoff, profile) {
                self.window.cwnd = 1.0;
            }
        }
    }

    /// The application stops writing at the flow's `stop` time (ns-2's FTP
    /// `stop`: `advance 0`): nothing beyond what was sent goes out. What
    /// was sent is still delivered, retransmitted as it must be; the
    /// transfer ends when it is acknowledged, and is a completion only if
    /// all of it had been sent.
    pub fn stop(&mut self, p: &TcpProfile) {
        self.stopped = true;
        if self.phase == Phase::Done || self.snd_max >= self.total {
            return;
        }
        self.total = self.snd_max;
        self.last_payload = mss(p);
        self.cut_short = true;
        if self.snd_una >= self.total {
            self.phase = Phase::Done;
            self.rto_deadline = MaybeTime::NONE;
        }
    }

    /// Whether the application stopped writing: no new transfer starts.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.window.cwnd
    }

    #[inline]
    pub fn ssthresh(&self) -> f64 {
        self.window.ssthresh
    }

    pub fn is_in_congestion_avoidance(&self) -> bool {
        self.phase == Phase::Established && !self.window.in_slow_start()
    }

    /// Packets sent and not yet acknowledged.
    pub fn outstanding(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// One past the highest sequence number sent.
    pub fn highest_sent(&self) -> u32 {
        self.snd_max
    }

    /// The window policy, and the window it acts on.
    #[inline(always)]
    pub(super) fn policy(&mut self) -> (Policy<'_>, &mut Window) {
        let policy = match self.variant.as_deref_mut().and_then(|v| v.cubic.as_mut()) {
            Some(cubic) => Policy::Cubic(cubic),
            None => Policy::Aimd(Aimd),
        };
        (policy, &mut self.window)
    }

    /// Sack1's state (a sender whose recovery is Sack1 has it).
    pub(super) fn sack1(&mut self) -> &mut Sack1 {
        let state = self.variant.as_deref_mut().and_then(|v| v.sack.as_mut());
        state.expect("a Sack1 sender keeps its scoreboard")
    }

    pub(super) fn arm_timer(&mut self, now: Time, p: &TcpProfile) {
        self.rto_deadline = MaybeTime::at(now + self.rtt.rto(self.backoff, p));
    }

    /// Restart the timer for a fast retransmit (ns-2's `reset_rtx_timer()`,
    /// which also stops timing a packet that may now be sent again).
    pub(super) fn restart_timer_for_loss(&mut self, now: Time, p: &TcpProfile) {
        self.rtt.stop_timing(p);
        self.arm_timer(now, p);
    }

    /// Begin the connection at `now`.
    pub fn open(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        if p.syn {
            self.phase = Phase::SynSent;
            // ns-2 times its SYN as the first packet (its sequence number 0).
            self.rtt.on_first_send(0, now, p);
            self.send_control(Kind::Syn, now, flow, p, out);
            self.arm_timer(now, p);
        } else {
            self.establish(now, flow, p, out);
        }
    }

    fn establish(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        self.phase = Phase::Established;
        let snd_nxt = self.snd_nxt;
        self.policy().0.on_start(now, snd_nxt);
        self.send_new(now, flow, p, out);
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
            tag: 0,
        });
    }

    /// Send packet `seq` (new or again), arming the timer if it is not.
    pub(super) fn send_data(
        &mut self,
        seq: u32,
        now: Time,
        flow: u32,
        p: &TcpProfile,
        out: &mut Outbox,
    ) {
        let payload = if seq == self.total - 1 {
            self.last_payload
        } else {
            mss(p)
        };
        let size = payload + p.header_size;
        self.counters.packets_sent += 1;
        self.counters.bytes_sent += size as u64;
        if seq < self.snd_max {
            self.counters.retransmissions += 1;
        } else {
            self.rtt.on_first_send(seq, now, p);
        }
        self.snd_max = self.snd_max.max(seq + 1);
        let place = out.place_in_instant(now);
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
            tag: place,
        });
        if self.rto_deadline.is_none() {
            self.arm_timer(now, p);
        }
    }

    /// Send what the window allows, from `snd_nxt` on.
    #[inline(always)]
    pub(super) fn send_new(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        let limit = self
            .snd_una
            .saturating_add(self.window.usable(p))
            .min(self.total);
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
                self.rtt.on_new_ack(ack.stamp, now, &mut self.backoff, p);
                // It acknowledges the SYN, timed as packet 0.
                self.rtt
                    .on_ack_beyond_recovery(1, now, &mut self.backoff, p);
                self.rto_deadline = MaybeTime::NONE;
                self.establish(now, flow, p, out);
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
                return !self.cut_short;
            }
        } else if acked == self.snd_una && self.snd_una < self.snd_max {
            self.recovery.on_dupack(self, ack, now, p, out);
        }
        false
    }

    fn on_new_ack(&mut self, ack: &SimPacket, now: Time, p: &TcpProfile, out: &mut Outbox) {
        let newly = ack.seq - self.snd_una;
        self.snd_una = ack.seq;
        // Go-back-N after a timeout: never resend what is now acknowledged.
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        let rtt = now.saturating_sub(ack.stamp);
        self.rtt.on_new_ack(ack.stamp, now, &mut self.backoff, p);
        if self.in_recovery {
            let recovery = self.recovery;
            if recovery.on_ack_in_recovery(self, ack, newly, now, p, out) == Progress::Recovering {
                self.rtt
                    .on_partial_ack(ack.seq, recovery, &mut self.backoff, p);
                return;
            }
        } else {
            if ack.ece && p.ecn && self.snd_una > self.ecn_recover {
                // At most once a window of data (RFC 3168 section 6.1.2).
                let (mut policy, w) = self.policy();
                policy.on_ecn_echo(w, now, p);
                self.ecn_recover = self.snd_max;
            } else {
                let (snd_una, snd_nxt) = (self.snd_una, self.snd_nxt);
                let ack = || Ack {
                    acked: newly,
                    rtt,
                    now,
                    snd_una,
                    snd_nxt,
                };
                let (mut policy, w) = self.policy();
                policy.grow(w, ack, p);
            }
        }
        self.rtt
            .on_ack_beyond_recovery(ack.seq, now, &mut self.backoff, p);
        self.dupacks = 0;
        if self.snd_una < self.snd_max {
            self.arm_timer(now, p);
        } else {
            self.rto_deadline = MaybeTime::NONE;
        }
        self.send_new(now, ack.flow, p, out);
    }

    /// Duplicate ACKs signalled a loss: the window policy's reduction.
    pub(super) fn reduce_on_loss(&mut self, now: Time, p: &TcpProfile) {
        self.counters.fast_retransmits += 1;
        let (mut policy, w) = self.policy();
        policy.on_loss(w, now, p);
    }

    /// The retransmission timer expired at `now` (its deadline has passed).
    pub fn on_timeout(&mut self, now: Time, flow: u32, p: &TcpProfile, out: &mut Outbox) {
        self.rto_deadline = MaybeTime::NONE;
        match self.phase {
            Phase::SynSent => {
                self.counters.timeouts += 1;
                self.rtt.on_timeout(&mut self.backoff, p);
                self.send_control(Kind::Syn, now, flow, p, out);
                self.arm_timer(now, p);
            }
            Phase::Established if self.snd_una < self.snd_max => {
                self.counters.timeouts += 1;
                let snd_nxt = self.snd_nxt;
                let (mut policy, w) = self.policy();
                policy.on_timeout(w, now, snd_nxt, p);
                if p.timeout_cwnd == TimeoutCwnd::Half {
                    w.cwnd = w.ssthresh;
                }
                self.snd_nxt = self.snd_una;
                self.dupacks = 0;
                self.in_recovery = false;
                self.recover = self.snd_max;
                self.rtt.on_timeout(&mut self.backoff, p);
                self.recovery.on_timeout(self);
                self.send_new(now, flow, p, out);
                if self.rto_deadline.is_none() {
                    self.arm_timer(now, p);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::RttEstimator;
    use crate::tcp::testing::{ack, grown, profile, sent};

    #[test]
    fn two_cache_lines() {
        assert!(std::mem::size_of::<TcpSender>() <= 128);
    }

    /// Seed 000's "dup. only" Reno: a timeout halves the window as a fast
    /// retransmit does, and resends from the first unacknowledged packet.
    #[test]
    fn timeout_may_halve_instead_of_restarting() {
        let (mut s, mut p, mut out) = grown(TcpVariant::Reno);
        p.timeout_cwnd = TimeoutCwnd::Half;
        let first = s.rto_deadline.get().unwrap();
        s.on_timeout(first, 0, &p, &mut out);
        assert_eq!((s.ssthresh(), s.cwnd()), (5.0, 5.0));
        assert_eq!(sent(&mut out), vec![8, 9, 10, 11, 12]);
        assert_eq!(s.counters.timeouts, 1);
    }

    #[test]
    fn timeout_backs_off_and_restarts_from_one_packet() {
        for variant in [TcpVariant::Reno, TcpVariant::Sack, TcpVariant::Cubic] {
            let (mut s, p, mut out) = grown(variant);
            let first = s.rto_deadline.get().unwrap();
            s.on_timeout(first, 0, &p, &mut out);
            assert_eq!(s.cwnd(), 1.0);
            let ssthresh = if variant == TcpVariant::Cubic {
                7.0
            } else {
                5.0
            };
            assert_eq!(s.ssthresh(), ssthresh, "{variant:?}");
            assert_eq!(sent(&mut out), vec![8]);
            assert_eq!(s.counters.timeouts, 1);
            // The RTT was 100 ns: RTO = max(min_rto, srtt + max(G, 4 rttvar))
            // = 200 ms, doubled once by the back-off.
            assert_eq!(s.rto_deadline.get(), Some(first + 400_000_000));
        }
    }

    const MS: Time = 1_000_000;

    /// A Reno sender with ns-2's estimator, its first packets sent at 0.
    fn opened_with_ns2_estimator() -> (TcpSender, TcpProfile, Outbox) {
        let p = TcpProfile {
            rtt_estimator: RttEstimator::Ns2,
            ..profile(TcpVariant::Reno)
        };
        let mut s = TcpSender::new(&p, None);
        let mut out = Outbox::default();
        s.open(0, 0, &p, &mut out);
        assert_eq!(sent(&mut out), vec![0, 1]);
        (s, p, out)
    }

    /// ns-2 times packet 0, then 2 (sent when 0's sample was taken): the
    /// ACK of 1 gives no sample, whatever its echo says.
    #[test]
    fn ns2_samples_only_the_timed_packet() {
        let (mut s, p, mut out) = opened_with_ns2_estimator();
        s.on_ack(&ack(1, 0), 100 * MS, &p, &mut out);
        assert_eq!(sent(&mut out), vec![2, 3]);
        // 10 ticks: SRTT 10, RTTVAR 5, RTO 30 ticks.
        assert_eq!(s.rto_deadline.get(), Some(400 * MS));
        s.on_ack(&ack(2, 390 * MS), 400 * MS, &p, &mut out);
        assert_eq!(s.rto_deadline.get(), Some(700 * MS), "no sample");
        s.on_ack(&ack(3, 0), 500 * MS, &p, &mut out);
        // 40 ticks: SRTT 110 / 8, RTTVAR 45 / 4: RTO 45 + 13 = 58 ticks.
        assert_eq!(s.rto_deadline.get(), Some(1080 * MS));
    }

    /// After a timeout, ACKs of packets sent before it (timed none) keep
    /// the RTO backed off; the ACK of the first new packet ends it.
    #[test]
    fn ns2_backoff_ends_only_with_the_timed_packet() {
        let (mut s, p, mut out) = opened_with_ns2_estimator();
        s.on_ack(&ack(1, 0), 100 * MS, &p, &mut out);
        sent(&mut out);
        s.on_timeout(400 * MS, 0, &p, &mut out);
        assert_eq!(sent(&mut out), vec![1]);
        assert_eq!(s.rto_deadline.get(), Some(1000 * MS), "300 ms doubled");
        s.on_ack(&ack(2, 450 * MS), 500 * MS, &p, &mut out);
        assert_eq!(sent(&mut out), vec![2, 3], "resent: timed neither");
        assert_eq!(s.rto_deadline.get(), Some(1100 * MS), "still doubled");
        s.on_ack(&ack(4, 550 * MS), 600 * MS, &p, &mut out);
        assert_eq!(sent(&mut out), vec![4, 5]);
        assert_eq!(s.rto_deadline.get(), Some(1200 * MS), "still doubled");
        s.on_ack(&ack(5, 0), 700 * MS, &p, &mut out);
        // 4 took 10 ticks: t_rttvar 20 -> 15, t_rtxcur 15 + 80 / 8 = 25 ticks.
        assert_eq!(s.rto_deadline.get(), Some(950 * MS));
    }

    /// ns-2 times its SYN like a data packet: the SYN-ACK gives a sample,
    /// unless the SYN was sent again.
    #[test]
    fn ns2_samples_the_syn_sent_once() {
        let p = TcpProfile {
            syn: true,
            rtt_estimator: RttEstimator::Ns2,
            ..profile(TcpVariant::Reno)
        };
        let syn_ack = SimPacket {
            kind: Kind::SynAck,
            ..ack(0, 0)
        };
        let mut out = Outbox::default();
        let mut s = TcpSender::new(&p, None);
        s.open(0, 0, &p, &mut out);
        s.on_ack(&syn_ack, 100 * MS, &p, &mut out);
        assert_eq!(s.rto_deadline.get(), Some(400 * MS), "10 ticks: 30");
        let mut s = TcpSender::new(&p, None);
        s.open(0, 0, &p, &mut out);
        s.on_timeout(p.initial_rto_ns, 0, &p, &mut out);
        s.on_ack(&syn_ack, 1100 * MS, &p, &mut out);
        assert_eq!(
            s.rto_deadline.get(),
            Some(3100 * MS),
            "no sample: 1 s doubled"
        );
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

    /// Stopped with 8..18 outstanding: the ACKs that follow send nothing
    /// new, a loss among them is still repaired, and the end of the data
    /// sent ends the flow, no completion.
    #[test]
    fn a_stopped_sender_sends_nothing_new_and_ends_with_its_data() {
        let (mut s, p, mut out) = grown(TcpVariant::Reno);
        s.stop(&p);
        assert!(s.is_stopped());
        assert_eq!(s.total, 18);
        s.on_ack(&ack(9, 0), 200, &p, &mut out);
        assert!(
            sent(&mut out).is_empty(),
            "the window opens, but nothing new"
        );
        // 9 is lost: three dupACKs resend it, nothing beyond 17 goes out.
        for _ in 0..6 {
            s.on_ack(&ack(9, 0), 300, &p, &mut out);
        }
        assert_eq!(sent(&mut out), vec![9]);
        assert!(!s.on_ack(&ack(17, 0), 400, &p, &mut out));
        assert!(
            !s.on_ack(&ack(18, 0), 410, &p, &mut out),
            "the end of a stopped transfer is no completion"
        );
        assert_eq!(s.phase, Phase::Done);
        assert!(sent(&mut out).is_empty());
        assert_eq!(s.rto_deadline.get(), None);
    }

    #[test]
    fn a_stop_after_the_last_packet_changes_nothing() {
        let p = profile(TcpVariant::Reno);
        let mut s = TcpSender::new(&p, Some(1920)); // two packets
        let mut out = Outbox::default();
        s.open(0, 0, &p, &mut out);
        s.stop(&p);
        assert_eq!(s.total, 2);
        assert!(
            s.on_ack(&ack(2, 0), 10, &p, &mut out),
            "all of it was sent: it completes"
        );
        // Stopped in the handshake, nothing was sent: done at once.
        let mut q = profile(TcpVariant::Reno);
        q.syn = true;
        let mut s = TcpSender::new(&q, None);
        s.open(0, 0, &q, &mut out);
        s.stop(&q);
        assert_eq!(s.phase, Phase::Done);
        assert_eq!(s.rto_deadline.get(), None);
    }

    #[test]
    fn restart_keeps_the_counters_and_a_new_epoch() {
        let p = profile(TcpVariant::Cubic);
        let mut s = TcpSender::new(&p, Some(5000));
        let mut out = Outbox::default();
        s.open(0, 0, &p, &mut out);
        s.on_ack(&ack(2, 0), 10, &p, &mut out);
        let sent_before = s.counters.packets_sent;
        s.restart(&p, None);
        assert_eq!((s.phase, s.snd_una, s.epoch), (Phase::Idle, 0, 1));
        assert_eq!(s.total, 6);
        assert_eq!(s.cwnd(), 2.0);
        assert_eq!(s.counters.packets_sent, sent_before);
    }

    #[test]
    fn a_kept_connection_carries_its_window_over_a_short_idle_time_only() {
        let p = profile(TcpVariant::Reno);
        let opened = || {
            let mut s = TcpSender::new(&p, Some(50_000));
            let mut out = Outbox::default();
            s.open(0, 0, &p, &mut out);
            for seq in 1..=8 {
                s.on_ack(&ack(seq, 0), 10 * seq as Time, &p, &mut out);
            }
            s.window.ssthresh = 7.0;
            s
        };
        let s = opened();
        let (cwnd, rto) = (s.window.cwnd, s.rtt.rto(s.backoff, &p));
        assert!(
            cwnd > p.initial_window as f64,
            "slow start opened it: {cwnd}"
        );
        let restarted = |idle: Option<Time>| {
            let mut s = opened();
            s.restart(&p, idle);
            assert_eq!((s.phase, s.snd_una, s.epoch), (Phase::Idle, 0, 1));
            (s.window.cwnd, s.window.ssthresh)
        };
        // Within an RTO the window is kept; past it ns-2's timer has closed
        // it to one packet, the threshold kept; a new connection has neither.
        assert_eq!(restarted(Some(rto - 1)), (cwnd, 7.0));
        assert_eq!(restarted(Some(rto)), (1.0, 7.0));
        let fresh = TcpSender::new(&p, None).window;
        assert_eq!(restarted(None), (fresh.cwnd, fresh.ssthresh));
    }
}
