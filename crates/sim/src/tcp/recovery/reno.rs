//! Reno's fast retransmit and fast recovery (RFC 5681 section 3.2): the
//! threshold-th duplicate ACK resends the missing packet and sets the
//! window to ssthresh plus the packets those ACKs say left the network;
//! each further duplicate ACK adds one (inflation), which lets new data
//! out; the first new ACK ends recovery with the window at ssthresh.
//!
//! Classic Reno: a second loss in the window means a second halving, or a
//! timeout (ns-2's Reno with `bugfix_` refuses the second fast retransmit;
//! NewReno has RFC 6582's guard).

use super::Progress;
use crate::scenario::TcpProfile;
use crate::tcp::{Outbox, TcpSender};
use crate::Time;

#[inline(always)]
pub fn on_dupack(s: &mut TcpSender, flow: u32, now: Time, p: &TcpProfile, out: &mut Outbox) {
    dupack(s, flow, now, p, out, |_| true);
}

/// A duplicate ACK, Reno's way; NewReno's `may_recover` refuses a new
/// recovery for duplicate ACKs of data sent before the last one.
#[inline(always)]
pub fn dupack(
    s: &mut TcpSender,
    flow: u32,
    now: Time,
    p: &TcpProfile,
    out: &mut Outbox,
    may_recover: impl FnOnce(&TcpSender) -> bool,
) {
    s.dupacks = s.dupacks.saturating_add(1);
    if s.in_recovery {
        // Inflation: each duplicate ACK means a packet left the network.
        s.window.cwnd += 1.0;
        s.send_new(now, flow, p, out);
        return;
    }
    if u32::from(s.dupacks) != p.dupack_threshold || !may_recover(s) {
        return;
    }
    s.reduce_on_loss(now, p);
    s.in_recovery = true;
    s.partially_acked = false;
    s.recover = s.snd_max;
    s.window.cwnd = s.window.ssthresh + p.dupack_threshold as f64;
    let hole = s.snd_una;
    s.send_data(hole, now, flow, p, out);
    s.restart_timer_for_loss(now, p);
    s.send_new(now, flow, p, out);
}

/// Recovery ends: the window deflates to ssthresh.
pub fn exit(s: &mut TcpSender) -> Progress {
    s.in_recovery = false;
    s.window.cwnd = s.window.ssthresh;
    Progress::Over
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::{ack, grown, sent};

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
        assert_eq!(s.ssthresh(), 5.0);
        assert_eq!(s.cwnd(), 8.0);
        assert_eq!(sent(&mut out), vec![8]);
        assert_eq!(s.counters.retransmissions, 1);
        // Inflation: with 10 outstanding (8..18), cwnd must pass 18 - 8 = 10
        // before new data goes out: the 6th dupACK brings cwnd to 11.
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 310, &p, &mut out);
        }
        assert_eq!(s.cwnd(), 11.0);
        assert_eq!(sent(&mut out), vec![18]);
        // The retransmission's ACK ends recovery: cwnd deflates to ssthresh.
        s.on_ack(&ack(19, 0), 400, &p, &mut out);
        assert_eq!(s.cwnd(), 5.0);
        assert_eq!(s.counters.fast_retransmits, 1);
    }

    /// Two losses in a window, 8 and 12: the partial ACK ends Reno's
    /// recovery, and 12 waits for three more duplicate ACKs, a second
    /// halving: one round trip a loss.
    #[test]
    fn reno_halves_again_for_a_second_loss() {
        let (mut s, p, mut out) = grown(TcpVariant::Reno);
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        assert_eq!(sent(&mut out), vec![8]);
        s.on_ack(&ack(12, 0), 400, &p, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd(), 5.0);
        assert!(sent(&mut out).is_empty(), "12 is not resent");
        for _ in 0..3 {
            s.on_ack(&ack(12, 0), 500, &p, &mut out);
        }
        assert_eq!(sent(&mut out), vec![12]);
        assert_eq!(s.ssthresh(), 2.0);
        assert_eq!(s.counters.fast_retransmits, 2);
    }
}
