//! NewReno (RFC 6582 section 3): Reno's fast recovery, but it ends only
//! when all the data outstanding at its start (`recover`) is
//! acknowledged. A partial ACK short of it resends the next hole at once
//! and deflates the window by the packets it acknowledged, less one; and
//! duplicate ACKs of data sent before the last recovery began start no
//! new one (section 3.2).
//!
//! The retransmission timer is reset at the first partial ACK of a
//! recovery only (section 3.2 step 5; the Impatient variant of section 4):
//! a window that lost many packets then ends in a timeout and slow start
//! instead of one round trip a hole. (ns-2's `Agent/TCP/Newreno` resets it
//! at every partial ACK unless `newreno_changes1_` is 1.)

use super::{reno, Progress};
use crate::packet::SimPacket;
use crate::scenario::TcpProfile;
use crate::tcp::{Outbox, TcpSender};
use crate::Time;

pub fn on_dupack(s: &mut TcpSender, flow: u32, now: Time, p: &TcpProfile, out: &mut Outbox) {
    reno::dupack(s, flow, now, p, out, |s| {
        !(s.snd_una <= s.recover && s.recover > 0)
    });
}

pub fn on_ack_in_recovery(
    s: &mut TcpSender,
    ack: &SimPacket,
    newly: u32,
    now: Time,
    p: &TcpProfile,
    out: &mut Outbox,
) -> Progress {
    if ack.seq >= s.recover {
        return reno::exit(s);
    }
    let hole = s.snd_una;
    s.send_data(hole, now, ack.flow, p, out);
    s.window.cwnd = (s.window.cwnd - newly as f64 + 1.0).max(1.0);
    if !s.partially_acked {
        s.partially_acked = true;
        s.arm_timer(now, p);
    }
    s.send_new(now, ack.flow, p, out);
    Progress::Recovering
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::{ack, grown, sent};

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
        assert_eq!(s.cwnd(), 5.0);
        // Full ACK ends recovery with cwnd = ssthresh.
        s.on_ack(&ack(18, 0), 500, &p, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd(), 5.0);
    }

    /// Holes at 8, 12 and 14: the partial ACK of 12 resets the timer, the
    /// one of 14 does not, so many holes end in a timeout.
    #[test]
    fn only_the_first_partial_ack_resets_the_timer() {
        let (mut s, p, mut out) = grown(TcpVariant::Newreno);
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        s.on_ack(&ack(12, 0), 400, &p, &mut out);
        let deadline = s.rto_deadline.get().unwrap();
        assert!(deadline > 400);
        s.on_ack(&ack(14, 0), 500, &p, &mut out);
        assert!(s.in_recovery);
        assert_eq!(s.rto_deadline.get(), Some(deadline));
    }

    #[test]
    fn no_new_recovery_for_data_sent_before_the_last() {
        let (mut s, p, mut out) = grown(TcpVariant::Newreno);
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        s.on_ack(&ack(18, 0), 400, &p, &mut out);
        assert_eq!(s.recover, 18);
        // A timeout sets recover to what was sent; dupACKs below it do
        // not start a recovery.
        let deadline = s.rto_deadline.get().unwrap();
        s.on_timeout(deadline, 0, &p, &mut out);
        sent(&mut out);
        let recover = s.recover;
        for _ in 0..3 {
            s.on_ack(&ack(18, 0), deadline + 10, &p, &mut out);
        }
        assert!(s.snd_una < recover && !s.in_recovery);
        assert_eq!(s.counters.fast_retransmits, 1);
    }
}
