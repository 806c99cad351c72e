//! Links and routes. A link is a transmitter behind a queue discipline, then
//! a propagation pipe. Packets leave a pipe in the order they entered it, so
//! the pipe is a FIFO and only its head is ever in the event list.

use std::collections::VecDeque;

use aqmlab_qdisc::{Qdisc, QdiscStats};

use crate::metrics::DelayHistogram;
use crate::packet::SimPacket;
use crate::Time;

pub struct Link {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay: Time,
    pub qdisc: Qdisc<SimPacket>,
    /// The transmitter is busy until then.
    pub busy_until: Time,
    /// A `TxDone` event is pending.
    pub tx_scheduled: bool,
    /// Packets propagating, with their arrival time at the far end.
    pub pipe: VecDeque<(Time, SimPacket)>,
    /// Time of the pending `QdiscWake` event, if any (lazily cancelled).
    pub wake_at: Option<Time>,
    pub monitor: bool,
    /// Queueing delays in the measurement window (monitored links only).
    pub delays: DelayHistogram,
    /// Counters when the measurement window opened.
    pub at_warmup: QdiscStats,
    /// Departed bytes at the previous sample (per-interval utilization).
    pub departed_at_sample: u64,
}

impl Link {
    /// Time to serialize `bytes` onto the link, rounded up to a nanosecond.
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        let bits = bytes as u128 * 8 * 1_000_000_000;
        bits.div_ceil(self.rate_bps as u128) as Time
    }
}

/// A route as a slice of the shared link-index table.
#[derive(Clone, Copy, Debug, Default)]
pub struct RouteRef {
    pub start: u32,
    pub len: u16,
}

/// Every route's links, one flat table: flows hold `RouteRef`s into it.
#[derive(Default)]
pub struct Routes {
    links: Vec<u32>,
}

impl Routes {
    pub fn intern(&mut self, path: &[u32]) -> RouteRef {
        let start = self.links.len() as u32;
        self.links.extend_from_slice(path);
        RouteRef { start, len: path.len() as u16 }
    }

    #[inline]
    pub fn link(&self, route: RouteRef, hop: u8) -> Option<u32> {
        if (hop as u16) < route.len {
            Some(self.links[route.start as usize + hop as usize])
        } else {
            None
        }
    }

    pub fn links(&self, route: RouteRef) -> &[u32] {
        &self.links[route.start as usize..route.start as usize + route.len as usize]
    }
}
