//! Forwarding: a packet arrives at a link, waits in its discipline, is
//! transmitted, propagates through the link's pipe, and arrives at the next
//! link or at its host.
//!
//! On events, as the reference has it: an arrival is offered to the
//! discipline at once; a busy transmitter frees up at its `TxDone` event
//! and starts the discipline's next packet, which enters the pipe then with
//! its arrival time at the far end; the pipe's head arrives at its
//! `PipeHead` event. A link whose plan says otherwise hands its arrivals,
//! departures or sends to its acceleration (`crate::accel`), at the three
//! places marked below.

use crate::accel::hints::prefetch_all;
use crate::engine::events::Event;
use crate::engine::Simulation;
use crate::packet::SimPacket;
use crate::{MaybeTime, Time};

impl Simulation {
    /// A host puts a packet on the first link of its route.
    #[inline(never)]
    pub(crate) fn inject(&mut self, packet: SimPacket) {
        self.inject_inline(packet);
    }

    /// `inject`, inlined where it is hottest: the one packet a host sends
    /// in reply to one that reached it (`arrive_at_endpoint`).
    #[inline(always)]
    pub(crate) fn inject_inline(&mut self, mut packet: SimPacket) {
        self.ledger.inject();
        let flow = &self.flows[packet.flow as usize];
        packet.route = flow.route(packet.kind.is_reverse());
        match self.routes.link(packet.route, 0) {
            Some(link) => self.enqueue(link as usize, packet),
            None => self.arrive_at_endpoint(packet),
        }
    }

    /// `packet` arrives at link `l` now. A reserving link (nearly every
    /// arrival) is handled inline; a link that runs on events, apart.
    #[inline(always)]
    pub(crate) fn enqueue(&mut self, l: usize, mut packet: SimPacket) {
        debug_assert!(
            !self.links[l].is_express(),
            "an express link is entered when its upstream link reserves or sends"
        );
        let now = self.now;
        packet.at = now;
        // Acceleration: a FIFO's future is known at the arrival (accel/reserve.rs).
        if self.links[l].reserves() {
            if let Some(arrive) = self.reserve(l, &packet, now) {
                self.enter_pipe(l, packet, arrive);
            }
        } else {
            self.enqueue_on_events(l, packet);
        }
    }

    /// `enqueue` for a link whose departures run on events: a discipline
    /// other than a FIFO, or any link once reservations are off (one that
    /// defers them goes on to `enqueue_deferred`).
    #[inline(never)]
    fn enqueue_on_events(&mut self, l: usize, packet: SimPacket) {
        if let Some(tracer) = &mut self.tracer {
            tracer.enqueued(self.now, l as u32, &packet);
        }
        // Acceleration: departures run late (accel/defer.rs).
        if self.links[l].defers() {
            self.enqueue_deferred(l, packet);
            return;
        }
        let now = self.now;
        let link = &mut self.links[l];
        let counters = &mut self.link_records[l].counters;
        (link.queue.discipline()).enqueue(counters, packet, now, &mut self.verdicts);
        self.settle_drops(l);
        let link = &mut self.links[l];
        if link.busy_until <= now {
            if !link.tx_scheduled {
                self.transmit(l);
            }
        } else if !link.tx_scheduled {
            link.tx_scheduled = true;
            let at = link.busy_until;
            self.events.schedule(at, Event::TxDone(l as u32));
        }
        self.schedule_qdisc_wake(l);
    }

    /// A `TxDone` event: the transmitter is free, or (a link that defers
    /// its departures) its departures are due, or (a gathering link) its
    /// inbox is.
    pub(crate) fn tx_done(&mut self, l: usize) {
        self.links[l].tx_scheduled = false;
        if self.links[l].defers() {
            // Those due by now, this nanosecond's too: on a link of no
            // delay the event is due with the departure itself.
            self.catch_up(l, self.now + 1);
            self.arm_catch_up(l);
        } else if self.links[l].gathers() {
            self.drain_inbox(l);
        } else {
            self.transmit(l);
        }
    }

    /// The transmitter is free: start the next packet, if the discipline
    /// gives one. The packet enters the pipe now with its arrival time, so
    /// its serialization and propagation cost no event of their own.
    fn transmit(&mut self, l: usize) {
        debug_assert!(
            !self.links[l].reserves(),
            "a reserving link needs no TxDone"
        );
        let now = self.now;
        let link = &mut self.links[l];
        let counters = &mut self.link_records[l].counters;
        let Some(packet) = link
            .queue
            .discipline()
            .dequeue(counters, now, &mut self.verdicts)
        else {
            self.settle_drops(l);
            self.schedule_qdisc_wake(l);
            return;
        };
        self.send(l, packet);
        let link = &mut self.links[l];
        if link.queue.backlog().packets > 0 {
            link.tx_scheduled = true;
            let done = link.busy_until;
            self.events.schedule(done, Event::TxDone(l as u32));
        }
        self.settle_drops(l);
        self.schedule_qdisc_wake(l);
    }

    /// Start serializing `packet` onto link `l` now; it then propagates.
    #[inline(always)]
    pub(crate) fn send(&mut self, l: usize, packet: SimPacket) {
        let now = self.now;
        if let Some(tracer) = &mut self.tracer {
            tracer.dequeued(now, l as u32, &packet);
        }
        let link = &mut self.links[l];
        if let Some(m) = link.monitor().filter(|_| self.warmed_up) {
            self.monitors[m].delays.record(now - packet.at);
        }
        let done = now + link.tx_time(packet.size);
        link.busy_until = done;
        let arrive = done + link.delay;
        self.enter_pipe(l, packet, arrive);
    }

    /// `packet` will reach the far end of link `l` at `arrive`: into the
    /// link's pipe, whose head alone is an event.
    #[inline(always)]
    pub(crate) fn enter_pipe(&mut self, mut l: usize, mut packet: SimPacket, mut arrive: Time) {
        // Accelerations: on through the express links after this one
        // (accel/express.rs), and answered at the host ahead of its
        // arrival (accel/ahead.rs).
        if self.links[l].feeds_express {
            match self.through_express(&mut packet, l, arrive) {
                Some((last, at)) => (l, arrive) = (last, at),
                None => return,
            }
        }
        if let Some(answer) = self.routes.answered_ahead(packet.route, packet.hop + 1) {
            if self.answered_ahead(l, packet, arrive, answer as usize) {
                return;
            }
        }
        let link = &mut self.links[l];
        // The packet ahead keeps this one's arrival time, so that its own
        // arrival schedules the next without reading a cold node.
        if self
            .pipes
            .push_back_after(&mut link.pipe, packet, |ahead| ahead.at = arrive)
        {
            self.events.schedule(arrive, Event::PipeHead(l as u32));
        }
    }

    /// A `PipeHead` event: the packet at the head of link `l`'s pipe
    /// reaches the far end, and the next link or its host, unless the
    /// link's wire lost it (`engine::wire`).
    pub(crate) fn pipe_head(&mut self, l: usize) {
        let link = &mut self.links[l];
        let lossy = link.lossy;
        let mut packet = self
            .pipes
            .pop_front(&mut link.pipe)
            .expect("pipe head event with an empty pipe");
        if let Some(next) = self.pipes.front(&link.pipe) {
            // Its event is due a packet's serialization later (at a
            // bottleneck, a few events on): too soon for the stages of
            // `prefetch_ahead` to see it first.
            prefetch_all(next);
            self.events.schedule(packet.at, Event::PipeHead(l as u32));
        }
        self.release_while_cached(l);
        if lossy && self.wire_loses(l, packet.size) {
            self.count_lost(l, packet);
            return;
        }
        packet.hop += 1;
        match self.routes.link(packet.route, packet.hop) {
            Some(next) => self.enqueue(next as usize, packet),
            None => self.arrive_at_end(packet),
        }
    }

    /// A `QdiscWake` event: the discipline of link `l` asked to be woken
    /// now (unless a later request superseded this one).
    pub(crate) fn qdisc_wake(&mut self, l: usize) {
        let now = self.now;
        let wake_at = self.wake_at(l);
        if wake_at.get() != Some(now) {
            return; // superseded
        }
        *wake_at = MaybeTime::NONE;
        let counters = &mut self.link_records[l].counters;
        (self.links[l].queue.discipline()).wakeup(counters, now, &mut self.verdicts);
        self.settle_drops(l);
        let link = &self.links[l];
        if link.busy_until <= now && !link.tx_scheduled {
            self.transmit(l);
        } else {
            self.schedule_qdisc_wake(l);
        }
    }

    /// Called after every packet a link's discipline takes or sends: the
    /// test inline, the rest apart, since most disciplines have no clock.
    #[inline]
    pub(crate) fn schedule_qdisc_wake(&mut self, l: usize) {
        if self.links[l].queue.has_clock() {
            self.schedule_clocked_wake(l);
        }
    }

    #[inline(never)]
    fn schedule_clocked_wake(&mut self, l: usize) {
        if let Some(t) = self.links[l].queue.discipline().next_wakeup() {
            let t = t.max(self.now);
            let wake_at = self.wake_at(l);
            if wake_at.get().is_none_or(|w| t < w) {
                *wake_at = MaybeTime::at(t);
                self.events.schedule(t, Event::QdiscWake(l as u32));
            }
        }
    }

    /// The pending wake-up of link `l`, which is not a FIFO (a FIFO never
    /// asks to be woken).
    fn wake_at(&mut self, l: usize) -> &mut MaybeTime {
        let i = self
            .wakes
            .binary_search_by_key(&(l as u32), |&(link, _)| link)
            .expect("only a link that is not a FIFO is woken");
        &mut self.wakes[i].1
    }

    /// Count the packets link `l`'s discipline dropped, if any.
    #[inline]
    pub(crate) fn settle_drops(&mut self, l: usize) {
        if !self.verdicts.is_empty() {
            self.count_drops(l);
        }
    }

    /// `settle_drops` when there are some (out of line: the callers are
    /// hot, drops rare).
    #[inline(never)]
    fn count_drops(&mut self, l: usize) {
        if let Some(tracer) = &mut self.tracer {
            for d in self.verdicts.dropped() {
                tracer.dropped(self.now, l as u32, d);
            }
        }
        let (ledger, flows) = (&mut self.ledger, &mut self.flows);
        self.verdicts.drain(|d| {
            ledger.dropped += 1;
            flows[d.packet.flow as usize].dropped += 1;
        });
    }
}
