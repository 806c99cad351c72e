//! Hosts: what a packet does when it reaches the end of its route, and the
//! TCP timers and starts that make hosts send on their own.

use crate::engine::events::Event;
use crate::engine::flow::Transport;
use crate::engine::Simulation;
use crate::packet::{Kind, SimPacket};
use crate::tcp::payload_of;
use crate::{MaybeTime, Time};

impl Simulation {
    /// `packet` reaches the end of its route, in its pipe's head event.
    pub(crate) fn arrive_at_end(&mut self, packet: SimPacket) {
        // Acceleration: a gathering link waits for this packet's answer
        // (accel/gather.rs).
        let expected = self.answer_awaited(&packet);
        let flow = packet.flow;
        self.arrive_at_endpoint(packet);
        if expected {
            self.answered_expected(flow);
        }
    }

    /// `packet` reaches its host now: the transport takes it in, and the
    /// host sends what that gave.
    pub(crate) fn arrive_at_endpoint(&mut self, packet: SimPacket) {
        if self.tracer.is_some() {
            self.trace_delivery(&packet);
        }
        self.census.taken_in(packet.kind.is_reverse());
        self.ledger.received += 1;
        let f = packet.flow as usize;
        match packet.kind {
            Kind::Udp => {
                self.ledger.data_received += 1;
                let flow = &mut self.flows[f];
                if let Transport::Udp(udp) = &flow.transport {
                    flow.delivered += udp.payload as u64;
                }
            }
            Kind::Data | Kind::Syn => self.receive_data(f, &packet),
            Kind::Ack | Kind::SynAck => self.receive_ack(f, &packet),
        }
        self.flush_reply();
    }

    /// `packet` reaches its host now, over the last link of its route: into
    /// the trace.
    #[cold]
    #[inline(never)]
    fn trace_delivery(&mut self, packet: &SimPacket) {
        let last = (packet.hop.checked_sub(1)).and_then(|h| self.routes.link(packet.route, h));
        let delivered = self.flows[packet.flow as usize].delivered;
        if let Some(tracer) = &mut self.tracer {
            tracer.delivered(self.now, last, packet, delivered);
        }
    }

    /// TCP flow `f`'s receiver takes in a data packet (or SYN): it counts
    /// the bytes that became in order, and answers now or arms its delayed
    /// ACK.
    #[inline(always)]
    fn receive_data(&mut self, f: usize, packet: &SimPacket) {
        if packet.kind == Kind::Data {
            self.ledger.data_received += 1;
        }
        let now = self.now;
        let flow = &mut self.flows[f];
        let size_bytes = flow.size_bytes();
        let Transport::Tcp(tcp) = &mut flow.transport else {
            unreachable!("a TCP packet on a UDP flow");
        };
        let p = &self.scenario.tcp_profiles[tcp.profile as usize];
        let d = tcp.receiver.on_data(packet, now, p, &mut self.outbox);
        flow.duplicates += d.duplicate as u32;
        if d.new_in_order > 0 {
            flow.delivered += match size_bytes {
                None => d.new_in_order as u64 * crate::tcp::mss(p) as u64,
                Some(_) => (d.first..d.first + d.new_in_order)
                    .map(|s| payload_of(p, size_bytes, s) as u64)
                    .sum(),
            };
        }
        if let Some(t) = tcp.receiver.delack_deadline.get() {
            if tcp.delack_event_at.get().is_none_or(|e| t < e) {
                tcp.delack_event_at = MaybeTime::at(t);
                self.events.schedule(t, Event::DelayedAck(f as u32));
            }
        }
    }

    /// TCP flow `f`'s sender takes in an ACK (or SYN-ACK).
    #[inline(always)]
    fn receive_ack(&mut self, f: usize, packet: &SimPacket) {
        let now = self.now;
        let Transport::Tcp(tcp) = &mut self.flows[f].transport else {
            unreachable!("a TCP packet on a UDP flow");
        };
        let p = &self.scenario.tcp_profiles[tcp.profile as usize];
        if tcp.sender.on_ack(packet, now, p, &mut self.outbox) {
            self.transfer_done(f);
        }
        self.arm_rto(f);
    }

    /// Send the reply a packet reaching its host gave: nearly always one
    /// packet (an ACK, or the segment an ACK clocks out), sent inline and
    /// without moving the buffer.
    #[inline(always)]
    fn flush_reply(&mut self) {
        self.census.replied(self.outbox.packets.len());
        if self.outbox.packets.len() == 1 {
            let packet = self.outbox.packets.pop().expect("one packet");
            self.inject_inline(packet);
        } else {
            self.flush_outbox();
        }
    }

    /// Send what the transport state machines wrote, in their order. The
    /// outbox is empty before the first packet goes, as a zero-hop route
    /// would deliver it, and its endpoint reply, at once; the buffer is
    /// handed back afterwards so it is never reallocated.
    pub(crate) fn flush_outbox(&mut self) {
        if self.outbox.packets.is_empty() {
            return;
        }
        let mut packets = std::mem::take(&mut self.outbox.packets);
        self.prefetch_burst(&packets);
        for packet in packets.drain(..) {
            self.inject(packet);
        }
        self.outbox.packets = packets;
    }

    /// Flow `f`'s transfer completed now: its time is tallied, and an on-off
    /// source schedules its next after an idle time.
    fn transfer_done(&mut self, f: usize) {
        let now = self.now;
        let flow = &mut self.flows[f];
        let start = flow.start;
        let Transport::Tcp(tcp) = &mut flow.transport else {
            return;
        };
        let transfer_start = tcp.on_off.as_ref().map_or(start, |o| o.transfer_start);
        let took = now - transfer_start;
        if tcp.first_completion.is_none() {
            tcp.first_completion = MaybeTime::at(took);
        }
        if let Some(o) = &mut tcp.on_off {
            o.done_at = now;
            o.transfers_done += 1;
            o.completion_sum += took;
            let idle = o.off_time.sample(&mut o.rng).max(0.0) as Time;
            self.events.schedule(now + idle, Event::FlowStart(f as u32));
        }
    }

    /// Make sure the flow's retransmission timer event is at or before its
    /// deadline; later events are left in the list and ignored when they fire.
    #[inline(always)]
    fn arm_rto(&mut self, f: usize) {
        let Transport::Tcp(tcp) = &mut self.flows[f].transport else {
            return;
        };
        if let Some(deadline) = tcp.sender.rto_deadline.get() {
            if tcp.sender.rto_event_at.get().is_none_or(|t| deadline < t) {
                tcp.sender.rto_event_at = MaybeTime::at(deadline);
                self.events.schedule(deadline, Event::RtoTimer(f as u32));
            }
        }
    }

    /// An `RtoTimer` event: flow `f`'s retransmission timer, if this is
    /// still its pending event and the deadline has passed.
    pub(crate) fn rto_timer(&mut self, f: u32) {
        let now = self.now;
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        if tcp.sender.rto_event_at.get() != Some(now) {
            return; // superseded by an earlier event
        }
        tcp.sender.rto_event_at = MaybeTime::NONE;
        match tcp.sender.rto_deadline.get() {
            None => return,
            Some(d) if d > now => {}
            Some(_) => {
                let p = &self.scenario.tcp_profiles[tcp.profile as usize];
                tcp.sender.on_timeout(now, f, p, &mut self.outbox);
            }
        }
        self.arm_rto(f as usize);
        self.flush_outbox();
    }

    /// A `DelayedAck` event: flow `f`'s receiver sends the ACK it held,
    /// if its deadline has come (else the event moves to it).
    pub(crate) fn delayed_ack(&mut self, f: u32) {
        let now = self.now;
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        if tcp.delack_event_at.get() != Some(now) {
            return;
        }
        tcp.delack_event_at = MaybeTime::NONE;
        match tcp.receiver.delack_deadline.get() {
            Some(d) if d <= now => {
                let p = &self.scenario.tcp_profiles[tcp.profile as usize];
                tcp.receiver.flush(f, p, &mut self.outbox);
                self.flush_outbox();
            }
            Some(d) => {
                tcp.delack_event_at = MaybeTime::at(d);
                self.events.schedule(d, Event::DelayedAck(f));
            }
            None => {}
        }
    }

    /// A `FlowStart` event: TCP flow `f` opens its connection, or an
    /// on-off source starts its next transfer.
    pub(crate) fn flow_start(&mut self, f: u32) {
        let now = self.now;
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        if tcp.sender.is_stopped() {
            return;
        }
        let p = &self.scenario.tcp_profiles[tcp.profile as usize];
        // Only an on-off source starts again.
        if let Some(o) = &mut tcp.on_off {
            if o.transfers_done > 0 {
                let idle = now - o.done_at;
                tcp.sender.restart(p, o.keep_connection.then_some(idle));
            }
            o.transfer_start = now;
        }
        tcp.sender.open(now, f, p, &mut self.outbox);
        self.arm_rto(f as usize);
        self.flush_outbox();
    }

    /// A `FlowStop` event: the application of TCP flow `f` stops writing
    /// (`TcpSender::stop`).
    pub(crate) fn flow_stop(&mut self, f: u32) {
        let Transport::Tcp(tcp) = &mut self.flows[f as usize].transport else {
            return;
        };
        tcp.sender
            .stop(&self.scenario.tcp_profiles[tcp.profile as usize]);
    }
}
