//! The emulated network: links between nodes, hosts at some nodes, routes
//! by destination address, and what is measured. No I/O: packets come in
//! from a device through [`Network::arrive`] and go out to one through the
//! `deliver` callback of [`Network::advance`], so the whole of it is tested
//! without devices. A device carries one host, or several (a namespace that
//! holds several hosts' addresses): a packet's source address says which.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use aqmlab_qdisc::{Dropped, Ecn, Packet, SpecError, Time};
use serde_json::{json, Value};

use crate::config::Config;
use crate::kernel::KernelPassage;
use crate::link::{Due, Link};
use crate::measure::{FlowStats, Histogram};
use crate::packet::{FlowKeyMode, Headers, RealPacket};

/// No route.
const NONE: u32 = u32::MAX;

pub struct Network {
    pub links: Vec<Link>,
    /// The links' next events, earliest first (ties: the lower link index,
    /// as everywhere here): an entry stands while its link's next event is
    /// at its time; any other is dropped when it comes to the top. A link's
    /// next event changes only when the link is worked on, and each time it
    /// is the link's new next event goes in, so the top is always the
    /// network's next event: a run of hundreds of links costs a heap
    /// operation per event, not a pass over every link.
    calendar: BinaryHeap<Reverse<(Time, u32)>>,
    /// `routes[node * hosts + host]`: the link a packet for `host` takes from `node`.
    routes: Vec<u32>,
    host_nodes: Vec<u32>,
    /// The device each host's packets come from and go to.
    device_of_host: Vec<u32>,
    host_of_node: HashMap<u32, u32>,
    host_of_addr: HashMap<u32, u32>,
    tag_tos: Option<u8>,
    flow_key: FlowKeyMode,
    flow_of: HashMap<crate::packet::FiveTuple, u32>,
    pub flows: Vec<FlowStats>,
    /// Read from a device but not forwarded: not IPv4, or from an address
    /// that is no host of that device.
    pub ignored: u64,
    /// Read from a device but to no host of the run (or to the sender itself).
    pub unroutable: u64,
    /// How late each packet reached its host, against its link's schedule.
    pub lateness: Histogram,
    /// Packets handed to their host before their time (run ahead by at most
    /// the router's batching horizon).
    pub early: u64,
    /// The latest event run so far.
    time: Time,
    sample_interval: Time,
    next_sample: Time,
    pub sample_times: Vec<Time>,
    /// Per link at each sample: backlog in packets and bytes; bytes sent,
    /// arrivals and drops so far.
    pub link_samples: Vec<Vec<[u64; 5]>>,
    /// Packet buffers to reuse: none is allocated in the steady state.
    pool: Vec<Vec<u8>>,
    /// Packets on their way through the kernel's queues (kernel links).
    pub kernel: KernelPassage,
    /// The link of each kernel port.
    kernel_links: Vec<u32>,
}

impl Network {
    pub fn new(config: &Config) -> Result<Self, SpecError> {
        let links = config
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let seed = config.seed ^ (i as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03);
                let mut link = Link::new(
                    l.name.clone(),
                    (l.from, l.to),
                    l.rate_bps,
                    l.delay_ns,
                    l.loss,
                    &l.spec()?,
                    seed,
                );
                link.monitor = l.monitor;
                link.kernel_port = l.kernel;
                Ok(link)
            })
            .collect::<Result<Vec<_>, SpecError>>()?;
        let host_nodes: Vec<u32> = config.hosts.iter().map(|h| h.node).collect();
        let (_, device_of_host) = config.devices();
        let routes = shortest_routes(config.nodes as usize, &links, &host_nodes);
        Ok(Self {
            link_samples: vec![Vec::new(); links.len()],
            links,
            calendar: BinaryHeap::new(),
            routes,
            host_of_node: host_nodes
                .iter()
                .enumerate()
                .map(|(h, &n)| (n, h as u32))
                .collect(),
            host_of_addr: config
                .hosts
                .iter()
                .enumerate()
                .map(|(h, c)| (u32::from(c.addr), h as u32))
                .collect(),
            host_nodes,
            device_of_host,
            tag_tos: config.tag_tos,
            flow_key: config.flow_key,
            flow_of: HashMap::new(),
            flows: Vec::new(),
            ignored: 0,
            unroutable: 0,
            lateness: Histogram::default(),
            early: 0,
            time: 0,
            sample_interval: config.sample_interval_ns,
            next_sample: 0,
            sample_times: Vec::new(),
            pool: Vec::new(),
            kernel: KernelPassage::default(),
            kernel_links: kernel_links(config),
        })
    }

    /// A buffer for a packet read from a device.
    pub fn buffer(&mut self) -> Vec<u8> {
        self.pool.pop().unwrap_or_else(|| Vec::with_capacity(2048))
    }

    /// A buffer read from device `device` at `now`: routed from its source
    /// host onto its first link, or returned to the pool.
    pub fn arrive(&mut self, device: u32, data: Vec<u8>, now: Time) {
        // Events up to `self.time` may have been run ahead of the clock (the
        // router's batching): the arrival comes after them.
        let now = now.max(self.time);
        let Ok(headers) = Headers::parse(&data) else {
            self.ignored += 1;
            return self.recycle(data);
        };
        let host = match self.host_of_addr.get(&headers.tuple.src) {
            Some(&h) if self.device_of_host[h as usize] == device => h,
            _ => {
                self.ignored += 1;
                return self.recycle(data);
            }
        };
        let Some(&dst_host) = self.host_of_addr.get(&headers.tuple.dst) else {
            self.unroutable += 1;
            return self.recycle(data);
        };
        let link = self.route(self.host_nodes[host as usize], dst_host);
        if link == NONE || dst_host == host {
            self.unroutable += 1;
            return self.recycle(data);
        }
        let flow = self.flow(&headers);
        let stats = &mut self.flows[flow as usize];
        stats.arrivals += 1;
        stats.arrival_bytes += data.len() as u64;
        let packet = self.packet(&headers, flow, dst_host, now, now, data);
        self.enqueue(link, packet, now);
    }

    /// The router's packet of `data` (its `headers` parsed), in the router
    /// since `entered` and handed to a queue or the wire at `now`.
    fn packet(
        &self,
        headers: &Headers,
        flow: u32,
        dst_host: u32,
        entered: Time,
        now: Time,
        data: Vec<u8>,
    ) -> RealPacket {
        RealPacket {
            key: headers.tuple.key(self.flow_key),
            class: headers.class(self.tag_tos),
            flow,
            dst_host,
            entered,
            enqueued: now,
            data,
        }
    }

    /// A packet the kernel released from port `port` at `now`: onto its
    /// link's wire.
    pub fn from_kernel(&mut self, port: u32, data: Vec<u8>, now: Time) {
        let now = now.max(self.time);
        let Ok(headers) = Headers::parse(&data) else {
            self.ignored += 1;
            return self.recycle(data);
        };
        let Some(&dst_host) = self.host_of_addr.get(&headers.tuple.dst) else {
            self.unroutable += 1;
            return self.recycle(data);
        };
        let held = self.kernel.release(headers.tuple, &data);
        let flow = self.flow(&headers);
        let entered = held.map_or(now, |h| h.entered);
        let packet = self.packet(&headers, flow, dst_host, entered, now, data);
        let index = self.kernel_links[port as usize] as usize;
        let link = &mut self.links[index];
        link.counters.count_departures(1, packet.data.len() as u64);
        if let Some(h) = held {
            link.sojourn.record(now - h.handed);
        }
        if let Some(lost) = link.put_on_wire(packet, now) {
            self.flows[lost.flow as usize].lost += 1;
            self.recycle(lost.data);
        }
        self.schedule(index);
    }

    /// The earliest instant at which something is due.
    pub fn next_event(&mut self) -> Option<Time> {
        let links = self.earliest().map(|(t, _, _)| t);
        let sample = (self.sample_interval > 0).then_some(self.next_sample);
        links.into_iter().chain(sample).min()
    }

    /// Run everything due up to `until`, in time order, at real time `now`
    /// (`until` is later when the router runs events a little ahead to
    /// save wake-ups); `deliver(device, bytes)` hands a packet to its host's device.
    pub fn advance(&mut self, until: Time, now: Time, deliver: &mut impl FnMut(u32, &[u8])) {
        loop {
            if self.sample_interval > 0
                && self.next_sample <= until
                && self.links_due_by(self.next_sample).is_none()
            {
                self.sample();
                continue;
            }
            let Some((t, link, due)) = self.links_due_by(until) else {
                break;
            };
            self.time = self.time.max(t);
            match due {
                Due::Sent => {
                    let (links, flows, pool) = (&mut self.links, &mut self.flows, &mut self.pool);
                    let lost = links[link].finish_sending(t, &mut |d| drop_packet(flows, pool, d));
                    if let Some(p) = lost {
                        self.flows[p.flow as usize].lost += 1;
                        self.recycle(p.data);
                    }
                }
                Due::Arrives => {
                    let (at, packet) = self.links[link].take_arrival();
                    let node = self.links[link].to;
                    self.forward(node, packet, at, now, deliver);
                }
                Due::Wakeup => {
                    let (links, flows, pool) = (&mut self.links, &mut self.flows, &mut self.pool);
                    links[link].wakeup(t, &mut |d| drop_packet(flows, pool, d));
                }
            }
            self.schedule(link);
        }
    }

    /// The link with the earliest event at or before `by`.
    fn links_due_by(&mut self, by: Time) -> Option<(Time, usize, Due)> {
        self.earliest().filter(|(t, _, _)| *t <= by)
    }

    /// The link with the earliest event (the lowest index among those due
    /// at once), the calendar's stale entries above it dropped.
    fn earliest(&mut self) -> Option<(Time, usize, Due)> {
        while let Some(&Reverse((t, link))) = self.calendar.peek() {
            match self.links[link as usize].next() {
                Some((at, due)) if at == t => return Some((t, link as usize, due)),
                _ => {
                    self.calendar.pop();
                }
            }
        }
        None
    }

    /// Enter link `link`'s next event in the calendar, after working on it.
    fn schedule(&mut self, link: usize) {
        if let Some((t, _)) = self.links[link].next() {
            self.calendar.push(Reverse((t, link as u32)));
        }
    }

    /// A packet reached `node` at `at` (the wire's schedule; the router runs at `now`).
    fn forward(
        &mut self,
        node: u32,
        packet: RealPacket,
        at: Time,
        now: Time,
        deliver: &mut impl FnMut(u32, &[u8]),
    ) {
        if self.host_of_node.get(&node) == Some(&packet.dst_host) {
            let stats = &mut self.flows[packet.flow as usize];
            stats.delivered += 1;
            stats.delivered_bytes += packet.data.len() as u64;
            stats.marked += (packet.ecn() == Ecn::Ce) as u64;
            stats.count_transit(at - packet.entered);
            stats.count_order(u16::from_be_bytes([packet.data[4], packet.data[5]]));
            self.lateness.record(now.saturating_sub(at));
            self.early += (at > now) as u64;
            deliver(self.device_of_host[packet.dst_host as usize], &packet.data);
            return self.recycle(packet.data);
        }
        let link = self.route(node, packet.dst_host);
        if link == NONE {
            self.unroutable += 1;
            return self.recycle(packet.data);
        }
        self.enqueue(link, packet, at);
    }

    fn enqueue(&mut self, link: u32, packet: RealPacket, now: Time) {
        if let Some(port) = self.links[link as usize].kernel_port {
            self.links[link as usize]
                .counters
                .count_arrival(packet.data.len() as u32);
            let tuple = self.flows[packet.flow as usize].tuple;
            return self.kernel.hand(port, tuple, packet, now);
        }
        let (links, flows, pool) = (&mut self.links, &mut self.flows, &mut self.pool);
        links[link as usize].enqueue(packet, now, &mut |d| drop_packet(flows, pool, d));
        self.schedule(link as usize);
    }

    fn route(&self, node: u32, host: u32) -> u32 {
        self.routes[node as usize * self.host_nodes.len() + host as usize]
    }

    fn flow(&mut self, headers: &Headers) -> u32 {
        if let Some(&f) = self.flow_of.get(&headers.tuple) {
            return f;
        }
        let f = self.flows.len() as u32;
        self.flow_of.insert(headers.tuple, f);
        // Disciplines that count host pairs (DCBT's `flow_key`) learn the new
        // flow's hosts before its first packet, as the simulator tells them.
        let (key, hosts) = (
            headers.tuple.key(self.flow_key),
            headers.tuple.key(FlowKeyMode::HostPair),
        );
        for link in &mut self.links {
            link.qdisc.learn_hosts(key, hosts);
        }
        self.flows.push(FlowStats::new(
            headers.tuple,
            headers.tos,
            self.sample_times.len(),
        ));
        f
    }

    /// Return a buffer to the pool.
    pub fn recycle(&mut self, mut data: Vec<u8>) {
        data.clear();
        self.pool.push(data);
    }

    fn sample(&mut self) {
        self.sample_times.push(self.next_sample);
        for (link, samples) in self.links.iter().zip(&mut self.link_samples) {
            let b = link.backlog();
            let stats = link.qdisc.stats(&link.counters);
            samples.push([
                b.packets,
                b.bytes,
                stats.departure_bytes,
                stats.arrivals,
                stats.total_drops(),
            ]);
        }
        for f in &mut self.flows {
            f.delivered_series.push((f.delivered_bytes, f.delivered));
            f.jitter_series.push(f.jitter_ns / 1e9);
        }
        self.next_sample += self.sample_interval;
    }

    /// Everything measured, as JSON (the file `aqmlab emulate` reads).
    pub fn report(&self) -> Value {
        let links: Vec<Value> = self
            .links
            .iter()
            .zip(&self.link_samples)
            .map(|(l, s)| link_report(l, s))
            .collect();
        let flows: Vec<Value> = self.flows.iter().map(flow_report).collect();
        json!({
            "links": links,
            "flows": flows,
            "sample_times_ns": self.sample_times,
            "ignored": self.ignored,
            "unroutable": self.unroutable,
            "lateness": self.lateness.summary(),
            "early": self.early,
        })
    }
}

/// The link of each kernel port, by port.
fn kernel_links(config: &Config) -> Vec<u32> {
    let mut ports: Vec<(u32, u32)> = config
        .links
        .iter()
        .enumerate()
        .filter_map(|(i, l)| l.kernel.map(|p| (p, i as u32)))
        .collect();
    ports.sort();
    ports.into_iter().map(|(_, link)| link).collect()
}

/// A packet a discipline dropped: counted to its flow, its buffer reused.
fn drop_packet(flows: &mut [FlowStats], pool: &mut Vec<Vec<u8>>, dropped: Dropped<RealPacket>) {
    flows[dropped.packet.flow as usize].count_drop(dropped.reason);
    let mut data = dropped.packet.data;
    data.clear();
    pool.push(data);
}

fn link_report(l: &Link, samples: &[[u64; 5]]) -> Value {
    let stats = l.qdisc.stats(&l.counters);
    let losses = stats.losses();
    json!({
        "name": l.name, "from": l.from, "to": l.to, "qdisc": l.qdisc.name(),
        "rate_bps": l.rate_bps, "delay_ns": l.delay, "monitor": l.monitor, "kernel": l.kernel_port,
        "arrivals": stats.arrivals, "arrival_bytes": stats.arrival_bytes,
        "departures": stats.departures, "departure_bytes": stats.departure_bytes,
        "drops": losses.drops, "drop_bytes": losses.drop_bytes,
        "buffered_drop_bytes": losses.buffered_drop_bytes, "marks": losses.marks,
        "peak_packets": stats.peak_packets,
        "backlog_packets": l.backlog().packets, "in_flight": l.in_flight(),
        "lost": l.lost, "lost_bytes": l.lost_bytes,
        "sojourn": l.sojourn.summary(),
        "samples": samples,
    })
}

fn flow_report(f: &FlowStats) -> Value {
    let t = f.tuple;
    json!({
        "proto": t.proto, "src": std::net::Ipv4Addr::from(t.src).to_string(),
        "dst": std::net::Ipv4Addr::from(t.dst).to_string(), "sport": t.sport, "dport": t.dport,
        "tos": f.tos, "class": class_name(f),
        "arrivals": f.arrivals, "arrival_bytes": f.arrival_bytes,
        "delivered": f.delivered, "delivered_bytes": f.delivered_bytes,
        "drops": f.drops, "lost": f.lost, "marked": f.marked,
        "transit": f.transit.summary(), "jitter_s": f.jitter_ns / 1e9, "reordered": f.reordered,
        "first_sample": f.first_sample, "delivered_series": f.delivered_series,
        "jitter_series": f.jitter_series,
    })
}

fn class_name(f: &FlowStats) -> &'static str {
    match f.tuple.proto {
        crate::packet::PROTO_TCP => "tcp",
        crate::packet::PROTO_UDP => "udp",
        _ => "other",
    }
}

/// For every node and host, the first link of a shortest path by
/// propagation delay (ties: fewer hops, then the lower link index), or
/// [`NONE`]. Bellman-Ford from each host backwards: networks here have tens
/// of links.
fn shortest_routes(nodes: usize, links: &[Link], hosts: &[u32]) -> Vec<u32> {
    let mut routes = vec![NONE; nodes * hosts.len()];
    for (h, &target) in hosts.iter().enumerate() {
        let mut cost = vec![(Time::MAX, u32::MAX); nodes];
        cost[target as usize] = (0, 0);
        for _ in 0..nodes {
            let mut changed = false;
            for (i, l) in links.iter().enumerate() {
                let (d, hops) = cost[l.to as usize];
                if d == Time::MAX {
                    continue;
                }
                let through = (d + l.delay, hops + 1);
                if through < cost[l.from as usize] {
                    cost[l.from as usize] = through;
                    routes[l.from as usize * hosts.len() + h] = i as u32;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
    routes
}
