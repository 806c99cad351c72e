//! The foundation benchmark, straight on the core: a 1 Gb/s DropTail
//! dumbbell with N long-lived Reno flows. `cargo run --release --example
//! dumbbell_bench -- [flows] [seconds] [discipline]`, the discipline of the
//! bottleneck as JSON (default DropTail), e.g. `'{"kind": "qsdrr", "limit":
//! {"packets": 290}}'` for `bench-dumbbell-1000-qsdrr`. `bench/run.py` runs
//! the same case through the Python API and sets it beside ns-3.
#[path = "../tests/common.rs"]
mod common;
use common::*;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting the bytes held and their peak: heap
/// figures to the byte, where RSS moves by pages and by what the allocator
/// keeps back.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let held = HELD.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(held, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as resized in place (what the allocator does for large
        // blocks), not as a new block beside the old one.
        if new_size >= layout.size() {
            let held = HELD.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
            PEAK.fetch_max(held, Relaxed);
        } else {
            HELD.fetch_sub(layout.size() - new_size, Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

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

/// Bad input: say which argument and why, and exit with status 2.
fn usage_error(message: std::fmt::Arguments) -> ! {
    eprintln!("dumbbell_bench: {message}");
    std::process::exit(2)
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let whole = |i: usize, name: &str, default: u64| match raw.get(i) {
        None => default,
        Some(a) => a
            .parse()
            .unwrap_or_else(|_| usage_error(format_args!("{name}: not a whole number: {a:?}"))),
    };
    let n = whole(0, "flows", 1000);
    let secs = whole(1, "seconds", 20);
    let mut scenario = Dumbbell {
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
    if let Some(json) = raw.get(2) {
        // The bottleneck (link 0) alone gets the discipline.
        let links = &mut scenario.links;
        links
            .qdiscs
            .push(serde_json::from_str(json).unwrap_or_else(|e| {
                usage_error(format_args!("discipline: not a discipline as JSON: {e}"))
            }));
        links.qdisc[0] = links.qdiscs.len() as u32 - 1;
    }
    let rss_before = peak_rss_kb();
    let heap_before = HELD.load(Relaxed);
    PEAK.store(heap_before, Relaxed);
    // The steps of `aqmlab_sim::run`, with the heap held after each.
    if let Err(e) = scenario.check() {
        usage_error(format_args!("{}: {}", e.field, e.message));
    }
    let started = std::time::Instant::now();
    let mut sim = aqmlab_sim::Simulation::new(scenario);
    let heap_built = HELD.load(Relaxed);
    let peak_building = PEAK.swap(heap_built, Relaxed);
    sim.run(|_| true);
    let peak_running = PEAK.swap(HELD.load(Relaxed), Relaxed);
    // Built with `--features census`: the work done, by kind, per data
    // packet taken in at its receiver.
    #[cfg(feature = "census")]
    let census = (sim.census).report(sim.ledger.data_received, |l| sim.link_names.get(l).into());
    let r = aqmlab_sim::Results::collect(sim, started.elapsed().as_secs_f64());
    let peak_results = PEAK.load(Relaxed);
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
        "heap (bytes): scenario {heap_before}, simulation built {heap_built} \
         (peak while building {peak_building}), peak while running {peak_running}, \
         peak while building the results {peak_results}"
    );
    println!(
        "peak packets in flight {:?}",
        r.summary_value("peak_packets_in_flight")
    );
    #[cfg(feature = "census")]
    print!("{census}");
}
