//! Disciplines by name and parameters, as scenario files give them.
//!
//! Every discipline has a variant here; [`QdiscSpec::build`] makes it. The
//! Python schema validates the user's values and converts their units before
//! they reach this enum, so the values here are plain integers (packets,
//! bytes, nanoseconds) and fractions.
//!
//! `link_rate_bps`: RED's idle decay (the transmission time of a typical
//! packet), Adaptive RED's automatic parameters, Linux RED's idle table
//! (`tc ... bandwidth`) and PIE's initial departure rate need the rate of
//! the link the queue feeds. The field is optional: the simulator fills it
//! from the link with [`QdiscSpec::fill_link_rate`] when the user left it
//! out; if it is still missing, 10 Mb/s is used (tc's default `bandwidth`,
//! and seed 004's bottleneck), and PIE starts with no estimate (RFC 8033).

use serde::{Deserialize, Serialize};

use crate::ared::{Ared, AredParams};
use crate::blocks::{Balancing, BloomBalancer, BloomConfig, CodelParams, FlowWeights, QueueMap};
use crate::cbt::{Cbt, CbtParams};
use crate::choke::{Choke, ChokeParams};
use crate::codel::Codel;
use crate::dcbt::{Dcbt, DcbtParams, UdpBase, UdpFlows};
use crate::drr::{DropEnd, DrrLqd};
use crate::dsdrr::{Dsdrr, DsdrrParams, OverW};
use crate::dtdrr::Dtdrr;
use crate::fq_codel::{FqCodel, FqCodelParams};
use crate::fred::{Fred, FredParams};
use crate::pie::{Pie, PieEstimator, PieParams};
use crate::qsdrr::Qsdrr;
use crate::red::{Red, RedMode, RedParams};
use crate::red_linux::{LinuxRedConfig, LinuxRedParams, RedLinux};
use crate::scfq::Scfq;
use crate::tdrr::{RateEstimator, Tdrr};
use crate::wdrr::Wdrr;
use crate::wf2q_plus::Wf2qPlus;
use crate::{
    check_classes, Blue, DropTail, Limit, Mqfq, MqfqReorder, Packet, QueueDiscipline, Sfb,
    SfbParams, Sfed, SfedClass, SfedParams, Sfq, SfqAdmission, SfqHash, Time,
};

/// The link rate assumed when neither the user nor the simulator gave one.
pub const DEFAULT_LINK_RATE_BPS: u64 = 10_000_000;

const MS: Time = 1_000_000;

fn packets<const N: u64>() -> Limit {
    Limit::Packets(N)
}
fn int<const N: u64>() -> u64 {
    N
}
fn int32<const N: u32>() -> u32 {
    N
}
fn yes() -> bool {
    true
}
fn f(x: f64) -> f64 {
    x
}
fn w_q() -> f64 {
    f(0.002)
}
fn max_p_002() -> f64 {
    f(0.02)
}
fn max_p_001() -> f64 {
    f(0.01)
}
fn ared_max_p() -> f64 {
    f(0.1)
}
fn ared_beta() -> f64 {
    f(0.9)
}
fn five() -> f64 {
    f(5.0)
}
fn fifteen() -> f64 {
    f(15.0)
}
fn two() -> f64 {
    f(2.0)
}
fn ten() -> f64 {
    f(10.0)
}
fn hundred() -> f64 {
    f(100.0)
}
fn two_hundred() -> f64 {
    f(200.0)
}
fn pie_alpha() -> f64 {
    f(0.125)
}
fn pie_beta() -> f64 {
    f(1.25)
}
fn tenth() -> f64 {
    f(0.1)
}
fn half() -> f64 {
    f(0.5)
}

fn ns2_sfq_limit() -> Limit {
    Limit::Packets(40)
}
fn sixteen() -> usize {
    16
}
fn two_usize() -> usize {
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

// Seed 000.
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
fn one_u32() -> u32 {
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
        #[serde(default = "two_usize")]
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
        #[serde(default = "two_usize")]
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
    /// Floyd-Jacobson RED (`docs/disciplines/red.md`).
    Red {
        #[serde(default = "packets::<60>")]
        limit: Limit,
        #[serde(default)]
        mode: RedMode,
        /// Packets or bytes, by `mode`.
        #[serde(default = "five")]
        min_th: f64,
        #[serde(default = "fifteen")]
        max_th: f64,
        #[serde(default = "w_q")]
        w_q: f64,
        #[serde(default = "max_p_002")]
        max_p: f64,
        #[serde(default)]
        gentle: bool,
        #[serde(default)]
        ecn: bool,
        #[serde(default = "int32::<1000>")]
        mean_packet_size: u32,
        #[serde(default = "int32::<1500>")]
        max_packet_size: u32,
        #[serde(default)]
        link_rate_bps: Option<u64>,
    },
    /// Adaptive RED (`docs/disciplines/ared.md`); unset thresholds and
    /// weight are set from the link.
    Ared {
        #[serde(default = "packets::<100>")]
        limit: Limit,
        #[serde(default)]
        min_th: Option<f64>,
        #[serde(default)]
        max_th: Option<f64>,
        #[serde(default)]
        w_q: Option<f64>,
        #[serde(default = "ared_max_p")]
        max_p: f64,
        #[serde(default = "int::<5_000_000>")]
        target_delay: Time,
        #[serde(default = "int::<500_000_000>")]
        interval: Time,
        #[serde(default = "ared_beta")]
        beta: f64,
        #[serde(default)]
        ecn: bool,
        #[serde(default = "int32::<1000>")]
        mean_packet_size: u32,
        #[serde(default)]
        link_rate_bps: Option<u64>,
    },
    /// FRED (`docs/disciplines/fred.md`).
    Fred {
        #[serde(default = "int::<60>")]
        limit: u64,
        #[serde(default = "five")]
        min_th: f64,
        #[serde(default = "fifteen")]
        max_th: f64,
        #[serde(default = "w_q")]
        w_q: f64,
        #[serde(default = "max_p_002")]
        max_p: f64,
        #[serde(default = "two")]
        min_q: f64,
        #[serde(default = "int32::<1000>")]
        mean_packet_size: u32,
        #[serde(default)]
        link_rate_bps: Option<u64>,
    },
    /// CHOKe (`docs/disciplines/choke.md`).
    Choke {
        #[serde(default = "int::<300>")]
        limit: u64,
        #[serde(default = "hundred")]
        min_th: f64,
        #[serde(default = "two_hundred")]
        max_th: f64,
        #[serde(default = "w_q")]
        w_q: f64,
        #[serde(default = "max_p_002")]
        max_p: f64,
        #[serde(default)]
        ecn: bool,
        #[serde(default = "int32::<1000>")]
        mean_packet_size: u32,
        #[serde(default)]
        link_rate_bps: Option<u64>,
    },
    /// CoDel (`docs/disciplines/codel.md`).
    Codel {
        #[serde(default = "packets::<1000>")]
        limit: Limit,
        #[serde(default = "int::<{ 5 * MS }>")]
        target: Time,
        #[serde(default = "int::<{ 100 * MS }>")]
        interval: Time,
        #[serde(default = "int32::<1500>")]
        mtu: u32,
        #[serde(default)]
        ecn: bool,
    },
    /// FQ-CoDel (`docs/disciplines/fq_codel.md`).
    FqCodel {
        #[serde(default = "int::<1024>")]
        flows: u64,
        #[serde(default = "int32::<1514>")]
        quantum: u32,
        #[serde(default = "int::<10240>")]
        limit: u64,
        #[serde(default = "int::<{ 32 << 20 }>")]
        memory_limit: u64,
        #[serde(default = "int32::<64>")]
        drop_batch_size: u32,
        #[serde(default = "int::<{ 5 * MS }>")]
        target: Time,
        #[serde(default = "int::<{ 100 * MS }>")]
        interval: Time,
        #[serde(default = "int32::<1514>")]
        mtu: u32,
        #[serde(default = "yes")]
        ecn: bool,
    },
    /// PIE (`docs/disciplines/pie.md`).
    Pie {
        #[serde(default = "packets::<1000>")]
        limit: Limit,
        #[serde(default = "int::<{ 15 * MS }>")]
        target: Time,
        #[serde(default = "int::<{ 15 * MS }>")]
        t_update: Time,
        #[serde(default = "int::<{ 150 * MS }>")]
        max_burst: Time,
        #[serde(default = "pie_alpha")]
        alpha: f64,
        #[serde(default = "pie_beta")]
        beta: f64,
        #[serde(default)]
        ecn: bool,
        #[serde(default = "tenth")]
        mark_ecn_threshold: f64,
        #[serde(default)]
        estimator: PieEstimator,
        #[serde(default = "int::<16384>")]
        dq_threshold: u64,
        #[serde(default = "int32::<1500>")]
        mean_packet_size: u32,
        #[serde(default)]
        link_rate_bps: Option<u64>,
    },
    /// RED as Linux 2.4 (`docs/disciplines/red_linux.md`); bytes.
    RedLinux {
        #[serde(default = "int::<20000>")]
        limit: u64,
        #[serde(default = "int::<5000>")]
        min_th: u64,
        #[serde(default = "int::<15000>")]
        max_th: u64,
        #[serde(default = "int32::<1000>")]
        avpkt: u32,
        #[serde(default = "int32::<8>")]
        burst: u32,
        /// tc's `probability`.
        #[serde(default = "max_p_001")]
        max_p: f64,
        #[serde(default)]
        ecn: bool,
        #[serde(default)]
        link_rate_bps: Option<u64>,
    },
    /// CBT (`docs/disciplines/cbt.md`).
    Cbt {
        #[serde(default = "int::<20000>")]
        limit: u64,
        #[serde(default = "int::<5000>")]
        min_th: u64,
        #[serde(default = "int::<15000>")]
        max_th: u64,
        #[serde(default = "int32::<1000>")]
        avpkt: u32,
        #[serde(default = "int32::<8>")]
        burst: u32,
        #[serde(default = "max_p_001")]
        max_p: f64,
        #[serde(default)]
        ecn: bool,
        #[serde(default)]
        link_rate_bps: Option<u64>,
        /// Packets of `avpkt` bytes.
        #[serde(default = "ten")]
        mm_threshold: f64,
        #[serde(default = "two")]
        udp_threshold: f64,
    },
    /// DCBT (`docs/disciplines/dcbt.md`).
    Dcbt {
        #[serde(default = "int::<20000>")]
        limit: u64,
        #[serde(default = "int::<5000>")]
        min_th: u64,
        #[serde(default = "int::<15000>")]
        max_th: u64,
        #[serde(default = "int32::<1000>")]
        avpkt: u32,
        #[serde(default = "int32::<8>")]
        burst: u32,
        #[serde(default = "max_p_001")]
        max_p: f64,
        #[serde(default)]
        ecn: bool,
        #[serde(default)]
        link_rate_bps: Option<u64>,
        #[serde(default = "int::<1_000_000_000>")]
        flow_timeout: Time,
        #[serde(default = "int::<1_000_000_000>")]
        gc_interval: Time,
        #[serde(default)]
        udp_flows: UdpFlows,
        #[serde(default)]
        udp_base: UdpBase,
    },
    /// DCBT with ChIPS (`docs/disciplines/chips.md`).
    Chips {
        #[serde(default = "int::<20000>")]
        limit: u64,
        #[serde(default = "int::<5000>")]
        min_th: u64,
        #[serde(default = "int::<15000>")]
        max_th: u64,
        #[serde(default = "int32::<1000>")]
        avpkt: u32,
        #[serde(default = "int32::<8>")]
        burst: u32,
        #[serde(default = "max_p_001")]
        max_p: f64,
        #[serde(default)]
        ecn: bool,
        #[serde(default)]
        link_rate_bps: Option<u64>,
        #[serde(default = "int::<1_000_000_000>")]
        flow_timeout: Time,
        #[serde(default = "int::<1_000_000_000>")]
        gc_interval: Time,
        #[serde(default)]
        udp_flows: UdpFlows,
        #[serde(default)]
        udp_base: UdpBase,
        /// Cut in while `mm_flows <= chips_ratio total_flows`.
        #[serde(default = "half")]
        chips_ratio: f64,
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
        #[serde(default = "one_u32")]
        default_weight: u32,
    },
    /// Self-Clocked Fair Queueing (seed 000, chapter 7).
    Scfq {
        limit: Limit,
        #[serde(default)]
        weights: Vec<FlowWeight>,
        #[serde(default = "one_u32")]
        default_weight: u32,
    },
    /// WF2Q+ (seed 000, chapter 7).
    #[serde(rename = "wf2q_plus")]
    Wf2qPlus {
        limit: Limit,
        #[serde(default)]
        weights: Vec<FlowWeight>,
        #[serde(default = "one_u32")]
        default_weight: u32,
    },
}

/// An impossible parameter, with the field that holds it.
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

fn err<T>(field: &'static str, message: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError {
        field,
        message: message.into(),
    })
}

fn positive_limit(limit: &Limit) -> Result<(), SpecError> {
    match *limit {
        Limit::Packets(0) | Limit::Bytes(0) => err("limit", "must be above zero"),
        _ => Ok(()),
    }
}

fn packets_only(limit: &Limit, why: &str) -> Result<u64, SpecError> {
    match *limit {
        Limit::Packets(0) => Err(SpecError {
            field: "limit",
            message: "must be positive".into(),
        }),
        Limit::Packets(n) => Ok(n),
        Limit::Bytes(_) => Err(SpecError {
            field: "limit",
            message: format!("must be in packets ({why})"),
        }),
    }
}

fn nonzero<T: PartialEq + Default>(field: &'static str, v: T) -> Result<(), SpecError> {
    if v == T::default() {
        err(field, "must be above zero")
    } else {
        Ok(())
    }
}

fn probability(field: &'static str, p: f64) -> Result<(), SpecError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        err(field, format!("{p} is not a probability in [0, 1]"))
    }
}

fn weight(field: &'static str, w: f64) -> Result<(), SpecError> {
    if w > 0.0 && w <= 1.0 {
        Ok(())
    } else {
        err(field, format!("{w} is not a weight in (0, 1]"))
    }
}

fn thresholds(min_th: f64, max_th: f64) -> Result<(), SpecError> {
    if min_th.is_nan() || min_th < 0.0 {
        return err("min_th", format!("{min_th} is negative"));
    }
    if max_th.is_nan() || min_th >= max_th {
        return err(
            "min_th",
            format!("min_th {min_th} must be below max_th {max_th}"),
        );
    }
    Ok(())
}

/// True if `x` cannot be a count or a size: negative, or NaN.
fn negative_or_nan(x: f64) -> bool {
    x.is_nan() || x < 0.0
}

fn rate(link_rate_bps: Option<u64>) -> Result<(), SpecError> {
    if link_rate_bps == Some(0) {
        return err("link_rate_bps", "must be above zero");
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn linux_red(
    limit: u64,
    min_th: u64,
    max_th: u64,
    avpkt: u32,
    burst: u32,
    max_p: f64,
    ecn: bool,
    link_rate_bps: Option<u64>,
) -> LinuxRedParams {
    LinuxRedParams {
        limit,
        min_th,
        max_th,
        avpkt,
        burst,
        probability: max_p,
        link_rate_bps: link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS),
        ecn,
    }
}

fn validate_linux_red(p: &LinuxRedParams) -> Result<(), SpecError> {
    nonzero("limit", p.limit)?;
    thresholds(p.min_th as f64, p.max_th as f64)?;
    nonzero("avpkt", p.avpkt)?;
    nonzero("burst", p.burst)?;
    probability("max_p", p.probability)?;
    if crate::red_linux::eval_wlog(p.min_th, p.burst, p.avpkt).is_none() {
        return err("burst", format!("burst {} is too small for min_th {} and avpkt {} (tc needs burst + 1 - min_th/avpkt >= 1)", p.burst, p.min_th, p.avpkt));
    }
    if crate::red_linux::eval_plog(p.min_th, p.max_th, p.probability).is_none() {
        return err(
            "max_p",
            format!(
                "{} is too small to represent for max_th - min_th = {} (Plog >= 32)",
                p.probability,
                p.max_th - p.min_th
            ),
        );
    }
    LinuxRedConfig::from_tc(p)
        .map(|_| ())
        .map_err(|m| SpecError {
            field: "link_rate_bps",
            message: m,
        })
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

fn check_map(
    queues: Option<u32>,
    mapping: Option<Mapping>,
    bloom: &BloomSpec,
) -> Result<(), SpecError> {
    match queues {
        Some(0) => return err("queues", "must be at least 1"),
        None if mapping.is_some() => {
            return err(
                "mapping",
                "needs `queues` (without it every flow has its own queue)",
            )
        }
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
        return err(
            "weights",
            format!("flow {} has weight 0 (weights are at least 1)", w.flow),
        );
    }
    Ok(())
}

fn queue_map(
    queues: Option<u32>,
    mapping: Option<Mapping>,
    bloom: &BloomSpec,
    seed: u64,
) -> QueueMap {
    let Some(n) = queues else {
        return QueueMap::per_flow();
    };
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

/// Every discipline's `kind` as scenario files spell it (`QdiscSpec::kind`).
pub const KINDS: [&str; 25] = [
    "droptail",
    "red",
    "ared",
    "red_linux",
    "fred",
    "choke",
    "blue",
    "sfb",
    "sfq",
    "mqfq",
    "sfed",
    "pie",
    "codel",
    "fq_codel",
    "cbt",
    "dcbt",
    "chips",
    "drr",
    "wdrr",
    "tdrr",
    "qsdrr",
    "dtdrr",
    "dsdrr",
    "scfq",
    "wf2q_plus",
];

impl QdiscSpec {
    /// The discipline's `kind` as scenario files spell it.
    pub fn kind(&self) -> &'static str {
        match self {
            QdiscSpec::Droptail { .. } => "droptail",
            QdiscSpec::Sfq { .. } => "sfq",
            QdiscSpec::Mqfq { .. } => "mqfq",
            QdiscSpec::Blue { .. } => "blue",
            QdiscSpec::Sfb { .. } => "sfb",
            QdiscSpec::Sfed { .. } => "sfed",
            QdiscSpec::Red { .. } => "red",
            QdiscSpec::Ared { .. } => "ared",
            QdiscSpec::Fred { .. } => "fred",
            QdiscSpec::Choke { .. } => "choke",
            QdiscSpec::Codel { .. } => "codel",
            QdiscSpec::FqCodel { .. } => "fq_codel",
            QdiscSpec::Pie { .. } => "pie",
            QdiscSpec::RedLinux { .. } => "red_linux",
            QdiscSpec::Cbt { .. } => "cbt",
            QdiscSpec::Dcbt { .. } => "dcbt",
            QdiscSpec::Chips { .. } => "chips",
            QdiscSpec::Drr { .. } => "drr",
            QdiscSpec::Tdrr { .. } => "tdrr",
            QdiscSpec::Qsdrr { .. } => "qsdrr",
            QdiscSpec::Dtdrr { .. } => "dtdrr",
            QdiscSpec::Dsdrr { .. } => "dsdrr",
            QdiscSpec::Wdrr { .. } => "wdrr",
            QdiscSpec::Scfq { .. } => "scfq",
            QdiscSpec::Wf2qPlus { .. } => "wf2q_plus",
        }
    }

    /// Give disciplines that need the link rate the simulator's value, where
    /// the user did not set one.
    pub fn fill_link_rate(&mut self, bps: u64) {
        match self {
            QdiscSpec::Red { link_rate_bps, .. }
            | QdiscSpec::Ared { link_rate_bps, .. }
            | QdiscSpec::Fred { link_rate_bps, .. }
            | QdiscSpec::Choke { link_rate_bps, .. }
            | QdiscSpec::Pie { link_rate_bps, .. }
            | QdiscSpec::RedLinux { link_rate_bps, .. }
            | QdiscSpec::Cbt { link_rate_bps, .. }
            | QdiscSpec::Dcbt { link_rate_bps, .. }
            | QdiscSpec::Chips { link_rate_bps, .. } => {
                link_rate_bps.get_or_insert(bps);
            }
            QdiscSpec::Droptail { .. }
            | QdiscSpec::Codel { .. }
            | QdiscSpec::FqCodel { .. }
            | QdiscSpec::Sfq { .. }
            | QdiscSpec::Mqfq { .. }
            | QdiscSpec::Blue { .. }
            | QdiscSpec::Sfb { .. }
            | QdiscSpec::Sfed { .. }
            | QdiscSpec::Drr { .. }
            | QdiscSpec::Tdrr { .. }
            | QdiscSpec::Qsdrr { .. }
            | QdiscSpec::Dtdrr { .. }
            | QdiscSpec::Dsdrr { .. }
            | QdiscSpec::Wdrr { .. }
            | QdiscSpec::Scfq { .. }
            | QdiscSpec::Wf2qPlus { .. } => {}
        }
    }

    /// Refuse impossible parameters, naming the field.
    pub fn validate(&self) -> Result<(), SpecError> {
        match self {
            QdiscSpec::Droptail { limit } => positive_limit(limit),
            QdiscSpec::Sfq { limit, buckets, .. } => {
                packets_only(limit, "ns-2 SFQ counts its buffer in packets")?;
                if *buckets == 0 {
                    return err("buckets", "must be at least 1");
                }
                Ok(())
            }
            QdiscSpec::Mqfq {
                limit,
                queues,
                hashes,
                quantum,
                cell,
                ..
            } => {
                packets_only(
                    limit,
                    "the ns-2 admission rule counts packets, or cells in cell mode",
                )?;
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
            QdiscSpec::Blue {
                limit,
                increment,
                decrement,
                ..
            } => {
                positive_limit(limit)?;
                probability("increment", *increment)?;
                probability("decrement", *decrement)
            }
            QdiscSpec::Sfb {
                limit,
                levels,
                bins,
                bin_size,
                increment,
                decrement,
                rehash_interval,
                warmup_time,
                penalty_rate,
                ..
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
            QdiscSpec::Sfed {
                limit,
                alpha,
                lambda1,
                lambda2,
                max_p,
                quantum,
                default_weight,
                classes,
                ..
            } => {
                positive_limit(limit)?;
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
            QdiscSpec::Red {
                limit,
                min_th,
                max_th,
                w_q,
                max_p,
                mean_packet_size,
                max_packet_size,
                link_rate_bps,
                ..
            } => {
                positive_limit(limit)?;
                thresholds(*min_th, *max_th)?;
                weight("w_q", *w_q)?;
                probability("max_p", *max_p)?;
                nonzero("mean_packet_size", *mean_packet_size)?;
                nonzero("max_packet_size", *max_packet_size)?;
                rate(*link_rate_bps)
            }
            QdiscSpec::Ared {
                limit,
                min_th,
                max_th,
                w_q,
                max_p,
                target_delay,
                interval,
                beta,
                mean_packet_size,
                link_rate_bps,
                ..
            } => {
                positive_limit(limit)?;
                nonzero("mean_packet_size", *mean_packet_size)?;
                rate(*link_rate_bps)?;
                if let Some(w) = w_q {
                    weight("w_q", *w)?;
                }
                probability("max_p", *max_p)?;
                nonzero("target_delay", *target_delay)?;
                nonzero("interval", *interval)?;
                if beta.is_nan() || *beta <= 0.0 || *beta >= 1.0 {
                    return err("beta", format!("{beta} must be in (0, 1)"));
                }
                if min_th.is_some() || max_th.is_some() {
                    let resolved = self.ared_params().resolve();
                    thresholds(resolved.min_th, resolved.max_th)?;
                }
                Ok(())
            }
            QdiscSpec::Fred {
                limit,
                min_th,
                max_th,
                w_q,
                max_p,
                min_q,
                mean_packet_size,
                link_rate_bps,
            } => {
                nonzero("limit", *limit)?;
                thresholds(*min_th, *max_th)?;
                weight("w_q", *w_q)?;
                probability("max_p", *max_p)?;
                if negative_or_nan(*min_q) {
                    return err("min_q", format!("{min_q} is negative"));
                }
                nonzero("mean_packet_size", *mean_packet_size)?;
                rate(*link_rate_bps)
            }
            QdiscSpec::Choke {
                limit,
                min_th,
                max_th,
                w_q,
                max_p,
                mean_packet_size,
                link_rate_bps,
                ..
            } => {
                nonzero("limit", *limit)?;
                thresholds(*min_th, *max_th)?;
                weight("w_q", *w_q)?;
                probability("max_p", *max_p)?;
                nonzero("mean_packet_size", *mean_packet_size)?;
                rate(*link_rate_bps)
            }
            QdiscSpec::Codel {
                limit,
                target,
                interval,
                ..
            } => {
                positive_limit(limit)?;
                nonzero("target", *target)?;
                nonzero("interval", *interval)
            }
            QdiscSpec::FqCodel {
                flows,
                quantum,
                limit,
                memory_limit,
                drop_batch_size,
                target,
                interval,
                ..
            } => {
                nonzero("flows", *flows)?;
                nonzero("quantum", *quantum)?;
                nonzero("limit", *limit)?;
                nonzero("memory_limit", *memory_limit)?;
                nonzero("drop_batch_size", *drop_batch_size)?;
                nonzero("target", *target)?;
                nonzero("interval", *interval)
            }
            QdiscSpec::Pie {
                limit,
                target,
                t_update,
                alpha,
                beta,
                mark_ecn_threshold,
                dq_threshold,
                mean_packet_size,
                link_rate_bps,
                ..
            } => {
                positive_limit(limit)?;
                nonzero("target", *target)?;
                nonzero("t_update", *t_update)?;
                if negative_or_nan(*alpha) {
                    return err("alpha", format!("{alpha} is negative"));
                }
                if negative_or_nan(*beta) {
                    return err("beta", format!("{beta} is negative"));
                }
                probability("mark_ecn_threshold", *mark_ecn_threshold)?;
                nonzero("dq_threshold", *dq_threshold)?;
                nonzero("mean_packet_size", *mean_packet_size)?;
                rate(*link_rate_bps)
            }
            QdiscSpec::RedLinux { link_rate_bps, .. } => {
                rate(*link_rate_bps)?;
                validate_linux_red(&self.linux_red_params())
            }
            QdiscSpec::Cbt {
                link_rate_bps,
                mm_threshold,
                udp_threshold,
                ..
            } => {
                rate(*link_rate_bps)?;
                validate_linux_red(&self.linux_red_params())?;
                if negative_or_nan(*mm_threshold) {
                    return err("mm_threshold", format!("{mm_threshold} is negative"));
                }
                if negative_or_nan(*udp_threshold) {
                    return err("udp_threshold", format!("{udp_threshold} is negative"));
                }
                Ok(())
            }
            QdiscSpec::Dcbt {
                link_rate_bps,
                flow_timeout,
                gc_interval,
                ..
            } => {
                rate(*link_rate_bps)?;
                validate_linux_red(&self.linux_red_params())?;
                nonzero("flow_timeout", *flow_timeout)?;
                nonzero("gc_interval", *gc_interval)
            }
            QdiscSpec::Chips {
                link_rate_bps,
                flow_timeout,
                gc_interval,
                chips_ratio,
                ..
            } => {
                rate(*link_rate_bps)?;
                validate_linux_red(&self.linux_red_params())?;
                nonzero("flow_timeout", *flow_timeout)?;
                nonzero("gc_interval", *gc_interval)?;
                probability("chips_ratio", *chips_ratio)
            }
            QdiscSpec::Drr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                drop_from: _,
            } => {
                positive_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)
            }
            QdiscSpec::Tdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                drop_from: _,
                weight: w,
                estimator: _,
            } => {
                positive_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)?;
                weight("weight", *w)
            }
            QdiscSpec::Qsdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
            } => {
                positive_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)
            }
            QdiscSpec::Dtdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                alpha,
            } => {
                positive_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)?;
                check_positive("alpha", *alpha)
            }
            QdiscSpec::Dsdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                alpha,
                period,
                w_init,
                w_max,
                over_w: _,
            } => {
                positive_limit(limit)?;
                check_quantum(*quantum)?;
                check_map(*queues, *mapping, bloom)?;
                check_positive("alpha", *alpha)?;
                if *period == 0 {
                    return err("period", "must be positive");
                }
                weight("w_init", *w_init)?;
                weight("w_max", *w_max)?;
                if w_init > w_max {
                    return err(
                        "w_init",
                        format!("must not exceed w_max ({w_max}), got {w_init}"),
                    );
                }
                Ok(())
            }
            QdiscSpec::Wdrr {
                limit,
                quantum,
                weights,
                default_weight,
            } => {
                positive_limit(limit)?;
                check_quantum(*quantum)?;
                check_weights(weights, *default_weight)
            }
            QdiscSpec::Scfq {
                limit,
                weights,
                default_weight,
            }
            | QdiscSpec::Wf2qPlus {
                limit,
                weights,
                default_weight,
            } => {
                positive_limit(limit)?;
                check_weights(weights, *default_weight)
            }
        }
    }

    fn ared_params(&self) -> AredParams {
        let QdiscSpec::Ared {
            limit,
            min_th,
            max_th,
            w_q,
            max_p,
            target_delay,
            interval,
            beta,
            ecn,
            mean_packet_size,
            link_rate_bps,
        } = *self
        else {
            unreachable!("ared_params of {}", self.kind())
        };
        AredParams {
            limit,
            min_th,
            max_th,
            w_q,
            max_p,
            target_delay,
            interval,
            beta,
            ecn,
            mean_packet_size,
            link_rate_bps: link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS),
        }
    }

    fn linux_red_params(&self) -> LinuxRedParams {
        match *self {
            QdiscSpec::RedLinux {
                limit,
                min_th,
                max_th,
                avpkt,
                burst,
                max_p,
                ecn,
                link_rate_bps,
            }
            | QdiscSpec::Cbt {
                limit,
                min_th,
                max_th,
                avpkt,
                burst,
                max_p,
                ecn,
                link_rate_bps,
                ..
            }
            | QdiscSpec::Dcbt {
                limit,
                min_th,
                max_th,
                avpkt,
                burst,
                max_p,
                ecn,
                link_rate_bps,
                ..
            }
            | QdiscSpec::Chips {
                limit,
                min_th,
                max_th,
                avpkt,
                burst,
                max_p,
                ecn,
                link_rate_bps,
                ..
            } => linux_red(
                limit,
                min_th,
                max_th,
                avpkt,
                burst,
                max_p,
                ecn,
                link_rate_bps,
            ),
            _ => unreachable!("linux_red_params of {}", self.kind()),
        }
    }

    /// Make the discipline. `seed` feeds its random stream and hash family,
    /// so two queues of one run never share random numbers. The spec must
    /// have passed [`QdiscSpec::validate`].
    pub fn build<P: Packet + Send + 'static>(
        &self,
        seed: u64,
    ) -> Box<dyn QueueDiscipline<P> + Send> {
        const VALID: &str = "QdiscSpec::build on a spec that fails validate()";
        match *self {
            QdiscSpec::Droptail { limit } => Box::new(DropTail::new(limit)),
            QdiscSpec::Sfq { .. }
            | QdiscSpec::Mqfq { .. }
            | QdiscSpec::Blue { .. }
            | QdiscSpec::Sfb { .. }
            | QdiscSpec::Sfed { .. } => self.build_fair_queueing(seed),
            QdiscSpec::Drr { .. }
            | QdiscSpec::Tdrr { .. }
            | QdiscSpec::Qsdrr { .. }
            | QdiscSpec::Dtdrr { .. }
            | QdiscSpec::Dsdrr { .. }
            | QdiscSpec::Wdrr { .. }
            | QdiscSpec::Scfq { .. }
            | QdiscSpec::Wf2qPlus { .. } => self.build_per_flow_queueing(seed),
            QdiscSpec::Red {
                limit,
                mode,
                min_th,
                max_th,
                w_q,
                max_p,
                gentle,
                ecn,
                mean_packet_size,
                max_packet_size,
                link_rate_bps,
            } => Box::new(Red::new(
                RedParams {
                    limit,
                    mode,
                    min_th,
                    max_th,
                    w_q,
                    max_p,
                    gentle,
                    ecn,
                    mean_packet_size,
                    max_packet_size,
                    link_rate_bps: link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS),
                },
                seed,
            )),
            QdiscSpec::Ared { .. } => Box::new(Ared::new(self.ared_params(), seed)),
            QdiscSpec::Fred {
                limit,
                min_th,
                max_th,
                w_q,
                max_p,
                min_q,
                mean_packet_size,
                link_rate_bps,
            } => Box::new(Fred::new(
                FredParams {
                    limit,
                    min_th,
                    max_th,
                    w_q,
                    max_p,
                    min_q,
                    mean_packet_size,
                    link_rate_bps: link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS),
                },
                seed,
            )),
            QdiscSpec::Choke {
                limit,
                min_th,
                max_th,
                w_q,
                max_p,
                ecn,
                mean_packet_size,
                link_rate_bps,
            } => Box::new(Choke::new(
                ChokeParams {
                    limit,
                    min_th,
                    max_th,
                    w_q,
                    max_p,
                    ecn,
                    mean_packet_size,
                    link_rate_bps: link_rate_bps.unwrap_or(DEFAULT_LINK_RATE_BPS),
                },
                seed,
            )),
            QdiscSpec::Codel {
                limit,
                target,
                interval,
                mtu,
                ecn,
            } => Box::new(Codel::new(
                limit,
                CodelParams {
                    target,
                    interval,
                    mtu,
                    ecn,
                },
            )),
            QdiscSpec::FqCodel {
                flows,
                quantum,
                limit,
                memory_limit,
                drop_batch_size,
                target,
                interval,
                mtu,
                ecn,
            } => Box::new(FqCodel::new(
                FqCodelParams {
                    flows: flows as usize,
                    quantum,
                    limit,
                    memory_limit,
                    drop_batch_size,
                    codel: CodelParams {
                        target,
                        interval,
                        mtu,
                        ecn,
                    },
                },
                seed,
            )),
            QdiscSpec::Pie {
                limit,
                target,
                t_update,
                max_burst,
                alpha,
                beta,
                ecn,
                mark_ecn_threshold,
                estimator,
                dq_threshold,
                mean_packet_size,
                link_rate_bps,
            } => Box::new(Pie::new(
                PieParams {
                    limit,
                    target,
                    t_update,
                    max_burst,
                    alpha,
                    beta,
                    ecn,
                    mark_ecn_threshold,
                    estimator,
                    dq_threshold,
                    mean_packet_size,
                    link_rate_bps,
                },
                seed,
            )),
            QdiscSpec::RedLinux { .. } => {
                Box::new(RedLinux::new(&self.linux_red_params(), seed).expect(VALID))
            }
            QdiscSpec::Cbt {
                mm_threshold,
                udp_threshold,
                ..
            } => Box::new(
                Cbt::new(
                    &CbtParams {
                        red: self.linux_red_params(),
                        mm_threshold,
                        udp_threshold,
                    },
                    seed,
                )
                .expect(VALID),
            ),
            QdiscSpec::Dcbt {
                flow_timeout,
                gc_interval,
                udp_flows,
                udp_base,
                ..
            } => Box::new(
                Dcbt::new(
                    &DcbtParams {
                        red: self.linux_red_params(),
                        flow_timeout,
                        gc_interval,
                        udp_flows,
                        udp_base,
                        chips_ratio: None,
                    },
                    seed,
                )
                .expect(VALID),
            ),
            QdiscSpec::Chips {
                flow_timeout,
                gc_interval,
                udp_flows,
                udp_base,
                chips_ratio,
                ..
            } => Box::new(
                Dcbt::new(
                    &DcbtParams {
                        red: self.linux_red_params(),
                        flow_timeout,
                        gc_interval,
                        udp_flows,
                        udp_base,
                        chips_ratio: Some(chips_ratio),
                    },
                    seed,
                )
                .expect(VALID),
            ),
        }
    }

    /// Seed 001's and 002's disciplines and Blue (their parameters hold
    /// vectors, so they are built from a borrowed spec).
    fn build_fair_queueing<P: Packet + Send + 'static>(
        &self,
        seed: u64,
    ) -> Box<dyn QueueDiscipline<P> + Send> {
        let packets = |l: &Limit| match *l {
            Limit::Packets(n) => n,
            Limit::Bytes(b) => b / 1500,
        };
        match self {
            QdiscSpec::Sfq {
                limit,
                buckets,
                hash,
                admission,
            } => Box::new(Sfq::new(packets(limit), *buckets, *hash, *admission, seed)),
            QdiscSpec::Mqfq {
                limit,
                queues,
                hashes,
                quantum,
                reorder,
                cell,
                admission,
            } => Box::new(Mqfq::new(
                packets(limit),
                *queues,
                *hashes,
                *quantum,
                *reorder,
                *cell,
                *admission,
                seed,
            )),
            QdiscSpec::Blue {
                limit,
                increment,
                decrement,
                freeze_time,
                threshold,
                ecn,
            } => Box::new(Blue::new(
                *limit,
                *increment,
                *decrement,
                *freeze_time,
                *threshold,
                *ecn,
                seed,
            )),
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
            QdiscSpec::Sfed {
                limit,
                alpha,
                lambda1,
                lambda2,
                max_p,
                randomized,
                ecn,
                quantum,
                default_weight,
                classes,
            } => Box::new(Sfed::new(
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
            )),
            _ => unreachable!("not a fair-queueing spec"),
        }
    }

    /// Seed 000's DRR family and the weighted schedulers of its chapter 7
    /// (their parameters hold vectors, so they are built from a borrowed
    /// spec).
    fn build_per_flow_queueing<P: Packet + Send + 'static>(
        &self,
        seed: u64,
    ) -> Box<dyn QueueDiscipline<P> + Send> {
        match self {
            QdiscSpec::Drr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                drop_from,
            } => Box::new(DrrLqd::new(
                *limit,
                *quantum,
                queue_map(*queues, *mapping, bloom, seed),
                *drop_from,
                seed,
            )),
            QdiscSpec::Tdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                drop_from,
                weight,
                estimator,
            } => Box::new(Tdrr::new(
                *limit,
                *quantum,
                queue_map(*queues, *mapping, bloom, seed),
                *drop_from,
                *weight,
                *estimator,
            )),
            QdiscSpec::Qsdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
            } => Box::new(Qsdrr::new(
                *limit,
                *quantum,
                queue_map(*queues, *mapping, bloom, seed),
                seed,
            )),
            QdiscSpec::Dtdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                alpha,
            } => Box::new(Dtdrr::new(
                *limit,
                *quantum,
                queue_map(*queues, *mapping, bloom, seed),
                *alpha,
            )),
            QdiscSpec::Dsdrr {
                limit,
                quantum,
                queues,
                mapping,
                bloom,
                alpha,
                period,
                w_init,
                w_max,
                over_w,
            } => Box::new(Dsdrr::new(
                *limit,
                *quantum,
                queue_map(*queues, *mapping, bloom, seed),
                DsdrrParams {
                    alpha: *alpha,
                    period: *period,
                    w_init: *w_init,
                    w_max: *w_max,
                    over_w: *over_w,
                },
            )),
            QdiscSpec::Wdrr {
                limit,
                quantum,
                weights: w,
                default_weight,
            } => Box::new(Wdrr::new(*limit, *quantum, weights(w, *default_weight))),
            QdiscSpec::Scfq {
                limit,
                weights: w,
                default_weight,
            } => Box::new(Scfq::new(*limit, weights(w, *default_weight))),
            QdiscSpec::Wf2qPlus {
                limit,
                weights: w,
                default_weight,
            } => Box::new(Wf2qPlus::new(*limit, weights(w, *default_weight))),
            _ => unreachable!("not a per-flow queueing spec"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn spec(json: &str) -> QdiscSpec {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    fn field(json: &str) -> &'static str {
        spec(json).validate().expect_err(json).field
    }

    /// A discipline that says it drops nothing on dequeue (so a simulator
    /// may run its departures late) drops nothing there, even overloaded:
    /// a burst of 20 flows far beyond its buffer, then drained slowly.
    #[test]
    fn no_drop_on_dequeue_unless_said() {
        for kind in KINDS {
            let small = format!(r#"{{"kind": "{kind}", "limit": {{"packets": 30}}}}"#);
            let plain = format!(r#"{{"kind": "{kind}"}}"#);
            let s: QdiscSpec = serde_json::from_str(&small).unwrap_or_else(|_| spec(&plain));
            assert_eq!(s.kind(), kind);
            let mut q = s.build::<TestPacket>(1);
            let mut verdicts = crate::Verdicts::new();
            let mut dropped_on_dequeue = 0;
            let mut now = 0;
            for round in 0..50u64 {
                for flow in 0..20 {
                    now += 1_000;
                    q.enqueue(TestPacket::new(flow, round, 1000), now, &mut verdicts);
                    verdicts.drain(|_| {});
                }
                // Far slower than the arrivals: the queue stays long, and
                // packets wait long (CoDel's target is 5 ms).
                for _ in 0..5 {
                    now += 20_000_000;
                    q.dequeue(now, &mut verdicts);
                    dropped_on_dequeue += verdicts.dropped().len();
                    verdicts.drain(|_| {});
                }
            }
            assert!(
                q.drops_on_dequeue() || dropped_on_dequeue == 0,
                "{kind} dropped {dropped_on_dequeue} on dequeue but says it does not"
            );
            if kind == "codel" || kind == "fq_codel" {
                assert!(dropped_on_dequeue > 0, "{kind} should drop on dequeue here");
            }
        }
    }

    #[test]
    fn every_kind_builds_from_its_defaults() {
        for kind in [
            "red",
            "ared",
            "fred",
            "choke",
            "codel",
            "fq_codel",
            "pie",
            "red_linux",
            "cbt",
            "dcbt",
            "chips",
        ] {
            let s = spec(&format!(r#"{{"kind": "{kind}"}}"#));
            assert_eq!(s.kind(), kind);
            s.validate().unwrap_or_else(|e| panic!("{kind}: {e}"));
            let q = s.build::<TestPacket>(1);
            assert_eq!(q.name(), kind);
        }
    }

    #[test]
    fn impossible_parameters_name_their_field() {
        assert_eq!(
            field(r#"{"kind": "red", "min_th": 20, "max_th": 10}"#),
            "min_th"
        );
        assert_eq!(field(r#"{"kind": "red", "max_p": 1.5}"#), "max_p");
        assert_eq!(field(r#"{"kind": "red", "w_q": 0}"#), "w_q");
        assert_eq!(
            field(r#"{"kind": "red", "limit": {"packets": 0}}"#),
            "limit"
        );
        assert_eq!(
            field(r#"{"kind": "ared", "min_th": 30, "max_th": 20}"#),
            "min_th"
        );
        assert_eq!(field(r#"{"kind": "ared", "beta": 1.0}"#), "beta");
        assert_eq!(field(r#"{"kind": "fred", "max_p": -0.1}"#), "max_p");
        assert_eq!(
            field(r#"{"kind": "choke", "min_th": 300, "max_th": 200}"#),
            "min_th"
        );
        assert_eq!(field(r#"{"kind": "codel", "interval": 0}"#), "interval");
        assert_eq!(field(r#"{"kind": "fq_codel", "flows": 0}"#), "flows");
        assert_eq!(field(r#"{"kind": "fq_codel", "quantum": 0}"#), "quantum");
        assert_eq!(
            field(r#"{"kind": "pie", "mark_ecn_threshold": 2}"#),
            "mark_ecn_threshold"
        );
        assert_eq!(
            field(r#"{"kind": "pie", "link_rate_bps": 0}"#),
            "link_rate_bps"
        );
        assert_eq!(
            field(r#"{"kind": "red_linux", "min_th": 15000, "max_th": 5000}"#),
            "min_th"
        );
        // tc cannot find Wlog: burst + 1 - min/avpkt < 1.
        assert_eq!(field(r#"{"kind": "red_linux", "burst": 2}"#), "burst");
        // nor Plog for a probability below (max - min)/2^31.
        assert_eq!(field(r#"{"kind": "cbt", "max_p": 1e-9}"#), "max_p");
        assert_eq!(
            field(r#"{"kind": "dcbt", "gc_interval": 0}"#),
            "gc_interval"
        );
        assert_eq!(
            field(r#"{"kind": "chips", "chips_ratio": 1.5}"#),
            "chips_ratio"
        );
    }

    #[test]
    fn unknown_fields_are_refused_and_link_rate_is_filled_once() {
        assert!(serde_json::from_str::<QdiscSpec>(r#"{"kind": "codel", "tagret": 5}"#).is_err());
        let mut s = spec(r#"{"kind": "pie"}"#);
        s.fill_link_rate(100_000_000);
        let QdiscSpec::Pie { link_rate_bps, .. } = s else {
            unreachable!()
        };
        assert_eq!(link_rate_bps, Some(100_000_000));
        let mut s = spec(r#"{"kind": "red", "link_rate_bps": 1000000}"#);
        s.fill_link_rate(100_000_000);
        let QdiscSpec::Red { link_rate_bps, .. } = s else {
            unreachable!()
        };
        assert_eq!(link_rate_bps, Some(1_000_000));
    }
}

#[cfg(test)]
mod fair_queueing_tests {
    use super::*;

    fn parse(json: &str) -> QdiscSpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn defaults_come_from_the_sources() {
        match parse(r#"{"kind":"mqfq"}"#) {
            QdiscSpec::Mqfq {
                limit,
                queues,
                hashes,
                quantum,
                reorder,
                ..
            } => {
                assert_eq!(
                    (limit, queues, hashes, quantum, reorder),
                    (Limit::Packets(40), 16, 2, 1500, MqfqReorder::None)
                );
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
            (
                r#"{"kind":"blue","limit":{"packets":10},"increment":1.5}"#,
                "increment",
            ),
            (r#"{"kind":"sfb","bins":0}"#, "bins"),
            (
                r#"{"kind":"sfb","rehash_interval":10,"warmup_time":20}"#,
                "warmup_time",
            ),
            (r#"{"kind":"sfb","decrement":-0.1}"#, "decrement"),
            (
                r#"{"kind":"sfed","limit":{"packets":24},"lambda2":0.6}"#,
                "lambda2",
            ),
            (
                r#"{"kind":"sfed","limit":{"packets":24},"max_p":2}"#,
                "max_p",
            ),
            (
                r#"{"kind":"sfed","limit":{"packets":24},"classes":[{"name":"a","parent":"x","flows":[1]}]}"#,
                "classes.parent",
            ),
        ];
        for (json, field) in bad {
            assert_eq!(parse(json).validate().unwrap_err().field, field, "{json}");
        }
        assert!(parse(r#"{"kind":"mqfq","reorder":"cells","cell":48}"#)
            .validate()
            .is_ok());
        let tree = r#"{"kind":"sfed","limit":{"packets":190},"randomized":true,"classes":[
            {"name":"cbr","weight":3},{"name":"tcp","weight":9},
            {"name":"c0","parent":"cbr","weight":2,"flows":[0]},{"name":"c1","parent":"cbr","weight":1,"flows":[1]},
            {"name":"web","parent":"tcp","weight":9,"traffic":["tcp"],"per_flow":true}]}"#;
        assert!(parse(tree).validate().is_ok());
    }
}

#[cfg(test)]
mod per_flow_queueing_tests {
    use super::*;

    fn parse(json: &str) -> QdiscSpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn defaults_come_from_the_paper() {
        match parse(r#"{"kind": "dsdrr", "limit": {"packets": 1000}}"#) {
            QdiscSpec::Dsdrr {
                quantum,
                queues,
                alpha,
                period,
                w_init,
                w_max,
                over_w,
                ..
            } => {
                assert_eq!(
                    (quantum, queues, alpha, period, w_init, w_max),
                    (1500, None, 0.1, 1_000_000_000, 0.1, 0.5)
                );
                assert_eq!(over_w, OverW::Accept);
            }
            other => panic!("{other:?}"),
        }
        match parse(r#"{"kind": "tdrr", "limit": {"packets": 100}}"#) {
            QdiscSpec::Tdrr {
                weight,
                estimator,
                drop_from,
                ..
            } => {
                assert_eq!(
                    (weight, estimator, drop_from),
                    (0.03125, RateEstimator::Departure, DropEnd::Front)
                );
            }
            other => panic!("{other:?}"),
        }
        match parse(
            r#"{"kind": "qsdrr", "limit": {"packets": 100}, "queues": 10, "mapping": "bloom"}"#,
        ) {
            QdiscSpec::Qsdrr { bloom, .. } => assert_eq!(bloom, BloomSpec::default()),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse(r#"{"kind": "wf2q_plus", "limit": {"packets": 10}}"#),
            QdiscSpec::Wf2qPlus { .. }
        ));
        assert!(
            matches!(parse(r#"{"kind": "dtdrr", "limit": {"packets": 10}}"#), QdiscSpec::Dtdrr { alpha, .. } if alpha == 2.0)
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(serde_json::from_str::<QdiscSpec>(
            r#"{"kind": "qsdrr", "limit": {"packets": 1}, "alpha": 2}"#
        )
        .is_err());
        assert!(serde_json::from_str::<QdiscSpec>(
            r#"{"kind": "qsdrr", "limit": {"packets": 1}, "queues": 4, "mapping": "bloom", "bloom": {"bitz": 3}}"#
        )
        .is_err());
    }

    #[test]
    fn impossible_parameters_name_their_field() {
        let field = |json: &str| parse(json).validate().unwrap_err().field;
        assert_eq!(
            field(r#"{"kind": "qsdrr", "limit": {"packets": 100}, "queues": 0}"#),
            "queues"
        );
        assert_eq!(
            field(r#"{"kind": "drr", "limit": {"packets": 0}}"#),
            "limit"
        );
        assert_eq!(
            field(r#"{"kind": "drr", "limit": {"packets": 9}, "quantum": 0}"#),
            "quantum"
        );
        assert_eq!(
            field(r#"{"kind": "drr", "limit": {"packets": 9}, "mapping": "hash"}"#),
            "mapping"
        );
        assert_eq!(
            field(r#"{"kind": "tdrr", "limit": {"packets": 9}, "weight": 1.5}"#),
            "weight"
        );
        assert_eq!(
            field(r#"{"kind": "dtdrr", "limit": {"packets": 9}, "alpha": -1}"#),
            "alpha"
        );
        assert_eq!(
            field(r#"{"kind": "dsdrr", "limit": {"packets": 9}, "w_init": 0.6}"#),
            "w_init"
        );
        assert_eq!(
            field(r#"{"kind": "dsdrr", "limit": {"packets": 9}, "w_max": 0}"#),
            "w_max"
        );
        assert_eq!(
            field(r#"{"kind": "dsdrr", "limit": {"packets": 9}, "period": 0}"#),
            "period"
        );
        assert_eq!(
            field(
                r#"{"kind": "qsdrr", "limit": {"packets": 9}, "queues": 2, "mapping": "bloom", "bloom": {"delta": 300000000}}"#
            ),
            "bloom.delta"
        );
        assert_eq!(
            field(
                r#"{"kind": "scfq", "limit": {"packets": 9}, "weights": [{"flow": 3, "weight": 0}]}"#
            ),
            "weights"
        );
        assert!(parse(
            r#"{"kind": "wdrr", "limit": {"bytes": 90000}, "weights": [{"flow": 3, "weight": 10}]}"#
        )
        .validate()
        .is_ok());
    }
}
