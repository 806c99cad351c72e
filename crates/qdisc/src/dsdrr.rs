//! Discard State DRR: kind `dsdrr`.
//!
//! Source: Kantawala and Turner, WUCSE-2005-11 (seed
//! `000_36d3c99b5bba185e.txt`), section 6.2 item 2 (Figure 6.1 is an image;
//! its rules are in the text); digest 000, section 2.9 and ambiguities
//! A-DS1 to A-DS5.
//!
//! DTDRR plus QSDRR-like hysteresis, still discarding only on arrival:
//! 1. once discarding starts on a queue, it is marked with a discard bit and
//!    every later packet for it is discarded regardless of its length;
//! 2. the bit is cleared when the queue becomes empty;
//! 3. a packet for an unmarked queue over the threshold (Q_i >= alpha * F,
//!    equation 6.1) marks the queue only if fewer than W queues are marked;
//! 4. a queue is also marked if there is no free space for the packet;
//! 5. every period T: if the buffer overflowed during the period, W += 2;
//!    if not and fewer than W queues are marked, W = marked + 1.
//!
//! Parameters, their defaults and sources: [`DsdrrParams`].
//!
//! Choices where the report is silent (the digest's [REC], all taken):
//! - A-DS1: a packet over the threshold when W queues are already marked is
//!   accepted if it fits (otherwise W could not restore throughput, and W
//!   exists because marking "too many queues" hurt throughput). `over_w =
//!   "drop"` drops it without marking instead.
//! - A-DS2: the no-free-space rule marks regardless of W.
//! - A-DS3: "the buffer overflowed" = at least one arrival found no room in
//!   the period; W is kept in [1, floor(w_max * queues)]; the initial W is
//!   rounded up; the period timer runs at t = T, 2T, ... The W = marked + 1
//!   branch applies only without overflow.
//! - A-DS4: the bit is cleared on the dequeue that empties the queue (there
//!   is no push-out, so that is the only way a queue empties).
//! - A-DS5: an empty queue is never marked (its bit could never be cleared):
//!   a packet that finds no room for an empty queue is dropped unmarked.
//! - With one queue per flow the number of queues grows as flows appear:
//!   until the first period W is ceil(w_init * queues seen so far), and
//!   W's cap follows the queues seen so far.
//! - Drop reasons: `overflow` for the arrival that finds no room or crosses
//!   the threshold (the queue's share is full), `policy` for packets dropped
//!   because their queue is marked.
//!
//! O(1) per packet; the period update is O(1) and also runs lazily on the
//! next enqueue or dequeue if `wakeup` was not called.

use serde::{Deserialize, Serialize};

use crate::blocks::{delegate_to_drr_queues, free_space, DrrQueues, PerFlowQueues, QueueMap};
use crate::params::{nonzero, params, positive, positive_limit, refuse, weight, SpecError, MS};
use crate::spec::QdiscParams;
use crate::{DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

/// What DSDRR does with a packet over the threshold when W queues are
/// already marked (digest 000, A-DS1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverW {
    #[default]
    Accept,
    Drop,
}

params! {
    /// DSDRR's parameters (section 6.2).
    #[derive(Copy, PartialEq)]
    pub struct DsdrrParams {
        required {
            /// The shared buffer, packets or bytes; no default.
            pub limit: Limit [Buffer],
        }
        #[flatten] pub per_flow: PerFlowQueues,
        /// alpha of the threshold `alpha F`: 0.1 (section 6.2).
        pub alpha: f64 [Number] = 0.1,
        /// The period T of W's update: 1 s (section 6.2).
        pub period: Time [Time] = 1_000 * MS,
        /// W's start, a fraction of the queues: 0.1 (section 6.2, "W
        /// initially 10% of the number of queues").
        pub w_init: f64 [Number] = 0.1,
        /// W's cap, a fraction of the queues: 0.5 (section 6.2).
        pub w_max: f64 [Number] = 0.5,
        /// A packet over the threshold with W queues marked is accepted
        /// (digest 000, A-DS1, recommended) or dropped.
        pub over_w: OverW [Choice] = OverW::Accept,
    }
}

impl QdiscParams for DsdrrParams {
    const SUMMARY: &'static str = "DRR with discard bits and a periodically updated W";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.per_flow.validate()?;
        positive("alpha", self.alpha)?;
        nonzero("period", self.period)?;
        weight("w_init", self.w_init)?;
        weight("w_max", self.w_max)?;
        if self.w_init > self.w_max {
            return refuse(
                "w_init",
                format!(
                    "must not exceed w_max ({}), got {}",
                    self.w_max, self.w_init
                ),
            );
        }
        Ok(())
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Dsdrr::new(self, self.per_flow.map(seed)))
    }
}

pub struct Dsdrr<P> {
    q: DrrQueues<P>,
    limit: Limit,
    params: DsdrrParams,
    discard: Vec<bool>,
    /// Queues with their discard bit set (nd).
    marked: usize,
    /// W, once the first period has fixed it.
    w: Option<usize>,
    overflowed: bool,
    next_period: Time,
}

impl<P: Packet> Dsdrr<P> {
    /// DSDRR over the queues of `map`.
    pub fn new(params: &DsdrrParams, map: QueueMap) -> Self {
        let n = map.queue_count();
        Self {
            q: DrrQueues::new(map, params.per_flow.quantum as u64, false),
            limit: params.limit,
            params: *params,
            discard: vec![false; n],
            marked: 0,
            w: None,
            overflowed: false,
            next_period: params.period,
        }
    }

    /// The current W.
    pub fn w(&self) -> usize {
        self.w.unwrap_or_else(|| {
            ((self.params.w_init * self.q.count() as f64).ceil() as usize).clamp(1, self.w_cap())
        })
    }

    /// Number of queues in discard state.
    pub fn marked(&self) -> usize {
        self.marked
    }

    pub fn is_marked(&self, q: usize) -> bool {
        self.discard[q]
    }

    fn w_cap(&self) -> usize {
        ((self.params.w_max * self.q.count() as f64).floor() as usize).max(1)
    }

    fn mark(&mut self, q: usize) {
        if !self.discard[q] {
            self.discard[q] = true;
            self.marked += 1;
        }
    }

    /// The period updates of W due at `now`.
    fn tick(&mut self, now: Time) {
        while now >= self.next_period {
            let w = self.w();
            let w = if self.overflowed {
                (w + 2).min(self.w_cap())
            } else if self.marked < w {
                self.marked + 1
            } else {
                w
            };
            let was_overflow = self.overflowed;
            self.w = Some(w.max(1));
            self.overflowed = false;
            self.next_period += self.params.period;
            if !was_overflow && now >= self.next_period {
                // Further periods with no arrival change nothing (W is
                // already marked + 1 or unchanged): skip them.
                let skip = (now - self.next_period) / self.params.period + 1;
                self.next_period += skip * self.params.period;
            }
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Dsdrr<P> {
    fn name(&self) -> &'static str {
        "dsdrr"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.tick(now);
        self.q.wakeup(now);
        let i = self.q.classify(packet.flow_key());
        if self.discard.len() < self.q.count() {
            self.discard.resize(self.q.count(), false);
        }
        // Rule 5: a marked queue drops everything.
        if self.discard[i] {
            verdicts.refuse(packet, DropReason::Policy);
            return;
        }
        let backlog = self.q.backlog();
        // Rule 4: no room marks the queue (regardless of W, A-DS2), unless
        // it is empty (A-DS5).
        if !self.limit.admits(backlog, packet.size()) {
            self.overflowed = true;
            if !self.q.is_empty(i) {
                self.mark(i);
            }
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        // Rule 3: over the threshold, mark only while fewer than W are.
        let free = free_space(self.limit, backlog) as f64;
        if self.q.size_in(i, self.limit) as f64 >= self.params.alpha * free {
            if self.marked < self.w() {
                self.mark(i);
                verdicts.refuse(packet, DropReason::Overflow);
                return;
            }
            if self.params.over_w == OverW::Drop {
                verdicts.refuse(packet, DropReason::Overflow);
                return;
            }
        }
        self.q.push(i, packet);
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        self.tick(now);
        self.q.wakeup(now);
        let (q, p) = self.q.dequeue()?;
        if self.q.is_empty(q) && self.discard[q] {
            self.discard[q] = false;
            self.marked -= 1;
        }
        Some(p)
    }

    delegate_to_drr_queues!(lookup);

    fn has_clock(&self) -> bool {
        true
    }

    fn next_wakeup(&self) -> Option<Time> {
        Some(
            self.q
                .next_wakeup()
                .map_or(self.next_period, |t| t.min(self.next_period)),
        )
    }

    fn wakeup(&mut self, now: Time, _verdicts: &mut Verdicts<P>) {
        self.tick(now);
        self.q.wakeup(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    const S: Time = 1_000_000_000;

    /// The defaults: alpha 0.1, T = 1 s, W from 10% to 50% of the queues.
    fn params(limit: u64) -> DsdrrParams {
        DsdrrParams::new(Limit::Packets(limit))
    }

    fn dsdrr_with(params: DsdrrParams, queues: usize) -> Dsdrr<TestPacket> {
        Dsdrr::new(&params, QueueMap::Modulo { count: queues })
    }

    fn dsdrr(limit: u64, queues: usize) -> Dsdrr<TestPacket> {
        dsdrr_with(params(limit), queues)
    }

    fn reasons(v: &mut Verdicts<TestPacket>) -> Vec<(u64, u64, DropReason)> {
        let mut out = Vec::new();
        v.drain(|x| {
            assert!(!x.buffered, "DSDRR drops only on arrival");
            out.push((x.packet.flow, x.packet.seq, x.reason))
        });
        out
    }

    #[test]
    fn marks_over_the_threshold_and_drops_until_the_queue_empties() {
        // B = 100, alpha = 0.1, 20 queues: W = ceil(2) = 2, cap 10.
        let mut d = dsdrr(100, 20);
        let mut v = Verdicts::new();
        assert_eq!(d.w(), 2);
        // Queue 0 alone: accepted while Q0 < 0.1 (100 - Q0): Q0 = 0..9
        // (9 < 9.1); at Q0 = 10 >= 9: marked, dropped.
        for s in 0..11 {
            d.enqueue(TestPacket::new(0, s, 1500), 0, &mut v);
        }
        assert_eq!(d.q.len(0), 10);
        assert!(d.is_marked(0));
        assert_eq!(reasons(&mut v), vec![(0, 10, DropReason::Overflow)]);
        // Marked: dropped regardless of length, even after it shrank.
        d.dequeue(0, &mut v);
        d.enqueue(TestPacket::new(0, 11, 1500), 0, &mut v);
        assert_eq!(reasons(&mut v), vec![(0, 11, DropReason::Policy)]);
        // The bit clears when the queue empties; then packets are accepted.
        for _ in 0..9 {
            d.dequeue(0, &mut v);
        }
        assert!(!d.is_marked(0));
        assert_eq!(d.marked(), 0);
        d.enqueue(TestPacket::new(0, 12, 1500), 0, &mut v);
        assert_eq!(d.q.len(0), 1);
    }

    #[test]
    fn at_most_w_queues_are_marked_by_the_threshold() {
        // B = 100, 20 queues, W = 2. Three flows offer 12 packets each, one
        // flow after the other.
        let mut d = dsdrr(100, 20);
        let mut v = Verdicts::new();
        for f in 0..3 {
            for s in 0..12 {
                d.enqueue(TestPacket::new(f, s, 1500), 0, &mut v);
            }
        }
        // Queue 0 crosses 0.1 F at Q0 = 10 (10 >= 9): marked. Queue 1 at
        // Q1 = 9 (9 >= 0.1 * 81): marked, W = 2 reached. Queue 2 crosses at
        // Q2 = 8 (8 >= 0.1 * 73) but W queues are marked: accepted (A-DS1).
        assert!(d.is_marked(0) && d.is_marked(1) && !d.is_marked(2));
        assert_eq!((d.q.len(0), d.q.len(1), d.q.len(2)), (10, 9, 12));
        use DropReason::{Overflow as O, Policy as P};
        assert_eq!(
            reasons(&mut v),
            vec![(0, 10, O), (0, 11, P), (1, 9, O), (1, 10, P), (1, 11, P)]
        );
    }

    #[test]
    fn over_w_drop_variant_drops_without_marking() {
        let mut d = dsdrr_with(
            DsdrrParams {
                over_w: OverW::Drop,
                ..params(100)
            },
            20,
        );
        let mut v = Verdicts::new();
        for f in 0..3 {
            for s in 0..12 {
                d.enqueue(TestPacket::new(f, s, 1500), 0, &mut v);
            }
        }
        assert!(!d.is_marked(2));
        assert_eq!(d.q.len(2), 8);
    }

    #[test]
    fn no_free_space_marks_regardless_of_w_but_never_an_empty_queue() {
        // 10 queues: W = 1, cap 5. B = 10, alpha large enough never to bite.
        let mut d = dsdrr_with(
            DsdrrParams {
                alpha: 100.0,
                ..params(10)
            },
            10,
        );
        let mut v = Verdicts::new();
        for s in 0..5 {
            d.enqueue(TestPacket::new(0, s, 1500), 0, &mut v);
            d.enqueue(TestPacket::new(1, s, 1500), 0, &mut v);
        }
        assert_eq!(d.backlog().packets, 10);
        d.enqueue(TestPacket::new(0, 5, 1500), 0, &mut v);
        d.enqueue(TestPacket::new(1, 5, 1500), 0, &mut v);
        d.enqueue(TestPacket::new(2, 0, 1500), 0, &mut v);
        // Both non-empty queues are marked (2 > W = 1); the empty one is not.
        assert!(d.is_marked(0) && d.is_marked(1) && !d.is_marked(2));
        assert_eq!(d.marked(), 2);
        assert!(reasons(&mut v).iter().all(|r| r.2 == DropReason::Overflow));
    }

    #[test]
    fn w_grows_by_two_after_an_overflow_and_falls_to_marked_plus_one() {
        // 20 queues: W = 2, cap 10. B = 4, alpha large.
        let mut d = dsdrr_with(
            DsdrrParams {
                alpha: 100.0,
                ..params(4)
            },
            20,
        );
        let mut v = Verdicts::new();
        assert_eq!(d.next_wakeup(), Some(S));
        for s in 0..5 {
            d.enqueue(TestPacket::new(0, s, 1500), S / 2, &mut v);
        }
        // The 5th packet found no room: overflow, queue 0 marked.
        assert_eq!(d.marked(), 1);
        d.wakeup(S, &mut v);
        assert_eq!(d.w(), 4, "overflow in the period: W = 2 + 2");
        assert_eq!(d.next_wakeup(), Some(2 * S));
        d.wakeup(2 * S, &mut v);
        assert_eq!(d.w(), 2, "no overflow, 1 marked < 4: W = 1 + 1");
        // Overflows every period: W climbs by 2 to the cap of 10.
        for k in 3..10 {
            d.enqueue(TestPacket::new(1, k, 1500), k * S - 1, &mut v);
            d.wakeup(k * S, &mut v);
        }
        assert_eq!(d.w(), 10);
        // Idle for a long time: the lazy update on the next dequeue sets
        // W = marked + 1 once and skips the idle periods.
        for _ in 0..4 {
            d.dequeue(100 * S, &mut v);
        }
        assert_eq!(d.w(), 2);
        assert_eq!(d.next_wakeup(), Some(101 * S));
        assert_eq!(d.marked(), 0, "queue 0 emptied, its bit cleared");
    }
}
