//! The `Sample` event: every `sample_interval` the monitored links' queues
//! and utilization, the senders' windows, and (`trace.queue_flows`) the
//! flows per queue of one link's discipline, into the time series.

use crate::engine::events::Event;
use crate::engine::flow::{Flow, Transport};
use crate::engine::Simulation;
use crate::measure::kept_samples::SenderSample;
use crate::tcp::Phase;
use crate::Time;

impl Simulation {
    /// A `Sample` event: sample now, and schedule the next.
    pub(crate) fn sample(&mut self) {
        self.sample_links();
        self.sample_senders();
        if let Some(link) = self.scenario.trace.queue_flows {
            self.sample_queue_flows(link as usize);
        }
        self.sample_due = self.now + self.scenario.sample_interval_ns;
        self.events.schedule(self.sample_due, Event::Sample);
    }

    /// Each monitored link's backlog, and its utilization since the last
    /// sample.
    fn sample_links(&mut self) {
        let now = self.now;
        let interval = self.scenario.sample_interval_ns;
        for i in 0..self.links.len() {
            let Some(m) = self.links[i].monitor() else {
                continue;
            };
            self.settle_for_sample(i);
            let (link, record) = (&self.links[i], &self.link_records[i]);
            let b = link.queue.backlog();
            let departed = link.queue.stats(&record.counters).departure_bytes;
            self.series
                .push(now, "queue_packets", i as u32, b.packets as f64);
            self.series
                .push(now, "queue_bytes", i as u32, b.bytes as f64);
            let rate_bps = record.rate_bps;
            let m = &mut self.monitors[m];
            if now > 0 {
                let util = (departed - m.departed_at_sample) as f64 * 8e9
                    / (rate_bps as f64 * interval as f64);
                self.series.push(now, "link_utilization", i as u32, util);
            }
            m.departed_at_sample = departed;
        }
    }

    /// The sum of the established senders' windows, how many of them are
    /// in congestion avoidance, and the windows of the flows traced.
    fn sample_senders(&mut self) {
        let now = self.now;
        let mut sum_cwnd = 0.0;
        let mut in_ca = 0u32;
        let mut active = 0u32;
        self.sampled.admit(self.flows.len());
        let mut kept = self.accel.kept_samples.take().peekable();
        let mut ended = false;
        for &i in &self.sampled.ids {
            let Transport::Tcp(tcp) = &self.flows[i as usize].transport else {
                continue;
            };
            let p = &self.scenario.tcp_profiles[tcp.profile as usize];
            // A sender that answered ahead past now left what it had then
            // (an ended flow's late ACK may have kept one: it is ended then).
            while kept.next_if(|&(f, _)| f < i).is_some() {}
            let sender = match kept.next_if(|&(f, _)| f == i) {
                Some((_, sample)) => sample,
                None => {
                    ended |=
                        tcp.on_off.is_none() && !tcp.trace_cwnd && tcp.sender.phase == Phase::Done;
                    SenderSample::of(&tcp.sender, p)
                }
            };
            if sender.established {
                active += 1;
                sum_cwnd += sender.window;
                in_ca += sender.in_congestion_avoidance as u32;
            }
            if tcp.trace_cwnd {
                self.series.push(now, "cwnd", i, tcp.sender.cwnd());
            }
        }
        if ended {
            self.sampled.forget_ended(&self.flows);
        }
        self.series.push(now, "sum_cwnd", u32::MAX, sum_cwnd);
        self.series.push(now, "flows_in_ca", u32::MAX, in_ca as f64);
        self.series
            .push(now, "active_flows", u32::MAX, active as f64);
    }

    /// The most and the fewest sending flows that link `l`'s discipline
    /// puts in one of the queues that hold any (a flow's first queue of
    /// `QueueDiscipline::queues_of`): the true flows-per-queue balance of
    /// seed 000's chapter 5, which a Bloom-filter distributor only
    /// estimates. A flow sends from its start to its stop (UDP) or to the
    /// end of the run (TCP).
    fn sample_queue_flows(&mut self, l: usize) {
        self.settle_for_sample(l);
        let now = self.now;
        let mut sending = std::mem::take(&mut self.sending);
        sending.advance(&self.flows, now);
        let queue = &self.links[l].queue;
        let mut per_queue: Vec<u32> = Vec::new();
        for &f in &sending.flows {
            let Some(&q) = queue.queues_of(f as u64).first() else {
                continue;
            };
            if per_queue.len() <= q as usize {
                per_queue.resize(q as usize + 1, 0);
            }
            per_queue[q as usize] += 1;
        }
        self.sending = sending;
        let used = per_queue.iter().filter(|&&n| n > 0);
        let (Some(most), Some(fewest)) = (used.clone().max(), used.clone().min()) else {
            return;
        };
        // A queue no flow maps to is not seen here: `queue_flows_queues`
        // says how many hold a flow, so that a reader knows when some hold
        // none (a max/min of infinity).
        let held = used.count();
        self.series
            .push(now, "queue_flows_max", l as u32, *most as f64);
        self.series
            .push(now, "queue_flows_min", l as u32, *fewest as f64);
        self.series
            .push(now, "queue_flows_queues", l as u32, held as f64);
    }
}

/// The flows sending at a sample, kept from one sample to the next so that
/// a sample costs the flows sending and those that started since, not every
/// flow of the run (seed 000's churn runs have 400,000 flows, 1,000 at a
/// time).
#[derive(Debug, Default)]
pub(crate) struct SendingFlows {
    /// Whether `by_start` is made (at the first sample).
    made: bool,
    /// The scenario's flows, in order of start.
    by_start: Vec<u32>,
    /// How many of `by_start` have started.
    started: usize,
    /// Flows made during the run (arrivals, which start as they are made)
    /// are those from this index on.
    arrived_from: usize,
    /// The flows started and not stopped at the last sample.
    flows: Vec<u32>,
}

impl SendingFlows {
    /// Bring the set to `now`: add the flows started since, drop those
    /// stopped.
    fn advance(&mut self, flows: &[Flow], now: Time) {
        if !self.made {
            self.made = true;
            self.by_start = (0..flows.len() as u32).collect();
            self.by_start.sort_by_key(|&f| (flows[f as usize].start, f));
            self.arrived_from = flows.len();
        }
        while let Some(&f) = self.by_start.get(self.started) {
            if flows[f as usize].start > now {
                break;
            }
            self.flows.push(f);
            self.started += 1;
        }
        self.flows
            .extend(self.arrived_from as u32..flows.len() as u32);
        self.arrived_from = self.arrived_from.max(flows.len());
        self.flows.retain(|&f| match &flows[f as usize].transport {
            Transport::Udp(udp) => udp.stop.is_none_or(|stop| now < stop),
            Transport::Tcp(_) => true,
        });
    }
}

/// The flows a sample visits, in flow order (the order of the sums and of
/// the accelerations' kept samples): every TCP flow but those whose one
/// transfer has ended (no on-off source, no traced window), so that a run
/// of many short transfers costs a sample its live flows, not every flow
/// it has had.
#[derive(Default)]
pub(crate) struct SampledFlows {
    ids: Vec<u32>,
    /// Flows up to here are admitted.
    seen: usize,
}

impl SampledFlows {
    /// Admit the flows created since the last sample.
    fn admit(&mut self, flows: usize) {
        self.ids.extend(self.seen as u32..flows as u32);
        self.seen = flows;
    }

    /// Drop the flows whose one transfer has ended (UDP flows too: a
    /// sample never reads them).
    fn forget_ended(&mut self, flows: &[Flow]) {
        self.ids.retain(|&i| match &flows[i as usize].transport {
            Transport::Tcp(tcp) => {
                tcp.on_off.is_some() || tcp.trace_cwnd || tcp.sender.phase != Phase::Done
            }
            _ => false,
        });
    }
}
