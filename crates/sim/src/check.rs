//! Validation of a resolved scenario. Python validates the user's file
//! first; this is the core's own guard, so that no input can make a run
//! meaningless or panic. Each mistake names its field as the JSON form has
//! it, with the index of the element in a column: `links.rate_bps[3]`.

use crate::scenario::{
    Dist, FlowGroup, NameRun, Paths, RttEstimator, Scenario, Ties, TraceEvent, UdpSource, HOLE,
};

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

/// Every column of a table as long as its first.
fn same_length(table: &str, columns: &[(&str, usize)]) -> Result<(), ScenarioError> {
    let (first, n) = columns[0];
    for &(name, len) in &columns[1..] {
        ensure(
            len == n,
            format!("{table}.{name}"),
            format!("has {len} values but {table}.{first} has {n}"),
        )?;
    }
    Ok(())
}

/// Runs of names whose numbered names each have their hole.
fn check_names(runs: &[NameRun], field: &str) -> Result<(), ScenarioError> {
    for (i, run) in runs.iter().enumerate() {
        if run.numbers.is_some() {
            for (j, name) in run.names.iter().enumerate() {
                ensure(
                    name.contains(HOLE),
                    format!("{field}[{i}].names[{j}]"),
                    format!("a numbered name needs {HOLE} for its number"),
                )?;
            }
        }
    }
    Ok(())
}

/// Offsets of `routes` routes into the links of `paths`: from 0, never
/// falling, up to the end of the links.
fn check_offsets(paths: &Paths, routes: usize, field: &str) -> Result<(), ScenarioError> {
    let o = &paths.offsets;
    if routes == 0 && o.is_empty() {
        return Ok(());
    }
    ensure(
        o.len() == routes + 1,
        format!("{field}.offsets"),
        format!(
            "has {} values but there are {routes} flows (needs one more)",
            o.len()
        ),
    )?;
    ensure(o[0] == 0, format!("{field}.offsets[0]"), "must be 0")?;
    for i in 1..o.len() {
        ensure(
            o[i] >= o[i - 1],
            format!("{field}.offsets[{i}]"),
            "must not be less than the one before",
        )?;
    }
    ensure(
        o[routes] == paths.links.len() as u64,
        format!("{field}.offsets[{routes}]"),
        format!(
            "must be the number of links in {field}.links ({})",
            paths.links.len()
        ),
    )
}

impl Scenario {
    pub fn check(&self) -> Result<(), ScenarioError> {
        ensure(self.duration_ns > 0, "duration", "must be positive")?;
        ensure(
            self.warmup_ns < self.duration_ns,
            "warmup",
            "must be shorter than the duration",
        )?;
        // The names say how many nodes there are.
        check_names(&self.nodes, "nodes")?;
        self.check_links(self.node_count() as u32)?;
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
            ensure(
                p.clock_granularity_ns > 0 || p.rtt_estimator == RttEstimator::Rfc6298,
                f("clock_granularity"),
                "must be positive: ns-2's estimator counts in its ticks",
            )?;
            let c = &p.cubic;
            ensure(
                c.c > 0.0 && c.c.is_finite(),
                f("cubic.c"),
                "must be positive",
            )?;
            ensure(
                c.beta > 0.0 && c.beta < 1.0,
                f("cubic.beta"),
                "must be between 0 and 1",
            )?;
        }
        for (g, group) in self.flows.groups.iter().enumerate() {
            self.check_group(group, &format!("flows.groups[{g}]"))?;
        }
        self.check_flows()?;
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
                let field = format!("arrivals[{i}].routes[{j}]");
                self.check_path(&r.path, r.src, r.dst, &format!("{field}.path"))?;
                self.check_path(
                    &r.reverse_path,
                    r.dst,
                    r.src,
                    &format!("{field}.reverse_path"),
                )?;
            }
        }
        self.check_trace()
    }

    /// A trace names links and flows that exist, and each link it names is
    /// reached by a packet of the flows it names (any flow, arrivals' too,
    /// if it names none), and each flow reaches a link it names: a filter
    /// never matches nothing. Deliveries reach the last link of a route
    /// only.
    fn check_trace(&self) -> Result<(), ScenarioError> {
        let trace = &self.trace;
        if let Some(p) = &trace.packets {
            let field = "trace.packets";
            ensure(
                !p.events.is_empty(),
                format!("{field}.events"),
                "must name at least one event",
            )?;
            let deliveries_only = p.events.iter().all(|&e| e == TraceEvent::Deliver);
            let links = p.links.as_deref();
            self.check_trace_filter(links, p.flows.as_deref(), deliveries_only, field)?;
        }
        if let Some(p) = &trace.pcap {
            self.check_trace_filter(Some(&p.links), p.flows.as_deref(), false, "trace.pcap")?;
        }
        if let Some(l) = trace.queue_flows {
            check_indices(Some(&[l]), self.links.len(), "link", "trace.queue_flows")?;
        }
        if let Some(l) = trace.flow_queues {
            check_indices(Some(&[l]), self.links.len(), "link", "trace.flow_queues")?;
        }
        Ok(())
    }

    fn check_trace_filter(
        &self,
        links: Option<&[u32]>,
        flows: Option<&[u32]>,
        last_hop_only: bool,
        field: &str,
    ) -> Result<(), ScenarioError> {
        check_indices(links, self.links.len(), "link", &format!("{field}.links"))?;
        check_indices(flows, self.flows.len(), "flow", &format!("{field}.flows"))?;
        let Some(links) = links else { return Ok(()) };
        let (reached, crosses) = match last_hop_only {
            true => (last_link as fn(&[u32]) -> &[u32], "arrives over"),
            false => (every_link as fn(&[u32]) -> &[u32], "crosses"),
        };
        let mut met = vec![false; self.links.len()];
        for route in self.traced_routes(flows) {
            reached(route).iter().for_each(|&l| met[l as usize] = true);
        }
        let whose = flows.map_or("any flow".into(), |_| format!("{field}.flows"));
        for (i, &l) in links.iter().enumerate() {
            let name = self.link_name(l as usize);
            let message = format!("no packet of {whose} {crosses} link {name}");
            ensure(met[l as usize], format!("{field}.links[{i}]"), message)?;
        }
        for (i, &f) in flows.into_iter().flatten().enumerate() {
            let routes = self.traced_routes(Some(&[f]));
            let meets = |route: &&[u32]| reached(route).iter().any(|l| links.contains(l));
            let message = format!("no packet of flow {f} {crosses} a link of {field}.links");
            ensure(
                routes.iter().any(meets),
                format!("{field}.flows[{i}]"),
                message,
            )?;
        }
        Ok(())
    }

    /// The routes, both ways, of the flows named (`None`: every flow, the
    /// arrivals' included).
    fn traced_routes(&self, flows: Option<&[u32]>) -> Vec<&[u32]> {
        let both_ways = |f: usize| [self.flows.path.get(f), self.flows.reverse_path.get(f)];
        match flows {
            Some(flows) => flows.iter().flat_map(|&f| both_ways(f as usize)).collect(),
            None => (0..self.flows.len())
                .flat_map(both_ways)
                .chain(
                    self.arrivals
                        .iter()
                        .flat_map(|a| &a.routes)
                        .flat_map(|r| [&r.path[..], &r.reverse_path[..]]),
                )
                .collect(),
        }
    }

    fn check_links(&self, nodes: u32) -> Result<(), ScenarioError> {
        let l = &self.links;
        same_length(
            "links",
            &[
                ("from", l.from.len()),
                ("to", l.to.len()),
                ("rate_bps", l.rate_bps.len()),
                ("delay_ns", l.delay_ns.len()),
                ("qdisc", l.qdisc.len()),
                ("monitor", l.monitor.len()),
            ],
        )?;
        if !l.loss.is_empty() {
            same_length("links", &[("from", l.from.len()), ("loss", l.loss.len())])?;
        }
        check_names(&l.names, "links.names")?;
        let named: usize = l.names.iter().map(NameRun::len).sum();
        ensure(
            named == l.len(),
            "links.names",
            format!("names {named}, but there are {}", l.len()),
        )?;
        for (q, spec) in l.qdiscs.iter().enumerate() {
            spec.validate().map_err(|e| {
                ScenarioError::new(format!("links.qdiscs[{q}].{}", e.field), e.message)
            })?;
        }
        for i in 0..l.len() {
            let f = |name: &str| format!("links.{name}[{i}]");
            ensure(l.from[i] < nodes, f("from"), "no such node")?;
            ensure(l.to[i] < nodes, f("to"), "no such node")?;
            ensure(
                l.from[i] != l.to[i],
                f("to"),
                "a link must join two different nodes",
            )?;
            ensure(l.rate_bps[i] > 0, f("rate_bps"), "must be positive")?;
            ensure(
                (0.0..1.0).contains(&l.loss_of(i)),
                f("loss"),
                format!("a probability in [0, 1), got {}", l.loss_of(i)),
            )?;
            ensure(
                (l.qdisc[i] as usize) < l.qdiscs.len(),
                f("qdisc"),
                format!("no such discipline ({} are listed)", l.qdiscs.len()),
            )?;
        }
        Ok(())
    }

    fn check_group(&self, group: &FlowGroup, field: &str) -> Result<(), ScenarioError> {
        let f = |name: &str| format!("{field}.{name}");
        match group {
            FlowGroup::Tcp {
                profile,
                size_bytes,
                off_time,
                keep_connection,
                ..
            } => {
                ensure(
                    (*profile as usize) < self.tcp_profiles.len(),
                    f("profile"),
                    "no such TCP profile",
                )?;
                ensure(
                    size_bytes.is_none_or(|b| b > 0),
                    f("size"),
                    "must be positive",
                )?;
                if let Some(d) = off_time {
                    check_dist(d, &f("off_time"))?;
                }
                ensure(
                    !*keep_connection || off_time.is_some(),
                    f("keep_connection"),
                    "only an on-off source (off_time) has a next transfer",
                )?;
            }
            FlowGroup::Udp {
                packet_size,
                header_size,
                source,
                ..
            } => {
                ensure(*packet_size > 0, f("packet_size"), "must be positive")?;
                ensure(
                    header_size < packet_size,
                    f("header_size"),
                    "must be smaller than packet_size",
                )?;
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
        Ok(())
    }

    fn check_flows(&self) -> Result<(), ScenarioError> {
        let fl = &self.flows;
        let n = fl.len();
        same_length(
            "flows",
            &[
                ("group", n),
                ("src", fl.src.len()),
                ("dst", fl.dst.len()),
                ("start_ns", fl.start_ns.len()),
            ],
        )?;
        if !fl.stop_ns.is_empty() {
            same_length("flows", &[("group", n), ("stop_ns", fl.stop_ns.len())])?;
        }
        check_offsets(&fl.path, n, "flows.path")?;
        check_offsets(&fl.reverse_path, n, "flows.reverse_path")?;
        for i in 0..n {
            let group = fl.groups.get(fl.group[i] as usize).ok_or_else(|| {
                ScenarioError::new(
                    format!("flows.group[{i}]"),
                    format!("no such group ({} are listed)", fl.groups.len()),
                )
            })?;
            let (src, dst) = (fl.src[i], fl.dst[i]);
            self.check_path(fl.path.get(i), src, dst, &format!("flows.path[{i}]"))?;
            let group_stop = match group {
                FlowGroup::Tcp { stop_ns, .. } => {
                    let field = format!("flows.reverse_path[{i}]");
                    self.check_path(fl.reverse_path.get(i), dst, src, &field)?;
                    *stop_ns
                }
                // A UDP group's stop is checked against its flows' starts in Python.
                FlowGroup::Udp { .. } => None,
            };
            if fl
                .stop_of(i, group_stop)
                .is_some_and(|stop| stop <= fl.start_ns[i])
            {
                let field = match fl.stop_ns.get(i) {
                    Some(&stop) if stop > 0 => format!("flows.stop_ns[{i}]"),
                    _ => format!("flows.groups[{}].stop_ns", fl.group[i]),
                };
                return Err(ScenarioError::new(
                    field,
                    format!(
                        "must be later than the start of flow {i} ({} ns)",
                        fl.start_ns[i]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A path must be a chain of links from `from` to `to`, short enough
    /// for a packet's hop counter.
    fn check_path(
        &self,
        path: &[u32],
        from: u32,
        to: u32,
        field: &str,
    ) -> Result<(), ScenarioError> {
        ensure(!path.is_empty(), field, "must cross at least one link")?;
        ensure(path.len() < 255, field, "too many hops (at most 254)")?;
        let links = &self.links;
        let mut at = from;
        for &l in path {
            ensure((l as usize) < links.len(), field, format!("no link {l}"))?;
            if links.from[l as usize] != at {
                let name = self.link_name(l as usize);
                return Err(ScenarioError::new(
                    field,
                    format!("link {name} does not start where the previous one ends"),
                ));
            }
            at = links.to[l as usize];
        }
        ensure(at == to, field, "does not end at the destination")
    }

    /// Link `l`'s name, written out (for messages).
    fn link_name(&self, l: usize) -> String {
        let mut names = self.links.names.iter().flat_map(NameRun::expand);
        names.nth(l).unwrap_or_else(|| l.to_string())
    }
}

/// The numbers a trace's list names are those of existing `what`s, and
/// it names at least one.
fn check_indices(
    list: Option<&[u32]>,
    count: usize,
    what: &str,
    field: &str,
) -> Result<(), ScenarioError> {
    let Some(list) = list else { return Ok(()) };
    let message = format!("must name at least one {what}, or be left out for every {what}");
    ensure(!list.is_empty(), field, message)?;
    for (i, &x) in list.iter().enumerate() {
        let message = format!("no {what} {x}: there are {count}, numbered from 0");
        ensure((x as usize) < count, format!("{field}[{i}]"), message)?;
    }
    Ok(())
}

fn every_link(route: &[u32]) -> &[u32] {
    route
}

fn last_link(route: &[u32]) -> &[u32] {
    &route[route.len().saturating_sub(1)..]
}

/// The scenario's `ties`, read from its name (serde's `try_from`): an
/// unknown name is refused with the field and the names it may take.
impl TryFrom<String> for Ties {
    type Error = ScenarioError;

    fn try_from(name: String) -> Result<Self, ScenarioError> {
        Ties::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                let names = Ties::ALL.map(|t| format!("{:?}", t.name())).join(" or ");
                ScenarioError::new("ties", format!("must be {names}, not {name:?}"))
            })
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

#[cfg(test)]
mod tests {
    use crate::scenario::Ties;

    #[test]
    fn ties_are_read_and_written_by_name() {
        for ties in Ties::ALL {
            let json = serde_json::to_string(&ties).unwrap();
            assert_eq!(json, format!("{:?}", ties.name()));
            assert_eq!(serde_json::from_str::<Ties>(&json).unwrap(), ties);
        }
        let wrong = serde_json::from_str::<Ties>(r#""random""#).unwrap_err();
        let message = r#"ties: must be "hashed" or "numbered", not "random""#;
        assert!(wrong.to_string().starts_with(message), "{wrong}");
    }
}
