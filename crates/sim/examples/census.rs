//! The census of any scenario's run (`aqmlab_sim::census`): what the
//! simulator did, by kind, per data packet taken in at a receiver.
//! `cargo run --release -p aqmlab-sim --features census --example census --
//! RESOLVED_JSON`, the resolved scenario `aqmlab run` writes
//! (`results/<name>/resolved.json`).

use aqmlab_sim::{Scenario, Simulation};

/// Bad input: say what and why, and exit with status 2.
fn usage_error(message: std::fmt::Arguments) -> ! {
    eprintln!("census: {message}");
    std::process::exit(2)
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        usage_error(format_args!("usage: census RESOLVED_JSON"));
    };
    let json =
        std::fs::read_to_string(&path).unwrap_or_else(|e| usage_error(format_args!("{path}: {e}")));
    let scenario: Scenario = serde_json::from_str(&json)
        .unwrap_or_else(|e| usage_error(format_args!("{path}: not a resolved scenario: {e}")));
    if let Err(e) = scenario.check() {
        usage_error(format_args!("{path}: {}: {}", e.field, e.message));
    }
    let started = std::time::Instant::now();
    let mut sim = Simulation::new(scenario);
    sim.run(|_| true);
    let wall = started.elapsed().as_secs_f64();
    let data = sim.ledger.data_received;
    println!(
        "{path}: {data} data packets taken in, {} events, {wall:.2} s",
        sim.events_processed
    );
    print!(
        "{}",
        (sim.census).report(data, |l| sim.link_names.get(l).into())
    );
}
