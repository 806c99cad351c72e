//! The accelerated engine against the reference, where events tie.
//!
//! Every acceleration (`aqmlab_sim::accel`) must give the reference's
//! results to the bit. Events at one nanosecond run in the order of their
//! key (`engine::events::Event`), not of their scheduling, so equal delays
//! and equal starts, which make packets meet at one nanosecond all the
//! time, must change nothing either, under either order of ties within a
//! kind (`Ties`). These scenarios are built to tie: equal access delays and
//! starts, round rates, links of no delay, a window that opens and samples
//! taken at nanoseconds where packets arrive; and random topologies drawn
//! with delays from a set of three.

mod common;
use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::QdiscSpec;
use aqmlab_sim::scenario::*;
use aqmlab_sim::Scenario;
use common::*;

/// Under each order of ties, the reference and each acceleration alone,
/// then all of them, give the same results; a failure names the order and
/// the acceleration.
fn assert_every_acceleration_exact(name: &str, scenario: &Scenario) {
    for ties in Ties::ALL {
        let scenario = Scenario {
            ties,
            ..scenario.clone()
        };
        assert_exact_under_its_ties(&format!("{name}, {} ties", ties.name()), &scenario);
    }
}

fn assert_exact_under_its_ties(name: &str, scenario: &Scenario) {
    let reference = run_with(scenario.clone(), Accelerations::NONE);
    let none = Accelerations::NONE;
    let alone = [
        (
            "reserve",
            Accelerations {
                reserve: true,
                ..none
            },
        ),
        (
            "express",
            Accelerations {
                reserve: true,
                express: true,
                ..none
            },
        ),
        (
            "defer",
            Accelerations {
                defer: true,
                ..none
            },
        ),
        (
            "answer_data",
            Accelerations {
                reserve: true,
                answer_data: true,
                ..none
            },
        ),
        (
            "answer_acks",
            Accelerations {
                reserve: true,
                answer_acks: true,
                ..none
            },
        ),
        (
            "gather",
            Accelerations {
                gather: false,
                ..Accelerations::ALL
            },
        ),
        ("all", Accelerations::ALL),
    ];
    for (what, accelerations) in alone {
        let fast = run_with(scenario.clone(), accelerations);
        let result = std::panic::catch_unwind(|| assert_same_results(&fast, &reference));
        if let Err(e) = result {
            let message = e
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| format!("{:?}", e.downcast_ref::<&str>()));
            panic!("{name}, {what}: {message}");
        }
    }
}

fn qdisc(json: &str) -> QdiscSpec {
    serde_json::from_str(json).unwrap()
}

/// `flows` Reno flows with equal access delays and equal starts, through a
/// round-rate bottleneck.
fn tied_dumbbell(flows: usize, bottleneck: QdiscSpec, bottleneck_delay: u64) -> Scenario {
    let mut s = Dumbbell {
        bottleneck_delay,
        access_delays: vec![2 * MS; flows],
        starts: (0..flows as u64).map(|i| (i % 3) * MS).collect(),
        ..tied_dumbbell_shape()
    }
    .build();
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = bottleneck.clone();
        }
    });
    s
}

/// The rates, delays and times of the tied dumbbells (no flows yet).
fn tied_dumbbell_shape() -> Dumbbell {
    Dumbbell {
        bottleneck_bps: 20_000_000,
        bottleneck_delay: 5 * MS,
        buffer: 0,
        access_bps: 100_000_000,
        access_delays: vec![],
        receiver_delay: MS,
        starts: vec![],
        duration: 6 * S,
        warmup: 2 * S,
        sample: 10 * MS,
        seed: 11,
        profile: reno(),
    }
}

const BOTTLENECKS: [&str; 12] = [
    r#"{"kind": "droptail", "limit": {"packets": 20}}"#,
    r#"{"kind": "droptail", "limit": {"bytes": 15000}}"#,
    r#"{"kind": "red", "limit": {"packets": 40}, "min_th": 5, "max_th": 15, "gentle": true}"#,
    r#"{"kind": "drr", "limit": {"packets": 30}}"#,
    r#"{"kind": "qsdrr", "limit": {"packets": 30}}"#,
    r#"{"kind": "sfq", "limit": {"packets": 30}}"#,
    r#"{"kind": "codel", "limit": {"packets": 30}}"#,
    r#"{"kind": "fq_codel", "limit": 30}"#,
    r#"{"kind": "dsdrr", "limit": {"packets": 30}}"#,
    r#"{"kind": "blue", "limit": {"packets": 30}}"#,
    r#"{"kind": "tdrr", "limit": {"packets": 30}}"#,
    r#"{"kind": "dtdrr", "limit": {"packets": 30}}"#,
];

#[test]
fn tied_dumbbells_behind_every_kind_of_bottleneck() {
    for json in BOTTLENECKS {
        assert_every_acceleration_exact(json, &tied_dumbbell(10, qdisc(json), 5 * MS));
    }
}

/// A bottleneck of no propagation delay: a deferring discipline's
/// departures may then run no later than when they are due.
#[test]
fn a_bottleneck_of_no_delay() {
    for json in BOTTLENECKS {
        assert_every_acceleration_exact(json, &tied_dumbbell(6, qdisc(json), 0));
    }
}

/// Seed 000's multiple-RTT case (digest 000, E3-MRTT) in small: two RTT
/// classes, 40 and 200 ms, set by the senders' access delays alone, the
/// bottleneck and the receivers' links of no delay. The first packets meet
/// at the bottleneck at one nanosecond, 20 ms and a serialization in.
#[test]
fn the_multiple_rtt_bottleneck_of_no_delay() {
    for json in BOTTLENECKS {
        let mut s = Dumbbell {
            bottleneck_delay: 0,
            receiver_delay: 0,
            access_delays: [20 * MS, 100 * MS].repeat(4),
            starts: vec![0; 8],
            ..tied_dumbbell_shape()
        }
        .build();
        edit_links(&mut s, |link| {
            if link.name == "bottleneck" {
                link.qdisc = qdisc(json);
            }
        });
        let r = run_with(s.clone(), Accelerations::NONE);
        assert!(
            r.queues.u64("drops")[0] > 10,
            "{json}: the bottleneck drops"
        );
        assert_every_acceleration_exact(json, &s);
    }
}

/// Delayed ACKs (no data packet answered ahead), ECN with RED marking,
/// and a window traced (its sender not answered ahead).
#[test]
fn tied_dumbbell_with_delayed_acks_and_ecn() {
    let mut s = tied_dumbbell(
        8,
        qdisc(
            r#"{"kind": "red", "limit": {"packets": 40}, "min_th": 5, "max_th": 15, "ecn": true}"#,
        ),
        5 * MS,
    );
    s.tcp_profiles[0].delayed_ack = true;
    s.tcp_profiles[0].ecn = true;
    assert_every_acceleration_exact("delayed ACKs, ECN", &s);
}

/// Receivers whose delays differ by half a bottleneck packet's
/// serialization each way, so that the ACKs of two packets sent back to
/// back meet at the reverse bottleneck at one nanosecond, from different
/// links: its inbox must take them in the reference's order.
#[test]
fn acks_meeting_at_the_reverse_bottleneck() {
    for json in [BOTTLENECKS[0], BOTTLENECKS[4]] {
        let mut s = tied_dumbbell(10, qdisc(json), 5 * MS);
        edit_links(&mut s, |link| {
            let Some(rest) = link.name.strip_prefix("access_d") else {
                return;
            };
            let i: u64 = rest.trim_end_matches("_rev").parse().unwrap();
            // 1000-byte packets at 20 Mb/s: 400 us each.
            link.delay_ns = 2 * MS - (i % 2) * 200_000;
        });
        assert_every_acceleration_exact(json, &s);
    }
}

/// Every kind of traffic at once, its packets meeting at one nanosecond:
/// Tahoe, NewReno, SACK and CUBIC senders beside Reno ones (one profile
/// each; the first three with ns-2's RTT estimator), on-off TCP sources
/// (fresh and kept connections), flows that stop, CBR and on-off UDP, and
/// Poisson arrivals of short flows, behind a DropTail and a QSDRR bottleneck.
#[test]
fn every_kind_of_traffic_tied() {
    use aqmlab_sim::scenario::{ArrivalSpec, Dist, RttEstimator, TcpVariant};
    for json in [BOTTLENECKS[0], BOTTLENECKS[4]] {
        let mut s = tied_dumbbell(12, qdisc(json), 5 * MS);
        let variants = [
            TcpVariant::Tahoe,
            TcpVariant::Newreno,
            TcpVariant::Sack,
            TcpVariant::Cubic,
        ];
        for variant in variants {
            let rtt_estimator = match variant {
                TcpVariant::Cubic => RttEstimator::Rfc6298,
                _ => RttEstimator::Ns2,
            };
            s.tcp_profiles.push(TcpProfile {
                variant,
                rtt_estimator,
                ..reno()
            });
        }
        let groups = s.flows.groups.len() as u32;
        for (i, variant) in variants.iter().enumerate() {
            s.flows.groups.push(FlowGroup::Tcp {
                label: format!("{variant:?}"),
                profile: i as u32 + 1,
                size_bytes: None,
                off_time: None,
                keep_connection: false,
                trace_cwnd: false,
                stop_ns: (i == 3).then_some(4 * S),
            });
        }
        for keep_connection in [false, true] {
            s.flows.groups.push(FlowGroup::Tcp {
                label: format!("on-off, kept {keep_connection}"),
                profile: 0,
                size_bytes: Some(60_000),
                off_time: Some(Dist::Exponential { mean: 2e8 }),
                keep_connection,
                trace_cwnd: false,
                stop_ns: None,
            });
        }
        s.flows.groups.push(FlowGroup::Udp {
            label: "udp".into(),
            packet_size: 1000,
            header_size: 28,
            stop_ns: Some(5 * S),
            tagged: false,
            source: UdpSource::OnOff {
                rate_bps: 4_000_000,
                on: Dist::Fixed { value: 3e8 },
                off: Dist::Fixed { value: 2e8 },
            },
        });
        // Flows 2 to 8 take the new groups in turn.
        for (f, g) in s.flows.group.iter_mut().enumerate().skip(2).take(7) {
            *g = groups + (f as u32 - 2);
        }
        // On flow 1's route (sender s1, node 4, to receiver d1, node 5).
        let route = Route {
            src: 4,
            dst: 5,
            path: s.flows.path.get(1).to_vec(),
            reverse_path: s.flows.reverse_path.get(1).to_vec(),
        };
        s.arrivals.push(ArrivalSpec {
            group: "short".into(),
            rate_per_s: 40.0,
            size_bytes: Dist::Pareto {
                mean: 20_000.0,
                shape: 1.2,
            },
            routes: vec![route],
            profile: 0,
            start_ns: 500 * MS,
            stop_ns: Some(5 * S),
        });
        // UDP flows have no reverse path.
        let mut reverse = aqmlab_sim::scenario::Paths::default();
        for f in 0..s.flows.len() {
            let udp = s.flows.group[f] == groups + 6;
            reverse.push(if udp {
                &[]
            } else {
                s.flows.reverse_path.get(f)
            });
        }
        s.flows.reverse_path = reverse;
        s.check().unwrap();
        // What the traffic did: short flows arrived and finished, the on-off
        // sources (a fresh connection each transfer, and a kept one) made
        // transfers, senders recovered from losses.
        let r = run_with(s.clone(), Accelerations::NONE);
        assert!(r.flows.u64("flow_id").len() > 100, "{json}: arrivals");
        for f in [6, 7] {
            assert!(r.flows.u64("transfers_completed")[f] > 3, "{json}: on-off");
        }
        assert!(
            r.flows.u64("fast_retransmits").iter().sum::<u64>() > 20,
            "{json}"
        );
        assert_every_acceleration_exact(json, &s);
    }
}

/// A random network: a chain of routers joined both ways, hosts hung off
/// them, TCP and UDP flows between hosts at random routers, every delay
/// one of `delays`, rates of 10 or 50 Mb/s, small buffers of random kinds.
fn random_chain(seed: u64, delays: &[u64]) -> Scenario {
    let mut rng = Rng::new(seed);
    let routers = 2 + rng.below(3) as u32;
    let delay = |rng: &mut Rng| delays[rng.below(delays.len() as u64) as usize];
    let rate = |rng: &mut Rng| [10_000_000, 50_000_000][rng.below(2) as usize];
    let kinds = [
        r#"{"kind": "droptail", "limit": {"packets": 8}}"#,
        r#"{"kind": "droptail", "limit": {"bytes": 9000}}"#,
        r#"{"kind": "red", "limit": {"packets": 25}, "min_th": 3, "max_th": 9}"#,
        r#"{"kind": "qsdrr", "limit": {"packets": 12}}"#,
        r#"{"kind": "drr", "limit": {"packets": 12}}"#,
        r#"{"kind": "codel", "limit": {"packets": 12}}"#,
        r#"{"kind": "blue", "limit": {"packets": 12}}"#,
        r#"{"kind": "tdrr", "limit": {"packets": 12}}"#,
        r#"{"kind": "dtdrr", "limit": {"packets": 12}}"#,
    ];
    let kind = |rng: &mut Rng| kinds[rng.below(kinds.len() as u64) as usize];
    let mut links = Links::default();
    let mut names = Vec::new();
    let push = |links: &mut Links, from: u32, to: u32, rng: &mut Rng, queue: &str, monitor| {
        let name = format!("l{}", links.len());
        links.push(LinkSpec {
            name: name.clone(),
            from,
            to,
            rate_bps: rate(rng),
            delay_ns: delay(rng),
            qdisc: qdisc(queue),
            monitor,
            loss: 0.0,
        });
        links.len() as u32 - 1
    };
    // Router i is node i; router links i -> i+1 and back.
    let mut right = Vec::new();
    let mut left = Vec::new();
    for i in 0..routers - 1 {
        let (a, b) = (kind(&mut rng), kind(&mut rng));
        right.push(push(&mut links, i, i + 1, &mut rng, a, i == 0));
        left.push(push(&mut links, i + 1, i, &mut rng, b, false));
    }
    let big = r#"{"kind": "droptail", "limit": {"packets": 1000}}"#;
    let mut flows = Flows {
        groups: vec![
            FlowGroup::Tcp {
                label: "tcp".into(),
                profile: 0,
                size_bytes: None,
                off_time: None,
                keep_connection: false,
                trace_cwnd: false,
                stop_ns: None,
            },
            FlowGroup::Udp {
                label: "udp".into(),
                packet_size: 500,
                header_size: 28,
                stop_ns: None,
                tagged: false,
                source: UdpSource::Cbr {
                    rate_bps: 2_000_000,
                    jitter: 0.0,
                },
            },
        ],
        ..Flows::default()
    };
    let mut node = routers;
    for _ in 0..4 + rng.below(6) {
        let (a, b) = (
            rng.below(routers as u64) as u32,
            rng.below(routers as u64) as u32,
        );
        let (s, d) = (node, node + 1);
        node += 2;
        let up = push(&mut links, s, a, &mut rng, big, false);
        let up_rev = push(&mut links, a, s, &mut rng, big, false);
        let down = push(&mut links, b, d, &mut rng, big, false);
        let down_rev = push(&mut links, d, b, &mut rng, big, false);
        let (mut path, mut back) = (vec![up], vec![down_rev]);
        if a < b {
            path.extend(&right[a as usize..b as usize]);
            back.extend(left[a as usize..b as usize].iter().rev());
        } else {
            path.extend(left[b as usize..a as usize].iter().rev());
            back.extend(&right[b as usize..a as usize]);
        }
        path.push(down);
        back.push(up_rev);
        let tcp = rng.below(4) != 0;
        let route = Route {
            src: s,
            dst: d,
            path,
            reverse_path: if tcp { back } else { vec![] },
        };
        flows.push(u32::from(!tcp), &route, rng.below(3) * MS);
    }
    for n in 0..node {
        names.push(format!("n{n}"));
    }
    Scenario {
        seed,
        duration_ns: 3 * S,
        warmup_ns: S,
        sample_interval_ns: 5 * MS,
        nodes: vec![NameRun {
            names,
            numbers: None,
        }],
        links,
        tcp_profiles: vec![reno()],
        flows,
        arrivals: vec![],
        trace: Default::default(),
        ties: Default::default(),
    }
}

#[test]
fn random_chains_full_of_ties() {
    for seed in 1..=12 {
        let s = random_chain(seed, &[0, MS, 2 * MS]);
        s.check().unwrap();
        assert_every_acceleration_exact(&format!("chain seed {seed}"), &s);
    }
}

/// Chains whose every link, routers' and hosts' alike, has no delay.
#[test]
fn random_chains_of_no_delay() {
    for seed in 13..=18 {
        let s = random_chain(seed, &[0]);
        s.check().unwrap();
        assert_every_acceleration_exact(&format!("chain seed {seed}, no delay"), &s);
    }
}

/// Random loss on links of every kind (`engine::wire`): a lossy bottleneck,
/// lossy access links each way (a sender's first link, whose ACKs would be
/// answered ahead, and a receiver's last, whose data would be), and random
/// chains with links that lose at random. Every engine draws the same
/// losses for the same packets.
#[test]
fn lossy_links_anywhere() {
    for json in [BOTTLENECKS[0], BOTTLENECKS[4]] {
        let mut s = tied_dumbbell(10, qdisc(json), 5 * MS);
        edit_links(&mut s, |link| {
            let n = link.name.as_str();
            link.loss = match n {
                "bottleneck" => 0.01,
                _ if n.starts_with("access_s1") || n.starts_with("access_d2") => 0.05,
                _ => 0.0,
            };
        });
        let r = run_with(s.clone(), Accelerations::NONE);
        let lost: u64 = r.queues.u64("lost").iter().sum();
        assert!(lost > 20, "{json}: {lost} lost");
        assert_every_acceleration_exact(&format!("{json}, lossy links"), &s);
    }
    for seed in 1..=6 {
        let mut s = random_chain(seed, &[0, MS, 2 * MS]);
        let mut rng = Rng::new(1000 + seed);
        edit_links(&mut s, |link| {
            if rng.below(3) == 0 {
                link.loss = [0.01, 0.1][rng.below(2) as usize];
            }
        });
        s.check().unwrap();
        assert_every_acceleration_exact(&format!("lossy chain seed {seed}"), &s);
    }
}

/// The order of ties decides who is dropped at the tied dumbbell's
/// bottleneck: the two orders must not give the same flows' results.
#[test]
fn the_order_of_ties_decides_who_is_dropped() {
    let delivered = |ties| {
        let s = Scenario {
            ties,
            ..tied_dumbbell(10, qdisc(BOTTLENECKS[0]), 5 * MS)
        };
        run_with(s, Accelerations::NONE)
            .flows
            .u64("unique_bytes_delivered")
            .to_vec()
    };
    assert_ne!(delivered(Ties::Hashed), delivered(Ties::Numbered));
}

#[test]
fn the_buffers_of_the_ties_test_drop() {
    // The ties matter only where they decide something: the bottleneck
    // drops, and packets meet at one nanosecond there.
    let r = run_with(
        tied_dumbbell(10, qdisc(BOTTLENECKS[0]), 5 * MS),
        Accelerations::NONE,
    );
    assert!(
        r.queues.u64("drops")[0] > 100,
        "{:?}",
        r.queues.u64("drops")
    );
}
