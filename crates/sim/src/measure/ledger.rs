//! End-to-end packet accounting, with the changes that work done ahead of
//! its time makes to the packets in flight held back from the peak until
//! they are due.

/// End-to-end packet accounting.
#[derive(Default, Debug, Clone)]
pub struct Ledger {
    pub injected: u64,
    pub received: u64,
    pub dropped: u64,
    pub data_received: u64,
    /// Most packets ever in the network at once (queued or propagating):
    /// the denominator of the memory-per-packet figure. Taken at the end of
    /// each nanosecond with events (`instant_ends`), so that it does not
    /// depend on the order of the events within one.
    pub peak_in_flight: u64,
    /// The changes to the packets in flight made ahead of their time (a
    /// sender answering an ACK before it arrives, a drop by a link that
    /// reserved an arrival before it came) and not yet due, summed. The
    /// counters above hold them already; the peak sees them only once due
    /// (`fall_due`, from an `InFlight` event at their time).
    ahead: i64,
}

impl Ledger {
    /// Packets in flight as counted, changes made ahead included.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        self.injected - self.received - self.dropped
    }

    /// Packets in flight now: without the changes made ahead and not yet
    /// due.
    #[inline]
    fn in_flight_now(&self) -> u64 {
        (self.in_flight() as i64 - self.ahead) as u64
    }

    /// A packet was injected.
    #[inline(always)]
    pub fn inject(&mut self) {
        self.injected += 1;
    }

    /// The events of a nanosecond are done: the packets in flight then
    /// count towards the peak.
    #[inline(always)]
    pub fn instant_ends(&mut self) {
        self.peak_in_flight = self.peak_in_flight.max(self.in_flight_now());
    }

    /// Where the counters stand before work is done ahead of its time
    /// (`made_ahead`).
    #[inline(always)]
    pub fn mark(&self) -> AheadMark {
        AheadMark {
            in_flight: self.in_flight(),
        }
    }

    /// Work was done ahead of its time since `mark`. Returns its change to
    /// the packets in flight, if any, for `fall_due` at the work's time.
    #[inline(always)]
    pub fn made_ahead(&mut self, mark: AheadMark) -> Option<i32> {
        let change = (self.in_flight() as i64 - mark.in_flight as i64) as i32;
        self.ahead += change as i64;
        (change != 0).then_some(change)
    }

    /// A packet was dropped ahead of its arrival at the link that dropped
    /// it (an express or gathering link reserves before the arrival):
    /// counted now, it leaves the packets in flight for the peak only when
    /// due. Returns the change for `fall_due`.
    #[inline]
    pub fn dropped_ahead(&mut self) -> i32 {
        self.ahead -= 1;
        -1
    }

    /// A change made ahead (`made_ahead`, `dropped_ahead`) falls due: the
    /// packets in flight now include it.
    #[inline]
    pub fn fall_due(&mut self, change: i32) {
        self.ahead -= change as i64;
    }
}

/// The counters before work done ahead (`Ledger::mark`).
#[derive(Clone, Copy, Debug)]
pub struct AheadMark {
    in_flight: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn injected(n: u64) -> Ledger {
        let mut l = Ledger::default();
        for _ in 0..n {
            l.inject();
        }
        l.instant_ends();
        l
    }

    #[test]
    fn the_peak_is_taken_at_the_end_of_a_nanosecond() {
        let mut l = injected(3);
        assert_eq!(l.peak_in_flight, 3);
        // One in, one out within a nanosecond: the peak does not see the
        // order they came in.
        l.inject();
        l.received += 1;
        l.instant_ends();
        assert_eq!(l.peak_in_flight, 3);
        l.inject();
        l.instant_ends();
        assert_eq!(l.peak_in_flight, 4);
    }

    #[test]
    fn an_increase_made_ahead_reaches_the_peak_only_when_due() {
        let mut l = injected(3);
        // An ACK answered by two packets, ahead.
        let mark = l.mark();
        l.received += 1;
        l.inject();
        l.inject();
        let change = l.made_ahead(mark);
        assert_eq!(change, Some(1));
        assert_eq!(l.in_flight(), 4);
        l.instant_ends();
        assert_eq!(l.peak_in_flight, 3);
        // A packet delivered before the ACK is due, in its own event.
        l.received += 1;
        l.instant_ends();
        l.fall_due(1);
        l.instant_ends();
        // 3 - 1 - 1 + 2: the peak as it was.
        assert_eq!(l.peak_in_flight, 3);
        l.inject();
        l.instant_ends();
        assert_eq!(l.peak_in_flight, 4);
    }

    #[test]
    fn a_decrease_made_ahead_does_not_hide_later_injections() {
        let mut l = injected(3);
        // An ACK that sends nothing, ahead: 2 in flight once due.
        let mark = l.mark();
        l.received += 1;
        assert_eq!(l.made_ahead(mark), Some(-1));
        // An injection before it is due finds 4 in flight, not 3.
        l.inject();
        l.instant_ends();
        assert_eq!(l.peak_in_flight, 4);
        l.fall_due(-1);
        assert_eq!(l.in_flight(), 3);
        l.inject();
        l.instant_ends();
        assert_eq!(l.peak_in_flight, 4);
    }

    #[test]
    fn work_ahead_that_changes_nothing_needs_no_event() {
        let mut l = injected(3);
        let mark = l.mark();
        l.received += 1;
        l.inject();
        assert_eq!(l.made_ahead(mark), None);
        l.instant_ends();
        assert_eq!(l.peak_in_flight, 3);
    }
}
