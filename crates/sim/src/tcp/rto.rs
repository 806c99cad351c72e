//! The retransmission timeout: an RTT estimate, the timeout it gives, and
//! its exponential back-off, by one of two estimators (the profile's
//! `rtt_estimator`):
//!
//! - RFC 6298's, folded from an RTT sample on every new ACK (the send
//!   time the receiver echoes, as with timestamps);
//! - ns-2 2.35's (tcp/tcp.cc), Jacobson's 1988 estimator in integer clock
//!   ticks, fed by one timed packet at a time (Karn's rule: none that is
//!   sent again), whose back-off ends only when the timed packet is
//!   acknowledged. Not modelled: its back-off on ECN echoes at a window of
//!   one (`ecn()`, `ecn_backoff_`).

use crate::scenario::{RttEstimator, TcpProfile};
use crate::tcp::recovery::Recovery;
use crate::Time;

/// Most doublings of RFC 6298's RTO: 64 times its base at most (section
/// 5.5 leaves the bound to the implementation; ns-2's is 64).
const MAX_BACKOFF: u8 = 6;

/// The estimator's state, RFC 6298's or ns-2's as the profile says, in the
/// same 16 bytes: an enum's tag would pad the sender past its two cache
/// lines. Both are plain numbers, for which any bits are a value.
#[derive(Clone, Copy, Debug)]
pub struct Estimator([u64; 2]);

impl Estimator {
    pub fn new(p: &TcpProfile) -> Self {
        match p.rtt_estimator {
            RttEstimator::Rfc6298 => Self::from(Rfc6298::default()),
            RttEstimator::Ns2 => Self::from(Ns2::default()),
        }
    }

    /// The timeout, backed off.
    #[inline]
    pub fn rto(&self, backoff: Backoff, p: &TcpProfile) -> Time {
        match p.rtt_estimator {
            RttEstimator::Rfc6298 => Rfc6298::from(*self).rto(backoff, p),
            RttEstimator::Ns2 => Ns2::from(*self).rto(backoff, p),
        }
    }

    /// Packet `seq` goes out for the first time: ns-2 times it if it
    /// times no other (tcp.cc, `output()`).
    #[inline]
    pub fn on_first_send(&mut self, seq: u32, now: Time, p: &TcpProfile) {
        if p.rtt_estimator == RttEstimator::Ns2 {
            self.update(|s: &mut Ns2| s.time(seq, now, p));
        }
    }

    /// Every new ACK (and the SYN-ACK), before loss recovery reads it: RFC
    /// 6298 samples the time since the send time it echoes, and ends the
    /// back-off.
    #[inline]
    pub fn on_new_ack(&mut self, echo: Time, now: Time, backoff: &mut Backoff, p: &TcpProfile) {
        if p.rtt_estimator == RttEstimator::Rfc6298 {
            self.update(|s: &mut Rfc6298| s.sample(now.saturating_sub(echo) as f64));
            backoff.reset();
        }
    }

    /// A new ACK that leaves no loss recovery running, up to `next`
    /// (exclusive): ns-2's `newack()` samples the timed packet if it is
    /// acknowledged, and only then ends the back-off.
    #[inline]
    pub fn on_ack_beyond_recovery(
        &mut self,
        next: u32,
        now: Time,
        backoff: &mut Backoff,
        p: &TcpProfile,
    ) {
        if p.rtt_estimator == RttEstimator::Ns2
            && self.update(|s: &mut Ns2| s.sample_if_acked(next, now, p))
        {
            backoff.reset();
        }
    }

    /// A partial ACK, up to `next`, once the recovery has restarted the
    /// timer if it does (ns-2 restarts it with the back-off as it was). It
    /// gives no sample. NewReno's ends the back-off and the timing if it
    /// acknowledges the timed packet (tcp-newreno.cc, `partialnewack()`);
    /// Sack1's ends the back-off whatever it acknowledges (tcp-sack1.cc,
    /// `recv()`).
    pub fn on_partial_ack(
        &mut self,
        next: u32,
        recovery: Recovery,
        backoff: &mut Backoff,
        p: &TcpProfile,
    ) {
        if p.rtt_estimator != RttEstimator::Ns2 {
            return;
        }
        let ends_backoff =
            recovery == Recovery::Sack1 || self.update(|s: &mut Ns2| s.forget_if_acked(next));
        if ends_backoff {
            backoff.reset();
        }
    }

    /// The timer restarts for a loss (ns-2's `reset_rtx_timer()`): the
    /// timed packet may be sent again, which would make its sample
    /// ambiguous (Karn's rule), so ns-2 times none.
    #[inline]
    pub fn stop_timing(&mut self, p: &TcpProfile) {
        if p.rtt_estimator == RttEstimator::Ns2 {
            self.update(|s: &mut Ns2| s.timed = NOT_TIMING);
        }
    }

    /// The timer expired: back off (RFC 6298 section 5.5; ns-2's
    /// `rtt_backoff()`, and its `reset_rtx_timer()` stops the timing).
    pub fn on_timeout(&mut self, backoff: &mut Backoff, p: &TcpProfile) {
        match p.rtt_estimator {
            RttEstimator::Rfc6298 => backoff.0 = (backoff.0 + 1).min(MAX_BACKOFF),
            RttEstimator::Ns2 => self.update(|s: &mut Ns2| s.back_off(backoff, p)),
        }
    }

    /// Read the state as `S`, change it, write it back.
    #[inline(always)]
    fn update<S, R>(&mut self, change: impl FnOnce(&mut S) -> R) -> R
    where
        S: From<Self> + Into<Self>,
    {
        let mut state = S::from(*self);
        let result = change(&mut state);
        *self = state.into();
        result
    }
}

/// The RTO `base` doubled `backoff` times, at most `max_rto`.
#[inline]
fn backed_off(base: Time, backoff: Backoff, p: &TcpProfile) -> Time {
    base.saturating_mul(1 << backoff.0).min(p.max_rto_ns)
}

/// SRTT and RTTVAR (RFC 6298 section 2), in nanoseconds. SRTT is NaN until
/// the first sample, in place of a flag.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rfc6298 {
    srtt: f64,
    rttvar: f64,
}

impl Default for Rfc6298 {
    fn default() -> Self {
        Self {
            srtt: f64::NAN,
            rttvar: 0.0,
        }
    }
}

impl From<Rfc6298> for Estimator {
    #[inline(always)]
    fn from(s: Rfc6298) -> Self {
        Self([s.srtt.to_bits(), s.rttvar.to_bits()])
    }
}

impl From<Estimator> for Rfc6298 {
    #[inline(always)]
    fn from(e: Estimator) -> Self {
        Self {
            srtt: f64::from_bits(e.0[0]),
            rttvar: f64::from_bits(e.0[1]),
        }
    }
}

impl Rfc6298 {
    fn has_sample(&self) -> bool {
        !self.srtt.is_nan()
    }

    /// RFC 6298 (2.2, 2.3): fold one RTT sample (ns) into SRTT and RTTVAR.
    fn sample(&mut self, rtt: f64) {
        if self.has_sample() {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - rtt).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * rtt;
        } else {
            self.srtt = rtt;
            self.rttvar = rtt / 2.0;
        }
    }

    /// RTO = max(min_rto, SRTT + max(G, 4 RTTVAR)) (2.2-2.4; the initial
    /// RTO before a sample, 2.1), doubled `backoff` times (5.5), at most
    /// `max_rto`.
    fn rto(&self, backoff: Backoff, p: &TcpProfile) -> Time {
        let base = if self.has_sample() {
            let g = p.clock_granularity_ns as f64;
            let variation = 4.0 * self.rttvar;
            // Neither is NaN, both are finite and non-negative, and an RTO
            // is far below 2^63 ns: a plain comparison and the signed
            // conversion give what `f64::max` and `as u64` do, with fewer
            // instructions on every ACK.
            let rto = self.srtt + if variation > g { variation } else { g };
            (rto as i64 as Time).max(p.min_rto_ns)
        } else {
            p.initial_rto_ns
        };
        backed_off(base, backoff, p)
    }
}

/// `Ns2::timed` when no packet is being timed (ns-2's `rtt_active_` 0).
const NOT_TIMING: u32 = u32::MAX;

/// ns-2's estimator (tcp.cc): `t_srtt_` (8 SRTT) and `t_rttvar_` (4
/// RTTVAR), in ticks of the clock granularity, and the packet being timed
/// with the tick it was sent in (modulo 2^32).
///
/// ns-2 also keeps the RTO, `t_rtxcur_`, which it sets from the other two
/// at each sample, RTTVAR + SRTT in whole ticks. It needs no field: the two
/// give it at any time, even after a back-off moved SRTT into RTTVAR
/// (`rtt_backoff()`), which leaves that sum as it was; and RTTVAR, at
/// least 1 after a sample, is 0 before the first (ns-2's `rttvar_init_`
/// is overwritten by it unread).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ns2 {
    srtt: i32,
    rttvar: i32,
    timed: u32,
    sent_tick: u32,
}

impl Default for Ns2 {
    fn default() -> Self {
        Self {
            srtt: 0,
            rttvar: 0,
            timed: NOT_TIMING,
            sent_tick: 0,
        }
    }
}

impl From<Ns2> for Estimator {
    #[inline(always)]
    fn from(s: Ns2) -> Self {
        let pair = |low: u32, high: u32| u64::from(low) | u64::from(high) << 32;
        Self([
            pair(s.srtt as u32, s.rttvar as u32),
            pair(s.timed, s.sent_tick),
        ])
    }
}

impl From<Estimator> for Ns2 {
    #[inline(always)]
    fn from(e: Estimator) -> Self {
        let [first, second] = e.0;
        Self {
            srtt: first as u32 as i32,
            rttvar: (first >> 32) as u32 as i32,
            timed: second as u32,
            sent_tick: (second >> 32) as u32,
        }
    }
}

/// ns-2 keeps an update's difference in a C `short` (`rtt_update()`).
#[inline]
fn short(value: i32) -> i32 {
    value as i16 as i32
}

impl Ns2 {
    /// The tick of the clock at `now` (modulo 2^32: only differences
    /// count). ns-2 starts each agent's clock at a random boot time within
    /// a tick (`reset()`: `boot_time_`); every flow here starts it half a
    /// tick in, that time's mean, which keeps the ticks off the round
    /// times at which flows start.
    fn tick(now: Time, p: &TcpProfile) -> u32 {
        let tick = p.clock_granularity_ns;
        ((now + tick / 2) / tick) as u32
    }

    fn time(&mut self, seq: u32, now: Time, p: &TcpProfile) {
        if self.timed == NOT_TIMING {
            self.timed = seq;
            self.sent_tick = Self::tick(now, p);
        }
    }

    /// Whether an ACK up to `next` acknowledges the timed packet (ns-2's
    /// ACK carries the highest packet received in order, `next - 1`, and
    /// tests `seqno >= rtt_seq_`); if so, stop timing.
    fn forget_if_acked(&mut self, next: u32) -> bool {
        let acked = self.timed != NOT_TIMING && next > self.timed;
        if acked {
            self.timed = NOT_TIMING;
        }
        acked
    }

    fn sample_if_acked(&mut self, next: u32, now: Time, p: &TcpProfile) -> bool {
        let sent_tick = self.sent_tick;
        let acked = self.forget_if_acked(next);
        if acked {
            // Tick boundaries crossed since the send, as ns-2's
            // int((tao + fmod(sendtime + boot_time_, tick)) / tick) counts.
            let ticks = Self::tick(now, p).wrapping_sub(sent_tick) as i32;
            self.fold(ticks.max(1));
        }
        acked
    }

    /// `rtt_update()`: Jacobson's SRTT += (m - SRTT) / 8 and RTTVAR +=
    /// (|m - SRTT| - RTTVAR) / 4 in fixed point, for a sample of `rtt`
    /// ticks; the first sample (or the first after a back-off cleared
    /// SRTT) starts them at m and m / 2.
    fn fold(&mut self, rtt: i32) {
        if self.srtt == 0 {
            self.srtt = rtt << 3;
            self.rttvar = rtt << 1;
            return;
        }
        let delta = short(rtt.wrapping_sub(self.srtt >> 3));
        self.srtt = self.srtt.wrapping_add(delta).max(1);
        let delta = short(short(delta.abs()) - (self.rttvar >> 2));
        self.rttvar = self.rttvar.wrapping_add(delta).max(1);
    }

    /// `t_rtxcur_`: the initial RTO before a sample, then SRTT + 4 RTTVAR
    /// in whole ticks (nanoseconds).
    fn rtxcur(&self, p: &TcpProfile) -> Time {
        if self.rttvar == 0 {
            return p.initial_rto_ns;
        }
        let ticks = self.rttvar.wrapping_add(self.srtt >> 3);
        ticks as u32 as Time * p.clock_granularity_ns
    }

    /// `rtt_timeout()` with `rfc2988_`: the RTO, at least min_rto, backed
    /// off, at most max_rto, and never below two ticks.
    fn rto(&self, backoff: Backoff, p: &TcpProfile) -> Time {
        let base = self.rtxcur(p).max(p.min_rto_ns);
        backed_off(base, backoff, p).max(2 * p.clock_granularity_ns)
    }

    /// `rtt_backoff()`, and the end of the timing (`reset_rtx_timer()`):
    /// double to 64 times, and beyond while under max_rto; backed off more
    /// than 8 times, SRTT is cleared into RTTVAR, so that the next sample
    /// starts the estimate afresh.
    fn back_off(&mut self, backoff: &mut Backoff, p: &TcpProfile) {
        if backoff.0 < MAX_BACKOFF || self.rto(*backoff, p) < p.max_rto_ns {
            backoff.0 += 1;
        }
        if backoff.0 > 3 {
            self.rttvar = self.rttvar.wrapping_add(self.srtt >> 3);
            self.srtt = 0;
        }
        self.timed = NOT_TIMING;
    }
}

/// How many times the RTO doubled: the exponent of ns-2's `t_backoff_`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backoff(u8);

impl Backoff {
    /// Back to the base RTO.
    #[inline]
    pub fn reset(&mut self) {
        self.0 = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::profile;

    const MS: Time = 1_000_000;

    fn ns2_profile() -> TcpProfile {
        TcpProfile {
            rtt_estimator: RttEstimator::Ns2,
            ..profile(TcpVariant::Reno)
        }
    }

    #[test]
    fn both_states_fit_in_16_bytes_and_survive_the_round_trip() {
        assert_eq!(std::mem::size_of::<Estimator>(), 16);
        let rfc = Rfc6298 {
            srtt: 0.1,
            rttvar: f64::NAN,
        };
        assert_eq!(Rfc6298::from(Estimator::from(rfc)).srtt, 0.1);
        let ns2 = Ns2 {
            srtt: -5,
            rttvar: i32::MAX,
            timed: 7,
            sent_tick: u32::MAX - 1,
        };
        assert_eq!(Ns2::from(Estimator::from(ns2)), ns2);
    }

    #[test]
    fn rto_follows_rfc6298() {
        let p = profile(TcpVariant::Reno);
        let mut r = Estimator::new(&p);
        let mut none = Backoff::default();
        assert_eq!(r.rto(none, &p), 1_000_000_000, "initial RTO");
        r.on_new_ack(0, 300 * MS, &mut none, &p);
        // SRTT = 300 ms, RTTVAR = 150 ms: RTO = 300 + 4 * 150 = 900 ms.
        assert_eq!(r.rto(none, &p), 900_000_000);
        r.on_new_ack(1000 * MS, 1100 * MS, &mut none, &p);
        // RTTVAR = 3/4 150 + 1/4 |300 - 100| = 162.5; SRTT = 275.
        assert_eq!(r.rto(none, &p), 925_000_000);
    }

    #[test]
    fn rfc6298_backoff_doubles_to_its_bound_and_the_cap() {
        let p = profile(TcpVariant::Reno);
        let mut r = Estimator::new(&p);
        let mut b = Backoff::default();
        r.on_new_ack(0, 100 * MS, &mut b, &p);
        // 100 + max(10, 4 * 50) = 300 ms, doubled per timeout.
        r.on_timeout(&mut b, &p);
        r.on_timeout(&mut b, &p);
        assert_eq!(r.rto(b, &p), 1_200_000_000);
        for _ in 0..10 {
            r.on_timeout(&mut b, &p);
        }
        assert_eq!(r.rto(b, &p), 64 * 300_000_000, "at most 64 times");
        let mut kept = b;
        r.on_ack_beyond_recovery(100, 0, &mut kept, &p);
        assert_eq!(kept, b, "ns-2's rule is not RFC 6298's");
        r.on_new_ack(0, 2000 * MS, &mut kept, &p);
        assert_eq!(r.rto(b, &p), p.max_rto_ns, "capped at max_rto");
        assert_eq!(kept, Backoff::default(), "a new ACK ends the back-off");
    }

    /// Samples of 25, 30, 12 and 40 ticks of 10 ms, by hand from tcp.cc's
    /// `rtt_update()` (SRTT scaled by 8, RTTVAR by 4) and `t_rtxcur_` =
    /// ((RTTVAR << 3) + SRTT) >> 3 ticks:
    ///
    /// | sample | delta | t_srtt | delta' | t_rttvar | t_rtxcur |
    /// |---|---|---|---|---|---|
    /// | 25 | (first) | 200 | | 50 | (400 + 200) >> 3 = 75 |
    /// | 30 | 30 - 25 = 5 | 205 | 5 - 12 = -7 | 43 | (344 + 205) >> 3 = 68 |
    /// | 12 | 12 - 25 = -13 | 192 | 13 - 10 = 3 | 46 | (368 + 192) >> 3 = 70 |
    /// | 40 | 40 - 24 = 16 | 208 | 16 - 11 = 5 | 51 | (408 + 208) >> 3 = 77 |
    #[test]
    fn ns2_samples_follow_rtt_update() {
        let p = ns2_profile();
        let mut r = Estimator::new(&p);
        let mut b = Backoff::default();
        assert_eq!(
            r.rto(b, &p),
            p.initial_rto_ns,
            "rtxcur_init_ before a sample"
        );
        let mut now = 0;
        for (rtt, srtt, rttvar, rto_ticks) in [
            (25, 200, 50, 75),
            (30, 205, 43, 68),
            (12, 192, 46, 70),
            (40, 208, 51, 77),
        ] {
            r.on_first_send(9, now, &p);
            now += rtt * 10 * MS;
            r.on_ack_beyond_recovery(10, now, &mut b, &p);
            let s = Ns2::from(r);
            assert_eq!((s.srtt, s.rttvar, s.timed), (srtt, rttvar, NOT_TIMING));
            assert_eq!(r.rto(b, &p), rto_ticks * 10 * MS);
        }
    }

    /// A sample counts the tick boundaries crossed, which fall half a tick
    /// into each 10 ms: 4.99 ms from 0 crosses none, which counts as one;
    /// 0.01 ms from 4.99 ms one; 29.99 ms from 5 ms two; 35 ms from 0 four.
    #[test]
    fn ns2_samples_count_ticks_crossed_at_least_one() {
        let p = ns2_profile();
        for (sent, acked, ticks) in [
            (0, 4_990_000, 1),
            (4_990_000, 5 * MS, 1),
            (5 * MS, 34_990_000, 2),
            (0, 35 * MS, 4),
        ] {
            let mut r = Estimator::new(&p);
            r.on_first_send(0, sent, &p);
            r.on_ack_beyond_recovery(1, acked, &mut Backoff::default(), &p);
            assert_eq!(Ns2::from(r).srtt, ticks << 3, "{sent} -> {acked}");
        }
    }

    #[test]
    fn ns2_times_one_packet_and_only_an_ack_of_it_ends_the_backoff() {
        let p = ns2_profile();
        let mut r = Estimator::new(&p);
        let mut b = Backoff::default();
        r.on_first_send(4, 0, &p);
        r.on_first_send(5, 10 * MS, &p);
        assert_eq!(Ns2::from(r).timed, 4, "the first of them");
        r.on_timeout(&mut b, &p);
        assert_eq!(b, Backoff(1));
        r.on_first_send(6, 20 * MS, &p);
        r.on_new_ack(0, 30 * MS, &mut b, &p);
        r.on_ack_beyond_recovery(6, 30 * MS, &mut b, &p);
        assert_eq!(b, Backoff(1), "6 is not acknowledged");
        assert_eq!(r.rto(b, &p), 2 * p.initial_rto_ns);
        r.on_ack_beyond_recovery(7, 120 * MS, &mut b, &p);
        assert_eq!(b, Backoff(0));
        // 10 ticks: t_rtxcur = ((20 << 3) + 80) >> 3 = 30 ticks.
        assert_eq!(r.rto(b, &p), 300 * MS);
    }

    #[test]
    fn ns2_partial_acks_sample_nothing() {
        let p = ns2_profile();
        let mut b = Backoff(2);
        let mut r = Estimator::new(&p);
        r.on_first_send(4, 0, &p);
        r.on_partial_ack(4, Recovery::NewReno, &mut b, &p);
        assert_eq!(b, Backoff(2), "4 is not acknowledged");
        r.on_partial_ack(5, Recovery::NewReno, &mut b, &p);
        assert_eq!(
            (b, Ns2::from(r)),
            (Backoff(0), Ns2::default()),
            "no sample, no timing"
        );
        let mut b = Backoff(2);
        r.on_first_send(6, 0, &p);
        r.on_partial_ack(5, Recovery::Sack1, &mut b, &p);
        assert_eq!(b, Backoff(0), "Sack1's ends the back-off all the same");
        assert_eq!(Ns2::from(r).timed, 6, "and goes on timing");
        r.stop_timing(&p);
        assert_eq!(Ns2::from(r).timed, NOT_TIMING);
    }

    /// From SRTT 100 ms and RTTVAR 50 ms (t_rtxcur 300 ms): the back-off
    /// doubles per timeout; the fourth (`t_backoff_` 16) moves SRTT into
    /// RTTVAR, which keeps t_rtxcur; the next sample starts afresh. Past 64
    /// times it doubles while under max_rto (60 s: 300 ms x 256 = 76.8 s
    /// is the last), and the RTO stays capped.
    #[test]
    fn ns2_backoff_clears_srtt_and_doubles_past_64_under_max_rto() {
        let p = ns2_profile();
        let mut r = Estimator::new(&p);
        let mut b = Backoff::default();
        r.on_first_send(0, 0, &p);
        r.on_ack_beyond_recovery(1, 100 * MS, &mut b, &p);
        assert_eq!(r.rto(b, &p), 300 * MS);
        for (timeouts, rto) in [(1, 600 * MS), (2, 1200 * MS), (3, 2400 * MS)] {
            r.on_timeout(&mut b, &p);
            assert_eq!((b, r.rto(b, &p)), (Backoff(timeouts), rto));
        }
        assert_eq!(Ns2::from(r).srtt, 80, "8 times: kept");
        r.on_timeout(&mut b, &p);
        assert_eq!((Ns2::from(r).srtt, Ns2::from(r).rttvar), (0, 30));
        assert_eq!(r.rto(b, &p), 16 * 300 * MS, "t_rtxcur is kept");
        for _ in 0..10 {
            r.on_timeout(&mut b, &p);
        }
        assert_eq!(b, Backoff(8), "256 times");
        assert_eq!(r.rto(b, &p), p.max_rto_ns);
        r.on_first_send(1, 0, &p);
        r.on_ack_beyond_recovery(2, 50 * MS, &mut b, &p);
        let s = Ns2::from(r);
        assert_eq!(
            (s.srtt, s.rttvar, b),
            (40, 10, Backoff(0)),
            "afresh from 5 ticks"
        );
        assert_eq!(r.rto(b, &p), p.min_rto_ns, "15 ticks: min_rto");
    }

    #[test]
    fn ns2_rto_is_never_below_two_ticks() {
        let mut p = ns2_profile();
        (p.min_rto_ns, p.clock_granularity_ns) = (1, 100 * MS);
        let mut r = Estimator::new(&p);
        r.on_first_send(0, 0, &p);
        r.on_ack_beyond_recovery(1, 0, &mut Backoff::default(), &p);
        // One tick: 2 + 1 = 3 ticks.
        assert_eq!(r.rto(Backoff::default(), &p), 300 * MS);
        p.clock_granularity_ns = 10 * MS;
        p.max_rto_ns = 15 * MS;
        assert_eq!(
            r.rto(Backoff::default(), &p),
            20 * MS,
            "two ticks over max_rto"
        );
    }
}
