//! A gathering link (`Departures::Gathered`: the FIFO that every answer
//! reaches, such as a dumbbell's reverse bottleneck) holds its arrivals in
//! an inbox and reserves them in batches, once nothing can arrive before
//! them. That is what an event per arrival would do: every figure is the same, to the bit, as in a run
//! without gathering (`common::WITHOUT_GATHERING`), answers ahead in
//! both.

mod common;
use aqmlab_qdisc::{DropTailParams, Limit, QdiscSpec};
use aqmlab_sim::{Results, Scenario};
use common::*;

fn run(scenario: Scenario, gather: bool) -> Results {
    run_with(
        scenario,
        if gather {
            Accelerations::ALL
        } else {
            WITHOUT_GATHERING
        },
    )
}

/// Twelve Reno flows through a 30 Mb/s bottleneck that drops.
fn scenario() -> Scenario {
    with_bottleneck(QdiscSpec::Droptail(DropTailParams {
        limit: Limit::Bytes(24_500),
    }))
}

fn with_bottleneck(qdisc: QdiscSpec) -> Scenario {
    let mut s = odd_dumbbell(12, 5, reno());
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = qdisc.clone();
        }
    });
    s
}

/// The gathered run and the reference, and the events gathering saved.
fn both(s: Scenario) -> (Results, Results, u64) {
    let (gathered, reference) = (run(s.clone(), true), run(s, false));
    let saved = summary_u64(&reference, "events") - summary_u64(&gathered, "events");
    (gathered, reference, saved)
}

#[test]
fn gathering_is_what_arrivals_would_do() {
    let (gathered, reference, saved) = both(scenario());
    // Nearly every ACK's arrival at the reverse bottleneck was an event.
    let delivered = summary_u64(&reference, "data_packets_delivered");
    assert!(
        saved > delivered * 9 / 10,
        "{saved} events saved for {delivered} data packets"
    );
    assert!(reference.timeseries.f64("value").len() > 5_000);
    assert_same_results(&gathered, &reference);
}

/// Behind a bottleneck that defers its departures (QSDRR), known half its
/// delay ahead, and one whose departures are events (CoDel).
#[test]
fn gathering_behind_other_disciplines() {
    for qdisc in [
        r#"{"kind": "qsdrr", "limit": {"packets": 24}}"#,
        r#"{"kind": "codel", "limit": {"packets": 24}}"#,
    ] {
        let (gathered, reference, saved) =
            both(with_bottleneck(serde_json::from_str(qdisc).unwrap()));
        let delivered = summary_u64(&reference, "data_packets_delivered");
        assert!(
            saved > delivered * 9 / 10,
            "{qdisc}: {saved} events saved for {delivered}"
        );
        assert_same_results(&gathered, &reference);
    }
}

/// Slow links before the receivers, which queue and drop: packets wait in
/// their pipes behind others, so many are answered in their arrival's
/// event, not ahead, and the inbox must wait for their answers.
#[test]
fn answers_not_given_ahead_are_waited_for() {
    let mut s = scenario();
    edit_links(&mut s, |link| {
        if link.name.starts_with("access_d") && !link.name.ends_with("_rev") {
            link.rate_bps = 2_000_000 + link.from as u64 * 1_009;
            link.delay_ns += 7 * MS;
            link.qdisc = QdiscSpec::Droptail(DropTailParams {
                limit: Limit::Packets(12),
            });
        }
        if link.name == "bottleneck_rev" {
            // So that ACKs meet there, and their order tells.
            link.rate_bps = 1_500_007;
        }
    });
    let (gathered, reference, saved) = both(s);
    assert!(saved > 10_000, "{saved} events saved");
    assert!(reference.queues.u64("drops")[4] > 0, "access_d0 drops");
    assert!(
        reference.queues.u64("peak_packets")[1] > 2,
        "bottleneck_rev queues"
    );
    assert_same_results(&gathered, &reference);
}

/// A reverse bottleneck slow enough that the ACKs queue there, behind a
/// forward bottleneck fast enough that it seldom does, and receivers from
/// 1 to 9 ms beyond it: answers to data packets reserved later often
/// arrive sooner, as soon as they can.
#[test]
fn a_gathering_link_that_queues() {
    let qsdrr = r#"{"kind": "qsdrr", "limit": {"packets": 24}}"#;
    for bottleneck in [
        scenario(),
        with_bottleneck(serde_json::from_str(qsdrr).unwrap()),
    ] {
        let mut s = bottleneck;
        edit_links(&mut s, |link| {
            if let Some(i) = link.name.strip_prefix("access_d") {
                if let Ok(i) = i.parse::<u64>() {
                    link.delay_ns += 700_001 * i;
                }
            }
            if link.name == "bottleneck" {
                link.rate_bps = 300_000_007;
            }
            if link.name == "bottleneck_rev" {
                link.rate_bps = 1_100_003;
            }
        });
        let (gathered, reference, saved) = both(s);
        assert!(saved > 10_000, "{saved} events saved");
        assert!(
            reference.queues.u64("peak_packets")[1] > 5,
            "bottleneck_rev queues"
        );
        assert_same_results(&gathered, &reference);
    }
}

/// Batches cut short (`Simulation::gather_in_batches_of`): the arrivals
/// left wait for an event at the first of them, and every figure is still
/// the same. In batches of one, an event per arrival, as in the reference;
/// in batches of three, most of those events saved.
#[test]
fn gathering_in_short_batches() {
    let s = scenario();
    let reference = run(s.clone(), false);
    let delivered = summary_u64(&reference, "data_packets_delivered");
    for (most, least_saved) in [(1, 0), (3, delivered / 2)] {
        let batched = run_prepared(s.clone(), Accelerations::ALL, |sim| {
            sim.gather_in_batches_of(most)
        });
        let saved = summary_u64(&reference, "events") - summary_u64(&batched, "events");
        assert!(
            saved >= least_saved,
            "batches of {most}: {saved} events saved for {delivered} data packets"
        );
        assert_same_results(&batched, &reference);
    }
}
