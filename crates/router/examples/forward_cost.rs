//! The router's cost per packet for each discipline of the catalogue, without
//! devices: 1500-byte UDP packets of 64 flows offered at twice the rate of a
//! 1 Gb/s link with a 1 ms delay, through `Network` exactly as the router runs
//! it (classification, routing, the discipline, the exact-rate transmitter,
//! the delay line, delivery), in simulated time as fast as it goes. Prints the
//! CPU time per offered packet and the peak resident memory.
//!
//!     cargo run --release -p aqmlab-router --example forward_cost [PACKETS [KIND]]

use aqmlab_qdisc::catalogue;
use aqmlab_router::config::Config;
use aqmlab_router::measure::Usage;
use aqmlab_router::network::Network;

const RATE_BPS: u64 = 1_000_000_000;
const SIZE: u16 = 1500;
const FLOWS: u16 = 64;

fn packet(flow: u16) -> Vec<u8> {
    let mut p = vec![0u8; SIZE as usize];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&SIZE.to_be_bytes());
    p[9] = 17;
    p[12..16].copy_from_slice(&[10, 99, 0, 1]);
    p[16..20].copy_from_slice(&[10, 99, 0, 2]);
    p[20..22].copy_from_slice(&(10_000 + flow).to_be_bytes());
    p[22..24].copy_from_slice(&5201u16.to_be_bytes());
    p
}

/// The network with discipline `kind`, given a buffer of 1000 packets where it
/// takes one; `None` when its defaults need more (a parameter without a default).
fn network(kind: &str) -> Option<Network> {
    ["{\"packets\": 1000}", ""].iter().find_map(|limit| {
        let qdisc = match *limit {
            "" => format!(r#"{{"kind": "{kind}"}}"#),
            l => format!(r#"{{"kind": "{kind}", "limit": {l}}}"#),
        };
        Some(Network::new(&Config::from_json(&config(&qdisc)).ok()?).expect("network"))
    })
}

fn config(qdisc: &str) -> String {
    format!(
        r#"{{"seed": 1, "sample_interval_ns": 0, "stop_after_ns": 0, "nodes": 2,
        "hosts": [{{"node": 0, "device": "a", "addr": "10.99.0.1"}}, {{"node": 1, "device": "b", "addr": "10.99.0.2"}}],
        "links": [{{"name": "l", "from": 0, "to": 1, "rate_bps": {RATE_BPS}, "delay_ns": 1000000, "qdisc": {qdisc}}},
                  {{"name": "r", "from": 1, "to": 0, "rate_bps": {RATE_BPS}, "delay_ns": 1000000, "qdisc": {{"kind": "droptail", "limit": {{"packets": 10}}}}}}]}}"#
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let packets: u64 = args
        .get(1)
        .map_or(1_000_000, |a| a.parse().expect("PACKETS"));
    if let Some(kind) = args.get(2) {
        return measure(kind, packets);
    }
    // Each discipline in a process of its own, so that its peak memory is its own.
    println!(
        "{:<10} {:>10} {:>10} {:>8}",
        "qdisc", "ns/packet", "delivered", "rss_kB"
    );
    for entry in catalogue() {
        let me = std::env::current_exe().expect("this program");
        let out = std::process::Command::new(me)
            .args([packets.to_string(), entry.kind.to_string()])
            .output()
            .expect("run");
        print!("{}", String::from_utf8_lossy(&out.stdout));
    }
}

fn measure(kind: &str, packets: u64) {
    let gap = SIZE as u64 * 8 * 1_000_000_000 / (2 * RATE_BPS);
    let Some(mut net) = network(kind) else {
        println!("{kind:<10} (needs parameters without defaults)");
        return;
    };
    let before = Usage::now();
    let mut delivered = 0u64;
    for i in 0..packets {
        let now = i * gap;
        let mut buf = net.buffer();
        buf.clear();
        buf.extend_from_slice(&packet((i % FLOWS as u64) as u16));
        net.arrive(0, buf, now);
        net.advance(now, now, &mut |_, _| delivered += 1);
    }
    let after = Usage::now();
    let cpu = (after.user_s + after.system_s) - (before.user_s + before.system_s);
    println!(
        "{kind:<10} {:>10.0} {delivered:>10} {:>8}",
        cpu * 1e9 / packets as f64,
        after.max_rss_kb
    );
}
