//! CBT: Class-Based Thresholds (Parris, Jeffay and Smith, "Lightweight
//! Active Router-Queue Management for Multimedia Networking", MMCN 1999),
//! as seed 004 implements it on Linux 2.4 RED (seed 004_c0b2b5d4c8285cc0.txt,
//! section 3.1; digest 004 section 1.3).
//!
//! One FIFO and one RED average ([`LinuxRedCore`]). UDP packets face a class
//! test before RED: while `min_th <= avg < max_th`, a tagged (multimedia)
//! UDP packet is dropped if its class's average exceeds 10 packets, an
//! untagged UDP packet if its class's average exceeds 2 packets ("suggested"
//! values, section 3.1). TCP faces RED only. Above `max_th` everything is
//! dropped; the hard byte limit applies to all.
//!
//! The per-class average is not defined by the report; following the
//! digest [REC] (A3), each class's backlog in bytes is averaged with RED's
//! weight on every arrival, with RED's idle decay, so the class averages
//! add up to `avg` (up to fixed-point rounding); packet thresholds are
//! converted to bytes with `avpkt`. O(1) per packet.

use crate::blocks::CountedFifo;
use crate::params::{not_negative, params, SpecError, VALID};
use crate::red_linux::{ClassAvg, LinuxRedConfig, LinuxRedCore, LinuxRedParams, Region};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Packet, QueueDiscipline, Time, TrafficClass, Verdicts};

params! {
    /// CBT's parameters: Linux RED's, and the two UDP class thresholds.
    #[derive(PartialEq)]
    pub struct CbtParams {
        #[flatten] pub red: LinuxRedParams,
        /// Threshold of tagged (multimedia) UDP's average, in packets of
        /// `avpkt` bytes: 10 (seed 004 section 3.1, "suggested", citing
        /// Chung and Claypool).
        pub mm_threshold: f64 [Number] = 10.0,
        /// Threshold of untagged UDP's average, in packets of `avpkt` bytes:
        /// 2 (seed 004 section 3.1).
        pub udp_threshold: f64 [Number] = 2.0,
    }
}

impl QdiscParams for CbtParams {
    const SUMMARY: &'static str = "class-based thresholds over Linux RED";

    fn validate(&self) -> Result<(), SpecError> {
        self.red.validate()?;
        not_negative("mm_threshold", self.mm_threshold)?;
        not_negative("udp_threshold", self.udp_threshold)
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.red.fill_link_rate(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Cbt::new(self, seed).expect(VALID))
    }
}

pub struct Cbt<P> {
    queue: CountedFifo<P>,
    core: LinuxRedCore,
    classes: [ClassAvg; TrafficClass::COUNT],
    /// Class thresholds in bytes scaled by 2^Wlog, as the averages; None: no test.
    thresholds: [Option<u64>; TrafficClass::COUNT],
}

impl<P: Packet> Cbt<P> {
    pub fn new(params: &CbtParams, seed: u64) -> Result<Self, String> {
        let core = LinuxRedCore::new(LinuxRedConfig::from_tc(&params.red)?, seed);
        let scaled = |pkts: f64| Some(((pkts * params.red.avpkt as f64) as u64) << core.wlog());
        let mut thresholds = [None; TrafficClass::COUNT];
        thresholds[TrafficClass::UdpTagged.index()] = scaled(params.mm_threshold);
        thresholds[TrafficClass::UdpUntagged.index()] = scaled(params.udp_threshold);
        Ok(Self {
            queue: CountedFifo::default(),
            core,
            classes: Default::default(),
            thresholds,
        })
    }

    pub fn core(&self) -> &LinuxRedCore {
        &self.core
    }

    /// A class's average backlog in bytes.
    pub fn class_avg_bytes(&self, class: TrafficClass) -> u64 {
        self.classes[class.index()].avg >> self.core.wlog()
    }
}

impl<P: Packet> QueueDiscipline<P> for Cbt<P> {
    fn name(&self) -> &'static str {
        "cbt"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        let c = packet.class().index();
        self.core.arrive(self.queue.bytes(), now, &mut self.classes);
        let fits = self.core.fits(self.queue.bytes(), packet.size());
        let admitted = match self.core.region() {
            Region::Below => {
                self.core.below();
                Some(packet)
            }
            Region::Above => {
                self.core.above();
                self.core.congestion(packet, fits, verdicts)
            }
            Region::Between => match self.thresholds[c] {
                Some(th) if self.classes[c].avg > th => {
                    verdicts.refuse(packet, DropReason::Policy);
                    None
                }
                _ if self.core.random_drop() => self.core.congestion(packet, fits, verdicts),
                _ => Some(packet),
            },
        };
        if let Some(p) = admitted {
            if fits {
                self.classes[c].bytes += p.size() as u64;
                self.queue.push_back(p);
            } else {
                verdicts.refuse(p, DropReason::Overflow);
            }
        }
        if self.queue.is_empty() {
            self.core.idle(now);
        }
    }

    fn dequeue(&mut self, now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front();
        if let Some(p) = &packet {
            self.classes[p.class().index()].bytes -= p.size() as u64;
        }
        if self.queue.is_empty() {
            self.core.idle(now);
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

    fn pkt(flow: u64, seq: u64, class: TrafficClass) -> TestPacket {
        let mut p = TestPacket::new(flow, seq, 1000);
        p.class = class;
        p
    }

    #[test]
    fn class_averages_add_up_to_red_average() {
        let mut cbt: Cbt<TestPacket> = Cbt::new(&CbtParams::default(), 1).unwrap();
        let mut v = Verdicts::new();
        let classes = [
            TrafficClass::Tcp,
            TrafficClass::UdpTagged,
            TrafficClass::UdpUntagged,
        ];
        for i in 0..12 {
            cbt.enqueue(pkt(i % 3, i, classes[(i % 3) as usize]), 0, &mut v);
        }
        let sum: u64 = cbt.classes.iter().map(|c| c.avg).sum();
        let qave = cbt.core.qave_scaled();
        // Each update floors three shifts instead of one: at most 2 per step.
        assert!(sum.abs_diff(qave) <= 2 * 12, "{sum} vs {qave}");
    }

    #[test]
    fn udp_classes_are_held_to_their_thresholds_while_tcp_is_not() {
        let mut cbt: Cbt<TestPacket> = Cbt::new(&CbtParams::default(), 1).unwrap();
        let mut v = Verdicts::new();
        // avg between min (5000) and max (15000): 9000 B; untagged UDP
        // average 3000 B > 2 x 1000 B; multimedia 3000 B < 10 x 1000 B.
        let w = cbt.core.wlog();
        cbt.core.idle_start_none_for_tests();
        let set = |cbt: &mut Cbt<TestPacket>| {
            cbt.core.set_qave_for_tests(9000 << w);
            cbt.classes[TrafficClass::UdpUntagged.index()].avg = 3000 << w;
            cbt.classes[TrafficClass::UdpTagged.index()].avg = 3000 << w;
            cbt.classes[TrafficClass::Tcp.index()].avg = 3000 << w;
        };
        // The arrival's own update (backlog 0) lowers each by 1/8: 2625 B.
        set(&mut cbt);
        cbt.enqueue(pkt(3, 0, TrafficClass::UdpUntagged), 0, &mut v);
        assert_eq!(v.dropped().len(), 1);
        assert_eq!(v.dropped()[0].reason, DropReason::Policy);
        v.drain(|_| {});
        set(&mut cbt);
        cbt.enqueue(pkt(2, 0, TrafficClass::UdpTagged), 0, &mut v);
        set(&mut cbt);
        cbt.enqueue(pkt(1, 0, TrafficClass::Tcp), 0, &mut v);
        // First packets of the RED episode always pass.
        assert!(v.dropped().is_empty(), "{:?}", v.dropped());
        assert_eq!(cbt.backlog().packets, 2);
        // Below min_th nothing is tested: untagged UDP passes.
        cbt.core.set_qave_for_tests(0);
        cbt.classes[TrafficClass::UdpUntagged.index()].avg = 30_000 << w;
        cbt.enqueue(pkt(3, 1, TrafficClass::UdpUntagged), 0, &mut v);
        assert!(v.dropped().is_empty());
        assert_eq!(cbt.class_avg_bytes(TrafficClass::UdpUntagged), 26_250);
    }
}
