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
