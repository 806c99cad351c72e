//! Which queue a packet joins, for the multi-queue disciplines of seed 000.
//!
//! - One queue per flow (the report's default: "multi-queue policies use one
//!   queue per flow", digest 000, section 4.0): a queue is allocated when a
//!   flow is first seen and kept for the run, so per-queue history (TDRR's
//!   throughput) stays with its flow.
//! - Many flows per queue ("buckets", section 2.10): `queues = N` queues,
//!   flows spread by a seeded hash ([`HashFamily`]), or by `flow_key mod N`
//!   (the report's evenly-distributed best case, [REC] "flow j goes to
//!   bucket j mod nb", exact when the flow keys are 0, 1, 2, ...), or by
//!   the Bloom-filter distributor of chapter 5 ([`BloomBalancer`]).
//!
//! A flow never changes queue while it has packets queued (hash and modulo
//! never move a flow; the Bloom distributor moves only idle filters), so the
//! disciplines built on this map keep every flow's order.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use crate::blocks::{BloomBalancer, BloomParams, HashFamily};
use crate::params::{params, refuse, SpecError};
use crate::rng::splitmix64;
use crate::Time;

/// A fast hasher for flow keys (SplitMix64 finaliser).
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).rotate_left(5);
        }
        let mut s = self.0;
        self.0 = splitmix64(&mut s);
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let mut s = x ^ self.0;
        self.0 = splitmix64(&mut s);
    }
}

/// A map keyed by flow key with the fast hasher.
pub type FlowMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// Queue numbers of the flows seen so far, in order of first sight. Small
/// keys (a simulator's flow ids: 0, 1, 2, ...) index a table directly; other
/// keys (hashes of real packets' 5-tuples) go through a hash map.
#[derive(Clone, Debug, Default)]
pub struct FlowIds {
    dense: Vec<u32>,
    sparse: FlowMap<u32>,
    count: u32,
}

impl FlowIds {
    /// Keys below this index the table (4 bytes each, grown as keys come).
    const DENSE: u64 = 1 << 22;
    const UNSEEN: u32 = u32::MAX;

    /// The queue of flow `key`, a new one (the next number) if it is new.
    #[inline]
    pub fn id(&mut self, key: u64) -> u32 {
        // Nearly always: a small key seen before, one load.
        if key < Self::DENSE {
            if let Some(&id) = self.dense.get(key as usize) {
                if id != Self::UNSEEN {
                    return id;
                }
            }
        }
        self.first_sight_or_sparse(key)
    }

    #[inline(never)]
    fn first_sight_or_sparse(&mut self, key: u64) -> u32 {
        let next = self.count;
        let id = if key < Self::DENSE {
            let i = key as usize;
            if i >= self.dense.len() {
                self.grow(i);
            }
            let slot = &mut self.dense[i];
            if *slot == Self::UNSEEN {
                *slot = next;
            }
            *slot
        } else {
            *self.sparse.entry(key).or_insert(next)
        };
        self.count += (id == next) as u32;
        id
    }

    /// Make room in the table for key `i` (rarely: the table doubles).
    #[cold]
    fn grow(&mut self, i: usize) {
        self.dense.resize((i + 1).next_power_of_two(), Self::UNSEEN);
    }

    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// How flows are spread over a given number of queues (digest 000, sections
/// 2.10 and 2.11).
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

/// Refuse an impossible queue map: `queues` and `mapping` of a discipline.
pub fn check_map(
    queues: Option<u32>,
    mapping: Option<Mapping>,
    bloom: &BloomParams,
) -> Result<(), SpecError> {
    match queues {
        Some(0) => return refuse("queues", "must be at least 1"),
        None if mapping.is_some() => {
            return refuse(
                "mapping",
                "needs `queues` (without it every flow has its own queue)",
            )
        }
        _ => {}
    }
    if mapping == Some(Mapping::Bloom) {
        bloom.validate()?;
    }
    Ok(())
}

#[derive(Clone, Debug)]
pub enum QueueMap {
    /// One queue per flow, allocated on first sight.
    PerFlow(FlowIds),
    /// `count` queues, flows hashed.
    Hash { hash: HashFamily, count: usize },
    /// `count` queues, `flow_key mod count`.
    Modulo { count: usize },
    /// Bloom-filter distribution over a fixed number of queues.
    Bloom(Box<BloomBalancer>),
}

impl QueueMap {
    pub fn per_flow() -> Self {
        QueueMap::PerFlow(FlowIds::default())
    }

    /// One queue per flow without `queues`; else `queues` queues, flows
    /// spread by `mapping` (a hash if unset).
    pub fn new(
        queues: Option<u32>,
        mapping: Option<Mapping>,
        bloom: &BloomParams,
        seed: u64,
    ) -> Self {
        let Some(n) = queues else {
            return QueueMap::per_flow();
        };
        let n = n as usize;
        match mapping.unwrap_or_default() {
            Mapping::Hash => QueueMap::hashed(n, seed),
            Mapping::Modulo => QueueMap::Modulo { count: n },
            Mapping::Bloom => QueueMap::Bloom(Box::new(BloomBalancer::new(bloom.config(n), seed))),
        }
    }

    pub fn hashed(count: usize, seed: u64) -> Self {
        QueueMap::Hash {
            hash: HashFamily::new(1, seed),
            count,
        }
    }

    /// Queues that exist now (per-flow: the flows seen so far).
    pub fn queue_count(&self) -> usize {
        match self {
            QueueMap::PerFlow(m) => m.len(),
            QueueMap::Hash { count, .. } | QueueMap::Modulo { count } => *count,
            QueueMap::Bloom(b) => b.queues(),
        }
    }

    /// The queue of an arriving packet of flow `key`. Per flow, a new flow
    /// gets the next queue number, `queue_count()` before the call.
    #[inline]
    pub fn classify(&mut self, key: u64) -> usize {
        match self {
            QueueMap::PerFlow(ids) => ids.id(key) as usize,
            QueueMap::Modulo { count } => (key % *count as u64) as usize,
            _ => self.classify_hashed(key),
        }
    }

    /// `classify` for the maps whose code is longer, apart so that the
    /// short ones inline into every packet's enqueue.
    #[inline(never)]
    fn classify_hashed(&mut self, key: u64) -> usize {
        match self {
            QueueMap::Hash { hash, count } => hash.bucket(0, key, *count),
            QueueMap::Bloom(b) => b.classify(key),
            QueueMap::PerFlow(_) | QueueMap::Modulo { .. } => unreachable!("classified inline"),
        }
    }

    /// A packet of flow `key` was written into its queue.
    #[inline]
    pub fn enqueued(&mut self, key: u64) {
        if let QueueMap::Bloom(b) = self {
            b.enqueued(key);
        }
    }

    /// A packet of flow `key` left its queue (dequeued, or discarded).
    #[inline]
    pub fn left(&mut self, key: u64, dequeued: bool) {
        if let QueueMap::Bloom(b) = self {
            b.left(key, dequeued);
        }
    }

    /// The queue flow `key` goes to now, without counting it; `None` with
    /// one queue per flow (a flow's queue is made on its first packet).
    pub fn queue_of(&self, key: u64) -> Option<usize> {
        match self {
            QueueMap::PerFlow(_) => None,
            QueueMap::Hash { hash, count } => Some(hash.bucket(0, key, *count)),
            QueueMap::Modulo { count } => Some((key % *count as u64) as usize),
            QueueMap::Bloom(b) => Some(b.queue_of_flow(key)),
        }
    }

    pub fn next_wakeup(&self) -> Option<Time> {
        match self {
            QueueMap::Bloom(b) => b.next_wakeup(),
            _ => None,
        }
    }

    #[inline]
    pub fn wakeup(&mut self, now: Time) {
        if let QueueMap::Bloom(b) = self {
            b.wakeup(now);
        }
    }
}

params! {
    /// A flow's weight in a weighted scheduler.
    #[derive(Copy, PartialEq)]
    pub struct FlowWeight {
        required {
            /// The flow's key.
            pub flow: u64 [Number],
            /// Its weight, any positive number (chapter 7 reserves rates
            /// such as 95/9 Mb/s: weights need not be integers).
            pub weight: f64 [Number],
        }
    }
}

params! {
    /// The weights of a weighted scheduler (WDRR, SCFQ, WF2Q+; seed 000,
    /// chapter 7).
    #[derive(PartialEq)]
    pub struct WeightParams {
        /// Flows weighted otherwise than `default_weight` (chapter 7: nine
        /// flows of weight 1 and one of weight 10).
        pub weights: Vec<FlowWeight> [Tables] = Vec::new(),
        /// The weight of every flow not listed: 1.
        pub default_weight: f64 [Number] = 1.0,
    }
}

impl WeightParams {
    /// Refuse a weight that is not a positive finite number.
    pub fn validate(&self) -> Result<(), SpecError> {
        let usable = |w: f64| w.is_finite() && w > 0.0;
        if !usable(self.default_weight) {
            return refuse("default_weight", "must be a positive number");
        }
        if let Some(w) = self.weights.iter().find(|w| !usable(w.weight)) {
            return refuse(
                "weights",
                format!(
                    "flow {} has weight {} (weights are positive numbers)",
                    w.flow, w.weight
                ),
            );
        }
        Ok(())
    }

    /// The weights as the schedulers look them up.
    pub fn table(&self) -> FlowWeights {
        FlowWeights::new(
            self.weights.iter().map(|w| (w.flow, w.weight)),
            self.default_weight,
        )
    }
}

/// Per-flow weights of the weighted schedulers (WDRR, SCFQ, WF2Q+): the
/// weight of each listed flow key, and a default for the others.
#[derive(Clone, Debug)]
pub struct FlowWeights {
    map: FlowMap<f64>,
    default: f64,
}

impl FlowWeights {
    pub fn new(pairs: impl IntoIterator<Item = (u64, f64)>, default: f64) -> Self {
        Self {
            map: pairs.into_iter().collect(),
            default,
        }
    }

    #[inline]
    pub fn get(&self, key: u64) -> f64 {
        self.map.get(&key).copied().unwrap_or(self.default)
    }
}

impl Default for FlowWeights {
    fn default() -> Self {
        Self::new([], 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_of_tells_where_classify_puts_a_flow() {
        let bloom = BloomParams::default();
        for mapping in [Mapping::Hash, Mapping::Modulo, Mapping::Bloom] {
            let mut map = QueueMap::new(Some(7), Some(mapping), &bloom, 3);
            for key in [0, 5, 12, 1 << 40, 99] {
                let told = map.queue_of(key);
                assert_eq!(told, Some(map.classify(key)), "{mapping:?} key {key}");
            }
        }
        assert_eq!(QueueMap::per_flow().queue_of(4), None);
    }

    #[test]
    fn flows_get_queues_in_order_of_first_sight_whatever_their_keys() {
        let mut ids = FlowIds::default();
        let keys = [
            7,
            1 << 40,
            0,
            7,
            FlowIds::DENSE,
            3,
            1 << 40,
            FlowIds::DENSE - 1,
            0,
        ];
        let got: Vec<u32> = keys.iter().map(|&k| ids.id(k)).collect();
        assert_eq!(got, [0, 1, 2, 0, 3, 4, 1, 5, 2]);
        assert_eq!(ids.len(), 6);
    }
}
