//! What `aqmlab emulate` tells the router: its hosts (each an address at a
//! node of the network, on a TUN device that several hosts may share: the
//! addresses of one namespace), the links of the scenario's network, and how
//! to measure. Read from JSON; a mistake names its field.

use std::net::Ipv4Addr;

use aqmlab_qdisc::{QdiscSpec, SpecError};
use serde::Deserialize;

use crate::packet::FlowKeyMode;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Seeds the disciplines and the links' random loss.
    pub seed: u64,
    /// Queue lengths and per-flow bytes are sampled at this period (0: never).
    pub sample_interval_ns: u64,
    /// The router stops by itself this long after it started, whatever
    /// happens to the process that runs it: runs are bounded in time.
    pub stop_after_ns: u64,
    /// The TOS byte whose DSCP marks tagged multimedia UDP (none: no UDP is tagged).
    #[serde(default)]
    pub tag_tos: Option<u8>,
    #[serde(default)]
    pub flow_key: FlowKeyMode,
    /// Run at a real-time priority (SCHED_FIFO) when the system allows it,
    /// so that the links' schedule is kept on a busy machine. The router
    /// sleeps whenever nothing is due, so it takes no more CPU for it.
    #[serde(default)]
    pub realtime: bool,
    /// Events due within this many nanoseconds of a wake-up run in it: fewer
    /// wake-ups (each costs a timer reprogramming, dear in a VM), at the
    /// price of packets reaching their hosts up to this much early.
    #[serde(default)]
    pub batch_ns: u64,
    /// Number of nodes of the network (hosts and routers).
    pub nodes: u32,
    pub hosts: Vec<HostConfig>,
    pub links: Vec<LinkConfig>,
    /// Pairs of TUN devices through which kernel links pass their packets
    /// to the kernel's qdiscs (kernel.rs), numbered from 0.
    #[serde(default)]
    pub kernel_ports: Vec<KernelPort>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelPort {
    /// The device the router writes the link's packets to.
    pub into: String,
    /// The device the kernel sends them out of, through its qdisc.
    pub from: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// The host's node in the network.
    pub node: u32,
    /// Name of its TUN device; hosts that name the same device share it
    /// (one namespace holding several hosts' addresses).
    pub device: String,
    pub addr: Ipv4Addr,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// Probability that a packet is lost on the wire, after its queue.
    #[serde(default)]
    pub loss: f64,
    /// The discipline, as the simulator takes it (crates/qdisc's spec).
    pub qdisc: serde_json::Value,
    #[serde(default)]
    pub monitor: bool,
    /// The kernel port whose qdisc is this link's queue (its `qdisc` and
    /// `rate_bps` are then only reported; the kernel's qdisc shapes).
    #[serde(default)]
    pub kernel: Option<u32>,
}

impl Config {
    pub fn from_json(text: &str) -> Result<Self, SpecError> {
        let config: Self =
            serde_json::from_str(text).map_err(|e| SpecError::new("config", e.to_string()))?;
        config.check()?;
        Ok(config)
    }

    fn check(&self) -> Result<(), SpecError> {
        if self.hosts.is_empty() {
            return Err(SpecError::new("hosts", "at least one host"));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, h) in self.hosts.iter().enumerate() {
            if !seen.insert(h.addr) {
                return Err(SpecError::new(
                    &format!("hosts[{i}].addr"),
                    "another host has this address",
                ));
            }
            if h.node >= self.nodes {
                return Err(SpecError::new(
                    &format!("hosts[{i}].node"),
                    "not a node of the network",
                ));
            }
            if h.device.is_empty() || h.device.len() > 15 {
                return Err(SpecError::new(
                    &format!("hosts[{i}].device"),
                    "1 to 15 characters",
                ));
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            let field = |f: &str| format!("links[{i}].{f}");
            if l.from >= self.nodes || l.to >= self.nodes {
                return Err(SpecError::new(&field("to"), "not a node of the network"));
            }
            if l.rate_bps == 0 {
                return Err(SpecError::new(&field("rate_bps"), "must be positive"));
            }
            if !(0.0..1.0).contains(&l.loss) {
                return Err(SpecError::new(&field("loss"), "a probability in [0, 1)"));
            }
            l.spec()
                .map_err(|e| SpecError::new(&field(&format!("qdisc.{}", e.field)), e.message))?;
        }
        Ok(())
    }
}

impl Config {
    /// The distinct TUN devices, in the order the hosts first name them, and
    /// each host's device among them.
    pub fn devices(&self) -> (Vec<&str>, Vec<u32>) {
        let mut names: Vec<&str> = Vec::new();
        let of_host = self
            .hosts
            .iter()
            .map(|h| match names.iter().position(|d| *d == h.device) {
                Some(d) => d as u32,
                None => {
                    names.push(&h.device);
                    names.len() as u32 - 1
                }
            })
            .collect();
        (names, of_host)
    }
}

impl LinkConfig {
    /// The link's discipline, checked, with the link's rate where it needs one.
    pub fn spec(&self) -> Result<QdiscSpec, SpecError> {
        let mut spec = QdiscSpec::from_json(&self.qdisc.to_string())?;
        spec.validate()?;
        spec.fill_link_rate(self.rate_bps);
        Ok(spec)
    }
}
