//! Additive increase, multiplicative decrease: RFC 5681's window, as ns-2's
//! `TcpAgent` applies it (`opencwnd`, `slowdown`). Tahoe, Reno, NewReno and
//! SACK all grow and halve this way; they differ in loss recovery.

use super::{Ack, CongestionControl, Window};
use crate::scenario::TcpProfile;
use crate::Time;

#[derive(Clone, Copy, Debug, Default)]
pub struct Aimd;

impl CongestionControl for Aimd {
    /// One packet an ACK in slow start, `1/cwnd` in congestion avoidance
    /// (RFC 5681 section 3.1; ns-2 counts ACKs, not packets acknowledged).
    #[inline(always)]
    fn on_ack(&mut self, w: &mut Window, _: Ack, _: &TcpProfile) {
        if w.in_slow_start() {
            w.cwnd += 1.0;
        } else {
            w.cwnd += 1.0 / w.cwnd;
        }
    }

    /// ssthresh = max(window / 2, 2) in whole packets (RFC 5681 equation
    /// 4); cwnd to half the window in use (ns-2 `slowdown` with
    /// `CLOSE_CWND_HALF`, which Sack1 keeps; Reno's recovery inflates it).
    fn on_loss(&mut self, w: &mut Window, _: Time, p: &TcpProfile) {
        w.ssthresh = halved(w, p);
        w.cwnd = (w.cwnd.min(p.receiver_window as f64) / 2.0).max(1.0);
    }

    /// Halve the congestion window (RFC 3168 section 6.1.2).
    fn on_ecn_echo(&mut self, w: &mut Window, _: Time, _: &TcpProfile) {
        w.ssthresh = (w.cwnd / 2.0).max(2.0);
        w.cwnd = w.ssthresh;
    }

    /// RFC 5681 equation 4, then one packet (section 3.1).
    fn on_timeout(&mut self, w: &mut Window, _: Time, _: u32, p: &TcpProfile) {
        w.ssthresh = halved(w, p);
        w.cwnd = 1.0;
    }
}

/// Half the window in use, in whole packets, at least two.
fn halved(w: &Window, p: &TcpProfile) -> f64 {
    (w.usable(p) as f64 / 2.0).floor().max(2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::profile;

    fn ack() -> Ack {
        Ack {
            acked: 1,
            rtt: 0,
            now: 0,
            snd_una: 0,
            snd_nxt: 0,
        }
    }

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let p = profile(TcpVariant::Reno);
        let mut w = Window {
            cwnd: 9.0,
            ssthresh: 10.0,
        };
        Aimd.on_ack(&mut w, ack(), &p);
        assert_eq!(w.cwnd, 10.0, "slow start: one packet an ACK");
        Aimd.on_ack(&mut w, ack(), &p);
        assert!(
            (w.cwnd - 10.1).abs() < 1e-12,
            "CA adds 1/cwnd, got {}",
            w.cwnd
        );
    }

    #[test]
    fn a_loss_halves_in_whole_packets_and_a_timeout_restarts_from_one() {
        let mut p = profile(TcpVariant::Reno);
        let mut w = Window {
            cwnd: 17.6,
            ssthresh: 4.0,
        };
        Aimd.on_loss(&mut w, 0, &p);
        assert_eq!((w.ssthresh, w.cwnd), (8.0, 8.8));
        let mut w = Window {
            cwnd: 3.0,
            ssthresh: 4.0,
        };
        Aimd.on_timeout(&mut w, 0, 0, &p);
        assert_eq!((w.ssthresh, w.cwnd), (2.0, 1.0), "at least two");
        // The receiver's window caps the window halved.
        p.receiver_window = 6;
        let mut w = Window {
            cwnd: 40.0,
            ssthresh: 4.0,
        };
        Aimd.on_loss(&mut w, 0, &p);
        assert_eq!((w.ssthresh, w.cwnd), (3.0, 3.0));
        // ECN halves the congestion window itself, not in whole packets.
        let mut w = Window {
            cwnd: 7.0,
            ssthresh: 4.0,
        };
        Aimd.on_ecn_echo(&mut w, 0, &p);
        assert_eq!((w.ssthresh, w.cwnd), (3.5, 3.5));
    }
}
