//! Property tests shared by every discipline: conservation, the buffer limit,
//! every drop reported once, per-flow order where promised, determinism.
//! Each discipline adds one line to `disciplines()`.

use aqmlab_qdisc::testkit::{run_trace, Op, Promises, TestPacket};
use aqmlab_qdisc::{
    Blue, DropTail, DropTailParams, Limit, Mqfq, MqfqParams, MqfqReorder, QdiscSpec,
    QueueDiscipline, Sfb, SfbConfig, SfbParams, Sfed, SfedClass, SfedParams, SfedTraffic, Sfq,
    SfqAdmission, SfqHash, SharedBuffer, TrafficClass,
};
use proptest::prelude::*;

type Make = fn(u64) -> Box<dyn QueueDiscipline<TestPacket> + Send>;

/// Seed 001's SFB with a buffer of `limit` packets.
fn sfb(limit: u64) -> SfbConfig {
    SfbParams {
        limit: Limit::Packets(limit),
        ..SfbParams::default()
    }
    .config()
}

/// Every discipline under test: its name, a constructor from a seed, and
/// what it promises.
fn disciplines() -> Vec<(&'static str, Make, Promises)> {
    let fifo = |limit| Promises {
        per_flow_order: true,
        limit: Some(limit),
    };
    let any_order = |limit| Promises {
        per_flow_order: false,
        limit: Some(limit),
    };
    vec![
        (
            "droptail-packets",
            |_| Box::new(DropTail::new(Limit::Packets(20))),
            fifo(Limit::Packets(20)),
        ),
        (
            "droptail-bytes",
            |_| Box::new(DropTail::new(Limit::Bytes(20_000))),
            fifo(Limit::Bytes(20_000)),
        ),
        (
            "spec-droptail",
            |s| {
                QdiscSpec::Droptail(DropTailParams {
                    limit: Limit::Packets(10),
                })
                .build(s)
            },
            fifo(Limit::Packets(10)),
        ),
        // Seed 001: SFQ and MQFQ keep a flow in order only where promised
        // (SFQ: one queue per flow; MQFQ: with a reordering fix).
        (
            "sfq",
            |s| Box::new(Sfq::new(20, 4, SfqHash::Improved, SfqAdmission::Ns2, s)),
            fifo(Limit::Packets(20)),
        ),
        (
            "sfq-ns2-hash-prose",
            |s| Box::new(Sfq::new(20, 4, SfqHash::Ns2, SfqAdmission::Prose, s)),
            fifo(Limit::Packets(20)),
        ),
        (
            "mqfq",
            |s| {
                Box::new(Mqfq::new(
                    20,
                    4,
                    2,
                    1500,
                    MqfqReorder::None,
                    64,
                    SfqAdmission::Ns2,
                    s,
                ))
            },
            any_order(Limit::Packets(20)),
        ),
        (
            "mqfq-resequence",
            |s| {
                Box::new(Mqfq::new(
                    20,
                    4,
                    2,
                    1500,
                    MqfqReorder::Resequence,
                    64,
                    SfqAdmission::Prose,
                    s,
                ))
            },
            fifo(Limit::Packets(20)),
        ),
        (
            "mqfq-cells",
            |s| {
                Box::new(Mqfq::new(
                    40,
                    4,
                    2,
                    1500,
                    MqfqReorder::Cells,
                    100,
                    SfqAdmission::Ns2,
                    s,
                ))
            },
            fifo(Limit::Packets(40)),
        ),
        (
            "blue",
            |s| {
                Box::new(Blue::new(
                    Limit::Packets(15),
                    0.05,
                    0.01,
                    1_000_000,
                    None,
                    false,
                    s,
                ))
            },
            fifo(Limit::Packets(15)),
        ),
        (
            "blue-bytes-ecn",
            |s| {
                Box::new(Blue::new(
                    Limit::Bytes(9000),
                    0.1,
                    0.01,
                    0,
                    Some(3000),
                    true,
                    s,
                ))
            },
            fifo(Limit::Bytes(9000)),
        ),
        (
            "sfb",
            |s| {
                Box::new(Sfb::new(
                    SfbConfig {
                        freeze_time: 1_000_000,
                        increment: 0.05,
                        ..sfb(20)
                    },
                    s,
                ))
            },
            fifo(Limit::Packets(20)),
        ),
        (
            "sfb-rehash",
            |s| {
                Box::new(Sfb::new(
                    SfbConfig {
                        rehash_interval: 50_000_000,
                        warmup_time: 10_000_000,
                        increment: 0.2,
                        penalty_rate: 100.0,
                        ..sfb(20)
                    },
                    s,
                ))
            },
            fifo(Limit::Packets(20)),
        ),
        (
            "sfed",
            |s| Box::new(Sfed::new(SfedParams::paper(Limit::Packets(16), false), s)),
            fifo(Limit::Packets(16)),
        ),
        (
            "sfed-randomized",
            |s| Box::new(Sfed::new(SfedParams::paper(Limit::Packets(16), true), s)),
            fifo(Limit::Packets(16)),
        ),
        (
            "sfed-bytes",
            |s| Box::new(Sfed::new(SfedParams::paper(Limit::Bytes(12_000), false), s)),
            fifo(Limit::Bytes(12_000)),
        ),
        (
            "sfed-randomized-bytes-ecn",
            |s| {
                Box::new(Sfed::new(
                    SfedParams {
                        ecn: true,
                        ..SfedParams::paper(Limit::Bytes(12_000), true)
                    },
                    s,
                ))
            },
            fifo(Limit::Bytes(12_000)),
        ),
        (
            "sfed-tree",
            |s| {
                Box::new(Sfed::new(
                    SfedParams {
                        classes: sfed_tree(),
                        ..SfedParams::paper(Limit::Packets(20), false)
                    },
                    s,
                ))
            },
            fifo(Limit::Packets(20)),
        ),
        (
            "sfed-randomized-tree",
            |s| {
                Box::new(Sfed::new(
                    SfedParams {
                        classes: sfed_tree(),
                        ..SfedParams::paper(Limit::Packets(20), true)
                    },
                    s,
                ))
            },
            fifo(Limit::Packets(20)),
        ),
        (
            "mqfq-d3-spec",
            |s| {
                QdiscSpec::Mqfq(MqfqParams {
                    buffer: SharedBuffer {
                        limit: Limit::Packets(20),
                        admission: SfqAdmission::Ns2,
                    },
                    queues: 5,
                    hashes: 3,
                    quantum: 1500,
                    reorder: MqfqReorder::Resequence,
                    cell: 64,
                })
                .build(s)
            },
            fifo(Limit::Packets(20)),
        ),
        // Classic and modern AQMs, and seed 004's class-based disciplines:
        // each built from its spec (defaults, small buffers to exercise the
        // limits), each keeps every flow in order.
        (
            "red",
            |s| {
                aqm(
                    r#"{"kind": "red", "limit": {"packets": 20}, "w_q": 0.2, "max_p": 0.3}"#,
                    s,
                )
            },
            fifo(Limit::Packets(20)),
        ),
        (
            "red-bytes-gentle-ecn",
            |s| {
                aqm(
                    r#"{"kind": "red", "mode": "bytes", "limit": {"bytes": 20000}, "min_th": 3000, "max_th": 9000, "w_q": 0.1, "gentle": true, "ecn": true}"#,
                    s,
                )
            },
            fifo(Limit::Bytes(20_000)),
        ),
        (
            "ared",
            |s| {
                aqm(
                    r#"{"kind": "ared", "limit": {"packets": 25}, "interval": 2000000}"#,
                    s,
                )
            },
            fifo(Limit::Packets(25)),
        ),
        (
            "fred",
            |s| aqm(r#"{"kind": "fred", "limit": 20, "w_q": 0.1}"#, s),
            fifo(Limit::Packets(20)),
        ),
        (
            "choke",
            |s| {
                aqm(
                    r#"{"kind": "choke", "limit": 20, "min_th": 3, "max_th": 10, "w_q": 0.2}"#,
                    s,
                )
            },
            fifo(Limit::Packets(20)),
        ),
        (
            "codel",
            |s| {
                aqm(
                    r#"{"kind": "codel", "limit": {"packets": 30}, "target": 1000000, "interval": 5000000}"#,
                    s,
                )
            },
            fifo(Limit::Packets(30)),
        ),
        (
            "fq_codel",
            |s| {
                aqm(
                    r#"{"kind": "fq_codel", "flows": 8, "limit": 30, "memory_limit": 20000, "drop_batch_size": 4, "target": 1000000, "interval": 5000000}"#,
                    s,
                )
            },
            fifo(Limit::Packets(30)),
        ),
        (
            "pie",
            |s| {
                aqm(
                    r#"{"kind": "pie", "limit": {"packets": 30}, "target": 2000000, "t_update": 1000000, "max_burst": 3000000}"#,
                    s,
                )
            },
            fifo(Limit::Packets(30)),
        ),
        (
            "pie-timestamp-ecn",
            |s| {
                aqm(
                    r#"{"kind": "pie", "limit": {"bytes": 30000}, "target": 2000000, "t_update": 1000000, "max_burst": 0, "estimator": "timestamp", "ecn": true, "link_rate_bps": 10000000}"#,
                    s,
                )
            },
            fifo(Limit::Bytes(30_000)),
        ),
        (
            "red_linux",
            |s| aqm(r#"{"kind": "red_linux"}"#, s),
            fifo(Limit::Bytes(20_000)),
        ),
        (
            "cbt",
            |s| aqm(r#"{"kind": "cbt", "max_p": 0.2}"#, s),
            fifo(Limit::Bytes(20_000)),
        ),
        (
            "dcbt",
            |s| {
                aqm(
                    r#"{"kind": "dcbt", "flow_timeout": 3000000, "gc_interval": 2000000}"#,
                    s,
                )
            },
            fifo(Limit::Bytes(20_000)),
        ),
        // ChIPS moves multimedia ahead of other classes: a flow keeps its
        // order when all its packets are of one class, as real flows are.
        (
            "chips",
            |s| {
                Box::new(ClassByFlow(aqm(
                    r#"{"kind": "chips", "flow_timeout": 3000000, "gc_interval": 2000000, "chips_ratio": 1.0}"#,
                    s,
                )))
            },
            fifo(Limit::Bytes(20_000)),
        ),
        // Seed 000. None of them reorders a flow: flows never change queue
        // while they have packets queued (Bloom filters move only when idle).
        (
            "drr",
            |s| spec(r#"{"kind": "drr", "limit": {"packets": 12}}"#, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "drr-tail",
            |s| {
                spec(
                    r#"{"kind": "drr", "limit": {"packets": 12}, "drop_from": "tail"}"#,
                    s,
                )
            },
            fifo(Limit::Packets(12)),
        ),
        (
            "drr-bytes",
            |s| spec(r#"{"kind": "drr", "limit": {"bytes": 6000}}"#, s),
            fifo(Limit::Bytes(6000)),
        ),
        (
            "drr-buckets",
            |s| {
                spec(
                    r#"{"kind": "drr", "limit": {"packets": 12}, "queues": 3}"#,
                    s,
                )
            },
            fifo(Limit::Packets(12)),
        ),
        (
            "tdrr",
            |s| spec(r#"{"kind": "tdrr", "limit": {"packets": 12}}"#, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "tdrr-arrival",
            |s| {
                spec(
                    r#"{"kind": "tdrr", "limit": {"bytes": 6000}, "estimator": "arrival", "queues": 4}"#,
                    s,
                )
            },
            fifo(Limit::Bytes(6000)),
        ),
        (
            "qsdrr",
            |s| spec(r#"{"kind": "qsdrr", "limit": {"packets": 12}}"#, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "qsdrr-bytes",
            |s| {
                spec(
                    r#"{"kind": "qsdrr", "limit": {"bytes": 5000}, "queues": 5, "mapping": "modulo"}"#,
                    s,
                )
            },
            fifo(Limit::Bytes(5000)),
        ),
        (
            "qsdrr-bloom-db",
            |s| spec(BLOOM_QSDRR_DB, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "qsdrr-bloom-pb",
            |s| spec(BLOOM_QSDRR_PB, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "qsdrr-bloom-static",
            |s| spec(BLOOM_QSDRR_STATIC, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "dtdrr",
            |s| spec(r#"{"kind": "dtdrr", "limit": {"packets": 12}}"#, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "dtdrr-bytes",
            |s| {
                spec(
                    r#"{"kind": "dtdrr", "limit": {"bytes": 6000}, "alpha": 0.5, "queues": 4}"#,
                    s,
                )
            },
            fifo(Limit::Bytes(6000)),
        ),
        (
            "dsdrr",
            |s| {
                spec(
                    r#"{"kind": "dsdrr", "limit": {"packets": 12}, "period": 1000000}"#,
                    s,
                )
            },
            fifo(Limit::Packets(12)),
        ),
        (
            "dsdrr-bloom",
            |s| spec(BLOOM_DSDRR, s),
            fifo(Limit::Packets(12)),
        ),
        (
            "wdrr",
            |s| {
                spec(
                    r#"{"kind": "wdrr", "limit": {"packets": 12}, "weights": [{"flow": 1, "weight": 3}]}"#,
                    s,
                )
            },
            fifo(Limit::Packets(12)),
        ),
        (
            "scfq",
            |s| {
                spec(
                    r#"{"kind": "scfq", "limit": {"bytes": 8000}, "weights": [{"flow": 2, "weight": 5}]}"#,
                    s,
                )
            },
            fifo(Limit::Bytes(8000)),
        ),
        (
            "wf2q_plus",
            |s| {
                spec(
                    r#"{"kind": "wf2q_plus", "limit": {"packets": 12}, "weights": [{"flow": 2, "weight": 5}]}"#,
                    s,
                )
            },
            fifo(Limit::Packets(12)),
        ),
    ]
}

/// Weighted flows, an aggregate, a hierarchy and a per-flow class at once.
fn sfed_tree() -> Vec<SfedClass> {
    let class = |name: &str, parent: Option<&str>, weight: f64, flows: Vec<u64>| SfedClass {
        name: name.into(),
        parent: parent.map(Into::into),
        weight,
        flows,
        traffic: vec![],
        per_flow: false,
    };
    vec![
        class("gold", None, 3.0, vec![]),
        class("g0", Some("gold"), 2.0, vec![0, 1]),
        class("g1", Some("gold"), 1.0, vec![2]),
        class("heavy", None, 4.0, vec![3]),
        SfedClass {
            traffic: vec![SfedTraffic::UdpUntagged],
            per_flow: true,
            ..class("udp", None, 2.0, vec![])
        },
    ]
}

/// A discipline from its JSON spec, validated first.
fn aqm(json: &str, seed: u64) -> Box<dyn QueueDiscipline<TestPacket> + Send> {
    let spec: QdiscSpec = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
    spec.validate().unwrap_or_else(|e| panic!("{json}: {e}"));
    spec.build(seed)
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
    fn dequeue(
        &mut self,
        now: u64,
        v: &mut aqmlab_qdisc::Verdicts<TestPacket>,
    ) -> Option<TestPacket> {
        self.0.dequeue(now, v)
    }
    fn backlog(&self) -> aqmlab_qdisc::Backlog {
        self.0.backlog()
    }
    fn next_wakeup(&self) -> Option<u64> {
        self.0.next_wakeup()
    }
    fn has_clock(&self) -> bool {
        self.0.has_clock()
    }
    fn wakeup(&mut self, now: u64, v: &mut aqmlab_qdisc::Verdicts<TestPacket>) {
        self.0.wakeup(now, v)
    }
}

/// Gives every packet the class of its flow (flow mod 3).
struct ClassByFlow(Box<dyn QueueDiscipline<TestPacket> + Send>);

impl QueueDiscipline<TestPacket> for ClassByFlow {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn enqueue(&mut self, mut p: TestPacket, now: u64, v: &mut aqmlab_qdisc::Verdicts<TestPacket>) {
        p.class = [
            TrafficClass::Tcp,
            TrafficClass::UdpTagged,
            TrafficClass::UdpUntagged,
        ][(p.flow % 3) as usize];
        self.0.enqueue(p, now, v)
    }
    fn dequeue(
        &mut self,
        now: u64,
        v: &mut aqmlab_qdisc::Verdicts<TestPacket>,
    ) -> Option<TestPacket> {
        self.0.dequeue(now, v)
    }
    fn backlog(&self) -> aqmlab_qdisc::Backlog {
        self.0.backlog()
    }
    fn next_wakeup(&self) -> Option<u64> {
        self.0.next_wakeup()
    }
    fn has_clock(&self) -> bool {
        self.0.has_clock()
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
