//! Congestion control: how the window grows on new ACKs and shrinks on a
//! loss, an ECN echo or a timeout. The window and ssthresh are its state
//! ([`Window`]); which packets to send, and loss recovery's own window
//! arithmetic (Reno's inflation), belong to the sender and
//! [`super::recovery`].
//!
//! Dispatch is static: [`Policy`] is an enum of the implementations, and
//! AIMD, every variant but CUBIC, carries no state, so a Reno flow pays
//! no box and no virtual call per ACK.

mod aimd;
mod cubic;

pub use aimd::Aimd;
pub use cubic::Cubic;

use crate::scenario::TcpProfile;
use crate::Time;

/// The congestion window and the slow-start threshold, in packets
/// (fractional: congestion avoidance adds `1/cwnd` an ACK).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

impl Window {
    /// Packets the sender may have outstanding: the congestion window in
    /// whole packets, capped by the receiver's window, at least one.
    #[inline]
    pub fn usable(&self, p: &TcpProfile) -> u32 {
        (self.cwnd as u32).min(p.receiver_window).max(1)
    }

    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// A new ACK as a window policy sees it.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    /// Packets it acknowledged for the first time.
    pub acked: u32,
    /// The RTT it measured (ns): its arrival less the echoed send time.
    pub rtt: Time,
    pub now: Time,
    /// The sender's sequence space after it.
    pub snd_una: u32,
    pub snd_nxt: u32,
}

/// A window policy. The sender calls it on the events that change the
/// window; loss recovery decides what the window is during recovery.
pub trait CongestionControl {
    /// The connection is established at `now` (Linux's `init`).
    fn on_start(&mut self, _now: Time, _snd_nxt: u32) {}

    /// A new ACK outside loss recovery: grow the window.
    fn on_ack(&mut self, w: &mut Window, ack: Ack, p: &TcpProfile);

    /// Duplicate ACKs signalled a loss: set ssthresh, and cwnd to the
    /// reduced window (which a loss recovery may then inflate or restart).
    fn on_loss(&mut self, w: &mut Window, now: Time, p: &TcpProfile);

    /// An ACK echoed a CE mark (RFC 3168 section 6.1.2; the sender calls
    /// this at most once a window of data).
    fn on_ecn_echo(&mut self, w: &mut Window, now: Time, p: &TcpProfile);

    /// The retransmission timer expired: ssthresh, and cwnd to one packet.
    fn on_timeout(&mut self, w: &mut Window, now: Time, snd_nxt: u32, p: &TcpProfile);
}

/// A sender's window policy: AIMD, or CUBIC with its state (which lives
/// in the sender's box of variant state).
pub enum Policy<'a> {
    Aimd(Aimd),
    Cubic(&'a mut Cubic),
}

impl Policy<'_> {
    /// `on_ack`, the ACK made only for a policy that reads it: AIMD reads
    /// none of it, and a Reno ACK builds none.
    #[inline(always)]
    pub fn grow(&mut self, w: &mut Window, ack: impl FnOnce() -> Ack, p: &TcpProfile) {
        match self {
            Policy::Aimd(a) => a.on_ack(w, ack(), p),
            Policy::Cubic(c) => c.on_ack(w, ack(), p),
        }
    }
}

impl CongestionControl for Policy<'_> {
    #[inline]
    fn on_start(&mut self, now: Time, snd_nxt: u32) {
        match self {
            Policy::Aimd(a) => a.on_start(now, snd_nxt),
            Policy::Cubic(c) => c.on_start(now, snd_nxt),
        }
    }

    #[inline(always)]
    fn on_ack(&mut self, w: &mut Window, ack: Ack, p: &TcpProfile) {
        match self {
            Policy::Aimd(a) => a.on_ack(w, ack, p),
            Policy::Cubic(c) => c.on_ack(w, ack, p),
        }
    }

    #[inline]
    fn on_loss(&mut self, w: &mut Window, now: Time, p: &TcpProfile) {
        match self {
            Policy::Aimd(a) => a.on_loss(w, now, p),
            Policy::Cubic(c) => c.on_loss(w, now, p),
        }
    }

    #[inline]
    fn on_ecn_echo(&mut self, w: &mut Window, now: Time, p: &TcpProfile) {
        match self {
            Policy::Aimd(a) => a.on_ecn_echo(w, now, p),
            Policy::Cubic(c) => c.on_ecn_echo(w, now, p),
        }
    }

    #[inline]
    fn on_timeout(&mut self, w: &mut Window, now: Time, snd_nxt: u32, p: &TcpProfile) {
        match self {
            Policy::Aimd(a) => a.on_timeout(w, now, snd_nxt, p),
            Policy::Cubic(c) => c.on_timeout(w, now, snd_nxt, p),
        }
    }
}
