//! Throughput DRR: kind `tdrr`.
//!
//! Source: Kantawala and Turner, WUCSE-2005-11 (seed
//! `000_36d3c99b5bba185e.txt`), section 3.2 item 2 "Throughput DRR"; digest
//! 000, section 2.6 and ambiguity A-TD1.
//!
//! DRR queues in one shared buffer. Each queue keeps a throughput value, an
//! exponentially weighted average; when a packet arrives to a full buffer,
//! a packet is discarded from the active (non-empty) queue with the highest
//! throughput. No hysteresis. The average "remembers" much longer than the
//! queue's own time constant, which is why TDRR is the best policy for
//! short-lived flows and multi-hop fairness in the report.
//!
//! Parameters, their defaults and sources: [`TdrrParams`]. The report does
//! not say what sample feeds the average (A-TD1); the digest's primary
//! choice, `estimator = "departure"`, is the default: on every departure from
//! queue i, a sample of `b` bytes (since the queue's previous sample) over
//! `d` ns (since it). `arrival` is the alternative: the same on every
//! arrival to queue i (under DRR, backlogged queues have equal service
//! rates, so arrivals separate aggressive flows more).
//!
//! The average is a throughput's, bytes over time: with weight w,
//! `B_i <- (1 - w) B_i + w b`, `D_i <- (1 - w) D_i + w d`, and
//! `thr_i = B_i / D_i`, so each sample counts for the time it covers. An
//! average of the samples' rates `b / d` would count each packet alike: a
//! flow sending its window in one burst per round trip would average its
//! burst rate (its access link's), not its throughput, and every flow would
//! look alike (section 3.2 averages the throughput).
//!
//! Choices: thr_i is 0 until the queue's first sample (the first sample
//! then sets it). With the departure estimator, a queue that a packet makes
//! active again competes with the average a sample ending then would leave
//! (its idle time counted, no bytes), not with its stale one; the sample is
//! still taken at its next departure, one per packet.
//! Several events of one queue at the same instant are summed into the next
//! sample (no division by zero). Ties between equal throughputs go to the
//! lowest queue number.
//!
//! Complexity: O(log n) per packet, n the number of active queues. The
//! maximum of arbitrary real values that change on every packet needs a
//! priority queue (an indexed heap here); the report itself notes the
//! search cost (section 6.1).

use serde::{Deserialize, Serialize};

use crate::blocks::{
    delegate_to_drr_queues, ever_fits, DrrQueues, IndexedHeap, PerFlowQueues, QueueMap,
};
use crate::drr::DropEnd;
use crate::params::{params, positive_limit, weight, SpecError};
use crate::spec::QdiscParams;
use crate::{DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

/// What feeds TDRR's throughput average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateEstimator {
    /// Service rate, updated on each departure from the queue.
    #[default]
    Departure,
    /// Arrival rate, updated on each arrival to the queue.
    Arrival,
}

params! {
    /// TDRR's parameters (section 3.2; digest 000).
    #[derive(PartialEq)]
    pub struct TdrrParams {
        required {
            /// The shared buffer, packets or bytes; no default.
            pub limit: Limit [Buffer],
        }
        #[flatten] pub per_flow: PerFlowQueues,
        /// Which end of the victim queue a push-out takes: `front` (digest
        /// 000, A-Q1, recommended).
        pub drop_from: DropEnd [Choice] = DropEnd::Front,
        /// The weight of the throughput average: 1/32 (section 3.2, "the
        /// exponential weight used in our simulations"; insensitive from
        /// 0.5 to 1e-6).
        pub weight: f64 [Number] = 1.0 / 32.0,
        /// What feeds the average (digest 000, A-TD1, recommended).
        pub estimator: RateEstimator [Choice] = RateEstimator::Departure,
    }
}

impl QdiscParams for TdrrParams {
    const SUMMARY: &'static str = "DRR dropping from the queue with the highest throughput average";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        self.per_flow.validate()?;
        weight("weight", self.weight)
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Tdrr::new(
            self.limit,
            self.per_flow.quantum,
            self.per_flow.map(seed),
            self.drop_from,
            self.weight,
            self.estimator,
        ))
    }
}

pub struct Tdrr<P> {
    q: DrrQueues<P>,
    limit: Limit,
    drop_from: DropEnd,
    weight: f64,
    estimator: RateEstimator,
    /// Throughput average per queue, bytes per second: `avg_bytes` over
    /// `avg_ns`.
    thr: Vec<f64>,
    /// Per queue, the averages of its samples' bytes and durations (ns).
    avg_bytes: Vec<f64>,
    avg_ns: Vec<f64>,
    /// Time of the last sample, and bytes counted since it.
    last: Vec<Time>,
    pending: Vec<u64>,
    /// Active queues by throughput (keys negated: a min-heap gives the max).
    active: IndexedHeap<f64>,
}

impl<P: Packet> Tdrr<P> {
    pub fn new(
        limit: Limit,
        quantum: u32,
        map: QueueMap,
        drop_from: DropEnd,
        weight: f64,
        estimator: RateEstimator,
    ) -> Self {
        let n = map.queue_count();
        Self {
            q: DrrQueues::new(map, quantum as u64, false),
            limit,
            drop_from,
            weight,
            estimator,
            thr: vec![0.0; n],
            avg_bytes: vec![0.0; n],
            avg_ns: vec![0.0; n],
            last: vec![0; n],
            pending: vec![0; n],
            active: IndexedHeap::new(n),
        }
    }

    /// Queue `q`'s throughput average in bytes per second.
    pub fn throughput(&self, q: usize) -> f64 {
        self.thr[q]
    }

    /// Queue `q`'s averages of bytes and ns as a sample ending at `now`
    /// (after its last) would leave them: its bytes since the last sample
    /// over the time since it.
    fn averages_until(&self, q: usize, now: Time) -> (f64, f64) {
        let w = self.weight;
        let bytes = self.avg_bytes[q] + w * (self.pending[q] as f64 - self.avg_bytes[q]);
        let ns = self.avg_ns[q] + w * ((now - self.last[q]) as f64 - self.avg_ns[q]);
        (bytes, ns)
    }

    /// Queue `q`'s throughput average as a sample ending now would leave it.
    fn throughput_until(&self, q: usize, now: Time) -> f64 {
        if now == self.last[q] {
            return self.thr[q];
        }
        let (bytes, ns) = self.averages_until(q, now);
        bytes * 1e9 / ns
    }

    /// Count `bytes` of queue `q` now; a sample once time has passed since
    /// the last one.
    fn sample(&mut self, q: usize, bytes: u32, now: Time) {
        self.pending[q] += bytes as u64;
        if now > self.last[q] {
            (self.avg_bytes[q], self.avg_ns[q]) = self.averages_until(q, now);
            self.thr[q] = self.avg_bytes[q] * 1e9 / self.avg_ns[q];
            self.pending[q] = 0;
            self.last[q] = now;
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Tdrr<P> {
    fn name(&self) -> &'static str {
        "tdrr"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.q.wakeup(now);
        if !ever_fits(self.limit, packet.size()) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        let dst = self.q.classify(packet.flow_key());
        while self.thr.len() < self.q.count() {
            // A new flow's queue: its history starts now.
            self.thr.push(0.0);
            self.avg_bytes.push(0.0);
            self.avg_ns.push(0.0);
            self.last.push(now);
            self.pending.push(0);
            self.active.grow();
        }
        while !self.limit.admits(self.q.backlog(), packet.size()) {
            let (victim, _) = self
                .active
                .peek()
                .expect("a full buffer has an active queue");
            let dropped = match self.drop_from {
                DropEnd::Front => self.q.discard_front(victim),
                DropEnd::Tail => self.q.discard_back(victim),
            };
            verdicts.discard(
                dropped.expect("active queues are non-empty"),
                DropReason::PushOut,
            );
            if self.q.is_empty(victim) {
                self.active.remove(victim);
            }
        }
        let size = packet.size();
        let was_idle = self.q.is_empty(dst);
        self.q.push(dst, packet);
        let thr = match self.estimator {
            RateEstimator::Arrival => {
                self.sample(dst, size, now);
                self.thr[dst]
            }
            // Nothing left an idle queue meanwhile: it rejoins the active
            // ones judged by its throughput until now, not by a stale one
            // (else a flow back from a timeout could lose every packet
            // before one left to update it).
            RateEstimator::Departure if was_idle => self.throughput_until(dst, now),
            RateEstimator::Departure => self.thr[dst],
        };
        self.active.set(dst, -thr);
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        self.q.wakeup(now);
        let (q, p) = self.q.dequeue()?;
        if self.estimator == RateEstimator::Departure {
            self.sample(q, p.size(), now);
        }
        if self.q.is_empty(q) {
            self.active.remove(q);
        } else {
            self.active.set(q, -self.thr[q]);
        }
        Some(p)
    }

    delegate_to_drr_queues!(lookup, clock);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    const MS: Time = 1_000_000;

    fn tdrr(limit: u64, estimator: RateEstimator) -> Tdrr<TestPacket> {
        Tdrr::new(
            Limit::Packets(limit),
            1500,
            QueueMap::per_flow(),
            DropEnd::Front,
            0.5,
            estimator,
        )
    }

    fn drained(v: &mut Verdicts<TestPacket>) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        v.drain(|d| {
            assert_eq!((d.reason, d.buffered), (DropReason::PushOut, true));
            out.push((d.packet.flow, d.packet.seq))
        });
        out
    }

    #[test]
    fn departure_average_follows_the_hand_computed_values() {
        let mut d = tdrr(100, RateEstimator::Departure);
        let mut v = Verdicts::new();
        for s in 0..3 {
            d.enqueue(TestPacket::new(0, s, 1000), 0, &mut v);
        }
        // Departures at 1 ms and 2 ms: samples of 1000 B over 1 ms. The
        // first sets the averages to half of it (500 B over 0.5 ms: 1e6 B/s),
        // the second moves them halfway to it (750 B over 0.75 ms: 1e6 B/s).
        d.dequeue(MS, &mut v);
        assert_eq!(d.throughput(0), 1e6);
        d.dequeue(2 * MS, &mut v);
        assert_eq!(d.throughput(0), 1e6);
        // A departure 2 ms later, 1000 B over 2 ms: 875 B over 1.375 ms.
        d.dequeue(4 * MS, &mut v);
        assert_eq!(d.throughput(0), 875.0 * 1e9 / 1_375_000.0);
    }

    /// The queue of one flow whose packets leave (arrive and leave at once)
    /// at `times`, with the report's weight 1/32: its throughput average
    /// after each departure.
    fn averages_at_departures(times: impl Iterator<Item = Time>) -> Vec<f64> {
        let mut d = Tdrr::new(
            Limit::Packets(10),
            1500,
            QueueMap::per_flow(),
            DropEnd::Front,
            1.0 / 32.0,
            RateEstimator::Departure,
        );
        let mut v = Verdicts::new();
        d.enqueue(TestPacket::new(0, 0, 1000), 0, &mut v);
        d.dequeue(0, &mut v);
        times
            .enumerate()
            .map(|(seq, t)| {
                d.enqueue(TestPacket::new(0, seq as u64 + 1, 1000), t, &mut v);
                d.dequeue(t, &mut v);
                d.throughput(0)
            })
            .collect()
    }

    #[test]
    fn the_average_is_the_throughput_however_bursty_the_flow() {
        // 100 kB/s both: ten packets 1 ms apart every 100 ms (a window sent
        // in one burst per round trip), or one packet every 10 ms.
        let bursty = averages_at_departures(
            (0..50).flat_map(|cycle| (1..=10).map(move |k| cycle * 100 * MS + k * MS)),
        );
        let smooth = averages_at_departures((1..=500).map(|k| k * 10 * MS));
        for thr in &smooth[400..] {
            assert!((thr - 1e5).abs() < 1.0, "{thr}");
        }
        // Within 15% through the bursty flow's cycle, never near its burst
        // rate of 1e6 B/s (an average of the samples' rates gives 9.1e5).
        for thr in &bursty[400..] {
            assert!((thr - 1e5).abs() < 1.5e4, "{thr}");
        }
    }

    #[test]
    fn drops_from_the_active_queue_with_the_highest_throughput_not_the_longest() {
        let mut d = tdrr(6, RateEstimator::Departure);
        let mut v = Verdicts::new();
        // Flow 0 is served fast first, building a high average.
        for s in 0..3 {
            d.enqueue(TestPacket::new(0, s, 1000), 0, &mut v);
        }
        d.dequeue(MS, &mut v);
        d.dequeue(2 * MS, &mut v);
        // Flow 0 holds 1 packet (thr 1e6); flow 1 arrives with 5 (thr 0).
        for s in 0..5 {
            d.enqueue(TestPacket::new(1, s, 1000), 2 * MS, &mut v);
        }
        assert_eq!(d.backlog().packets, 6);
        // Full: the victim is flow 0 (highest throughput), though flow 1 is
        // five times longer.
        d.enqueue(TestPacket::new(1, 5, 1000), 2 * MS, &mut v);
        assert_eq!(drained(&mut v), vec![(0, 2)]);
        // Flow 0 is empty now, so only flow 1 is active: the next victim is
        // flow 1's head.
        d.enqueue(TestPacket::new(2, 0, 1000), 2 * MS, &mut v);
        assert_eq!(drained(&mut v), vec![(1, 0)]);
    }

    #[test]
    fn a_queue_back_from_idle_is_judged_by_its_throughput_until_then() {
        let mut d = tdrr(3, RateEstimator::Departure);
        let mut v = Verdicts::new();
        // Flow 0 is served 1000 B in its first ms (1e6 B/s), then falls
        // silent; flow 1, from 1 ms, 1000 B in its first 4 ms (2.5e5 B/s),
        // and keeps a packet queued.
        d.enqueue(TestPacket::new(0, 0, 1000), 0, &mut v);
        d.dequeue(MS, &mut v);
        d.enqueue(TestPacket::new(1, 0, 1000), MS, &mut v);
        d.enqueue(TestPacket::new(1, 1, 1000), MS, &mut v);
        d.dequeue(5 * MS, &mut v);
        assert_eq!((d.throughput(0), d.throughput(1)), (1e6, 2.5e5));
        // At 101 ms flow 0 is back: it rejoins the active queues as its
        // 100 ms without a byte leave it, 250 B over 50.25 ms (4,975 B/s);
        // the sample itself waits for its departure.
        d.enqueue(TestPacket::new(0, 1, 1000), 101 * MS, &mut v);
        assert_eq!(d.throughput(0), 1e6);
        // Full: the victim is flow 1, the faster of the two now (a stale
        // 1e6 B/s would have made it flow 0's only packet).
        d.enqueue(TestPacket::new(1, 2, 1000), 101 * MS, &mut v);
        d.enqueue(TestPacket::new(1, 3, 1000), 101 * MS, &mut v);
        assert_eq!(drained(&mut v), vec![(1, 1)]);
    }

    #[test]
    fn arrival_estimator_picks_the_faster_sender() {
        let mut d = tdrr(4, RateEstimator::Arrival);
        let mut v = Verdicts::new();
        // Flow 0 sends every 1 ms, flow 1 every 2 ms (from t = 0: their
        // queues are created at their first arrival).
        d.enqueue(TestPacket::new(0, 0, 1000), 0, &mut v);
        d.enqueue(TestPacket::new(1, 0, 1000), 0, &mut v);
        d.enqueue(TestPacket::new(0, 1, 1000), MS, &mut v);
        d.enqueue(TestPacket::new(0, 2, 1000), 2 * MS, &mut v);
        d.enqueue(TestPacket::new(1, 1, 1000), 2 * MS, &mut v);
        // Flow 0: 2000 B over its first 1 ms (averages 1000 B over 0.5 ms:
        // 2e6 B/s), then 1000 B over 1 ms (1000 B over 0.75 ms). Flow 1 has
        // no sample yet when its second packet finds the buffer full (4):
        // the victim is flow 0. Flow 1's own sample comes after the
        // decision: 2000 B over 2 ms, 1e6 B/s.
        assert_eq!(d.throughput(0), 1000.0 * 1e9 / 750_000.0);
        assert_eq!(d.throughput(1), 1e6);
        assert!(d.throughput(0) > d.throughput(1));
        assert_eq!(drained(&mut v), vec![(0, 0)]);
    }
}
