//! Blue (Feng, Kandlur, Saha and Shin, "The BLUE active queue management
//! algorithms", IEEE/ACM Transactions on Networking 10(4), 2002, section
//! IV, Fig. 5; digest 001 section 2.6).
//!
//! One FIFO and one marking probability `p_m`, driven by packet loss and
//! link idleness instead of queue length:
//!
//! ```text
//! on packet loss (buffer overflow) or queue length > L:
//!     if now - last_update > freeze_time: p_m += d1; last_update = now
//! on link idle:
//!     if now - last_update > freeze_time: p_m -= d2; last_update = now
//! every arrival is marked (ECN) or dropped with probability p_m
//! ```
//!
//! Parameters, their defaults and sources: [`BlueParams`] (the ToN paper's
//! Table II also runs d1 = 0.02/d2 = 0.002 and freeze times of 10 ms).
//!
//! Choices where the paper is silent: "link idle" is a dequeue that finds
//! the queue empty or leaves it empty (the link has nothing more to send);
//! the first update is not held by `freeze_time` (there was no previous
//! one), and `freeze_time` 0 holds nothing; `p_m` is kept in [0, 1]; a packet that already carries CE is
//! queued without a second mark. O(1) per packet.

use crate::blocks::CountedFifo;
use crate::params::{params, positive_limit, probability, SpecError, MS};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Ecn, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// How Blue moves its probability, shared with SFB's bins: the defaults
    /// of Feng's ns Blue model, which the SFB paper's experiments and the
    /// ns-3 port use (digest 001, A12).
    #[derive(Copy, PartialEq)]
    pub struct BlueSteps {
        /// d1, the rise on loss: 0.0025.
        pub increment: f64 [Number] = 0.0025,
        /// d2, the fall on idleness: 0.00025.
        pub decrement: f64 [Number] = 0.00025,
        /// How long an update holds the next: 100 ms.
        pub freeze_time: Time [Time] = 100 * MS,
    }
}

impl BlueSteps {
    /// Refuse steps that are not probabilities.
    pub fn validate(&self) -> Result<(), SpecError> {
        probability("increment", self.increment)?;
        probability("decrement", self.decrement)
    }
}

params! {
    /// Blue's parameters (ToN 2002, section IV).
    #[derive(PartialEq)]
    pub struct BlueParams {
        required {
            /// The buffer, packets or bytes; no default.
            pub limit: Limit [Buffer],
        }
        #[flatten] pub steps: BlueSteps,
        /// L: the queue length (in the unit of `limit`) above which `p_m`
        /// rises too; unset: loss alone (the paper's optional trigger).
        pub threshold: Option<u64> [Number] = None,
        /// Mark ECN-capable packets instead of dropping them (the paper's
        /// Blue marks).
        pub ecn: bool [Flag] = false,
    }
}

impl QdiscParams for BlueParams {
    const SUMMARY: &'static str = "Blue: drop probability driven by loss and idle events";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.steps.validate()
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Blue::new(
            self.limit,
            self.steps.increment,
            self.steps.decrement,
            self.steps.freeze_time,
            self.threshold,
            self.ecn,
            seed,
        ))
    }
}

/// Blue's probability and its update hold, shared with SFB's bins.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlueProbability {
    pub p: f64,
    last_update: Option<Time>,
}

impl BlueProbability {
    /// Updates are held for `freeze` after the last one; 0 holds nothing
    /// (Linux SFB has no hold).
    #[inline]
    fn may_update(&self, now: Time, freeze: Time) -> bool {
        freeze == 0
            || self
                .last_update
                .is_none_or(|t| now.saturating_sub(t) > freeze)
    }

    /// Congestion (loss or a long queue): raise by `d1` unless frozen.
    #[inline]
    pub fn increase(&mut self, d1: f64, now: Time, freeze: Time) {
        if self.may_update(now, freeze) {
            self.p = (self.p + d1).min(1.0);
            self.last_update = Some(now);
        }
    }

    /// Idleness: lower by `d2` unless frozen.
    #[inline]
    pub fn decrease(&mut self, d2: f64, now: Time, freeze: Time) {
        if self.may_update(now, freeze) {
            self.p = (self.p - d2).max(0.0);
            self.last_update = Some(now);
        }
    }
}

pub struct Blue<P> {
    queue: CountedFifo<P>,
    limit: Limit,
    pm: BlueProbability,
    d1: f64,
    d2: f64,
    freeze: Time,
    threshold: Option<u64>,
    ecn: bool,
    rng: Rng,
}

impl<P: Packet> Blue<P> {
    pub fn new(
        limit: Limit,
        d1: f64,
        d2: f64,
        freeze: Time,
        threshold: Option<u64>,
        ecn: bool,
        seed: u64,
    ) -> Self {
        Self {
            queue: CountedFifo::default(),
            limit,
            pm: BlueProbability::default(),
            d1,
            d2,
            freeze,
            threshold,
            ecn,
            rng: Rng::stream(seed, 0xb1e),
        }
    }

    /// The marking probability now.
    pub fn probability(&self) -> f64 {
        self.pm.p
    }

    fn length(&self) -> u64 {
        match self.limit {
            Limit::Packets(_) => self.queue.len() as u64,
            Limit::Bytes(_) => self.queue.bytes(),
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Blue<P> {
    fn name(&self) -> &'static str {
        "blue"
    }

    fn enqueue(&mut self, mut packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        if !self.limit.admits(self.backlog(), packet.size()) {
            self.pm.increase(self.d1, now, self.freeze);
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        if self.threshold.is_some_and(|l| self.length() > l) {
            self.pm.increase(self.d1, now, self.freeze);
        }
        if self.pm.p > 0.0 && self.rng.chance(self.pm.p) {
            match packet.ecn() {
                Ecn::Ect if self.ecn => {
                    packet.mark_ce();
                    verdicts.mark(packet.size());
                }
                Ecn::Ce if self.ecn => {}
                _ => {
                    verdicts.refuse(packet, DropReason::Early);
                    return;
                }
            }
        }
        self.queue.push_back(packet);
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front();
        if self.queue.is_empty() {
            self.pm.decrease(self.d2, now, self.freeze);
        }
        packet
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    const MS: Time = 1_000_000;

    #[test]
    fn overflow_raises_the_probability_once_per_freeze_time() {
        let mut b = Blue::new(Limit::Packets(2), 0.02, 0.002, 10 * MS, None, false, 1);
        let mut v = Verdicts::new();
        b.enqueue(TestPacket::new(1, 0, 100), 0, &mut v);
        b.enqueue(TestPacket::new(1, 1, 100), 0, &mut v);
        assert_eq!(b.probability(), 0.0);
        // Overflows at 0 ms (first update), 5 ms (frozen), 10 ms (frozen:
        // not more than freeze_time since), 10.000001 ms (update).
        for (i, t) in [0, 5 * MS, 10 * MS, 10 * MS + 1].into_iter().enumerate() {
            b.enqueue(TestPacket::new(2, i as u64, 100), t, &mut v);
        }
        assert!(
            (b.probability() - 0.04).abs() < 1e-12,
            "{}",
            b.probability()
        );
        assert_eq!(
            v.dropped()
                .iter()
                .filter(|d| d.reason == DropReason::Overflow)
                .count(),
            4
        );
    }

    #[test]
    fn idle_link_lowers_the_probability() {
        let mut b = Blue::new(Limit::Packets(1), 0.02, 0.002, 10 * MS, None, false, 1);
        let mut v = Verdicts::new();
        b.enqueue(TestPacket::new(1, 0, 100), 0, &mut v);
        b.enqueue(TestPacket::new(1, 1, 100), 0, &mut v); // overflow: 0.02
        b.enqueue(TestPacket::new(1, 2, 100), 11 * MS, &mut v); // overflow: 0.04
        assert!((b.probability() - 0.04).abs() < 1e-12);
        // The queue empties at 15 ms: frozen. At 22 ms the link is idle: -0.002.
        assert!(b.dequeue(15 * MS, &mut v).is_some());
        assert!((b.probability() - 0.04).abs() < 1e-12);
        assert!(b.dequeue(22 * MS, &mut v).is_none());
        assert!((b.probability() - 0.038).abs() < 1e-12);
    }

    #[test]
    fn marks_ect_packets_and_drops_the_others_at_the_same_rate() {
        let mut b = Blue::new(Limit::Packets(1_000_000), 0.5, 0.0, 0, Some(0), true, 3);
        let mut v = Verdicts::new();
        // Queue length 1 > L = 0 on every later arrival: p rises to 1.
        for i in 0..3 {
            b.enqueue(TestPacket::new(1, i, 100), i * MS, &mut v);
        }
        assert_eq!(b.probability(), 1.0);
        let mut ect = TestPacket::new(2, 0, 100);
        ect.ecn = Ecn::Ect;
        let before = b.backlog().packets;
        b.enqueue(ect, 10 * MS, &mut v);
        b.enqueue(TestPacket::new(3, 0, 100), 10 * MS, &mut v);
        assert_eq!(b.backlog().packets, before + 1);
        assert_eq!(v.marked(), 1);
        assert_eq!(
            v.dropped().last().map(|d| (d.packet.flow, d.reason)),
            Some((3, DropReason::Early))
        );
    }
}
