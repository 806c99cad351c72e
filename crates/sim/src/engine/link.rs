//! Links and routes. A link is a transmitter behind a queue discipline, then
//! a propagation pipe. Packets leave a pipe in the order they entered it, so
//! the pipe is a FIFO and only its head is ever in the event list.

use aqmlab_qdisc::{Backlog, ConservationError, Limit, Qdisc, QdiscCounters, QdiscStats};

use crate::accel::fifo::ReservingFifo;
use crate::measure::metrics::DelayHistogram;
use crate::packet::SimPacket;
use crate::pool::List;
use crate::Time;

/// The state the event loop touches for every packet, in one cache line:
/// a packet through an idle link (the common case: every access link,
/// nearly always) reads and writes only this line, a reserving FIFO
/// counting it in itself. What only the results need, and the queue's
/// counters of the packets that wait, live apart in [`LinkRecord`].
///
/// 64 bytes on a 64-byte boundary: new state that not every link needs
/// belongs beside the links, not in them.
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
    pub queue: Queue,
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
    /// Its wire loses packets at random (`engine::wire`): its pipe head
    /// draws for each.
    pub lossy: bool,
}

// One cache line, fetched whole by `Simulation::prefetch_ahead`.
const _: () = assert!(size_of::<Link>() <= 64 && align_of::<Link>() == 64);

impl Link {
    /// `monitor`: the index of its measurements, if it is monitored.
    pub fn new(rate_bps: u64, delay: Time, qdisc: Qdisc<SimPacket>, monitor: Option<u32>) -> Self {
        Self {
            ns_per_byte: (((8_000_000_000u128) << 32) / rate_bps as u128) as u64,
            delay,
            queue: Queue::Discipline(qdisc),
            busy_until: 0,
            tx_scheduled: false,
            pipe: List::default(),
            monitor: monitor.unwrap_or(NOT_MONITORED),
            departures: Departures::Events,
            feeds_express: false,
            lossy: false,
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
    pub fn sent_ahead(&self, departures: Departures) -> Time {
        if departures == Departures::Deferred {
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

/// A link's queue: its discipline, run on events (deferred or not), or, for
/// a FIFO whose departures are reserved at arrival, the reserving FIFO that
/// stands in for it (`accel::fifo`).
pub enum Queue {
    Discipline(Qdisc<SimPacket>),
    Reserving(ReservingFifo),
}

impl Queue {
    /// The discipline, on a link that runs on events.
    #[inline(always)]
    pub fn discipline(&mut self) -> &mut Qdisc<SimPacket> {
        match self {
            Queue::Discipline(q) => q,
            Queue::Reserving(_) => unreachable!("a reserving FIFO runs no discipline"),
        }
    }

    /// The reserving FIFO, on a link that reserves.
    #[inline(always)]
    pub fn fifo(&mut self) -> &mut ReservingFifo {
        match self {
            Queue::Reserving(f) => f,
            Queue::Discipline(_) => unreachable!("a discipline reserves nothing"),
        }
    }

    /// The reserving FIFO, if the link reserves (to fetch its state early).
    #[inline(always)]
    pub fn reserving(&self) -> Option<&ReservingFifo> {
        match self {
            Queue::Reserving(f) => Some(f),
            Queue::Discipline(_) => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Queue::Discipline(q) => q.name(),
            Queue::Reserving(_) => "droptail",
        }
    }

    /// The queues a flow's key hashes to (`QueueDiscipline::queues_of`);
    /// none for a FIFO.
    pub fn queues_of(&self, key: u64) -> Vec<u32> {
        match self {
            Queue::Discipline(q) => q.queues_of(key),
            Queue::Reserving(_) => Vec::new(),
        }
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        match self {
            Queue::Discipline(q) => q.backlog(),
            Queue::Reserving(f) => f.backlog(),
        }
    }

    /// Everything counted: `counters`, with the packets a reserving FIFO
    /// let through.
    pub fn stats<'a>(&self, counters: &'a QdiscCounters) -> QdiscStats<'a> {
        match self {
            Queue::Discipline(q) => q.stats(counters),
            Queue::Reserving(f) => f.stats(counters),
        }
    }

    /// Check arrivals = departures + drops + backlog.
    pub fn check_conservation(&self, counters: &QdiscCounters) -> Result<(), ConservationError> {
        (self.stats(counters)).check_conservation(self.name(), self.backlog().packets)
    }

    /// The limit of a plain FIFO, as built (before the plan makes it
    /// reserve).
    pub fn fifo_limit(&self) -> Option<Limit> {
        match self {
            Queue::Discipline(q) => q.fifo_limit(),
            Queue::Reserving(_) => None,
        }
    }

    /// Whether the discipline may ask to be woken.
    #[inline]
    pub fn has_clock(&self) -> bool {
        matches!(self, Queue::Discipline(q) if q.has_clock())
    }

    /// Whether the discipline may run its departures late
    /// (`Qdisc::defers_departures`).
    pub fn defers_departures(&self) -> bool {
        matches!(self, Queue::Discipline(q) if q.defers_departures())
    }
}

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

const _: () = assert!(size_of::<LinkRecord>() <= 64);

/// A monitored link's measurements beyond the counters every link keeps.
#[derive(Default)]
pub struct Monitored {
    /// Queueing delays in the measurement window.
    pub delays: DelayHistogram,
    /// Departed bytes at the previous sample (per-interval utilization).
    pub departed_at_sample: u64,
}
