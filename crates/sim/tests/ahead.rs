//! A packet whose arrival at its host is known when it leaves its last
//! multiplexing point is answered then, ahead of its arrival
//! (`accel/ahead.rs`): a data packet by its receiver's ACK, an ACK by the
//! data its sender sends. That is exactly what its arrival would do: every
//! figure is the same, to the bit, as in a run that answers every packet in
//! its arrival's event (`common::WITHOUT_ANSWERS`).
//!
//! The scenarios make the answers meet what could tell them apart: a
//! bottleneck that queues and drops, slow receivers' links that queue
//! before the receivers, reply links that queue and drop ACKs (an ACK is
//! then not answered ahead: dropped sooner, it would leave the count of
//! packets in flight short for a while), senders' links that queue and
//! drop their bursts (the packets in flight a sender's answer changes),
//! retransmission timeouts, a measurement window opening and samples taken
//! while packets are being answered (a sample reads the senders' windows),
//! a discipline whose departures are events (QSDRR), and delayed ACKs (no
//! data packet answered ahead). Rates and delays are odd and distinct, so
//! that what is tested is the answers, not the order of ties
//! (tests/differential.rs has those).

mod common;
use aqmlab_qdisc::{DropTailParams, Limit, QdiscSpec};
use aqmlab_sim::scenario::TcpProfile;
use aqmlab_sim::{Results, Scenario};
use common::*;

const FLOWS: u64 = 12;

/// Twelve Reno flows through a 30 Mb/s bottleneck that drops; the even
/// receivers behind slow links that queue, the receivers with numbers
/// divisible by 3 answering over slow links that queue and drop their ACKs,
/// senders 1, 5 and 9 sending over slow links that queue and drop.
fn scenario(bottleneck: QdiscSpec, delayed_ack: bool) -> Scenario {
    let mut s = odd_dumbbell(
        FLOWS,
        5,
        TcpProfile {
            delayed_ack,
            ..reno()
        },
    );
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = bottleneck.clone();
        }
        if let Some(i) = link.name.strip_prefix("access_s") {
            if let Ok(i) = i.parse::<u64>() {
                if i % 4 == 1 {
                    // 2.1 Mb/s: a 1000-byte packet in 3.8 ms, and room for
                    // 3.
                    link.rate_bps = 2_100_011 + 977 * i;
                    link.qdisc = QdiscSpec::Droptail(DropTailParams {
                        limit: Limit::Packets(3),
                    });
                }
            }
        }
        let Some(rest) = link.name.strip_prefix("access_d") else {
            return;
        };
        let (number, reply) = match rest.strip_suffix("_rev") {
            Some(n) => (n, true),
            None => (rest, false),
        };
        let i: u64 = number.parse().unwrap();
        link.delay_ns += 3_001 * i;
        if !reply && i.is_multiple_of(2) {
            link.rate_bps = 2_500_000 + 1_009 * i;
            link.qdisc = QdiscSpec::Droptail(DropTailParams {
                limit: Limit::Packets(9),
            });
        }
        if reply && i.is_multiple_of(3) {
            // 40-byte ACKs at 80 kb/s, 4 ms each, and room for 4.
            link.rate_bps = 80_000 + 11 * i;
            link.qdisc = QdiscSpec::Droptail(DropTailParams {
                limit: Limit::Packets(4),
            });
        }
    });
    s
}

fn droptail() -> QdiscSpec {
    QdiscSpec::Droptail(DropTailParams {
        limit: Limit::Bytes(24_500),
    })
}

fn qsdrr() -> QdiscSpec {
    serde_json::from_str(r#"{"kind": "qsdrr", "limit": {"packets": 24}}"#).unwrap()
}

fn run(scenario: Scenario, answer_ahead: bool) -> Results {
    run_with(
        scenario,
        if answer_ahead {
            Accelerations::ALL
        } else {
            WITHOUT_ANSWERS
        },
    )
}

/// Flows whose data packets, and flows whose ACKs, may be answered ahead.
fn answering_ahead(scenario: Scenario) -> (usize, usize) {
    scenario.check().unwrap();
    aqmlab_sim::Simulation::new(scenario).answering_ahead()
}

#[test]
fn answering_ahead_is_what_arrivals_would_do() {
    for (name, bottleneck) in [("droptail", droptail()), ("qsdrr", qsdrr())] {
        let (ahead, reference) = (
            run(scenario(bottleneck.clone(), false), true),
            run(scenario(bottleneck, false), false),
        );
        // The bottleneck dropped, the slow links before the receivers and
        // the reply links queued.
        let names = reference.queues.strings("link");
        let peak = reference.queues.u64("peak_packets");
        let row = |n: &str| names.iter().position(|x| x == n).unwrap();
        assert!(
            reference.queues.u64("drops")[row("bottleneck")] > 0,
            "{name}"
        );
        assert!(peak[row("access_d2")] > 2, "{name}");
        assert!(peak[row("access_d3_rev")] > 2, "{name}");
        assert!(
            reference.queues.u64("drops")[row("access_d3_rev")] > 0,
            "{name}"
        );
        assert!(peak[row("access_s5")] > 1, "{name}");
        assert!(
            reference.queues.u64("drops")[row("access_s5")] > 0,
            "{name}"
        );
        let timeouts: u64 = reference.flows.u64("timeouts").iter().sum();
        assert!(timeouts > 0, "{name}");
        // Every flow but 0, which traces its window, answered ACKs ahead.
        assert_eq!(
            answering_ahead(scenario(droptail(), false)),
            (FLOWS as usize, FLOWS as usize - 1)
        );
        // Most data packets and most ACKs were answered ahead: an event
        // saved each.
        let delivered = summary_u64(&reference, "data_packets_delivered");
        let saved = summary_u64(&reference, "events") - summary_u64(&ahead, "events");
        assert!(
            saved > delivered * 3 / 2,
            "{name}: {saved} events saved for {delivered} data packets"
        );
        assert!(reference.timeseries.f64("value").len() > 5_000);
        assert_same_results(&ahead, &reference);
    }
}

/// Flows 1, 3, 5, ... go to the receiver of the flow before them, each
/// over its own last link, and answer over that flow's reply link: two
/// flows' ACKs meet on one link, in the order of their data's arrivals over
/// two. Neither flow is answered ahead.
fn share_receivers(s: &mut Scenario) {
    // Links 2 + 4i ..: access_s{i}, its reverse, access_d{i}, its reverse;
    // nodes 2 + 2i, 3 + 2i: s{i}, d{i}.
    let receiver = |i: usize| 3 + 2 * i as u32;
    let reply_link = |i: usize| 2 + 4 * i as u32 + 3;
    edit_links(s, |link| {
        if let Some(i) = link.name.strip_prefix("access_d") {
            if let Ok(i) = i.parse::<usize>() {
                if i % 2 == 1 {
                    link.to = receiver(i - 1);
                }
            }
        }
    });
    let flows = &mut s.flows;
    for i in (1..FLOWS as usize).step_by(2) {
        let first = flows.reverse_path.offsets[i] as usize;
        flows.reverse_path.links[first] = reply_link(i - 1);
        flows.dst[i] = receiver(i - 1);
    }
}

#[test]
fn shared_reply_links_are_not_answered_ahead() {
    let shared = || {
        let mut s = scenario(droptail(), false);
        share_receivers(&mut s);
        s
    };
    // The odd flows share the even ones' reply links; the senders still
    // answer ahead (but flow 0, which traces its window).
    assert_eq!(answering_ahead(shared()), (0, FLOWS as usize - 1));
    let (ahead, reference) = (run(shared(), true), run(shared(), false));
    assert_same_results(&ahead, &reference);
}

#[test]
fn delayed_acks_are_not_answered_ahead() {
    assert_eq!(
        answering_ahead(scenario(droptail(), true)),
        (0, FLOWS as usize - 1)
    );
    let (ahead, reference) = (
        run(scenario(droptail(), true), true),
        run(scenario(droptail(), true), false),
    );
    assert_same_results(&ahead, &reference);
}

/// Samples every 2 ms, far less than a sender's ACKs are known ahead
/// (their arrival at the reverse bottleneck, 5 ms and more before the
/// sender): a sender answers ahead only up to the sample after next, and
/// the next keeps what it read of the sender before it went past.
#[test]
fn samples_closer_than_the_answers_ahead() {
    let frequent = || {
        let mut s = scenario(droptail(), false);
        s.sample_interval_ns = 2 * MS + 17;
        s
    };
    let (ahead, reference) = (run(frequent(), true), run(frequent(), false));
    let saved = summary_u64(&reference, "events") - summary_u64(&ahead, "events");
    assert!(saved > summary_u64(&reference, "data_packets_delivered"));
    assert_same_results(&ahead, &reference);
}
