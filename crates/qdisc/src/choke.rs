//! CHOKe: CHOose and Keep for responsive flows, CHOose and Kill for
//! unresponsive flows (Pan, Prabhakar and Psounis, INFOCOM 2000), as Linux
//! `net/sched/sch_choke.c` implements it.
//!
//! RED with one more test: once the average exceeds `min_th`, every arrival
//! is compared with a packet drawn at random from the queue; if both belong
//! to the same flow, both are dropped (a flow with many packets queued is
//! likely to be drawn). Otherwise RED decides as usual: above `max_th`
//! drop (or mark), between the thresholds drop (or mark) with RED's
//! probability, spread by the count. The arrival is then tail-dropped if
//! the queue holds `limit` packets.
//!
//! As Linux: the queue is a ring of slots in which a victim drawn from the
//! middle leaves a hole (O(1) removal); holes at the head or tail are
//! skipped; the random draw retries up to 3 times on a hole, then takes the
//! head. The average is in packets (holes excluded), computed on every
//! arrival, with RED's idle decay (the exact `(1-w)^m` of the shared
//! [`Ewma`] instead of Linux's shift table); the drop test is the
//! divisionless form Linux uses (`red_mark_probability`): drop when
//! `p_b count >= R`, with `R` uniform in [0, 1) drawn after each drop.
//! Matched drops are [`DropReason::Policy`] (the queued victim is a
//! buffered drop); RED drops are [`DropReason::Early`].
//!
//! Parameters, their defaults and sources: [`ChokeParams`]. O(1) amortized
//! per packet (the ring is compacted, O(n), only when holes fill it).

use crate::blocks::Ewma;
use crate::params::{
    link_rate, nonzero, params, probability, thresholds, weight, SpecError, DEFAULT_LINK_RATE_BPS,
};
use crate::red::tx_time_ns;
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Ecn, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// CHOKe's parameters: RED's, with the paper's simulations (section 4).
    #[derive(PartialEq)]
    pub struct ChokeParams {
        /// The buffer: 300 packets (section 4).
        pub limit: u64 [Packets] = 300,
        /// Lower threshold on the average, packets: 100 (section 4).
        pub min_th: f64 [Number] = 100.0,
        /// Upper threshold, packets: 200 (section 4).
        pub max_th: f64 [Number] = 200.0,
        /// Weight of the average: 0.002 (RED's).
        pub w_q: f64 [Number] = 0.002,
        /// Drop probability at `max_th`: 0.02 (RED's).
        pub max_p: f64 [Number] = 0.02,
        /// Mark ECN-capable packets instead of RED's drops (Linux's `ecn`).
        pub ecn: bool [Flag] = false,
        /// The typical packet of the idle decay: 1000 bytes.
        pub mean_packet_size: u32 [Bytes] = 1000,
        /// The rate of the link the queue feeds, for the idle decay: the
        /// simulator fills in the link's (10 Mb/s if unknown).
        pub link_rate_bps: Option<u64> [Rate] = None,
    }
}

impl QdiscParams for ChokeParams {
    const SUMMARY: &'static str = "CHOKe: drop a matching pair, as Linux sch_choke";

    fn validate(&self) -> Result<(), SpecError> {
        nonzero("limit", self.limit)?;
        thresholds(self.min_th, self.max_th)?;
        weight("w_q", self.w_q)?;
        probability("max_p", self.max_p)?;
        nonzero("mean_packet_size", self.mean_packet_size)?;
        link_rate(self.link_rate_bps)
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.link_rate_bps.get_or_insert(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Choke::new(self.clone(), seed))
    }
}

pub struct Choke<P> {
    tab: Vec<Option<P>>,
    mask: usize,
    head: usize,
    tail: usize,
    packets: u64,
    bytes: u64,
    params: ChokeParams,
    avg: Ewma,
    count: i64,
    /// The cached random number R of the count-based drop.
    r: f64,
    idle_since: Option<Time>,
    s_ns: f64,
    rng: Rng,
}

impl<P: Packet> Choke<P> {
    pub fn new(params: ChokeParams, seed: u64) -> Self {
        // Twice the limit: room for holes before a compaction is needed.
        let size = (2 * (params.limit as usize + 1)).next_power_of_two();
        Self {
            tab: (0..size).map(|_| None).collect(),
            mask: size - 1,
            head: 0,
            tail: 0,
            packets: 0,
            bytes: 0,
            avg: Ewma::new(params.w_q),
            count: -1,
            r: 0.0,
            idle_since: None,
            s_ns: tx_time_ns(
                params.mean_packet_size,
                params.link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS),
            ),
            rng: Rng::stream(seed, 0xC40CE),
            params,
        }
    }

    pub fn avg(&self) -> f64 {
        self.avg.value()
    }

    /// Slots from head to tail, holes included.
    #[inline]
    fn span(&self) -> usize {
        self.tail.wrapping_sub(self.head) & self.mask
    }

    fn zap_head_holes(&mut self) {
        loop {
            self.head = (self.head + 1) & self.mask;
            if self.head == self.tail || self.tab[self.head].is_some() {
                break;
            }
        }
    }

    fn zap_tail_holes(&mut self) {
        loop {
            self.tail = self.tail.wrapping_sub(1) & self.mask;
            if self.tail == self.head || self.tab[self.tail.wrapping_sub(1) & self.mask].is_some() {
                break;
            }
        }
    }

    /// Remove the packet at slot `idx` (Linux `choke_drop_by_idx`).
    fn take(&mut self, idx: usize) -> P {
        let p = self.tab[idx].take().expect("slot holds a packet");
        if idx == self.head {
            self.zap_head_holes();
        } else if idx == (self.tail.wrapping_sub(1) & self.mask) {
            self.zap_tail_holes();
        }
        self.packets -= 1;
        self.bytes -= p.size() as u64;
        p
    }

    /// `choke_peek_random`: up to 3 draws, then the head.
    fn draw(&mut self) -> Option<usize> {
        if self.head == self.tail {
            return None;
        }
        let span = self.span() as u64;
        for _ in 0..3 {
            let idx = (self.head + self.rng.below(span) as usize) & self.mask;
            if self.tab[idx].is_some() {
                return Some(idx);
            }
        }
        Some(self.head)
    }

    /// Close the holes when the ring is full of them.
    fn compact(&mut self) {
        let packets: Vec<P> = (0..self.span())
            .filter_map(|i| self.tab[(self.head + i) & self.mask].take())
            .collect();
        self.head = 0;
        self.tail = packets.len();
        for (i, p) in packets.into_iter().enumerate() {
            self.tab[i] = Some(p);
        }
    }

    fn congestion(&mut self, mut packet: P, verdicts: &mut Verdicts<P>) -> Option<P> {
        if self.params.ecn && packet.ecn() != Ecn::NotEct {
            packet.mark_ce();
            verdicts.mark(packet.size());
            Some(packet)
        } else {
            verdicts.refuse(packet, DropReason::Early);
            None
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Choke<P> {
    fn name(&self) -> &'static str {
        "choke"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        // Average queue in packets, with the idle correction.
        match self.idle_since.take() {
            Some(since) => self.avg.decay_idle(now.saturating_sub(since), self.s_ns),
            None => {
                self.avg.update(self.packets as f64);
            }
        }
        let (min_th, max_th, max_p) = (self.params.min_th, self.params.max_th, self.params.max_p);
        let avg = self.avg.value();
        let packet = if avg <= min_th {
            self.count = -1;
            Some(packet)
        } else {
            // Draw a packet at random from the queue and compare flows.
            if let Some(idx) = self.draw() {
                if self.tab[idx]
                    .as_ref()
                    .is_some_and(|q| q.flow_key() == packet.flow_key())
                {
                    let victim = self.take(idx);
                    verdicts.discard(victim, DropReason::Policy);
                    verdicts.refuse(packet, DropReason::Policy);
                    if self.packets == 0 {
                        self.idle_since = Some(now);
                    }
                    return;
                }
            }
            if avg > max_th {
                self.count = -1;
                self.congestion(packet, verdicts)
            } else {
                self.count += 1;
                if self.count != 0 {
                    let pb = max_p * (avg - min_th) / (max_th - min_th);
                    if pb * self.count as f64 >= self.r {
                        self.count = 0;
                        self.r = self.rng.uniform();
                        self.congestion(packet, verdicts)
                    } else {
                        Some(packet)
                    }
                } else {
                    self.r = self.rng.uniform();
                    Some(packet)
                }
            }
        };
        let Some(packet) = packet else {
            if self.packets == 0 {
                self.idle_since = Some(now);
            }
            return;
        };
        if self.packets < self.params.limit {
            if self.span() == self.mask {
                self.compact();
            }
            self.bytes += packet.size() as u64;
            self.packets += 1;
            self.tab[self.tail] = Some(packet);
            self.tail = (self.tail + 1) & self.mask;
        } else {
            verdicts.refuse(packet, DropReason::Overflow);
        }
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        if self.head == self.tail {
            if self.idle_since.is_none() {
                self.idle_since = Some(now);
            }
            return None;
        }
        let idx = self.head;
        let p = self.take(idx);
        if self.packets == 0 {
            self.idle_since = Some(now);
        }
        Some(p)
    }

    fn backlog(&self) -> Backlog {
        Backlog {
            packets: self.packets,
            bytes: self.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn choke(min_th: f64, max_th: f64, limit: u64) -> Choke<TestPacket> {
        Choke::new(
            ChokeParams {
                min_th,
                max_th,
                limit,
                w_q: 1.0,
                max_p: 0.0,
                ..Default::default()
            },
            8,
        )
    }

    #[test]
    fn a_matching_arrival_and_its_victim_are_both_dropped() {
        // One flow only: above min_th every draw matches.
        let mut c = choke(2.0, 100.0, 100);
        let mut v = Verdicts::new();
        for i in 0..3 {
            c.enqueue(TestPacket::new(7, i, 1000), 0, &mut v); // avg 0, 1, 2: no test
        }
        assert!(v.dropped().is_empty());
        c.enqueue(TestPacket::new(7, 3, 1000), 0, &mut v); // avg 3 > 2: match
        let d: Vec<(u64, u8, bool)> = v
            .dropped()
            .iter()
            .map(|d| (d.packet.seq, d.reason as u8, d.buffered))
            .collect();
        assert_eq!(d.len(), 2);
        assert_eq!(
            d[1],
            (3, DropReason::Policy as u8, false),
            "the arrival, refused"
        );
        assert!(
            d[0].0 < 3 && d[0].1 == DropReason::Policy as u8 && d[0].2,
            "a queued victim"
        );
        assert_eq!(c.backlog().packets, 2);
        // The survivors still leave in order.
        let out: Vec<u64> = std::iter::from_fn(|| c.dequeue(0, &mut v))
            .map(|p| p.seq)
            .collect();
        assert!(out.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn other_flows_pass_and_holes_are_skipped() {
        let mut c = choke(0.5, 1000.0, 1000);
        let mut v = Verdicts::new();
        // Flows 1..=50 once each: no arrival ever matches (all distinct).
        for f in 1..=50 {
            c.enqueue(TestPacket::new(f, 0, 100), 0, &mut v);
        }
        assert!(v.dropped().is_empty());
        // Flow 1 again, many times: some draw hits its packets; each match
        // removes a queued flow-1 packet and the arrival.
        for s in 1..200 {
            c.enqueue(TestPacket::new(1, s, 100), 0, &mut v);
        }
        let matched = v.dropped().iter().filter(|d| d.buffered).count();
        assert!(matched > 0);
        assert!(v.dropped().iter().all(|d| d.packet.flow == 1));
        // Holes in the middle: dequeue skips them and conserves packets.
        let n = c.backlog().packets;
        let out: Vec<TestPacket> = std::iter::from_fn(|| c.dequeue(0, &mut v)).collect();
        assert_eq!(out.len() as u64, n);
        assert_eq!(c.backlog(), Backlog::default());
        let flow1: Vec<u64> = out.iter().filter(|p| p.flow == 1).map(|p| p.seq).collect();
        assert!(flow1.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn red_count_and_limit() {
        // Distinct flows (no matches), max_p 0.5, avg held at mid-range:
        // p_b = 0.25, drop when 0.25 count >= R: count 4 always drops, so at
        // most 4 packets pass between drops, about 1600 drops in 4000.
        let mut c = Choke::new(
            ChokeParams {
                min_th: 0.5,
                max_th: 10_000.0,
                limit: 100_000,
                w_q: 1.0,
                max_p: 0.5,
                ..Default::default()
            },
            3,
        );
        let mut v = Verdicts::new();
        // A zero-weight average stays where it is set: avg 5000.25.
        c.avg = Ewma::new(0.0);
        c.avg.set(5000.25);
        let mut since = 0;
        let mut drops = 0;
        for f in 0..4000u64 {
            c.enqueue(TestPacket::new(f + 10, 0, 100), 0, &mut v);
            if v.dropped().is_empty() {
                since += 1;
            } else {
                assert!(since <= 4, "{since}");
                since = 0;
                drops += 1;
            }
            v.drain(|_| {});
        }
        assert!(drops > 700, "{drops}");
        // The hard limit: packets, refused as overflow.
        let mut c = choke(1e9, 2e9, 5);
        for f in 0..7 {
            c.enqueue(TestPacket::new(f, 0, 100), 0, &mut v);
        }
        assert_eq!(c.backlog().packets, 5);
        assert!(v.dropped().iter().all(|d| d.reason == DropReason::Overflow));
    }
}
