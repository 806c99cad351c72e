//! The resolved scenario: the one value that crosses from Python into Rust.
//!
//! Python validates the user's TOML, expands topology builders into this
//! plain graph, computes routes, draws per-flow random parameters from the
//! master seed, and converts every unit to integers: nanoseconds, bits per
//! second, bytes. Rust trusts nothing, though: [`Scenario::check`] refuses
//! anything that would make the run meaningless, with the field named.

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
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    pub tcp_profiles: Vec<TcpProfile>,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    #[serde(default)]
    pub arrivals: Vec<ArrivalSpec>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
}

/// A one-way link: a transmitter at `rate_bps` behind the queue discipline,
/// then a propagation pipe of `delay_ns`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub qdisc: QdiscSpec,
    /// Sample this queue's length into the time series.
    #[serde(default)]
    pub monitor: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TcpVariant {
    Tahoe,
    Reno,
    Newreno,
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
    /// RFC 6298: RTO = max(min_rto, SRTT + max(G, 4 RTTVAR)).
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    pub initial_rto_ns: u64,
    /// Clock granularity G of RFC 6298; RTT samples are rounded up to it.
    pub clock_granularity_ns: u64,
    /// Do a SYN / SYN-ACK exchange before data (counted in completion time).
    pub syn: bool,
    /// Set ECT on data packets and halve on ECN echo.
    #[serde(default)]
    pub ecn: bool,
}

/// What an explicit flow sends.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FlowSpec {
    Tcp {
        /// Label of the group of flows this one belongs to (for tables).
        group: String,
        route: Route,
        profile: u32,
        start_ns: u64,
        /// Payload bytes to send; `None` is a long-lived (infinite) source.
        size_bytes: Option<u64>,
        /// Idle time after each completed transfer before a fresh one
        /// starts (seed 000's on-off sources); `None`: send once.
        #[serde(default)]
        off_time: Option<Dist>,
        /// Record this flow's congestion window in the time series.
        #[serde(default)]
        trace_cwnd: bool,
    },
    Udp {
        group: String,
        route: Route,
        packet_size: u32,
        start_ns: u64,
        stop_ns: Option<u64>,
        tagged: bool,
        source: UdpSource,
    },
}

/// The links a flow's packets cross, in order, and the links its ACKs cross.
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

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum UdpSource {
    /// Constant bit rate. `jitter` in [0, 1) randomizes each gap uniformly in
    /// `interval * (1 ± jitter)` (ns-2's `random_` is jitter 0.5 on one side).
    Cbr { rate_bps: u64, jitter: f64 },
    /// Exponential gaps with the given mean rate.
    Poisson { rate_bps: u64 },
    /// Sends at `rate_bps` during on periods, silent during off periods.
    OnOff { rate_bps: u64, on: Dist, off: Dist },
}

/// A random quantity of nanoseconds or bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Dist {
    Fixed {
        value: f64,
    },
    Uniform {
        low: f64,
        high: f64,
    },
    Exponential {
        mean: f64,
    },
    /// Pareto with the given mean and shape (> 1), as ns-2 parameterizes it.
    Pareto {
        mean: f64,
        shape: f64,
    },
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
