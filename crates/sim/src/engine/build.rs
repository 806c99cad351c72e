//! Building a simulation from a scenario: links with their disciplines,
//! flows with their routes, the first events, and the accelerations' plan.

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::{Qdisc, QdiscCounters, Verdicts};

use super::events::{Event, EventQueue};
use super::flow::{Flow, OnOff, TcpFlow, Transport};
use super::link::{Link, LinkRecord, Monitored};
use super::routes::Routes;
use super::wire::Wire;
use super::Simulation;
use crate::accel::{AccelState, Accelerations, Plan};
use crate::measure::census::Census;
use crate::measure::ledger::Ledger;
use crate::measure::samples::SampledFlows;
use crate::measure::window::WindowStarts;
use crate::names::Names;
use crate::pool::Pool;
use crate::scenario::{FlowGroup, NameRun, Scenario};
use crate::tcp::{Outbox, TcpSender};
use crate::trace::Recorder;
use crate::traffic::arrivals::ArrivalProcess;
use crate::traffic::udp::UdpFlow;
use crate::{MaybeTime, Time};

/// Random-stream ids: one namespace per kind of component, so that adding a
/// flow never changes another component's numbers.
const STREAM_QDISC: u64 = 1 << 40;
const STREAM_FLOW: u64 = 2 << 40;
const STREAM_ARRIVAL: u64 = 3 << 40;
/// A lossy link's wire (`wire.rs`).
pub(super) const STREAM_WIRE: u64 = 4 << 40;

/// Runs of names, written out into the compact store.
fn names_of(runs: &[NameRun]) -> Names {
    let mut names = Names::with_capacity(runs.iter().map(NameRun::len).sum());
    for name in runs.iter().flat_map(NameRun::expand) {
        names.push(&name);
    }
    names
}

impl Simulation {
    /// The simulation of `scenario`, skipping events only as `accelerations`
    /// allow (`Accelerations::NONE`: the reference engine).
    pub fn with_accelerations(mut scenario: Scenario, accelerations: Accelerations) -> Self {
        let node_names = names_of(&std::mem::take(&mut scenario.nodes));
        let (links, link_records, link_names, monitors, wires) = build_links(&mut scenario);
        let wakes = (links.iter().enumerate())
            .filter(|(_, link)| link.queue.has_clock())
            .map(|(l, _)| (l as u32, MaybeTime::NONE))
            .collect();
        let mut sim = Simulation {
            now: 0,
            events: EventQueue::new(scenario.ties),
            at_warmup: WindowStarts::with_capacity(links.len()),
            links,
            link_records,
            link_names,
            node_names,
            monitors,
            wakes,
            wires,
            pipes: Pool::default(),
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
            tracer: None,
            warmed_up: false,
            sampled: SampledFlows::default(),
            sample_due: match scenario.sample_interval_ns {
                0 => Time::MAX,
                _ => 0,
            },
            sending: Default::default(),
            accel: AccelState::new(&scenario),
            scenario,
        };
        sim.build_flows();
        sim.build_arrivals();
        let links = sim.links.len();
        sim.tracer = Recorder::new(&sim.scenario.trace, links, sim.scenario.warmup_ns);
        let traced = (sim.scenario.trace).traced_links(&sim.routes, &sim.flows, links);
        let plan = Plan::build(&sim.topology(&traced), accelerations);
        sim.apply(plan);
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
    pub(crate) fn flow_rng(&self) -> Rng {
        Rng::stream(self.scenario.seed, STREAM_FLOW + self.flows.len() as u64)
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
                    keep_connection,
                    trace_cwnd,
                    stop_ns,
                    ..
                } => {
                    let p = &self.scenario.tcp_profiles[*profile as usize];
                    let on_off = off_time.as_ref().map(|dist| {
                        Box::new(OnOff {
                            off_time: dist.clone(),
                            keep_connection: *keep_connection,
                            rng: self.flow_rng(),
                            transfer_start: start_ns,
                            done_at: start_ns,
                            transfers_done: 0,
                            completion_sum: 0,
                        })
                    });
                    let sender = TcpSender::new(p, *size_bytes);
                    let mut tcp = TcpFlow::new(*profile, sender, on_off, *trace_cwnd);
                    let stop_ns = specs.stop_of(i, *stop_ns);
                    tcp.stops = stop_ns.is_some();
                    let transport = Transport::Tcp(tcp);
                    self.add_flow(group, path, reverse, start_ns, *size_bytes, transport);
                    if let Some(stop) = stop_ns {
                        let id = self.flows.len() as u32 - 1;
                        self.events.schedule(stop, Event::FlowStop(id));
                    }
                }
                FlowGroup::Udp {
                    packet_size,
                    header_size,
                    stop_ns,
                    tagged,
                    source,
                    ..
                } => {
                    let rng = self.flow_rng();
                    let udp = UdpFlow::new(
                        *packet_size,
                        *header_size,
                        *tagged,
                        source.clone(),
                        specs.stop_of(i, *stop_ns),
                        rng,
                    );
                    let udp = Box::new(udp);
                    self.add_flow(group, path, reverse, start_ns, None, Transport::Udp(udp));
                }
            }
        }
        drop(specs);
    }

    /// The scenario's flow arrival processes, each with its first arrival
    /// scheduled.
    fn build_arrivals(&mut self) {
        let specs = std::mem::take(&mut self.scenario.arrivals);
        for (i, spec) in specs.iter().enumerate() {
            let group = self.groups.intern(&spec.group);
            let routes = (spec.routes.iter())
                .map(|r| self.routes.intern_pair(&r.path, &r.reverse_path))
                .collect();
            let rng = Rng::stream(self.scenario.seed, STREAM_ARRIVAL + i as u64);
            let mut process = ArrivalProcess::new(spec.clone(), group, routes, rng);
            self.events
                .schedule(process.first(), Event::Arrival(i as u32));
            self.arrivals.push(process);
        }
        self.scenario.arrivals = specs;
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
        self.introduce_hosts(id);
        let event = match self.flows[id as usize].transport {
            Transport::Tcp(_) => Event::FlowStart(id),
            Transport::Udp(_) => Event::UdpSend(id),
        };
        self.events.schedule(start, event);
    }
}

/// What `build_links` builds.
type BuiltLinks = (Vec<Link>, Vec<LinkRecord>, Names, Vec<Monitored>, Vec<Wire>);

/// The scenario's links (freeing its link columns), their records, names,
/// the measurements of the monitored ones and the wires of the lossy ones.
fn build_links(scenario: &mut Scenario) -> BuiltLinks {
    let seed = scenario.seed;
    let specs = std::mem::take(&mut scenario.links);
    let wires: Vec<Wire> = (specs.loss.iter().enumerate())
        .filter(|&(_, &loss)| loss > 0.0)
        .map(|(l, &loss)| Wire::new(l as u32, loss, seed))
        .collect();
    let link_names = names_of(&specs.names);
    let mut links = Vec::with_capacity(specs.len());
    let mut link_records = Vec::with_capacity(specs.len());
    let mut monitors = Vec::new();
    // From the last link to the first: the order monitored links have
    // always been numbered in.
    for i in (0..specs.len()).rev() {
        let rate_bps = specs.rate_bps[i];
        // Disciplines that need the link rate (RED's idle decay, PIE) get
        // this link's unless the scenario set one.
        let mut spec = specs.qdiscs[specs.qdisc[i] as usize].clone();
        spec.fill_link_rate(rate_bps);
        let qdisc = Qdisc::from_spec(&spec, aqmlab_qdisc::rng::mix(seed, STREAM_QDISC + i as u64));
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
    links.reverse();
    link_records.reverse();
    for w in &wires {
        links[w.link as usize].lossy = true;
    }
    (links, link_records, link_names, monitors, wires)
}
