//! Answering ahead: a packet whose arrival at its host is known when it
//! leaves its last multiplexing point is taken in then, ahead of its
//! arrival, and its answer sent as of that arrival: a data packet's ACK
//! by its receiver, an ACK's data by its sender. Its pipe head costs no
//! event.

use crate::engine::events::Event;
use crate::engine::flow::Transport;
use crate::engine::Simulation;
use crate::measure::kept_samples::SenderSample;
use crate::packet::SimPacket;
use crate::Time;

impl Simulation {
    /// `packet` leaves link `l` for its host, which it reaches at `arrive`,
    /// on a route whose end may answer ahead through link `answer`: answer
    /// it now if nothing can tell the difference (`answer_ahead`), and say
    /// whether it was. If not, and the answer will come to a gathering
    /// link, the link's inbox waits for it.
    #[inline(always)]
    pub(crate) fn answered_ahead(
        &mut self,
        l: usize,
        packet: SimPacket,
        arrive: Time,
        answer: usize,
    ) -> bool {
        let answer = &self.links[answer];
        if self.links[l].pipe.is_empty()
            && arrive < self.accel.answer_ahead_before
            && match packet.kind.is_reverse() {
                // A sender's answer may wait at its busy link: its change
                // to the packets in flight, a drop there included, falls
                // due at `arrive` (`answer_ack_ahead`).
                true => self.sender_idle_until(packet.flow, arrive),
                // A receiver's ACK stands in for the packet it answers
                // only if nothing can drop it: its link is idle then.
                false => answer.busy_until <= arrive,
            }
        {
            self.answer_ahead(packet, arrive);
            return true;
        }
        // (A sender's first link feeds nothing gathering: it is no answer
        // link of a data packet, `accel::plan`.)
        if answer.feeds_express {
            // Its answer will come to a gathering link in its arrival's
            // event (the answer link feeds nothing express otherwise).
            self.expect_answer(packet.flow, arrive);
        }
        false
    }

    /// `packet` reaches its host at `at`: take it in and send the answer
    /// now, a pipe head's event early. This is what its arrival would do,
    /// to the bit:
    /// - nothing else touches the host's end of the flow or its answer's
    ///   first link before then (`mark_answered_ahead`), nor reads them but
    ///   the results (and, for a sender, the samples and its retransmission
    ///   timer: `sender_idle_until`);
    /// - the flow's packets ahead of this one were taken in before it (the
    ///   pipe it would wait in is empty);
    /// - the window's opening and the run's end come after `at`
    ///   (`answer_ahead_before`), so the packet counts where it would;
    /// - a receiver's answer link is idle then (the caller checks), so its
    ///   ACK passes it at once; a sender's may be busy, and its data wait
    ///   or be dropped there as in the ACK's own event (nothing else
    ///   reaches the link before then);
    /// - the packets in flight reach their peak as they would: a receiver's
    ///   ACK stands in for the packet it answers, and a sender's change to
    ///   them (it answers an ACK with none, one or two packets) counts
    ///   towards the peak only once due (`Ledger::made_ahead`, an
    ///   `InFlight` event).
    ///
    /// Only the order of events at one nanosecond can differ: the ones
    /// this schedules are scheduled sooner, and ties run in scheduling
    /// order (docs/simulator.md, "Answering ahead").
    #[inline(never)]
    fn answer_ahead(&mut self, mut packet: SimPacket, at: Time) {
        self.census.answered_ahead(packet.kind.is_reverse());
        packet.hop += 1;
        if packet.kind.is_reverse() {
            self.answer_ack_ahead(packet, at);
        } else {
            self.as_of(at, |sim| sim.arrive_at_endpoint(packet));
        }
    }

    /// `answer_ahead` for an ACK: the sender's change to the packets in
    /// flight is held back until due.
    fn answer_ack_ahead(&mut self, packet: SimPacket, at: Time) {
        if at >= self.sample_due {
            self.keep_for_sample(packet.flow);
        }
        let before = self.ledger.mark();
        self.as_of(at, |sim| sim.arrive_at_endpoint(packet));
        if let Some(change) = self.ledger.made_ahead(before) {
            self.events.schedule(at, Event::InFlight(change as u32));
        }
    }

    /// The sender of `flow` goes past the next sample's time: keep what
    /// the sample reads of it, unless kept already.
    #[cold]
    #[inline(never)]
    fn keep_for_sample(&mut self, flow: u32) {
        let Transport::Tcp(tcp) = &self.flows[flow as usize].transport else {
            unreachable!("only a TCP sender answers ahead");
        };
        let p = &self.scenario.tcp_profiles[tcp.profile as usize];
        (self.accel.kept_samples).keep(flow, || SenderSample::of(&tcp.sender, p));
    }

    /// A link dropped a packet that reaches it at `at`, reserving it
    /// before then (an express or gathering link): the drop counts
    /// towards the peak of the packets in flight only at `at`, as the
    /// arrival's event would have counted it.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_counted_ahead(&mut self, at: Time) {
        if at > self.now {
            let change = self.ledger.dropped_ahead();
            self.events.schedule(at, Event::InFlight(change as u32));
        }
    }

    /// Whether the sender of `flow` may answer an ACK arriving at `at`
    /// ahead: it does nothing on its own before then (its retransmission
    /// timer does not expire; its earlier ACKs and a past timer's expiry
    /// are in the past or in the pipe, which the caller finds empty); `at`
    /// comes before the sample after next (the next sample keeps what it
    /// reads of a sender gone past it, `keep_for_sample`, once); and it is
    /// in congestion avoidance, where an ACK nearly always sends one packet
    /// in place of itself (in slow start it sends two, which answering
    /// ahead would hold in memory tens of milliseconds early).
    #[inline]
    fn sender_idle_until(&self, flow: u32, at: Time) -> bool {
        let Transport::Tcp(tcp) = &self.flows[flow as usize].transport else {
            return false;
        };
        at < (self.sample_due).saturating_add(self.scenario.sample_interval_ns)
            && tcp.sender.rto_deadline.get().is_none_or(|d| d > at)
            && tcp.sender.is_in_congestion_avoidance()
    }
}
