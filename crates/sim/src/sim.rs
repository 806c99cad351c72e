//! The simulation: arenas of links and flows, the event loop, and the
//! glue between the network and the transport state machines.

use std::num::NonZeroU64;

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::{Qdisc, QdiscCounters, TrafficClass, Verdicts};

use crate::census::Census;
use crate::events::{Event, EventQueue};
use crate::inbox::Inbox;
pub use crate::ledger::Ledger;
use crate::names::Names;
use crate::network::{
    Departures, Link, LinkRecord, Monitored, RouteRef, Routes, Upcoming, WindowStart, WindowStarts,
};
use crate::packet::{Kind, SimPacket};
use crate::pool::Pool;
use crate::prefetch::{prefetch, prefetch_all, prefetch_at, prefetch_start};
use crate::scenario::{ArrivalSpec, Dist, FlowGroup, NameRun, Scenario, UdpSource};
use crate::sender_samples::{KeptSamples, SenderSample};
use crate::tcp::{payload_of, Outbox, TcpReceiver, TcpSender};
use crate::{MaybeTime, Time};

/// Random-stream ids: one namespace per kind of component, so that adding a
/// flow never changes another component's numbers.
const STREAM_QDISC: u64 = 1 << 40;
const STREAM_FLOW: u64 = 2 << 40;
const STREAM_ARRIVAL: u64 = 3 << 40;

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
    /// ACKs are not answered ahead (`mark_answered_ahead`).
    pub stops: bool,
    pub sender: TcpSender,
    delack_event_at: MaybeTime,
    /// On-off sources only: the idle time between transfers, their tally.
    pub on_off: Option<Box<OnOff>>,
    /// Time the first transfer took, once it is done.
    pub first_completion: MaybeTime,
}

impl TcpFlow {
    fn new(profile: u32, sender: TcpSender, on_off: Option<Box<OnOff>>, trace_cwnd: bool) -> Self {
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
    pub rng: Rng,
    /// Start of the current transfer.
    pub transfer_start: Time,
    pub transfers_done: u32,
    pub completion_sum: Time,
}

pub struct UdpFlow {
    pub packet_size: u32,
    pub class: TrafficClass,
    pub source: UdpSource,
    pub stop: Option<Time>,
    /// End of the current on period (on-off sources).
    on_until: Time,
    seq: u32,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// The flow's random stream (jitter, Poisson gaps, on-off periods).
    rng: Rng,
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
/// Laid out by cache line, 256 bytes on a 64-byte boundary (as a boxed
/// TCP state and the flow cost before, 200 + 56): line 0 holds what a data
/// packet reaching the receiver reads (routes, delivered bytes, size, the
/// TCP receiver and profile), lines 1 and 2 the TCP sender with its
/// retransmission timer's pending event (an ACK), line 3 the delayed ACK's
/// pending event and what the results and transfers' ends read. A packet
/// reaching an end host then reads one line (data, two with delayed ACKs)
/// or three (ACK) at an address computed from the flow id, with no pointer
/// to follow first. The size guard in network.rs checks the offsets.
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
    delivered_at_warmup: u64,
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

    fn new(
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
}

struct ArrivalProcess {
    spec: ArrivalSpec,
    group: u32,
    /// Forward and reverse.
    routes: Vec<(RouteRef, RouteRef)>,
    rng: Rng,
}

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
    wakes: Vec<(u32, MaybeTime)>,
    /// Every packet propagating on any link.
    pub pipes: Pool<SimPacket>,
    /// The gathering links' inboxes (`Departures::Gathered`), by link.
    inboxes: Vec<Inbox>,
    pub routes: Routes,
    pub flows: Vec<Flow>,
    pub groups: Names,
    arrivals: Vec<ArrivalProcess>,
    verdicts: Verdicts<SimPacket>,
    outbox: Outbox,
    pub ledger: Ledger,
    pub events_processed: u64,
    /// The work done, by kind (counted only with the `census` feature).
    pub census: Census,
    pub series: crate::metrics::TimeSeries,
    warmed_up: bool,
    /// Some TCP profile delays its ACKs: only then does a data packet
    /// reaching its receiver read the flow's last line (`prefetch_flow`).
    delays_acks: bool,
    /// Packets reaching their receiver before this time may be answered
    /// ahead (`answer_ahead`): the window's opening until it opens (an
    /// arrival at the opening comes after it), then just past the run's
    /// end (events at the end still run).
    answer_ahead_before: Time,
    /// When the next `Sample` event runs (`Time::MAX` without samples).
    sample_due: Time,
    /// What the next sample reads of the senders that answered ahead past
    /// its time.
    kept_samples: KeptSamples,
    /// The most arrivals one event of a gathering link reserves
    /// (`drain_inbox`).
    gather_batch: usize,
}

/// Runs of names, written out into the compact store.
fn names_of(runs: &[NameRun]) -> Names {
    let mut names = Names::with_capacity(runs.iter().map(NameRun::len).sum());
    for name in runs.iter().flat_map(NameRun::expand) {
        names.push(&name);
    }
    names
}

impl Simulation {
    pub fn new(mut scenario: Scenario) -> Self {
        let seed = scenario.seed;
        let node_names = names_of(&std::mem::take(&mut scenario.nodes));
        // The link columns are freed once the arenas are built; the flows'
        // in `build_flows`, as their flows are built.
        let specs = std::mem::take(&mut scenario.links);
        let link_names = names_of(&specs.names);
        let mut links = Vec::with_capacity(specs.len());
        let mut link_records = Vec::with_capacity(specs.len());
        let mut monitors = Vec::new();
        // From the last link to the first: the order monitored links have
        // always been numbered in.
        for i in (0..specs.len()).rev() {
            let rate_bps = specs.rate_bps[i];
            // Disciplines that need the link rate (RED's idle decay, PIE)
            // get this link's unless the scenario set one.
            let mut spec = specs.qdiscs[specs.qdisc[i] as usize].clone();
            spec.fill_link_rate(rate_bps);
            let qdisc =
                Qdisc::from_spec(&spec, aqmlab_qdisc::rng::mix(seed, STREAM_QDISC + i as u64));
            let monitor = specs.monitor[i].then(|| {
                monitors.push(Monitored::default());
                monitors.len() as u32 - 1
            });
            links.push(Link::new(rate_bps, specs.delay_ns[i], qdisc, monitor));
            link_records.push(LinkRecord {
                counters: QdiscCounters::default(),
                rate_bps,
                from: specs.from[i],
                to: specs.to[i],
            });
        }
        drop(specs);
        links.reverse();
        link_records.reverse();
        let wakes = (links.iter().enumerate())
            .filter(|(_, link)| !link.qdisc.is_fifo())
            .map(|(l, _)| (l as u32, MaybeTime::NONE))
            .collect();
        let mut sim = Simulation {
            now: 0,
            events: EventQueue::default(),
            at_warmup: WindowStarts::with_capacity(links.len()),
            links,
            link_records,
            link_names,
            node_names,
            monitors,
            wakes,
            pipes: Pool::default(),
            inboxes: Vec::new(),
            routes: Routes::default(),
            flows: Vec::new(),
            groups: Names::default(),
            arrivals: Vec::new(),
            verdicts: Verdicts::new(),
            outbox: Outbox::default(),
            ledger: Ledger::default(),
            events_processed: 0,
            census: Census::default(),
            series: Default::default(),
            warmed_up: false,
            delays_acks: scenario.tcp_profiles.iter().any(|p| p.delayed_ack),
            answer_ahead_before: scenario.warmup_ns.min(scenario.duration_ns + 1),
            sample_due: match scenario.sample_interval_ns {
                0 => Time::MAX,
                _ => 0,
            },
            kept_samples: KeptSamples::default(),
            gather_batch: GATHER_BATCH,
            scenario,
        };
        sim.build_flows();
        sim.mark_express_links();
        sim.mark_answered_ahead(true);
        sim.mark_gathering_links();
        sim.events
            .schedule(sim.scenario.warmup_ns, Event::WarmupEnd);
        if sim.scenario.sample_interval_ns > 0 {
            sim.events.schedule(0, Event::Sample);
        }
        for link in 0..sim.links.len() {
            sim.schedule_qdisc_wake(link);
        }
        sim
    }

    /// The random stream of the flow about to be added: one per flow id,
    /// so adding a flow never changes another's numbers.
    fn flow_rng(&self) -> Rng {
        Rng::stream(self.scenario.seed, STREAM_FLOW + self.flows.len() as u64)
    }

    /// Propagation delay there and back.
    pub fn base_rtt(&self, forward: RouteRef, reverse: RouteRef) -> Time {
        let delay = |r| {
            self.routes
                .links(r)
                .map(|l| self.links[l as usize].delay)
                .sum::<Time>()
        };
        delay(forward) + delay(reverse)
    }

    fn build_flows(&mut self) {
        let specs = std::mem::take(&mut self.scenario.flows);
        let n = specs.len();
        self.flows.reserve_exact(n);
        // The routes' table in one block of its final size: grown by
        // doubling it could leave half of it unused.
        self.routes
            .reserve_exact(specs.path.links.len() + specs.reverse_path.links.len() + 2 * n);
        // Each group's label is interned when its first flow is built, so
        // that groups number in the order of their flows.
        let mut group_ids: Vec<Option<u32>> = vec![None; specs.groups.len()];
        for i in 0..n {
            let g = specs.group[i] as usize;
            let group =
                *group_ids[g].get_or_insert_with(|| self.groups.intern(specs.groups[g].label()));
            let (path, reverse, start_ns) = (
                specs.path.get(i),
                specs.reverse_path.get(i),
                specs.start_ns[i],
            );
            match &specs.groups[g] {
                FlowGroup::Tcp {
                    profile,
                    size_bytes,
                    off_time,
                    trace_cwnd,
                    stop_ns,
                    ..
                } => {
                    let p = &self.scenario.tcp_profiles[*profile as usize];
                    let on_off = off_time.as_ref().map(|dist| {
                        Box::new(OnOff {
                            off_time: dist.clone(),
                            rng: self.flow_rng(),
                            transfer_start: start_ns,
                            transfers_done: 0,
                            completion_sum: 0,
                        })
                    });
                    let sender = TcpSender::new(p, *size_bytes);
                    let mut tcp = TcpFlow::new(*profile, sender, on_off, *trace_cwnd);
                    tcp.stops = stop_ns.is_some();
                    let transport = Transport::Tcp(tcp);
                    self.add_flow(group, path, reverse, start_ns, *size_bytes, transport);
                    if let Some(stop) = *stop_ns {
                        let id = self.flows.len() as u32 - 1;
                        self.events.schedule(stop, Event::FlowStop(id));
                    }
                }
                FlowGroup::Udp {
                    packet_size,
                    stop_ns,
                    tagged,
                    source,
                    ..
                } => {
                    let udp = Box::new(UdpFlow {
                        packet_size: *packet_size,
                        class: if *tagged {
                            TrafficClass::UdpTagged
                        } else {
                            TrafficClass::UdpUntagged
                        },
                        source: source.clone(),
                        stop: *stop_ns,
                        on_until: 0,
                        seq: 0,
                        packets_sent: 0,
                        bytes_sent: 0,
                        rng: self.flow_rng(),
                    });
                    self.add_flow(group, path, reverse, start_ns, None, Transport::Udp(udp));
                }
            }
        }
        drop(specs);
        let arrival_specs = std::mem::take(&mut self.scenario.arrivals);
        for (i, spec) in arrival_specs.iter().enumerate() {
            let group = self.groups.intern(&spec.group);
            let routes = spec
                .routes
                .iter()
                .map(|r| self.routes.intern_pair(&r.path, &r.reverse_path))
                .collect();
            let mut rng = Rng::stream(self.scenario.seed, STREAM_ARRIVAL + i as u64);
            let first = spec.start_ns + (rng.exponential(1.0 / spec.rate_per_s) * 1e9) as Time;
            self.events.schedule(first, Event::Arrival(i as u32));
            self.arrivals.push(ArrivalProcess {
                spec: spec.clone(),
                group,
                routes,
                rng,
            });
        }
        self.scenario.arrivals = arrival_specs;
    }

    /// Find the express links (see [`Departures::Express`]): unmonitored FIFOs
    /// that every route reaches from one and the same upstream link, never
    /// from a host.
    fn mark_express_links(&mut self) {
        const UNSEEN: u32 = u32::MAX - 1;
        const NOT_ONE: u32 = u32::MAX;
        let mut feeder = vec![UNSEEN; self.links.len()];
        for (previous, l) in self.routes.hops() {
            let f = &mut feeder[l as usize];
            let from = previous.unwrap_or(NOT_ONE);
            *f = if *f == UNSEEN || *f == from {
                from
            } else {
                NOT_ONE
            };
        }
        for (l, &f) in feeder.iter().enumerate() {
            let link = &mut self.links[l];
            if f < UNSEEN && link.reserves() && !link.is_monitored() {
                link.departures = Departures::Express;
                self.links[f as usize].feeds_express = true;
            }
        }
        let links = &self.links;
        self.routes.mark_express(|l| links[l as usize].is_express());
    }

    /// Mark the routes whose packets may be answered ahead (see
    /// `answer_ahead`), or (`allow` false) none. A TCP flow of one transfer
    /// (an on-off source's receiver ignores a past transfer's stragglers)
    /// qualifies at either end when the answer leaves on a reserving FIFO
    /// that no other route takes, that is not monitored (its samples and
    /// delays are taken in time), feeds no express link (which could drop
    /// the answer) and lets a packet of the answer's size pass when idle:
    /// - data packets, at the receiver, if it answers each with one ACK at
    ///   once (no delayed ACKs);
    /// - ACKs, at the sender, unless its window is traced (each sample
    ///   writes it out) or it stops at a time (it acts on its own then,
    ///   `flow_stop`). With many flows the sender's state is out of the
    ///   caches: a gathering link's batch fetches it early
    ///   (`prefetch_gathered`).
    fn mark_answered_ahead(&mut self, allow: bool) {
        let mut uses = vec![0u32; self.links.len()];
        for (_, l) in self.routes.hops() {
            uses[l as usize] += 1;
        }
        let answer_passes = |route: RouteRef, size: u32| {
            self.routes.link(route, 0).is_some_and(|a| {
                let link = &self.links[a as usize];
                uses[a as usize] == 1
                    && link.reserves()
                    && !link.is_monitored()
                    && !link.feeds_express
                    && link.qdisc.admits_into_empty(size)
            })
        };
        let mut marks = Vec::with_capacity(2 * self.flows.len());
        for flow in &self.flows {
            let (data, acks) = match &flow.transport {
                Transport::Tcp(tcp) if allow && tcp.on_off.is_none() => {
                    let p = &self.scenario.tcp_profiles[tcp.profile as usize];
                    (
                        !p.delayed_ack && answer_passes(flow.reverse, p.ack_size),
                        !tcp.trace_cwnd && !tcp.stops && answer_passes(flow.forward, p.packet_size),
                    )
                }
                _ => (false, false),
            };
            marks.push((flow.forward, data));
            marks.push((flow.reverse, acks));
        }
        for (route, ahead) in marks {
            self.routes.set_answered_ahead(route, ahead);
        }
    }

    /// How many flows' data packets, and how many flows' ACKs, may be
    /// answered ahead (`mark_answered_ahead`).
    pub fn answering_ahead(&self) -> (usize, usize) {
        let ahead = |route: RouteRef| {
            let end = self.routes.links(route).count() as u8;
            self.routes.answered_ahead(route, end).is_some()
        };
        let data = self.flows.iter().filter(|f| ahead(f.forward)).count();
        let acks = self.flows.iter().filter(|f| ahead(f.reverse)).count();
        (data, acks)
    }

    /// Answer no packet ahead (`answer_ahead`): the reference that
    /// answering ahead is tested against. Call before `run`.
    pub fn without_answers_ahead(&mut self) {
        self.without_gathering();
        self.mark_answered_ahead(false);
    }

    /// Find the gathering links (see [`Departures::Gathered`]): reserving,
    /// unmonitored FIFOs not express, every arrival of which comes from
    /// the first link of an answer's route whose data packets are
    /// answered ahead and reach their receiver through an express link.
    /// Such a data packet's arrival at the receiver is known once the link
    /// before the express one has sent it, at least `Link::sent_ahead`
    /// before it reaches the express link, so its answer comes at least
    /// that, the express link's delay and the answer link's after.
    fn mark_gathering_links(&mut self) {
        /// What a link is to gathering, in 12 bytes (a million flows have
        /// four million links). Times in ns, saturated: a lead or tail too
        /// long for 32 bits is still a bound.
        #[derive(Clone, Copy)]
        enum Role {
            /// May gather: the least lead and tail of its feeders so far.
            Candidate(u32, u32),
            /// An answer link: the lead and tail of the inbox it feeds.
            Feeds(u32, u32),
            No,
        }
        let ns = |t: Time| u32::try_from(t).unwrap_or(u32::MAX);
        let mut roles: Vec<Role> = (self.links.iter())
            .map(
                |link| match link.departures == Departures::Reserved && !link.is_monitored() {
                    true => Role::Candidate(u32::MAX, u32::MAX),
                    false => Role::No,
                },
            )
            .collect();
        for flow in &self.flows {
            let hops = self.routes.links(flow.forward).count();
            let Some(answer) = self.routes.answered_ahead(flow.forward, hops as u8) else {
                continue;
            };
            let mut last_two = self.routes.links(flow.forward).skip(hops.saturating_sub(2));
            let (Some(b), Some(e)) = (last_two.next(), last_two.next()) else {
                continue;
            };
            let (b, e, a) = (
                &self.links[b as usize],
                &self.links[e as usize],
                &self.links[answer as usize],
            );
            if e.is_express() {
                // `tx_time(1)`: at least a nanosecond, so that a packet due
                // now is always due before any answer to come.
                let tail = a.delay + a.tx_time(1);
                let lead = b.sent_ahead() + e.delay + tail;
                // An answer link is a route's first: it gathers nothing.
                roles[answer as usize] = Role::Feeds(ns(lead), ns(tail));
            }
        }
        for (previous, l) in self.routes.hops() {
            if let Role::Candidate(lead, tail) = roles[l as usize] {
                roles[l as usize] = match previous.map(|f| roles[f as usize]) {
                    Some(Role::Feeds(l2, t2)) => Role::Candidate(lead.min(l2), tail.min(t2)),
                    _ => Role::No,
                };
            }
        }
        let gathers = |role: Role| matches!(role, Role::Candidate(lead, _) if lead < u32::MAX);
        for (previous, l) in self.routes.hops() {
            if let (Some(f), true) = (previous, gathers(roles[l as usize])) {
                self.links[f as usize].feeds_express = true;
            }
        }
        for (l, &role) in roles.iter().enumerate() {
            if let (Role::Candidate(lead, tail), true) = (role, gathers(role)) {
                self.links[l].departures = Departures::Gathered;
                self.inboxes
                    .push(Inbox::new(l as u32, lead.into(), tail.into()));
            }
        }
    }

    /// Gather no link's arrivals (`mark_gathering_links`): every arrival
    /// at them an event, the reference that gathering is tested against.
    /// Call before `run`.
    pub fn without_gathering(&mut self) {
        for (previous, l) in self.routes.hops() {
            if let (Some(f), true) = (previous, self.links[l as usize].gathers()) {
                self.links[f as usize].feeds_express = false;
            }
        }
        for inbox in self.inboxes.drain(..) {
            self.links[inbox.link as usize].departures = Departures::Reserved;
        }
    }

    /// Let a gathering link's event reserve at most `most` arrivals (the
    /// rest wait for an event at the first of them), so that tests can
    /// split batches where a run would not. Call before `run`.
    pub fn gather_in_batches_of(&mut self, most: usize) {
        assert!(most > 0, "a batch holds at least one arrival");
        self.gather_batch = most;
    }

    /// Packets held in the gathering links' inboxes, on their way there.
    pub fn packets_gathering(&self) -> u64 {
        self.inboxes.iter().map(|inbox| inbox.len() as u64).sum()
    }

    /// Run every link on events: each arrival an event (express links
    /// included) and a FIFO's departures `TxDone` events, as a discipline
    /// that chooses its next packet at the departure runs. The reference
    /// the reservations are tested against. Call before `run`.
    pub fn without_reservations(&mut self) {
        self.inboxes.clear();
        for link in &mut self.links {
            link.departures = Departures::Events;
            link.feeds_express = false;
        }
        self.routes.mark_express(|_| false);
        // An answer's link no longer reserves.
        self.mark_answered_ahead(true);
    }

    fn add_flow(
        &mut self,
        group: u32,
        path: &[u32],
        reverse: &[u32],
        start: Time,
        size_bytes: Option<u64>,
        transport: Transport,
    ) {
        let id = self.flows.len() as u32;
        let routes = self.routes.intern_pair(path, reverse);
        let flow = Flow::new(group, routes, start, size_bytes, transport);
        self.flows.push(flow);
        let event = match self.flows[id as usize].transport {
            Transport::Tcp(_) => Event::FlowStart(id),
            Transport::Udp(_) => Event::UdpSend(id),
        };
        self.events.schedule(start, event);
    }

    /// Run until the end of the scenario. `progress` is called now and then
    /// with the simulated seconds done; returning false stops the run.
    pub fn run(&mut self, mut progress: impl FnMut(f64) -> bool) -> bool {
        let end = self.scenario.duration_ns;
        let mut last_report = std::time::Instant::now();
        // With few flows their state stays in the caches, and fetching
        // several events ahead costs more than it saves (docs/performance.md,
        // "Prefetching events ahead").
        let deep_prefetch = self.deep_prefetch();
        self.events.walk_ahead(deep_prefetch);
        while let Some((time, event)) = self.events.pop() {
            if time > end {
                break;
            }
            self.now = time;
            self.events_processed += 1;
            if deep_prefetch {
                self.prefetch_ahead();
            } else if let Some(next) = self.events.peek(0) {
                self.prefetch_for(next);
            }
            self.dispatch(event);
            if self.events_processed & 0xFFFF == 0 && last_report.elapsed().as_millis() >= 250 {
                last_report = std::time::Instant::now();
                if !progress(time as f64 / 1e9) {
                    return false;
                }
            }
        }
        self.now = end;
        if !self.warmed_up {
            self.open_window();
        }
        self.catch_up_all(end + 1);
        self.release_all_started(end);
        true
    }

    /// Free what only the event loop needs (the event list, the packets
    /// still propagating, the arrival processes), so that the result tables
    /// built after the run reuse that memory instead of adding to the peak.
    /// Pipe lengths stay readable: each link keeps its own.
    pub fn release_run_state(&mut self) {
        self.events = EventQueue::default();
        self.pipes = Pool::default();
        self.arrivals = Vec::new();
    }

    /// Ask the caches early for what `event` will read: its link and, for a
    /// pipe head, the arriving packet. Both are nearly always out of the
    /// first-level cache; fetched now, the loads overlap the event before.
    #[inline]
    fn prefetch_for(&self, event: Event) {
        if let Event::PipeHead(l) | Event::TxDone(l) = event {
            let link = &self.links[l as usize];
            prefetch(link);
            if let (Event::PipeHead(_), Some(packet)) = (event, self.pipes.front(&link.pipe)) {
                prefetch(packet);
            }
        }
    }

    /// The packet a `PipeHead(l)` event will deliver.
    #[inline]
    fn arriving(&self, l: u32) -> Option<&SimPacket> {
        self.pipes.front(&self.links[l as usize].pipe)
    }

    /// Ask the caches early for what the coming events will read. Each
    /// event's data is a chain of loads (a pipe head's link, then its
    /// packet, then the packet's route, then the next link or, at the end
    /// of the route, the flow), so the chain is walked in stages, one link
    /// of it per event ahead: each stage reads only what the stage before
    /// fetched, an event earlier. With many flows nearly every one of these
    /// loads misses the caches; fetched this way they overlap the events
    /// before.
    #[inline]
    fn prefetch_ahead(&self) {
        if let Some(event) = self.events.peek(3) {
            match event {
                // A link is one line, whatever the event reads of it.
                Event::PipeHead(l) | Event::TxDone(l) => prefetch(&self.links[l as usize]),
                Event::RtoTimer(f) | Event::DelayedAck(f) => prefetch_all(&self.flows[f as usize]),
                _ => {}
            }
        }
        if let Some(Event::PipeHead(l)) = self.events.peek(2) {
            if let Some(packet) = self.arriving(l) {
                // Both lines when it straddles two (a packet is 40 bytes in
                // 48-byte nodes): the next stage reads its route and hop.
                prefetch_all(packet);
            }
            // A reserving link with copies waiting (an access link after a
            // burst) lets them go (`release_started`): its buffer's box and
            // its counters, then the first copy.
            let link = &self.links[l as usize];
            if let Some(buffer) = link.qdisc.fifo_buffer().filter(|_| link.reserves()) {
                prefetch(buffer);
                prefetch(&self.link_records[l as usize].counters);
            }
        }
        if let Some(Event::PipeHead(l)) = self.events.peek(1) {
            let link = &self.links[l as usize];
            if let Some(first) = link.qdisc.fifo_front().filter(|_| link.reserves()) {
                prefetch(first);
            }
            if let Some(packet) = self.arriving(l) {
                prefetch(self.routes.entry(packet.route, packet.hop + 1));
                // Read at its host, whether the packet reaches it in the
                // event or is answered ahead there (through an express
                // link, `enter_pipe`): nearly every pipe head's packet.
                self.prefetch_flow(packet);
            }
        }
        if let Some(Event::PipeHead(l)) = self.events.peek(0) {
            if let Some(packet) = self.arriving(l) {
                self.prefetch_holes(packet);
                // The links the packet enters in the event (the next, the
                // express link it is then reserved on and, if it may be
                // answered ahead at the host behind that, the link the
                // answer takes), or at the end of its route the link its
                // answer takes.
                let links = match self.routes.upcoming(packet.route, packet.hop + 1) {
                    Upcoming::Link(next, express) => [
                        Some(next),
                        express,
                        express
                            .and_then(|_| self.routes.answered_ahead(packet.route, packet.hop + 3)),
                    ],
                    Upcoming::Host(answer) => [answer, None, None],
                };
                for l in links.into_iter().flatten() {
                    prefetch(&self.links[l as usize]);
                }
            }
        }
    }

    /// Fetch what `packet` will read of its flow at the end of its route:
    /// the first three lines (the routes and the receiver in the first,
    /// the sender and its timer after) and, for data if ACKs may be
    /// delayed, the delayed ACK's pending event. By offset, without reading
    /// the flow (cold) to tell TCP from UDP. Data reads the sender's lines
    /// too: the compiler keeps the transport's tag in a niche of the
    /// sender (line 2 at this writing), and every arrival reads it.
    #[inline]
    fn prefetch_flow(&self, packet: &SimPacket) {
        let flow = &self.flows[packet.flow as usize];
        prefetch_start(flow, Flow::ACK_BYTES);
        if !packet.kind.is_reverse() && self.delays_acks {
            prefetch_at(flow, Flow::DELACK_EVENT_AT);
        }
    }

    /// The second stage of `prefetch_flow`, once the flow is at hand: a
    /// data packet's receiver with a hole open reads its out-of-order map.
    #[inline]
    fn prefetch_holes(&self, packet: &SimPacket) {
        if packet.kind.is_reverse() {
            return;
        }
        if let Transport::Tcp(tcp) = &self.flows[packet.flow as usize].transport {
            if let Some(holes) = tcp.receiver.holes() {
                prefetch(holes);
            }
        }
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
            Event::UdpSend(f) => self.udp_send(f),
            Event::Arrival(a) => self.arrival(a as usize),
            Event::WarmupEnd => self.open_window(),
            Event::Sample => self.sample(),
            Event::InFlight(change) => self.ledger.fall_due(change as i32),
            Event::FlowStop(f) => self.flow_stop(f),
        }
    }

    // ---- the network ------------------------------------------------------

    /// A host puts a packet on the first link of its route.
    #[inline(never)]
    fn inject(&mut self, packet: SimPacket) {
        self.inject_inline(packet);
    }

    /// `inject`, inlined where it is hottest: the one packet a host sends
    /// in reply to one that reached it (`arrive_at_endpoint`).
    #[inline(always)]
    fn inject_inline(&mut self, mut packet: SimPacket) {
        self.ledger.inject();
        let flow = &self.flows[packet.flow as usize];
        packet.route = flow.route(packet.kind.is_reverse());
        match self.routes.link(packet.route, 0) {
            Some(link) => self.enqueue(link as usize, packet),
            None => self.arrive_at_endpoint(packet),
        }
    }

    /// `packet` arrives at link `l` now. A reserving link (nearly every
    /// arrival) is handled inline; a link that runs on events, apart.
    #[inline(always)]
    fn enqueue(&mut self, l: usize, mut packet: SimPacket) {
        debug_assert!(
            !self.links[l].is_express(),
            "an express link is entered when its upstream link reserves or sends"
        );
        let now = self.now;
        packet.at = now;
        if self.links[l].reserves() {
            if let Some(arrive) = self.reserve(l, &packet, now) {
                self.enter_pipe(l, packet, arrive);
            }
        } else {
            self.enqueue_on_events(l, packet);
        }
    }

    /// `enqueue` for a link whose departures run on events: a discipline
    /// other than a FIFO, or any link once reservations are off (one that
    /// defers them, most disciplines, goes on to `enqueue_deferred`).
    #[inline(never)]
    fn enqueue_on_events(&mut self, l: usize, packet: SimPacket) {
        if self.links[l].defers() {
            self.enqueue_deferred(l, packet);
            return;
        }
        let now = self.now;
        let link = &mut self.links[l];
        // An idle link behind an empty FIFO sends the packet at once: skip
        // the buffer (only when FIFOs run on events).
        let records = &mut self.link_records;
        if link.busy_until <= now
            && !link.tx_scheduled
            && link
                .qdisc
                .pass_through(&packet, || &mut records[l].counters)
        {
            self.send(l, packet);
            return;
        }
        let counters = &mut self.link_records[l].counters;
        link.qdisc
            .enqueue(counters, packet, now, &mut self.verdicts);
        self.settle_drops();
        let link = &mut self.links[l];
        if link.busy_until <= now {
            if !link.tx_scheduled {
                self.transmit(l);
            }
        } else if !link.tx_scheduled {
            link.tx_scheduled = true;
            let at = link.busy_until;
            self.events.schedule(at, Event::TxDone(l as u32));
        }
        self.schedule_qdisc_wake(l);
    }

    /// `enqueue` for a link whose departures are deferred
    /// (`Departures::Deferred`): the departures due before now run first,
    /// then the discipline is offered the arrival, and a transmitter free
    /// now starts its next packet. A departure due at the very nanosecond
    /// of the arrival comes after it (on events the two ran in the order
    /// they were scheduled, either way: docs/simulator.md, "Deferred
    /// departures").
    fn enqueue_deferred(&mut self, l: usize, packet: SimPacket) {
        let now = self.now;
        self.catch_up(l, now);
        let counters = &mut self.link_records[l].counters;
        self.links[l]
            .qdisc
            .enqueue(counters, packet, now, &mut self.verdicts);
        self.settle_drops();
        if self.links[l].busy_until <= now {
            self.depart(l, now);
        }
        self.arm_catch_up(l);
    }

    /// Run the deferred departures of link `l` due before `before`, each at
    /// its own time: while packets wait, the transmitter frees up at
    /// `busy_until` and starts the next.
    fn catch_up(&mut self, l: usize, before: Time) {
        loop {
            let link = &self.links[l];
            let at = link.busy_until;
            if at >= before || link.qdisc.backlog().packets == 0 || !self.depart(l, at) {
                return;
            }
        }
    }

    /// `catch_up` every link that defers its departures (before the
    /// counters are read).
    fn catch_up_all(&mut self, before: Time) {
        for l in 0..self.links.len() {
            if self.links[l].defers() {
                self.catch_up(l, before);
            }
        }
    }

    /// The transmitter of link `l`, which defers its departures, is free at
    /// `at` (now or, late, before): it starts the discipline's next packet
    /// then, with the clock set back to `at` meanwhile. Returns whether
    /// there was one.
    fn depart(&mut self, l: usize, at: Time) -> bool {
        self.as_of(at, |sim| {
            let counters = &mut sim.link_records[l].counters;
            let packet = sim.links[l].qdisc.dequeue(counters, at, &mut sim.verdicts);
            // Such a discipline drops nothing as packets leave: a drop
            // counted late would leave the packets in flight overcounted
            // meanwhile.
            debug_assert!(
                sim.verdicts.dropped().is_empty(),
                "{} dropped a packet on dequeue but says it does not",
                sim.links[l].qdisc.name()
            );
            sim.settle_drops();
            if let Some(packet) = packet {
                sim.send(l, packet);
            }
            packet.is_some()
        })
    }

    /// Do `work` with the clock at `at`, a time whose work is done early
    /// (`answer_ahead`) or late (`depart`), then put the clock back.
    #[inline(always)]
    fn as_of<R>(&mut self, at: Time, work: impl FnOnce(&mut Self) -> R) -> R {
        let now = std::mem::replace(&mut self.now, at);
        let result = work(self);
        self.now = now;
        result
    }

    /// A link that defers its departures runs them at the latest half a
    /// propagation delay after the first is due (`Link::catch_up_slack`),
    /// before the packet it sends can reach the far end: make sure an
    /// event will.
    fn arm_catch_up(&mut self, l: usize) {
        let link = &mut self.links[l];
        if !link.tx_scheduled && link.qdisc.backlog().packets > 0 {
            link.tx_scheduled = true;
            let at = link.busy_until + link.catch_up_slack();
            self.events.schedule(at, Event::TxDone(l as u32));
        }
    }

    /// A `TxDone` event: the transmitter is free, or (a link that defers
    /// its departures) its departures are due.
    fn tx_done(&mut self, l: usize) {
        self.links[l].tx_scheduled = false;
        if self.links[l].defers() {
            self.catch_up(l, self.now);
            self.arm_catch_up(l);
        } else if self.links[l].gathers() {
            self.drain_inbox(l);
        } else {
            self.transmit(l);
        }
    }

    /// The transmitter is free: start the next packet, if the discipline
    /// gives one. The packet enters the pipe now with its arrival time, so
    /// its serialization and propagation cost no event of their own.
    fn transmit(&mut self, l: usize) {
        debug_assert!(
            !self.links[l].reserves(),
            "a reserving link needs no TxDone"
        );
        let now = self.now;
        let link = &mut self.links[l];
        let counters = &mut self.link_records[l].counters;
        let Some(packet) = link.qdisc.dequeue(counters, now, &mut self.verdicts) else {
            self.settle_drops();
            self.schedule_qdisc_wake(l);
            return;
        };
        self.send(l, packet);
        let link = &mut self.links[l];
        if link.qdisc.backlog().packets > 0 {
            link.tx_scheduled = true;
            let done = link.busy_until;
            self.events.schedule(done, Event::TxDone(l as u32));
        }
        self.settle_drops();
        self.schedule_qdisc_wake(l);
    }

    /// Start serializing `packet` onto link `l` now; it then propagates.
    #[inline(always)]
    fn send(&mut self, l: usize, packet: SimPacket) {
        let now = self.now;
        let link = &mut self.links[l];
        if let Some(m) = link.monitor().filter(|_| self.warmed_up) {
            self.monitors[m].delays.record(now - packet.at);
        }
        let done = now + link.tx_time(packet.size);
        link.busy_until = done;
        let arrive = done + link.delay;
        self.enter_pipe(l, packet, arrive);
    }

    /// `packet` will reach the far end of link `l` at `arrive`: on through
    /// the express links that follow, then into the pipe of the last.
    #[inline(always)]
    fn enter_pipe(&mut self, mut l: usize, mut packet: SimPacket, mut arrive: Time) {
        if self.links[l].feeds_express {
            match self.through_express(&mut packet, l, arrive) {
                Some((last, at)) => (l, arrive) = (last, at),
                None => return,
            }
        }
        if let Some(answer) = self.routes.answered_ahead(packet.route, packet.hop + 1) {
            let answer = &self.links[answer as usize];
            if self.links[l].pipe.is_empty()
                && arrive < self.answer_ahead_before
                && match packet.kind.is_reverse() {
                    // A sender's answer may wait at its busy link: its
                    // change to the packets in flight, a drop there
                    // included, falls due at `arrive` (`answer_ack_ahead`).
                    true => self.sender_idle_until(packet.flow, arrive),
                    // A receiver's ACK stands in for the packet it answers
                    // only if nothing can drop it: its link is idle then.
                    false => answer.busy_until <= arrive,
                }
            {
                self.answer_ahead(packet, arrive);
                return;
            }
            // (A sender's first link feeds nothing gathering: it is no
            // answer link of a data packet, `mark_answered_ahead`.)
            if answer.feeds_express {
                // Its answer will come to a gathering link in its arrival's
                // event (the answer link feeds nothing express otherwise).
                self.expect_answer(packet.flow, arrive);
            }
        }
        let link = &mut self.links[l];
        // The packet ahead keeps this one's arrival time, so that its own
        // arrival schedules the next without reading a cold node.
        if self
            .pipes
            .push_back_after(&mut link.pipe, packet, |ahead| ahead.at = arrive)
        {
            self.events.schedule(arrive, Event::PipeHead(l as u32));
        }
    }

    /// `packet` reaches its host at `at`: take it in and send the answer
    /// now, a pipe head's event early. This is what its arrival would do,
    /// to the bit:
    /// - nothing else touches the host's end of the flow or its answer's
    ///   first link before then (`mark_answered_ahead`), nor reads them but
    ///   the results (and, for a sender, the samples and its retransmission
    ///   timer: `sender_idle_until`);
    /// - the flow's packets ahead of this one were taken in before it (the
    ///   pipe it would wait in is empty);
    /// - the window's opening and the run's end come after `at`
    ///   (`answer_ahead_before`), so the packet counts where it would;
    /// - a receiver's answer link is idle then (the caller checks), so its
    ///   ACK passes it at once; a sender's may be busy, and its data wait
    ///   or be dropped there as in the ACK's own event (nothing else
    ///   reaches the link before then);
    /// - the packets in flight reach their peak as they would: a receiver's
    ///   ACK stands in for the packet it answers, and a sender's change to
    ///   them (it answers an ACK with none, one or two packets) counts
    ///   towards the peak only once due (`Ledger::made_ahead`, an
    ///   `InFlight` event).
    ///
    /// Only the order of events at one nanosecond can differ: the ones
    /// this schedules are scheduled sooner, and ties run in scheduling
    /// order (docs/simulator.md, "Answering ahead").
    #[inline(never)]
    fn answer_ahead(&mut self, mut packet: SimPacket, at: Time) {
        self.census.answered_ahead(packet.kind.is_reverse());
        packet.hop += 1;
        if packet.kind.is_reverse() {
            self.answer_ack_ahead(packet, at);
        } else {
            self.as_of(at, |sim| sim.arrive_at_endpoint(packet));
        }
    }

    /// `answer_ahead` for an ACK: the sender's change to the packets in
    /// flight is held back until due.
    fn answer_ack_ahead(&mut self, packet: SimPacket, at: Time) {
        if at >= self.sample_due {
            self.keep_for_sample(packet.flow);
        }
        let before = self.ledger.mark();
        self.as_of(at, |sim| sim.arrive_at_endpoint(packet));
        if let Some(change) = self.ledger.made_ahead(before) {
            self.events.schedule(at, Event::InFlight(change as u32));
        }
    }

    /// The sender of `flow` goes past the next sample's time: keep what
    /// the sample reads of it, unless kept already.
    #[cold]
    #[inline(never)]
    fn keep_for_sample(&mut self, flow: u32) {
        let Transport::Tcp(tcp) = &self.flows[flow as usize].transport else {
            unreachable!("only a TCP sender answers ahead");
        };
        let p = &self.scenario.tcp_profiles[tcp.profile as usize];
        (self.kept_samples).keep(flow, || SenderSample::of(&tcp.sender, p));
    }

    /// A link dropped a packet that reaches it at `at`, reserving it
    /// before then (an express or gathering link): the drop counts
    /// towards the peak of the packets in flight only at `at`, as the
    /// arrival's event would have counted it.
    #[cold]
    #[inline(never)]
    fn drop_counted_ahead(&mut self, at: Time) {
        if at > self.now {
            let change = self.ledger.dropped_ahead();
            self.events.schedule(at, Event::InFlight(change as u32));
        }
    }

    /// Whether the sender of `flow` may answer an ACK arriving at `at`
    /// ahead: it does nothing on its own before then (its retransmission
    /// timer does not expire; its earlier ACKs and a past timer's expiry
    /// are in the past or in the pipe, which the caller finds empty); `at`
    /// comes before the sample after next (the next sample keeps what it
    /// reads of a sender gone past it, `keep_for_sample`, once); and it is
    /// in congestion avoidance, where an ACK nearly always sends one packet
    /// in place of itself (in slow start it sends two, which answering
    /// ahead would hold in memory tens of milliseconds early).
    #[inline]
    fn sender_idle_until(&self, flow: u32, at: Time) -> bool {
        let Transport::Tcp(tcp) = &self.flows[flow as usize].transport else {
            return false;
        };
        at < (self.sample_due).saturating_add(self.scenario.sample_interval_ns)
            && tcp.sender.rto_deadline.get().is_none_or(|d| d > at)
            && tcp.sender.is_in_congestion_avoidance()
    }

    /// `packet` will reach the far end of link `l` at `arrive`: take it on
    /// through the express links that follow, now. Returns the last link
    /// it entered (whose pipe it joins) and when it leaves that link's far
    /// end, or `None` if one of them dropped it or it went into a gathering
    /// link's inbox.
    #[inline(always)]
    fn through_express(
        &mut self,
        packet: &mut SimPacket,
        mut l: usize,
        mut arrive: Time,
    ) -> Option<(usize, Time)> {
        while let Some(next) = self.routes.link(packet.route, packet.hop + 1) {
            if !self.links[next as usize].is_express() {
                if self.links[next as usize].gathers() {
                    packet.hop += 1;
                    self.gather(next as usize, *packet, arrive);
                    return None;
                }
                break;
            }
            packet.hop += 1;
            l = next as usize;
            match self.reserve(l, packet, arrive) {
                Some(at) => arrive = at,
                None => {
                    self.drop_counted_ahead(arrive);
                    return None;
                }
            }
        }
        Some((l, arrive))
    }

    /// Do FIFO link `l`'s work for `packet`, which reaches it at `arrival`:
    /// now (the arrival's own event), or later for an express link, whose
    /// arrivals come in order from one upstream link. Either way the
    /// FIFO's future is known: the packet starts when the transmitter frees
    /// up, and waits in the meantime. The buffer holds a copy of each
    /// packet still waiting, its `at` the time it will start, so that
    /// admission, backlog and the counters are the FIFO's own; the copies
    /// leave the buffer (counted as departures) once their start has passed
    /// (`release_started`). A monitored link records the wait if the packet
    /// starts in the measurement window. Returns when the packet reaches
    /// the far end, or `None` if the FIFO refused it.
    ///
    /// One difference from running the departures as events: a packet that
    /// starts at the very nanosecond of an arrival has left the buffer
    /// before the arrival is admitted, whatever order the two events would
    /// have run in.
    #[inline(always)]
    fn reserve(&mut self, l: usize, packet: &SimPacket, arrival: Time) -> Option<Time> {
        let link = &mut self.links[l];
        // An idle transmitter behind an empty FIFO (every access link,
        // nearly always) starts the packet at once: inline, without a look
        // at the buffer.
        let records = &mut self.link_records;
        let start = if link.busy_until <= arrival
            && (link.qdisc).pass_through(packet, || &mut records[l].counters)
        {
            arrival
        } else {
            self.wait(l, packet, arrival)?
        };
        let link = &mut self.links[l];
        link.busy_until = start + link.tx_time(packet.size);
        let arrive = link.busy_until + link.delay;
        if let Some(m) = link.monitor().filter(|_| self.starts_in_window(start)) {
            self.monitors[m].delays.record(start - arrival);
        }
        Some(arrive)
    }

    /// The rest of `reserve`: when `packet` will start on FIFO link `l`,
    /// having waited in the buffer, or `None` if the buffer refused it.
    #[inline(never)]
    fn wait(&mut self, l: usize, packet: &SimPacket, arrival: Time) -> Option<Time> {
        self.census.waited(l);
        self.release_started(l, arrival);
        let link = &mut self.links[l];
        let start = arrival.max(link.busy_until);
        let counters = &mut self.link_records[l].counters;
        if start > arrival || !link.qdisc.pass_through(packet, || &mut *counters) {
            let mut waiting = *packet;
            waiting.at = start;
            if !link
                .qdisc
                .enqueue_fifo(counters, waiting, arrival, &mut self.verdicts)
            {
                self.settle_drops();
                return None;
            }
        }
        Some(start)
    }

    /// Whether a packet starting at `start` (now or later) starts in the
    /// measurement window, as the event-driven FIFO would judge it: now, if
    /// the window has opened; later, in a `TxDone` event, which would run
    /// after the `WarmupEnd` of its nanosecond (scheduled when the
    /// simulation was built) and not at all past the run's end.
    #[inline]
    fn starts_in_window(&self, start: Time) -> bool {
        if start > self.now {
            start >= self.scenario.warmup_ns && start <= self.scenario.duration_ns
        } else {
            self.warmed_up
        }
    }

    /// The waiting copies in FIFO link `l`'s buffer that started by `now`
    /// leave it.
    fn release_started(&mut self, l: usize, now: Time) {
        let counters = &mut self.link_records[l].counters;
        let qdisc = &mut self.links[l].qdisc;
        qdisc.release_fifo(counters, |p| p.at <= now, &mut self.verdicts);
    }

    /// Bring every reserving link's buffer up to `now` (before its
    /// counters are read).
    fn release_all_started(&mut self, now: Time) {
        for l in 0..self.links.len() {
            if self.links[l].reserves() {
                self.release_started(l, now);
            }
        }
    }

    fn pipe_head(&mut self, l: usize) {
        let link = &mut self.links[l];
        let mut packet = self
            .pipes
            .pop_front(&mut link.pipe)
            .expect("pipe head event with an empty pipe");
        if let Some(next) = self.pipes.front(&link.pipe) {
            // Its event is due a packet's serialization later (at a
            // bottleneck, a few events on): too soon for the stages of
            // `prefetch_ahead` to see it first.
            prefetch_all(next);
            self.events.schedule(packet.at, Event::PipeHead(l as u32));
        }
        if link.reserves() && link.qdisc.backlog().packets > 0 {
            // While the link is in the cache: otherwise a burst's copies
            // would keep an access link's buffer allocated until its next
            // arrival, an RTT later (50,000 flows: +83 B per flow).
            self.release_started(l, self.now);
        }
        packet.hop += 1;
        match self.routes.link(packet.route, packet.hop) {
            Some(next) => self.enqueue(next as usize, packet),
            None => {
                let expected = (self.routes.answered_ahead(packet.route, packet.hop))
                    .is_some_and(|answer| self.links[answer as usize].feeds_express);
                let flow = packet.flow;
                self.arrive_at_endpoint(packet);
                if expected {
                    self.answered_expected(flow);
                }
            }
        }
    }

    /// `packet` reaches gathering link `l` at `at`: into its inbox, and an
    /// event to take it in by then at the latest.
    fn gather(&mut self, l: usize, mut packet: SimPacket, at: Time) {
        self.census.gathered();
        packet.at = at;
        let inbox = self.inbox(l);
        inbox.insert(packet);
        if inbox.arm(at) {
            self.events.schedule(at, Event::TxDone(l as u32));
        }
    }

    /// Gathering link `l`'s event: reserve the arrivals in its inbox that
    /// nothing can come before now, in order, up to a batch of them
    /// (`GATHER_BATCH`), then wait for the first left. Each is reserved as
    /// its arrival's event would (the link is a FIFO, whose future its
    /// arrivals alone decide), and goes on through the express links after
    /// it into the pipe of the last.
    #[inline(never)]
    fn drain_inbox(&mut self, l: usize) {
        let i = self.inbox_index(l);
        if !self.inboxes[i].fire(self.now) {
            return; // superseded by an earlier one
        }
        // Constant while it drains: what leaves goes on to senders.
        let horizon = self.inboxes[i].horizon(self.now, self.answer_ahead_before);
        let deep_prefetch = self.deep_prefetch();
        for _ in 0..self.gather_batch {
            let Some(packet) = self.inboxes[i].pop_before(horizon) else {
                break;
            };
            if deep_prefetch {
                self.prefetch_gathered(i);
            }
            match self.reserve(l, &packet, packet.at) {
                Some(arrive) => self.enter_pipe(l, packet, arrive),
                None => self.drop_counted_ahead(packet.at),
            }
        }
        let inbox = &mut self.inboxes[i];
        if let Some(t) = inbox.first_due().filter(|&t| inbox.arm(t)) {
            self.events.schedule(t, Event::TxDone(l as u32));
        }
    }

    /// Ask the caches early for what the next arrivals of inbox `i` will
    /// read, in stages as `prefetch_ahead` does for events: the route's
    /// entry and the sender's flow, then the first entry of the flow's
    /// other route, then the link after the gathering one (the sender's)
    /// and the first link of that other route (which the sender's answer
    /// takes), then the last packet of the first one's pipe, which the
    /// arrival joins. With many flows each is nearly always a miss.
    #[inline]
    fn prefetch_gathered(&self, i: usize) {
        let inbox = &self.inboxes[i];
        if let Some(p) = inbox.get(6) {
            prefetch(self.routes.entry(p.route, p.hop + 1));
            // In case it answers ahead; its number is in the packet.
            prefetch_start(&self.flows[p.flow as usize], Flow::ACK_BYTES);
        }
        let answer_route = |p: &SimPacket| self.flows[p.flow as usize].route(!p.kind.is_reverse());
        if let Some(p) = inbox.get(4) {
            prefetch(self.routes.entry(answer_route(p), 0));
        }
        if let Some(next) = inbox
            .get(3)
            .and_then(|p| self.routes.link(p.route, p.hop + 1))
        {
            prefetch(&self.links[next as usize]);
        }
        if let Some(answer) = inbox
            .get(2)
            .and_then(|p| self.routes.link(answer_route(p), 0))
        {
            prefetch(&self.links[answer as usize]);
        }
        if let Some(next) = inbox
            .get(1)
            .and_then(|p| self.routes.link(p.route, p.hop + 1))
        {
            if let Some(last) = self.pipes.back(&self.links[next as usize].pipe) {
                prefetch(last);
            }
        }
    }

    /// With many flows their state is out of the caches, and what the next
    /// events read is fetched early, several events ahead.
    fn deep_prefetch(&self) -> bool {
        self.flows.len() + self.links.len() >= DEEP_PREFETCH_FROM
    }

    /// A data packet of `flow` reaching its receiver at `at` will be
    /// answered in its arrival's event: its gathering link waits for it.
    #[cold]
    #[inline(never)]
    fn expect_answer(&mut self, flow: u32, at: Time) {
        self.inbox_answering(flow).expect(at);
    }

    /// An expected data packet of `flow` (`expect_answer`) was answered.
    #[cold]
    #[inline(never)]
    fn answered_expected(&mut self, flow: u32) {
        self.inbox_answering(flow).answered();
    }

    /// The inbox of the gathering link that `flow`'s answers reach, the
    /// second of their route.
    fn inbox_answering(&mut self, flow: u32) -> &mut Inbox {
        let reverse = self.flows[flow as usize].reverse;
        let l = self
            .routes
            .link(reverse, 1)
            .expect("an answer link feeds a gathering link");
        self.inbox(l as usize)
    }

    /// Where gathering link `l`'s inbox is (they are kept by link).
    #[inline]
    fn inbox_index(&self, l: usize) -> usize {
        match self
            .inboxes
            .binary_search_by_key(&(l as u32), |inbox| inbox.link)
        {
            Ok(i) => i,
            Err(_) => unreachable!("link {l} gathers, so it has an inbox"),
        }
    }

    #[inline]
    fn inbox(&mut self, l: usize) -> &mut Inbox {
        let i = self.inbox_index(l);
        &mut self.inboxes[i]
    }

    fn qdisc_wake(&mut self, l: usize) {
        let now = self.now;
        let wake_at = self.wake_at(l);
        if wake_at.get() != Some(now) {
            return; // superseded
        }
        *wake_at = MaybeTime::NONE;
        let counters = &mut self.link_records[l].counters;
        self.links[l]
            .qdisc
            .wakeup(counters, now, &mut self.verdicts);
        self.settle_drops();
        let link = &self.links[l];
        if link.busy_until <= now && !link.tx_scheduled {
            self.transmit(l);
        } else {
            self.schedule_qdisc_wake(l);
        }
    }

    /// Called after every packet a link's discipline takes or sends: the
    /// test inline, the rest apart, since most disciplines have no clock.
    #[inline]
    fn schedule_qdisc_wake(&mut self, l: usize) {
        if self.links[l].qdisc.has_clock() {
            self.schedule_clocked_wake(l);
        }
    }

    #[inline(never)]
    fn schedule_clocked_wake(&mut self, l: usize) {
        if let Some(t) = self.links[l].qdisc.next_wakeup() {
            let t = t.max(self.now);
            let wake_at = self.wake_at(l);
            if wake_at.get().is_none_or(|w| t < w) {
                *wake_at = MaybeTime::at(t);
                self.events.schedule(t, Event::QdiscWake(l as u32));
            }
        }
    }

    /// The pending wake-up of link `l`, which is not a FIFO (a FIFO never
    /// asks to be woken).
    fn wake_at(&mut self, l: usize) -> &mut MaybeTime {
        let i = self
            .wakes
            .binary_search_by_key(&(l as u32), |&(link, _)| link)
            .expect("only a link that is not a FIFO is woken");
        &mut self.wakes[i].1
    }

    #[inline]
    fn settle_drops(&mut self) {
        let ledger = &mut self.ledger;
        self.verdicts.drain(|_| ledger.dropped += 1);
    }

    // ---- endpoints --------------------------------------------------------

    fn arrive_at_endpoint(&mut self, packet: SimPacket) {
        self.census.taken_in(packet.kind.is_reverse());
        self.ledger.received += 1;
        let now = self.now;
        let f = packet.flow as usize;
        let flow = &mut self.flows[f];
        let size_bytes = flow.size_bytes();
        match &mut flow.transport {
            Transport::Udp(_) => {
                self.ledger.data_received += 1;
                flow.delivered += packet.size as u64;
            }
            Transport::Tcp(tcp) => {
                let p = &self.scenario.tcp_profiles[tcp.profile as usize];
                match packet.kind {
                    Kind::Data | Kind::Syn => {
                        if packet.kind == Kind::Data {
                            self.ledger.data_received += 1;
                        }
                        let d = tcp.receiver.on_data(&packet, now, p, &mut self.outbox);
                        if d.new_in_order > 0 {
                            let bytes: u64 = if size_bytes.is_none() {
                                d.new_in_order as u64 * crate::tcp::mss(p) as u64
                            } else {
                                (d.first..d.first + d.new_in_order)
                                    .map(|s| payload_of(p, size_bytes, s) as u64)
                                    .sum()
                            };
                            flow.delivered += bytes;
                        }
                        if let Some(t) = tcp.receiver.delack_deadline.get() {
                            if tcp.delack_event_at.get().is_none_or(|e| t < e) {
                                tcp.delack_event_at = MaybeTime::at(t);
                                self.events.schedule(t, Event::DelayedAck(f as u32));
                            }
                        }
                    }
                    Kind::Ack | Kind::SynAck => {
                        let done = tcp.sender.on_ack(&packet, now, p, &mut self.outbox);
                        if done {
                            self.transfer_done(f);
                        }
                        self.arm_rto(f);
                    }
                    Kind::Udp => unreachable!("UDP packet on a TCP flow"),
                }
            }
        }
        self.flush_reply();
    }

    /// Send the reply a packet reaching its host gave: nearly always one
    /// packet (an ACK, or the segment an ACK clocks out), sent inline and
    /// without moving the buffer.
    #[inline(always)]
    fn flush_reply(&mut self) {
        self.census.replied(self.outbox.packets.len());
        if self.outbox.packets.len() == 1 {
            let packet = self.outbox.packets.pop().expect("one packet");
            self.inject_inline(packet);
        } else {
            self.flush_outbox();
        }
    }

    /// Send what the transport state machines wrote, in their order. The
    /// outbox is empty before the first packet goes, as a zero-hop route
    /// would deliver it, and its endpoint reply, at once; the buffer is
    /// handed back afterwards so it is never reallocated.
    fn flush_outbox(&mut self) {
        if self.outbox.packets.is_empty() {
            return;
        }
        let mut packets = std::mem::take(&mut self.outbox.packets);
        if let ([first, _, ..], true) = (&packets[..], self.deep_prefetch()) {
            // The packets after the first (a sender's burst) wait behind
            // it, counted in their link's record (`wait`), a miss of its
            // own with many flows: fetched now, it overlaps the first's.
            let route = self.flows[first.flow as usize].route(first.kind.is_reverse());
            if let Some(l) = self.routes.link(route, 0) {
                prefetch(&self.link_records[l as usize]);
            }
        }
        for packet in packets.drain(..) {
            self.inject(packet);
        }
        self.outbox.packets = packets;
    }

    fn transfer_done(&mut self, f: usize) {
        let now = self.now;
        let flow = &mut self.flows[f];
        let start = flow.start;
        let Transport::Tcp(tcp) = &mut flow.transport else {
            return;
        };
        let transfer_start = tcp.on_off.as_ref().map_or(start, |o| o.transfer_start);
        let took = now - transfer_start;
        if tcp.first_completion.is_none() {
            tcp.first_completion = MaybeTime::at(took);
        }
        if let Some(o) = &mut tcp.on_off {
            o.transfers_done += 1;
            o.completion_sum += took;
            let idle = sample_dist(&o.off_time, &mut o.rng).max(0.0) as Time;
            self.events.schedule(now + idle, Event::FlowStart(f as u32));
        }
    }

    /// Make sure the flow's retransmission timer event is at or before its
    /// deadline; later events are left in the list and ignored when they fire.
    #[inline(always)]
    fn arm_rto(&mut self, f: usize) {
        let Transport::Tcp(tcp) = &mut self.flows[f].transport else {
            return;
        };
        if let Some(deadline) = tcp.sender.rto_deadline.get() {
            if tcp.sender.rto_event_at.get().is_none_or(|t| deadline < t) {
                tcp.sender.rto_event_at = MaybeTime::at(deadline);
                self.events.schedule(deadline, Event::RtoTimer(f as u32));
            }
        }
    }

    fn rto_timer(&mut self, f: u32) {
        let now = self.now;
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        if tcp.sender.rto_event_at.get() != Some(now) {
            return; // superseded by an earlier event
        }
        tcp.sender.rto_event_at = MaybeTime::NONE;
        match tcp.sender.rto_deadline.get() {
            None => return,
            Some(d) if d > now => {}
            Some(_) => {
                let p = &self.scenario.tcp_profiles[tcp.profile as usize];
                tcp.sender.on_timeout(now, f, p, &mut self.outbox);
            }
        }
        self.arm_rto(f as usize);
        self.flush_outbox();
    }

    fn delayed_ack(&mut self, f: u32) {
        let now = self.now;
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        if tcp.delack_event_at.get() != Some(now) {
            return;
        }
        tcp.delack_event_at = MaybeTime::NONE;
        match tcp.receiver.delack_deadline.get() {
            Some(d) if d <= now => {
                let p = &self.scenario.tcp_profiles[tcp.profile as usize];
                tcp.receiver.flush(f, p, &mut self.outbox);
                self.flush_outbox();
            }
            Some(d) => {
                tcp.delack_event_at = MaybeTime::at(d);
                self.events.schedule(d, Event::DelayedAck(f));
            }
            None => {}
        }
    }

    fn flow_start(&mut self, f: u32) {
        let now = self.now;
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        if tcp.sender.is_stopped() {
            return;
        }
        let p = &self.scenario.tcp_profiles[tcp.profile as usize];
        // Only an on-off source starts again.
        if let Some(o) = &mut tcp.on_off {
            if o.transfers_done > 0 {
                tcp.sender.restart(p);
            }
            o.transfer_start = now;
        }
        tcp.sender.open(now, f, p, &mut self.outbox);
        self.arm_rto(f as usize);
        self.flush_outbox();
    }

    /// The application of TCP flow `f` stops writing (`TcpSender::stop`).
    fn flow_stop(&mut self, f: u32) {
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        tcp.sender
            .stop(&self.scenario.tcp_profiles[tcp.profile as usize]);
    }

    fn udp_send(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let Transport::Udp(udp) = &mut flow.transport else {
            return;
        };
        if udp.stop.is_some_and(|s| now >= s) {
            return;
        }
        let gap = match &udp.source {
            UdpSource::Cbr { rate_bps, jitter } => {
                let interval = udp.packet_size as f64 * 8e9 / *rate_bps as f64;
                let j = if *jitter > 0.0 {
                    1.0 + jitter * (2.0 * udp.rng.uniform() - 1.0)
                } else {
                    1.0
                };
                interval * j
            }
            UdpSource::Poisson { rate_bps } => udp
                .rng
                .exponential(udp.packet_size as f64 * 8e9 / *rate_bps as f64),
            UdpSource::OnOff { rate_bps, on, off } => {
                if now >= udp.on_until && udp.seq > 0 {
                    // The on period is over: stay silent, then start another.
                    let idle = sample_dist(off, &mut udp.rng).max(0.0);
                    let on_len = sample_dist(on, &mut udp.rng).max(0.0);
                    let resume = now + idle as Time;
                    udp.on_until = resume + on_len as Time;
                    self.events.schedule(resume, Event::UdpSend(f));
                    return;
                }
                if udp.seq == 0 {
                    udp.on_until = now + sample_dist(on, &mut udp.rng).max(0.0) as Time;
                }
                udp.packet_size as f64 * 8e9 / *rate_bps as f64
            }
        };
        let packet = SimPacket {
            stamp: now,
            at: now,
            flow: f,
            route: 0,
            seq: udp.seq,
            size: udp.packet_size,
            epoch: 0,
            hop: 0,
            kind: Kind::Udp,
            class: udp.class,
            ecn: aqmlab_qdisc::Ecn::NotEct,
            ece: false,
            sack_tag: 0,
        };
        udp.seq = udp.seq.wrapping_add(1);
        udp.packets_sent += 1;
        udp.bytes_sent += udp.packet_size as u64;
        self.events
            .schedule(now + gap.max(1.0) as Time, Event::UdpSend(f));
        self.inject(packet);
    }

    fn arrival(&mut self, a: usize) {
        let now = self.now;
        let proc_ = &mut self.arrivals[a];
        if proc_.spec.stop_ns.is_some_and(|s| now >= s) {
            return;
        }
        let (forward, reverse) = proc_.routes[proc_.rng.below(proc_.routes.len() as u64) as usize];
        let size = sample_dist(&proc_.spec.size_bytes, &mut proc_.rng)
            .ceil()
            .max(1.0) as u64;
        let next = now + (proc_.rng.exponential(1.0 / proc_.spec.rate_per_s) * 1e9) as Time;
        let profile = proc_.spec.profile;
        let group = proc_.group;
        self.events.schedule(next, Event::Arrival(a as u32));
        let p = &self.scenario.tcp_profiles[profile as usize];
        let id = self.flows.len() as u32;
        let tcp = TcpFlow::new(profile, TcpSender::new(p, Some(size)), None, false);
        let routes = (forward, reverse);
        let flow = Flow::new(group, routes, now, Some(size), Transport::Tcp(tcp));
        self.flows.push(flow);
        self.flow_start(id);
    }

    // ---- measurement ------------------------------------------------------

    fn open_window(&mut self) {
        // Departures due before the opening, outside the window (one due
        // at the opening is in it: its event would run after this one).
        self.catch_up_all(self.now);
        self.warmed_up = true;
        self.answer_ahead_before = self.scenario.duration_ns + 1;
        for flow in &mut self.flows {
            flow.delivered_at_warmup = flow.delivered;
        }
        self.release_all_started(self.now);
        for (link, record) in self.links.iter().zip(&self.link_records) {
            self.at_warmup
                .push(WindowStart::of(link.qdisc.stats(&record.counters)));
        }
    }

    fn sample(&mut self) {
        let now = self.now;
        let interval = self.scenario.sample_interval_ns;
        for i in 0..self.links.len() {
            let Some(m) = self.links[i].monitor() else {
                continue;
            };
            // A reserving FIFO's backlog and departures as of now; a
            // deferring link's, as the sample (scheduled long before) would
            // find them before its nanosecond's departure events.
            if self.links[i].reserves() {
                self.release_started(i, now);
            } else if self.links[i].defers() {
                self.catch_up(i, now);
            }
            let (link, record) = (&self.links[i], &self.link_records[i]);
            let b = link.qdisc.backlog();
            let departed = link.qdisc.stats(&record.counters).departure_bytes;
            self.series
                .push(now, "queue_packets", i as u32, b.packets as f64);
            self.series
                .push(now, "queue_bytes", i as u32, b.bytes as f64);
            let rate_bps = record.rate_bps;
            let m = &mut self.monitors[m];
            if now > 0 {
                let util = (departed - m.departed_at_sample) as f64 * 8e9
                    / (rate_bps as f64 * interval as f64);
                self.series.push(now, "link_utilization", i as u32, util);
            }
            m.departed_at_sample = departed;
        }
        let mut sum_cwnd = 0.0;
        let mut in_ca = 0u32;
        let mut active = 0u32;
        let mut kept = self.kept_samples.take().peekable();
        for (i, flow) in self.flows.iter().enumerate() {
            if let Transport::Tcp(tcp) = &flow.transport {
                let p = &self.scenario.tcp_profiles[tcp.profile as usize];
                let sender = match kept.next_if(|&(f, _)| f == i as u32) {
                    Some((_, sample)) => sample,
                    None => SenderSample::of(&tcp.sender, p),
                };
                if sender.established {
                    active += 1;
                    sum_cwnd += sender.window;
                    in_ca += sender.in_congestion_avoidance as u32;
                }
                if tcp.trace_cwnd {
                    self.series.push(now, "cwnd", i as u32, tcp.sender.cwnd());
                }
            }
        }
        self.series.push(now, "sum_cwnd", u32::MAX, sum_cwnd);
        self.series.push(now, "flows_in_ca", u32::MAX, in_ca as f64);
        self.series
            .push(now, "active_flows", u32::MAX, active as f64);
        self.sample_due = now + interval;
        self.events.schedule(self.sample_due, Event::Sample);
    }
}

/// Flows plus links from which `Simulation::run` fetches the data of
/// events several places ahead (`prefetch_ahead`) and walks the calendar's
/// next slot ahead (`EventQueue::walk_ahead`), instead of fetching the next
/// event's link and packet only (`prefetch_for`). Measured on the 1 Gb/s
/// dumbbell (four links a flow): 10-15% slower at 3,000 flows, even at
/// 10,000, faster from 20,000 (docs/performance.md, "Prefetching events
/// ahead").
const DEEP_PREFETCH_FROM: usize = 100_000;

/// The most arrivals one event of a gathering link reserves. Each enters
/// a pipe, in a node from the pool's free list, which frees come back to
/// one at a time: a batch of the lead's every ACK (tens of thousands at
/// 10,000 flows and up) took nodes freed a lead ago, out of the caches,
/// one miss after another down the list; a batch this long takes nodes
/// freed since the batch before (docs/performance.md, eleventh round).
const GATHER_BATCH: usize = 256;

/// Draw from a distribution (values in the distribution's own unit).
pub fn sample_dist(d: &Dist, rng: &mut Rng) -> f64 {
    match *d {
        Dist::Fixed { value } => value,
        Dist::Uniform { low, high } => low + (high - low) * rng.uniform(),
        Dist::Exponential { mean } => rng.exponential(mean),
        Dist::Pareto { mean, shape } => rng.pareto(mean, shape),
    }
}
