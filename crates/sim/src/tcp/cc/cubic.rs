//! CUBIC (RFC 9438) as Linux implements it (net/ipv4/tcp_cubic.c), on the
//! packet-granular window.
//!
//! In congestion avoidance the window follows the cubic
//! W(t) = C (t - K)^3 + W_max (section 4.2), t counted from the start of
//! the epoch (the first ACK after a reduction), K = cbrt((W_max -
//! cwnd_epoch) / C). Each ACK sets a target one minimum RTT ahead,
//! W(t + delay_min), and the window moves towards it by 1/cnt, cnt =
//! cwnd / (target - cwnd) (`bictcp_update`): at most half a packet an
//! ACK, a hundredth of a packet an RTT when the target is below. On a
//! loss W_max = cwnd, or cwnd (1 + beta) / 2 if cwnd is below the last
//! W_max (fast convergence, section 4.7), and ssthresh = cwnd beta
//! (`cubictcp_recalc_ssthresh`). The TCP-friendly region (section 4.3)
//! tracks W_est, the window Reno with beta's AIMD would have, and grows at
//! least as fast. Slow start adds a packet for each packet acknowledged
//! (`tcp_slow_start`).
//!
//! Where this differs from Linux, by design:
//! - real arithmetic: time in nanoseconds, the cube root exact, where
//!   Linux counts in jiffies and 1/1024 s and approximates the root
//!   (0.2%);
//! - cnt recomputed at every ACK, where Linux does so at most once a
//!   jiffy, and once in HZ/32 while its integer window is unchanged (a
//!   saving of CPU);
//! - no `tcp_is_cwnd_limited` test: the window grows with every ACK, as
//!   every variant's does here;
//! - the minimum RTT is sampled on the ACKs that grow the window, not on
//!   those of loss recovery (their RTTs carry the queue that overflowed).
//!
//! HyStart (Ha & Rhee, "Taming the elephants", 2008; Linux's ack-train and
//! delay detection) is off by default, as the brief of the model wants a
//! slow start comparable with the other variants'; `cubic.hystart` turns
//! it on.

use super::{Ack, CongestionControl, Window};
use crate::scenario::TcpProfile;
use crate::{MaybeTime, Time};

/// Seconds in a nanosecond.
const NS: f64 = 1e-9;

/// The state of one CUBIC flow (Linux's `struct bictcp`).
#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// W_max (section 4.1; `last_max_cwnd`), after fast convergence; 0
    /// before the first loss and after a timeout.
    w_max: f64,
    /// When the current epoch began (`epoch_start`); none right after a
    /// reduction, until the next ACK in congestion avoidance.
    epoch_start: MaybeTime,
    /// K (seconds) and the cubic's plateau (`bic_K`, `bic_origin_point`).
    k: f64,
    origin: f64,
    /// W_est (section 4.3; `tcp_cwnd`), and the packets acknowledged
    /// towards its next increment (`ack_cnt`).
    w_est: f64,
    acked: f64,
    /// The least RTT seen (`delay_min`), ns; 0 before a sample.
    delay_min: Time,
    hystart: HyStart,
}

impl CongestionControl for Cubic {
    fn on_start(&mut self, now: Time, snd_nxt: u32) {
        self.hystart.new_round(now, snd_nxt);
    }

    #[inline(never)]
    fn on_ack(&mut self, w: &mut Window, ack: Ack, p: &TcpProfile) {
        self.rtt_sample(w, &ack, p);
        let mut acked = ack.acked as f64;
        if w.in_slow_start() {
            let grown = (w.cwnd + acked).min(w.ssthresh);
            acked -= grown - w.cwnd;
            w.cwnd = grown;
            if acked <= 0.0 {
                return;
            }
        }
        let cnt = self.update(w.cwnd, acked, ack.now, p);
        w.cwnd += acked / cnt;
    }

    fn on_loss(&mut self, w: &mut Window, _: Time, p: &TcpProfile) {
        self.reduce(w, p);
    }

    /// As a loss (Linux's CWR state reduces to the same ssthresh).
    fn on_ecn_echo(&mut self, w: &mut Window, _: Time, p: &TcpProfile) {
        self.reduce(w, p);
    }

    /// ssthresh as for a loss, then all CUBIC state forgotten, W_max
    /// included (`tcp_enter_loss`: `ssthresh`, then the Loss state's
    /// `bictcp_reset`), and one packet.
    fn on_timeout(&mut self, w: &mut Window, now: Time, snd_nxt: u32, p: &TcpProfile) {
        self.reduce(w, p);
        *self = Self::default();
        self.hystart.new_round(now, snd_nxt);
        w.cwnd = 1.0;
    }
}

impl Cubic {
    /// `cubictcp_recalc_ssthresh`: the epoch ends, W_max is set (section
    /// 4.7), ssthresh = cwnd beta (section 4.6); cwnd goes down to it.
    fn reduce(&mut self, w: &mut Window, p: &TcpProfile) {
        let c = &p.cubic;
        let cwnd = w.cwnd.min(p.receiver_window as f64);
        self.epoch_start = MaybeTime::NONE;
        self.w_max = if cwnd < self.w_max && c.fast_convergence {
            cwnd * (1.0 + c.beta) / 2.0
        } else {
            cwnd
        };
        w.ssthresh = (cwnd * c.beta).max(2.0);
        w.cwnd = w.ssthresh;
    }

    /// `bictcp_update`: the number of ACKs for one packet of growth.
    fn update(&mut self, cwnd: f64, acked: f64, now: Time, p: &TcpProfile) -> f64 {
        let c = &p.cubic;
        self.acked += acked;
        let epoch_start = match self.epoch_start.get() {
            Some(t) => t,
            None => self.start_epoch(cwnd, acked, now, c.c),
        };
        // The target one minimum RTT ahead.
        let t = (now - epoch_start + self.delay_min) as f64 * NS;
        let target = self.origin + c.c * (t - self.k).powi(3);
        let mut cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100.0 * cwnd
        };
        if self.w_max == 0.0 {
            // No loss yet: at least 5% a round trip.
            cnt = cnt.min(20.0);
        }
        if c.tcp_friendliness {
            // W_est grows by alpha = 3 (1 - beta) / (1 + beta) a window
            // of ACKs (equation 4).
            let per_packet = cwnd * (1.0 + c.beta) / (3.0 * (1.0 - c.beta));
            while self.acked > per_packet {
                self.acked -= per_packet;
                self.w_est += 1.0;
            }
            if self.w_est > cwnd {
                cnt = cnt.min(cwnd / (self.w_est - cwnd));
            }
        }
        // At most half a packet an ACK: 1.5 times the window a round trip.
        cnt.max(2.0)
    }

    /// A new epoch begins with `cwnd` (section 4.2's cwnd_epoch): K and
    /// the plateau from W_max, or none to climb to if the window is at or
    /// above it; W_est from the window.
    fn start_epoch(&mut self, cwnd: f64, acked: f64, now: Time, c: f64) -> Time {
        self.epoch_start = MaybeTime::at(now);
        self.acked = acked;
        self.w_est = cwnd;
        if self.w_max <= cwnd {
            self.k = 0.0;
            self.origin = cwnd;
        } else {
            self.k = ((self.w_max - cwnd) / c).cbrt();
            self.origin = self.w_max;
        }
        now
    }

    /// `cubictcp_acked`: the minimum RTT, and HyStart in slow start. No
    /// sample in an epoch's first second (Linux discards them after a
    /// recovery).
    fn rtt_sample(&mut self, w: &mut Window, ack: &Ack, p: &TcpProfile) {
        if let Some(start) = self.epoch_start.get() {
            if ack.now - start < 1_000_000_000 {
                return;
            }
        }
        let delay = ack.rtt.max(1);
        if self.delay_min == 0 || delay < self.delay_min {
            self.delay_min = delay;
        }
        if p.cubic.hystart
            && w.in_slow_start()
            && self.hystart.exit_found(w.cwnd, delay, self.delay_min, ack)
        {
            w.ssthresh = w.cwnd;
        }
    }
}

/// Hybrid slow start as Linux runs it (`hystart_update`): leave slow start
/// when the ACKs of a round stretch past half the minimum RTT (an ACK
/// train), or when a round's least RTT of its first eight samples grows
/// past the minimum by an eighth of it, within 4 to 16 ms.
#[derive(Clone, Debug, Default)]
struct HyStart {
    found: bool,
    round_start: Time,
    /// The round ends when this packet is acknowledged.
    end_seq: u32,
    last_ack: Time,
    /// The least RTT of the round, and how many samples it has.
    round_min: Time,
    samples: u8,
}

/// Below this window HyStart does not act (`hystart_low_window`).
const HYSTART_LOW_WINDOW: f64 = 16.0;
/// ACKs this close are a train (`hystart_ack_delta_us`).
const HYSTART_ACK_DELTA: Time = 2_000_000;
const HYSTART_MIN_SAMPLES: u8 = 8;
const HYSTART_DELAY_MIN: Time = 4_000_000;
const HYSTART_DELAY_MAX: Time = 16_000_000;

impl HyStart {
    /// `bictcp_hystart_reset`.
    fn new_round(&mut self, now: Time, snd_nxt: u32) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.round_min = Time::MAX;
        self.samples = 0;
    }

    /// Whether slow start should end (once found, HyStart is done until a
    /// timeout resets it).
    fn exit_found(&mut self, cwnd: f64, delay: Time, delay_min: Time, ack: &Ack) -> bool {
        if self.found {
            return false;
        }
        if ack.snd_una > self.end_seq {
            self.new_round(ack.now, ack.snd_nxt);
        }
        if cwnd < HYSTART_LOW_WINDOW {
            return false;
        }
        if ack.now - self.last_ack <= HYSTART_ACK_DELTA {
            self.last_ack = ack.now;
            self.found |= ack.now - self.round_start > delay_min / 2;
        }
        self.round_min = self.round_min.min(delay);
        if self.samples < HYSTART_MIN_SAMPLES {
            self.samples += 1;
        } else {
            let margin = (delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
            self.found |= self.round_min > delay_min + margin;
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::profile;

    const RTT: Time = 100_000_000;

    fn ack(now: Time) -> Ack {
        Ack {
            acked: 1,
            rtt: RTT,
            now,
            snd_una: 0,
            snd_nxt: 0,
        }
    }

    /// Drive the window with one ACK per packet of it each round trip, as
    /// a flow with no queue would, from `t0` for `rounds` round trips;
    /// returns (time, cwnd) at the start of each.
    fn rounds(
        cubic: &mut Cubic,
        w: &mut Window,
        t0: Time,
        rounds: u64,
        p: &TcpProfile,
    ) -> Vec<(Time, f64)> {
        let mut trace = Vec::new();
        for r in 0..rounds {
            let start = t0 + r * RTT;
            trace.push((start, w.cwnd));
            let n = w.cwnd as u64;
            for i in 0..n {
                cubic.on_ack(w, ack(start + i * RTT / n), p);
            }
        }
        trace
    }

    /// After a loss at W = 100: ssthresh 70, K = cbrt(30 / 0.4), and the
    /// window one RTT on tracks C (t - K)^3 + W_max (RFC 9438 equation 1)
    /// computed here, within a packet, through the plateau and beyond.
    #[test]
    fn the_window_follows_the_cubic_after_a_loss() {
        let p = profile(TcpVariant::Cubic);
        let mut cubic = Cubic::default();
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 50.0,
        };
        cubic.on_loss(&mut w, 0, &p);
        assert_eq!((w.cwnd, w.ssthresh, cubic.w_max), (70.0, 70.0, 100.0));
        let k = (30.0f64 / 0.4).cbrt();
        let t0 = 1_000_000_000;
        let trace = rounds(&mut cubic, &mut w, t0, 120, &p);
        for &(t, cwnd) in &trace[1..] {
            let t = (t - t0) as f64 * 1e-9;
            let expected = 0.4 * (t - k).powi(3) + 100.0;
            assert!(
                (cwnd - expected).abs() < 1.0,
                "t = {t:.1} s: cwnd {cwnd:.2}, W(t) {expected:.2}"
            );
        }
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_the_last_one() {
        let p = profile(TcpVariant::Cubic);
        let mut cubic = Cubic::default();
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 50.0,
        };
        cubic.on_loss(&mut w, 0, &p);
        w.cwnd = 90.0;
        cubic.on_loss(&mut w, 0, &p);
        assert!((cubic.w_max - 90.0 * 1.7 / 2.0).abs() < 1e-9);
        assert!((w.ssthresh - 63.0).abs() < 1e-9);
        let mut q = p.clone();
        q.cubic.fast_convergence = false;
        w.cwnd = 80.0;
        cubic.on_loss(&mut w, 0, &q);
        assert_eq!(cubic.w_max, 80.0);
    }

    /// With a small W_max Reno's line is steeper than the cubic: the
    /// window follows W_est, grown by alpha = 3 (1 - beta) / (1 + beta)
    /// a window of ACKs (section 4.3, equation 4, computed here), less
    /// Linux's whole-packet steps of W_est and the round trip it takes to
    /// catch up with one.
    #[test]
    fn the_tcp_friendly_region_grows_like_aimd_with_beta() {
        let loss_at_10 = |p: &TcpProfile| {
            let mut w = Window {
                cwnd: 10.0,
                ssthresh: 5.0,
            };
            let mut cubic = Cubic::default();
            cubic.on_loss(&mut w, 0, p);
            (cubic, w)
        };
        // W_max 10 is K = 2 s away: the cubic's steepest, 3 C K^2 = 4.6
        // packets a second, is below alpha's 5.3 a second at 100 ms.
        let p = profile(TcpVariant::Cubic);
        let (mut cubic, mut w) = loss_at_10(&p);
        let alpha = 3.0 * 0.3 / 1.7;
        let mut w_est = w.cwnd;
        for r in 0..40 {
            let n = w.cwnd as u64;
            for i in 0..n {
                w_est += alpha / w.cwnd;
                cubic.on_ack(&mut w, ack(r * RTT + i * RTT / n), &p);
            }
            let behind = w_est - w.cwnd;
            assert!(
                (-0.05..1.5).contains(&behind),
                "round {r}: cwnd {:.2}, W_est {w_est:.2}",
                w.cwnd
            );
        }
        let mut q = p.clone();
        q.cubic.tcp_friendliness = false;
        let (mut cubic, mut alone) = loss_at_10(&q);
        rounds(&mut cubic, &mut alone, 0, 40, &q);
        assert!(
            alone.cwnd < w.cwnd - 8.0,
            "the cubic alone: {:.2}",
            alone.cwnd
        );
    }

    #[test]
    fn a_timeout_forgets_w_max_and_restarts_from_one_packet() {
        let p = profile(TcpVariant::Cubic);
        let mut cubic = Cubic::default();
        let mut w = Window {
            cwnd: 100.0,
            ssthresh: 50.0,
        };
        cubic.on_loss(&mut w, 0, &p);
        cubic.on_timeout(&mut w, 0, 0, &p);
        assert_eq!((w.cwnd, w.ssthresh, cubic.w_max), (1.0, 49.0, 0.0));
        // Slow start counts packets acknowledged, up to ssthresh.
        cubic.on_ack(&mut w, Ack { acked: 2, ..ack(0) }, &p);
        assert_eq!(w.cwnd, 3.0);
    }

    /// HyStart off (the default), slow start runs to the loss; on, a round
    /// whose RTTs rise 20 ms above the minimum ends it (delay detection).
    #[test]
    fn hystart_ends_slow_start_on_rising_delay_only_when_on() {
        for on in [false, true] {
            let mut p = profile(TcpVariant::Cubic);
            p.cubic.hystart = on;
            let mut cubic = Cubic::default();
            let mut w = Window {
                cwnd: 32.0,
                ssthresh: 10_000.0,
            };
            cubic.on_start(0, 0);
            // One round at the minimum RTT, spaced 5 ms (no ACK train).
            // The first round ends with packet 50, the second with 1000.
            let spaced = |i: u64, rtt| Ack {
                acked: 1,
                rtt,
                now: i * 5_000_000,
                snd_una: i as u32 + 1,
                snd_nxt: if i < 100 { 50 } else { 1000 },
            };
            for i in 0..10 {
                cubic.on_ack(&mut w, spaced(i, RTT), &p);
            }
            assert!(w.in_slow_start());
            // The next round: 20 ms more; HyStart needs 8 samples.
            for i in 100..120 {
                cubic.on_ack(&mut w, spaced(i, RTT + 20_000_000), &p);
            }
            assert_eq!(!w.in_slow_start(), on, "hystart {on}");
        }
    }
}
