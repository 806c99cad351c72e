//! Links and routes. A link is a transmitter behind a queue discipline, then
//! a propagation pipe. Packets leave a pipe in the order they entered it, so
//! the pipe is a FIFO and only its head is ever in the event list.

use aqmlab_qdisc::{Qdisc, QdiscStats};

use crate::metrics::DelayHistogram;
use crate::packet::SimPacket;
use crate::pool::List;
use crate::{MaybeTime, Time};

/// The state the event loop touches for every packet. What only the
/// results need lives apart, in [`LinkRecord`], to keep this in few cache
/// lines.
///
/// 128 bytes. Not `repr(align(64))`, though it would keep each link in two
/// cache lines: the standard allocator cannot resize an over-aligned block
/// in place, so freeing the arena a chunk at a time while the queue table
/// is written (results.rs) copied all of it each time (1,000,000 flows: peak
/// RSS 1.61 -> 2.04 GB).
pub struct Link {
    /// Serialization time per byte, in ns as 32.32 fixed point.
    ns_per_byte: u64,
    pub delay: Time,
    pub qdisc: Qdisc<SimPacket>,
    /// The transmitter is busy until then.
    pub busy_until: Time,
    /// A `TxDone` event is pending (never on a link that reserves).
    pub tx_scheduled: bool,
    /// Packets propagating, with their arrival time at the far end: a list
    /// in the simulation's shared pipe pool.
    pub pipe: List,
    /// Time of the pending `QdiscWake` event, if any (lazily cancelled).
    pub wake_at: MaybeTime,
    pub monitor: bool,
    /// How the link's departures are found (one byte: the link fits in
    /// 128).
    pub departures: Departures,
    /// Some packets leaving this link go on to an express link.
    pub feeds_express: bool,
}

impl Link {
    pub fn new(rate_bps: u64, delay: Time, qdisc: Qdisc<SimPacket>, monitor: bool) -> Self {
        let departures = if qdisc.is_fifo() {
            Departures::Reserved
        } else {
            Departures::Events
        };
        Self {
            ns_per_byte: (((8_000_000_000u128) << 32) / rate_bps as u128) as u64,
            delay,
            qdisc,
            busy_until: 0,
            tx_scheduled: false,
            pipe: List::default(),
            wake_at: MaybeTime::NONE,
            monitor,
            departures,
            feeds_express: false,
        }
    }

    /// A FIFO that reserves: its departures cost no event.
    #[inline(always)]
    pub fn reserves(&self) -> bool {
        self.departures != Departures::Events
    }

    #[inline(always)]
    pub fn is_express(&self) -> bool {
        self.departures == Departures::Express
    }

    /// Time to serialize `bytes` onto the link, rounded up to a nanosecond
    /// (fixed point: no division per packet; exact to well under 1 ns).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        (bytes as u64 * self.ns_per_byte).div_ceil(1 << 32)
    }
}

/// How a link's departures are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Departures {
    /// By events: a `TxDone` when the transmitter frees up with packets
    /// waiting, for a discipline that chooses its next packet then (every
    /// link, when a run is asked to use events throughout:
    /// `Simulation::without_reservations`).
    Events,
    /// Reserved: a FIFO's future is known when a packet arrives, so the
    /// packet's start and its arrival at the far end are computed then, in
    /// the arrival's event (see `Simulation::reserve`). Every FIFO.
    Reserved,
    /// Reserved before the arrival: an express link, an unmonitored FIFO
    /// that every packet reaches from one and the same upstream link. Its
    /// arrivals come in that link's order, so a packet's passage through it
    /// is reserved as soon as its arrival there is known (when the upstream
    /// link reserves or sends it), and the arrival costs no event either.
    Express,
}

/// What the results need of a link, kept out of the hot path.
pub struct LinkRecord {
    pub rate_bps: u64,
    /// A `Box<str>`: 8 bytes less than a `String`, on every link.
    pub name: Box<str>,
    pub from: u32,
    pub to: u32,
    /// Counters when the measurement window opened.
    pub at_warmup: WindowStart,
    /// What only monitored links measure, boxed so that the many
    /// unmonitored ones (every access link) do not carry it.
    pub monitored: Option<Box<Monitored>>,
}

/// A monitored link's measurements beyond the counters every link keeps.
#[derive(Default)]
pub struct Monitored {
    /// Queueing delays in the measurement window.
    pub delays: DelayHistogram,
    /// Departed bytes at the previous sample (per-interval utilization).
    pub departed_at_sample: u64,
}

impl LinkRecord {
    /// The monitored part; only called for links with `monitor` set.
    #[inline]
    pub fn monitored(&mut self) -> &mut Monitored {
        self.monitored
            .as_deref_mut()
            .expect("a monitored link has a monitor record")
    }

    /// Queueing delays measured (empty for an unmonitored link).
    pub fn delays(&self) -> Option<&DelayHistogram> {
        self.monitored.as_ref().map(|m| &m.delays)
    }
}

/// A route: where its links start in the shared table. Packets carry it,
/// so forwarding never looks up the flow.
pub type RouteRef = u32;

const END: u32 = u32::MAX;

/// Every route's links, one flat table, each route closed by an end mark.
#[derive(Default)]
pub struct Routes {
    links: Vec<u32>,
}

impl Routes {
    pub fn intern(&mut self, path: &[u32]) -> RouteRef {
        let start = self.links.len() as u32;
        self.links.extend_from_slice(path);
        self.links.push(END);
        start
    }

    /// The link at `hop` of the route, or `None` past its end.
    #[inline]
    pub fn link(&self, route: RouteRef, hop: u8) -> Option<u32> {
        let l = self.links[route as usize + hop as usize];
        (l != END).then_some(l)
    }

    /// Every link of every route interned so far, with the link before it
    /// on that route (`None` on a first hop: the host feeds it).
    pub fn hops(&self) -> impl Iterator<Item = (Option<u32>, u32)> + '_ {
        let mut previous = None;
        self.links.iter().filter_map(move |&l| {
            if l == END {
                previous = None;
                return None;
            }
            Some((previous.replace(l), l))
        })
    }

    pub fn links(&self, route: RouteRef) -> &[u32] {
        let rest = &self.links[route as usize..];
        &rest[..rest.iter().position(|&l| l == END).unwrap()]
    }
}

/// The counters a link's windowed figures subtract, taken when the
/// measurement window opens.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowStart {
    pub arrivals: u64,
    pub drops: u64,
    pub departure_bytes: u64,
}

impl WindowStart {
    pub fn of(stats: &QdiscStats) -> Self {
        Self {
            arrivals: stats.arrivals,
            drops: stats.total_drops(),
            departure_bytes: stats.departure_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    /// What a TCP flow of a dumbbell holds: its four links (access links
    /// each way at both ends) and their records, the flow and its boxed TCP
    /// state. A guard against growing it by accident; docs/performance.md
    /// has the measured memory per flow.
    #[test]
    fn a_dumbbell_flow_stays_small() {
        let links = 4 * (size_of::<super::Link>() + size_of::<super::LinkRecord>());
        let flow = size_of::<crate::sim::Flow>() + size_of::<crate::sim::TcpFlow>();
        assert!(
            size_of::<super::Link>() <= 128,
            "Link: {} bytes",
            size_of::<super::Link>()
        );
        assert!(
            links + flow <= 1100,
            "a dumbbell flow: {} bytes of links, {} of flow state",
            links,
            flow
        );
    }
}
