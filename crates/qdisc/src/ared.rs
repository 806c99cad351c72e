//! Adaptive RED (Floyd, Gummadi and Shenker, "Adaptive RED: An Algorithm
//! for Increasing the Robustness of RED's Active Queue Management", 2001).
//!
//! RED in gentle mode whose `max_p` is adapted, AIMD, to keep the average
//! queue inside a target band (section 4, figure 5):
//!
//! ```text
//! every interval:
//!   if avg > target_hi and max_p <= 0.5: max_p += alpha, alpha = min(0.01, max_p/4)
//!   if avg < target_lo and max_p >= 0.01: max_p *= beta,  beta = 0.9
//! target = [min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)]
//! ```
//!
//! and whose other parameters are set from the link (section 5):
//! `w_q = 1 - exp(-1/C)` with `C` the link rate in packets/s (a time
//! constant of one second), `min_th = max(5, target_delay C / 2)`,
//! `max_th = 3 min_th`, target delay 5 ms.
//!
//! The adaptation runs at the first arrival at least `interval` after the
//! previous one, after the average is updated and before the decision,
//! as ns-2's `REDQueue::enque` does (`now > lastset + interval`).
//! O(1) per packet.

use crate::params::{
    link_rate, nonzero, params, positive_limit, probability, refuse, thresholds, weight, SpecError,
    DEFAULT_LINK_RATE_BPS, MS,
};
use crate::red::{Red, RedMode, RedParams, RedVariant};
use crate::spec::QdiscParams;
use crate::{Backlog, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// Adaptive RED's parameters: those left unset are set from the link
    /// (section 5).
    #[derive(PartialEq)]
    pub struct AredParams {
        /// The buffer: 100 packets (ours).
        pub limit: Limit [Buffer] = Limit::Packets(100),
        /// Lower threshold, packets; unset: `max(5, target_delay C / 2)`
        /// (section 5).
        pub min_th: Option<f64> [Number] = None,
        /// Upper threshold, packets; unset: `3 min_th` (section 5).
        pub max_th: Option<f64> [Number] = None,
        /// Weight of the average; unset: `1 - exp(-1/C)`, a time constant of
        /// one second (section 5).
        pub w_q: Option<f64> [Number] = None,
        /// The initial `max_p`: 0.1 (ns-2's `linterm_ 10`).
        pub max_p: f64 [Number] = 0.1,
        /// The queueing delay the thresholds aim at: 5 ms (section 5).
        pub target_delay: Time [Time] = 5 * MS,
        /// How often `max_p` adapts: 0.5 s (section 4).
        pub interval: Time [Time] = 500 * MS,
        /// The decrease factor of `max_p`: 0.9 (section 4).
        pub beta: f64 [Number] = 0.9,
        /// Mark ECN-capable packets instead of dropping them in the random
        /// region.
        pub ecn: bool [Flag] = false,
        /// The packet size of `C`, the link rate in packets: 1000 bytes.
        pub mean_packet_size: u32 [Bytes] = 1000,
        /// The rate of the link the queue feeds: the simulator fills in the
        /// link's (10 Mb/s if unknown).
        pub link_rate_bps: Option<u64> [Rate] = None,
    }
}

impl QdiscParams for AredParams {
    const SUMMARY: &'static str = "adaptive RED (Floyd, Gummadi, Shenker 2001)";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        nonzero("mean_packet_size", self.mean_packet_size)?;
        link_rate(self.link_rate_bps)?;
        if let Some(w) = self.w_q {
            weight("w_q", w)?;
        }
        probability("max_p", self.max_p)?;
        nonzero("target_delay", self.target_delay)?;
        nonzero("interval", self.interval)?;
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return refuse("beta", format!("{} must be in (0, 1)", self.beta));
        }
        if self.min_th.is_some() || self.max_th.is_some() {
            let resolved = self.resolve();
            thresholds(resolved.min_th, resolved.max_th)?;
        }
        Ok(())
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.link_rate_bps.get_or_insert(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Ared::new(self.clone(), seed))
    }
}

impl AredParams {
    fn link_rate(&self) -> u64 {
        self.link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS)
    }

    /// Link rate in packets of `mean_packet_size` per second.
    pub fn packets_per_second(&self) -> f64 {
        self.link_rate() as f64 / (8.0 * self.mean_packet_size as f64)
    }

    /// The RED parameters after section 5's automatic settings.
    pub fn resolve(&self) -> RedParams {
        let c = self.packets_per_second();
        let min_th = self
            .min_th
            .unwrap_or_else(|| (self.target_delay as f64 * 1e-9 * c / 2.0).max(5.0));
        let max_th = self.max_th.unwrap_or(3.0 * min_th);
        let w_q = self.w_q.unwrap_or_else(|| 1.0 - (-1.0 / c).exp());
        RedParams {
            limit: self.limit,
            mode: RedMode::Packets,
            min_th,
            max_th,
            w_q,
            max_p: self.max_p,
            gentle: true,
            wait: false,
            ecn: self.ecn,
            variant: RedVariant::Fj93,
            mean_packet_size: self.mean_packet_size,
            max_packet_size: self.mean_packet_size,
            link_rate_bps: Some(self.link_rate()),
        }
    }
}

pub struct Ared<P> {
    red: Red<P>,
    interval: Time,
    beta: f64,
    last_adapt: Time,
}

impl<P: Packet> Ared<P> {
    pub fn new(params: AredParams, seed: u64) -> Self {
        Self {
            red: Red::new(params.resolve(), seed),
            interval: params.interval,
            beta: params.beta,
            last_adapt: 0,
        }
    }

    pub fn max_p(&self) -> f64 {
        self.red.params().max_p
    }

    pub fn red(&self) -> &Red<P> {
        &self.red
    }

    /// Figure 5's AIMD step on `max_p`.
    fn adapt(&mut self) {
        let p = self.red.params();
        let (lo, hi) = (
            p.min_th + 0.4 * (p.max_th - p.min_th),
            p.min_th + 0.6 * (p.max_th - p.min_th),
        );
        let avg = self.red.avg();
        let max_p = p.max_p;
        if avg > hi && max_p <= 0.5 {
            let alpha = (max_p / 4.0).min(0.01);
            self.red.set_max_p(max_p + alpha);
        } else if avg < lo && max_p >= 0.01 {
            self.red.set_max_p(max_p * self.beta);
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for Ared<P> {
    fn name(&self) -> &'static str {
        "ared"
    }

    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.red.update_average(now);
        if now > self.last_adapt + self.interval {
            self.adapt();
            self.last_adapt = now;
        }
        let v = self.red.decide(packet.size());
        self.red.apply(packet, v, verdicts);
    }

    fn dequeue(&mut self, now: Time, verdicts: &mut Verdicts<P>) -> Option<P> {
        self.red.dequeue(now, verdicts)
    }

    fn backlog(&self) -> Backlog {
        self.red.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    #[test]
    fn automatic_parameters_from_the_link() {
        // 10 Mb/s, 1000 B packets: C = 1250 pkt/s; 5 ms * 1250 / 2 = 3.125 -> 5.
        let r = AredParams::default().resolve();
        assert_eq!(r.min_th, 5.0);
        assert_eq!(r.max_th, 15.0);
        assert!((r.w_q - (1.0 - (-1.0f64 / 1250.0).exp())).abs() < 1e-15);
        assert!(r.gentle);
        // 100 Mb/s: C = 12500, min_th = 31.25, max_th = 93.75.
        let r = AredParams {
            link_rate_bps: Some(100_000_000),
            ..Default::default()
        }
        .resolve();
        assert_eq!(r.min_th, 31.25);
        assert_eq!(r.max_th, 93.75);
    }

    #[test]
    fn max_p_is_aimd_toward_the_target_band() {
        // min 5, max 15: band [9, 11].
        let mut a: Ared<TestPacket> = Ared::new(
            AredParams {
                w_q: Some(1.0),
                limit: Limit::Packets(1000),
                ..Default::default()
            },
            1,
        );
        let mut v = Verdicts::new();
        let second = 1_000_000_000;
        // Hold 20 packets (avg 20 > 11): +min(0.01, max_p/4) each interval.
        for i in 0..20 {
            a.red.apply(
                TestPacket::new(1, i, 1000),
                crate::red::RedVerdict::Accept,
                &mut v,
            );
        }
        a.red.update_average(0);
        a.last_adapt = 0;
        a.adapt();
        assert!((a.max_p() - 0.11).abs() < 1e-12);
        a.adapt();
        assert!((a.max_p() - 0.12).abs() < 1e-12);
        // Empty queue (avg decays to ~0 < 9): *0.9 each interval.
        while a.red.dequeue(second, &mut v).is_some() {}
        a.red.update_average(10 * second);
        a.adapt();
        assert!((a.max_p() - 0.108).abs() < 1e-12);
        // Never below 0.01 by more than one step: stops once under 0.01.
        for _ in 0..100 {
            a.adapt();
        }
        assert!(a.max_p() < 0.01 && a.max_p() >= 0.009);
        // ...and an arrival applies it at most once per interval.
        a.red.set_max_p(0.2);
        a.enqueue(TestPacket::new(1, 99, 1000), 10 * second + 1, &mut v);
        assert!((a.max_p() - 0.18).abs() < 1e-12);
        a.enqueue(TestPacket::new(1, 100, 1000), 10 * second + 2, &mut v);
        assert!((a.max_p() - 0.18).abs() < 1e-12);
    }
}
