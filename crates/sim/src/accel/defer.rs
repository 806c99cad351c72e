//! Deferred departures: a discipline that only its arrivals and departures
//! change (no clock, no drop on dequeue: `Qdisc::defers_departures`) sees
//! them in time order, each departure at its own time, however late it
//! runs. So a link with such a discipline runs its departures when next
//! needed: those due before its next arrival, before the arrival is offered
//! (`catch_up`); before anything reads the discipline; or at the latest by
//! a `TxDone` event half a propagation delay after the first of them is
//! due, before the packet it sends can reach the far end
//! (`Link::catch_up_slack`). Under load that is one event per dozens of
//! packets, or none, not one per packet.

use crate::engine::events::Event;
use crate::engine::Simulation;
use crate::packet::SimPacket;
use crate::Time;

impl Simulation {
    /// `enqueue` for a link whose departures are deferred
    /// (`Departures::Deferred`): the departures due by now run first (one
    /// due at the very nanosecond of the arrival too: the reference's
    /// `TxDone` runs before any arrival of its nanosecond), then the
    /// discipline is offered the arrival, and a transmitter free now starts
    /// its next packet.
    pub(crate) fn enqueue_deferred(&mut self, l: usize, packet: SimPacket) {
        let now = self.now;
        self.catch_up(l, now + 1);
        let counters = &mut self.link_records[l].counters;
        self.links[l]
            .queue
            .discipline()
            .enqueue(counters, packet, now, &mut self.verdicts);
        self.settle_drops(l);
        if self.links[l].busy_until <= now {
            self.depart(l, now);
        }
        self.arm_catch_up(l);
    }

    /// Run the deferred departures of link `l` due before `before`, each at
    /// its own time: while packets wait, the transmitter frees up at
    /// `busy_until` and starts the next.
    pub(crate) fn catch_up(&mut self, l: usize, before: Time) {
        loop {
            let link = &self.links[l];
            let at = link.busy_until;
            if at >= before || link.queue.backlog().packets == 0 || !self.depart(l, at) {
                return;
            }
        }
    }

    /// `catch_up` every link that defers its departures (before the
    /// counters are read).
    pub(crate) fn catch_up_all(&mut self, before: Time) {
        for l in 0..self.links.len() {
            if self.links[l].defers() {
                self.catch_up(l, before);
            }
        }
    }

    /// The transmitter of link `l`, which defers its departures, is free at
    /// `at` (now or, late, before): it starts the discipline's next packet
    /// then, with the clock set back to `at` meanwhile. Returns whether
    /// there was one.
    fn depart(&mut self, l: usize, at: Time) -> bool {
        self.as_of(at, |sim| {
            let counters = &mut sim.link_records[l].counters;
            let packet = sim.links[l]
                .queue
                .discipline()
                .dequeue(counters, at, &mut sim.verdicts);
            // Such a discipline drops nothing as packets leave: a drop
            // counted late would leave the packets in flight overcounted
            // meanwhile.
            debug_assert!(
                sim.verdicts.dropped().is_empty(),
                "{} dropped a packet on dequeue but says it does not",
                sim.links[l].queue.name()
            );
            sim.settle_drops(l);
            if let Some(packet) = packet {
                sim.send(l, packet);
            }
            packet.is_some()
        })
    }

    /// A link that defers its departures runs them at the latest half a
    /// propagation delay after the first is due (`Link::catch_up_slack`),
    /// before the packet it sends can reach the far end: make sure an
    /// event will.
    pub(crate) fn arm_catch_up(&mut self, l: usize) {
        let link = &mut self.links[l];
        if !link.tx_scheduled && link.queue.backlog().packets > 0 {
            link.tx_scheduled = true;
            let at = link.busy_until + link.catch_up_slack();
            // What was due by now has run (`catch_up`): an event armed at
            // now would run again, and again, with simulated time stopped.
            debug_assert!(at > self.now, "link {l}'s departures re-armed at now");
            self.events.schedule(at, Event::TxDone(l as u32));
        }
    }
}
