//! Flows: a TCP connection or a UDP source between two hosts, with the
//! routes its packets take each way.

use std::num::NonZeroU64;

use aqmlab_qdisc::rng::Rng;

use crate::engine::routes::RouteRef;
use crate::scenario::Dist;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::traffic::udp::UdpFlow;
use crate::{MaybeTime, Time};

/// A TCP flow's state, in the order its cache lines are read (see
/// [`Flow`]): first what a data packet reaching the receiver reads (the
/// receiver, the profile), then the sender (an ACK, the retransmission
/// timer's pending event with it), then the delayed ACK's pending event
/// and what only transfers' ends and the results read.
#[repr(C)]
pub struct TcpFlow {
    pub receiver: TcpReceiver,
    pub profile: u32,
    pub trace_cwnd: bool,
    /// Its group stops at a time: the sender acts on its own then, so its
    /// ACKs are not answered ahead (`accel::plan`).
    pub stops: bool,
    pub sender: TcpSender,
    pub(crate) delack_event_at: MaybeTime,
    /// On-off sources only: the idle time between transfers, their tally.
    pub on_off: Option<Box<OnOff>>,
    /// Time the first transfer took, once it is done.
    pub first_completion: MaybeTime,
}

impl TcpFlow {
    pub(crate) fn new(
        profile: u32,
        sender: TcpSender,
        on_off: Option<Box<OnOff>>,
        trace_cwnd: bool,
    ) -> Self {
        Self {
            stops: false,
            profile,
            sender,
            receiver: TcpReceiver::default(),
            on_off,
            delack_event_at: MaybeTime::NONE,
            first_completion: MaybeTime::NONE,
            trace_cwnd,
        }
    }

    /// Transfers completed, and the time they took in all.
    pub fn completions(&self) -> (u32, Time) {
        match &self.on_off {
            Some(o) => (o.transfers_done, o.completion_sum),
            None => self.first_completion.get().map_or((0, 0), |t| (1, t)),
        }
    }
}

/// What only an on-off TCP source keeps: the idle time between transfers,
/// with the flow's own random stream, and the tally of its transfers. A
/// flow that sends once (nearly every flow) has one transfer, started with
/// the flow, and its tally is `TcpFlow::first_completion`.
pub struct OnOff {
    pub off_time: Dist,
    /// The next transfer continues the connection (`TcpSender::restart`).
    pub keep_connection: bool,
    pub rng: Rng,
    /// Start of the current transfer, and the end of the last one.
    pub transfer_start: Time,
    pub done_at: Time,
    pub transfers_done: u32,
    pub completion_sum: Time,
}

/// Held in the flow itself: a TCP flow's state is read on every packet
/// of the flow that reaches an end host, and a box put a dependent load
/// (the flow, then its box, each a cache miss at scale) in front of it.
/// A UDP source, rarer and larger, stays boxed so that it does not size
/// every flow.
pub enum Transport {
    Tcp(TcpFlow),
    Udp(Box<UdpFlow>),
}

/// A flow. Its end hosts and base RTT, which only the results need, are
/// read off its routes then.
///
/// Laid out by cache line, on a 64-byte boundary: first what a data packet
/// reaching the receiver reads (routes, delivered bytes, size, the TCP
/// receiver and profile), then the TCP sender with its retransmission
/// timer's pending event (what an ACK reads), then the delayed ACK's
/// pending event and what the results and transfers' ends read. A packet
/// reaching an end host then reads a line or a few at an address computed
/// from the flow id, with no pointer to follow first, and the prefetching
/// fetches those (`ACK_BYTES`, `DELACK_EVENT_AT`). State only some flows
/// need lives boxed or beside the flows (a CUBIC sender's, a SACK
/// scoreboard, an on-off source's).
#[repr(C, align(64))]
pub struct Flow {
    pub forward: RouteRef,
    pub reverse: RouteRef,
    /// Unique payload bytes delivered in order, whole run.
    pub delivered: u64,
    /// Payload bytes requested (`None`: long-lived or UDP).
    size: Option<NonZeroU64>,
    pub transport: Transport,
    pub group: u32,
    pub start: Time,
    /// `delivered` when the measurement window opened (0 for a flow that
    /// started in it): the window's bytes are the difference, so that a
    /// packet writes one counter, not two.
    pub(crate) delivered_at_warmup: u64,
    /// The flow's packets dropped, data and ACKs, whole run (in the last
    /// line's padding, so it costs no memory).
    pub(crate) dropped: u64,
    /// Data packets its receiver had already when they arrived, whole run,
    /// and when the measurement window opened (the padding's too).
    pub(crate) duplicates: u32,
    pub(crate) duplicates_at_warmup: u32,
}

impl Flow {
    /// Where a TCP flow keeps its pending delayed ACK's time (line 3).
    pub const DELACK_EVENT_AT: usize =
        std::mem::offset_of!(Flow, transport) + std::mem::offset_of!(TcpFlow, delack_event_at);

    /// The bytes of a TCP flow an ACK reads: up to the end of the sender
    /// (lines 0 to 2).
    pub const ACK_BYTES: usize = std::mem::offset_of!(Flow, transport)
        + std::mem::offset_of!(TcpFlow, sender)
        + std::mem::size_of::<TcpSender>();

    /// The route the flow's packets take one way: the reverse one for
    /// ACKs (`Kind::is_reverse`).
    #[inline]
    pub fn route(&self, reverse: bool) -> RouteRef {
        if reverse {
            self.reverse
        } else {
            self.forward
        }
    }

    pub(crate) fn new(
        group: u32,
        (forward, reverse): (RouteRef, RouteRef),
        start: Time,
        size_bytes: Option<u64>,
        transport: Transport,
    ) -> Self {
        Self {
            forward,
            reverse,
            delivered: 0,
            size: size_bytes.and_then(NonZeroU64::new),
            transport,
            group,
            start,
            delivered_at_warmup: 0,
            dropped: 0,
            duplicates: 0,
            duplicates_at_warmup: 0,
        }
    }

    /// Payload bytes requested (`None`: long-lived or UDP).
    #[inline]
    pub fn size_bytes(&self) -> Option<u64> {
        self.size.map(NonZeroU64::get)
    }

    /// Unique payload bytes delivered in order in the measurement window.
    pub fn delivered_window(&self) -> u64 {
        self.delivered - self.delivered_at_warmup
    }

    /// Data packets that reached the receiver in the measurement window
    /// and that it had already.
    pub fn duplicates_window(&self) -> u32 {
        self.duplicates - self.duplicates_at_warmup
    }
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    use super::Flow;
    use crate::engine::link::{Link, LinkRecord};

    /// What a TCP flow of a dumbbell holds: its four links (access links
    /// each way at both ends), their records and counters at the opening of
    /// the window, the flow with its TCP state. A guard against growing any
    /// of it by accident; docs/performance.md has the measured memory per
    /// flow.
    #[test]
    fn a_dumbbell_flow_stays_small() {
        let sizes = [
            ("Link", size_of::<Link>(), 64),
            ("LinkRecord", size_of::<LinkRecord>(), 64),
            ("Flow", size_of::<Flow>(), 256),
        ];
        for (name, size, most) in sizes {
            assert!(size <= most, "{name}: {size} bytes, was {most}");
        }
        let link = size_of::<Link>() + size_of::<LinkRecord>() + size_of::<[u32; 3]>();
        let flow = size_of::<Flow>();
        assert!(
            4 * link + flow <= 816,
            "a dumbbell flow: {} bytes",
            4 * link + flow
        );
    }
}
