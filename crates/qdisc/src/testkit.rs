//! Test support shared by the unit tests and the property tests of every
//! discipline: a plain packet, and a checker that drives a discipline through
//! a sequence of arrivals and departures and verifies the invariants all
//! disciplines share (DESIGN.md, "Tests and benchmarks").

use std::collections::HashMap;

use crate::{
    Ecn, Limit, Packet, Qdisc, QdiscCounters, QueueDiscipline, Time, TrafficClass, Verdicts,
};

/// A packet for tests: a flow, a per-flow sequence number, a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestPacket {
    pub flow: u64,
    pub seq: u64,
    pub size: u32,
    pub class: TrafficClass,
    pub ecn: Ecn,
}

impl TestPacket {
    pub fn new(flow: u64, seq: u64, size: u32) -> Self {
        Self {
            flow,
            seq,
            size,
            class: TrafficClass::Tcp,
            ecn: Ecn::NotEct,
        }
    }
}

impl Packet for TestPacket {
    fn size(&self) -> u32 {
        self.size
    }
    fn flow_key(&self) -> u64 {
        self.flow
    }
    fn class(&self) -> TrafficClass {
        self.class
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn mark_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }
}

/// One step of a trace: time passes by `dt` nanoseconds, then a packet of
/// flow `flow` and `size` bytes arrives, or the link asks for a packet.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Arrive {
        dt: Time,
        flow: u64,
        size: u32,
        class: TrafficClass,
    },
    Depart {
        dt: Time,
    },
}

/// What happened to each packet, in order: the decision log compared for
/// determinism.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub departed: Vec<(u64, u64)>,
    pub dropped: Vec<(u64, u64, u8, bool)>,
    pub left: u64,
}

/// What a discipline promises, so the checker knows what to verify.
#[derive(Clone, Copy, Debug)]
pub struct Promises {
    /// Packets of one flow leave in the order they arrived.
    pub per_flow_order: bool,
    /// The backlog never exceeds this after any call.
    pub limit: Option<Limit>,
}

/// Drive the discipline through `ops`, then drain it, checking after every
/// call that arrivals = departures + drops + backlog, that the limit holds,
/// that no packet is reported twice or invented, and (if promised) that each
/// flow's departures keep arrival order. Returns the decision log.
pub fn run_trace<Q: QueueDiscipline<TestPacket> + Send + 'static>(
    discipline: Q,
    ops: &[Op],
    promises: Promises,
) -> Outcome {
    let mut q = Qdisc::new(Box::new(discipline));
    let mut counters = QdiscCounters::default();
    let mut verdicts = Verdicts::new();
    let mut now: Time = 0;
    let mut next_seq: HashMap<u64, u64> = HashMap::new();
    let mut last_departed: HashMap<u64, u64> = HashMap::new();
    let mut seen: std::collections::HashSet<(u64, u64)> = Default::default();
    let mut out = Outcome::default();

    let mut settle = |q: &Qdisc<TestPacket>,
                      counters: &QdiscCounters,
                      verdicts: &mut Verdicts<TestPacket>,
                      out: &mut Outcome| {
        verdicts.drain(|d| {
            assert!(
                seen.insert((d.packet.flow, d.packet.seq)),
                "packet reported twice: {:?}",
                d.packet
            );
            out.dropped
                .push((d.packet.flow, d.packet.seq, d.reason as u8, d.buffered));
        });
        q.check_conservation(counters)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            q.says_its_clock(),
            "{} asks to be woken but does not say it has a clock (has_clock)",
            q.name()
        );
        if let Some(limit) = promises.limit {
            assert!(
                !limit.exceeded_by(q.backlog()),
                "{}: backlog {:?} over {:?}",
                q.name(),
                q.backlog(),
                limit
            );
        }
    };

    let mut depart = |p: TestPacket, out: &mut Outcome| {
        if promises.per_flow_order {
            if let Some(&last) = last_departed.get(&p.flow) {
                assert!(
                    p.seq > last,
                    "flow {} reordered: {} after {}",
                    p.flow,
                    p.seq,
                    last
                );
            }
            last_departed.insert(p.flow, p.seq);
        }
        out.departed.push((p.flow, p.seq));
    };

    for op in ops {
        match *op {
            Op::Arrive {
                dt,
                flow,
                size,
                class,
            } => {
                now += dt;
                let seq = next_seq.entry(flow).or_insert(0);
                let mut p = TestPacket::new(flow, *seq, size);
                p.class = class;
                *seq += 1;
                q.enqueue(&mut counters, p, now, &mut verdicts);
            }
            Op::Depart { dt } => {
                now += dt;
                if let Some(p) = q.dequeue(&mut counters, now, &mut verdicts) {
                    depart(p, &mut out);
                }
            }
        }
        settle(&q, &counters, &mut verdicts, &mut out);
    }
    // Drain: a work-conserving discipline empties; one with a clock is given
    // its wake-up times.
    let mut guard = 0u64;
    while q.backlog().packets > 0 && guard < 10_000_000 {
        guard += 1;
        now = q.next_wakeup().map_or(now + 1_000, |t| t.max(now + 1));
        q.wakeup(&mut counters, now, &mut verdicts);
        if let Some(p) = q.dequeue(&mut counters, now, &mut verdicts) {
            depart(p, &mut out);
        }
        settle(&q, &counters, &mut verdicts, &mut out);
    }
    out.left = q.backlog().packets;
    assert_eq!(out.left, 0, "{} did not drain", q.name());
    let total_arrivals: u64 = next_seq.values().sum();
    assert_eq!(
        out.departed.len() + out.dropped.len(),
        total_arrivals as usize,
        "packets lost or invented"
    );
    out
}
