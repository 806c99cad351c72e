//! The engine: arenas of links and flows, the event list, and the loop that
//! runs the events in order.
//!
//! This is the reference model (DESIGN.md, "The simulator"): every link
//! transmits on its own events (`TxDone`), every pipe delivers its head on
//! its own event (`PipeHead`), and hosts take in what reaches them in the
//! event that brings it. Events at one nanosecond run in the order of
//! their key (time, kind, component; see [`events::Event`]), never in the
//! order they happened to be scheduled. The accelerations of
//! [`crate::accel`] skip events where the outcome is known, and must give
//! the same results to the bit; a run with `Accelerations::NONE` is the
//! reference itself.

pub mod build;
pub mod events;
pub mod flow;
pub mod forward;
pub mod host;
pub mod link;
pub mod routes;
pub mod wire;

use aqmlab_qdisc::Verdicts;

use crate::accel::{AccelState, Accelerations};
use crate::measure::census::Census;
use crate::measure::ledger::Ledger;
use crate::measure::metrics::TimeSeries;
use crate::measure::samples::SampledFlows;
use crate::measure::window::WindowStarts;
use crate::names::Names;
use crate::packet::SimPacket;
use crate::pool::Pool;
use crate::scenario::Scenario;
use crate::tcp::Outbox;
use crate::trace::Recorder;
use crate::traffic::arrivals::ArrivalProcess;
use crate::{MaybeTime, Time};

use events::{Event, EventQueue};
use flow::Flow;
use link::{Link, LinkRecord, Monitored};
use routes::Routes;
use wire::Wire;

pub struct Simulation {
    pub scenario: Scenario,
    pub now: Time,
    pub events: EventQueue,
    pub links: Vec<Link>,
    pub link_records: Vec<LinkRecord>,
    /// Link and node names, by index, for the result tables.
    pub link_names: Names,
    pub node_names: Names,
    /// Every link's counters when the measurement window opened.
    pub at_warmup: WindowStarts,
    /// The measurements of monitored links (see `Link::monitor`).
    pub monitors: Vec<Monitored>,
    /// Time of the pending `QdiscWake` event (lazily cancelled) of each
    /// link whose discipline is not a FIFO, by link: only those ask to be
    /// woken, so the many FIFOs do not carry it.
    pub(crate) wakes: Vec<(u32, MaybeTime)>,
    /// The wires of the links that lose packets at random, by link.
    pub wires: Vec<Wire>,
    /// Every packet propagating on any link.
    pub pipes: Pool<SimPacket>,
    pub routes: Routes,
    pub flows: Vec<Flow>,
    pub groups: Names,
    pub(crate) arrivals: Vec<ArrivalProcess>,
    pub(crate) verdicts: Verdicts<SimPacket>,
    pub(crate) outbox: Outbox,
    pub ledger: Ledger,
    pub events_processed: u64,
    /// The work done, by kind (counted only with the `census` feature).
    pub census: Census,
    pub series: TimeSeries,
    /// What the scenario's `trace` records, if it asks for anything.
    pub tracer: Option<Box<Recorder>>,
    pub(crate) warmed_up: bool,
    /// When the next `Sample` event runs (`Time::MAX` without samples).
    pub(crate) sample_due: Time,
    /// The TCP flows a sample visits: not those whose one transfer ended.
    pub(crate) sampled: SampledFlows,
    /// The flows `trace.queue_flows` counts, kept between samples.
    pub(crate) sending: crate::measure::samples::SendingFlows,
    /// What the accelerations keep between events.
    pub(crate) accel: AccelState,
}

impl Simulation {
    /// The simulation of `scenario` with every acceleration that applies.
    pub fn new(scenario: Scenario) -> Self {
        Self::with_accelerations(scenario, Accelerations::ALL)
    }

    /// Run until the end of the scenario. `progress` is called now and then
    /// with the simulated seconds done; returning false stops the run.
    pub fn run(&mut self, mut progress: impl FnMut(f64) -> bool) -> bool {
        let end = self.scenario.duration_ns;
        let mut last_report = std::time::Instant::now();
        let mut stall = StallGuard::default();
        self.start_prefetching();
        while let Some((time, event)) = self.events.pop() {
            if time > end {
                break;
            }
            if time != self.now {
                self.ledger.instant_ends();
                self.now = time;
            }
            self.events_processed += 1;
            self.prefetch_next();
            self.dispatch(event);
            if self.events_processed & CHECK_EVERY == 0 {
                stall.check(time, self.most_events_in_one_instant());
                if last_report.elapsed().as_millis() >= 250 {
                    last_report = std::time::Instant::now();
                    if !progress(time as f64 / 1e9) {
                        return false;
                    }
                }
            }
        }
        self.ledger.instant_ends();
        self.now = end;
        if !self.warmed_up {
            self.open_window();
        }
        self.settle_all(end + 1);
        true
    }

    /// More events than any run holds at one nanosecond: a handful per
    /// component (a link's pipe head, departure and wake-up; a flow's start,
    /// timers and sends; an arrival process), with a wide margin. Past it,
    /// simulated time has stopped.
    fn most_events_in_one_instant(&self) -> u64 {
        let components = self.links.len() + self.flows.len() + self.arrivals.len();
        (64 * components as u64).max(1 << 24)
    }

    /// Free what only the event loop needs (the event list, the packets
    /// still propagating, the arrival processes), so that the result tables
    /// built after the run reuse that memory instead of adding to the peak.
    /// Pipe lengths stay readable: each link keeps its own.
    pub fn release_run_state(&mut self) {
        self.events = EventQueue::new(self.scenario.ties);
        self.pipes = Pool::default();
        self.arrivals = Vec::new();
    }

    #[inline]
    fn dispatch(&mut self, event: Event) {
        self.census.event(event);
        match event {
            Event::PipeHead(l) => self.pipe_head(l as usize),
            Event::TxDone(l) => self.tx_done(l as usize),
            Event::QdiscWake(l) => self.qdisc_wake(l as usize),
            Event::RtoTimer(f) => self.rto_timer(f),
            Event::DelayedAck(f) => self.delayed_ack(f),
            Event::FlowStart(f) => self.flow_start(f),
            Event::FlowStop(f) => self.flow_stop(f),
            Event::UdpSend(f) => self.udp_send(f),
            Event::Arrival(a) => self.arrival(a as usize),
            Event::WarmupEnd => self.open_window(),
            Event::Sample => self.sample(),
            Event::InFlight(change) => self.ledger.fall_due(change as i32),
        }
    }

    /// Do `work` with the clock at `at`, a time whose work is done early
    /// (answering ahead) or late (deferred departures), then put the clock
    /// back.
    #[inline(always)]
    pub(crate) fn as_of<R>(&mut self, at: Time, work: impl FnOnce(&mut Self) -> R) -> R {
        let now = std::mem::replace(&mut self.now, at);
        let result = work(self);
        self.now = now;
        result
    }

    /// Propagation delay there and back.
    pub fn base_rtt(&self, forward: routes::RouteRef, reverse: routes::RouteRef) -> Time {
        let delay = |r| {
            self.routes
                .links(r)
                .map(|l| self.links[l as usize].delay)
                .sum::<Time>()
        };
        delay(forward) + delay(reverse)
    }

    /// Tell the disciplines on flow `f`'s routes its hosts, each way: the
    /// node its route leaves and the node it reaches (for disciplines that
    /// count host pairs, DCBT; the others ignore it).
    pub(crate) fn introduce_hosts(&mut self, f: u32) {
        for reverse in [false, true] {
            let route = self.flows[f as usize].route(reverse);
            let (Some(first), Some(last)) = (
                self.routes.links(route).next(),
                self.routes.links(route).last(),
            ) else {
                continue;
            };
            let (from, to) = (
                self.link_records[first as usize].from,
                self.link_records[last as usize].to,
            );
            let hosts = (from as u64) << 32 | to as u64;
            for l in self.routes.links(route) {
                if let link::Queue::Discipline(q) = &mut self.links[l as usize].queue {
                    q.learn_hosts(f as u64, hosts);
                }
            }
        }
    }
}

/// The event loop checks every `CHECK_EVERY + 1` events, not every one,
/// whether simulated time still advances (and reports progress).
const CHECK_EVERY: u64 = 0xFFFF;

/// Stops a run whose simulated time no longer advances (a component that
/// keeps scheduling itself at the same nanosecond) with a panic, which
/// reaches Python as an exception, instead of spinning forever.
#[derive(Default)]
struct StallGuard {
    /// The time at the previous check, and the events run since time was
    /// last seen to advance.
    at: Time,
    events: u64,
}

impl StallGuard {
    fn check(&mut self, now: Time, most: u64) {
        if now != self.at {
            (self.at, self.events) = (now, 0);
            return;
        }
        self.events += CHECK_EVERY + 1;
        assert!(
            self.events <= most,
            "simulated time stopped at {now} ns: more than {most} events ran at that nanosecond \
             (a component keeps scheduling itself at the same time)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stall_guard_lets_time_advance() {
        let mut guard = StallGuard::default();
        for t in 1..1_000 {
            guard.check(t, CHECK_EVERY + 1);
        }
    }

    #[test]
    fn the_stall_guard_allows_many_events_at_one_nanosecond() {
        let mut guard = StallGuard::default();
        for _ in 0..4 {
            guard.check(5, 4 * (CHECK_EVERY + 1));
        }
    }

    #[test]
    #[should_panic(expected = "simulated time stopped at 5 ns")]
    fn the_stall_guard_stops_a_run_whose_time_stands_still() {
        let mut guard = StallGuard::default();
        for _ in 0..5 {
            guard.check(5, 3 * (CHECK_EVERY + 1));
        }
    }
}
