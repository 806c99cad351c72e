//! Reserving FIFOs: a FIFO's future is known when a packet arrives, so the
//! packet's start and its arrival at the far end are computed then, in the
//! arrival's event, and its departure costs no event (the reference runs a
//! `TxDone` event for it). An idle transmitter behind an empty FIFO lets the
//! packet pass without touching the buffer.
//!
//! Eligible: every FIFO (`accel::plan`). Exact: a FIFO's admission and
//! departures depend only on its arrivals, which come in their events'
//! order; departures at the nanosecond of an arrival leave first.

use crate::engine::Simulation;
use crate::packet::SimPacket;
use crate::Time;

impl Simulation {
    /// Do FIFO link `l`'s work for `packet`, which reaches it at `arrival`:
    /// now (the arrival's own event), or later for an express link, whose
    /// arrivals come in order from one upstream link. Either way the
    /// FIFO's future is known: the packet starts when the transmitter frees
    /// up, and waits in the meantime. The buffer holds a copy of each
    /// packet still waiting, its `at` the time it will start, so that
    /// admission, backlog and the counters are the FIFO's own; the copies
    /// leave the buffer (counted as departures) once their start has passed
    /// (`release_started`). A monitored link records the wait if the packet
    /// starts in the measurement window. Returns when the packet reaches
    /// the far end, or `None` if the FIFO refused it.
    ///
    /// A packet that starts at the very nanosecond of an arrival has left
    /// the buffer before the arrival is admitted, as the reference's
    /// `TxDone` runs before any arrival of its nanosecond.
    #[inline(always)]
    pub(crate) fn reserve(&mut self, l: usize, packet: &SimPacket, arrival: Time) -> Option<Time> {
        let link = &mut self.links[l];
        // An idle transmitter behind an empty FIFO (every access link,
        // nearly always) starts the packet at once: inline, without a look
        // at the buffer.
        let records = &mut self.link_records;
        let start = if link.busy_until <= arrival
            && (link.queue.fifo()).pass_through(packet.size, || &mut records[l].counters)
        {
            arrival
        } else {
            self.wait(l, packet, arrival)?
        };
        let link = &mut self.links[l];
        link.busy_until = start + link.tx_time(packet.size);
        let arrive = link.busy_until + link.delay;
        if let Some(m) = link.monitor().filter(|_| self.starts_in_window(start)) {
            self.monitors[m].delays.record(start - arrival);
        }
        Some(arrive)
    }

    /// The rest of `reserve`: when `packet` will start on FIFO link `l`,
    /// having waited in the buffer, or `None` if the buffer refused it.
    #[inline(never)]
    fn wait(&mut self, l: usize, packet: &SimPacket, arrival: Time) -> Option<Time> {
        self.census.waited(l);
        self.release_started(l, arrival + 1);
        let link = &mut self.links[l];
        let start = arrival.max(link.busy_until);
        let counters = &mut self.link_records[l].counters;
        let fifo = link.queue.fifo();
        if start > arrival || !fifo.pass_through(packet.size, || &mut *counters) {
            let mut waiting = *packet;
            waiting.at = start;
            let spares = &mut self.accel.spares;
            if !fifo.wait(counters, waiting, spares, &mut self.verdicts) {
                self.settle_drops(l);
                return None;
            }
        }
        Some(start)
    }

    /// Whether a packet starting at `start` (now or later) starts in the
    /// measurement window, as the event-driven FIFO would judge it: now, if
    /// the window has opened; later, in a `TxDone` event, which would run
    /// after the `WarmupEnd` of its nanosecond (scheduled when the
    /// simulation was built) and not at all past the run's end.
    #[inline]
    fn starts_in_window(&self, start: Time) -> bool {
        if start > self.now {
            start >= self.scenario.warmup_ns && start <= self.scenario.duration_ns
        } else {
            self.warmed_up
        }
    }

    /// The waiting copies in FIFO link `l`'s buffer that started before
    /// `before` leave it.
    pub(crate) fn release_started(&mut self, l: usize, before: Time) {
        let counters = &mut self.link_records[l].counters;
        let fifo = self.links[l].queue.fifo();
        fifo.release(before, counters, &mut self.accel.spares);
    }

    /// Bring every reserving link's buffer up to `before` (before its
    /// counters are read).
    pub(crate) fn release_all_started(&mut self, before: Time) {
        for l in 0..self.links.len() {
            if self.links[l].reserves() {
                self.release_started(l, before);
            }
        }
    }

    /// While link `l` is in the cache at a pipe head: the copies of a
    /// reserving link that started leave its buffer (otherwise a burst's
    /// copies would keep an access link's buffer allocated until its next
    /// arrival, an RTT later; 50,000 flows: +83 B per flow).
    #[inline(always)]
    pub(crate) fn release_while_cached(&mut self, l: usize) {
        let link = &self.links[l];
        if link.reserves() && link.queue.backlog().packets > 0 {
            self.release_started(l, self.now + 1);
        }
    }
}
