//! UDP sources: constant bit rate (with optional jitter), Poisson and on-off.

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::{Ecn, TrafficClass};

use super::sample_dist;
use crate::engine::events::Event;
use crate::engine::flow::Transport;
use crate::engine::Simulation;
use crate::packet::{Kind, SimPacket};
use crate::scenario::UdpSource;
use crate::Time;

pub struct UdpFlow {
    pub packet_size: u32,
    /// Payload bytes of each packet: what its receiver counts delivered.
    pub payload: u32,
    pub class: TrafficClass,
    pub source: UdpSource,
    pub stop: Option<Time>,
    /// End of the current on period (on-off sources).
    on_until: Time,
    seq: u32,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// The flow's random stream (jitter, Poisson gaps, on-off periods).
    rng: Rng,
}

/// What a source does next.
enum Next {
    /// Send a packet now, and the next this many ns later.
    Send(f64),
    /// Stay silent until then (an on-off source between on periods).
    Resume(Time),
}

impl UdpFlow {
    pub fn new(
        packet_size: u32,
        header_size: u32,
        tagged: bool,
        source: UdpSource,
        stop: Option<Time>,
        rng: Rng,
    ) -> Self {
        Self {
            packet_size,
            payload: packet_size - header_size,
            class: if tagged {
                TrafficClass::UdpTagged
            } else {
                TrafficClass::UdpUntagged
            },
            source,
            stop,
            on_until: 0,
            seq: 0,
            packets_sent: 0,
            bytes_sent: 0,
            rng,
        }
    }

    /// What the source does at `now`, drawing from its stream.
    fn next(&mut self, now: Time) -> Next {
        let interval = |rate_bps: u64| self.packet_size as f64 * 8e9 / rate_bps as f64;
        let rng = &mut self.rng;
        match &self.source {
            UdpSource::Cbr { rate_bps, jitter } if *jitter > 0.0 => {
                Next::Send(interval(*rate_bps) * (1.0 + jitter * (2.0 * rng.uniform() - 1.0)))
            }
            UdpSource::Cbr { rate_bps, .. } => Next::Send(interval(*rate_bps)),
            UdpSource::Poisson { rate_bps } => Next::Send(rng.exponential(interval(*rate_bps))),
            UdpSource::OnOff { rate_bps, on, off } => {
                if now >= self.on_until && self.seq > 0 {
                    // The on period is over: stay silent, then start another.
                    let idle = sample_dist(off, rng).max(0.0);
                    let on_len = sample_dist(on, rng).max(0.0);
                    let resume = now + idle as Time;
                    self.on_until = resume + on_len as Time;
                    return Next::Resume(resume);
                }
                if self.seq == 0 {
                    self.on_until = now + sample_dist(on, rng).max(0.0) as Time;
                }
                Next::Send(interval(*rate_bps))
            }
        }
    }

    /// The next packet of flow `flow`, sent now, counted.
    fn packet(&mut self, flow: u32, now: Time) -> SimPacket {
        let packet = SimPacket {
            stamp: now,
            at: now,
            flow,
            route: 0,
            seq: self.seq,
            size: self.packet_size,
            epoch: 0,
            hop: 0,
            kind: Kind::Udp,
            class: self.class,
            ecn: Ecn::NotEct,
            ece: false,
            tag: 0,
        };
        self.seq = self.seq.wrapping_add(1);
        self.packets_sent += 1;
        self.bytes_sent += self.packet_size as u64;
        packet
    }
}

impl Simulation {
    /// UDP source `f` sends its next packet now (unless it has stopped or
    /// is between on periods) and schedules the one after.
    pub(crate) fn udp_send(&mut self, f: u32) {
        let now = self.now;
        let Transport::Udp(udp) = &mut self.flows[f as usize].transport else {
            return;
        };
        if udp.stop.is_some_and(|s| now >= s) {
            return;
        }
        match udp.next(now) {
            Next::Resume(at) => self.events.schedule(at, Event::UdpSend(f)),
            Next::Send(gap) => {
                let packet = udp.packet(f, now);
                self.events
                    .schedule(now + gap.max(1.0) as Time, Event::UdpSend(f));
                self.inject(packet);
            }
        }
    }
}
