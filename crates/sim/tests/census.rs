//! The census of a run's work (`aqmlab_sim::census`, the `census`
//! feature) adds up: every event counted once by its kind, every packet
//! taken in at its host counted once and answered once, packets answered
//! ahead only where the run answers ahead. `make test` runs it with the
//! feature on: `cargo test --release -p aqmlab-sim --features census --test
//! census`.
#![cfg(feature = "census")]

mod common;
use aqmlab_qdisc::{DropTailParams, Limit, QdiscSpec};
use aqmlab_sim::Simulation;
use common::*;

/// Twelve Reno flows through a 30 Mb/s bottleneck that queues and drops.
fn run(answer_ahead: bool) -> Simulation {
    let mut scenario = odd_dumbbell(12, 3, reno());
    edit_links(&mut scenario, |link| {
        if link.name == "bottleneck" {
            link.qdisc = QdiscSpec::Droptail(DropTailParams {
                limit: Limit::Packets(20),
            });
        }
    });
    let accelerations = if answer_ahead {
        Accelerations::ALL
    } else {
        WITHOUT_ANSWERS
    };
    let mut sim = Simulation::with_accelerations(scenario, accelerations);
    assert!(sim.run(|_| true));
    sim
}

#[test]
fn the_census_adds_up() {
    for answer_ahead in [true, false] {
        let sim = run(answer_ahead);
        let c = &sim.census;
        assert_eq!(c.events.iter().sum::<u64>(), sim.events_processed);
        let taken_in: u64 = c.taken_in.iter().sum();
        assert_eq!(
            taken_in, sim.ledger.received,
            "every packet reaching a host"
        );
        assert!(
            c.taken_in[0] >= sim.ledger.data_received,
            "data packets and SYNs"
        );
        assert_eq!(c.replies.iter().sum::<u64>(), taken_in, "one reply each");
        let waits: u64 = c.waits.iter().sum();
        assert!(
            c.waits[0] > 0 && c.waits[0] <= waits,
            "the bottleneck queues"
        );
        for i in 0..2 {
            assert!(c.answered_ahead[i] <= c.taken_in[i]);
        }
        if answer_ahead {
            assert!(c.answered_ahead.iter().all(|&n| n > 0));
            assert!(c.gathered > 0, "the ACKs' bottleneck gathers");
        } else {
            assert_eq!(c.answered_ahead, [0, 0]);
            assert_eq!(c.gathered, 0);
        }
    }
}
