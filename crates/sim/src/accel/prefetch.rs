//! Prefetching: ask the caches early for what the coming events will read.
//! It changes no result, only where the loads' waiting falls.

use crate::accel::hints::{prefetch, prefetch_all, prefetch_at, prefetch_start};
use crate::engine::events::Event;
use crate::engine::flow::{Flow, Transport};
use crate::engine::routes::Upcoming;
use crate::engine::Simulation;
use crate::packet::SimPacket;

impl Simulation {
    /// Before the event loop: with many flows their state is out of the
    /// caches, and what the next events read is fetched several events
    /// ahead, the calendar's next slots walked too; with few, fetching
    /// ahead costs more than it saves (docs/performance.md).
    pub(crate) fn start_prefetching(&mut self) {
        let many = self.flows.len() + self.links.len() >= DEEP_PREFETCH_FROM;
        self.accel.deep_prefetch = self.accel.prefetch && many;
        self.events.walk_ahead(self.accel.deep_prefetch);
    }

    /// Before each event: what the next events will read, several events
    /// ahead with many flows (`prefetch_ahead`), else the next one's.
    #[inline(always)]
    pub(crate) fn prefetch_next(&self) {
        if self.accel.deep_prefetch {
            self.prefetch_ahead();
        } else if self.accel.prefetch {
            if let Some(next) = self.events.peek(0) {
                self.prefetch_for(next);
            }
        }
    }

    /// A host's burst (more than one packet) goes out: the packets after
    /// the first wait behind it, counted in their link's record (`wait`), a
    /// miss of its own with many flows: fetched now, it overlaps the
    /// first's.
    #[inline(always)]
    pub(crate) fn prefetch_burst(&self, packets: &[SimPacket]) {
        if let ([first, _, ..], true) = (packets, self.accel.deep_prefetch) {
            let route = self.flows[first.flow as usize].route(first.kind.is_reverse());
            if let Some(l) = self.routes.link(route, 0) {
                prefetch(&self.link_records[l as usize]);
            }
        }
    }

    /// Ask the caches early for what `event` will read: its link and, for a
    /// pipe head, the arriving packet. Both are nearly always out of the
    /// first-level cache; fetched now, the loads overlap the event before.
    #[inline]
    fn prefetch_for(&self, event: Event) {
        if let Event::PipeHead(l) | Event::TxDone(l) = event {
            let link = &self.links[l as usize];
            prefetch(link);
            if let (Event::PipeHead(_), Some(packet)) = (event, self.pipes.front(&link.pipe)) {
                prefetch(packet);
            }
        }
    }

    /// The packet a `PipeHead(l)` event will deliver.
    #[inline]
    fn arriving(&self, l: u32) -> Option<&SimPacket> {
        self.pipes.front(&self.links[l as usize].pipe)
    }

    /// Ask the caches early for what the coming events will read. Each
    /// event's data is a chain of loads (a pipe head's link, then its
    /// packet, then the packet's route, then the next link or, at the end
    /// of the route, the flow), so the chain is walked in stages, one link
    /// of it per event ahead: each stage reads only what the stage before
    /// fetched, an event earlier. With many flows nearly every one of these
    /// loads misses the caches; fetched this way they overlap the events
    /// before.
    #[inline]
    fn prefetch_ahead(&self) {
        if let Some(event) = self.events.peek(3) {
            match event {
                // A link is one line, whatever the event reads of it.
                Event::PipeHead(l) | Event::TxDone(l) => prefetch(&self.links[l as usize]),
                Event::RtoTimer(f) | Event::DelayedAck(f) => prefetch_all(&self.flows[f as usize]),
                _ => {}
            }
        }
        if let Some(Event::PipeHead(l)) = self.events.peek(2) {
            if let Some(packet) = self.arriving(l) {
                // Both lines when it straddles two (a packet is 40 bytes in
                // 48-byte nodes): the next stage reads its route and hop.
                prefetch_all(packet);
            }
            // A reserving link with copies waiting (an access link after a
            // burst) lets them go (`release_started`): its buffer's box and
            // its counters, then the first copy.
            let link = &self.links[l as usize];
            if let Some(buffer) = link.queue.reserving().and_then(|f| f.buffer_state()) {
                prefetch(buffer);
                prefetch(&self.link_records[l as usize].counters);
            }
        }
        if let Some(Event::PipeHead(l)) = self.events.peek(1) {
            let link = &self.links[l as usize];
            if let Some(first) = link.queue.reserving().and_then(|f| f.front()) {
                prefetch(first);
            }
            if let Some(packet) = self.arriving(l) {
                prefetch(self.routes.entry(packet.route, packet.hop + 1));
                // Read at its host, whether the packet reaches it in the
                // event or is answered ahead there (through an express
                // link, `enter_pipe`): nearly every pipe head's packet.
                self.prefetch_flow(packet);
            }
        }
        if let Some(Event::PipeHead(l)) = self.events.peek(0) {
            if let Some(packet) = self.arriving(l) {
                self.prefetch_holes(packet);
                // The links the packet enters in the event (the next, the
                // express link it is then reserved on and, if it may be
                // answered ahead at the host behind that, the link the
                // answer takes), or at the end of its route the link its
                // answer takes.
                let links = match self.routes.upcoming(packet.route, packet.hop + 1) {
                    Upcoming::Link(next, express) => [
                        Some(next),
                        express,
                        express
                            .and_then(|_| self.routes.answered_ahead(packet.route, packet.hop + 3)),
                    ],
                    Upcoming::Host(answer) => [answer, None, None],
                };
                for l in links.into_iter().flatten() {
                    prefetch(&self.links[l as usize]);
                }
            }
        }
    }

    /// Fetch what `packet` will read of its flow at the end of its route:
    /// the first three lines (the routes and the receiver in the first,
    /// the sender and its timer after) and, for data if ACKs may be
    /// delayed, the delayed ACK's pending event. By offset, without reading
    /// the flow (cold) to tell TCP from UDP. Data reads the sender's lines
    /// too: the compiler keeps the transport's tag in a niche of the
    /// sender (line 2 at this writing), and every arrival reads it.
    #[inline]
    fn prefetch_flow(&self, packet: &SimPacket) {
        let flow = &self.flows[packet.flow as usize];
        prefetch_start(flow, Flow::ACK_BYTES);
        if !packet.kind.is_reverse() && self.accel.delays_acks {
            prefetch_at(flow, Flow::DELACK_EVENT_AT);
        }
    }

    /// The second stage of `prefetch_flow`, once the flow is at hand: a
    /// data packet's receiver with a hole open reads its out-of-order map.
    #[inline]
    fn prefetch_holes(&self, packet: &SimPacket) {
        if packet.kind.is_reverse() {
            return;
        }
        if let Transport::Tcp(tcp) = &self.flows[packet.flow as usize].transport {
            if let Some(holes) = tcp.receiver.holes() {
                prefetch(holes);
            }
        }
    }
}

/// Flows plus links from which `Simulation::run` fetches the data of
/// events several places ahead (`prefetch_ahead`) and walks the calendar's
/// next slot ahead (`EventQueue::walk_ahead`), instead of fetching the next
/// event's link and packet only (`prefetch_for`). Measured on the 1 Gb/s
/// dumbbell (four links a flow): 10-15% slower at 3,000 flows, even at
/// 10,000, faster from 20,000 (docs/performance.md, "Prefetching events
/// ahead").
const DEEP_PREFETCH_FROM: usize = 100_000;
