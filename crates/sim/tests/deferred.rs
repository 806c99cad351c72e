//! A discipline that only its arrivals and departures change (no clock, no
//! drop on dequeue: every one in the catalogue but the FIFO, CoDel,
//! FQ-CoDel and those with timers) runs its departures late, when next
//! needed, each at its own time (`accel/defer.rs`). That is exactly the
//! discipline run on events: the same choices, drops, marks and waits, and what its
//! monitored link measures (delay histogram, sampled backlog and
//! utilization, window counters) is the same too. The reference runs every
//! link on events (`Accelerations::NONE`).
//!
//! Each discipline in turn is the monitored bottleneck of eight Reno flows
//! and four Poisson UDP sources, with a measurement window that opens and
//! samples taken while it queues. Rates and delays are odd and distinct,
//! and the UDP sources (packets of two odd sizes at random times) keep the
//! departures off any TCP flow's pace; tests/differential.rs has the ties.

mod common;
use aqmlab_qdisc::{Qdisc, QdiscSpec, KINDS};
use aqmlab_sim::packet::SimPacket;
use aqmlab_sim::scenario::{FlowGroup, UdpSource};
use common::*;

const FLOWS: u64 = 12;

fn scenario(bottleneck: &QdiscSpec, bottleneck_delay: Option<u64>) -> aqmlab_sim::Scenario {
    let mut s = odd_dumbbell(FLOWS, 4, reno());
    // Flows 8 to 11 send UDP, 45% of the bottleneck's rate between them.
    for (size, rate_bps) in [(1_137, 7_000_037), (555, 6_500_011)] {
        s.flows.groups.push(FlowGroup::Udp {
            label: format!("udp{size}"),
            packet_size: size,
            header_size: 28,
            stop_ns: None,
            tagged: false,
            source: UdpSource::Poisson { rate_bps },
        });
    }
    let udp = s.flows.groups.len() as u32 - 2;
    for (i, group) in s.flows.group.iter_mut().enumerate().skip(8) {
        *group = udp + (i % 2) as u32;
    }
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = bottleneck.clone();
        }
        if link.name.starts_with("bottleneck") {
            link.delay_ns = bottleneck_delay.unwrap_or(link.delay_ns);
        }
        if let Some(i) = link.name.strip_prefix("access_d") {
            if let Ok(i) = i.parse::<u64>() {
                link.delay_ns += 3_001 * i;
            }
        }
    });
    s
}

/// Every discipline of the catalogue but the FIFO, with a small buffer
/// where it takes one, and whether it defers its departures.
fn catalogue() -> Vec<(&'static str, QdiscSpec, bool)> {
    let on_events = ["codel", "fq_codel", "dcbt", "chips", "dsdrr"];
    KINDS
        .into_iter()
        .filter(|&kind| kind != "droptail")
        .map(|kind| {
            let small = format!(r#"{{"kind": "{kind}", "limit": {{"packets": 30}}}}"#);
            let plain = format!(r#"{{"kind": "{kind}"}}"#);
            let spec = serde_json::from_str(&small)
                .or_else(|_| serde_json::from_str(&plain))
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            (kind, spec, !on_events.contains(&kind))
        })
        .collect()
}

#[test]
fn deferred_departures_do_what_events_would() {
    deferred_departures_exact(None);
}

/// A bottleneck of no propagation delay (seed 000's multi-RTT case): its
/// departures may run no later than when they are due, in the `TxDone`
/// event of their own nanosecond.
#[test]
fn deferred_departures_on_a_link_of_no_delay() {
    deferred_departures_exact(Some(0));
}

fn deferred_departures_exact(bottleneck_delay: Option<u64>) {
    for (kind, spec, defers) in catalogue() {
        // CoDel drops as packets leave; the others named have timers.
        let q = Qdisc::<SimPacket>::from_spec(&spec, 1);
        assert_eq!(q.defers_departures(), defers, "{kind}");
        let (fast, slow) = (
            run_reserving(scenario(&spec, bottleneck_delay), true),
            run_reserving(scenario(&spec, bottleneck_delay), false),
        );
        let names = slow.queues.strings("link");
        let bottleneck = names.iter().position(|n| n == "bottleneck").unwrap();
        assert!(
            slow.queues.u64("peak_packets")[bottleneck] > 2,
            "{kind} should queue"
        );
        assert_same_results(&fast, &slow);
    }
}
