//! Property tests shared by every discipline: conservation, the buffer limit,
//! every drop reported once, per-flow order where promised, determinism.
//! Each discipline adds one line to `disciplines()`.

use aqmlab_qdisc::testkit::{run_trace, Op, Promises, TestPacket};
use aqmlab_qdisc::{DropTail, Limit, QdiscSpec, QueueDiscipline, TrafficClass};
use proptest::prelude::*;

type Make = fn(u64) -> Box<dyn QueueDiscipline<TestPacket> + Send>;

/// Every discipline under test: its name, a constructor from a seed, and
/// what it promises.
fn disciplines() -> Vec<(&'static str, Make, Promises)> {
    let fifo = |limit| Promises { per_flow_order: true, limit: Some(limit) };
    vec![
        ("droptail-packets", |_| Box::new(DropTail::new(Limit::Packets(20))), fifo(Limit::Packets(20))),
        ("droptail-bytes", |_| Box::new(DropTail::new(Limit::Bytes(20_000))), fifo(Limit::Bytes(20_000))),
        ("spec-droptail", |s| QdiscSpec::Droptail { limit: Limit::Packets(10) }.build(s), fifo(Limit::Packets(10))),
        // Seed 000. None of them reorders a flow: flows never change queue
        // while they have packets queued (Bloom filters move only when idle).
        ("drr", |s| spec(r#"{"kind": "drr", "limit": {"packets": 12}}"#, s), fifo(Limit::Packets(12))),
        ("drr-tail", |s| spec(r#"{"kind": "drr", "limit": {"packets": 12}, "drop_from": "tail"}"#, s), fifo(Limit::Packets(12))),
        ("drr-bytes", |s| spec(r#"{"kind": "drr", "limit": {"bytes": 6000}}"#, s), fifo(Limit::Bytes(6000))),
        ("drr-buckets", |s| spec(r#"{"kind": "drr", "limit": {"packets": 12}, "queues": 3}"#, s), fifo(Limit::Packets(12))),
        ("tdrr", |s| spec(r#"{"kind": "tdrr", "limit": {"packets": 12}}"#, s), fifo(Limit::Packets(12))),
        ("tdrr-arrival", |s| spec(r#"{"kind": "tdrr", "limit": {"bytes": 6000}, "estimator": "arrival", "queues": 4}"#, s), fifo(Limit::Bytes(6000))),
        ("qsdrr", |s| spec(r#"{"kind": "qsdrr", "limit": {"packets": 12}}"#, s), fifo(Limit::Packets(12))),
        ("qsdrr-bytes", |s| spec(r#"{"kind": "qsdrr", "limit": {"bytes": 5000}, "queues": 5, "mapping": "modulo"}"#, s), fifo(Limit::Bytes(5000))),
        ("qsdrr-bloom-db", |s| spec(BLOOM_QSDRR_DB, s), fifo(Limit::Packets(12))),
        ("qsdrr-bloom-pb", |s| spec(BLOOM_QSDRR_PB, s), fifo(Limit::Packets(12))),
        ("qsdrr-bloom-static", |s| spec(BLOOM_QSDRR_STATIC, s), fifo(Limit::Packets(12))),
        ("dtdrr", |s| spec(r#"{"kind": "dtdrr", "limit": {"packets": 12}}"#, s), fifo(Limit::Packets(12))),
        ("dtdrr-bytes", |s| spec(r#"{"kind": "dtdrr", "limit": {"bytes": 6000}, "alpha": 0.5, "queues": 4}"#, s), fifo(Limit::Bytes(6000))),
        ("dsdrr", |s| spec(r#"{"kind": "dsdrr", "limit": {"packets": 12}, "period": 1000000}"#, s), fifo(Limit::Packets(12))),
        ("dsdrr-bloom", |s| spec(BLOOM_DSDRR, s), fifo(Limit::Packets(12))),
        ("wdrr", |s| spec(r#"{"kind": "wdrr", "limit": {"packets": 12}, "weights": [{"flow": 1, "weight": 3}]}"#, s), fifo(Limit::Packets(12))),
        ("scfq", |s| spec(r#"{"kind": "scfq", "limit": {"bytes": 8000}, "weights": [{"flow": 2, "weight": 5}]}"#, s), fifo(Limit::Bytes(8000))),
        ("wf2q_plus", |s| spec(r#"{"kind": "wf2q_plus", "limit": {"packets": 12}, "weights": [{"flow": 2, "weight": 5}]}"#, s), fifo(Limit::Packets(12))),
    ]
}

// Bloom distribution with a 2 ms period and 0.5 ms window, so that the
// traces (up to about 0.8 s) cross many recounts and rebalancings.
const BLOOM_QSDRR_DB: &str = r#"{"kind": "qsdrr", "limit": {"packets": 12}, "queues": 3, "mapping": "bloom",
    "bloom": {"filters": 8, "bits": 16, "hashes": 3, "period": 2000000, "delta": 500000, "balancing": "dequeue"}}"#;
const BLOOM_QSDRR_PB: &str = r#"{"kind": "qsdrr", "limit": {"packets": 12}, "queues": 3, "mapping": "bloom",
    "bloom": {"filters": 8, "bits": 16, "hashes": 3, "period": 2000000, "delta": 500000, "balancing": "both"}}"#;
const BLOOM_QSDRR_STATIC: &str = r#"{"kind": "qsdrr", "limit": {"packets": 12}, "queues": 3, "mapping": "bloom",
    "bloom": {"filters": 8, "period": 2000000, "delta": 500000, "balancing": "static"}}"#;
const BLOOM_DSDRR: &str = r#"{"kind": "dsdrr", "limit": {"packets": 12}, "queues": 3, "mapping": "bloom", "period": 1000000,
    "bloom": {"filters": 6, "bits": 16, "hashes": 3, "period": 2000000, "delta": 500000, "balancing": "periodic"}}"#;

/// A discipline from its scenario parameters (validated first).
fn spec(json: &str, seed: u64) -> Box<dyn QueueDiscipline<TestPacket> + Send> {
    let spec: QdiscSpec = serde_json::from_str(json).expect("valid spec");
    spec.validate().expect("possible parameters");
    spec.build(seed)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..2_000_000, 0u64..12, prop_oneof![Just(40u32), Just(576), Just(1000), Just(1500)], 0u8..3)
            .prop_map(|(dt, flow, size, c)| Op::Arrive {
                dt,
                flow,
                size,
                class: [TrafficClass::Tcp, TrafficClass::UdpTagged, TrafficClass::UdpUntagged][c as usize],
            }),
        2 => (0u64..2_000_000).prop_map(|dt| Op::Depart { dt }),
    ]
}

/// Boxed disciplines go through the checker by a thin adapter.
struct Boxed(Box<dyn QueueDiscipline<TestPacket> + Send>);

impl QueueDiscipline<TestPacket> for Boxed {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn enqueue(&mut self, p: TestPacket, now: u64, v: &mut aqmlab_qdisc::Verdicts<TestPacket>) {
        self.0.enqueue(p, now, v)
    }
    fn dequeue(&mut self, now: u64, v: &mut aqmlab_qdisc::Verdicts<TestPacket>) -> Option<TestPacket> {
        self.0.dequeue(now, v)
    }
    fn backlog(&self) -> aqmlab_qdisc::Backlog {
        self.0.backlog()
    }
    fn next_wakeup(&self) -> Option<u64> {
        self.0.next_wakeup()
    }
    fn wakeup(&mut self, now: u64, v: &mut aqmlab_qdisc::Verdicts<TestPacket>) {
        self.0.wakeup(now, v)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn invariants_hold_for_every_discipline(ops in prop::collection::vec(op(), 1..400), seed in any::<u64>()) {
        for (name, make, promises) in disciplines() {
            let first = run_trace(Boxed(make(seed)), &ops, promises);
            let again = run_trace(Boxed(make(seed)), &ops, promises);
            prop_assert_eq!(&first, &again, "{} is not deterministic", name);
        }
    }
}
