//! The foundation benchmark, straight on the core: a 1 Gb/s DropTail
//! dumbbell with N long-lived Reno flows. `cargo run --release --example
//! dumbbell_bench -- [flows] [seconds]`. `bench/run.py` runs the same case
//! through the Python API and sets it beside ns-3.
#[path = "../tests/common.rs"]
mod common;
use common::*;

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers"))
        .collect();
    let n = args.first().copied().unwrap_or(1000);
    let secs = args.get(1).copied().unwrap_or(20);
    let scenario = Dumbbell {
        bottleneck_bps: 1_000_000_000,
        bottleneck_delay: 10 * MS,
        buffer: 290,
        access_bps: 10_000_000_000,
        access_delays: (0..n).map(|i| MS + 49 * MS * i / (n - 1).max(1)).collect(),
        receiver_delay: MS,
        starts: (0..n).map(|i| 2 * S * i / n).collect(),
        duration: secs * S,
        warmup: secs * S / 4,
        sample: 100 * MS,
        seed: 1,
        profile: reno(),
    }
    .build();
    let rss_before = peak_rss_kb();
    let r = aqmlab_sim::run(scenario, |_| true).unwrap();
    let get = |k| r.summary_value(k).cloned().unwrap();
    let (
        aqmlab_sim::Scalar::F64(wall),
        aqmlab_sim::Scalar::U64(data),
        aqmlab_sim::Scalar::U64(events),
    ) = (
        get("wall_time_s"),
        get("data_packets_delivered"),
        get("events"),
    )
    else {
        unreachable!()
    };
    println!("flows {n}, simulated {secs} s, wall {wall:.2} s");
    println!(
        "data packets delivered {data}, {:.2} M/s",
        data as f64 / wall / 1e6
    );
    println!("events {events}, {:.1} M/s", events as f64 / wall / 1e6);
    println!(
        "peak RSS {} kB (before run {} kB)",
        peak_rss_kb(),
        rss_before
    );
    println!(
        "peak packets in flight {:?}",
        r.summary_value("peak_packets_in_flight")
    );
}
