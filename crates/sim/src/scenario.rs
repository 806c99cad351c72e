//! The resolved scenario: the one value that crosses from Python into Rust.
//!
//! Python validates the user's TOML, expands topology builders into this
//! plain graph, computes routes, draws per-flow random parameters from the
//! master seed, and converts every unit to integers: nanoseconds, bits per
//! second, bytes. Rust trusts nothing, though: [`Scenario::check`] refuses
//! anything that would make the run meaningless, with the field named.
//!
//! What grows with the number of flows is stored column-wise (a vector per
//! field, [`Links`] and [`Flows`]), not as one value per link or flow: a
//! million flows are a few dozen bytes each here, and the columns cross
//! from Python as numeric buffers (see [`Scenario::column_mut`]). What is
//! shared is listed once and referenced by index: queue disciplines, TCP
//! profiles, flow groups; names are runs of templates and numbers.

pub use aqmlab_qdisc::source::{Dist, UdpSource};
pub use aqmlab_qdisc::QdiscSpec;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Master seed; every component derives its own stream from it.
    pub seed: u64,
    pub duration_ns: u64,
    /// Summaries (throughput, utilization, loss) exclude `[0, warmup_ns)`.
    pub warmup_ns: u64,
    /// Time-series sampling period; 0 turns sampling off.
    pub sample_interval_ns: u64,
    /// The nodes' names, in the order of their indices.
    pub nodes: Vec<NameRun>,
    pub links: Links,
    pub tcp_profiles: Vec<TcpProfile>,
    #[serde(default)]
    pub flows: Flows,
    #[serde(default)]
    pub arrivals: Vec<ArrivalSpec>,
    /// What to record beyond the result tables; absent when nothing is.
    #[serde(default, skip_serializing_if = "Trace::is_off")]
    pub trace: Trace,
    /// The order of events of one kind at one nanosecond; absent when it
    /// is the default.
    #[serde(default, skip_serializing_if = "is_default")]
    pub ties: Ties,
}

/// The order of events of one kind at one nanosecond (docs/simulator.md,
/// "The order of events at one nanosecond"). Read from its name
/// (`check.rs`), so that a wrong one is refused with the field named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Ties {
    /// Drawn afresh each nanosecond from the components' numbers: no
    /// component wins ties for good.
    #[default]
    Hashed,
    /// The lower-numbered component first, at every nanosecond: the order
    /// ns-2's scheduler falls into on a dumbbell, kept to reproduce its
    /// results and measure its bias, not as a model.
    Numbered,
}

impl Ties {
    pub const ALL: [Ties; 2] = [Ties::Hashed, Ties::Numbered];

    /// Its name in the scenario.
    pub fn name(self) -> &'static str {
        match self {
            Ties::Hashed => "hashed",
            Ties::Numbered => "numbered",
        }
    }
}

impl From<Ties> for &'static str {
    fn from(ties: Ties) -> Self {
        ties.name()
    }
}

/// Names in index order, a run at a time: `names` as they are, or, with
/// `numbers = [first, count]`, each of `names` with each number of
/// `first..first + count` in its `{}` (the names of one number together,
/// then the next number's): `{"names": ["access_s{}", "access_s{}_rev"],
/// "numbers": [0, 2]}` is access_s0, access_s0_rev, access_s1,
/// access_s1_rev.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NameRun {
    pub names: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numbers: Option<[u32; 2]>,
}

/// Where a numbered name takes its number.
pub const HOLE: &str = "{}";

impl NameRun {
    /// How many names the run stands for.
    pub fn len(&self) -> usize {
        self.names.len() * self.numbers.map_or(1, |[_, count]| count as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names written out, in order.
    pub fn expand(&self) -> impl Iterator<Item = String> + '_ {
        let numbers = match self.numbers {
            Some([first, count]) => (u64::from(first)..u64::from(first) + u64::from(count))
                .map(Some)
                .collect::<Vec<_>>(),
            None => vec![None],
        };
        numbers.into_iter().flat_map(move |n| {
            self.names.iter().map(move |name| match n {
                Some(n) => name.replacen(HOLE, &n.to_string(), 1),
                None => name.clone(),
            })
        })
    }
}

/// One-way links, column-wise: link `i` is a transmitter at `rate_bps[i]`
/// behind the queue discipline `qdiscs[qdisc[i]]`, then a propagation pipe
/// of `delay_ns[i]` that loses each packet with probability `loss[i]`,
/// from node `from[i]` to node `to[i]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Links {
    pub names: Vec<NameRun>,
    /// Each distinct discipline once.
    pub qdiscs: Vec<QdiscSpec>,
    #[serde(default)]
    pub from: Vec<u32>,
    #[serde(default)]
    pub to: Vec<u32>,
    #[serde(default)]
    pub rate_bps: Vec<u64>,
    #[serde(default)]
    pub delay_ns: Vec<u64>,
    #[serde(default)]
    pub qdisc: Vec<u32>,
    /// Sample this queue's length into the time series.
    #[serde(default)]
    pub monitor: Vec<bool>,
    /// The probability that a packet is lost on the link's wire, in
    /// [0, 1) (`engine::wire`); empty when no link loses any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loss: Vec<f64>,
}

/// One link as a row: for building a scenario in code ([`Links::push`]).
#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub qdisc: QdiscSpec,
    pub monitor: bool,
    /// Probability of a loss on the wire.
    pub loss: f64,
}

impl Links {
    pub fn len(&self) -> usize {
        self.from.len()
    }

    pub fn is_empty(&self) -> bool {
        self.from.is_empty()
    }

    /// Add a link; its name joins the last run of plain names, its
    /// discipline is listed once.
    pub fn push(&mut self, link: LinkSpec) {
        match self.names.last_mut() {
            Some(run) if run.numbers.is_none() => run.names.push(link.name),
            _ => self.names.push(NameRun {
                names: vec![link.name],
                numbers: None,
            }),
        }
        let same =
            |q: &QdiscSpec| serde_json::to_value(q).ok() == serde_json::to_value(&link.qdisc).ok();
        let q = match self.qdiscs.iter().position(same) {
            Some(q) => q,
            None => {
                self.qdiscs.push(link.qdisc);
                self.qdiscs.len() - 1
            }
        };
        if link.loss != 0.0 && self.loss.is_empty() {
            self.loss.resize(self.len(), 0.0);
        }
        if !self.loss.is_empty() {
            self.loss.push(link.loss);
        }
        self.from.push(link.from);
        self.to.push(link.to);
        self.rate_bps.push(link.rate_bps);
        self.delay_ns.push(link.delay_ns);
        self.qdisc.push(q as u32);
        self.monitor.push(link.monitor);
    }

    /// Every link as a row, names written out.
    pub fn rows(&self) -> Vec<LinkSpec> {
        let names = self.names.iter().flat_map(NameRun::expand);
        names
            .zip(0..self.len())
            .map(|(name, i)| LinkSpec {
                name,
                from: self.from[i],
                to: self.to[i],
                rate_bps: self.rate_bps[i],
                delay_ns: self.delay_ns[i],
                qdisc: self.qdiscs[self.qdisc[i] as usize].clone(),
                monitor: self.monitor[i],
                loss: self.loss_of(i),
            })
            .collect()
    }

    /// Link `i`'s probability of a loss on the wire.
    pub fn loss_of(&self, i: usize) -> f64 {
        self.loss.get(i).copied().unwrap_or(0.0)
    }

    /// The links of `rows`, in order.
    pub fn from_rows(rows: impl IntoIterator<Item = LinkSpec>) -> Self {
        let mut links = Self::default();
        for row in rows {
            links.push(row);
        }
        links
    }
}

/// Explicit flows, column-wise: flow `i` belongs to `groups[group[i]]`
/// (which says what it sends), goes from node `src[i]` to node `dst[i]`
/// along `path` and, for TCP, has its ACKs come back along `reverse_path`;
/// it starts at `start_ns[i]` and stops at `stop_ns[i]` if that column is
/// given and the value is not 0, else at its group's stop.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flows {
    pub groups: Vec<FlowGroup>,
    #[serde(default)]
    pub group: Vec<u32>,
    #[serde(default)]
    pub src: Vec<u32>,
    #[serde(default)]
    pub dst: Vec<u32>,
    #[serde(default)]
    pub start_ns: Vec<u64>,
    /// Each flow's own stop (0: its group's); empty when no flow has one.
    #[serde(default)]
    pub stop_ns: Vec<u64>,
    #[serde(default)]
    pub path: Paths,
    /// Empty routes for UDP flows.
    #[serde(default)]
    pub reverse_path: Paths,
}

impl Flows {
    pub fn len(&self) -> usize {
        self.group.len()
    }

    pub fn is_empty(&self) -> bool {
        self.group.is_empty()
    }

    /// When flow `i` stops: its own stop, else its group's `group_stop`.
    pub fn stop_of(&self, i: usize, group_stop: Option<u64>) -> Option<u64> {
        match self.stop_ns.get(i) {
            Some(&stop) if stop > 0 => Some(stop),
            _ => group_stop,
        }
    }

    /// Add a flow of group `group`.
    pub fn push(&mut self, group: u32, route: &Route, start_ns: u64) {
        self.group.push(group);
        self.src.push(route.src);
        self.dst.push(route.dst);
        self.start_ns.push(start_ns);
        if !self.stop_ns.is_empty() {
            self.stop_ns.push(0);
        }
        self.path.push(&route.path);
        self.reverse_path.push(&route.reverse_path);
    }
}

/// One route per flow: route `i` is `links[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paths {
    #[serde(default)]
    pub offsets: Vec<u64>,
    #[serde(default)]
    pub links: Vec<u32>,
}

impl Default for Paths {
    fn default() -> Self {
        Self {
            offsets: vec![0],
            links: Vec::new(),
        }
    }
}

impl Paths {
    pub fn push(&mut self, path: &[u32]) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.links.extend_from_slice(path);
        self.offsets.push(self.links.len() as u64);
    }

    /// Route `i`. Valid after [`Scenario::check`].
    pub fn get(&self, i: usize) -> &[u32] {
        &self.links[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// What the flows of a group send: everything about them but their route
/// and start.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowGroup {
    Tcp {
        /// The group's label (for tables).
        label: String,
        profile: u32,
        /// Payload bytes to send; `None` is a long-lived (infinite) source.
        size_bytes: Option<u64>,
        /// Idle time after each completed transfer before a fresh one
        /// starts (seed 000's on-off sources); `None`: send once.
        #[serde(default)]
        off_time: Option<Dist>,
        /// An on-off source's next transfer continues the connection
        /// (ns-2's reused `Agent/TCP`, `TcpSender::restart`). Written only
        /// when set.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        keep_connection: bool,
        /// Record these flows' congestion windows in the time series.
        #[serde(default)]
        trace_cwnd: bool,
        /// When the application stops writing: no new data after it
        /// (`TcpSender::stop`); `None`: it writes to the end.
        #[serde(default)]
        stop_ns: Option<u64>,
    },
    Udp {
        label: String,
        /// Packet size on the wire, headers included (bytes).
        packet_size: u32,
        /// IP/UDP header bytes inside `packet_size`; the payload, which
        /// `throughput_bps` counts, is the rest.
        header_size: u32,
        stop_ns: Option<u64>,
        tagged: bool,
        source: UdpSource,
    },
}

impl FlowGroup {
    pub fn label(&self) -> &str {
        match self {
            FlowGroup::Tcp { label, .. } | FlowGroup::Udp { label, .. } => label,
        }
    }
}

/// Traces (docs/user-guide.md, "Traces"): what a run records beyond its
/// result tables. Links and flows are numbered as in `links` and `flows`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// A per-packet event trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<PacketTrace>,
    /// A capture of links' packets with synthesized headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap: Option<PcapTrace>,
    /// Each flow's throughput over windows of this length; 0 is off.
    #[serde(default)]
    pub flow_series_ns: u64,
    /// Each flow's one-way delay, jitter and reordering.
    #[serde(default)]
    pub flow_stats: bool,
    /// The link whose discipline's queues each flow hashes to are listed
    /// (flows.parquet's `queues`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_queues: Option<u32>,
    /// The link whose discipline's flows per queue are sampled: the most
    /// and fewest sending flows in one queue (seed 000's chapter 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_flows: Option<u32>,
}

impl Trace {
    /// Whether nothing is recorded as packets go (`flow_queues` is read
    /// from the disciplines after the run, `queue_flows` at the samples).
    pub fn is_off(&self) -> bool {
        Self {
            flow_queues: None,
            queue_flows: None,
            ..self.clone()
        } == Self::default()
    }
}

/// The events of the packets that match both filters (`None`: any link,
/// any flow of `flows`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketTrace {
    #[serde(default)]
    pub links: Option<Vec<u32>>,
    #[serde(default)]
    pub flows: Option<Vec<u32>>,
    pub events: Vec<TraceEvent>,
}

/// The packets that links send (each as it starts on the link), of the
/// flows named (`None`: every flow).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapTrace {
    pub links: Vec<u32>,
    #[serde(default)]
    pub flows: Option<Vec<u32>>,
}

/// What happened to a packet, as a packet trace records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceEvent {
    /// It reached a link and was offered to its discipline (ns-2's `+`).
    Enqueue,
    /// The discipline dropped it, on arrival or from its queue, or the
    /// link's wire lost it (reason `lost`) (`d`).
    Drop,
    /// It started on the link's transmitter (`-`).
    Dequeue,
    /// It reached its host (`r` at the last hop).
    Deliver,
}

impl TraceEvent {
    pub const ALL: [TraceEvent; 4] = [Self::Enqueue, Self::Drop, Self::Dequeue, Self::Deliver];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enqueue => "enqueue",
            Self::Drop => "drop",
            Self::Dequeue => "dequeue",
            Self::Deliver => "deliver",
        }
    }
}

/// A column of the scenario, to fill in place from a buffer.
pub enum ColumnMut<'a> {
    U32(&'a mut Vec<u32>),
    U64(&'a mut Vec<u64>),
    F64(&'a mut Vec<f64>),
    Bool(&'a mut Vec<bool>),
}

impl Scenario {
    /// The column named by its path in the JSON form ("links.rate_bps",
    /// "flows.path.offsets"), or `None` if there is no such column.
    pub fn column_mut(&mut self, name: &str) -> Option<ColumnMut<'_>> {
        use ColumnMut::*;
        let (l, f) = (&mut self.links, &mut self.flows);
        Some(match name {
            "links.from" => U32(&mut l.from),
            "links.to" => U32(&mut l.to),
            "links.rate_bps" => U64(&mut l.rate_bps),
            "links.delay_ns" => U64(&mut l.delay_ns),
            "links.qdisc" => U32(&mut l.qdisc),
            "links.monitor" => Bool(&mut l.monitor),
            "links.loss" => F64(&mut l.loss),
            "flows.group" => U32(&mut f.group),
            "flows.src" => U32(&mut f.src),
            "flows.dst" => U32(&mut f.dst),
            "flows.start_ns" => U64(&mut f.start_ns),
            "flows.stop_ns" => U64(&mut f.stop_ns),
            "flows.path.offsets" => U64(&mut f.path.offsets),
            "flows.path.links" => U32(&mut f.path.links),
            "flows.reverse_path.offsets" => U64(&mut f.reverse_path.offsets),
            "flows.reverse_path.links" => U32(&mut f.reverse_path.links),
            _ => return None,
        })
    }

    /// How many nodes the names stand for.
    pub fn node_count(&self) -> usize {
        self.nodes.iter().map(NameRun::len).sum()
    }
}

/// A TCP variant: a window policy and a loss recovery (`crate::tcp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TcpVariant {
    Tahoe,
    Reno,
    Newreno,
    /// ns-2's `Agent/TCP/Sack1` with its SACK sink.
    Sack,
    /// CUBIC (RFC 9438) as Linux implements it.
    Cubic,
}

/// CUBIC's parameters (RFC 9438; the defaults are the RFC's and Linux's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicParams {
    /// C of section 4.2, packets / s^3.
    pub c: f64,
    /// beta_cubic of section 4.6: the window kept on a loss.
    pub beta: f64,
    /// Section 4.7: a W_max below the last one is lowered further.
    pub fast_convergence: bool,
    /// Section 4.3: grow at least as fast as Reno would (W_est).
    pub tcp_friendliness: bool,
    /// Linux's HyStart in slow start; off.
    pub hystart: bool,
    /// The loss recovery: SACK's, as Linux uses, or NewReno's (Linux's
    /// without SACK).
    pub recovery: CubicRecovery,
}

impl Default for CubicParams {
    fn default() -> Self {
        Self {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: false,
            recovery: CubicRecovery::Sack,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CubicRecovery {
    Sack,
    Newreno,
}

/// How the retransmission timer estimates the round-trip time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttEstimator {
    /// RFC 6298, from an RTT sample on every new ACK.
    #[default]
    Rfc6298,
    /// ns-2 2.35's (tcp/tcp.cc): one timed packet at a time, in clock
    /// ticks, with ns-2's back-off.
    Ns2,
}

/// The window a retransmission timeout leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutCwnd {
    /// One packet, then slow start (RFC 5681 section 3.1; ns-2's
    /// `CLOSE_CWND_RESTART`).
    #[default]
    Restart,
    /// ssthresh, as after a fast retransmit: the window halves and the
    /// flow goes on in congestion avoidance (ns-2's `CLOSE_CWND_HALF`).
    /// Seed 000 section 2.1.1's "dup. only" Reno, which makes every loss
    /// act as the analysis assumes a duplicate-ACK loss does.
    Half,
}

/// TCP parameters shared by a group of flows (ns-2 one-way TCP semantics:
/// windows and sequence numbers count packets).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpProfile {
    pub variant: TcpVariant,
    /// Data packet size on the wire, headers included (bytes).
    pub packet_size: u32,
    /// TCP/IP header bytes inside `packet_size`; payload = packet - header.
    pub header_size: u32,
    /// ACK (and SYN) size on the wire (bytes).
    pub ack_size: u32,
    /// Initial congestion window (packets).
    pub initial_window: u32,
    /// Initial slow-start threshold (packets).
    pub initial_ssthresh: u32,
    /// Receiver's advertised window (packets): caps the sending window.
    pub receiver_window: u32,
    /// Acknowledge every other packet, or after `delayed_ack_timeout_ns`.
    pub delayed_ack: bool,
    pub delayed_ack_timeout_ns: u64,
    pub dupack_threshold: u32,
    /// RFC 6298: RTO = max(min_rto, SRTT + max(G, 4 RTTVAR)); ns-2's
    /// estimator bounds its RTO the same way.
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    pub initial_rto_ns: u64,
    /// Clock granularity G of RFC 6298; ns-2's estimator counts in ticks
    /// of it (`tcpTick_`).
    pub clock_granularity_ns: u64,
    /// Do a SYN / SYN-ACK exchange before data (counted in completion time).
    pub syn: bool,
    /// Set ECT on data packets and halve on ECN echo.
    #[serde(default)]
    pub ecn: bool,
    /// CUBIC's parameters (read only by `cubic`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub cubic: CubicParams,
    /// The RTT estimator behind the retransmission timer.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rtt_estimator: RttEstimator,
    /// The window after a retransmission timeout.
    #[serde(default, skip_serializing_if = "is_default")]
    pub timeout_cwnd: TimeoutCwnd,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl TcpProfile {
    /// Whether its receivers send SACK blocks: its loss recovery reads them.
    #[inline]
    pub fn uses_sack(&self) -> bool {
        crate::tcp::recovery::Recovery::of(self) == crate::tcp::recovery::Recovery::Sack1
    }
}

/// The links a flow's packets cross, in order, and the links its ACKs
/// cross (the routes of an arrival process).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    pub src: u32,
    pub dst: u32,
    pub path: Vec<u32>,
    /// Links from `dst` back to `src` (ACKs). Empty for UDP.
    #[serde(default)]
    pub reverse_path: Vec<u32>,
}

/// A Poisson process of TCP flow arrivals, each on a route drawn uniformly
/// from `routes`, of a size drawn from `size_bytes` (payload bytes).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalSpec {
    pub group: String,
    pub rate_per_s: f64,
    pub size_bytes: Dist,
    pub routes: Vec<Route>,
    pub profile: u32,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
}
