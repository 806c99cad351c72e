//! Enqueue + dequeue cost per packet of every discipline, at 10, 1,000 and
//! 100,000 flows (issue 3, "Speed"). A benchmark, not a timed test: it
//! prints figures; run it with `cargo bench -p aqmlab-qdisc`.
//!
//! Two regimes:
//! - `steady`: the buffer holds about half its limit; each iteration
//!   enqueues one packet of a random flow and dequeues one (no drops).
//! - `overload`: the buffer is full; each iteration enqueues two packets
//!   and dequeues one, so every other arrival meets a full buffer (the
//!   push-out and discard paths).
//!
//! Adding a discipline is one line in `DISCIPLINES`: a name and its
//! scenario parameters as JSON (the buffer limit, `{"packets": LIMIT}`, is
//! filled in here unless the JSON gives one: disciplines whose `limit` is a
//! plain count of packets or bytes give theirs).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::testkit::TestPacket;
use aqmlab_qdisc::{QdiscSpec, QueueDiscipline, Verdicts};

/// Name, and the discipline's parameters (`limit` only where it is not a
/// `Limit`). RED-like thresholds are set around the steady backlog (half
/// the buffer), as a deployment would size them, so that the benchmark
/// measures the early-drop regime and not permanent forced drops.
const DISCIPLINES: &[(&str, &str)] = &[
    ("droptail", r#"{"kind": "droptail"}"#),
    ("drr", r#"{"kind": "drr"}"#),
    ("drr-buckets100", r#"{"kind": "drr", "queues": 100}"#),
    ("tdrr", r#"{"kind": "tdrr"}"#),
    ("qsdrr", r#"{"kind": "qsdrr"}"#),
    ("qsdrr-buckets100", r#"{"kind": "qsdrr", "queues": 100}"#),
    (
        "qsdrr-bloom100",
        r#"{"kind": "qsdrr", "queues": 100, "mapping": "bloom"}"#,
    ),
    ("dtdrr", r#"{"kind": "dtdrr"}"#),
    ("dsdrr", r#"{"kind": "dsdrr"}"#),
    ("wdrr", r#"{"kind": "wdrr"}"#),
    ("scfq", r#"{"kind": "scfq"}"#),
    ("wf2q_plus", r#"{"kind": "wf2q_plus"}"#),
    ("sfq", r#"{"kind": "sfq"}"#),
    ("mqfq", r#"{"kind": "mqfq"}"#),
    ("blue", r#"{"kind": "blue"}"#),
    ("sfb", r#"{"kind": "sfb"}"#),
    ("sfed", r#"{"kind": "sfed"}"#),
    ("sfed-randomized", r#"{"kind": "sfed", "randomized": true}"#),
    ("red", r#"{"kind": "red", "min_th": 2500, "max_th": 7500}"#),
    ("ared", r#"{"kind": "ared"}"#),
    (
        "fred",
        r#"{"kind": "fred", "limit": 10000, "min_th": 2500, "max_th": 7500}"#,
    ),
    (
        "choke",
        r#"{"kind": "choke", "limit": 10000, "min_th": 2500, "max_th": 7500}"#,
    ),
    ("codel", r#"{"kind": "codel"}"#),
    ("fq_codel", r#"{"kind": "fq_codel", "limit": 10000}"#),
    ("pie", r#"{"kind": "pie"}"#),
    // Linux RED and seed 004's class-based disciplines count their buffer
    // in bytes: LIMIT packets of PACKET bytes.
    ("red_linux", r#"{"kind": "red_linux", "limit": 15000000}"#),
    ("cbt", r#"{"kind": "cbt", "limit": 15000000}"#),
    ("dcbt", r#"{"kind": "dcbt", "limit": 15000000}"#),
    ("chips", r#"{"kind": "chips", "limit": 15000000}"#),
];

const FLOWS: &[u64] = &[10, 1_000, 100_000];
const LIMIT: u64 = 10_000;
const PACKET: u32 = 1500;
/// Length of the pre-drawn flow sequence (a power of two).
const SEQ: usize = 1 << 16;

fn spec(json: &str) -> QdiscSpec {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("valid JSON");
    if v.get("limit").is_none() {
        v["limit"] = serde_json::json!({ "packets": LIMIT });
    }
    let spec: QdiscSpec = serde_json::from_value(v).expect("valid discipline");
    spec.validate().expect("possible parameters");
    spec
}

struct Driver {
    q: Box<dyn QueueDiscipline<TestPacket> + Send>,
    verdicts: Verdicts<TestPacket>,
    flows: Vec<u64>,
    i: usize,
    now: u64,
    seq: u64,
}

impl Driver {
    fn new(json: &str, flows: u64) -> Self {
        let mut rng = Rng::new(flows);
        Self {
            q: spec(json).build(1),
            verdicts: Verdicts::new(),
            flows: (0..SEQ).map(|_| rng.below(flows)).collect(),
            i: 0,
            now: 0,
            seq: 0,
        }
    }

    #[inline]
    fn enqueue(&mut self) {
        let flow = self.flows[self.i & (SEQ - 1)];
        self.i += 1;
        self.seq += 1;
        self.now += 1_000;
        self.q.enqueue(
            TestPacket::new(flow, self.seq, PACKET),
            self.now,
            &mut self.verdicts,
        );
    }

    #[inline]
    fn dequeue(&mut self) {
        self.now += 1_000;
        criterion::black_box(self.q.dequeue(self.now, &mut self.verdicts));
        self.verdicts.drain(|d| {
            criterion::black_box(d);
        });
    }

    /// Fill to `target` packets and run one pass of the flow sequence so
    /// that every flow's queue exists and has its capacity.
    fn warm(&mut self, target: u64) {
        while self.q.backlog().packets < target && self.i < 4 * SEQ {
            self.enqueue();
        }
        for _ in 0..SEQ {
            self.enqueue();
            self.dequeue();
        }
        self.verdicts.drain(|_| ());
    }
}

fn steady(c: &mut Criterion) {
    let mut g = c.benchmark_group("steady");
    g.throughput(Throughput::Elements(1));
    for &(name, json) in DISCIPLINES {
        for &flows in FLOWS {
            let mut d = Driver::new(json, flows);
            d.warm(LIMIT / 2);
            g.bench_with_input(BenchmarkId::new(name, flows), &flows, |b, _| {
                b.iter(|| {
                    d.enqueue();
                    d.dequeue();
                })
            });
        }
    }
    g.finish();
}

fn overload(c: &mut Criterion) {
    let mut g = c.benchmark_group("overload");
    // Two packets offered per iteration.
    g.throughput(Throughput::Elements(2));
    for &(name, json) in DISCIPLINES {
        for &flows in FLOWS {
            let mut d = Driver::new(json, flows);
            d.warm(LIMIT);
            g.bench_with_input(BenchmarkId::new(name, flows), &flows, |b, _| {
                b.iter(|| {
                    d.enqueue();
                    d.enqueue();
                    d.dequeue();
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, steady, overload);
criterion_main!(benches);
