//! Scenario builders for the simulator's own tests (the user-facing builders
//! live in Python; these build the resolved form directly).
#![allow(dead_code)]

use aqmlab_qdisc::{DropTailParams, Limit, QdiscSpec};
use aqmlab_sim::scenario::*;
pub use aqmlab_sim::Accelerations;

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

pub fn reno() -> TcpProfile {
    TcpProfile {
        variant: TcpVariant::Reno,
        packet_size: 1000,
        header_size: 40,
        ack_size: 40,
        initial_window: 2,
        initial_ssthresh: 10_000,
        receiver_window: 10_000,
        delayed_ack: false,
        delayed_ack_timeout_ns: 100 * MS,
        dupack_threshold: 3,
        min_rto_ns: 200 * MS,
        max_rto_ns: 60 * S,
        initial_rto_ns: S,
        clock_granularity_ns: 10 * MS,
        syn: false,
        ecn: false,
        cubic: CubicParams::default(),
        rtt_estimator: RttEstimator::Rfc6298,
        timeout_cwnd: Default::default(),
    }
}

fn droptail(limit: u64) -> QdiscSpec {
    QdiscSpec::Droptail(DropTailParams {
        limit: Limit::Packets(limit),
    })
}

fn numbered(names: &[&str], count: u32) -> NameRun {
    NameRun {
        names: names.iter().map(|n| n.to_string()).collect(),
        numbers: Some([0, count]),
    }
}

fn plain(names: &[&str]) -> NameRun {
    NameRun {
        names: names.iter().map(|n| n.to_string()).collect(),
        numbers: None,
    }
}

/// n senders with their own access links (one-way delays `access_delays`),
/// one bottleneck, n receivers. Flow i goes from sender i to receiver i.
pub struct Dumbbell {
    pub bottleneck_bps: u64,
    pub bottleneck_delay: u64,
    pub buffer: u64,
    pub access_bps: u64,
    pub access_delays: Vec<u64>,
    pub receiver_delay: u64,
    pub starts: Vec<u64>,
    pub duration: u64,
    pub warmup: u64,
    pub sample: u64,
    pub seed: u64,
    pub profile: TcpProfile,
}

impl Dumbbell {
    /// The scenario in the column-wise form Python resolves a dumbbell to:
    /// nodes r1, r2, then s{i}, d{i} for each i; links bottleneck,
    /// bottleneck_rev, then each i's access links.
    pub fn build(&self) -> Scenario {
        let n = self.access_delays.len() as u32;
        let (bottleneck, access) = (0, 1);
        let mut links = Links {
            names: vec![
                plain(&["bottleneck", "bottleneck_rev"]),
                numbered(
                    &[
                        "access_s{}",
                        "access_s{}_rev",
                        "access_d{}",
                        "access_d{}_rev",
                    ],
                    n,
                ),
            ],
            qdiscs: vec![droptail(self.buffer), droptail(100_000)],
            from: vec![0, 1],
            to: vec![1, 0],
            rate_bps: vec![self.bottleneck_bps; 2],
            delay_ns: vec![self.bottleneck_delay; 2],
            qdisc: vec![bottleneck, access],
            monitor: vec![true, false],
            loss: vec![],
        };
        let mut flows = Flows {
            // Flow 0 alone traces its window.
            groups: [true, false]
                .map(|trace_cwnd| FlowGroup::Tcp {
                    label: "long".into(),
                    profile: 0,
                    size_bytes: None,
                    off_time: None,
                    keep_connection: false,
                    trace_cwnd,
                    stop_ns: None,
                })
                .into(),
            ..Flows::default()
        };
        for i in 0..n {
            let (s, d) = (2 + 2 * i, 3 + 2 * i);
            let up = links.len() as u32;
            let delay = self.access_delays[i as usize];
            let ends = [(s, 0), (0, s), (1, d), (d, 1)];
            let delays = [delay, delay, self.receiver_delay, self.receiver_delay];
            for ((from, to), delay) in ends.into_iter().zip(delays) {
                links.from.push(from);
                links.to.push(to);
                links.rate_bps.push(self.access_bps);
                links.delay_ns.push(delay);
                links.qdisc.push(access);
                links.monitor.push(false);
            }
            let route = Route {
                src: s,
                dst: d,
                path: vec![up, 0, up + 2],
                reverse_path: vec![up + 3, 1, up + 1],
            };
            let start = self.starts.get(i as usize).copied().unwrap_or(0);
            flows.push(u32::from(i != 0), &route, start);
        }
        Scenario {
            seed: self.seed,
            duration_ns: self.duration,
            warmup_ns: self.warmup,
            sample_interval_ns: self.sample,
            nodes: vec![plain(&["r1", "r2"]), numbered(&["s{}", "d{}"], n)],
            links,
            tcp_profiles: vec![self.profile.clone()],
            flows,
            arrivals: vec![],
            trace: Default::default(),
            ties: Default::default(),
        }
    }
}

/// `flows` Reno flows through a 30 Mb/s bottleneck
/// whose buffer the caller sets, every rate and delay odd and distinct so
/// that two events meet at one nanosecond only by a flow's own pace: the
/// scenario the tests of work done out of the event order (reservations,
/// answering ahead, deferred departures) compare against events. Access
/// delays 3 ms + 7,919 i + 13 ns, starts 1,000,003 i ns apart, 20 s with a
/// window from 5 s + 3 ns, samples every 20 ms + 1 ns.
pub fn odd_dumbbell(flows: u64, seed: u64, profile: TcpProfile) -> Scenario {
    Dumbbell {
        bottleneck_bps: 30_000_007,
        bottleneck_delay: 5 * MS + 17,
        buffer: 0,
        access_bps: 1_000_000_000,
        access_delays: (0..flows).map(|i| 3 * MS + 7_919 * i + 13).collect(),
        receiver_delay: MS + 101,
        starts: (0..flows).map(|i| 1_000_003 * i).collect(),
        duration: 20 * S,
        warmup: 5 * S + 3,
        sample: 20 * MS + 1,
        seed,
        profile,
    }
    .build()
}

/// Change links of `scenario` one at a time, as rows.
pub fn edit_links(scenario: &mut Scenario, mut edit: impl FnMut(&mut LinkSpec)) {
    let mut rows = scenario.links.rows();
    rows.iter_mut().for_each(&mut edit);
    scenario.links = Links::from_rows(rows);
}

/// Seed 003's single-flow experiments (digest 003, E2.2-E2.5): one Reno flow,
/// C = 1000 packets/s (8 Mb/s, 1000 B packets), 2 Tp = 142 ms, buffer B.
pub fn single_flow(buffer: u64, duration: u64, warmup: u64) -> Scenario {
    Dumbbell {
        bottleneck_bps: 8_000_000,
        bottleneck_delay: 69 * MS,
        buffer,
        access_bps: 1_000_000_000,
        access_delays: vec![MS],
        receiver_delay: MS,
        starts: vec![0],
        duration,
        warmup,
        sample: 10 * MS,
        seed: 1,
        profile: reno(),
    }
    .build()
}

/// Rows of one metric from the long-format time series.
pub fn series(r: &aqmlab_sim::Results, metric: &str, entity: &str) -> Vec<(f64, f64)> {
    let t = r.timeseries.f64("time_s");
    let v = r.timeseries.f64("value");
    let (m, e) = (
        r.timeseries.strings("metric"),
        r.timeseries.strings("entity"),
    );
    (0..t.len())
        .filter(|&i| m[i] == metric && e[i] == entity)
        .map(|i| (t[i], v[i]))
        .collect()
}

/// `scenario` checked and run to its end with `accelerations`, after
/// `prepare` has had the simulation.
pub fn run_prepared(
    scenario: Scenario,
    accelerations: Accelerations,
    prepare: impl FnOnce(&mut aqmlab_sim::Simulation),
) -> aqmlab_sim::Results {
    scenario.check().unwrap();
    let mut sim = aqmlab_sim::Simulation::with_accelerations(scenario, accelerations);
    prepare(&mut sim);
    assert!(sim.run(|_| true));
    aqmlab_sim::Results::collect(sim, 0.0)
}

/// Every acceleration but answering ahead (and gathering, which needs it).
pub const WITHOUT_ANSWERS: Accelerations = Accelerations {
    answer_data: false,
    answer_acks: false,
    gather: false,
    ..Accelerations::ALL
};

/// Every acceleration but gathering.
pub const WITHOUT_GATHERING: Accelerations = Accelerations {
    gather: false,
    ..Accelerations::ALL
};

/// `scenario` run to its end, with the FIFOs reserving their departures as
/// the simulator does, or (`reserve` false) with every link on events: the
/// reference the reservations are tested against.
pub fn run_reserving(scenario: Scenario, reserve: bool) -> aqmlab_sim::Results {
    run_with(
        scenario,
        if reserve {
            Accelerations::ALL
        } else {
            Accelerations::NONE
        },
    )
}

/// `scenario` checked and run to its end with `accelerations`.
pub fn run_with(scenario: Scenario, accelerations: Accelerations) -> aqmlab_sim::Results {
    run_prepared(scenario, accelerations, |_| {})
}

/// One cell of a table, printed (columns differ in type; NaN, an empty
/// link's delay, prints alike).
pub fn cell(column: &aqmlab_sim::Column, row: usize) -> String {
    use aqmlab_sim::Column;
    match column {
        Column::F64(v) => format!("{:?}", v[row]),
        Column::U64(v) => format!("{:?}", v[row]),
        Column::I64(v) => format!("{:?}", v[row]),
        Column::Str(v) => v.get(row).into_owned(),
        Column::Cat { values, codes } => values.get(codes[row] as usize).into_owned(),
        Column::Bool(v) => format!("{:?}", v[row]),
        Column::OptF64(v) => format!("{:?}", v[row]),
        Column::OptU64(v) => format!("{:?}", v[row]),
        Column::OptListU32(v) => format!("{:?}", v[row]),
    }
}

/// A summary figure that is a count.
pub fn summary_u64(r: &aqmlab_sim::Results, key: &str) -> u64 {
    match r.summary_value(key) {
        Some(aqmlab_sim::Scalar::U64(n)) => *n,
        other => panic!("{key}: {other:?}"),
    }
}

/// `fast` has every figure of `reference`, to the bit: every flow's, every
/// sample and histogram, every queue's, and the summary but for the work it
/// took (`events`). Compared as printed, cell by cell, so that a failure
/// names the cell.
pub fn assert_same_results(fast: &aqmlab_sim::Results, reference: &aqmlab_sim::Results) {
    let tables = [
        ("flows", &fast.flows, &reference.flows),
        ("queues", &fast.queues, &reference.queues),
        ("timeseries", &fast.timeseries, &reference.timeseries),
        ("histograms", &fast.histograms, &reference.histograms),
    ];
    for (table, f, r) in tables {
        assert_eq!(f.columns.len(), r.columns.len(), "{table}");
        for ((name, f), (_, r)) in f.columns.iter().zip(&r.columns) {
            assert_eq!(f.len(), r.len(), "{table}.{name}");
            for row in 0..r.len() {
                assert_eq!(cell(f, row), cell(r, row), "{table}.{name}[{row}]");
            }
        }
    }
    for (key, value) in &reference.summary {
        if key != "events" {
            assert_eq!(
                format!("{:?}", fast.summary_value(key)),
                format!("{:?}", Some(value)),
                "{key}"
            );
        }
    }
    assert_eq!(
        format!("{:?}", fast.summary_value("conservation_ok")),
        "Some(Bool(true))"
    );
}
