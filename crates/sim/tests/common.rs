//! Scenario builders for the simulator's own tests (the user-facing builders
//! live in Python; these build the resolved form directly).
#![allow(dead_code)]

use aqmlab_qdisc::{Limit, QdiscSpec};
use aqmlab_sim::scenario::*;

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
    }
}

fn link(
    name: String,
    from: u32,
    to: u32,
    rate_bps: u64,
    delay_ns: u64,
    limit: u64,
    monitor: bool,
) -> LinkSpec {
    LinkSpec {
        name,
        from,
        to,
        rate_bps,
        delay_ns,
        qdisc: QdiscSpec::Droptail {
            limit: Limit::Packets(limit),
        },
        monitor,
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
    pub fn build(&self) -> Scenario {
        let n = self.access_delays.len() as u32;
        let mut nodes = vec![
            NodeSpec { name: "r1".into() },
            NodeSpec { name: "r2".into() },
        ];
        let mut links = vec![
            link(
                "bottleneck".into(),
                0,
                1,
                self.bottleneck_bps,
                self.bottleneck_delay,
                self.buffer,
                true,
            ),
            link(
                "bottleneck_rev".into(),
                1,
                0,
                self.bottleneck_bps,
                self.bottleneck_delay,
                100_000,
                false,
            ),
        ];
        let mut flows = Vec::new();
        for i in 0..n {
            let s = nodes.len() as u32;
            nodes.push(NodeSpec {
                name: format!("s{i}"),
            });
            let d = nodes.len() as u32;
            nodes.push(NodeSpec {
                name: format!("d{i}"),
            });
            let up = links.len() as u32;
            let delay = self.access_delays[i as usize];
            links.push(link(
                format!("access_s{i}"),
                s,
                0,
                self.access_bps,
                delay,
                100_000,
                false,
            ));
            links.push(link(
                format!("access_s{i}_rev"),
                0,
                s,
                self.access_bps,
                delay,
                100_000,
                false,
            ));
            links.push(link(
                format!("access_d{i}"),
                1,
                d,
                self.access_bps,
                self.receiver_delay,
                100_000,
                false,
            ));
            links.push(link(
                format!("access_d{i}_rev"),
                d,
                1,
                self.access_bps,
                self.receiver_delay,
                100_000,
                false,
            ));
            flows.push(FlowSpec::Tcp {
                group: "long".into(),
                route: Route {
                    src: s,
                    dst: d,
                    path: vec![up, 0, up + 2],
                    reverse_path: vec![up + 3, 1, up + 1],
                },
                profile: 0,
                start_ns: self.starts.get(i as usize).copied().unwrap_or(0),
                size_bytes: None,
                off_time: None,
                trace_cwnd: i == 0,
            });
        }
        Scenario {
            seed: self.seed,
            duration_ns: self.duration,
            warmup_ns: self.warmup,
            sample_interval_ns: self.sample,
            nodes,
            links,
            tcp_profiles: vec![self.profile.clone()],
            flows,
            arrivals: vec![],
        }
    }
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

/// `scenario` run to its end, with the FIFOs reserving their departures as
/// the simulator does, or (`reserve` false) with every link on events: the
/// reference the reservations are tested against.
pub fn run_reserving(scenario: Scenario, reserve: bool) -> aqmlab_sim::Results {
    scenario.check().unwrap();
    let mut sim = aqmlab_sim::Simulation::new(scenario);
    if !reserve {
        sim.without_reservations();
    }
    assert!(sim.run(|_| true));
    aqmlab_sim::Results::collect(sim, 0.0)
}
