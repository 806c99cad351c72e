//! The sending process of a UDP source: when its packets go. Shared by the
//! simulator's sources (crates/sim/src/traffic/udp.rs) and the emulator's
//! (`aqmlab-udp`, crates/router/src/bin/aqmlab-udp.rs): a scenario's CBR,
//! Poisson or on-off flow is one process, written once, on both engines.

use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::Time;

/// A UDP source's sending process, as the scenario resolves it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum UdpSource {
    /// Constant bit rate. `jitter` in [0, 1) randomizes each gap uniformly in
    /// `interval * (1 ± jitter)` (ns-2's `random_` is jitter 0.5 on one side).
    Cbr { rate_bps: u64, jitter: f64 },
    /// Exponential gaps with the given mean rate.
    Poisson { rate_bps: u64 },
    /// Sends at `rate_bps` during on periods, silent during off periods.
    OnOff { rate_bps: u64, on: Dist, off: Dist },
}

/// A random quantity of nanoseconds or bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Dist {
    Fixed {
        value: f64,
    },
    Uniform {
        low: f64,
        high: f64,
    },
    Exponential {
        mean: f64,
    },
    /// Pareto with the given mean and shape (> 1), as ns-2 parameterizes it.
    Pareto {
        mean: f64,
        shape: f64,
    },
}

impl Dist {
    /// A draw, in the distribution's own unit.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Fixed { value } => value,
            Dist::Uniform { low, high } => low + (high - low) * rng.uniform(),
            Dist::Exponential { mean } => rng.exponential(mean),
            Dist::Pareto { mean, shape } => rng.pareto(mean, shape),
        }
    }
}

/// What a source does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Send a packet now, and the next this many ns later.
    Send(f64),
    /// Stay silent until then (an on-off source between on periods).
    Resume(Time),
}

/// A source's process and where it is in it.
#[derive(Clone, Debug)]
pub struct Process {
    pub source: UdpSource,
    packet_size: u32,
    /// End of the current on period (on-off sources).
    on_until: Time,
    /// Whether a packet has been sent (the first call starts an on period).
    started: bool,
}

impl Process {
    pub fn new(source: UdpSource, packet_size: u32) -> Self {
        Self {
            source,
            packet_size,
            on_until: 0,
            started: false,
        }
    }

    /// What the source does at `now`, drawing from `rng`; a `Send` is the
    /// caller's to carry out.
    pub fn next(&mut self, now: Time, rng: &mut Rng) -> Next {
        let size = self.packet_size;
        let interval = |rate_bps: u64| size as f64 * 8e9 / rate_bps as f64;
        let started = std::mem::replace(&mut self.started, true);
        match &self.source {
            UdpSource::Cbr { rate_bps, jitter } if *jitter > 0.0 => {
                Next::Send(interval(*rate_bps) * (1.0 + jitter * (2.0 * rng.uniform() - 1.0)))
            }
            UdpSource::Cbr { rate_bps, .. } => Next::Send(interval(*rate_bps)),
            UdpSource::Poisson { rate_bps } => Next::Send(rng.exponential(interval(*rate_bps))),
            UdpSource::OnOff { rate_bps, on, off } => {
                if started && now >= self.on_until {
                    // The on period is over: stay silent, then start another.
                    let idle = off.sample(rng).max(0.0);
                    let on_len = on.sample(rng).max(0.0);
                    let resume = now + idle as Time;
                    self.on_until = resume + on_len as Time;
                    return Next::Resume(resume);
                }
                if !started {
                    self.on_until = now + on.sample(rng).max(0.0) as Time;
                }
                Next::Send(interval(*rate_bps))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_on_off_source_sends_for_its_on_period_then_resumes_after_its_off_period() {
        let source = UdpSource::OnOff {
            rate_bps: 8_000_000_000,
            on: Dist::Fixed { value: 10_000.0 },
            off: Dist::Fixed { value: 50_000.0 },
        };
        let mut p = Process::new(source, 1000); // 1 us a packet
        let mut rng = Rng::new(1);
        let mut now = 0;
        let mut sent = vec![];
        while now < 130_000 {
            match p.next(now, &mut rng) {
                Next::Send(gap) => {
                    sent.push(now);
                    now += gap as Time;
                }
                Next::Resume(at) => now = at,
            }
        }
        // Ten packets in [0, 10 us), none for 50 us, ten more from 60 us, ...
        assert_eq!(sent.len(), 20 + 10);
        assert_eq!(sent[9], 9_000);
        assert_eq!(sent[10], 60_000);
        assert_eq!(sent[20], 120_000);
    }

    #[test]
    fn a_jittered_cbr_keeps_its_mean_gap() {
        let source = UdpSource::Cbr {
            rate_bps: 1_000_000,
            jitter: 0.5,
        };
        let mut p = Process::new(source, 125); // 1 ms a packet
        let mut rng = Rng::new(7);
        let gaps: Vec<f64> = (0..10_000)
            .map(|_| match p.next(0, &mut rng) {
                Next::Send(g) => g,
                Next::Resume(_) => unreachable!(),
            })
            .collect();
        assert!(gaps.iter().all(|g| (500_000.0..=1_500_000.0).contains(g)));
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 1e6).abs() < 1e4, "{mean}");
    }

    #[test]
    fn the_resolved_scenario_json_is_read() {
        let s: UdpSource = serde_json::from_str(
            r#"{"model": "on_off", "rate_bps": 1000, "on": {"dist": "exponential", "mean": 1e9},
                "off": {"dist": "pareto", "mean": 1e9, "shape": 1.5}}"#,
        )
        .unwrap();
        assert!(matches!(s, UdpSource::OnOff { .. }));
    }
}
