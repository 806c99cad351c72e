//! Weighted deficit round robin: kind `wdrr`.
//!
//! Source: Shreedhar and Varghese, "Efficient fair queueing using deficit
//! round robin", SIGCOMM 1995 (quanta proportional to reserved rates), as
//! used in chapter 7 of Kantawala and Turner, WUCSE-2005-11 (seed
//! `000_36d3c99b5bba185e.txt`); digest 000, section 2.12 and A-FQ6.
//!
//! One queue per flow, served by DRR with quantum_i = weight_i * `quantum`.
//! Chapter 7 runs the fair-queueing schedulers with buffers large enough
//! that no packet is ever dropped; if the shared buffer does fill, the
//! arrival is refused (tail drop).
//!
//! Parameters, their defaults and sources: [`WdrrParams`].
//!
//! O(1) per packet when every quantum is at least the largest packet; with
//! smaller quanta a queue may take a few turns to send one packet.

use crate::blocks::{DrrQueues, FlowWeights, QueueMap, WeightParams};
use crate::params::{nonzero, params, positive_limit, SpecError};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// WDRR's parameters (seed 000, chapter 7).
    #[derive(PartialEq)]
    pub struct WdrrParams {
        required {
            /// The shared buffer, packets or bytes; no default (chapter 7:
            /// "large enough that no packet is ever dropped").
            pub limit: Limit [Buffer],
        }
        #[flatten] pub weighting: WeightParams,
        /// Bytes per round for each unit of weight: 1000, the largest packet
        /// of chapter 7 (digest 000, A-FQ6, recommended).
        pub quantum: u32 [Bytes] = 1000,
    }
}

impl QdiscParams for WdrrParams {
    const SUMMARY: &'static str = "weighted deficit round robin";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        nonzero("quantum", self.quantum)?;
        self.weighting.validate()
    }

    fn build<P: Packet + Send + 'static>(&self, _seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Wdrr::new(self.limit, self.quantum, self.weighting.table()))
    }
}

pub struct Wdrr<P> {
    q: DrrQueues<P>,
    limit: Limit,
}

impl<P: Packet> Wdrr<P> {
    pub fn new(limit: Limit, quantum: u32, weights: FlowWeights) -> Self {
        Self {
            q: DrrQueues::new(QueueMap::per_flow(), quantum as u64, false).with_weights(weights),
            limit,
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Wdrr<P> {
    fn name(&self) -> &'static str {
        "wdrr"
    }

    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        if !self.limit.admits(self.q.backlog(), packet.size()) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        let q = self.q.classify(packet.flow_key());
        self.q.push(q, packet);
    }

    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        self.q.dequeue().map(|(_, p)| p)
    }

    fn backlog(&self) -> Backlog {
        self.q.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    #[test]
    fn weight_ten_flow_gets_ten_times_the_bytes_per_round() {
        let mut d = Wdrr::new(
            Limit::Packets(1000),
            1000,
            FlowWeights::new([(9, 10.0)], 1.0),
        );
        let mut v = Verdicts::new();
        for s in 0..40 {
            d.enqueue(TestPacket::new(1, s, 1000), 0, &mut v);
            d.enqueue(TestPacket::new(9, s, 1000), 0, &mut v);
        }
        let first: Vec<u64> = (0..22)
            .map(|_| d.dequeue(0, &mut v).unwrap().flow)
            .collect();
        // Round 1: flow 1 sends 1 packet (1000 B), flow 9 ten; and again.
        let round = [vec![1u64], vec![9; 10]].concat();
        assert_eq!(first, [round.clone(), round].concat());
    }

    #[test]
    fn refuses_arrivals_when_the_buffer_is_full() {
        let mut d = Wdrr::new(Limit::Packets(2), 1000, FlowWeights::default());
        let mut v = Verdicts::new();
        for s in 0..3 {
            d.enqueue(TestPacket::new(0, s, 1000), 0, &mut v);
        }
        assert_eq!(v.dropped().len(), 1);
        assert_eq!(
            (v.dropped()[0].packet.seq, v.dropped()[0].buffered),
            (2, false)
        );
    }

    #[test]
    fn small_quantum_accumulates_over_turns() {
        // Quantum 1000 per weight, 1500-byte packets, equal weights: each
        // flow sends 2 packets per 3 turns; byte shares stay equal.
        let mut d = Wdrr::new(Limit::Packets(100), 1000, FlowWeights::default());
        let mut v = Verdicts::new();
        for s in 0..10 {
            d.enqueue(TestPacket::new(0, s, 1500), 0, &mut v);
            d.enqueue(TestPacket::new(1, s, 1500), 0, &mut v);
        }
        let order: Vec<u64> = (0..8).map(|_| d.dequeue(0, &mut v).unwrap().flow).collect();
        // Flow 0: deficit 1000 < 1500 -> 2000 next turn ... flow 1 likewise.
        assert_eq!(order, vec![0, 1, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn a_weight_need_not_be_an_integer() {
        // Weights 2.5 and 1: quanta 2500 and 1000 bytes; 1000-byte packets,
        // both backlogged: over two rounds, 5 packets against 2.
        let mut d = Wdrr::new(Limit::Packets(100), 1000, FlowWeights::new([(0, 2.5)], 1.0));
        let mut v = Verdicts::new();
        for s in 0..20 {
            d.enqueue(TestPacket::new(0, s, 1000), 0, &mut v);
            d.enqueue(TestPacket::new(1, s, 1000), 0, &mut v);
        }
        let mut sent = [0; 2];
        for _ in 0..7 {
            sent[d.dequeue(0, &mut v).unwrap().flow as usize] += 1;
        }
        assert_eq!(sent, [5, 2]);
    }

    #[test]
    fn refuses_weights_that_are_not_positive_numbers() {
        use crate::blocks::{FlowWeight, WeightParams};
        let with = |weight: f64| WeightParams {
            weights: vec![FlowWeight { flow: 3, weight }],
            default_weight: 1.0,
        };
        assert!(with(0.25).validate().is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = with(bad).validate().unwrap_err();
            assert!(e.to_string().contains("weights"), "{e}");
        }
    }
}
