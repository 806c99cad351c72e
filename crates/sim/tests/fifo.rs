//! Every FIFO link reserves (`Link::reserves`): a packet's start and its
//! arrival at the far end are computed when it arrives, and its departure
//! costs no `TxDone` event. Where no two events tie at a nanosecond, that is
//! exactly the event-driven FIFO: the same admissions, drops, waits and
//! departures, and what a monitored link measures (delay histogram, sampled
//! backlog and utilization, window counters) is the same too.
//!
//! The scenario makes reserving links queue and drop where every figure is
//! read: a monitored bottleneck with a byte limit, and half the receivers
//! behind slow, monitored access links with a 9-packet limit (monitored, so
//! not express: their arrivals are events). Rates and delays are odd and
//! distinct so that no arrival meets a departure at one nanosecond.

mod common;
use aqmlab_qdisc::{Limit, QdiscSpec};
use aqmlab_sim::metrics::Column;
use aqmlab_sim::Results;
use common::*;

const FLOWS: usize = 12;

fn slow_receiver(i: usize) -> bool {
    i.is_multiple_of(2)
}

fn scenario() -> aqmlab_sim::Scenario {
    let mut s = Dumbbell {
        bottleneck_bps: 30_000_007,
        bottleneck_delay: 5 * MS + 17,
        buffer: 0, // replaced by a byte limit below
        access_bps: 1_000_000_000,
        access_delays: (0..FLOWS as u64).map(|i| 3 * MS + 7_919 * i + 13).collect(),
        receiver_delay: MS + 101,
        starts: (0..FLOWS as u64).map(|i| 1_000_003 * i).collect(),
        duration: 20 * S,
        warmup: 5 * S + 3,
        sample: 20 * MS + 1,
        seed: 5,
        profile: reno(),
    }
    .build();
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = QdiscSpec::Droptail {
                limit: Limit::Bytes(24_500),
            };
        }
        if let Some(i) = link.name.strip_prefix("access_d") {
            let Ok(i) = i.parse::<usize>() else {
                return; // a reverse link
            };
            link.delay_ns += 3_001 * i as u64;
            if slow_receiver(i) {
                link.rate_bps = 1_500_000 + 1_009 * i as u64;
                link.qdisc = QdiscSpec::Droptail {
                    limit: Limit::Packets(9),
                };
                link.monitor = true;
            }
        }
    });
    s
}

/// One cell of a table, printed (columns differ in type).
fn cell(column: &Column, row: usize) -> String {
    match column {
        Column::F64(v) => format!("{:?}", v[row]),
        Column::U64(v) => format!("{:?}", v[row]),
        Column::I64(v) => format!("{:?}", v[row]),
        Column::Str(v) => v.get(row).into_owned(),
        Column::Cat { values, codes } => values.get(codes[row] as usize).into_owned(),
        Column::Bool(v) => format!("{:?}", v[row]),
        Column::OptF64(v) => format!("{:?}", v[row]),
        Column::OptU64(v) => format!("{:?}", v[row]),
    }
}

#[test]
fn reserved_fifos_do_what_events_would() {
    let (fast, slow) = (
        run_reserving(scenario(), true),
        run_reserving(scenario(), false),
    );
    let u64_of = |r: &Results, key: &str| match r.summary_value(key) {
        Some(aqmlab_sim::Scalar::U64(n)) => *n,
        other => panic!("{key}: {other:?}"),
    };
    let (events_fast, events_slow) = (u64_of(&fast, "events"), u64_of(&slow, "events"));
    assert!(
        events_fast < events_slow * 3 / 4,
        "reservations save events: {events_fast} vs {events_slow}"
    );

    // The monitored links queued and dropped.
    let names = slow.queues.strings("link");
    let monitored: Vec<usize> = (0..names.len())
        .filter(|&i| slow.queues.get("monitored").map(|c| cell(c, i)) == Some("true".into()))
        .collect();
    assert_eq!(monitored.len(), 1 + FLOWS / 2, "{monitored:?}");
    for &i in &monitored {
        assert!(slow.queues.u64("drops")[i] > 0, "{} should drop", names[i]);
        assert!(
            slow.queues.u64("peak_packets")[i] > 5,
            "{} should queue",
            names[i]
        );
    }

    // Every flow's figures, to the bit.
    assert_eq!(fast.flows, slow.flows, "flows");
    // Every monitored link's delay histogram, every sample of its backlog
    // and utilization, every cwnd trace and the flows' sums.
    assert!(!slow.histograms.u64("count").is_empty());
    assert_eq!(fast.histograms, slow.histograms, "histograms");
    assert!(slow.timeseries.f64("value").len() > 10_000);
    assert_eq!(fast.timeseries, slow.timeseries, "timeseries");

    // Every queue's counters and window figures, but the express links':
    // those count a packet when its arrival there is known (earlier).
    let express = |name: &str| {
        name.ends_with("_rev") && name.starts_with("access_s")
            || name
                .strip_prefix("access_d")
                .and_then(|i| i.parse::<usize>().ok())
                .is_some_and(|i| !slow_receiver(i))
    };
    let mut compared = 0;
    for (column, values) in &slow.queues.columns {
        let other = fast.queues.get(column).expect(column);
        for (i, name) in names.iter().enumerate() {
            if !express(name) {
                compared += 1;
                assert_eq!(cell(other, i), cell(values, i), "queues.{column} of {name}");
            }
        }
    }
    assert!(compared > 20 * (2 + FLOWS + FLOWS / 2));

    // The summary, but for the work it took.
    for (key, value) in &slow.summary {
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
