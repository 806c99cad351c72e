//! From a finished simulation to result tables.

use std::sync::Arc;

use aqmlab_qdisc::{DropReason, QdiscStats};

use crate::engine::flow::{Flow, Transport};
use crate::engine::link::{Link, LinkRecord};
use crate::engine::wire::Wire;
use crate::engine::Simulation;
use crate::measure::window::WindowStart;
use crate::metrics::{jain_index, Column, DelayHistogram, Scalar, Table};
use crate::names::Names;
use crate::trace::pcap::{ByteSequence, FlowHeaders};

pub struct Results {
    pub summary: Vec<(String, Scalar)>,
    pub flows: Table,
    pub queues: Table,
    pub timeseries: Table,
    pub histograms: Table,
    /// The packet trace, if the scenario asked for one.
    pub trace: Option<Table>,
    /// The capture, a pcap file, if the scenario asked for one.
    pub pcap: Option<Vec<u8>>,
}

impl Results {
    /// Consumes the simulation and frees its parts as soon as the tables no
    /// longer need them (the run's state, then the flows), and moves names
    /// rather than copying them, so that building the tables does not raise
    /// the peak of memory above the run's.
    pub fn collect(mut sim: Simulation, wall_time_s: f64) -> Self {
        let (conservation_ok, conservation) = conservation(&sim);
        sim.release_run_state();
        let window_s = (sim.scenario.duration_ns - sim.scenario.warmup_ns) as f64 * 1e-9;
        let nodes = Arc::new(std::mem::take(&mut sim.node_names));
        let fairness = fairness(&sim, window_s);
        let duplicates: u64 = (sim.flows.iter())
            .map(|f| f.duplicates_window() as u64)
            .sum();
        let flows = flow_table(&mut sim, &nodes, window_s);
        let (trace, pcap) = packet_traces(&mut sim);
        let n_flows = sim.flows.len();
        sim.flows = Vec::new();
        let bottleneck = sim.links.iter().position(|l| l.is_monitored());
        let bottleneck_name = bottleneck.map(|b| sim.link_names.get(b).into_owned());
        let timeseries = series_table(&mut sim);
        let histograms = histogram_table(&sim);
        let queues = queue_table(&mut sim, &nodes, window_s);
        let mut summary = vec![
            ("seed".into(), Scalar::U64(sim.scenario.seed)),
            (
                "duration_s".into(),
                Scalar::F64(sim.scenario.duration_ns as f64 / 1e9),
            ),
            (
                "warmup_s".into(),
                Scalar::F64(sim.scenario.warmup_ns as f64 / 1e9),
            ),
            ("flows".into(), Scalar::U64(n_flows as u64)),
            ("events".into(), Scalar::U64(sim.events_processed)),
            ("wall_time_s".into(), Scalar::F64(wall_time_s)),
            (
                "data_packets_delivered".into(),
                Scalar::U64(sim.ledger.data_received),
            ),
            ("packets_injected".into(), Scalar::U64(sim.ledger.injected)),
            ("packets_received".into(), Scalar::U64(sim.ledger.received)),
            ("packets_dropped".into(), Scalar::U64(sim.ledger.dropped)),
            ("packets_lost".into(), Scalar::U64(sim.packets_lost())),
            (
                "peak_packets_in_flight".into(),
                Scalar::U64(sim.ledger.peak_in_flight),
            ),
            (
                "goodput_bps".into(),
                Scalar::F64(flows.f64("throughput_bps").iter().sum()),
            ),
            ("duplicate_packets".into(), Scalar::U64(duplicates)),
            ("conservation_ok".into(), Scalar::Bool(conservation_ok)),
            ("conservation".into(), Scalar::Str(conservation)),
        ];
        summary.extend(fairness);
        if let (Some(b), Some(name)) = (bottleneck, bottleneck_name) {
            summary.push(("bottleneck".into(), Scalar::Str(name)));
            summary.push((
                "bottleneck_utilization".into(),
                Scalar::F64(queues.f64("utilization")[b]),
            ));
            summary.push((
                "bottleneck_loss_rate".into(),
                Scalar::F64(queues.f64("loss_rate")[b]),
            ));
            summary.push((
                "bottleneck_mean_delay_s".into(),
                Scalar::F64(queues.f64("mean_delay_s")[b]),
            ));
        }
        Results {
            summary,
            flows,
            queues,
            timeseries,
            histograms,
            trace,
            pcap,
        }
    }

    pub fn summary_value(&self, key: &str) -> Option<&Scalar> {
        self.summary.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Jain's index of the flows' throughputs: `jain_index` over every flow,
/// `jain_index_long_lived_tcp` over the TCP flows without a size, and
/// `jain_index.<group>` over each group's flows (none for a group without
/// flows, as for arrival processes').
fn fairness(sim: &Simulation, window_s: f64) -> Vec<(String, Scalar)> {
    let throughput: Vec<f64> = (sim.flows.iter())
        .map(|f| throughput_bps(f, window_s))
        .collect();
    let long_lived: Vec<f64> = (sim.flows.iter().zip(&throughput))
        .filter(|(f, _)| matches!(&f.transport, Transport::Tcp(_)) && f.size_bytes().is_none())
        .map(|(_, &x)| x)
        .collect();
    let mut by_group = vec![Vec::new(); sim.groups.len()];
    for (f, &x) in sim.flows.iter().zip(&throughput) {
        by_group[f.group as usize].push(x);
    }
    let mut out = vec![
        (
            "jain_index".to_string(),
            Scalar::F64(jain_index(&throughput)),
        ),
        (
            "jain_index_long_lived_tcp".to_string(),
            Scalar::F64(jain_index(&long_lived)),
        ),
    ];
    for (name, xs) in sim.groups.iter().zip(&by_group) {
        if !xs.is_empty() {
            out.push((format!("jain_index.{name}"), Scalar::F64(jain_index(xs))));
        }
    }
    out
}

/// The payload bits a flow delivered in order in the measurement window,
/// over its length (TCP and UDP alike).
fn throughput_bps(flow: &Flow, window_s: f64) -> f64 {
    flow.delivered_window() as f64 * 8.0 / window_s
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A column of repeated names, each stored once, in order of first use.
fn categorical<'a>(names: impl Iterator<Item = &'a str>) -> Column {
    let mut values = Names::default();
    let codes = names.map(|name| values.intern(name)).collect();
    Column::Cat {
        values: Arc::new(values),
        codes,
    }
}

/// The nodes a flow runs from and to: where its route starts and ends.
fn flow_ends(sim: &Simulation, f: &Flow) -> (u32, u32) {
    let (mut forward, records) = (sim.routes.links(f.forward), &sim.link_records);
    let first = forward.next().expect("a route has a link");
    let last = forward.last().unwrap_or(first);
    (records[first as usize].from, records[last as usize].to)
}

/// The packet trace and the capture, if asked for; the flows' series goes
/// into the time series.
fn packet_traces(sim: &mut Simulation) -> (Option<Table>, Option<Vec<u8>>) {
    let Some(tracer) = sim.tracer.take() else {
        return (None, None);
    };
    if let Some(series) = tracer.flow_series() {
        let starts: Vec<_> = sim.flows.iter().map(|f| f.start).collect();
        let delivered: Vec<_> = sim.flows.iter().map(|f| f.delivered).collect();
        for (end, flow, bps) in series.rows(&starts, &delivered, sim.scenario.duration_ns) {
            sim.series.push(end, "throughput_bps", flow, bps);
        }
    }
    let names = &sim.link_names;
    let trace = tracer
        .packet_log()
        .map(|log| log.table(|l| names.get(l as usize)));
    let pcap = tracer.capture().map(|capture| {
        let headers: Vec<FlowHeaders> = (sim.flows.iter())
            .map(|f| {
                let (src, dst) = flow_ends(sim, f);
                let tcp = match &f.transport {
                    Transport::Tcp(t) => {
                        let p = &sim.scenario.tcp_profiles[t.profile as usize];
                        Some(ByteSequence::new(p, f.size_bytes()))
                    }
                    Transport::Udp(_) => None,
                };
                FlowHeaders { src, dst, tcp }
            })
            .collect();
        capture.file(&headers)
    });
    (trace, pcap)
}

fn flow_table(sim: &mut Simulation, nodes: &Arc<Names>, window_s: f64) -> Table {
    let n = sim.flows.len();
    let mut id = Vec::with_capacity(n);
    let (mut src, mut dst) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut start, mut size, mut packets, mut bytes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut delivered, mut retx, mut timeouts, mut fast) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut fct, mut transfers, mut mean_fct, mut thr) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut rtt, mut cwnd) = (Vec::new(), Vec::new());
    for (i, f) in sim.flows.iter().enumerate() {
        id.push(i as u64);
        // A route runs from its flow's source to its destination (checked).
        let (from, to) = flow_ends(sim, f);
        src.push(from);
        dst.push(to);
        start.push(secs(f.start));
        size.push(f.size_bytes());
        delivered.push(f.delivered);
        thr.push(throughput_bps(f, window_s));
        rtt.push(secs(sim.base_rtt(f.forward, f.reverse)));
        match &f.transport {
            Transport::Tcp(t) => {
                let c = &t.sender.counters;
                packets.push(c.packets_sent);
                bytes.push(c.bytes_sent);
                retx.push(c.retransmissions as u64);
                timeouts.push(c.timeouts as u64);
                fast.push(c.fast_retransmits as u64);
                fct.push(t.first_completion.get().map(secs));
                let (done, took) = t.completions();
                transfers.push(done as u64);
                mean_fct.push((done > 0).then(|| secs(took) / done as f64));
                cwnd.push(Some(t.sender.cwnd()));
            }
            Transport::Udp(u) => {
                packets.push(u.packets_sent);
                bytes.push(u.bytes_sent);
                retx.push(0);
                timeouts.push(0);
                fast.push(0);
                fct.push(None);
                transfers.push(0);
                mean_fct.push(None);
                cwnd.push(None);
            }
        }
    }
    let mut t = Table::default();
    t.push("flow_id", Column::U64(id));
    t.push(
        "group",
        Column::Cat {
            values: Arc::new(std::mem::take(&mut sim.groups)),
            codes: sim.flows.iter().map(|f| f.group).collect(),
        },
    );
    let kinds = sim.flows.iter().map(|f| match f.transport {
        Transport::Tcp(_) => "tcp",
        Transport::Udp(_) => "udp",
    });
    t.push("kind", categorical(kinds));
    t.push(
        "src",
        Column::Cat {
            values: nodes.clone(),
            codes: src,
        },
    );
    t.push(
        "dst",
        Column::Cat {
            values: nodes.clone(),
            codes: dst,
        },
    );
    t.push("start_s", Column::F64(start));
    t.push("size_bytes", Column::OptU64(size));
    t.push("packets_sent", Column::U64(packets));
    t.push("bytes_sent", Column::U64(bytes));
    t.push("unique_bytes_delivered", Column::U64(delivered));
    t.push("retransmissions", Column::U64(retx));
    t.push("timeouts", Column::U64(timeouts));
    t.push("fast_retransmits", Column::U64(fast));
    t.push("completion_time_s", Column::OptF64(fct));
    t.push("transfers_completed", Column::U64(transfers));
    t.push("mean_completion_time_s", Column::OptF64(mean_fct));
    t.push("throughput_bps", Column::F64(thr));
    t.push("base_rtt_s", Column::F64(rtt));
    t.push("final_cwnd", Column::OptF64(cwnd));
    let dropped = sim.flows.iter().map(|f| f.dropped);
    t.push("packets_dropped", Column::U64(dropped.collect()));
    let duplicates = sim.flows.iter().map(|f| f.duplicates_window() as u64);
    t.push("duplicate_packets", Column::U64(duplicates.collect()));
    one_way_columns(sim, &mut t);
    t.push("queues", queues_column(sim));
    t
}

/// The queues of link `trace.flow_queues` each flow's key hashes to
/// (`QueueDiscipline::queues_of`); missing when not asked for.
fn queues_column(sim: &Simulation) -> Column {
    let link = sim.scenario.trace.flow_queues;
    let of = |f: usize| link.map(|l| sim.links[l as usize].queue.queues_of(f as u64));
    Column::OptListU32((0..sim.flows.len()).map(of).collect())
}

/// The flows' one-way delays, jitter and reordering (`trace.flow_stats`),
/// missing for a flow without packets in the window and for every flow
/// when not asked for.
fn one_way_columns(sim: &Simulation, t: &mut Table) {
    let n = sim.flows.len();
    let stats = sim.tracer.as_ref().and_then(|r| r.flow_stats());
    let delay = |i: usize| (0..n).map(move |f| stats?.flow(f)?.delays_s().map(|d| d[i]));
    t.push("delay_min_s", Column::OptF64(delay(0).collect()));
    t.push("delay_mean_s", Column::OptF64(delay(1).collect()));
    t.push("delay_max_s", Column::OptF64(delay(2).collect()));
    let jitter = (0..n).map(|f| stats?.flow(f)?.jitter_s());
    t.push("jitter_s", Column::OptF64(jitter.collect()));
    let reordered = (0..n).map(|f| stats.map(|s| s.flow(f).map_or(0, |w| w.reordered)));
    t.push("packets_reordered", Column::OptU64(reordered.collect()));
}

/// What a row of the queue table is computed from: a link and what the
/// simulation keeps of it apart.
struct Row<'a> {
    link: &'a Link,
    record: &'a LinkRecord,
    at_warmup: WindowStart,
    /// Queueing delays, for a monitored link.
    delays: Option<&'a DelayHistogram>,
    /// Its wire's losses, if it loses packets.
    wire: Option<&'a Wire>,
}

impl<'a> Row<'a> {
    fn stats(&self) -> QdiscStats<'a> {
        self.link.queue.stats(&self.record.counters)
    }
}

/// A link's value in one column.
type Of<T> = Box<dyn Fn(&Row) -> T>;

/// A numeric (or flag) column of the queue table, as a function of a link.
enum Cell {
    U64(Of<u64>),
    F64(Of<f64>),
    Bool(Of<bool>),
}

fn u64_cell(f: impl Fn(&Row) -> u64 + 'static) -> Cell {
    Cell::U64(Box::new(f))
}

fn f64_cell(f: impl Fn(&Row) -> f64 + 'static) -> Cell {
    Cell::F64(Box::new(f))
}

impl Cell {
    /// Zeroed: its pages cost nothing until a row is written.
    fn column(&self, rows: usize) -> Column {
        match self {
            Cell::U64(_) => Column::U64(vec![0; rows]),
            Cell::F64(_) => Column::F64(vec![0.0; rows]),
            Cell::Bool(_) => Column::Bool(vec![false; rows]),
        }
    }

    fn write(&self, column: &mut Column, i: usize, row: &Row) {
        match (self, column) {
            (Cell::U64(f), Column::U64(v)) => v[i] = f(row),
            (Cell::F64(f), Column::F64(v)) => v[i] = f(row),
            (Cell::Bool(f), Column::Bool(v)) => v[i] = f(row),
            _ => unreachable!("a cell writes its own column"),
        }
    }
}

/// Links whose rows are written before their memory is given back.
const ROWS_PER_CHUNK: usize = 1 << 16;

/// Consumes the links: rows are written from the last link back and the
/// links' records freed a chunk at a time, so that they and the table they
/// become (about 250 B a link) are never both whole.
fn queue_table(sim: &mut Simulation, nodes: &Arc<Names>, window_s: f64) -> Table {
    let mut links = std::mem::take(&mut sim.links);
    let mut records = std::mem::take(&mut sim.link_records);
    let mut t = Table::default();
    t.push("link", Column::Str(std::mem::take(&mut sim.link_names)));
    let ends = |end: fn(&LinkRecord) -> u32| Column::Cat {
        values: nodes.clone(),
        codes: records.iter().map(end).collect(),
    };
    t.push("from", ends(|r| r.from));
    t.push("to", ends(|r| r.to));
    t.push("qdisc", categorical(links.iter().map(|l| l.queue.name())));
    let mut cells: Vec<(String, Cell)> = vec![
        ("rate_bps".into(), u64_cell(|r| r.record.rate_bps)),
        ("delay_s".into(), f64_cell(|r| secs(r.link.delay))),
        (
            "monitored".into(),
            Cell::Bool(Box::new(|r| r.link.is_monitored())),
        ),
        ("arrivals".into(), u64_cell(|r| r.stats().arrivals)),
        ("departures".into(), u64_cell(|r| r.stats().departures)),
        ("drops".into(), u64_cell(|r| r.stats().total_drops())),
    ];
    for reason in DropReason::ALL {
        cells.push((
            format!("drops_{}", reason.as_str()),
            u64_cell(move |r| r.stats().losses().drops[reason.index()]),
        ));
    }
    cells.extend([
        (
            "buffered_drop_bytes".into(),
            u64_cell(|r| r.stats().losses().buffered_drop_bytes),
        ),
        ("marks".into(), u64_cell(|r| r.stats().losses().marks)),
        (
            "arrival_bytes".into(),
            u64_cell(|r| r.stats().arrival_bytes),
        ),
        (
            "departure_bytes".into(),
            u64_cell(|r| r.stats().departure_bytes),
        ),
        (
            "backlog_packets".into(),
            u64_cell(|r| r.link.queue.backlog().packets),
        ),
        ("peak_packets".into(), u64_cell(|r| r.stats().peak_packets)),
        (
            "window_arrivals".into(),
            u64_cell(|r| r.stats().arrivals - r.at_warmup.arrivals),
        ),
        (
            "window_drops".into(),
            u64_cell(|r| r.stats().total_drops() - r.at_warmup.drops),
        ),
        ("lost".into(), u64_cell(|r| r.wire.map_or(0, |w| w.lost))),
        (
            "window_lost".into(),
            u64_cell(|r| r.wire.map_or(0, |w| w.lost - w.lost_at_warmup)),
        ),
        (
            "utilization".into(),
            f64_cell(move |r| {
                let bytes = r.stats().departure_bytes - r.at_warmup.departure_bytes;
                bytes as f64 * 8.0 / (r.record.rate_bps as f64 * window_s)
            }),
        ),
        (
            "loss_rate".into(),
            f64_cell(|r| {
                let arrivals = r.stats().arrivals - r.at_warmup.arrivals;
                let drops = r.stats().total_drops() - r.at_warmup.drops;
                if arrivals == 0 {
                    0.0
                } else {
                    drops as f64 / arrivals as f64
                }
            }),
        ),
    ]);
    // An unmonitored link has no delays: NaN, as for an empty histogram.
    let delay = |f: fn(&DelayHistogram) -> f64| f64_cell(move |r| r.delays.map_or(f64::NAN, f));
    cells.push(("mean_delay_s".into(), delay(|d| d.mean_s())));
    cells.push(("p50_delay_s".into(), delay(|d| d.quantile_s(0.5))));
    cells.push(("p99_delay_s".into(), delay(|d| d.quantile_s(0.99))));

    let mut columns: Vec<Column> = cells
        .iter()
        .map(|(_, cell)| cell.column(links.len()))
        .collect();
    while !links.is_empty() {
        let start = links.len().saturating_sub(ROWS_PER_CHUNK);
        for (i, (link, record)) in links[start..].iter().zip(&records[start..]).enumerate() {
            let row = Row {
                link,
                record,
                at_warmup: sim.at_warmup.get(start + i),
                delays: link.monitor().map(|m| &sim.monitors[m].delays),
                wire: sim.wire_of(start + i).map(|w| &sim.wires[w]),
            };
            for (column, (_, cell)) in columns.iter_mut().zip(&cells) {
                cell.write(column, start + i, &row);
            }
        }
        // Their discipline's memory now, the arena's at the end: see `Link`.
        links.truncate(start);
        records.truncate(start);
        records.shrink_to_fit();
    }
    for ((name, _), column) in cells.iter().zip(columns) {
        t.push(name, column);
    }
    t
}
fn series_table(sim: &mut Simulation) -> Table {
    let s = std::mem::take(&mut sim.series);
    let mut entity = Names::default();
    for (&e, &m) in s.entity.iter().zip(&s.metric) {
        match m {
            "queue_packets" | "queue_bytes" | "link_utilization" | "queue_flows_max"
            | "queue_flows_min" | "queue_flows_queues" => {
                entity.push(&sim.link_names.get(e as usize))
            }
            "cwnd" | "throughput_bps" => entity.push(&e.to_string()),
            _ => entity.push(""),
        }
    }
    let mut t = Table::default();
    t.push("time_s", Column::F64(s.time_s));
    t.push("metric", categorical(s.metric.iter().copied()));
    t.push("entity", Column::Str(entity));
    t.push("value", Column::F64(s.value));
    t
}

fn histogram_table(sim: &Simulation) -> Table {
    let (mut names, mut lo, mut hi, mut count) =
        (Names::default(), Vec::new(), Vec::new(), Vec::new());
    for (l, link) in sim.links.iter().enumerate() {
        let Some(m) = link.monitor() else { continue };
        let (name, delays) = (sim.link_names.get(l), &sim.monitors[m].delays);
        for (i, &c) in delays.counts.iter().enumerate() {
            if c > 0 {
                let (a, b) = DelayHistogram::bounds(i);
                names.push(&name);
                lo.push(a);
                hi.push(b);
                count.push(c);
            }
        }
    }
    let mut t = Table::default();
    t.push("link", Column::Str(names));
    t.push("bin_low_s", Column::F64(lo));
    t.push("bin_high_s", Column::F64(hi));
    t.push("count", Column::U64(count));
    t
}

/// Every queue keeps arrivals = departures + drops + backlog, and end to
/// end every packet a host sent was received, dropped, or is still queued
/// or propagating.
fn conservation(sim: &Simulation) -> (bool, String) {
    let mut problems = Vec::new();
    let mut queued = 0;
    let mut propagating = 0;
    for (i, (l, record)) in sim.links.iter().zip(&sim.link_records).enumerate() {
        if let Err(e) = l.queue.check_conservation(&record.counters) {
            problems.push(format!("{}: {e}", sim.link_names.get(i)));
        }
        // A reserving link's waiting packets are in its pipe already; its
        // buffer holds copies, for its own counts.
        if !l.reserves() {
            queued += l.queue.backlog().packets;
        }
        propagating += sim.pipes.len(&l.pipe) as u64;
    }
    // On their way to a gathering link, in its inbox.
    propagating += sim.packets_gathering();
    let g = &sim.ledger;
    if g.injected != g.received + g.dropped + queued + propagating {
        problems.push(format!(
            "end to end: injected {} != received {} + dropped {} + queued {} + propagating {}",
            g.injected, g.received, g.dropped, queued, propagating
        ));
    }
    (
        problems.is_empty(),
        if problems.is_empty() {
            "ok".into()
        } else {
            problems.join("; ")
        },
    )
}
