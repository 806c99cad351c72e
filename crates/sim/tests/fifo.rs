//! Every FIFO link reserves (`accel/reserve.rs`): a packet's start and its
//! arrival at the far end are computed when it arrives, and its departure
//! costs no `TxDone` event. That is exactly the event-driven FIFO: the same admissions, drops, waits and
//! departures, and what a monitored link measures (delay histogram, sampled
//! backlog and utilization, window counters) is the same too.
//!
//! The scenario makes reserving links queue and drop where every figure is
//! read: a monitored bottleneck with a byte limit, and half the receivers
//! behind slow, monitored access links with a 9-packet limit (monitored, so
//! not express: their arrivals are events). Rates and delays are odd and
//! distinct; tests/differential.rs has the ties.

mod common;
use aqmlab_qdisc::{DropTailParams, Limit, QdiscSpec};
use common::*;

const FLOWS: usize = 12;

fn slow_receiver(i: usize) -> bool {
    i.is_multiple_of(2)
}

fn scenario() -> aqmlab_sim::Scenario {
    let mut s = odd_dumbbell(FLOWS as u64, 5, reno());
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = QdiscSpec::Droptail(DropTailParams {
                limit: Limit::Bytes(24_500),
            });
        }
        if let Some(i) = link.name.strip_prefix("access_d") {
            let Ok(i) = i.parse::<usize>() else {
                return; // a reverse link
            };
            link.delay_ns += 3_001 * i as u64;
            if slow_receiver(i) {
                link.rate_bps = 1_500_000 + 1_009 * i as u64;
                link.qdisc = QdiscSpec::Droptail(DropTailParams {
                    limit: Limit::Packets(9),
                });
                link.monitor = true;
            }
        }
    });
    s
}

#[test]
fn reserved_fifos_do_what_events_would() {
    let (fast, slow) = (
        run_reserving(scenario(), true),
        run_reserving(scenario(), false),
    );
    let (events_fast, events_slow) = (summary_u64(&fast, "events"), summary_u64(&slow, "events"));
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

    // Every flow's figures, every monitored link's delay histogram, every
    // sample of its backlog and utilization, every cwnd trace and the
    // flows' sums, every queue's counters and window figures, the summary.
    assert!(!slow.histograms.u64("count").is_empty());
    assert!(slow.timeseries.f64("value").len() > 10_000);
    assert_same_results(&fast, &slow);
}
