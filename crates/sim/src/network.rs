//! Links and routes. A link is a transmitter behind a queue discipline, then
//! a propagation pipe. Packets leave a pipe in the order they entered it, so
//! the pipe is a FIFO and only its head is ever in the event list.

use aqmlab_qdisc::{Qdisc, QdiscCounters, QdiscStats};

use crate::metrics::DelayHistogram;
use crate::packet::SimPacket;
use crate::pool::List;
use crate::Time;

/// The state the event loop touches for every packet, in one cache line:
/// a packet through an idle link (the common case: every access link,
/// nearly always) reads and writes only this line, its discipline counting
/// it in the `Qdisc` itself. What only the results need, and the
/// discipline's counters of the packets that queue, live apart in
/// [`LinkRecord`].
///
/// 64 bytes on a 64-byte boundary (asserted below).
///
/// The results free the links whole, not a chunk at a time as the other
/// arenas: the standard allocator cannot shrink an over-aligned block in
/// place, and copying it for each chunk would cost more than it frees
/// (1,000,000 flows: the core's peak RSS 1.08 -> 1.31 GB; through Python
/// the run's peak is later and unchanged, docs/performance.md).
#[repr(C, align(64))]
pub struct Link {
    /// Packets propagating, with their arrival time at the far end: a list
    /// in the simulation's shared pipe pool.
    pub pipe: List,
    /// The transmitter is busy until then.
    pub busy_until: Time,
    /// Serialization time per byte, in ns as 32.32 fixed point.
    ns_per_byte: u64,
    pub delay: Time,
    pub qdisc: Qdisc<SimPacket>,
    /// Where its measurements are in `Simulation::monitors`, if it is
    /// monitored (`NOT_MONITORED` if not).
    monitor: u32,
    /// How the link's departures are found (one byte).
    pub departures: Departures,
    /// Some packets leaving this link go on to an express link, or into a
    /// gathering link's inbox: either way on, in `through_express`, as
    /// this link reserves or sends them.
    pub feeds_express: bool,
    /// A `TxDone` event is pending (never on a link that reserves; on a
    /// link that defers its departures, the event that runs them at the
    /// latest).
    pub tx_scheduled: bool,
}

// One cache line, fetched whole by `Simulation::prefetch_ahead`.
const _: () = assert!(size_of::<Link>() == 64 && align_of::<Link>() == 64);

impl Link {
    /// `monitor`: the index of its measurements, if it is monitored.
    pub fn new(rate_bps: u64, delay: Time, qdisc: Qdisc<SimPacket>, monitor: Option<u32>) -> Self {
        let departures = if qdisc.is_fifo() {
            Departures::Reserved
        } else if qdisc.defers_departures() {
            Departures::Deferred
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
            monitor: monitor.unwrap_or(NOT_MONITORED),
            departures,
            feeds_express: false,
        }
    }

    /// Where its measurements are in `Simulation::monitors`, if it is
    /// monitored.
    #[inline]
    pub fn monitor(&self) -> Option<usize> {
        (self.monitor != NOT_MONITORED).then_some(self.monitor as usize)
    }

    pub fn is_monitored(&self) -> bool {
        self.monitor != NOT_MONITORED
    }

    /// A FIFO that reserves: its departures cost no event.
    #[inline(always)]
    pub fn reserves(&self) -> bool {
        matches!(
            self.departures,
            Departures::Reserved | Departures::Express | Departures::Gathered
        )
    }

    /// A FIFO whose arrivals are gathered in an inbox
    /// (`Departures::Gathered`).
    #[inline(always)]
    pub fn gathers(&self) -> bool {
        self.departures == Departures::Gathered
    }

    /// A discipline whose departures run late (`Departures::Deferred`).
    #[inline(always)]
    pub fn defers(&self) -> bool {
        self.departures == Departures::Deferred
    }

    #[inline(always)]
    pub fn is_express(&self) -> bool {
        self.departures == Departures::Express
    }

    /// How late a departure of a link that defers them may run: at the
    /// latest half its propagation delay after it is due
    /// (`Simulation::arm_catch_up`), before the packet it sends can reach
    /// the far end.
    #[inline]
    pub fn catch_up_slack(&self) -> Time {
        self.delay / 2
    }

    /// The least time from when the work of sending a packet on this link
    /// is done to the packet's arrival at the far end: its propagation
    /// delay (a reservation is made by the arrival, an event's send when
    /// the packet starts), less the slack of a link that defers its
    /// departures.
    pub fn sent_ahead(&self) -> Time {
        if self.defers() {
            self.delay - self.catch_up_slack()
        } else {
            self.delay
        }
    }

    /// Time to serialize `bytes` onto the link, rounded up to a nanosecond
    /// (fixed point: no division per packet; exact to well under 1 ns).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        (bytes as u64 * self.ns_per_byte).div_ceil(1 << 32)
    }
}

const NOT_MONITORED: u32 = u32::MAX;

/// How a link's departures are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Departures {
    /// By events: a `TxDone` when the transmitter frees up with packets
    /// waiting, for a discipline with a clock or that drops as packets
    /// leave (every link, when a run is asked to use events throughout:
    /// `Simulation::without_reservations`).
    Events,
    /// Reserved: a FIFO's future is known when a packet arrives, so the
    /// packet's start and its arrival at the far end are computed then, in
    /// the arrival's event (see `Simulation::reserve`). Every FIFO.
    Reserved,
    /// By events, but late: a discipline that only its arrivals and
    /// departures change (`Qdisc::defers_departures`: no clock, no drop on
    /// dequeue; nearly every one but the FIFO) sees them in time order,
    /// each departure at its own time, however late it runs. So they run
    /// when next needed: those due before the link's next arrival, before
    /// the arrival is offered (`Simulation::catch_up`); before anything
    /// reads the discipline; or at the latest by a `TxDone` event half a
    /// propagation delay after the first of them is due, before the packet
    /// it sends can reach the far end (`Link::catch_up_slack`). Under
    /// load that is one event per dozens of packets, or none, not one per
    /// packet.
    Deferred,
    /// Reserved before the arrival: an express link, an unmonitored FIFO
    /// that every packet reaches from one and the same upstream link. Its
    /// arrivals come in that link's order, so a packet's passage through it
    /// is reserved as soon as its arrival there is known (when the upstream
    /// link reserves or sends it), and the arrival costs no event either.
    Express,
    /// Reserved before the arrival, in a batch: a gathering link, an
    /// unmonitored FIFO that only answers reach, each from the first link
    /// of its route, to data packets answered ahead
    /// (`Simulation::answer_ahead`) and known ahead of the answer's
    /// arrival by propagation delays (`Link::sent_ahead`). Its arrivals wait in an inbox
    /// (`crate::inbox::Inbox`), in order of arrival, until none can come
    /// before them; then they are reserved, many to an event.
    Gathered,
}

/// What the results need of a link, kept out of the hot path: with its
/// discipline's counters, which a packet let through an idle FIFO does not
/// touch (see [`Link`]). Its name is in `Simulation::link_names`, its
/// counters at the opening of the window in `Simulation::at_warmup`, its
/// measurements if it is monitored in `Simulation::monitors`: none of them
/// in every link. One cache line, aligned to it: a link whose copies
/// leave (`Simulation::release_started`) counts them in one line, fetched
/// early by `Simulation::prefetch_ahead`, not two.
#[repr(align(64))]
pub struct LinkRecord {
    pub counters: QdiscCounters,
    pub rate_bps: u64,
    pub from: u32,
    pub to: u32,
}

const _: () = assert!(size_of::<LinkRecord>() == 64);

/// A monitored link's measurements beyond the counters every link keeps.
#[derive(Default)]
pub struct Monitored {
    /// Queueing delays in the measurement window.
    pub delays: DelayHistogram,
    /// Departed bytes at the previous sample (per-interval utilization).
    pub departed_at_sample: u64,
}

/// A route: where its links start in the shared table. Packets carry it,
/// so forwarding never looks up the flow.
pub type RouteRef = u32;

/// An entry of the routes' table is a link, or the mark that closes a
/// route. The mark carries the first link of the route the answers take
/// (a data packet's ACK, an ACK's data) and a link entry whether the link
/// is express: what the event loop fetches early without reading the flow
/// or the link first (`Simulation::prefetch_ahead`). The mark also says
/// whether the packets reaching it may be answered ahead.
const END: u32 = 1 << 31;
/// On a link entry: the link is express (a hint for prefetching only).
const EXPRESS: u32 = 1 << 30;
/// On an end mark: the packet may be answered ahead of its arrival
/// (`Simulation::answer_ahead`).
const AHEAD: u32 = 1 << 30;
/// The link's number in an entry; in an end mark, no answer's link.
const LINK: u32 = EXPRESS - 1;

/// Where a packet goes after a hop, as the prefetching needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upcoming {
    /// A link, and the express link after it, if any.
    Link(u32, Option<u32>),
    /// The route's end: the host, and the first link of the answer's route.
    Host(Option<u32>),
}

/// Every route's links, one flat table, each route closed by an end mark.
#[derive(Default)]
pub struct Routes {
    links: Vec<u32>,
}

impl Routes {
    /// Room for `entries` more: the links of the routes to come and an
    /// end mark for each, exactly.
    pub fn reserve_exact(&mut self, entries: usize) {
        self.links.reserve_exact(entries);
    }

    /// A flow's two routes, each's end mark naming the other's first link.
    pub fn intern_pair(&mut self, forward: &[u32], reverse: &[u32]) -> (RouteRef, RouteRef) {
        let f = self.intern(forward, reverse.first());
        (f, self.intern(reverse, forward.first()))
    }

    fn intern(&mut self, path: &[u32], answer: Option<&u32>) -> RouteRef {
        let start = self.links.len() as u32;
        assert!(path.iter().all(|&l| l < LINK), "fewer than 2^30 links");
        self.links.extend_from_slice(path);
        self.links.push(END | answer.copied().unwrap_or(LINK));
        start
    }

    /// The link at `hop` of the route, or `None` past its end.
    #[inline]
    pub fn link(&self, route: RouteRef, hop: u8) -> Option<u32> {
        let l = self.links[route as usize + hop as usize];
        (l & END == 0).then_some(l & LINK)
    }

    /// Where the link at `hop` of the route is kept (to fetch it early).
    #[inline]
    pub fn entry(&self, route: RouteRef, hop: u8) -> &u32 {
        &self.links[route as usize + hop as usize]
    }

    /// What follows at `hop` of the route (to fetch it early).
    #[inline]
    pub fn upcoming(&self, route: RouteRef, hop: u8) -> Upcoming {
        let at = route as usize + hop as usize;
        let l = self.links[at];
        let known = |l: u32| (l & LINK != LINK).then_some(l & LINK);
        if l & END != 0 {
            return Upcoming::Host(known(l));
        }
        let after = self.links[at + 1];
        let express = (after & (END | EXPRESS) == EXPRESS).then_some(after & LINK);
        Upcoming::Link(l & LINK, express)
    }

    /// Mark the entries of the links `is_express` says are express (only
    /// `upcoming` reads the marks).
    pub fn mark_express(&mut self, is_express: impl Fn(u32) -> bool) {
        for e in &mut self.links {
            if *e & END == 0 {
                *e = if is_express(*e & LINK) {
                    *e | EXPRESS
                } else {
                    *e & !EXPRESS
                };
            }
        }
    }

    /// If `hop` is the end of the route and the packet reaching it may be
    /// answered ahead: the first link of the answer's route.
    #[inline(always)]
    pub fn answered_ahead(&self, route: RouteRef, hop: u8) -> Option<u32> {
        let l = self.links[route as usize + hop as usize];
        (l & (END | AHEAD) == END | AHEAD).then_some(l & LINK)
    }

    /// Mark the end of `route` as answered ahead, or not. Its answer's
    /// route must have a first link.
    pub fn set_answered_ahead(&mut self, route: RouteRef, ahead: bool) {
        let end = route as usize + self.links(route).count();
        debug_assert!(self.links[end] & LINK != LINK || !ahead);
        if ahead {
            self.links[end] |= AHEAD;
        } else {
            self.links[end] &= !AHEAD;
        }
    }

    /// Every link of every route interned so far, with the link before it
    /// on that route (`None` on a first hop: the host feeds it).
    pub fn hops(&self) -> impl Iterator<Item = (Option<u32>, u32)> + '_ {
        let mut previous = None;
        self.links.iter().filter_map(move |&l| {
            if l & END != 0 {
                previous = None;
                return None;
            }
            Some((previous.replace(l & LINK), l & LINK))
        })
    }

    pub fn links(&self, route: RouteRef) -> impl Iterator<Item = u32> + '_ {
        let rest = &self.links[route as usize..];
        rest.iter()
            .take_while(|&&l| l & END == 0)
            .map(|&l| l & LINK)
    }
}

/// The counters a link's windowed figures subtract, taken when the
/// measurement window opens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowStart {
    pub arrivals: u64,
    pub drops: u64,
    pub departure_bytes: u64,
}

impl WindowStart {
    pub fn of(stats: QdiscStats) -> Self {
        Self {
            arrivals: stats.arrivals,
            drops: stats.total_drops(),
            departure_bytes: stats.departure_bytes,
        }
    }
}

/// Every link's [`WindowStart`] in 12 bytes where it fits 32-bit counters
/// (every access link: their counts are small when the window opens), and
/// in full apart for the few links past 2^32 (a busy bottleneck's bytes).
#[derive(Default)]
pub struct WindowStarts {
    narrow: Vec<[u32; 3]>,
    /// By link, ascending.
    wide: Vec<(u32, WindowStart)>,
}

/// A narrow entry that stands for "in `wide`".
const WIDE: [u32; 3] = [u32::MAX; 3];

impl WindowStarts {
    /// Reserved when the simulation is built, so that its memory is
    /// counted with the rest of a link's.
    pub fn with_capacity(links: usize) -> Self {
        Self {
            narrow: Vec::with_capacity(links),
            wide: Vec::new(),
        }
    }

    /// The next link's counters.
    pub fn push(&mut self, w: WindowStart) {
        let narrow = [w.arrivals, w.drops, w.departure_bytes].map(u32::try_from);
        match narrow {
            [Ok(a), Ok(d), Ok(b)] if [a, d, b] != WIDE => self.narrow.push([a, d, b]),
            _ => {
                self.wide.push((self.narrow.len() as u32, w));
                self.narrow.push(WIDE);
            }
        }
    }

    /// Link `l`'s counters; zero if the window never opened.
    pub fn get(&self, l: usize) -> WindowStart {
        match self.narrow.get(l) {
            None => WindowStart::default(),
            Some(&WIDE) => {
                let i = self
                    .wide
                    .binary_search_by_key(&(l as u32), |&(link, _)| link)
                    .expect("a wide entry for each WIDE mark");
                self.wide[i].1
            }
            Some(&[arrivals, drops, departure_bytes]) => WindowStart {
                arrivals: arrivals.into(),
                drops: drops.into(),
                departure_bytes: departure_bytes.into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{align_of, offset_of, size_of};

    use super::{Link, LinkRecord, WindowStart, WindowStarts};
    use crate::sim::{Flow, TcpFlow, Transport};
    use crate::tcp::{TcpReceiver, TcpSender};

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

    /// A flow's cache lines as `Flow` says: the TCP receiver and profile in
    /// line 0, the sender with its timer's pending event in lines 1 and 2.
    #[test]
    fn a_flow_keeps_its_cache_lines() {
        assert_eq!(align_of::<Flow>(), 64);
        // No bigger than its TCP variant: the tag is in a niche, and the
        // TCP state starts the transport.
        assert_eq!(size_of::<Transport>(), size_of::<TcpFlow>());
        let tcp = offset_of!(Flow, transport);
        assert!(tcp + offset_of!(TcpFlow, profile) + 4 <= 64);
        assert!(tcp + offset_of!(TcpFlow, receiver) + size_of::<TcpReceiver>() <= 64);
        assert_eq!(tcp + offset_of!(TcpFlow, sender), 64);
        // The sender in lines 1 and 2, at most: an ACK reads no more.
        const { assert!(size_of::<TcpSender>() <= 128) };
        const { assert!(Flow::ACK_BYTES <= 192) };
        assert_eq!(Flow::DELACK_EVENT_AT / 64, 3);
    }

    #[test]
    fn window_starts_past_32_bits_are_kept_whole() {
        let max = u32::MAX.into();
        let at = |arrivals, drops, departure_bytes| WindowStart {
            arrivals,
            drops,
            departure_bytes,
        };
        // The second is past 32 bits, the third would read as the mark.
        let all = [
            at(5, 0, 4000),
            at(6, 0, 1 << 40),
            at(max, max, max),
            at(max, 0, 9),
        ];
        let mut starts = WindowStarts::with_capacity(all.len());
        for w in all {
            starts.push(w);
        }
        assert_eq!(starts.wide.len(), 2);
        for (l, &w) in all.iter().enumerate() {
            assert_eq!(starts.get(l), w);
        }
        assert_eq!(starts.get(4), WindowStart::default(), "never opened");
    }
}
