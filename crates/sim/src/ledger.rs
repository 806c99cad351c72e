//! End-to-end packet accounting, with the changes that work done ahead of
//! its time makes to the packets in flight held back until they are due.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::Time;

/// End-to-end packet accounting.
#[derive(Default, Debug, Clone)]
pub struct Ledger {
    pub injected: u64,
    pub received: u64,
    pub dropped: u64,
    pub data_received: u64,
    /// Most packets ever in the network at once (queued or propagating):
    /// the denominator of the memory-per-packet figure. Taken as each packet
    /// is injected, and as each change made ahead falls due.
    pub peak_in_flight: u64,
    /// Changes to the packets in flight made ahead of their time (a sender
    /// answering an ACK before it arrives: `Simulation::answer_ahead`), by
    /// the time they are due. The counters above hold them already; the
    /// peak sees them only once due, as it would have seen the work done
    /// in its own event.
    ahead: BinaryHeap<Reverse<(Time, i64)>>,
    /// Their sum: the packets in flight now are `in_flight() - ahead_sum`.
    ahead_sum: i64,
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
        (self.in_flight() as i64 - self.ahead_sum) as u64
    }

    /// A packet was injected now.
    #[inline(always)]
    pub fn inject(&mut self) {
        self.injected += 1;
        self.peak_in_flight = self.peak_in_flight.max(self.in_flight_now());
    }

    /// Where the counters stand before work is done ahead of its time
    /// (`made_ahead`).
    #[inline(always)]
    pub fn mark(&self) -> AheadMark {
        AheadMark {
            in_flight: self.in_flight(),
            peak: self.peak_in_flight,
        }
    }

    /// Work due at `at` was done ahead of its time since `mark`: its change
    /// to the packets in flight counts towards the peak only when it falls
    /// due (`settle_due`), and its injections not at all (the peak they
    /// reach is reached again then, the change added to the packets in
    /// flight of that moment).
    #[inline(always)]
    pub fn made_ahead(&mut self, at: Time, mark: AheadMark) {
        self.peak_in_flight = mark.peak;
        let change = self.in_flight() as i64 - mark.in_flight as i64;
        if change != 0 {
            self.ahead.push(Reverse((at, change)));
            self.ahead_sum += change;
        }
    }

    /// When the first change made ahead falls due (`Time::MAX` if none).
    #[inline(always)]
    pub fn next_due(&self) -> Time {
        self.ahead.peek().map_or(Time::MAX, |Reverse((at, _))| *at)
    }

    /// The changes made ahead that are due by `now` count, each in turn,
    /// towards the peak.
    #[cold]
    #[inline(never)]
    pub fn settle_due(&mut self, now: Time) {
        while let Some(&Reverse((at, change))) = self.ahead.peek() {
            if at > now {
                break;
            }
            self.ahead.pop();
            self.ahead_sum -= change;
            self.peak_in_flight = self.peak_in_flight.max(self.in_flight_now());
        }
    }
}

/// The counters before work done ahead (`Ledger::mark`).
#[derive(Clone, Copy, Debug)]
pub struct AheadMark {
    in_flight: u64,
    peak: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn injected(n: u64) -> Ledger {
        let mut l = Ledger::default();
        for _ in 0..n {
            l.inject();
        }
        l
    }

    #[test]
    fn an_increase_made_ahead_reaches_the_peak_only_when_due() {
        let mut l = injected(3);
        // An ACK answered by two packets at time 50, ahead.
        let mark = l.mark();
        l.received += 1;
        l.inject();
        l.inject();
        l.made_ahead(50, mark);
        assert_eq!(l.peak_in_flight, 3);
        assert_eq!(l.in_flight(), 4);
        // A packet delivered at 20, in its own event.
        l.received += 1;
        l.settle_due(49);
        assert_eq!(l.peak_in_flight, 3);
        l.settle_due(50);
        // 3 - 1 (at 20) - 1 + 2 (at 50): the peak as it was.
        assert_eq!(l.peak_in_flight, 3);
        l.inject();
        assert_eq!(l.peak_in_flight, 4);
    }

    #[test]
    fn a_decrease_made_ahead_does_not_hide_later_injections() {
        let mut l = injected(3);
        // An ACK that sends nothing, at 50, ahead: 2 in flight once due.
        let mark = l.mark();
        l.received += 1;
        l.made_ahead(50, mark);
        // An injection at 10 finds 4 in flight, not 3.
        l.inject();
        assert_eq!(l.peak_in_flight, 4);
        l.settle_due(60);
        assert_eq!(l.next_due(), Time::MAX);
        assert_eq!(l.in_flight(), 3);
        l.inject();
        assert_eq!(l.peak_in_flight, 4);
    }
}
