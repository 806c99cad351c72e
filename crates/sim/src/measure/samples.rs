//! The `Sample` event: every `sample_interval` the monitored links' queues
//! and utilization, the senders' windows, and (`trace.queue_flows`) the
//! flows per queue of one link's discipline, into the time series.

use crate::engine::events::Event;
use crate::engine::flow::Transport;
use crate::engine::Simulation;
use crate::measure::kept_samples::SenderSample;

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
        let mut kept = self.accel.kept_samples.take().peekable();
        for (i, flow) in self.flows.iter().enumerate() {
            let Transport::Tcp(tcp) = &flow.transport else {
                continue;
            };
            let p = &self.scenario.tcp_profiles[tcp.profile as usize];
            // A sender that answered ahead past now left what it had then.
            let sender = match kept.next_if(|&(f, _)| f == i as u32) {
                Some((_, sample)) => sample,
                None => SenderSample::of(&tcp.sender, p),
            };
            if sender.established {
                active += 1;
                sum_cwnd += sender.window;
                in_ca += sender.in_congestion_avoidance as u32;
            }
            if tcp.trace_cwnd {
                self.series.push(now, "cwnd", i as u32, tcp.sender.cwnd());
            }
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
        let (now, queue) = (self.now, &self.links[l].queue);
        let mut per_queue: Vec<u32> = Vec::new();
        for (i, flow) in self.flows.iter().enumerate() {
            let sending = flow.start <= now
                && match &flow.transport {
                    Transport::Udp(udp) => udp.stop.is_none_or(|stop| now < stop),
                    Transport::Tcp(_) => true,
                };
            if !sending {
                continue;
            }
            let Some(&q) = queue.queues_of(i as u64).first() else {
                continue;
            };
            if per_queue.len() <= q as usize {
                per_queue.resize(q as usize + 1, 0);
            }
            per_queue[q as usize] += 1;
        }
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
