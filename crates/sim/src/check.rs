//! Validation of a resolved scenario. Python validates the user's file
//! first; this is the core's own guard, so that no input can make a run
//! meaningless or panic.

use crate::scenario::{Dist, FlowSpec, Route, Scenario, UdpSource};

/// A mistake in the scenario, with the field it is in.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ScenarioError {}

fn ensure(
    ok: bool,
    field: impl Into<String>,
    message: impl Into<String>,
) -> Result<(), ScenarioError> {
    if ok {
        Ok(())
    } else {
        Err(ScenarioError::new(field, message))
    }
}

impl Scenario {
    pub fn check(&self) -> Result<(), ScenarioError> {
        ensure(self.duration_ns > 0, "duration", "must be positive")?;
        ensure(
            self.warmup_ns < self.duration_ns,
            "warmup",
            "must be shorter than the duration",
        )?;
        let nodes = self.nodes.len() as u32;
        for (i, l) in self.links.iter().enumerate() {
            let f = |name: &str| format!("links[{i}].{name}");
            ensure(l.from < nodes, f("from"), "no such node")?;
            ensure(l.to < nodes, f("to"), "no such node")?;
            ensure(
                l.from != l.to,
                f("to"),
                "a link must join two different nodes",
            )?;
            ensure(l.rate_bps > 0, f("rate"), "must be positive")?;
            l.qdisc.validate().map_err(|e| {
                ScenarioError::new(format!("links[{i}].qdisc.{}", e.field), e.message)
            })?;
        }
        for (i, p) in self.tcp_profiles.iter().enumerate() {
            let f = |name: &str| format!("tcp_profiles[{i}].{name}");
            ensure(
                p.packet_size > p.header_size,
                f("packet_size"),
                "must be larger than header_size",
            )?;
            ensure(p.ack_size > 0, f("ack_size"), "must be positive")?;
            ensure(
                p.initial_window >= 1,
                f("initial_window"),
                "must be at least 1",
            )?;
            ensure(
                p.receiver_window >= 1,
                f("receiver_window"),
                "must be at least 1",
            )?;
            ensure(
                p.dupack_threshold >= 1,
                f("dupack_threshold"),
                "must be at least 1",
            )?;
            ensure(p.min_rto_ns > 0, f("min_rto"), "must be positive")?;
            ensure(
                p.max_rto_ns >= p.min_rto_ns,
                f("max_rto"),
                "must be at least min_rto",
            )?;
            ensure(p.initial_rto_ns > 0, f("initial_rto"), "must be positive")?;
        }
        for (i, flow) in self.flows.iter().enumerate() {
            let f = |name: &str| format!("flows[{i}].{name}");
            match flow {
                FlowSpec::Tcp {
                    route,
                    profile,
                    size_bytes,
                    off_time,
                    ..
                } => {
                    ensure(
                        (*profile as usize) < self.tcp_profiles.len(),
                        f("profile"),
                        "no such TCP profile",
                    )?;
                    self.check_route(route, true, &f("route"))?;
                    ensure(
                        size_bytes.is_none_or(|b| b > 0),
                        f("size"),
                        "must be positive",
                    )?;
                    if let Some(d) = off_time {
                        check_dist(d, &f("off_time"))?;
                    }
                }
                FlowSpec::Udp {
                    route,
                    packet_size,
                    source,
                    ..
                } => {
                    self.check_route(route, false, &f("route"))?;
                    ensure(*packet_size > 0, f("packet_size"), "must be positive")?;
                    match source {
                        UdpSource::Cbr { rate_bps, jitter } => {
                            ensure(*rate_bps > 0, f("rate"), "must be positive")?;
                            ensure(
                                (0.0..1.0).contains(jitter),
                                f("jitter"),
                                "must be in [0, 1)",
                            )?;
                        }
                        UdpSource::Poisson { rate_bps } => {
                            ensure(*rate_bps > 0, f("rate"), "must be positive")?
                        }
                        UdpSource::OnOff { rate_bps, on, off } => {
                            ensure(*rate_bps > 0, f("rate"), "must be positive")?;
                            check_dist(on, &f("on"))?;
                            check_dist(off, &f("off"))?;
                        }
                    }
                }
            }
        }
        for (i, a) in self.arrivals.iter().enumerate() {
            let f = |name: &str| format!("arrivals[{i}].{name}");
            ensure(
                a.rate_per_s > 0.0 && a.rate_per_s.is_finite(),
                f("rate"),
                "must be positive",
            )?;
            ensure(
                !a.routes.is_empty(),
                f("routes"),
                "needs at least one route",
            )?;
            ensure(
                (a.profile as usize) < self.tcp_profiles.len(),
                f("profile"),
                "no such TCP profile",
            )?;
            check_dist(&a.size_bytes, &f("size"))?;
            for (j, r) in a.routes.iter().enumerate() {
                self.check_route(r, true, &format!("arrivals[{i}].routes[{j}]"))?;
            }
        }
        Ok(())
    }

    /// A path must be a chain of links from `src` to `dst` (and back, for
    /// TCP's ACKs), short enough for a packet's hop counter.
    fn check_route(
        &self,
        r: &Route,
        needs_reverse: bool,
        field: &str,
    ) -> Result<(), ScenarioError> {
        self.check_path(&r.path, r.src, r.dst, &format!("{field}.path"))?;
        if needs_reverse {
            self.check_path(
                &r.reverse_path,
                r.dst,
                r.src,
                &format!("{field}.reverse_path"),
            )?;
        }
        Ok(())
    }

    fn check_path(
        &self,
        path: &[u32],
        from: u32,
        to: u32,
        field: &str,
    ) -> Result<(), ScenarioError> {
        ensure(!path.is_empty(), field, "must cross at least one link")?;
        ensure(path.len() < 255, field, "too many hops (at most 254)")?;
        let mut at = from;
        for &l in path {
            let link = self
                .links
                .get(l as usize)
                .ok_or_else(|| ScenarioError::new(field, format!("no link {l}")))?;
            ensure(
                link.from == at,
                field,
                format!(
                    "link {} does not start where the previous one ends",
                    link.name
                ),
            )?;
            at = link.to;
        }
        ensure(at == to, field, "does not end at the destination")
    }
}

fn check_dist(d: &Dist, field: &str) -> Result<(), ScenarioError> {
    let finite_nonneg = |x: f64| x.is_finite() && x >= 0.0;
    match *d {
        Dist::Fixed { value } => {
            ensure(finite_nonneg(value), field, "must be a non-negative number")
        }
        Dist::Uniform { low, high } => ensure(
            finite_nonneg(low) && high >= low && high.is_finite(),
            field,
            "needs 0 <= low <= high",
        ),
        Dist::Exponential { mean } => {
            ensure(finite_nonneg(mean), field, "mean must be non-negative")
        }
        Dist::Pareto { mean, shape } => {
            ensure(finite_nonneg(mean), field, "mean must be non-negative")?;
            ensure(
                shape > 1.0 && shape.is_finite(),
                field,
                "Pareto shape must be greater than 1",
            )
        }
    }
}
