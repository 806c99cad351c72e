//! Tahoe (ns-2's `TcpAgent`): fast retransmit without fast recovery. The
//! threshold-th duplicate ACK resends from the hole on, in slow start from
//! one packet (go-back-N), as a timeout would but without waiting for it.

use crate::scenario::TcpProfile;
use crate::tcp::{Outbox, TcpSender};
use crate::Time;

pub fn on_dupack(s: &mut TcpSender, flow: u32, now: Time, p: &TcpProfile, out: &mut Outbox) {
    s.dupacks = s.dupacks.saturating_add(1);
    if u32::from(s.dupacks) != p.dupack_threshold {
        return;
    }
    s.reduce_on_loss(now, p);
    s.window.cwnd = 1.0;
    s.snd_nxt = s.snd_una;
    // The count goes on (ns-2 `TcpAgent::recv`): the rest of the window's
    // duplicate ACKs are those of this loss, and only a new ACK restarts it.
    s.restart_timer_for_loss(now, p);
    s.send_new(now, flow, p, out);
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::{ack, grown, sent};

    #[test]
    fn tahoe_restarts_from_one_packet_and_goes_back() {
        let (mut s, p, mut out) = grown(TcpVariant::Tahoe);
        for _ in 0..3 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        assert_eq!(s.cwnd(), 1.0);
        assert_eq!(s.ssthresh(), 5.0);
        assert_eq!(sent(&mut out), vec![8]);
        // The next ACK slides the window: 9 and 10 are resent (go-back-N).
        s.on_ack(&ack(9, 0), 400, &p, &mut out);
        assert_eq!(sent(&mut out), vec![9, 10]);
        assert_eq!(s.counters.fast_retransmits, 1);
    }

    #[test]
    fn one_loss_is_one_fast_retransmit_however_many_duplicates_follow() {
        let (mut s, p, mut out) = grown(TcpVariant::Tahoe);
        for _ in 0..9 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        assert_eq!(s.counters.fast_retransmits, 1);
        assert_eq!(s.ssthresh(), 5.0, "halved once");
        assert_eq!(sent(&mut out), vec![8]);
    }
}
