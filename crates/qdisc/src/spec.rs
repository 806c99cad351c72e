//! Disciplines by name and parameters, as scenario files give them.
//!
//! Every discipline has a variant here; [`QdiscSpec::build`] makes it. The
//! Python schema validates the user's values and converts their units before
//! they reach this enum, so the values here are plain integers (packets,
//! bytes, nanoseconds) and fractions.

use serde::{Deserialize, Serialize};

use crate::blocks::{Balancing, BloomBalancer, BloomConfig, FlowWeights, QueueMap};
use crate::drr::{DropEnd, DrrLqd};
use crate::dsdrr::{Dsdrr, DsdrrParams, OverW};
use crate::dtdrr::Dtdrr;
use crate::qsdrr::Qsdrr;
use crate::scfq::Scfq;
use crate::tdrr::{RateEstimator, Tdrr};
use crate::wdrr::Wdrr;
use crate::wf2q_plus::Wf2qPlus;
use crate::{DropTail, Limit, Packet, QueueDiscipline};

const MS: u64 = 1_000_000;

fn mtu_quantum() -> u32 {
    1500
}
fn fq_quantum() -> u32 {
    1000
}
fn tdrr_weight() -> f64 {
    1.0 / 32.0
}
fn dtdrr_alpha() -> f64 {
    2.0
}
fn dsdrr_alpha() -> f64 {
    0.1
}
fn dsdrr_period() -> u64 {
    1_000 * MS
}
fn dsdrr_w_init() -> f64 {
    0.1
}
fn dsdrr_w_max() -> f64 {
    0.5
}
fn one() -> u32 {
    1
}

/// How flows are spread over `queues` buckets (seed 000, sections 2.10 and
/// 2.11 of its digest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mapping {
    /// A seeded hash of the flow key.
    #[default]
    Hash,
    /// `flow_key mod queues`: the even spread of Figures 5.1 and 6.13 when
    /// flows are numbered 0, 1, 2, ...
    Modulo,
    /// Bloom-filter flow counting with greedy assignment and rebalancing.
    Bloom,
}

/// The Bloom-filter distributor (digest 000, section 2.11).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BloomSpec {
    /// Number of Bloom filters N_f; default 10 per queue (Table 5.1 and the
    /// section 5.2/5.3 runs: 20,000/2,000, 200/20, 2,000/200).
    #[serde(default)]
    pub filters: Option<u32>,
    /// Bits per filter m; default 50 (Table 5.1: FP < 1% at 5 flows).
    #[serde(default = "bloom_bits")]
    pub bits: u32,
    /// Hash functions k; default 7 = round(ln 2 * m/n) (digest A-BF2).
    #[serde(default = "bloom_hashes")]
    pub hashes: u32,
    /// Clearing period T, ns; default 200 ms (section 5.2).
    #[serde(default = "bloom_period")]
    pub period: u64,
    /// Counting window delta, ns; default 50 ms (section 5.2).
    #[serde(default = "bloom_delta")]
    pub delta: u64,
    /// Rebalancing; default `dequeue` ("DB alone is sufficient", 5.3.2).
    #[serde(default)]
    pub balancing: Balancing,
}

fn bloom_bits() -> u32 {
    50
}
fn bloom_hashes() -> u32 {
    7
}
fn bloom_period() -> u64 {
    200 * MS
}
fn bloom_delta() -> u64 {
    50 * MS
}

impl Default for BloomSpec {
    fn default() -> Self {
        Self {
            filters: None,
            bits: bloom_bits(),
            hashes: bloom_hashes(),
            period: bloom_period(),
            delta: bloom_delta(),
            balancing: Balancing::default(),
        }
    }
}

/// A flow's weight in a weighted scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowWeight {
    pub flow: u64,
    pub weight: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscSpec {
    Droptail {
        limit: Limit,
    },
    /// DRR with longest-queue drop (seed 000).
    Drr {
        limit: Limit,
        #[serde(default = "mtu_quantum")]
        quantum: u32,
        /// Number of queues (buckets); absent: one queue per flow.
        #[serde(default)]
        queues: Option<u32>,
        #[serde(default)]
        mapping: Option<Mapping>,
        #[serde(default)]
        bloom: BloomSpec,
        #[serde(default)]
        drop_from: DropEnd,
    },
    /// Throughput DRR (seed 000).
    Tdrr {
        limit: Limit,
        #[serde(default = "mtu_quantum")]
        quantum: u32,
        #[serde(default)]
        queues: Option<u32>,
        #[serde(default)]
        mapping: Option<Mapping>,
        #[serde(default)]
        bloom: BloomSpec,
        #[serde(default)]
        drop_from: DropEnd,
        #[serde(default = "tdrr_weight")]
        weight: f64,
        #[serde(default)]
        estimator: RateEstimator,
    },
    /// Queue State DRR (seed 000).
    Qsdrr {
        limit: Limit,
        #[serde(default = "mtu_quantum")]
        quantum: u32,
        #[serde(default)]
        queues: Option<u32>,
        #[serde(default)]
        mapping: Option<Mapping>,
        #[serde(default)]
        bloom: BloomSpec,
    },
    /// Dynamic Threshold DRR (seed 000).
    Dtdrr {
        limit: Limit,
        #[serde(default = "mtu_quantum")]
        quantum: u32,
        #[serde(default)]
        queues: Option<u32>,
        #[serde(default)]
        mapping: Option<Mapping>,
        #[serde(default)]
        bloom: BloomSpec,
        #[serde(default = "dtdrr_alpha")]
        alpha: f64,
    },
    /// Discard State DRR (seed 000).
    Dsdrr {
        limit: Limit,
        #[serde(default = "mtu_quantum")]
        quantum: u32,
        #[serde(default)]
        queues: Option<u32>,
        #[serde(default)]
        mapping: Option<Mapping>,
        #[serde(default)]
        bloom: BloomSpec,
        #[serde(default = "dsdrr_alpha")]
        alpha: f64,
        #[serde(default = "dsdrr_period")]
        period: u64,
        #[serde(default = "dsdrr_w_init")]
        w_init: f64,
        #[serde(default = "dsdrr_w_max")]
        w_max: f64,
        #[serde(default)]
        over_w: OverW,
    },
    /// Weighted DRR (seed 000, chapter 7).
    Wdrr {
        limit: Limit,
        #[serde(default = "fq_quantum")]
        quantum: u32,
        #[serde(default)]
        weights: Vec<FlowWeight>,
        #[serde(default = "one")]
        default_weight: u32,
    },
    /// Self-Clocked Fair Queueing (seed 000, chapter 7).
    Scfq {
        limit: Limit,
        #[serde(default)]
        weights: Vec<FlowWeight>,
        #[serde(default = "one")]
        default_weight: u32,
    },
    /// WF2Q+ (seed 000, chapter 7).
    #[serde(rename = "wf2q_plus")]
    Wf2qPlus {
        limit: Limit,
        #[serde(default)]
        weights: Vec<FlowWeight>,
        #[serde(default = "one")]
        default_weight: u32,
    },
}

/// An impossible parameter: the field and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

fn err(field: &'static str, message: impl Into<String>) -> Result<(), SpecError> {
    Err(SpecError { field, message: message.into() })
}

fn check_limit(limit: &Limit) -> Result<(), SpecError> {
    match *limit {
        Limit::Packets(0) | Limit::Bytes(0) => err("limit", "must be positive"),
        _ => Ok(()),
    }
}

fn check_quantum(quantum: u32) -> Result<(), SpecError> {
    if quantum == 0 {
        return err("quantum", "must be positive");
    }
    Ok(())
}

fn check_positive(field: &'static str, x: f64) -> Result<(), SpecError> {
    if !(x.is_finite() && x > 0.0) {
        return err(field, format!("must be a positive number, got {x}"));
    }
    Ok(())
}

fn check_fraction(field: &'static str, x: f64) -> Result<(), SpecError> {
    if !(x > 0.0 && x <= 1.0) {
        return err(field, format!("must be in (0, 1], got {x}"));
    }
    Ok(())
}

fn check_map(queues: Option<u32>, mapping: Option<Mapping>, bloom: &BloomSpec) -> Result<(), SpecError> {
    match queues {
        Some(0) => return err("queues", "must be at least 1"),
        None if mapping.is_some() => return err("mapping", "needs `queues` (without it every flow has its own queue)"),
        _ => {}
    }
    if mapping == Some(Mapping::Bloom) {
        if bloom.filters == Some(0) {
            return err("bloom.filters", "must be at least 1");
        }
        if bloom.bits == 0 {
            return err("bloom.bits", "must be at least 1");
        }
        if bloom.hashes == 0 {
            return err("bloom.hashes", "must be at least 1");
        }
        if bloom.period == 0 {
            return err("bloom.period", "must be positive");
        }
        if bloom.delta >= bloom.period {
            return err("bloom.delta", "must be shorter than bloom.period");
        }
    }
    Ok(())
}

fn check_weights(weights: &[FlowWeight], default_weight: u32) -> Result<(), SpecError> {
    if default_weight == 0 {
        return err("default_weight", "must be at least 1");
    }
    if let Some(w) = weights.iter().find(|w| w.weight == 0) {
        return err("weights", format!("flow {} has weight 0 (weights are at least 1)", w.flow));
    }
    Ok(())
}

fn queue_map(queues: Option<u32>, mapping: Option<Mapping>, bloom: &BloomSpec, seed: u64) -> QueueMap {
    let Some(n) = queues else { return QueueMap::per_flow() };
    let n = n as usize;
    match mapping.unwrap_or_default() {
        Mapping::Hash => QueueMap::hashed(n, seed),
        Mapping::Modulo => QueueMap::Modulo { count: n },
        Mapping::Bloom => QueueMap::Bloom(Box::new(BloomBalancer::new(
            BloomConfig {
                queues: n,
                filters: bloom.filters.map_or(10 * n, |f| f as usize),
                bits: bloom.bits,
                hashes: bloom.hashes,
                period: bloom.period,
                delta: bloom.delta,
                balancing: bloom.balancing,
            },
            seed,
        ))),
    }
}

fn weights(list: &[FlowWeight], default_weight: u32) -> FlowWeights {
    FlowWeights::new(list.iter().map(|w| (w.flow, w.weight)), default_weight)
}

impl QdiscSpec {
    /// Refuse impossible parameters, naming the field.
    pub fn validate(&self) -> Result<(), SpecError> {
        match self {
            QdiscSpec::Droptail { limit } => check_limit(limit),
            QdiscSpec::Drr { limit, quantum, queues, mapping, bloom, drop_from: _ } => {
                check_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)
            }
            QdiscSpec::Tdrr { limit, quantum, queues, mapping, bloom, drop_from: _, weight, estimator: _ } => {
                check_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)?;
                check_fraction("weight", *weight)
            }
            QdiscSpec::Qsdrr { limit, quantum, queues, mapping, bloom } => {
                check_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)
            }
            QdiscSpec::Dtdrr { limit, quantum, queues, mapping, bloom, alpha } => {
                check_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)?;
                check_positive("alpha", *alpha)
            }
            QdiscSpec::Dsdrr { limit, quantum, queues, mapping, bloom, alpha, period, w_init, w_max, over_w: _ } => {
                check_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)?;
                check_positive("alpha", *alpha)?;
                if *period == 0 {
                    return err("period", "must be positive");
                }
                check_fraction("w_init", *w_init)?;
                check_fraction("w_max", *w_max)?;
                if w_init > w_max {
                    return err("w_init", format!("must not exceed w_max ({w_max}), got {w_init}"));
                }
                Ok(())
            }
            QdiscSpec::Wdrr { limit, quantum, weights, default_weight } => {
                check_limit(limit)?;
                check_quantum(*quantum)?;
                check_weights(weights, *default_weight)
            }
            QdiscSpec::Scfq { limit, weights, default_weight }
            | QdiscSpec::Wf2qPlus { limit, weights, default_weight } => {
                check_limit(limit)?;
                check_weights(weights, *default_weight)
            }
        }
    }

    /// Make the discipline. `seed` feeds its random stream and hash family,
    /// so two queues of one run never share random numbers.
    pub fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        match self {
            QdiscSpec::Droptail { limit } => Box::new(DropTail::new(*limit)),
            QdiscSpec::Drr { limit, quantum, queues, mapping, bloom, drop_from } => {
                Box::new(DrrLqd::new(*limit, *quantum, queue_map(*queues, *mapping, bloom, seed), *drop_from, seed))
            }
            QdiscSpec::Tdrr { limit, quantum, queues, mapping, bloom, drop_from, weight, estimator } => {
                Box::new(Tdrr::new(
                    *limit,
                    *quantum,
                    queue_map(*queues, *mapping, bloom, seed),
                    *drop_from,
                    *weight,
                    *estimator,
                ))
            }
            QdiscSpec::Qsdrr { limit, quantum, queues, mapping, bloom } => {
                Box::new(Qsdrr::new(*limit, *quantum, queue_map(*queues, *mapping, bloom, seed), seed))
            }
            QdiscSpec::Dtdrr { limit, quantum, queues, mapping, bloom, alpha } => {
                Box::new(Dtdrr::new(*limit, *quantum, queue_map(*queues, *mapping, bloom, seed), *alpha))
            }
            QdiscSpec::Dsdrr { limit, quantum, queues, mapping, bloom, alpha, period, w_init, w_max, over_w } => {
                Box::new(Dsdrr::new(
                    *limit,
                    *quantum,
                    queue_map(*queues, *mapping, bloom, seed),
                    DsdrrParams { alpha: *alpha, period: *period, w_init: *w_init, w_max: *w_max, over_w: *over_w },
                ))
            }
            QdiscSpec::Wdrr { limit, quantum, weights: w, default_weight } => {
                Box::new(Wdrr::new(*limit, *quantum, weights(w, *default_weight)))
            }
            QdiscSpec::Scfq { limit, weights: w, default_weight } => {
                Box::new(Scfq::new(*limit, weights(w, *default_weight)))
            }
            QdiscSpec::Wf2qPlus { limit, weights: w, default_weight } => {
                Box::new(Wf2qPlus::new(*limit, weights(w, *default_weight)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> QdiscSpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn defaults_come_from_the_paper() {
        match parse(r#"{"kind": "dsdrr", "limit": {"packets": 1000}}"#) {
            QdiscSpec::Dsdrr { quantum, queues, alpha, period, w_init, w_max, over_w, .. } => {
                assert_eq!((quantum, queues, alpha, period, w_init, w_max), (1500, None, 0.1, 1_000_000_000, 0.1, 0.5));
                assert_eq!(over_w, OverW::Accept);
            }
            other => panic!("{other:?}"),
        }
        match parse(r#"{"kind": "tdrr", "limit": {"packets": 100}}"#) {
            QdiscSpec::Tdrr { weight, estimator, drop_from, .. } => {
                assert_eq!((weight, estimator, drop_from), (0.03125, RateEstimator::Departure, DropEnd::Front));
            }
            other => panic!("{other:?}"),
        }
        match parse(r#"{"kind": "qsdrr", "limit": {"packets": 100}, "queues": 10, "mapping": "bloom"}"#) {
            QdiscSpec::Qsdrr { bloom, .. } => assert_eq!(bloom, BloomSpec::default()),
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse(r#"{"kind": "wf2q_plus", "limit": {"packets": 10}}"#), QdiscSpec::Wf2qPlus { .. }));
        assert!(matches!(parse(r#"{"kind": "dtdrr", "limit": {"packets": 10}}"#), QdiscSpec::Dtdrr { alpha, .. } if alpha == 2.0));
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(serde_json::from_str::<QdiscSpec>(r#"{"kind": "qsdrr", "limit": {"packets": 1}, "alpha": 2}"#).is_err());
        assert!(serde_json::from_str::<QdiscSpec>(
            r#"{"kind": "qsdrr", "limit": {"packets": 1}, "queues": 4, "mapping": "bloom", "bloom": {"bitz": 3}}"#
        )
        .is_err());
    }

    #[test]
    fn impossible_parameters_name_their_field() {
        let field = |json: &str| parse(json).validate().unwrap_err().field;
        assert_eq!(field(r#"{"kind": "qsdrr", "limit": {"packets": 100}, "queues": 0}"#), "queues");
        assert_eq!(field(r#"{"kind": "drr", "limit": {"packets": 0}}"#), "limit");
        assert_eq!(field(r#"{"kind": "drr", "limit": {"packets": 9}, "quantum": 0}"#), "quantum");
        assert_eq!(field(r#"{"kind": "drr", "limit": {"packets": 9}, "mapping": "hash"}"#), "mapping");
        assert_eq!(field(r#"{"kind": "tdrr", "limit": {"packets": 9}, "weight": 1.5}"#), "weight");
        assert_eq!(field(r#"{"kind": "dtdrr", "limit": {"packets": 9}, "alpha": -1}"#), "alpha");
        assert_eq!(field(r#"{"kind": "dsdrr", "limit": {"packets": 9}, "w_init": 0.6}"#), "w_init");
        assert_eq!(field(r#"{"kind": "dsdrr", "limit": {"packets": 9}, "w_max": 0}"#), "w_max");
        assert_eq!(field(r#"{"kind": "dsdrr", "limit": {"packets": 9}, "period": 0}"#), "period");
        assert_eq!(
            field(r#"{"kind": "qsdrr", "limit": {"packets": 9}, "queues": 2, "mapping": "bloom", "bloom": {"delta": 300000000}}"#),
            "bloom.delta"
        );
        assert_eq!(
            field(r#"{"kind": "scfq", "limit": {"packets": 9}, "weights": [{"flow": 3, "weight": 0}]}"#),
            "weights"
        );
        assert!(parse(r#"{"kind": "wdrr", "limit": {"bytes": 90000}, "weights": [{"flow": 3, "weight": 10}]}"#)
            .validate()
            .is_ok());
    }
}
