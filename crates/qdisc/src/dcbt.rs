//! DCBT: Dynamic Class-Based Thresholds (Chung and Claypool, NOSSDAV 2000),
//! as seed 004 implements it on Linux 2.4 RED (seed 004_c0b2b5d4c8285cc0.txt,
//! section 3.2; digest 004 section 1.4), optionally with ChIPS underneath
//! (see [`crate::chips`]).
//!
//! CBT whose class thresholds follow the traffic mix. Every arriving packet
//! is counted against a flow table (flow, class, expiry) before any test
//! ("after the flows have been classified and counted", section 3.2); a
//! flow is active until its expiry, refreshed by each of its packets, and a
//! collector run every `gc_interval` retires expired flows. Then, while
//! `min_th <= avg < max_th`:
//!
//! ```text
//! th_MM  = mm_flows  / total_flows * avg
//! th_UDP = udp_flows / total_flows * (min_th - 0.1 (max_th - min_th))
//! ```
//!
//! and a tagged (untagged) UDP packet is dropped when its class average
//! exceeds `th_MM` (`th_UDP`); survivors face RED. TCP faces RED only.
//!
//! A flow is what section 3.2 counts: the source and destination hosts and
//! the protocol ("the ability to differentiate between flows coming from
//! the same computer of the same protocol proved beyond the scope of this
//! project"), so two TCP connections between the same hosts are one flow
//! (`flow_key = "host_pair"`; the class stands for the protocol, tagged UDP
//! being the designated host's UDP). `flow_key = "flow"` counts each
//! transport flow (the 5-tuple) instead (digest A2). The host pair of a
//! flow is learned from the caller ([`QueueDiscipline::learn_hosts`]); a
//! flow whose hosts were never told counts by itself.
//!
//! `udp_flows` counts every UDP flow, tagged or not (digest A9, the
//! all-UDP reading): section 1 has "all the UDP connections share the
//! available bandwidth that has been given to the UDP class", and Table 5.2
//! has DCBT give the unresponsive flow more than CBT (388 against 309
//! KB/s) beside one TCP and one multimedia flow, which only this reading
//! gives (th_UDP = 2/3 x 4000 = 2667 B against CBT's 2000 B; counting
//! untagged flows only, 1333 B). `untagged` is the option.
//!
//! Other decisions where the report is silent (digest 004, section 7):
//! flow expiry refreshed by every packet (A5); timeout and collector
//! interval 1 s each (A6); a hash table instead of the MQP's linked list
//! (A7; O(1) per packet, the collector O(flows) per run); the class test
//! only while `min_th <= avg < max_th`, as CBT (A8; Linux RED's own
//! comparisons, `avg < min_th` being below); the untagged base clamped at
//! 0, and a `fairshare` option using `avg` (A10).
//! The collector is clocked by [`QueueDiscipline::next_wakeup`]; a run that
//! was missed is done at the next arrival, with the same result.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use serde::{Deserialize, Serialize};

use crate::blocks::{FlowMap, KeyHasher};
use crate::chips::CutInQueue;
use crate::params::{nonzero, params, SpecError, MS, VALID};
use crate::red_linux::{ClassAvg, LinuxRedConfig, LinuxRedCore, LinuxRedParams, Region};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Packet, QueueDiscipline, Time, TrafficClass, Verdicts};

/// Which UDP flows `udp_flows` counts (digest 004, A9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UdpFlows {
    /// Untagged UDP flows only.
    Untagged,
    /// Every UDP flow, tagged (multimedia) or not: the reading Table 5.2
    /// supports (see the module's documentation).
    #[default]
    AllUdp,
}

/// What DCBT counts as a flow (seed 004 section 3.2; digest 004, A2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKey {
    /// Source host, destination host and protocol (the MQP's key).
    #[default]
    HostPair,
    /// Each transport flow (the 5-tuple).
    Flow,
}

/// The base of the untagged-UDP threshold (digest 004, A10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UdpBase {
    /// `min_th - 0.1 (max_th - min_th)`, clamped at 0 (the MQP's formula).
    #[default]
    Mqp,
    /// `avg`, as the multimedia threshold (not from the MQP).
    Fairshare,
}

params! {
    /// DCBT's parameters: Linux RED's, and the flow counting's.
    #[derive(PartialEq)]
    pub struct DcbtParams {
        #[flatten] pub red: LinuxRedParams,
        /// Idle time after which a flow stops counting: 1 s (digest 004 A6;
        /// the report: "a tunable in centiseconds", its value not given).
        pub flow_timeout: Time [Time] = 1_000 * MS,
        /// Period of the expired-flow collector: 1 s (digest 004 A6).
        pub gc_interval: Time [Time] = 1_000 * MS,
        /// Which UDP flows `udp_flows` counts: `all_udp` (digest 004 A9;
        /// seed 004 section 1 and Table 5.2) or `untagged`.
        pub udp_flows: UdpFlows [Choice] = UdpFlows::AllUdp,
        /// What a flow is: `host_pair` (source and destination hosts and
        /// protocol, seed 004 section 3.2) or `flow` (the 5-tuple; digest A2).
        pub flow_key: FlowKey [Choice] = FlowKey::HostPair,
        /// The base of the untagged-UDP threshold (digest 004 A10).
        pub udp_base: UdpBase [Choice] = UdpBase::Mqp,
    }
}

impl QdiscParams for DcbtParams {
    const SUMMARY: &'static str = "dynamic CBT: per-class active-flow counting";

    fn validate(&self) -> Result<(), SpecError> {
        self.red.validate()?;
        nonzero("flow_timeout", self.flow_timeout)?;
        nonzero("gc_interval", self.gc_interval)
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.red.fill_link_rate(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Dcbt::new(self, None, seed).expect(VALID))
    }
}

/// A counted flow: a key, its class (the protocol, and the tag), and
/// whether the key names a host pair (so that no flow's own key can be
/// taken for a host pair's). Compared whole: no two flows are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FlowId {
    key: u64,
    class: TrafficClass,
    by_hosts: bool,
}

impl FlowId {
    fn new(key: u64, class: TrafficClass, by_hosts: bool) -> Self {
        Self {
            key,
            class,
            by_hosts,
        }
    }
}

impl Hash for FlowId {
    /// One word for the fast hasher (equal ids hash alike; the table
    /// compares the whole id).
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        let tag = (self.class as u64) << 1 | self.by_hosts as u64;
        state.write_u64(self.key ^ tag.rotate_right(3));
    }
}

/// The active-flow counter: the MQP's linked list with its collector.
pub(crate) struct FlowCounter {
    /// Flow -> expiry.
    table: HashMap<FlowId, Time, BuildHasherDefault<KeyHasher>>,
    counts: [u64; TrafficClass::COUNT],
    total: u64,
    timeout: Time,
    interval: Time,
    next_gc: Time,
}

impl FlowCounter {
    fn new(timeout: Time, interval: Time) -> Self {
        Self {
            table: HashMap::default(),
            counts: [0; TrafficClass::COUNT],
            total: 0,
            timeout,
            interval: interval.max(1),
            next_gc: interval.max(1),
        }
    }

    /// Count (or refresh) the flow of an arriving packet.
    fn account(&mut self, flow: FlowId, now: Time) {
        self.collect_due(now);
        let expires = now + self.timeout;
        match self.table.get_mut(&flow) {
            Some(e) => *e = expires,
            None => {
                self.table.insert(flow, expires);
                self.counts[flow.class.index()] += 1;
                self.total += 1;
            }
        }
    }

    /// Run the collector if a run is due: one run at the last due instant
    /// equals all the missed ones (no packet arrived in between).
    fn collect_due(&mut self, now: Time) {
        if now < self.next_gc {
            return;
        }
        let at = self.next_gc + (now - self.next_gc) / self.interval * self.interval;
        let counts = &mut self.counts;
        let total = &mut self.total;
        self.table.retain(|flow, &mut expires| {
            if at >= expires {
                counts[flow.class.index()] -= 1;
                *total -= 1;
                false
            } else {
                true
            }
        });
        self.next_gc = at + self.interval;
    }

    fn count(&self, class: TrafficClass) -> u64 {
        self.counts[class.index()]
    }
}

pub struct Dcbt<P> {
    queue: CutInQueue<P>,
    core: LinuxRedCore,
    classes: [ClassAvg; TrafficClass::COUNT],
    flows: FlowCounter,
    udp_flows: UdpFlows,
    /// Untagged base in bytes scaled by 2^Wlog (MQP mode).
    udp_base_scaled: Option<u64>,
    /// ChIPS on top: cut multimedia in while `mm_flows <= ratio total_flows`.
    chips_ratio: Option<f64>,
    /// Flow key -> host pair, when flows are counted by host pair.
    hosts: Option<FlowMap<u64>>,
}

impl<P: Packet> Dcbt<P> {
    /// DCBT, and ChIPS on top with `Some(chips_ratio)`: cut multimedia in
    /// while `mm_flows <= chips_ratio total_flows`.
    pub fn new(params: &DcbtParams, chips_ratio: Option<f64>, seed: u64) -> Result<Self, String> {
        let core = LinuxRedCore::new(LinuxRedConfig::from_tc(&params.red)?, seed);
        let (min, max) = (params.red.min_th as f64, params.red.max_th as f64);
        let udp_base_scaled = match params.udp_base {
            UdpBase::Mqp => Some(((min - 0.1 * (max - min)).max(0.0) as u64) << core.wlog()),
            UdpBase::Fairshare => None,
        };
        Ok(Self {
            queue: CutInQueue::new(),
            core,
            classes: Default::default(),
            flows: FlowCounter::new(params.flow_timeout, params.gc_interval),
            udp_flows: params.udp_flows,
            udp_base_scaled,
            chips_ratio,
            hosts: (params.flow_key == FlowKey::HostPair).then(FlowMap::default),
        })
    }

    pub fn core(&self) -> &LinuxRedCore {
        &self.core
    }

    /// Active flows of a class, and in total.
    pub fn flow_counts(&self) -> ([u64; TrafficClass::COUNT], u64) {
        (self.flows.counts, self.flows.total)
    }

    /// The flow an arriving packet counts for (section 3.2's key).
    fn flow_of(&self, packet: &P) -> FlowId {
        let (key, class) = (packet.flow_key(), packet.class());
        match self.hosts.as_ref().and_then(|h| h.get(&key)) {
            Some(&hosts) => FlowId::new(hosts, class, true),
            None => FlowId::new(key, class, false),
        }
    }

    fn udp_count(&self) -> u64 {
        match self.udp_flows {
            UdpFlows::Untagged => self.flows.count(TrafficClass::UdpUntagged),
            UdpFlows::AllUdp => {
                self.flows.count(TrafficClass::UdpUntagged)
                    + self.flows.count(TrafficClass::UdpTagged)
            }
        }
    }

    /// Whether class `c`'s average exceeds its dynamic threshold:
    /// `cavg > share x base`, i.e. `cavg total > flows x base` (exact).
    fn over_threshold(&self, class: TrafficClass) -> bool {
        let total = self.flows.total as u128;
        let (flows, base) = match class {
            TrafficClass::Tcp => return false,
            TrafficClass::UdpTagged => (self.flows.count(class), self.core.qave_scaled()),
            TrafficClass::UdpUntagged => (
                self.udp_count(),
                self.udp_base_scaled.unwrap_or(self.core.qave_scaled()),
            ),
        };
        let cavg = self.classes[class.index()].avg as u128;
        if total == 0 {
            return cavg > 0;
        }
        cavg * total > flows as u128 * base as u128
    }

    /// ChIPS's activation (section 3.3): avg > min_th, mm <= ratio total.
    fn cut_in_at(&self) -> Option<u64> {
        let ratio = self.chips_ratio?;
        let avg = self.core.avg_bytes();
        let mm = self.flows.count(TrafficClass::UdpTagged) as f64;
        (self.core.qave_scaled() > self.core.config().qth_min << self.core.wlog()
            && mm <= ratio * self.flows.total as f64)
            .then_some(avg)
    }
}

impl<P: Packet> QueueDiscipline<P> for Dcbt<P> {
    fn name(&self) -> &'static str {
        if self.chips_ratio.is_some() {
            "chips"
        } else {
            "dcbt"
        }
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        let class = packet.class();
        let c = class.index();
        self.flows.account(self.flow_of(&packet), now);
        let bytes = self.queue.bytes();
        self.core.arrive(bytes, now, &mut self.classes);
        let fits = self.core.fits(bytes, packet.size());
        let admitted = match self.core.region() {
            Region::Below => {
                self.core.below();
                Some(packet)
            }
            Region::Above => {
                self.core.above();
                self.core.congestion(packet, fits, verdicts)
            }
            Region::Between if self.over_threshold(class) => {
                verdicts.refuse(packet, DropReason::Policy);
                None
            }
            Region::Between if self.core.random_drop() => {
                self.core.congestion(packet, fits, verdicts)
            }
            Region::Between => Some(packet),
        };
        if let Some(p) = admitted {
            if fits {
                self.classes[c].bytes += p.size() as u64;
                if self.chips_ratio.is_some() && CutInQueue::<P>::is_multimedia(class) {
                    let at = self.cut_in_at();
                    self.queue.push_multimedia(p, at);
                } else {
                    self.queue.push_back(p);
                }
            } else {
                verdicts.refuse(p, DropReason::Overflow);
            }
        }
        if self.queue.is_empty() {
            self.core.idle(now);
        }
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop();
        if let Some(p) = &packet {
            self.classes[p.class().index()].bytes -= p.size() as u64;
        }
        if self.queue.is_empty() {
            self.core.idle(now);
        }
        packet
    }

    fn backlog(&self) -> Backlog {
        Backlog {
            packets: self.queue.packets(),
            bytes: self.queue.bytes(),
        }
    }

    fn has_clock(&self) -> bool {
        true
    }

    fn next_wakeup(&self) -> Option<Time> {
        (!self.flows.table.is_empty()).then_some(self.flows.next_gc)
    }

    fn wakeup(&mut self, now: Time, _verdicts: &mut Verdicts<P>) {
        self.flows.collect_due(now);
    }

    fn learn_hosts(&mut self, key: u64, hosts: u64) {
        if let Some(h) = &mut self.hosts {
            h.insert(key, hosts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn pkt(flow: u64, seq: u64, class: TrafficClass) -> TestPacket {
        let mut p = TestPacket::new(flow, seq, 1000);
        p.class = class;
        p
    }

    const S: Time = 1_000_000_000;

    #[test]
    fn flows_are_counted_refreshed_and_expired_by_the_collector() {
        let mut d: Dcbt<TestPacket> = Dcbt::new(&DcbtParams::default(), None, 1).unwrap();
        let mut v = Verdicts::new();
        d.enqueue(pkt(1, 0, TrafficClass::Tcp), 0, &mut v);
        d.enqueue(pkt(2, 0, TrafficClass::UdpTagged), S / 10, &mut v);
        d.enqueue(pkt(3, 0, TrafficClass::UdpUntagged), S / 2, &mut v);
        d.enqueue(pkt(1, 1, TrafficClass::Tcp), S / 2, &mut v); // refresh: expires 1.5 s
        assert_eq!(d.flow_counts(), ([1, 1, 1], 3));
        assert_eq!(d.next_wakeup(), Some(S));
        // Collector at 1 s: flow 2 expired at 1.1 s? no, 1.1 > 1.0: all stay.
        d.wakeup(S, &mut v);
        assert_eq!(d.flow_counts().1, 3);
        assert_eq!(d.next_wakeup(), Some(2 * S));
        // At 2 s all three have expired (1.1, 1.5, 1.5).
        d.wakeup(2 * S, &mut v);
        assert_eq!(d.flow_counts(), ([0, 0, 0], 0));
        assert_eq!(d.next_wakeup(), None);
        // Missed runs are done at the next arrival: flow 4 at 2.2 s; nothing
        // until 5.5 s, when runs at 3, 4, 5 s were due: 4 expired at 3.2 s.
        d.enqueue(pkt(4, 0, TrafficClass::Tcp), 2 * S + S / 5, &mut v);
        d.enqueue(pkt(5, 0, TrafficClass::Tcp), 5 * S + S / 2, &mut v);
        assert_eq!(d.flow_counts(), ([1, 0, 0], 1));
        assert_eq!(d.next_wakeup(), Some(6 * S));
    }

    #[test]
    fn thresholds_are_flow_shares() {
        let params = DcbtParams {
            udp_flows: UdpFlows::Untagged,
            ..Default::default()
        };
        let mut d: Dcbt<TestPacket> = Dcbt::new(&params, None, 1).unwrap();
        let mut v = Verdicts::new();
        // One flow per class: th_MM = avg/3, th_UDP = 4000/3 = 1333 B.
        for (f, c) in [
            (1, TrafficClass::Tcp),
            (2, TrafficClass::UdpTagged),
            (3, TrafficClass::UdpUntagged),
        ] {
            d.flows.account(FlowId::new(f, c, false), 0);
        }
        let w = d.core.wlog();
        d.core.set_qave_for_tests(9000 << w);
        let set = |d: &mut Dcbt<TestPacket>, class: TrafficClass, bytes: u64| {
            d.classes[class.index()].avg = bytes << w
        };
        set(&mut d, TrafficClass::UdpUntagged, 1333);
        assert!(!d.over_threshold(TrafficClass::UdpUntagged));
        set(&mut d, TrafficClass::UdpUntagged, 1334);
        assert!(d.over_threshold(TrafficClass::UdpUntagged));
        set(&mut d, TrafficClass::UdpTagged, 3000);
        assert!(!d.over_threshold(TrafficClass::UdpTagged));
        set(&mut d, TrafficClass::UdpTagged, 3001);
        assert!(d.over_threshold(TrafficClass::UdpTagged));
        set(&mut d, TrafficClass::Tcp, 100_000);
        assert!(!d.over_threshold(TrafficClass::Tcp));
        // all_udp counts the multimedia flow too: th_UDP = 2/3 4000 = 2666 B.
        d.udp_flows = UdpFlows::AllUdp;
        set(&mut d, TrafficClass::UdpUntagged, 2666);
        assert!(!d.over_threshold(TrafficClass::UdpUntagged));
        set(&mut d, TrafficClass::UdpUntagged, 2667);
        assert!(d.over_threshold(TrafficClass::UdpUntagged));
        // An arriving untagged packet over its threshold is a Policy drop.
        d.core.idle_start_none_for_tests();
        d.core.set_qave_for_tests(10_000 << w);
        set(&mut d, TrafficClass::UdpUntagged, 4000);
        d.enqueue(pkt(3, 0, TrafficClass::UdpUntagged), 0, &mut v);
        assert_eq!(v.dropped()[0].reason, DropReason::Policy);
    }

    #[test]
    fn every_udp_flow_counts_by_default() {
        // Seed 004's three-flow test: th_UDP = 2/3 x 4000 = 2666 B, above
        // CBT's 2000 B (Table 5.2: DCBT gives the UDP flow more than CBT).
        assert_eq!(DcbtParams::default().udp_flows, UdpFlows::AllUdp);
        let mut d: Dcbt<TestPacket> = Dcbt::new(&DcbtParams::default(), None, 1).unwrap();
        let mut v = Verdicts::new();
        for (f, c) in [
            (1, TrafficClass::Tcp),
            (2, TrafficClass::UdpTagged),
            (3, TrafficClass::UdpUntagged),
        ] {
            d.enqueue(pkt(f, 0, c), 0, &mut v);
        }
        assert_eq!(d.flow_counts(), ([1, 1, 1], 3));
        let w = d.core.wlog();
        d.core.set_qave_for_tests(9000 << w);
        let untagged = TrafficClass::UdpUntagged.index();
        d.classes[untagged].avg = 2666 << w;
        assert!(!d.over_threshold(TrafficClass::UdpUntagged));
        d.classes[untagged].avg = 2667 << w;
        assert!(d.over_threshold(TrafficClass::UdpUntagged));
    }

    /// Four flows: two TCP connections between hosts A and B, a UDP flow
    /// from A to B, a TCP connection from A to C; and flow 9, whose hosts
    /// were never told.
    fn four_flows_and_a_stranger(d: &mut Dcbt<TestPacket>) {
        let (ab, ac) = (0xab, 0xac);
        for (flow, hosts) in [(1, ab), (2, ab), (3, ab), (4, ac)] {
            d.learn_hosts(flow, hosts);
        }
        let mut v = Verdicts::new();
        for (flow, class) in [
            (1, TrafficClass::Tcp),
            (2, TrafficClass::Tcp),
            (3, TrafficClass::UdpUntagged),
            (4, TrafficClass::Tcp),
            (9, TrafficClass::Tcp),
        ] {
            d.enqueue(pkt(flow, 0, class), 0, &mut v);
        }
    }

    #[test]
    fn a_flow_costs_an_entry_of_24_bytes() {
        // docs/disciplines/dcbt.md's memory figure (and a control byte).
        assert_eq!(std::mem::size_of::<(FlowId, Time)>(), 24);
    }

    #[test]
    fn a_host_pair_and_protocol_is_one_flow() {
        let mut d: Dcbt<TestPacket> = Dcbt::new(&DcbtParams::default(), None, 1).unwrap();
        four_flows_and_a_stranger(&mut d);
        // TCP A->B (flows 1 and 2), TCP A->C, flow 9; UDP A->B.
        assert_eq!(d.flow_counts(), ([3, 0, 1], 4));
    }

    #[test]
    fn the_flow_key_counts_every_transport_flow() {
        let params = DcbtParams {
            flow_key: FlowKey::Flow,
            ..Default::default()
        };
        let mut d: Dcbt<TestPacket> = Dcbt::new(&params, None, 1).unwrap();
        four_flows_and_a_stranger(&mut d);
        assert_eq!(d.flow_counts(), ([4, 0, 1], 5));
    }

    #[test]
    fn flow_key_is_read_from_a_scenario() {
        let spec = crate::QdiscSpec::from_json(r#"{"kind": "dcbt", "flow_key": "flow"}"#).unwrap();
        let crate::QdiscSpec::Dcbt(p) = spec else {
            panic!("not dcbt")
        };
        assert_eq!(p.flow_key, FlowKey::Flow);
        let bad = crate::QdiscSpec::from_json(r#"{"kind": "dcbt", "flow_key": "ports"}"#);
        assert!(bad.unwrap_err().to_string().contains("flow_key"));
    }

    /// ChIPS: a multimedia flow among TCP cuts in at the average and still
    /// leaves in order.
    #[test]
    fn chips_delivers_multimedia_in_order_ahead_of_fifo() {
        let params = DcbtParams {
            red: LinuxRedParams {
                max_p: 1e-5,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut d: Dcbt<TestPacket> = Dcbt::new(&params, Some(0.5), 3).unwrap();
        let mut v = Verdicts::new();
        // 14 TCP packets of 1000 B build the average (Wlog 3, scaled by 8):
        // qave <- qave - qave/8 + backlog: 0, 1000, 2875, ..., 57873 (7234 B).
        for i in 0..14 {
            d.enqueue(pkt(1, i, TrafficClass::Tcp), 0, &mut v);
        }
        d.enqueue(pkt(2, 0, TrafficClass::UdpTagged), 0, &mut v);
        // That arrival saw backlog 14000: qave 64639, avg 8079 B > min 5000,
        // 1 mm flow of 2: cut in after 8 packets (8000 <= 8079 < 9000).
        assert_eq!(d.core.avg_bytes(), 8079);
        d.enqueue(pkt(1, 14, TrafficClass::Tcp), 0, &mut v);
        d.enqueue(pkt(2, 1, TrafficClass::UdpTagged), 0, &mut v);
        // avg 9826 B: after 8 packets and the first slot (9000 <= 9826 < 10000).
        assert_eq!(d.core.avg_bytes(), 9826);
        assert!(v.dropped().is_empty(), "{:?}", v.dropped());
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| d.dequeue(0, &mut v))
            .map(|p| (p.flow, p.seq))
            .collect();
        let mm: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|(_, p)| p.0 == 2)
            .map(|(i, _)| i)
            .collect();
        // Positions 8 and 9 instead of 14 and 16 in a FIFO, in order.
        assert_eq!(mm, vec![8, 9]);
        assert_eq!(order[8], (2, 0));
        assert_eq!(order[9], (2, 1));
        let tcp: Vec<u64> = order.iter().filter(|p| p.0 == 1).map(|p| p.1).collect();
        assert_eq!(tcp, (0..15).collect::<Vec<_>>());
        assert_eq!(d.backlog(), Backlog::default());
        assert!(d.classes.iter().all(|c| c.bytes == 0));
    }

    #[test]
    fn chips_waits_for_the_flow_mix() {
        // Only multimedia flows: total (1) < 2 mm (2): no cut-in.
        let mut d: Dcbt<TestPacket> = Dcbt::new(&DcbtParams::default(), Some(0.5), 3).unwrap();
        let w = d.core.wlog();
        d.flows
            .account(FlowId::new(2, TrafficClass::UdpTagged, false), 0);
        d.core.set_qave_for_tests(9000 << w);
        assert_eq!(d.cut_in_at(), None);
        d.flows.account(FlowId::new(1, TrafficClass::Tcp, false), 0);
        assert_eq!(d.cut_in_at(), Some(9000));
        // ...and not below min_th.
        d.core.set_qave_for_tests(5000 << w);
        assert_eq!(d.cut_in_at(), None);
    }
}
