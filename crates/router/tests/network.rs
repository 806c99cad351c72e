//! The emulated network without devices: packets offered through
//! `Network::arrive` in simulated time, as the router offers what it reads.

use aqmlab_router::config::Config;
use aqmlab_router::network::Network;
use aqmlab_router::packet::header_checksum;

const A: [u8; 4] = [10, 99, 0, 1];
const B: [u8; 4] = [10, 99, 0, 2];

/// Two hosts and one link each way: `rate_bps`, `delay_ns`, discipline `qdisc` (JSON).
fn network(rate_bps: u64, delay_ns: u64, qdisc: &str) -> Network {
    let text = format!(
        r#"{{"seed": 7, "sample_interval_ns": 0, "stop_after_ns": 0, "nodes": 2,
        "hosts": [{{"node": 0, "device": "a", "addr": "10.99.0.1"}}, {{"node": 1, "device": "b", "addr": "10.99.0.2"}}],
        "links": [{{"name": "ab", "from": 0, "to": 1, "rate_bps": {rate_bps}, "delay_ns": {delay_ns}, "qdisc": {qdisc}}},
                  {{"name": "ba", "from": 1, "to": 0, "rate_bps": {rate_bps}, "delay_ns": {delay_ns}, "qdisc": {qdisc}}}]}}"#
    );
    Network::new(&Config::from_json(&text).expect("config")).expect("network")
}

/// A UDP packet of `len` bytes (or TCP with `tcp`), TOS `tos`, valid checksum.
fn packet(sport: u16, len: u16, tos: u8, tcp: bool) -> Vec<u8> {
    let mut p = vec![0u8; len as usize];
    p[0] = 0x45;
    p[1] = tos;
    p[2..4].copy_from_slice(&len.to_be_bytes());
    p[8] = 64;
    p[9] = if tcp { 6 } else { 17 };
    p[12..16].copy_from_slice(&A);
    p[16..20].copy_from_slice(&B);
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&5201u16.to_be_bytes());
    let c = header_checksum(&p);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p
}

/// Offer `count` packets made by `make(i)` every `gap_ns` from host 0, then
/// run the network to `end_ns`; the packets delivered, with their arrival instants.
fn offer(
    net: &mut Network,
    count: u64,
    gap_ns: u64,
    end_ns: u64,
    make: impl Fn(u64) -> Vec<u8>,
) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..count {
        let now = i * gap_ns;
        net.advance(now, now, &mut |_, bytes| out.push(bytes.to_vec()));
        let mut buf = net.buffer();
        buf.extend_from_slice(&make(i));
        net.arrive(0, buf, now);
    }
    net.advance(end_ns, end_ns, &mut |_, bytes| out.push(bytes.to_vec()));
    out
}

#[test]
fn a_link_offered_twice_its_rate_delivers_its_rate_to_the_packet() {
    let rate = 10_000_000;
    let mut net = network(
        rate,
        5_000_000,
        r#"{"kind": "droptail", "limit": {"packets": 50}}"#,
    );
    // 1000-byte packets every 400 us: 20 Mb/s for one second.
    let delivered = offer(&mut net, 2500, 400_000, 1_000_000_000, |_| {
        packet(1, 1000, 0, false)
    });
    // In one second the link sends 1250 packets of 8000 bits; the first leaves after
    // 800 us and the wire adds 5 ms, so by t = 1 s the wire still holds 6 of them.
    let sent = (1_000_000_000u64 - 5_000_000) * rate / 8000 / 1_000_000_000;
    assert_eq!(delivered.len() as u64, sent);
    let f = &net.flows[0];
    assert_eq!(f.arrivals, 2500);
    assert_eq!(
        f.drops[0] + f.delivered + net.links[0].backlog().packets + net.links[0].in_flight() as u64,
        2500
    );
}

#[test]
fn a_droptail_buffer_of_b_packets_holds_b_packets() {
    let mut net = network(
        1_000_000,
        0,
        r#"{"kind": "droptail", "limit": {"packets": 17}}"#,
    );
    offer(&mut net, 100, 1_000, 0, |_| packet(1, 1500, 0, false));
    let link = &net.links[0];
    assert_eq!(link.backlog().packets, 17);
    assert_eq!(link.qdisc.stats(&link.counters).peak_packets, 17);
    assert_eq!(
        net.flows[0].drops[0],
        100 - 17 - 1,
        "one on the transmitter, 17 queued"
    );
}

#[test]
fn a_packet_alone_takes_its_serialization_and_the_delay_exactly() {
    let mut net = network(
        8_000_000,
        3_000_000,
        r#"{"kind": "droptail", "limit": {"packets": 5}}"#,
    );
    offer(&mut net, 1, 0, 10_000_000, |_| packet(1, 1000, 0, false));
    // 8000 bits at 8 Mb/s: 1 ms; then 3 ms on the wire.
    let transit = &net.flows[0].transit;
    assert_eq!((transit.count, transit.min_ns), (1, 4_000_000));
}

#[test]
fn red_with_ecn_marks_ect_packets_ce_with_a_valid_checksum() {
    let red = r#"{"kind": "red", "limit": {"packets": 200}, "min_th": 2, "max_th": 6, "max_p": 0.5, "w_q": 0.5, "ecn": true}"#;
    let mut net = network(1_000_000, 0, red);
    let ect0 = 0b10;
    let delivered = offer(&mut net, 400, 4_000_000, 3_000_000_000, |i| {
        packet(1, 1000, ect0, i % 2 == 0)
    });
    let ce: Vec<_> = delivered.iter().filter(|p| p[1] & 0b11 == 0b11).collect();
    assert!(!ce.is_empty(), "some packets were marked");
    assert!(
        ce.iter().all(|p| header_checksum(p) == 0),
        "marked packets keep a valid header checksum"
    );
    assert!(ce.iter().all(|p| p[1] >> 2 == 0), "the DSCP is untouched");
    let marked: u64 = net.flows.iter().map(|f| f.marked).sum();
    assert_eq!(marked, ce.len() as u64);
}

#[test]
fn packets_to_no_host_of_the_run_are_not_forwarded() {
    let mut net = network(
        1_000_000,
        0,
        r#"{"kind": "droptail", "limit": {"packets": 5}}"#,
    );
    let mut p = packet(1, 100, 0, false);
    p[16..20].copy_from_slice(&[192, 0, 2, 1]);
    let delivered = offer(&mut net, 1, 0, 1_000_000_000, |_| p.clone());
    assert!(delivered.is_empty());
    assert_eq!(net.unroutable, 1);
    let ipv6 = offer(&mut net, 1, 0, 1_000_000_000, |_| vec![0x60; 60]);
    assert!(ipv6.is_empty());
    assert_eq!(net.ignored, 1);
}

#[test]
fn a_catalogue_discipline_shares_the_link_between_flows() {
    let mut net = network(1_000_000, 0, r#"{"kind": "drr", "limit": {"packets": 40}}"#);
    // Flow 1 offers three times what flow 2 offers; together twice the link.
    let delivered = offer(&mut net, 4000, 2_000_000, 8_000_000_000, |i| {
        packet(if i % 4 == 0 { 2 } else { 1 }, 500, 0, false)
    });
    let of = |port: u16| {
        delivered
            .iter()
            .filter(|p| u16::from_be_bytes([p[20], p[21]]) == port)
            .count() as f64
    };
    let (one, two) = (of(1), of(2));
    assert!(
        (one / two - 1.0).abs() < 0.05,
        "DRR gives each flow half: {one} and {two}"
    );
}

#[test]
fn dcbt_counts_host_pairs_when_its_flow_key_says_so() {
    // One TCP flow and four UDP flows from A to B, each class at the link's
    // rate. Counting host pairs, DCBT sees one UDP flow beside one TCP flow
    // (a UDP threshold of 1/2 of the average); counting transport flows,
    // four UDP flows beside one (4/5): UDP gets more.
    let udp_delivered = |flow_key: &str| {
        let qdisc = format!(r#"{{"kind": "dcbt", "flow_key": "{flow_key}"}}"#);
        let mut net = network(1_000_000, 0, &qdisc);
        let delivered = offer(&mut net, 4000, 2_000_000, 8_000_000_000, |i| match i % 2 {
            0 => packet(1, 500, 0, true),
            _ => packet(2 + (i / 2 % 4) as u16, 500, 0, false),
        });
        delivered.iter().filter(|p| p[9] == 17).count() as f64
    };
    let (pairs, flows) = (udp_delivered("host_pair"), udp_delivered("flow"));
    assert!(
        pairs < 0.9 * flows,
        "host pairs: {pairs} UDP packets, transport flows: {flows}"
    );
}

#[test]
fn hosts_sharing_a_device_keep_their_own_links_and_addresses() {
    // Hosts 10.99.0.1 (node 0) and 10.99.0.3 (node 2) share device "s", as the
    // senders packed into one namespace do; 10.99.0.2 (node 1) is alone on "d".
    // Node 0 reaches node 1 in 1 ms, node 2 in 5 ms; both back in 1 ms.
    let link = |name: &str, from: u32, to: u32, delay: u64| {
        format!(
            r#"{{"name": "{name}", "from": {from}, "to": {to}, "rate_bps": 8000000, "delay_ns": {delay},
            "qdisc": {{"kind": "droptail", "limit": {{"packets": 10}}}}}}"#
        )
    };
    let text = format!(
        r#"{{"seed": 7, "sample_interval_ns": 0, "stop_after_ns": 0, "nodes": 3,
        "hosts": [{{"node": 0, "device": "s", "addr": "10.99.0.1"}}, {{"node": 1, "device": "d", "addr": "10.99.0.2"}},
                  {{"node": 2, "device": "s", "addr": "10.99.0.3"}}],
        "links": [{}, {}, {}, {}]}}"#,
        link("a", 0, 1, 1_000_000),
        link("a_back", 1, 0, 1_000_000),
        link("c", 2, 1, 5_000_000),
        link("c_back", 1, 2, 1_000_000),
    );
    let config = Config::from_json(&text).expect("config");
    assert_eq!(config.devices(), (vec!["s", "d"], vec![0, 1, 0]));
    let mut net = Network::new(&config).expect("network");
    let from = |src: [u8; 4], dst: [u8; 4]| {
        let mut p = packet(1, 1000, 0, false);
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p
    };
    let mut delivered = Vec::new();
    for (device, p) in [
        (0, from(A, B)),
        (0, from([10, 99, 0, 3], B)),
        (1, from(B, [10, 99, 0, 3])),
        // Not from a host of device "d": ignored.
        (1, from(A, B)),
    ] {
        let mut buf = net.buffer();
        buf.extend_from_slice(&p);
        net.arrive(device, buf, 0);
    }
    net.advance(10_000_000, 10_000_000, &mut |device, bytes| {
        delivered.push((device, bytes[19]))
    });
    // Each source's own link (1 ms serialization + its delay), each to its own
    // device; the packet to 10.99.0.3 to device "s", which carries it.
    let transit: Vec<u64> = net.flows.iter().map(|f| f.transit.min_ns).collect();
    assert_eq!(transit, vec![2_000_000, 6_000_000, 2_000_000]);
    assert_eq!(delivered, vec![(1, 2), (0, 3), (1, 2)]);
    assert_eq!(net.ignored, 1);
}

#[test]
fn two_hosts_with_one_address_are_refused_by_field() {
    let text = r#"{"seed": 7, "sample_interval_ns": 0, "stop_after_ns": 0, "nodes": 2,
        "hosts": [{"node": 0, "device": "a", "addr": "10.99.0.1"}, {"node": 1, "device": "a", "addr": "10.99.0.1"}],
        "links": []}"#;
    let e = Config::from_json(text).expect_err("refused");
    assert!(e.to_string().contains("hosts[1].addr"), "{e}");
}
