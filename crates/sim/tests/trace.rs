//! Traces (`scenario::Trace`) record and change nothing: a run with every
//! trace gives every figure of the run without, to the bit (the links it
//! records run on events, as the reference does); the per-flow series and
//! figures, taken at the receivers, are the same with every acceleration
//! on and off; and what the traces record adds up to the counters the
//! result tables keep on their own.

mod common;
use aqmlab_qdisc::{DropTailParams, Limit, QdiscSpec};
use aqmlab_sim::scenario::{PacketTrace, PcapTrace, Trace, TraceEvent};
use aqmlab_sim::{Column, Results, Scenario};
use common::*;

const FLOWS: u64 = 6;
/// Links of `scenario`: the bottleneck, then four a flow.
const BOTTLENECK: u32 = 0;
const fn access_s(i: u32) -> u32 {
    2 + 4 * i
}
const fn access_s_rev(i: u32) -> u32 {
    3 + 4 * i
}
const fn access_d(i: u32) -> u32 {
    4 + 4 * i
}

/// Six Reno flows, odd delays and rates, through a bottleneck that drops;
/// 8 s, the window from 2 s.
fn scenario(trace: Trace) -> Scenario {
    let mut s = odd_dumbbell(FLOWS, 3, reno());
    s.duration_ns = 8 * S;
    s.warmup_ns = 2 * S + 7;
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = QdiscSpec::Droptail(DropTailParams {
                limit: Limit::Bytes(24_500),
            });
        }
    });
    s.trace = trace;
    s
}

/// The per-flow figures, taken at the receivers.
fn per_flow() -> Trace {
    Trace {
        flow_series_ns: 100 * MS + 3,
        flow_stats: true,
        ..Trace::default()
    }
}

/// Every trace: every event of every packet, a capture of sender 0's
/// access link both ways, the per-flow figures.
fn everything() -> Trace {
    Trace {
        packets: Some(PacketTrace {
            links: None,
            flows: None,
            events: TraceEvent::ALL.to_vec(),
        }),
        pcap: Some(PcapTrace {
            links: vec![access_s(0), access_s_rev(0)],
            flows: None,
        }),
        ..per_flow()
    }
}

fn run(trace: Trace) -> Results {
    run_with(scenario(trace), Accelerations::ALL)
}

#[test]
fn traces_change_no_result_and_flow_figures_need_no_events() {
    let fast = run(per_flow());
    let traced = run(everything());
    let reference = run_with(scenario(per_flow()), Accelerations::NONE);
    // The fast run answered every flow's data packets ahead of their
    // arrival and reserved its FIFOs: it took far fewer events for the
    // same figures.
    let built = scenario(per_flow());
    built.check().unwrap();
    let sim = aqmlab_sim::Simulation::new(built);
    assert_eq!(sim.answering_ahead().0, FLOWS as usize);
    let events = |r: &Results| summary_u64(r, "events");
    assert!(events(&fast) * 3 < events(&reference) * 2);
    assert_eq!(events(&traced), events(&reference));
    assert_same_results(&fast, &reference);
    assert_same_results(&traced, &reference);
    // The per-flow figures are there.
    let throughput = series(&fast, "throughput_bps", "3");
    assert_eq!(throughput.len(), 80);
    assert!(throughput.iter().filter(|(_, bps)| *bps > 0.0).count() > 70);
    let jitter = fast.flows.get("jitter_s").unwrap();
    assert!(matches!(jitter, Column::OptF64(v) if v.iter().all(|j| j.is_some_and(|j| j > 0.0))));
}

#[test]
fn the_series_adds_up_to_the_bytes_delivered() {
    let r = run(per_flow());
    let delivered = r.flows.u64("unique_bytes_delivered");
    let window_s = |t: f64| {
        let k = (t * 1e9 / (100 * MS + 3) as f64 - 1e-6).floor();
        t - k * (100 * MS + 3) as f64 * 1e-9
    };
    for (f, &bytes) in delivered.iter().enumerate() {
        let rows = series(&r, "throughput_bps", &f.to_string());
        let sum: f64 = rows.iter().map(|&(t, bps)| bps * window_s(t) / 8.0).sum();
        assert!(
            (sum - bytes as f64).abs() < 1e-6 * bytes as f64,
            "flow {f}: {sum} of {bytes}"
        );
    }
}

#[test]
fn one_way_figures_are_the_paths() {
    let r = run(per_flow());
    let get = |name: &str| match r.flows.get(name) {
        Some(Column::OptF64(v)) => v.iter().map(|x| x.unwrap()).collect::<Vec<_>>(),
        other => panic!("{name}: {other:?}"),
    };
    let (least, mean, most) = (get("delay_min_s"), get("delay_mean_s"), get("delay_max_s"));
    for f in 0..FLOWS as usize {
        // At least the propagation delays and serialization one way (half
        // the base RTT, the paths being symmetric); at most that and a
        // full bottleneck buffer (24,500 B at 30 Mb/s, 6.5 ms) and the
        // packets' serialization.
        let one_way = r.flows.f64("base_rtt_s")[f] / 2.0;
        assert!(one_way < least[f] && least[f] <= mean[f] && mean[f] <= most[f]);
        assert!(most[f] < one_way + 0.0066 + 0.0004, "flow {f}: {}", most[f]);
    }
    // A DropTail dumbbell keeps every flow's packets in order.
    match r.flows.get("packets_reordered") {
        Some(Column::OptU64(v)) => assert!(v.iter().all(|&n| n == Some(0))),
        other => panic!("{other:?}"),
    }
}

/// The trace's rows of `event` at each link (by name), or of each flow.
fn count(r: &Results, event: &str, key: &str) -> std::collections::BTreeMap<String, u64> {
    let t = r.trace.as_ref().unwrap();
    let events = t.strings("event");
    let keys: Vec<String> = match t.get(key).unwrap() {
        Column::U64(v) => v.iter().map(u64::to_string).collect(),
        _ => t.strings(key).into_iter().map(|k| k.into_owned()).collect(),
    };
    let mut counts = std::collections::BTreeMap::new();
    for (e, k) in events.iter().zip(keys) {
        if e == event {
            *counts.entry(k).or_default() += 1;
        }
    }
    counts
}

#[test]
fn the_trace_adds_up_to_the_counters() {
    let r = run(everything());
    // Drops, by flow: the flows' losses.
    let drops = count(&r, "drop", "flow");
    let dropped = r.flows.u64("packets_dropped");
    assert!(dropped.iter().sum::<u64>() > 100);
    assert_eq!(
        dropped.iter().sum::<u64>(),
        summary_u64(&r, "packets_dropped")
    );
    for (f, &n) in dropped.iter().enumerate() {
        assert_eq!(
            drops.get(&f.to_string()).copied().unwrap_or(0),
            n,
            "flow {f}"
        );
    }
    // Each link's arrivals, departures and drops.
    let links = r.queues.strings("link");
    let q = |name: &str| r.queues.u64(name);
    for (event, column) in [
        ("enqueue", "arrivals"),
        ("dequeue", "departures"),
        ("drop", "drops"),
    ] {
        let counted = count(&r, event, "link");
        for (l, link) in links.iter().enumerate() {
            let n = counted.get(link.as_ref()).copied().unwrap_or(0);
            assert_eq!(n, q(column)[l], "{event} at {link}");
        }
    }
    // Deliveries: every packet received.
    let delivered: u64 = count(&r, "deliver", "flow").values().sum();
    assert_eq!(delivered, summary_u64(&r, "packets_received"));
    // A drop names its reason; nothing else does.
    let t = r.trace.as_ref().unwrap();
    for (event, reason) in t.strings("event").iter().zip(t.strings("reason")) {
        assert_eq!(event == "drop", reason == "overflow", "{event}: {reason:?}");
    }
}

/// The frames of a pcap file: (time in ns, original length, the headers).
fn frames(file: &[u8]) -> Vec<(u64, u32, &[u8])> {
    let le = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
    assert_eq!(le(0), 0xa1b2_3c4d, "nanosecond pcap");
    let mut at = 24;
    let mut out = Vec::new();
    while at < file.len() {
        let time = le(at) as u64 * S + le(at + 4) as u64;
        let captured = le(at + 8) as usize;
        out.push((time, le(at + 12), &file[at + 16..at + 16 + captured]));
        at += 16 + captured;
    }
    out
}

#[test]
fn the_capture_holds_what_its_links_send() {
    let r = run(everything());
    let t = r.trace.as_ref().unwrap();
    let (events, links, times) = (t.strings("event"), t.strings("link"), t.u64("time_ns"));
    let (seqs, sizes, kinds) = (t.u64("seq"), t.u64("size"), t.strings("kind"));
    let sent: Vec<usize> = (0..events.len())
        .filter(|&i| {
            events[i] == "dequeue" && (links[i] == "access_s0" || links[i] == "access_s0_rev")
        })
        .collect();
    let frames = frames(r.pcap.as_ref().unwrap());
    assert!(frames.len() > 1_000);
    assert_eq!(frames.len(), sent.len());
    for (&(time, length, headers), &i) in frames.iter().zip(&sent) {
        assert_eq!((time, length as u64), (times[i], sizes[i]));
        let word = |at: usize| u32::from_be_bytes(headers[at..at + 4].try_into().unwrap());
        // Sequence numbers in bytes: 960 a packet (1,000 less 40 of headers).
        let (seq, ack) = (word(24), word(28));
        match kinds[i].as_ref() {
            "data" => assert_eq!(seq as u64, 1 + 960 * seqs[i]),
            "ack" => assert_eq!(ack as u64, 1 + 960 * seqs[i]),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn traces_are_repeatable_to_the_byte() {
    let (a, b) = (run(everything()), run(everything()));
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.pcap, b.pcap);
}

/// The trace's rows, each cell printed.
fn rows(r: &Results) -> Vec<Vec<String>> {
    let t = r.trace.as_ref().unwrap();
    let n = t.columns[0].1.len();
    (0..n)
        .map(|i| t.columns.iter().map(|(_, c)| cell(c, i)).collect())
        .collect()
}

#[test]
fn a_filter_keeps_the_packets_it_names() {
    let trace = Trace {
        packets: Some(PacketTrace {
            links: Some(vec![BOTTLENECK, access_d(2)]),
            flows: Some(vec![2, 4]),
            events: vec![TraceEvent::Drop, TraceEvent::Deliver],
        }),
        ..Trace::default()
    };
    let filtered = rows(&run(trace));
    let everything = run(everything());
    let columns: Vec<&str> = (everything.trace.as_ref().unwrap().columns.iter())
        .map(|(name, _)| name.as_str())
        .collect();
    let at = |name: &str| columns.iter().position(|&c| c == name).unwrap();
    let (event, link, flow) = (at("event"), at("link"), at("flow"));
    let kept: Vec<Vec<String>> = (rows(&everything).into_iter())
        .filter(|r| ["drop", "deliver"].contains(&r[event].as_str()))
        .filter(|r| ["bottleneck", "access_d2"].contains(&r[link].as_str()))
        .filter(|r| ["2", "4"].contains(&r[flow].as_str()))
        .collect();
    // Flow 2's packets delivered over its last link, flows 2 and 4's drops
    // at the bottleneck: those rows of the whole trace, in its order.
    assert_eq!(filtered, kept);
    let count = |e: &str, l: &str| {
        kept.iter()
            .filter(|r| r[event] == e && r[link] == l)
            .count()
    };
    assert!(count("deliver", "access_d2") > 1_000);
    assert!(count("drop", "bottleneck") > 10);
}

/// The links a trace records run on events, the rest as fast as they may:
/// the trace, the capture and every figure are the reference's.
#[test]
fn a_trace_is_the_same_from_either_engine() {
    let trace = || {
        let mut trace = everything();
        trace.packets.as_mut().unwrap().links = Some(vec![BOTTLENECK, access_d(1)]);
        trace
    };
    let fast = run_with(scenario(trace()), Accelerations::ALL);
    let reference = run_with(scenario(trace()), Accelerations::NONE);
    assert!(summary_u64(&fast, "events") * 3 < summary_u64(&reference, "events") * 2);
    assert_same_results(&fast, &reference);
    assert_eq!(rows(&fast), rows(&reference));
    assert!(rows(&fast).len() > 10_000);
    assert_eq!(fast.pcap, reference.pcap);
}

#[test]
fn bad_trace_requests_name_the_field() {
    let packets =
        |links: Option<Vec<u32>>, flows: Option<Vec<u32>>, events: Vec<TraceEvent>| Trace {
            packets: Some(PacketTrace {
                links,
                flows,
                events,
            }),
            ..Trace::default()
        };
    let pcap = |links: Vec<u32>, flows: Option<Vec<u32>>| Trace {
        pcap: Some(PcapTrace { links, flows }),
        ..Trace::default()
    };
    let all = TraceEvent::ALL.to_vec();
    let cases = [
        (
            packets(Some(vec![1, 99]), None, all.clone()),
            "trace.packets.links[1]",
            "no link 99",
        ),
        (
            packets(None, Some(vec![6]), all.clone()),
            "trace.packets.flows[0]",
            "no flow 6",
        ),
        (
            packets(None, None, vec![]),
            "trace.packets.events",
            "at least one event",
        ),
        (
            packets(Some(vec![]), None, all.clone()),
            "trace.packets.links",
            "at least one link",
        ),
        (
            pcap(vec![access_s(0)], Some(vec![1])),
            "trace.pcap.links[0]",
            "crosses link access_s0",
        ),
        (
            packets(Some(vec![BOTTLENECK]), None, vec![TraceEvent::Deliver]),
            "trace.packets.links[0]",
            "arrives over link bottleneck",
        ),
        (
            pcap(vec![access_s(1)], Some(vec![1, 0])),
            "trace.pcap.flows[1]",
            "no packet of flow 0 crosses",
        ),
    ];
    for (trace, field, message) in cases {
        let e = scenario(trace).check().unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains(message), "{e}");
    }
}
