//! SACK loss recovery as ns-2's `Agent/TCP/Sack1` runs it (tcp-sack1.cc,
//! ns-2.35 defaults: `partial_ack_` off, `bug_fix_` on), the conservative
//! SACK recovery of Fall & Floyd (1996) that RFC 6675 grew from.
//!
//! - Outside recovery a duplicate ACK counts only if its SACK blocks tell
//!   the scoreboard something new (`recv`: `CheckUpdate`); the
//!   threshold-th starts recovery (`dupack_action`) unless it acknowledges
//!   nothing sent after the last recovery or timeout began (`bug_fix_`):
//!   ssthresh and the window go to half (the window policy's reduction),
//!   the first hole is resent, and `pipe`, the packets believed in the
//!   network, starts at those outstanding less the duplicate ACKs.
//! - In recovery every ACK takes one packet out of `pipe`, a partial ACK
//!   two (the retransmission it acknowledges, and the packet that left
//!   the network; `recv`). While `pipe` is below the window the sender
//!   sends (`send_much`): the next hole below a SACKed packet, each once,
//!   else new data, either within the receiver's window of the cumulative
//!   ACK; each adds one to `pipe`.
//! - The ACK of everything outstanding when recovery began ends it, with
//!   the window as the reduction left it (no deflation: it never
//!   inflated). A new ACK outside recovery clears the scoreboard (here
//!   when it is next read, so that the ACKs of the other variants pay
//!   nothing for it).
//! - A timeout clears the scoreboard, goes back N, and ignores duplicate
//!   ACKs until the next new ACK (`timeout_`).
//!
//! Limited transmit (ns-2's `singledup_`, on by default in ns-2.35) is not
//! modelled, as by no variant here.

use super::Progress;
use crate::packet::SimPacket;
use crate::scenario::TcpProfile;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::{Outbox, TcpSender};
use crate::Time;

/// What a Sack1 sender keeps beside the shared state.
#[derive(Clone, Debug, Default)]
pub struct Sack1 {
    /// ns-2's `pipe_`: packets believed in the network, in recovery.
    pipe: i64,
    /// ns-2's `timeout_`: a timeout's go-back-N is under way.
    after_timeout: bool,
    /// `snd_una` when the scoreboard was last cleared or read outside
    /// recovery: if it moved since, new ACKs came.
    una: u32,
    scoreboard: Scoreboard,
}

impl Sack1 {
    /// What the new ACKs outside recovery since the last look did: clear
    /// the scoreboard, end a timeout's go-back-N (`recv`).
    fn catch_up(&mut self, snd_una: u32) {
        if self.una != snd_una {
            self.una = snd_una;
            self.scoreboard.clear();
            self.after_timeout = false;
        }
    }

    /// Clear the scoreboard with `snd_una` where it is.
    fn clear(&mut self, snd_una: u32) {
        self.una = snd_una;
        self.scoreboard.clear();
    }
}

#[inline(never)]
pub fn on_dupack(s: &mut TcpSender, ack: &SimPacket, now: Time, p: &TcpProfile, out: &mut Outbox) {
    let snd_una = s.snd_una;
    let option = out.sack.take(ack);
    let blocks = option.iter();
    if s.in_recovery {
        let sack = s.sack1();
        sack.pipe -= 1;
        sack.scoreboard.update(snd_una, blocks);
        send_much(s, ack.flow, now, p, out);
        return;
    }
    let sack = s.sack1();
    sack.catch_up(snd_una);
    if !sack.after_timeout && sack.scoreboard.update(snd_una, blocks) {
        s.dupacks = s.dupacks.saturating_add(1);
        if u32::from(s.dupacks) == p.dupack_threshold {
            dupack_action(s, ack.flow, now, p, out);
        }
    }
    if s.dupacks == 0 {
        s.send_new(now, ack.flow, p, out);
    }
}

/// `dupack_action`: start recovery, or not (`bug_fix_`: the duplicate
/// ACKs acknowledge nothing sent after the last recovery or timeout
/// began; `bugfix_ss_` lets the loss of the second packet through).
fn dupack_action(s: &mut TcpSender, flow: u32, now: Time, p: &TcpProfile, out: &mut Outbox) {
    if s.snd_una <= s.recover && s.snd_una != 1 {
        return;
    }
    s.recover = s.snd_max;
    let pipe = s.snd_max as i64 - s.snd_una as i64 - p.dupack_threshold as i64;
    s.restart_timer_for_loss(now, p);
    s.in_recovery = true;
    let hole = s.snd_una;
    let sack = s.sack1();
    sack.pipe = pipe;
    sack.scoreboard.mark_retransmitted(hole);
    s.reduce_on_loss(now, p);
    s.send_data(hole, now, flow, p, out);
}

#[inline(never)]
pub fn on_ack_in_recovery(
    s: &mut TcpSender,
    ack: &SimPacket,
    now: Time,
    p: &TcpProfile,
    out: &mut Outbox,
) -> Progress {
    let (snd_una, over) = (s.snd_una, ack.seq >= s.recover);
    let option = out.sack.take(ack);
    let sack = s.sack1();
    sack.pipe -= 1;
    if over {
        sack.clear(ack.seq);
        s.in_recovery = false;
        // ns-2 forgets the recovery point: the next recovery may come at once.
        s.recover = 0;
        return Progress::Over;
    }
    // A partial ACK: also the retransmission it acknowledges leaves the pipe.
    sack.scoreboard.update(snd_una, option.iter());
    sack.pipe -= 1;
    s.arm_timer(now, p);
    send_much(s, ack.flow, now, p, out);
    Progress::Recovering
}

#[inline(never)]
pub fn on_timeout(s: &mut TcpSender) {
    let snd_una = s.snd_una;
    let sack = s.sack1();
    sack.clear(snd_una);
    sack.after_timeout = true;
}

/// `send_much` in recovery: while fewer than the window are in the pipe,
/// the next hole, else new data, within the receiver's window.
fn send_much(s: &mut TcpSender, flow: u32, now: Time, p: &TcpProfile, out: &mut Outbox) {
    let reach = s.snd_una.saturating_add(p.receiver_window);
    loop {
        let (cwnd, snd_una, snd_nxt, total) = (s.window.cwnd as i64, s.snd_una, s.snd_nxt, s.total);
        let sack = s.sack1();
        if sack.pipe >= cwnd {
            return;
        }
        let seq = match sack.scoreboard.next_retransmission(snd_una) {
            Some(hole) if hole < reach => {
                sack.scoreboard.mark_retransmitted(hole);
                hole
            }
            Some(_) => return,
            None if snd_nxt < reach && snd_nxt < total => snd_nxt,
            None => return,
        };
        sack.pipe += 1;
        s.snd_nxt = snd_nxt.max(seq + 1);
        s.send_data(seq, now, flow, p, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::SimPacket;
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::{ack, grown, sack, sent};
    use crate::tcp::{Outbox, TcpSender};
    use crate::Time;

    /// The ACKs a receiver sends for `arrivals` (in order) when it has all
    /// up to `una` and nothing above, as ns-2's SACK sink forms them, their
    /// options filed in `out`.
    fn acks_for(una: u32, arrivals: &[u32], out: &mut Outbox) -> Vec<SimPacket> {
        use crate::tcp::testing::{data, profile};
        use crate::tcp::TcpReceiver;
        let p = profile(TcpVariant::Sack);
        let mut r = TcpReceiver::default();
        let mut acks = Outbox::default();
        for seq in 0..una {
            r.on_data(&data(seq), 0, &p, &mut acks);
        }
        acks.packets.clear();
        for &seq in arrivals {
            r.on_data(&data(seq), 0, &p, &mut acks);
        }
        // The options go to the sender's outbox with their ACKs.
        let mut packets = acks.packets;
        for a in packets.iter_mut().filter(|a| a.tag != 0) {
            let blocks = acks.sack.take(a);
            out.sack.file(a, blocks);
        }
        packets
    }

    fn feed(s: &mut TcpSender, acks: &[SimPacket], now: Time, out: &mut Outbox) -> Vec<u32> {
        let p = crate::tcp::testing::profile(TcpVariant::Sack);
        for a in acks {
            s.on_ack(a, now, &p, out);
        }
        sent(out)
    }

    /// Three losses in one window (8, 10, 13 of 8..18): the three
    /// duplicate ACKs start recovery and resend 8; the ACKs of the rest of
    /// the window resend 10 and 13 as the pipe allows, and new data after
    /// them; the retransmissions' ACKs end recovery a round trip later, with
    /// no timeout, and exactly the holes were resent.
    #[test]
    fn several_losses_in_one_window_recover_in_one_round_trip() {
        let (mut s, p, mut out) = grown(TcpVariant::Sack);
        let received = [9, 11, 12, 14, 15, 16, 17];
        let acks = acks_for(8, &received, &mut out);
        // After three duplicate ACKs: recovery, 8 resent, pipe = 10 - 3.
        let first = feed(&mut s, &acks[..3], 300, &mut out);
        assert_eq!(first, vec![8]);
        assert!(s.in_recovery);
        assert_eq!((s.ssthresh(), s.cwnd()), (5.0, 5.0));
        assert_eq!(s.sack1().pipe, 7);
        // Four more duplicate ACKs: pipe 7 - 4 = 3 < 5: 10 and 13 go.
        let more = feed(&mut s, &acks[3..], 310, &mut out);
        assert_eq!(more, vec![10, 13]);
        // One round trip on, 8 arrives: a partial ACK to 10; pipe 5 - 2.
        let partial = acks_for(8, &[received.as_slice(), &[8]].concat(), &mut out)
            .pop()
            .unwrap();
        assert_eq!(partial.seq, 10);
        let after = feed(&mut s, &[partial], 400, &mut out);
        assert_eq!(after, vec![18, 19], "the pipe has room: new data");
        // 10 and 13 arrive: the ACK of 18 (all outstanding at the start)
        // ends recovery, the window as the reduction left it.
        let resent: Vec<u32> = [8, 10, 13].into();
        let all = acks_for(8, &[received.as_slice(), &resent].concat(), &mut out);
        s.on_ack(all.last().unwrap(), 410, &p, &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd(), 5.0);
        assert_eq!(s.counters.retransmissions, 3, "the holes, once each");
        assert_eq!(s.counters.timeouts, 0);
        assert_eq!(s.counters.fast_retransmits, 1);
    }

    /// The same losses under NewReno: one hole resent per partial ACK, a
    /// round trip each.
    #[test]
    fn newreno_takes_a_round_trip_per_hole() {
        let (mut s, p, mut out) = grown(TcpVariant::Newreno);
        for _ in 0..7 {
            s.on_ack(&ack(8, 0), 300, &p, &mut out);
        }
        assert_eq!(sent(&mut out).first(), Some(&8));
        s.on_ack(&ack(10, 0), 400, &p, &mut out);
        assert_eq!(sent(&mut out).first(), Some(&10), "the second round trip");
        s.on_ack(&ack(13, 0), 500, &p, &mut out);
        assert_eq!(sent(&mut out).first(), Some(&13), "the third");
    }

    /// Duplicate ACKs that SACK nothing new do not count.
    #[test]
    fn duplicate_acks_count_only_with_news() {
        let (mut s, p, mut out) = grown(TcpVariant::Sack);
        for _ in 0..5 {
            let same = sack(&mut out, 8, &[(9, 10)]);
            s.on_ack(&same, 300, &p, &mut out);
        }
        assert!(!s.in_recovery);
        assert_eq!(s.dupacks, 1);
        let more = sack(&mut out, 8, &[(9, 11)]);
        s.on_ack(&more, 300, &p, &mut out);
        let more = sack(&mut out, 8, &[(9, 12)]);
        s.on_ack(&more, 300, &p, &mut out);
        assert!(s.in_recovery);
        assert_eq!(sent(&mut out), vec![8]);
    }

    /// After a timeout, duplicate ACKs are ignored until a new ACK.
    #[test]
    fn a_timeout_goes_back_and_ignores_duplicate_acks() {
        let (mut s, p, mut out) = grown(TcpVariant::Sack);
        let deadline = s.rto_deadline.get().unwrap();
        s.on_timeout(deadline, 0, &p, &mut out);
        assert_eq!(sent(&mut out), vec![8]);
        let t = deadline + 1;
        for hi in 10..14 {
            let a = sack(&mut out, 8, &[(9, hi)]);
            s.on_ack(&a, t, &p, &mut out);
        }
        assert!(!s.in_recovery);
        assert_eq!(s.dupacks, 0);
        assert!(sent(&mut out).is_empty(), "cwnd 1, 8 outstanding");
        s.on_ack(&ack(9, 0), t, &p, &mut out);
        assert_eq!(sent(&mut out), vec![9, 10], "slow start from the hole on");
    }
}
