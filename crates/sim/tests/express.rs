//! Express links (`accel/express.rs`) compute a FIFO's work as soon as a
//! packet's arrival there is known, before it arrives. That is exactly the
//! event-driven FIFO: the same admissions, drops, waits and departures, and
//! the same counters in the measurement window. Here the express links are the
//! real bottlenecks (slow receiver links with small buffers), so they queue
//! and drop throughout. The reference runs every link on events
//! (`Accelerations::NONE`); tests/fifo.rs checks the FIFOs
//! whose arrivals are events.

mod common;
use aqmlab_sim::Results;
use common::*;

fn slow_receivers() -> aqmlab_sim::Scenario {
    let mut s = Dumbbell {
        bottleneck_bps: 100_000_000,
        bottleneck_delay: 5 * MS,
        buffer: 200,
        access_bps: 1_000_000_000,
        // Odd, distinct delays: no two packets meet at one nanosecond.
        access_delays: (0..12).map(|i| 3 * MS + 7_919 * i + 13).collect(),
        receiver_delay: MS + 101,
        starts: (0..12).map(|i| 1_000_003 * i).collect(),
        duration: 20 * S,
        warmup: 5 * S,
        sample: 100 * MS,
        seed: 3,
        profile: reno(),
    }
    .build();
    edit_links(&mut s, |link| {
        if link.name.starts_with("access_d") && !link.name.ends_with("_rev") {
            link.rate_bps = 6_000_000 + link.from as u64 * 1_000; // each flow's bottleneck
            link.qdisc = aqmlab_qdisc::QdiscSpec::Droptail(aqmlab_qdisc::DropTailParams {
                limit: aqmlab_qdisc::Limit::Packets(12),
            });
        }
    });
    s
}

#[test]
fn express_links_do_what_events_would() {
    let (fast, slow) = (
        run_with(slow_receivers(), Accelerations::ALL),
        run_reserving(slow_receivers(), false),
    );
    let events = |r: &Results| match r.summary_value("events") {
        Some(aqmlab_sim::Scalar::U64(n)) => *n,
        other => panic!("events: {other:?}"),
    };
    assert!(
        events(&fast) < events(&slow) * 4 / 5,
        "express links save events: {} vs {}",
        events(&fast),
        events(&slow)
    );
    // Every flow's figures, to the bit.
    for column in [
        "unique_bytes_delivered",
        "retransmissions",
        "timeouts",
        "fast_retransmits",
        "packets_sent",
    ] {
        assert_eq!(
            fast.flows.u64(column),
            slow.flows.u64(column),
            "flows.{column}"
        );
    }
    assert_eq!(
        fast.flows.f64("throughput_bps"),
        slow.flows.f64("throughput_bps")
    );
    // The express links were the bottlenecks: they queued and dropped, the
    // same packets as the event-driven FIFOs.
    let names = fast.queues.strings("link");
    let express: Vec<usize> = (0..names.len())
        .filter(|&i| names[i].starts_with("access_d") && !names[i].ends_with("_rev"))
        .collect();
    let (drops_fast, drops_slow) = (fast.queues.u64("drops"), slow.queues.u64("drops"));
    let (peak_fast, peak_slow) = (
        fast.queues.u64("peak_packets"),
        slow.queues.u64("peak_packets"),
    );
    for &i in &express {
        assert!(drops_slow[i] > 0, "{} should drop", names[i]);
        assert_eq!(drops_fast[i], drops_slow[i], "{} drops", names[i]);
        assert_eq!(peak_fast[i], peak_slow[i], "{} peak backlog", names[i]);
    }
    for key in [
        "packets_dropped",
        "data_packets_delivered",
        "peak_packets_in_flight",
        "conservation_ok",
    ] {
        assert_eq!(
            format!("{:?}", fast.summary_value(key)),
            format!("{:?}", slow.summary_value(key)),
            "{key}"
        );
    }
    assert_eq!(
        format!("{:?}", fast.summary_value("conservation_ok")),
        "Some(Bool(true))"
    );
}
