//! UDP sources: constant bit rate (with optional jitter), Poisson and on-off,
//! their sending process the emulator's too (`aqmlab_qdisc::source`).

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::source::{Next, Process};
use aqmlab_qdisc::{Ecn, TrafficClass};

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
    pub process: Process,
    pub stop: Option<Time>,
    seq: u32,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// The flow's random stream (jitter, Poisson gaps, on-off periods).
    rng: Rng,
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
            process: Process::new(source, packet_size),
            stop,
            seq: 0,
            packets_sent: 0,
            bytes_sent: 0,
            rng,
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
        match udp.process.next(now, &mut udp.rng) {
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
