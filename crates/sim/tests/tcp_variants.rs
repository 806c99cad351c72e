//! The TCP variants in whole runs: CUBIC's window against RFC 9438's cubic
//! and against Reno on a long path, flows that stop, and SACK and CUBIC
//! senders answered ahead as their ACKs' arrivals would answer them.

mod common;
use aqmlab_sim::engine::flow::Transport;
use aqmlab_sim::scenario::{FlowGroup, TcpProfile, TcpVariant};
use aqmlab_sim::{Results, Scenario};
use common::*;

fn cubic() -> TcpProfile {
    TcpProfile {
        variant: TcpVariant::Cubic,
        ..reno()
    }
}

/// One flow over a 20 Mb/s bottleneck (2,500 packets/s), 100 ms of
/// propagation round trip (a BDP of 250 packets) and a buffer of 60: after
/// a loss the window (0.7 x 310) is below the BDP, so the queue and the
/// RTT grow only near the plateau, where the cubic is flat.
fn long_single_flow(profile: TcpProfile, duration: u64, sample: u64) -> Scenario {
    Dumbbell {
        bottleneck_bps: 20_000_000,
        bottleneck_delay: 48 * MS,
        buffer: 60,
        access_bps: 1_000_000_000,
        access_delays: vec![MS],
        receiver_delay: MS,
        starts: vec![0],
        duration,
        warmup: 0,
        sample,
        seed: 1,
        profile,
    }
    .build()
}

/// RFC 9438 section 4.2, computed here from the window observed at each
/// loss: W(t) = C (t - K)^3 + W_max, K = cbrt((W_max - cwnd_epoch) / C),
/// with W_max the window at the loss, lowered to W (1 + beta) / 2 below
/// the last W_max (section 4.7), and cwnd_epoch = beta W (section 4.6).
/// Between losses, from the first epoch after the start-up, the traced
/// window stays within one packet of it.
#[test]
fn cubic_window_follows_the_rfc_9438_cubic_between_losses() {
    let (c, beta) = (0.4, 0.7);
    let r = run_with(long_single_flow(cubic(), 120 * S, MS), Accelerations::ALL);
    let trace = series(&r, "cwnd", "0");
    assert!(trace.len() > 100_000);
    // A loss: the window falls to about beta times what it was.
    let losses: Vec<usize> = (1..trace.len())
        .filter(|&i| trace[i].1 < trace[i - 1].1 * 0.8)
        .collect();
    assert!(losses.len() >= 10, "{} losses", losses.len());
    let mut w_max_last = f64::INFINITY;
    let (mut checked, mut worst) = (0, 0.0f64);
    for pair in losses.windows(2) {
        let (loss, next) = (pair[0], pair[1]);
        let w = trace[loss - 1].1;
        let w_max = if w < w_max_last {
            w * (1.0 + beta) / 2.0
        } else {
            w
        };
        w_max_last = w_max;
        let epoch_window = beta * w;
        assert!(
            (trace[loss].1 - epoch_window).abs() < 1e-6,
            "ssthresh = beta W"
        );
        if trace[loss].0 < 20.0 {
            continue; // the start-up's losses
        }
        // The epoch starts when the window first grows after recovery.
        let start = (loss..next).find(|&i| trace[i].1 > epoch_window).unwrap();
        let t0 = trace[start - 1].0;
        let k = ((w_max - epoch_window) / c).cbrt();
        for &(t, cwnd) in &trace[start..next] {
            let expected = c * (t - t0 - k).powi(3) + w_max;
            worst = worst.max((cwnd - expected).abs());
            assert!(
                (cwnd - expected).abs() < 1.0,
                "at {t:.3} s: cwnd {cwnd:.2}, W(t) {expected:.2} (W_max {w_max:.1}, K {k:.2} s)"
            );
            checked += 1;
        }
    }
    assert!(checked > 50_000, "{checked} samples checked");
    eprintln!("{checked} samples within {worst:.3} packets of W(t)");
}

/// RFC 9438 section 5: on a path with a large BDP (50 Mb/s, 200 ms: 1,250
/// packets) and a small buffer (125), Reno takes minutes to grow back to
/// the BDP after a loss, one packet a round trip; CUBIC a few seconds.
#[test]
fn cubic_outgrows_reno_on_a_long_fat_path() {
    let path = |profile| Dumbbell {
        bottleneck_bps: 50_000_000,
        bottleneck_delay: 98 * MS,
        buffer: 125,
        access_bps: 1_000_000_000,
        access_delays: vec![MS],
        receiver_delay: MS,
        starts: vec![0],
        duration: 300 * S,
        warmup: 30 * S,
        sample: S,
        seed: 1,
        profile,
    };
    let throughput = |profile| {
        let r = run_with(path(profile).build(), Accelerations::ALL);
        r.flows.f64("throughput_bps")[0]
    };
    let (reno, cubic) = (throughput(reno()), throughput(cubic()));
    eprintln!(
        "200 ms, 50 Mb/s: Reno {:.1} Mb/s, CUBIC {:.1} Mb/s (+{:.0}%)",
        reno / 1e6,
        cubic / 1e6,
        (cubic / reno - 1.0) * 100.0
    );
    assert!(cubic > 0.85 * 50e6, "CUBIC nearly fills the path: {cubic}");
    assert!(cubic > 1.25 * reno, "CUBIC {cubic} against Reno {reno}");
}

/// The flows of a group that stops at 3 s: a run that ends just before
/// then has sent as much; after it only retransmissions go out, and
/// everything sent is delivered, then nothing more.
#[test]
fn a_stopped_flow_sends_no_new_data_and_delivers_what_it_sent() {
    let stop = 3 * S + 7_001;
    let scenario = |duration, stop_ns| {
        let mut s = odd(4, reno());
        s.duration_ns = duration;
        s.warmup_ns = 0;
        if let FlowGroup::Tcp { stop_ns: s, .. } = &mut s.flows.groups[1] {
            *s = stop_ns;
        }
        s
    };
    let run = |s: Scenario| {
        s.check().unwrap();
        let mut sim = aqmlab_sim::Simulation::new(s);
        assert!(sim.run(|_| true));
        sim
    };
    let before = run(scenario(stop - 1, None));
    let after = run(scenario(20 * S, Some(stop)));
    let mss = 960;
    for f in 1..4 {
        let sender = |sim: &aqmlab_sim::Simulation| match &sim.flows[f].transport {
            Transport::Tcp(tcp) => {
                let s = &tcp.sender;
                let c = &s.counters;
                (
                    s.highest_sent(),
                    c.packets_sent,
                    c.retransmissions as u64,
                    s.is_stopped(),
                    s.outstanding(),
                )
            }
            Transport::Udp(_) => unreachable!(),
        };
        let (a, b) = (sender(&before), sender(&after));
        assert!(a.0 > 100, "flow {f} sent {} packets before the stop", a.0);
        assert_eq!(b.0, a.0, "flow {f}: no new data");
        assert!(a.4 > 0, "flow {f} had packets in flight at the stop");
        assert_eq!(
            b.1 - a.1,
            b.2 - a.2,
            "flow {f}: only retransmissions after the stop"
        );
        assert_eq!(
            after.flows[f].delivered,
            b.0 as u64 * mss,
            "flow {f}: all of it delivered"
        );
        assert!(b.3 && b.4 == 0);
    }
    // Flow 0's group does not stop.
    let flow0 = |sim: &aqmlab_sim::Simulation| sim.flows[0].delivered;
    assert!(flow0(&after) > 5 * flow0(&before));
}

/// `odd_dumbbell` with a bottleneck of 24,500 bytes that drops.
fn odd(flows: u64, profile: TcpProfile) -> Scenario {
    let mut s = odd_dumbbell(flows, 5, profile);
    edit_links(&mut s, |link| {
        if link.name == "bottleneck" {
            link.qdisc = aqmlab_qdisc::QdiscSpec::Droptail(aqmlab_qdisc::DropTailParams {
                limit: aqmlab_qdisc::Limit::Bytes(24_500),
            });
        }
    });
    s
}

/// SACK and CUBIC senders answered ahead (`accel/ahead.rs`)
/// give every figure to the bit as their ACKs' arrivals would; and a
/// group that stops is not answered ahead.
#[test]
fn sack_and_cubic_answered_ahead_are_what_arrivals_would_do() {
    let run = |s: Scenario, ahead: bool| -> Results {
        run_with(
            s,
            if ahead {
                Accelerations::ALL
            } else {
                WITHOUT_ANSWERS
            },
        )
    };
    for variant in [TcpVariant::Sack, TcpVariant::Cubic] {
        let s = || odd(12, TcpProfile { variant, ..reno() });
        let (ahead, reference) = (run(s(), true), run(s(), false));
        let fast: u64 = reference.flows.u64("fast_retransmits").iter().sum();
        assert!(fast > 50, "{variant:?}: {fast} recoveries");
        assert!(summary_u64(&ahead, "events") < summary_u64(&reference, "events"));
        assert_same_results(&ahead, &reference);
    }
    let mut stopping = odd(4, reno());
    if let FlowGroup::Tcp { stop_ns, .. } = &mut stopping.flows.groups[1] {
        *stop_ns = Some(7 * S);
    }
    stopping.check().unwrap();
    let (data, acks) = aqmlab_sim::Simulation::new(stopping).answering_ahead();
    assert_eq!((data, acks), (4, 0), "flow 0 traces its window, 1-3 stop");
}

/// `Scenario::check` refuses a stop no later than a start and CUBIC
/// parameters out of range, naming the field.
#[test]
fn check_refuses_an_early_stop_and_cubic_parameters_out_of_range() {
    let refused = |edit: &dyn Fn(&mut Scenario)| {
        let mut s = odd(3, cubic());
        edit(&mut s);
        let e = s.check().expect_err("the change must be refused");
        format!("{}: {}", e.field, e.message)
    };
    let stop_at = |t| {
        move |s: &mut Scenario| {
            if let FlowGroup::Tcp { stop_ns, .. } = &mut s.flows.groups[1] {
                *stop_ns = Some(t);
            }
        }
    };
    let mut s = odd(3, cubic());
    stop_at(2_000_007)(&mut s);
    s.check().unwrap();
    // Flow 2 starts at 2,000,006 ns.
    assert_eq!(
        refused(&stop_at(2_000_006)),
        "flows.groups[1].stop_ns: must be later than the start of flow 2 (2000006 ns)"
    );
    assert_eq!(
        refused(&|s| s.tcp_profiles[0].cubic.beta = 1.0),
        "tcp_profiles[0].cubic.beta: must be between 0 and 1"
    );
    assert_eq!(
        refused(&|s| s.tcp_profiles[0].cubic.c = f64::NAN),
        "tcp_profiles[0].cubic.c: must be positive"
    );
}
