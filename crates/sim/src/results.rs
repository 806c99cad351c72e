//! From a finished simulation to result tables.

use std::sync::Arc;

use aqmlab_qdisc::DropReason;

use crate::metrics::{jain_index, Column, DelayHistogram, Scalar, Table};
use crate::network::{Link, LinkRecord};
use crate::sim::{Simulation, Transport};

pub struct Results {
    pub summary: Vec<(String, Scalar)>,
    pub flows: Table,
    pub queues: Table,
    pub timeseries: Table,
    pub histograms: Table,
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
        let nodes: Arc<[String]> = std::mem::take(&mut sim.scenario.nodes).into_iter().map(|n| n.name).collect();
        let flows = flow_table(&mut sim, &nodes, window_s);
        let n_flows = sim.flows.len();
        let long_lived: Vec<f64> = sim
            .flows
            .iter()
            .zip(flows.f64("throughput_bps"))
            .filter(|(f, _)| matches!(&f.transport, Transport::Tcp(t) if t.sender.bytes.is_none()))
            .map(|(_, &x)| x)
            .collect();
        sim.flows = Vec::new();
        let bottleneck = sim.links.iter().position(|l| l.monitor);
        let bottleneck_name = bottleneck.map(|b| sim.link_records[b].name.clone());
        let timeseries = series_table(&mut sim);
        let histograms = histogram_table(&sim);
        let queues = queue_table(&mut sim, &nodes, window_s);
        let mut summary = vec![
            ("seed".into(), Scalar::U64(sim.scenario.seed)),
            ("duration_s".into(), Scalar::F64(sim.scenario.duration_ns as f64 / 1e9)),
            ("warmup_s".into(), Scalar::F64(sim.scenario.warmup_ns as f64 / 1e9)),
            ("flows".into(), Scalar::U64(n_flows as u64)),
            ("events".into(), Scalar::U64(sim.events_processed)),
            ("wall_time_s".into(), Scalar::F64(wall_time_s)),
            ("data_packets_delivered".into(), Scalar::U64(sim.ledger.data_received)),
            ("packets_injected".into(), Scalar::U64(sim.ledger.injected)),
            ("packets_received".into(), Scalar::U64(sim.ledger.received)),
            ("packets_dropped".into(), Scalar::U64(sim.ledger.dropped)),
            ("peak_packets_in_flight".into(), Scalar::U64(sim.ledger.peak_in_flight)),
            ("goodput_bps".into(), Scalar::F64(flows.f64("throughput_bps").iter().sum())),
            ("jain_index".into(), Scalar::F64(jain_index(&long_lived))),
            ("conservation_ok".into(), Scalar::Bool(conservation_ok)),
            ("conservation".into(), Scalar::Str(conservation)),
        ];
        if let (Some(b), Some(name)) = (bottleneck, bottleneck_name) {
            summary.push(("bottleneck".into(), Scalar::Str(name)));
            summary.push(("bottleneck_utilization".into(), Scalar::F64(queues.f64("utilization")[b])));
            summary.push(("bottleneck_loss_rate".into(), Scalar::F64(queues.f64("loss_rate")[b])));
            summary.push(("bottleneck_mean_delay_s".into(), Scalar::F64(queues.f64("mean_delay_s")[b])));
        }
        Results { summary, flows, queues, timeseries, histograms }
    }

    pub fn summary_value(&self, key: &str) -> Option<&Scalar> {
        self.summary.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A column of repeated names, each stored once, in order of first use.
fn categorical<'a>(names: impl Iterator<Item = &'a str>) -> Column {
    let mut values: Vec<String> = Vec::new();
    let codes = names
        .map(|name| match values.iter().position(|v| v == name) {
            Some(code) => code as u32,
            None => {
                values.push(name.to_string());
                values.len() as u32 - 1
            }
        })
        .collect();
    Column::Cat { values: values.into(), codes }
}

fn flow_table(sim: &mut Simulation, nodes: &Arc<[String]>, window_s: f64) -> Table {
    let n = sim.flows.len();
    let mut id = Vec::with_capacity(n);
    let (mut src, mut dst) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut start, mut size, mut packets, mut bytes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut delivered, mut retx, mut timeouts, mut fast) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut fct, mut transfers, mut mean_fct, mut thr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut rtt, mut cwnd) = (Vec::new(), Vec::new());
    for (i, f) in sim.flows.iter().enumerate() {
        id.push(i as u64);
        src.push(f.src);
        dst.push(f.dst);
        start.push(secs(f.start));
        size.push(f.size_bytes);
        delivered.push(f.delivered);
        thr.push(f.delivered_window as f64 * 8.0 / window_s);
        rtt.push(secs(f.base_rtt));
        match &f.transport {
            Transport::Tcp(t) => {
                let c = &t.sender.counters;
                packets.push(c.packets_sent);
                bytes.push(c.bytes_sent);
                retx.push(c.retransmissions);
                timeouts.push(c.timeouts);
                fast.push(c.fast_retransmits);
                fct.push(t.first_completion.map(secs));
                transfers.push(t.transfers_done as u64);
                mean_fct.push((t.transfers_done > 0).then(|| secs(t.completion_sum) / t.transfers_done as f64));
                cwnd.push(Some(t.sender.cwnd));
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
    let groups = std::mem::take(&mut sim.groups).into();
    t.push("group", Column::Cat { values: groups, codes: sim.flows.iter().map(|f| f.group).collect() });
    let kinds = sim.flows.iter().map(|f| match f.transport {
        Transport::Tcp(_) => "tcp",
        Transport::Udp(_) => "udp",
    });
    t.push("kind", categorical(kinds));
    t.push("src", Column::Cat { values: nodes.clone(), codes: src });
    t.push("dst", Column::Cat { values: nodes.clone(), codes: dst });
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
    t
}

fn queue_table(sim: &mut Simulation, nodes: &Arc<[String]>, window_s: f64) -> Table {
    let names = sim.link_records.iter_mut().map(|r| std::mem::take(&mut r.name)).collect();
    let mut t = Table::default();
    let links = || sim.links.iter().zip(&sim.link_records);
    type Row<'a> = (&'a Link, &'a LinkRecord);
    let col_u64 = |f: &dyn Fn(Row) -> u64| Column::U64(links().map(f).collect());
    let col_f64 = |f: &dyn Fn(Row) -> f64| Column::F64(links().map(f).collect());
    let ends = |end: fn(&LinkRecord) -> u32| Column::Cat {
        values: nodes.clone(),
        codes: sim.link_records.iter().map(end).collect(),
    };
    t.push("link", Column::Str(names));
    t.push("from", ends(|r| r.from));
    t.push("to", ends(|r| r.to));
    let links = sim.links.iter();
    t.push("qdisc", categorical(links.clone().map(|l| l.qdisc.name())));
    t.push("rate_bps", col_u64(&|(l, _)| l.rate_bps));
    t.push("delay_s", col_f64(&|(l, _)| secs(l.delay)));
    t.push("monitored", Column::Bool(links.clone().map(|l| l.monitor).collect()));
    t.push("arrivals", col_u64(&|(l, _)| l.qdisc.stats().arrivals));
    t.push("departures", col_u64(&|(l, _)| l.qdisc.stats().departures));
    t.push("drops", col_u64(&|(l, _)| l.qdisc.stats().total_drops()));
    for r in DropReason::ALL {
        t.push(&format!("drops_{}", r.as_str()), col_u64(&|(l, _)| l.qdisc.stats().losses().drops[r.index()]));
    }
    t.push("buffered_drop_bytes", col_u64(&|(l, _)| l.qdisc.stats().losses().buffered_drop_bytes));
    t.push("marks", col_u64(&|(l, _)| l.qdisc.stats().losses().marks));
    t.push("arrival_bytes", col_u64(&|(l, _)| l.qdisc.stats().arrival_bytes));
    t.push("departure_bytes", col_u64(&|(l, _)| l.qdisc.stats().departure_bytes));
    t.push("backlog_packets", col_u64(&|(l, _)| l.qdisc.backlog().packets));
    t.push("peak_packets", col_u64(&|(l, _)| l.qdisc.stats().peak_packets));
    t.push("window_arrivals", col_u64(&|(l, r)| l.qdisc.stats().arrivals - r.at_warmup.arrivals));
    t.push("window_drops", col_u64(&|(l, r)| l.qdisc.stats().total_drops() - r.at_warmup.drops));
    t.push(
        "utilization",
        col_f64(&|(l, r)| {
            let bytes = l.qdisc.stats().departure_bytes - r.at_warmup.departure_bytes;
            bytes as f64 * 8.0 / (l.rate_bps as f64 * window_s)
        }),
    );
    t.push(
        "loss_rate",
        col_f64(&|(l, r)| {
            let arrivals = l.qdisc.stats().arrivals - r.at_warmup.arrivals;
            let drops = l.qdisc.stats().total_drops() - r.at_warmup.drops;
            if arrivals == 0 {
                0.0
            } else {
                drops as f64 / arrivals as f64
            }
        }),
    );
    // An unmonitored link has no delays: NaN, as for an empty histogram.
    let delay = |f: &dyn Fn(&DelayHistogram) -> f64| col_f64(&|(_, r)| r.delays().map_or(f64::NAN, f));
    t.push("mean_delay_s", delay(&|d| d.mean_s()));
    t.push("p50_delay_s", delay(&|d| d.quantile_s(0.5)));
    t.push("p99_delay_s", delay(&|d| d.quantile_s(0.99)));
    t
}

fn series_table(sim: &mut Simulation) -> Table {
    let s = std::mem::take(&mut sim.series);
    let entity = s
        .entity
        .iter()
        .zip(&s.metric)
        .map(|(&e, &m)| match m {
            "queue_packets" | "queue_bytes" | "link_utilization" => sim.link_records[e as usize].name.clone(),
            "cwnd" => e.to_string(),
            _ => String::new(),
        })
        .collect();
    let mut t = Table::default();
    t.push("time_s", Column::F64(s.time_s));
    t.push("metric", categorical(s.metric.iter().copied()));
    t.push("entity", Column::Str(entity));
    t.push("value", Column::F64(s.value));
    t
}

fn histogram_table(sim: &Simulation) -> Table {
    let (mut link, mut lo, mut hi, mut count) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in &sim.link_records {
        let Some(delays) = r.delays() else { continue };
        for (i, &c) in delays.counts.iter().enumerate() {
            if c > 0 {
                let (a, b) = DelayHistogram::bounds(i);
                link.push(r.name.clone());
                lo.push(a);
                hi.push(b);
                count.push(c);
            }
        }
    }
    let mut t = Table::default();
    t.push("link", Column::Str(link));
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
    for (l, r) in sim.links.iter().zip(&sim.link_records) {
        if let Err(e) = l.qdisc.check_conservation() {
            problems.push(format!("{}: {e}", r.name));
        }
        queued += l.qdisc.backlog().packets;
        propagating += l.pipe.len() as u64;
    }
    let g = sim.ledger;
    if g.injected != g.received + g.dropped + queued + propagating {
        problems.push(format!(
            "end to end: injected {} != received {} + dropped {} + queued {} + propagating {}",
            g.injected, g.received, g.dropped, queued, propagating
        ));
    }
    (problems.is_empty(), if problems.is_empty() { "ok".into() } else { problems.join("; ") })
}
