//! The plan: which acceleration each link and each flow uses, decided once
//! from the topology before the run, by pure functions with one
//! eligibility rule each, and applied to the links and routes in one place
//! (`Simulation::apply`). Nothing changes it during the run.

use aqmlab_qdisc::Backlog;

use crate::accel::fifo::ReservingFifo;
use crate::accel::inbox::Inbox;
use crate::accel::Accelerations;
use crate::engine::flow::{Flow, Transport};
use crate::engine::link::{Departures, Link, Queue};
use crate::engine::routes::{RouteRef, Routes};
use crate::engine::Simulation;
use crate::scenario::{TcpProfile, Ties};
use crate::Time;

/// What the plan reads: the network as built, before any acceleration.
pub struct Topology<'a> {
    pub links: &'a [Link],
    pub routes: &'a Routes,
    pub flows: &'a [Flow],
    pub profiles: &'a [TcpProfile],
    /// The links whose packets a trace records one by one, by link.
    pub traced: &'a [bool],
    /// The order of events of one kind at one time, which gathering links'
    /// inboxes keep too.
    pub ties: Ties,
}

/// Whether a flow's packets are answered ahead at each end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Answers {
    /// Its data packets, by its receiver.
    pub data: bool,
    /// Its ACKs, by its sender.
    pub acks: bool,
}

/// Which acceleration each link and flow uses.
pub struct Plan {
    /// How each link's departures are found.
    pub departures: Vec<Departures>,
    /// Some packets leaving the link go on into an express link, or into a
    /// gathering link's inbox.
    pub feeds_express: Vec<bool>,
    /// By flow.
    pub answers: Vec<Answers>,
    /// The gathering links' inboxes, by link.
    pub inboxes: Vec<Inbox>,
    /// Fetch what the next events read early (`prefetch.rs`).
    pub prefetch: bool,
}

impl Plan {
    pub fn build(t: &Topology, acc: Accelerations) -> Self {
        let mut departures: Vec<_> = (t.links.iter().zip(t.traced))
            .map(|(link, &traced)| base_departures(link, traced, acc))
            .collect();
        let mut feeds_express = vec![false; t.links.len()];
        if acc.reserve && acc.express {
            let feeders = single_feeders(t.routes, t.links.len());
            for (l, feeder) in feeders.into_iter().enumerate() {
                let express =
                    |&f: &u32| is_express(&t.links[l], departures[l]) && !t.links[f as usize].lossy;
                if let Some(f) = feeder.filter(express) {
                    departures[l] = Departures::Express;
                    feeds_express[f as usize] = true;
                }
            }
        }
        let answers = answers(t, &departures, &feeds_express, acc);
        let inboxes = match acc.gather {
            true => gathering(t, &mut departures, &mut feeds_express, &answers),
            false => Vec::new(),
        };
        Plan {
            departures,
            feeds_express,
            answers,
            inboxes,
            prefetch: acc.prefetch,
        }
    }
}

/// A link's departures before express links and gathering are found: a
/// FIFO reserves them (`reserve.rs`), a discipline that only its arrivals
/// and departures change defers them (`defer.rs`), any other, and any link
/// a trace records packet by packet, runs them on events.
pub fn base_departures(link: &Link, traced: bool, acc: Accelerations) -> Departures {
    if traced {
        Departures::Events
    } else if acc.reserve && link.queue.fifo_limit().is_some() {
        Departures::Reserved
    } else if acc.defer && link.queue.defers_departures() {
        Departures::Deferred
    } else {
        Departures::Events
    }
}

/// Each link's one feeding link, if every route that reaches it does so
/// from that same link (never from a host).
pub fn single_feeders(routes: &Routes, links: usize) -> Vec<Option<u32>> {
    const UNSEEN: u32 = u32::MAX - 1;
    const NOT_ONE: u32 = u32::MAX;
    let mut feeder = vec![UNSEEN; links];
    for (previous, l) in routes.hops() {
        let f = &mut feeder[l as usize];
        let from = previous.unwrap_or(NOT_ONE);
        *f = if *f == UNSEEN || *f == from {
            from
        } else {
            NOT_ONE
        };
    }
    feeder
        .into_iter()
        .map(|f| (f < UNSEEN).then_some(f))
        .collect()
}

/// An express link (`express.rs`): a reserving FIFO, unmonitored (its
/// samples and delays are taken in time), with a single feeder that loses
/// nothing on its wire (whose pipe head, which the express link skips,
/// draws for each packet: `engine::wire`).
pub fn is_express(link: &Link, departures: Departures) -> bool {
    departures == Departures::Reserved && !link.is_monitored()
}

/// How many routes cross each link.
fn route_uses(routes: &Routes, links: usize) -> Vec<u32> {
    let mut uses = vec![0u32; links];
    for (_, l) in routes.hops() {
        uses[l as usize] += 1;
    }
    uses
}

/// Which flows' packets are answered ahead (`ahead.rs`). A TCP flow of one
/// transfer (an on-off source's receiver ignores a past transfer's
/// stragglers) qualifies at either end when the answer leaves on a
/// reserving FIFO that no other route takes (`answer_link_passes`) and the
/// packet does not arrive over a traced link (which records its delivery)
/// nor over a lossy one (whose pipe head may lose it: `engine::wire`):
/// - data packets, at the receiver, if it answers each with one ACK at
///   once (no delayed ACKs);
/// - ACKs, at the sender, unless its window is traced (each sample writes
///   it out) or it stops at a time (it acts on its own then).
pub fn answers(
    t: &Topology,
    departures: &[Departures],
    feeds_express: &[bool],
    acc: Accelerations,
) -> Vec<Answers> {
    let uses = route_uses(t.routes, t.links.len());
    let passes = |arrival: RouteRef, answer: RouteRef, size: u32| {
        let in_time = t
            .routes
            .links(arrival)
            .last()
            .is_some_and(|l| t.traced[l as usize] || t.links[l as usize].lossy);
        !in_time
            && t.routes.link(answer, 0).is_some_and(|a| {
                let a = a as usize;
                answer_link_passes(&t.links[a], departures[a], feeds_express[a], uses[a], size)
            })
    };
    (t.flows.iter())
        .map(|flow| match &flow.transport {
            Transport::Tcp(tcp) if tcp.on_off.is_none() => {
                let p = &t.profiles[tcp.profile as usize];
                Answers {
                    data: acc.answer_data
                        && !p.delayed_ack
                        && passes(flow.forward, flow.reverse, p.ack_size),
                    acks: acc.answer_acks
                        && !tcp.trace_cwnd
                        && !tcp.stops
                        && passes(flow.reverse, flow.forward, p.packet_size),
                }
            }
            _ => Answers::default(),
        })
        .collect()
}

/// Whether an answer of `size` bytes may be sent ahead onto link `a`, the
/// first of its route: a reserving FIFO (its future is its arrivals') that
/// no other route takes (nothing else reaches it before the answer), not
/// monitored (its samples and delays are taken in time), feeding no
/// express link (which could drop the answer) and that lets a packet of
/// the answer's size pass when idle.
pub fn answer_link_passes(
    a: &Link,
    departures: Departures,
    feeds_express: bool,
    uses: u32,
    size: u32,
) -> bool {
    uses == 1
        && matches!(departures, Departures::Reserved | Departures::Express)
        && !a.is_monitored()
        && !feeds_express
        && (a.queue.fifo_limit()).is_some_and(|limit| limit.admits(Backlog::default(), size))
}

/// Find the gathering links (`gather.rs`): reserving, unmonitored FIFOs
/// not express, every arrival of which comes from the first link of an
/// answer's route whose data packets are answered ahead and reach their
/// receiver through an express link. Such a data packet's arrival at the
/// receiver is known once the link before the express one has sent it, at
/// least its `sent_ahead` before it reaches the express link, so its answer
/// comes at least that, the express link's delay and the answer link's
/// after (the inbox's lead).
pub fn gathering(
    t: &Topology,
    departures: &mut [Departures],
    feeds_express: &mut [bool],
    answers: &[Answers],
) -> Vec<Inbox> {
    /// What a link is to gathering, in 12 bytes (a million flows have
    /// four million links). Times in ns, saturated: a lead or tail too
    /// long for 32 bits is still a bound.
    #[derive(Clone, Copy)]
    enum Role {
        /// May gather: the least lead and tail of its feeders so far.
        Candidate(u32, u32),
        /// An answer link: the lead and tail of the inbox it feeds.
        Feeds(u32, u32),
        No,
    }
    let ns = |t: Time| u32::try_from(t).unwrap_or(u32::MAX);
    let mut roles: Vec<Role> = (t.links.iter().zip(departures.iter()))
        .map(
            |(link, &d)| match d == Departures::Reserved && !link.is_monitored() {
                true => Role::Candidate(u32::MAX, u32::MAX),
                false => Role::No,
            },
        )
        .collect();
    for (flow, answered) in t.flows.iter().zip(answers) {
        let answer = t.routes.link(flow.reverse, 0);
        let (Some(answer), true) = (answer, answered.data) else {
            continue;
        };
        let hops = t.routes.links(flow.forward).count();
        let mut last_two = t.routes.links(flow.forward).skip(hops.saturating_sub(2));
        let (Some(b), Some(e)) = (last_two.next(), last_two.next()) else {
            continue;
        };
        // A lossy answer link's pipe head draws for each answer: it feeds
        // no inbox, which would skip it.
        let a = &t.links[answer as usize];
        if departures[e as usize] == Departures::Express && !a.lossy {
            // `tx_time(1)`: at least a nanosecond, so that a packet due now
            // is always due before any answer to come.
            let tail = a.delay + a.tx_time(1);
            let sent_ahead = t.links[b as usize].sent_ahead(departures[b as usize]);
            let lead = sent_ahead + t.links[e as usize].delay + tail;
            // An answer link is a route's first: it gathers nothing.
            roles[answer as usize] = Role::Feeds(ns(lead), ns(tail));
        }
    }
    for (previous, l) in t.routes.hops() {
        if let Role::Candidate(lead, tail) = roles[l as usize] {
            roles[l as usize] = match previous.map(|f| roles[f as usize]) {
                Some(Role::Feeds(l2, t2)) => Role::Candidate(lead.min(l2), tail.min(t2)),
                _ => Role::No,
            };
        }
    }
    let gathers = |role: Role| matches!(role, Role::Candidate(lead, _) if lead < u32::MAX);
    for (previous, l) in t.routes.hops() {
        if let (Some(f), true) = (previous, gathers(roles[l as usize])) {
            feeds_express[f as usize] = true;
        }
    }
    let mut inboxes = Vec::new();
    for (l, &role) in roles.iter().enumerate() {
        if let (Role::Candidate(lead, tail), true) = (role, gathers(role)) {
            departures[l] = Departures::Gathered;
            inboxes.push(Inbox::new(l as u32, lead.into(), tail.into(), t.ties));
        }
    }
    inboxes
}

impl Simulation {
    /// The network as the plan reads it, with the links `traced`.
    pub(crate) fn topology<'a>(&'a self, traced: &'a [bool]) -> Topology<'a> {
        Topology {
            links: &self.links,
            routes: &self.routes,
            flows: &self.flows,
            profiles: &self.scenario.tcp_profiles,
            traced,
            ties: self.scenario.ties,
        }
    }

    /// Set every link and route as `plan` says: the one place the
    /// accelerations' marks are written.
    pub(crate) fn apply(&mut self, plan: Plan) {
        self.accel.prefetch = plan.prefetch;
        for ((link, departures), feeds) in self
            .links
            .iter_mut()
            .zip(plan.departures)
            .zip(plan.feeds_express)
        {
            link.departures = departures;
            link.feeds_express = feeds;
            if link.reserves() {
                let limit = (link.queue.fifo_limit()).expect("only a FIFO reserves");
                link.queue = Queue::Reserving(ReservingFifo::new(limit));
            }
        }
        let links = &self.links;
        self.routes.mark_express(|l| links[l as usize].is_express());
        for (flow, answers) in self.flows.iter().zip(plan.answers) {
            self.routes.set_answered_ahead(flow.forward, answers.data);
            self.routes.set_answered_ahead(flow.reverse, answers.acks);
        }
        self.accel.inboxes = plan.inboxes;
    }
}

#[cfg(test)]
mod tests {
    use aqmlab_qdisc::{Qdisc, QdiscSpec};

    use super::*;
    use crate::engine::flow::TcpFlow;
    use crate::scenario::TcpVariant;
    use crate::tcp::testing::profile;
    use crate::tcp::TcpSender;

    const FIFO: &str = r#"{"kind": "droptail", "limit": {"packets": 10}}"#;
    const QSDRR: &str = r#"{"kind": "qsdrr", "limit": {"packets": 10}}"#;
    const CODEL: &str = r#"{"kind": "codel", "limit": {"packets": 10}}"#;

    fn link(spec: &str, monitored: bool) -> Link {
        let spec: QdiscSpec = serde_json::from_str(spec).unwrap();
        Link::new(
            10_000_000,
            1_000_000,
            Qdisc::from_spec(&spec, 0),
            monitored.then_some(0),
        )
    }

    /// A dumbbell of `n` TCP flows: links 0 and 1 the bottleneck each way
    /// (`bottleneck` and a FIFO back, the first monitored), then each
    /// flow's four FIFO access links (sender's out and back, receiver's in
    /// and out).
    struct Net {
        links: Vec<Link>,
        routes: Routes,
        flows: Vec<Flow>,
        profiles: Vec<TcpProfile>,
        traced: Vec<bool>,
    }

    impl Net {
        fn dumbbell(n: u32, bottleneck: &str) -> Self {
            let mut links = vec![link(bottleneck, true), link(FIFO, false)];
            let (mut routes, mut flows) = (Routes::default(), Vec::new());
            let p = profile(TcpVariant::Reno);
            for _ in 0..n {
                let a = links.len() as u32;
                links.extend((0..4).map(|_| link(FIFO, false)));
                let pair = routes.intern_pair(&[a, 0, a + 2], &[a + 3, 1, a + 1]);
                let tcp = TcpFlow::new(0, TcpSender::new(&p, None), None, false);
                flows.push(Flow::new(0, pair, 0, None, Transport::Tcp(tcp)));
            }
            let traced = vec![false; links.len()];
            Net {
                links,
                routes,
                flows,
                profiles: vec![p],
                traced,
            }
        }

        fn plan(&self, acc: Accelerations) -> Plan {
            Plan::build(
                &Topology {
                    links: &self.links,
                    routes: &self.routes,
                    flows: &self.flows,
                    profiles: &self.profiles,
                    traced: &self.traced,
                    ties: Ties::default(),
                },
                acc,
            )
        }

        fn tcp(&mut self, f: usize) -> &mut TcpFlow {
            match &mut self.flows[f].transport {
                Transport::Tcp(tcp) => tcp,
                Transport::Udp(_) => unreachable!(),
            }
        }
    }

    #[test]
    fn a_fifo_reserves_a_discipline_without_a_clock_defers_the_rest_run_on_events() {
        let all = Accelerations::ALL;
        assert_eq!(
            base_departures(&link(FIFO, false), false, all),
            Departures::Reserved
        );
        assert_eq!(
            base_departures(&link(QSDRR, true), false, all),
            Departures::Deferred
        );
        assert_eq!(
            base_departures(&link(CODEL, false), false, all),
            Departures::Events
        );
        assert_eq!(
            base_departures(&link(FIFO, false), true, all),
            Departures::Events,
            "traced"
        );
        let none = Accelerations::NONE;
        assert_eq!(
            base_departures(&link(FIFO, false), false, none),
            Departures::Events
        );
        assert_eq!(
            base_departures(&link(QSDRR, false), false, none),
            Departures::Events
        );
    }

    #[test]
    fn a_single_feeder_is_one_link_for_every_route_never_a_host() {
        let net = Net::dumbbell(3, FIFO);
        let feeders = single_feeders(&net.routes, net.links.len());
        // The bottlenecks have three feeders; a receiver's link the
        // bottleneck alone; a sender's link is fed by its host.
        assert_eq!(feeders[0], None);
        assert_eq!(feeders[1], None);
        for i in 0..3 {
            let a = 2 + 4 * i;
            assert_eq!(feeders[a], None, "first hop");
            assert_eq!(feeders[a + 1], Some(1), "back to the sender");
            assert_eq!(feeders[a + 2], Some(0), "to the receiver");
            assert_eq!(feeders[a + 3], None, "first hop back");
        }
        assert!(is_express(&link(FIFO, false), Departures::Reserved));
        assert!(
            !is_express(&link(FIFO, true), Departures::Reserved),
            "monitored"
        );
        assert!(!is_express(&link(FIFO, false), Departures::Events));
    }

    #[test]
    fn an_answer_link_passes_only_if_it_is_its_routes_alone() {
        let fifo = link(FIFO, false);
        assert!(answer_link_passes(
            &fifo,
            Departures::Reserved,
            false,
            1,
            40
        ));
        assert!(answer_link_passes(&fifo, Departures::Express, false, 1, 40));
        assert!(
            !answer_link_passes(&fifo, Departures::Reserved, false, 2, 40),
            "shared"
        );
        assert!(!answer_link_passes(&fifo, Departures::Events, false, 1, 40));
        assert!(
            !answer_link_passes(&fifo, Departures::Reserved, true, 1, 40),
            "feeds express"
        );
        let monitored = link(FIFO, true);
        assert!(!answer_link_passes(
            &monitored,
            Departures::Reserved,
            false,
            1,
            40
        ));
        let tiny = link(r#"{"kind": "droptail", "limit": {"bytes": 39}}"#, false);
        assert!(
            !answer_link_passes(&tiny, Departures::Reserved, false, 1, 40),
            "refuses it"
        );
    }

    #[test]
    fn the_dumbbell_plan() {
        let mut net = Net::dumbbell(3, FIFO);
        let plan = net.plan(Accelerations::ALL);
        use Departures::*;
        assert_eq!(plan.departures[0], Reserved, "monitored: not express");
        assert_eq!(plan.departures[1], Gathered, "the reverse bottleneck");
        assert_eq!(
            &plan.departures[2..6],
            &[Reserved, Express, Express, Reserved]
        );
        assert!(plan.feeds_express[0] && plan.feeds_express[1]);
        assert!(
            plan.feeds_express[5],
            "a receiver's ACK link feeds the inbox"
        );
        let both = Answers {
            data: true,
            acks: true,
        };
        assert!(plan.answers.iter().all(|&a| a == both));
        assert_eq!(plan.inboxes.len(), 1);
        // Each reason not to answer ahead, one flow each.
        net.profiles.push(TcpProfile {
            delayed_ack: true,
            ..net.profiles[0].clone()
        });
        net.tcp(0).profile = 1;
        net.tcp(1).trace_cwnd = true;
        net.tcp(2).stops = true;
        let plan = net.plan(Accelerations::ALL);
        let answers: Vec<_> = plan.answers.iter().map(|a| (a.data, a.acks)).collect();
        assert_eq!(answers, [(false, true), (true, false), (true, false)]);
        // A traced link records what arrives over it: not answered ahead,
        // and it runs on events.
        let mut net = Net::dumbbell(2, FIFO);
        net.traced[2 + 2] = true;
        let plan = net.plan(Accelerations::ALL);
        assert_eq!(plan.departures[4], Events);
        assert!(!plan.answers[0].data && plan.answers[1].data);
    }

    /// A lossy link's pipe head draws for each packet: nothing may skip
    /// it, and only what would steps aside.
    #[test]
    fn the_plan_steps_aside_for_lossy_links_only() {
        use Departures::*;
        // The bottleneck loses: the receivers' links it feeds are not
        // express; everything else is as in the lossless plan.
        let mut net = Net::dumbbell(2, FIFO);
        net.links[0].lossy = true;
        let plan = net.plan(Accelerations::ALL);
        assert_eq!(plan.departures[0], Reserved, "its own queue still reserves");
        assert_eq!(
            &plan.departures[2..6],
            &[Reserved, Express, Reserved, Reserved]
        );
        assert!(!plan.feeds_express[0] && plan.feeds_express[1]);
        // Flow 0's last link loses: its data packets are not answered
        // ahead, its ACKs are, and flow 1 is untouched.
        let mut net = Net::dumbbell(2, FIFO);
        net.links[2 + 2].lossy = true;
        let plan = net.plan(Accelerations::ALL);
        assert_eq!(plan.departures[4], Express, "a lossy link may be express");
        assert!(!plan.answers[0].data && plan.answers[0].acks);
        assert!(plan.answers[1].data && plan.answers[1].acks);
        // Flow 0's ACKs leave on a lossy link: it feeds no inbox, which
        // would skip its pipe head, so the reverse bottleneck, which it
        // feeds, gathers nothing.
        let mut net = Net::dumbbell(2, FIFO);
        net.links[2 + 3].lossy = true;
        let plan = net.plan(Accelerations::ALL);
        assert!(!plan.feeds_express[2 + 3] && !plan.feeds_express[6 + 3]);
        assert_eq!(plan.departures[1], Reserved);
        assert!(plan.answers.iter().all(|a| a.data && a.acks));
    }

    #[test]
    fn nothing_without_its_acceleration_or_what_it_needs() {
        let net = Net::dumbbell(2, QSDRR);
        let none = net.plan(Accelerations::NONE);
        assert!(none.departures.iter().all(|&d| d == Departures::Events));
        assert!(none.answers.iter().all(|&a| a == Answers::default()));
        assert!(none.inboxes.is_empty() && !none.feeds_express.iter().any(|&f| f));
        let no_answers = net.plan(Accelerations {
            answer_data: false,
            ..Accelerations::ALL
        });
        assert!(
            no_answers.inboxes.is_empty(),
            "gathering needs answers ahead"
        );
        let only_express = net.plan(Accelerations {
            express: true,
            ..Accelerations::NONE
        });
        assert!(
            !only_express.departures.contains(&Departures::Express),
            "needs reserve"
        );
        assert_eq!(
            net.plan(Accelerations::ALL).departures[0],
            Departures::Deferred
        );
    }
}
