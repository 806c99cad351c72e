//! Poisson arrivals of TCP flows (short-flow workloads): each arrival is a
//! new flow, on a route drawn uniformly from the process's routes, of a size
//! drawn from its distribution.

use aqmlab_qdisc::rng::Rng;

use crate::engine::events::Event;
use crate::engine::flow::{Flow, TcpFlow, Transport};
use crate::engine::routes::RouteRef;
use crate::engine::Simulation;
use crate::scenario::ArrivalSpec;
use crate::tcp::TcpSender;
use crate::Time;

pub struct ArrivalProcess {
    spec: ArrivalSpec,
    group: u32,
    /// Forward and reverse.
    routes: Vec<(RouteRef, RouteRef)>,
    rng: Rng,
}

impl ArrivalProcess {
    pub fn new(spec: ArrivalSpec, group: u32, routes: Vec<(RouteRef, RouteRef)>, rng: Rng) -> Self {
        Self {
            spec,
            group,
            routes,
            rng,
        }
    }

    /// The time of the first arrival (drawn from the process's stream).
    pub fn first(&mut self) -> Time {
        self.spec.start_ns + self.gap()
    }

    /// The next flow's routes (forward, reverse) and size in payload bytes.
    fn draw(&mut self) -> ((RouteRef, RouteRef), u64) {
        let routes = self.routes[self.rng.below(self.routes.len() as u64) as usize];
        let size = self.spec.size_bytes.sample(&mut self.rng).ceil().max(1.0);
        (routes, size as u64)
    }

    /// The time to the next arrival.
    fn gap(&mut self) -> Time {
        (self.rng.exponential(1.0 / self.spec.rate_per_s) * 1e9) as Time
    }
}

impl Simulation {
    /// Arrival process `a`'s next flow starts now.
    pub(crate) fn arrival(&mut self, a: usize) {
        let now = self.now;
        let process = &mut self.arrivals[a];
        if process.spec.stop_ns.is_some_and(|s| now >= s) {
            return;
        }
        let (routes, size) = process.draw();
        let next = now + process.gap();
        let (profile, group) = (process.spec.profile, process.group);
        self.events.schedule(next, Event::Arrival(a as u32));
        let p = &self.scenario.tcp_profiles[profile as usize];
        let id = self.flows.len() as u32;
        let tcp = TcpFlow::new(profile, TcpSender::new(p, Some(size)), None, false);
        let flow = Flow::new(group, routes, now, Some(size), Transport::Tcp(tcp));
        self.flows.push(flow);
        self.introduce_hosts(id);
        self.flow_start(id);
    }
}
