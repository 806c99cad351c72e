//! Disciplines by name and parameters, as scenario files give them.
//!
//! Every discipline has a variant here; [`QdiscSpec::build`] makes it. The
//! Python schema validates the user's values and converts their units before
//! they reach this enum, so the values here are plain integers (packets,
//! bytes, nanoseconds) and fractions.

use serde::{Deserialize, Serialize};

use crate::{
    check_classes, Blue, DropTail, Limit, Mqfq, MqfqReorder, Packet, QueueDiscipline, Sfb, SfbParams, Sfed, SfedClass, SfedParams,
    Sfq, SfqAdmission, SfqHash,
};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscSpec {
    Droptail {
        limit: Limit,
    },
    /// ns-2 SFQ (seed 001, digest 001 section 2.2).
    Sfq {
        #[serde(default = "ns2_sfq_limit")]
        limit: Limit,
        #[serde(default = "sixteen")]
        buckets: usize,
        #[serde(default = "improved_hash")]
        hash: SfqHash,
        #[serde(default = "ns2_admission")]
        admission: SfqAdmission,
    },
    /// MQFQ (seed 001, digest 001 sections 2.3-2.4).
    Mqfq {
        #[serde(default = "ns2_sfq_limit")]
        limit: Limit,
        #[serde(default = "sixteen")]
        queues: usize,
        #[serde(default = "two")]
        hashes: usize,
        #[serde(default = "mtu")]
        quantum: u64,
        #[serde(default = "no_reorder_fix")]
        reorder: MqfqReorder,
        #[serde(default = "cell")]
        cell: u32,
        #[serde(default = "ns2_admission")]
        admission: SfqAdmission,
    },
    /// Blue (Feng et al., IEEE/ACM ToN 2002).
    Blue {
        limit: Limit,
        #[serde(default = "blue_increment")]
        increment: f64,
        #[serde(default = "blue_decrement")]
        decrement: f64,
        /// Nanoseconds.
        #[serde(default = "blue_freeze")]
        freeze_time: u64,
        /// Queue length (unit of `limit`) above which p_m also rises.
        #[serde(default)]
        threshold: Option<u64>,
        #[serde(default)]
        ecn: bool,
    },
    /// SFB (Feng et al., INFOCOM 2001; seed 001's baseline).
    Sfb {
        #[serde(default = "sfb_limit")]
        limit: Limit,
        #[serde(default = "two")]
        levels: usize,
        #[serde(default = "sfb_bins")]
        bins: usize,
        /// Packets; default ceil(limit / bins).
        #[serde(default)]
        bin_size: Option<u32>,
        #[serde(default = "blue_increment")]
        increment: f64,
        #[serde(default = "blue_decrement")]
        decrement: f64,
        #[serde(default = "blue_freeze")]
        freeze_time: u64,
        /// Nanoseconds; 0 = never rehash.
        #[serde(default)]
        rehash_interval: u64,
        #[serde(default)]
        warmup_time: u64,
        /// Packets per second.
        #[serde(default = "penalty_rate")]
        penalty_rate: f64,
        #[serde(default = "penalty_burst")]
        penalty_burst: u32,
        #[serde(default)]
        ecn: bool,
    },
    /// SFED, exact or randomized, with weighted, aggregate and hierarchical
    /// classes (seed 002, digest 002 sections 1-3).
    Sfed {
        limit: Limit,
        #[serde(default = "one")]
        alpha: f64,
        #[serde(default = "half")]
        lambda1: f64,
        #[serde(default = "quarter")]
        lambda2: f64,
        #[serde(default = "sfed_max_p")]
        max_p: f64,
        #[serde(default)]
        randomized: bool,
        #[serde(default)]
        ecn: bool,
        /// Bytes per token step in byte mode.
        #[serde(default = "mtu_u32")]
        quantum: u32,
        #[serde(default = "one")]
        default_weight: f64,
        #[serde(default)]
        classes: Vec<SfedClass>,
    },
}

fn ns2_sfq_limit() -> Limit {
    Limit::Packets(40)
}
fn sixteen() -> usize {
    16
}
fn two() -> usize {
    2
}
fn mtu() -> u64 {
    1500
}
fn improved_hash() -> SfqHash {
    SfqHash::Improved
}
fn ns2_admission() -> SfqAdmission {
    SfqAdmission::Ns2
}
fn no_reorder_fix() -> MqfqReorder {
    MqfqReorder::None
}
fn cell() -> u32 {
    64
}
fn blue_increment() -> f64 {
    0.0025
}
fn blue_decrement() -> f64 {
    0.00025
}
fn blue_freeze() -> u64 {
    100_000_000
}
fn one() -> f64 {
    1.0
}
fn half() -> f64 {
    0.5
}
fn quarter() -> f64 {
    0.25
}
fn sfed_max_p() -> f64 {
    0.02
}
fn mtu_u32() -> u32 {
    1500
}
fn sfb_limit() -> Limit {
    Limit::Packets(100)
}
fn sfb_bins() -> usize {
    23
}
fn penalty_rate() -> f64 {
    0.0
}
fn penalty_burst() -> u32 {
    20
}

fn probability(field: &'static str, p: f64) -> Result<(), SpecError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        err(field, format!("must be a probability in [0, 1], not {p}"))
    }
}

/// An impossible parameter, named.
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

fn nonzero_limit(limit: &Limit) -> Result<(), SpecError> {
    match *limit {
        Limit::Packets(0) | Limit::Bytes(0) => err("limit", "must be positive"),
        _ => Ok(()),
    }
}

fn packets_only(limit: &Limit, why: &str) -> Result<u64, SpecError> {
    match *limit {
        Limit::Packets(0) => Err(SpecError { field: "limit", message: "must be positive".into() }),
        Limit::Packets(n) => Ok(n),
        Limit::Bytes(_) => Err(SpecError { field: "limit", message: format!("must be in packets ({why})") }),
    }
}

impl QdiscSpec {
    /// Refuse impossible parameters, naming the field.
    pub fn validate(&self) -> Result<(), SpecError> {
        match self {
            QdiscSpec::Droptail { limit } => nonzero_limit(limit),
            QdiscSpec::Sfq { limit, buckets, .. } => {
                packets_only(limit, "ns-2 SFQ counts its buffer in packets")?;
                if *buckets == 0 {
                    return err("buckets", "must be at least 1");
                }
                Ok(())
            }
            QdiscSpec::Mqfq { limit, queues, hashes, quantum, cell, .. } => {
                packets_only(limit, "the ns-2 admission rule counts packets, or cells in cell mode")?;
                if *queues == 0 {
                    return err("queues", "must be at least 1");
                }
                if *hashes == 0 {
                    return err("hashes", "must be at least 1");
                }
                if *quantum == 0 {
                    return err("quantum", "must be positive");
                }
                if *cell == 0 {
                    return err("cell", "must be positive");
                }
                Ok(())
            }
            QdiscSpec::Blue { limit, increment, decrement, .. } => {
                nonzero_limit(limit)?;
                probability("increment", *increment)?;
                probability("decrement", *decrement)
            }
            QdiscSpec::Sfb {
                limit, levels, bins, bin_size, increment, decrement, rehash_interval, warmup_time, penalty_rate, ..
            } => {
                packets_only(limit, "SFB's bins count packets")?;
                if *levels == 0 {
                    return err("levels", "must be at least 1");
                }
                if *bins == 0 {
                    return err("bins", "must be at least 1");
                }
                if *bin_size == Some(0) {
                    return err("bin_size", "must be at least 1");
                }
                probability("increment", *increment)?;
                probability("decrement", *decrement)?;
                if *warmup_time > 0 && warmup_time >= rehash_interval {
                    return err("warmup_time", "must be shorter than rehash_interval");
                }
                if !(*penalty_rate >= 0.0 && penalty_rate.is_finite()) {
                    return err("penalty_rate", "must be a rate >= 0");
                }
                Ok(())
            }
            QdiscSpec::Sfed { limit, alpha, lambda1, lambda2, max_p, quantum, default_weight, classes, .. } => {
                nonzero_limit(limit)?;
                if !(*alpha > 0.0 && alpha.is_finite()) {
                    return err("alpha", "must be positive");
                }
                probability("lambda1", *lambda1)?;
                probability("lambda2", *lambda2)?;
                if !(*lambda2 > 0.0 && lambda2 < lambda1) {
                    return err("lambda2", format!("must be in (0, lambda1 = {lambda1})"));
                }
                probability("max_p", *max_p)?;
                if *quantum == 0 {
                    return err("quantum", "must be positive");
                }
                if !(*default_weight > 0.0 && default_weight.is_finite()) {
                    return err("default_weight", "must be positive");
                }
                check_classes(classes).map_err(|(field, message)| SpecError { field, message })
            }
        }
    }

    /// Make the discipline. `seed` feeds its random stream and hash family,
    /// so two queues of one run never share random numbers.
    pub fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        let packets = |l: &Limit| match *l {
            Limit::Packets(n) => n,
            Limit::Bytes(b) => b / 1500,
        };
        match self {
            QdiscSpec::Droptail { limit } => Box::new(DropTail::new(*limit)),
            QdiscSpec::Sfq { limit, buckets, hash, admission } => {
                Box::new(Sfq::new(packets(limit), *buckets, *hash, *admission, seed))
            }
            QdiscSpec::Mqfq { limit, queues, hashes, quantum, reorder, cell, admission } => {
                Box::new(Mqfq::new(packets(limit), *queues, *hashes, *quantum, *reorder, *cell, *admission, seed))
            }
            QdiscSpec::Blue { limit, increment, decrement, freeze_time, threshold, ecn } => {
                Box::new(Blue::new(*limit, *increment, *decrement, *freeze_time, *threshold, *ecn, seed))
            }
            QdiscSpec::Sfb {
                limit,
                levels,
                bins,
                bin_size,
                increment,
                decrement,
                freeze_time,
                rehash_interval,
                warmup_time,
                penalty_rate,
                penalty_burst,
                ecn,
            } => {
                let limit = packets(limit);
                Box::new(Sfb::new(
                    SfbParams {
                        limit,
                        levels: *levels,
                        bins: *bins,
                        bin_size: bin_size.unwrap_or(limit.div_ceil(*bins as u64) as u32),
                        increment: *increment,
                        decrement: *decrement,
                        freeze_time: *freeze_time,
                        rehash_interval: *rehash_interval,
                        warmup_time: *warmup_time,
                        penalty_rate: *penalty_rate,
                        penalty_burst: *penalty_burst,
                        ecn: *ecn,
                    },
                    seed,
                ))
            }
            QdiscSpec::Sfed { limit, alpha, lambda1, lambda2, max_p, randomized, ecn, quantum, default_weight, classes } => {
                Box::new(Sfed::new(
                    SfedParams {
                        limit: *limit,
                        alpha: *alpha,
                        lambda1: *lambda1,
                        lambda2: *lambda2,
                        max_p: *max_p,
                        randomized: *randomized,
                        ecn: *ecn,
                        quantum: *quantum,
                        default_weight: *default_weight,
                        classes: classes.clone(),
                    },
                    seed,
                ))
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
    fn defaults_come_from_the_sources() {
        match parse(r#"{"kind":"mqfq"}"#) {
            QdiscSpec::Mqfq { limit, queues, hashes, quantum, reorder, .. } => {
                assert_eq!((limit, queues, hashes, quantum, reorder), (Limit::Packets(40), 16, 2, 1500, MqfqReorder::None));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn impossible_parameters_name_their_field() {
        let bad = [
            (r#"{"kind":"sfq","buckets":0}"#, "buckets"),
            (r#"{"kind":"sfq","limit":{"bytes":1000}}"#, "limit"),
            (r#"{"kind":"mqfq","hashes":0}"#, "hashes"),
            (r#"{"kind":"mqfq","queues":0}"#, "queues"),
            (r#"{"kind":"droptail","limit":{"packets":0}}"#, "limit"),
            (r#"{"kind":"blue","limit":{"packets":10},"increment":1.5}"#, "increment"),
            (r#"{"kind":"sfb","bins":0}"#, "bins"),
            (r#"{"kind":"sfb","rehash_interval":10,"warmup_time":20}"#, "warmup_time"),
            (r#"{"kind":"sfb","decrement":-0.1}"#, "decrement"),
            (r#"{"kind":"sfed","limit":{"packets":24},"lambda2":0.6}"#, "lambda2"),
            (r#"{"kind":"sfed","limit":{"packets":24},"max_p":2}"#, "max_p"),
            (r#"{"kind":"sfed","limit":{"packets":24},"classes":[{"name":"a","parent":"x","flows":[1]}]}"#, "classes.parent"),
        ];
        for (json, field) in bad {
            assert_eq!(parse(json).validate().unwrap_err().field, field, "{json}");
        }
        assert!(parse(r#"{"kind":"mqfq","reorder":"cells","cell":48}"#).validate().is_ok());
        let tree = r#"{"kind":"sfed","limit":{"packets":190},"randomized":true,"classes":[
            {"name":"cbr","weight":3},{"name":"tcp","weight":9},
            {"name":"c0","parent":"cbr","weight":2,"flows":[0]},{"name":"c1","parent":"cbr","weight":1,"flows":[1]},
            {"name":"web","parent":"tcp","weight":9,"traffic":["tcp"],"per_flow":true}]}"#;
        assert!(parse(tree).validate().is_ok());
    }
}
