//! Loss recovery: what the sender does from the duplicate ACK that
//! signals a loss until the data then outstanding is acknowledged, and
//! what the window is meanwhile. The window policy ([`super::cc`]) sets
//! ssthresh and the reduced window when recovery begins; the recoveries
//! differ in what they resend and how they count the packets in flight:
//!
//! - [`tahoe`]: no recovery; fast retransmit restarts from one packet and
//!   goes back N;
//! - [`reno`]: one retransmission, the window inflated by the duplicate
//!   ACKs (RFC 5681 section 3.2);
//! - [`newreno`]: Reno's, and each partial ACK resends the next hole
//!   (RFC 6582);
//! - [`sack1`]: ns-2's Sack1, the holes a SACK scoreboard shows, paced by
//!   an estimate of the packets in flight.

pub mod newreno;
pub mod reno;
pub mod sack1;
pub mod tahoe;

pub use sack1::Sack1;

use super::TcpSender;
use crate::packet::SimPacket;
use crate::scenario::{CubicRecovery, TcpProfile, TcpVariant};
use crate::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    Tahoe,
    Reno,
    NewReno,
    Sack1,
}

/// Whether a new ACK in recovery ended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    Recovering,
    Over,
}

impl Recovery {
    /// The recovery a profile's variant runs.
    #[inline]
    pub fn of(p: &TcpProfile) -> Self {
        match p.variant {
            TcpVariant::Tahoe => Recovery::Tahoe,
            TcpVariant::Reno => Recovery::Reno,
            TcpVariant::Newreno => Recovery::NewReno,
            TcpVariant::Sack => Recovery::Sack1,
            TcpVariant::Cubic => match p.cubic.recovery {
                CubicRecovery::Sack => Recovery::Sack1,
                CubicRecovery::Newreno => Recovery::NewReno,
            },
        }
    }

    /// An ACK of `snd_una` again, with data outstanding.
    #[inline(always)]
    pub fn on_dupack(
        self,
        s: &mut TcpSender,
        ack: &SimPacket,
        now: Time,
        p: &TcpProfile,
        out: &mut super::Outbox,
    ) {
        match self {
            Recovery::Tahoe => tahoe::on_dupack(s, ack.flow, now, p, out),
            Recovery::Reno => reno::on_dupack(s, ack.flow, now, p, out),
            Recovery::NewReno => newreno::on_dupack(s, ack.flow, now, p, out),
            Recovery::Sack1 => sack1::on_dupack(s, ack, now, p, out),
        }
    }

    /// A new ACK in recovery, `newly` packets past the old `snd_una`
    /// (already moved).
    pub fn on_ack_in_recovery(
        self,
        s: &mut TcpSender,
        ack: &SimPacket,
        newly: u32,
        now: Time,
        p: &TcpProfile,
        out: &mut super::Outbox,
    ) -> Progress {
        match self {
            // Tahoe never is in recovery.
            Recovery::Tahoe | Recovery::Reno => reno::exit(s),
            Recovery::NewReno => newreno::on_ack_in_recovery(s, ack, newly, now, p, out),
            Recovery::Sack1 => sack1::on_ack_in_recovery(s, ack, now, p, out),
        }
    }

    /// A timeout, once the sender went back to `snd_una`.
    #[inline]
    pub fn on_timeout(self, s: &mut TcpSender) {
        if self == Recovery::Sack1 {
            sack1::on_timeout(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use crate::packet::Kind;
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::profile;
    use crate::tcp::{Outbox, TcpReceiver, TcpSender};
    use crate::Time;

    const MS: Time = 1_000_000;
    const RTT: Time = 100 * MS;

    /// What the sender did: when each packet went again, when loss
    /// recovery ended, its timeouts and fast retransmits.
    #[derive(Debug)]
    struct Transfer {
        resent: Vec<(Time, u32)>,
        recovered: Option<Time>,
        timeouts: u32,
        fast_retransmits: u32,
    }

    /// A long transfer in congestion avoidance with a window of 16, over a
    /// path of 100 ms round trip whose bottleneck delivers a packet a
    /// millisecond, where the first copy of each packet in `lost` is
    /// dropped: a sender, a receiver and the packets between them, for 2 s.
    fn transfer(variant: TcpVariant, lost: &[u32]) -> Transfer {
        let mut p = profile(variant);
        (p.initial_window, p.initial_ssthresh) = (16, 16);
        let mut s = TcpSender::new(&p, None);
        let mut r = TcpReceiver::default();
        let mut out = Outbox::default();
        let (mut to_receiver, mut to_sender) = (VecDeque::new(), VecDeque::new());
        let (mut last_arrival, mut highest, mut now) = (0, 0, 0);
        let mut t = Transfer {
            resent: Vec::new(),
            recovered: None,
            timeouts: 0,
            fast_retransmits: 0,
        };
        let mut recovering = false;
        s.open(now, 0, &p, &mut out);
        while now < 2_000 * MS {
            for packet in out.packets.drain(..) {
                if packet.kind == Kind::Ack {
                    to_sender.push_back((now + 50 * MS, packet));
                    continue;
                }
                if packet.seq < highest {
                    t.resent.push((now, packet.seq));
                } else if lost.contains(&packet.seq) {
                    highest = packet.seq + 1;
                    continue;
                }
                highest = highest.max(packet.seq + 1);
                last_arrival = (now + 50 * MS).max(last_arrival + MS);
                to_receiver.push_back((last_arrival, packet));
            }
            let next_data = to_receiver.front().map_or(Time::MAX, |&(t, _)| t);
            let next_ack = to_sender.front().map_or(Time::MAX, |&(t, _)| t);
            let timer = s.rto_deadline.get().unwrap_or(Time::MAX);
            now = next_data.min(next_ack).min(timer);
            if now == next_data {
                let (_, data) = to_receiver.pop_front().unwrap();
                r.on_data(&data, now, &p, &mut out);
            } else if now == next_ack {
                let (_, ack) = to_sender.pop_front().unwrap();
                s.on_ack(&ack, now, &p, &mut out);
            } else {
                s.on_timeout(now, 0, &p, &mut out);
            }
            if recovering && !s.in_recovery && t.recovered.is_none() {
                t.recovered = Some(now);
            }
            recovering = s.in_recovery;
        }
        t.timeouts = s.counters.timeouts;
        t.fast_retransmits = s.counters.fast_retransmits;
        t
    }

    /// Five losses in one window of 16 (packets 20 to 28, every other):
    /// SACK resends exactly the five holes, the first at the third
    /// duplicate ACK and the rest together a round trip later, once its
    /// `pipe` (which counts the lost packets as in flight) falls below the
    /// halved window; recovery ends two round trips after it began, with
    /// no timeout. NewReno resends one hole a round trip until its timer,
    /// reset at the first partial ACK only (RFC 6582 section 4), fires two
    /// round trips later; go-back-N resends the rest. Reno, whose first
    /// partial ACK ends its recovery, halves again or waits for its timer.
    #[test]
    fn several_losses_in_one_window() {
        let lost = [20, 22, 24, 26, 28];
        let sack = transfer(TcpVariant::Sack, &lost);
        let newreno = transfer(TcpVariant::Newreno, &lost);
        let reno = transfer(TcpVariant::Reno, &lost);
        for t in [&sack, &newreno, &reno] {
            eprintln!("{t:?}");
        }
        let seqs = |t: &Transfer| t.resent.iter().map(|&(_, s)| s).collect::<Vec<_>>();
        let first = |t: &Transfer| t.resent[0].0;
        let last = |t: &Transfer| t.resent.last().unwrap().0;
        assert_eq!(seqs(&sack), lost, "exactly the holes, once each");
        assert_eq!((sack.timeouts, sack.fast_retransmits), (0, 1));
        let rest = &sack.resent[1..];
        assert!(
            rest.iter().all(|&(t, _)| t - rest[0].0 < 10 * MS),
            "together"
        );
        assert!(rest[0].0 - first(&sack) <= RTT);
        assert!(sack.recovered.unwrap() - first(&sack) <= 2 * RTT);
        let holes = &newreno.resent[..4];
        assert_eq!(holes.iter().map(|&(_, s)| s).collect::<Vec<_>>(), lost[..4]);
        for pair in holes.windows(2) {
            assert_eq!(pair[1].0 - pair[0].0, RTT, "a round trip a hole");
        }
        assert_eq!((newreno.timeouts, newreno.fast_retransmits), (1, 1));
        assert!(
            seqs(&newreno)[4..].contains(&28),
            "go-back-N after the timer"
        );
        assert!(last(&newreno) - first(&newreno) <= 4 * RTT);
        assert!(reno.timeouts > 0 || reno.fast_retransmits > 1, "{reno:?}");
        assert!(reno.resent.len() >= lost.len());
    }
}
