//! Traces (docs/user-guide.md, "Traces"): what a run records beyond its
//! result tables, each part asked for on its own by the scenario
//! (`scenario::Trace`):
//! - a per-packet event trace ([`PacketLog`]), filtered by link and flow;
//! - a capture of chosen links in pcap format, with synthesized IPv4 and
//!   TCP/UDP headers ([`pcap`]);
//! - each flow's throughput over fixed windows ([`FlowSeries`]);
//! - each flow's one-way delay, jitter and reordering ([`FlowStats`]).
//!
//! The engine calls a [`Recorder`] at four points: a packet is enqueued at
//! a link (offered to its discipline), dropped there, dequeued (starts on
//! the link's transmitter), delivered at its host. A run that asks for
//! nothing has no recorder, and each point costs a test of an `Option`.
//!
//! Per-packet records (the event trace, the capture) need each packet's
//! passage through a traced link at its own time: the links they record
//! ([`Trace::traced_links`]) run on their own events, as in the reference,
//! and packets delivered over them are taken in at their arrival
//! (`accel::plan`). The per-flow figures are taken at the receiver, with
//! the engine's clock set to the packet's arrival even where the arrival's
//! work is done ahead of it, and need no such thing.

mod filter;
mod flow_series;
mod flow_stats;
mod packets;
pub mod pcap;

pub use filter::Filter;
pub use flow_series::FlowSeries;
pub use flow_stats::{FlowStats, OneWay};
pub use packets::{PacketLog, Reason};
pub use pcap::{Capture, FlowHeaders};

use aqmlab_qdisc::Dropped;

use crate::engine::flow::Flow;
use crate::engine::routes::Routes;
use crate::packet::SimPacket;
use crate::scenario::{Trace, TraceEvent};
use crate::Time;

impl Trace {
    /// The links at which packets are recorded one by one (by the event
    /// trace or the capture), by link: those named, or those the flows
    /// named cross, or every link.
    pub fn traced_links(&self, routes: &Routes, flows: &[Flow], links: usize) -> Vec<bool> {
        let mut traced = vec![false; links];
        let mut mark = |named: Option<&[u32]>, of_flows: Option<&[u32]>| match (named, of_flows) {
            (Some(named), _) => named.iter().for_each(|&l| traced[l as usize] = true),
            (None, Some(of_flows)) => {
                for flow in of_flows.iter().filter_map(|&f| flows.get(f as usize)) {
                    for l in routes.links(flow.forward).chain(routes.links(flow.reverse)) {
                        traced[l as usize] = true;
                    }
                }
            }
            (None, None) => traced.fill(true),
        };
        if let Some(p) = &self.packets {
            mark(p.links.as_deref(), p.flows.as_deref());
        }
        if let Some(p) = &self.pcap {
            mark(Some(&p.links), None);
        }
        traced
    }
}

/// What a run records of its packets as they go, by the scenario's
/// `trace`.
pub struct Recorder {
    packets: Option<PacketLog>,
    capture: Option<Capture>,
    series: Option<FlowSeries>,
    stats: Option<FlowStats>,
}

impl Recorder {
    /// The recorder a scenario asks for, or `None` if it asks for nothing.
    /// `links` is how many links there are; the window of the flows'
    /// figures opens at `warmup`.
    pub fn new(trace: &Trace, links: usize, warmup: Time) -> Option<Box<Self>> {
        if trace.is_off() {
            return None;
        }
        let packets = trace.packets.as_ref().map(|p| {
            let filter = Filter::new(p.links.as_deref(), p.flows.as_deref(), links);
            PacketLog::new(filter, &p.events)
        });
        let capture = (trace.pcap.as_ref())
            .map(|p| Capture::new(Filter::new(Some(&p.links), p.flows.as_deref(), links)));
        let series = (trace.flow_series_ns > 0).then(|| FlowSeries::new(trace.flow_series_ns));
        let stats = trace.flow_stats.then(|| FlowStats::new(warmup));
        Some(Box::new(Self {
            packets,
            capture,
            series,
            stats,
        }))
    }

    /// `packet` reached link `link` and is offered to its discipline.
    pub fn enqueued(&mut self, now: Time, link: u32, packet: &SimPacket) {
        if let Some(log) = &mut self.packets {
            log.record(now, TraceEvent::Enqueue, link, packet, None);
        }
    }

    /// Link `link`'s discipline dropped a packet: an arrival, or one it
    /// held.
    pub fn dropped(&mut self, now: Time, link: u32, dropped: &Dropped<SimPacket>) {
        if let Some(log) = &mut self.packets {
            let drop = Some((Reason::Discipline(dropped.reason), dropped.buffered));
            log.record(now, TraceEvent::Drop, link, &dropped.packet, drop);
        }
    }

    /// Link `link`'s wire lost `packet` (`engine::wire`).
    pub fn lost(&mut self, now: Time, link: u32, packet: &SimPacket) {
        if let Some(log) = &mut self.packets {
            log.record(
                now,
                TraceEvent::Drop,
                link,
                packet,
                Some((Reason::Lost, false)),
            );
        }
    }

    /// `packet` starts on link `link`'s transmitter.
    pub fn dequeued(&mut self, now: Time, link: u32, packet: &SimPacket) {
        if let Some(log) = &mut self.packets {
            log.record(now, TraceEvent::Dequeue, link, packet, None);
        }
        if let Some(capture) = &mut self.capture {
            capture.record(now, link, packet);
        }
    }

    /// `packet` reached its host over link `last_link` (the last of its
    /// route), its flow having delivered `delivered` payload bytes in
    /// order before it.
    pub fn delivered(
        &mut self,
        now: Time,
        last_link: Option<u32>,
        packet: &SimPacket,
        delivered: u64,
    ) {
        if let (Some(log), Some(link)) = (&mut self.packets, last_link) {
            log.record(now, TraceEvent::Deliver, link, packet, None);
        }
        if let Some(series) = &mut self.series {
            series.arrived(now, packet.flow, delivered);
        }
        if let Some(stats) = &mut self.stats {
            stats.received(now, packet);
        }
    }

    /// The event trace, if one was asked for.
    pub fn packet_log(&self) -> Option<&PacketLog> {
        self.packets.as_ref()
    }

    /// The capture, if one was asked for.
    pub fn capture(&self) -> Option<&Capture> {
        self.capture.as_ref()
    }

    /// The per-flow series, if asked for.
    pub fn flow_series(&self) -> Option<&FlowSeries> {
        self.series.as_ref()
    }

    /// The per-flow delays, jitter and reordering, if asked for.
    pub fn flow_stats(&self) -> Option<&FlowStats> {
        self.stats.as_ref()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use aqmlab_qdisc::{Ecn, TrafficClass};

    use crate::packet::{Kind, SimPacket};

    /// A 1000-byte packet of `flow`, ECN-capable, sent at time 0.
    pub fn packet(flow: u32, seq: u32, kind: Kind) -> SimPacket {
        SimPacket {
            stamp: 0,
            at: 0,
            flow,
            route: 0,
            seq,
            size: 1000,
            epoch: 0,
            hop: 0,
            kind,
            class: TrafficClass::Tcp,
            ecn: Ecn::Ect,
            ece: false,
            tag: 0,
        }
    }
}
