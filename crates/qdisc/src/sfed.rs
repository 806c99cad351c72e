//! SFED, Selective Fair Early Detection (Kamra, Kapila, Khurana, Yadav,
//! Shorey, Saran and Juneja; seed file `002_1e6a618cb22dc232.txt`, sections
//! III-IV and VI; digest 002 sections 1-3), exact and randomized.
//!
//! One FIFO, and a token bucket per active flow (or aggregate). Tokens come
//! from departures: each departing packet returns its token(s) to a pool σ,
//! which is handed to the buckets. An arriving packet of flow j is dropped
//! with probability f_p(x_j / L_j), where x_j is its bucket's tokens and L_j
//! its height; an accepted packet takes a token. The profile is RED-gentle
//! shaped (section IV-A):
//!
//! ```text
//! f_p(r) = 0                                    r >= λ1
//!          max_p (λ1 - r) / (λ1 - λ2)           λ2 <= r < λ1
//!          max_p + (1 - max_p) (λ2 - r) / λ2    0 < r < λ2
//!          1                                    r <= 0
//! ```
//!
//! The system holds T = α·B tokens (B the buffer, in packets or bytes). A
//! new flow gets a full bucket (σ -= L); a bucket is deleted when it fills
//! (σ += x): the flow is inactive. σ starts at T, so that
//! Σx + σ + Q = T always (digest 002 section 1.5: σ = 0 at start deadlocks).
//!
//! - **Exact** (section IV-A): a new bucket cuts every bucket down to the new
//!   height, O(N); tokens are handed out in round robin from a persistent
//!   cursor while σ ≥ one token; a bucket is full at x ≥ L.
//! - **Randomized** (section IV-B, `randomized = true`): after a departure
//!   β = ⌈|σ| / (Q + 1)⌉ random buckets each get a token (σ > 0) or give one
//!   (σ < 0), stopping once |σ| < 1; a bucket is deleted at x > L (strict,
//!   as printed); excess above a shrunken height is collected lazily when
//!   the flow's next packet arrives. O(1) amortized.
//!
//! Generalizations (section VI, digest section 3): `classes` is a list of
//! weighted classes forming a tree under the root. A class that lists
//! `flows` (flow keys) or `traffic` (tcp, udp_tagged, udp_untagged) is a
//! leaf: an aggregate with one bucket, or, with `per_flow = true`, a node
//! with one bucket per flow (weight `default_weight`). A class named as
//! another's `parent` is an interior node. Flows no class matches get their
//! own bucket under the root with `default_weight`. A bucket's share is the
//! product along its path of weight / (sum of the weights of the active
//! siblings); its height is share·T and its fill rate share·C: weighted
//! round robin over tokens in the exact variant, weight-proportional random
//! choice in the randomized one.
//!
//! Parameters, their defaults and sources: [`SfedParams`]. `limit` is also a
//! hard tail drop, counted as overflow (the paper has none, digest item 7);
//! a marked packet is queued and takes its token; byte mode when `limit` is
//! in bytes (a token is a byte; tokens are handed out `quantum` bytes at a
//! time, so that distribution is not O(bytes)). Per-flow state is one
//! bucket per active flow, found in a hash map keyed by flow: O(1) per
//! packet for the randomized variant, O(N) per bucket creation and per token
//! visit cycle for the exact one.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::blocks::token_buckets::{BucketKey, TokenBuckets, SCALE};
use crate::blocks::CountedFifo;
use crate::params::{nonzero, params, positive, positive_limit, probability, refuse, SpecError};
use crate::rng::Rng;
use crate::spec::QdiscParams;
use crate::{
    Backlog, DropReason, Ecn, Limit, Packet, QueueDiscipline, Time, TrafficClass, Verdicts,
};

/// A traffic class name in a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SfedTraffic {
    Tcp,
    UdpTagged,
    UdpUntagged,
}

impl SfedTraffic {
    fn class(self) -> TrafficClass {
        match self {
            SfedTraffic::Tcp => TrafficClass::Tcp,
            SfedTraffic::UdpTagged => TrafficClass::UdpTagged,
            SfedTraffic::UdpUntagged => TrafficClass::UdpUntagged,
        }
    }
}

params! {
    /// A weighted class of the SFED tree (aggregate, hierarchy node, or a
    /// weighted single flow; section VI).
    #[derive(PartialEq)]
    pub struct SfedClass {
        required {
            /// The class's name, for `parent`.
            pub name: String [Text],
        }
        /// The class this one belongs to; the root if absent. It must be
        /// listed earlier.
        pub parent: Option<String> [Text] = None,
        /// Its weight among its siblings: 1.
        pub weight: f64 [Number] = 1.0,
        /// Flow keys this class takes.
        pub flows: Vec<u64> [Numbers] = Vec::new(),
        /// Traffic classes this class takes (flows listed by key elsewhere
        /// win).
        pub traffic: Vec<SfedTraffic> [Choices] = Vec::new(),
        /// One bucket per flow of the class instead of one for the aggregate.
        pub per_flow: bool [Flag] = false,
    }
}

/// What is wrong with a class list, naming the field.
pub fn check_classes(classes: &[SfedClass]) -> Result<(), (&'static str, String)> {
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut flows: HashMap<u64, &str> = HashMap::new();
    let mut traffic: HashMap<SfedTraffic, &str> = HashMap::new();
    for (i, c) in classes.iter().enumerate() {
        if names.insert(&c.name, i).is_some() {
            return Err((
                "classes.name",
                format!("class {:?} is defined twice", c.name),
            ));
        }
        if !(c.weight > 0.0 && c.weight.is_finite()) {
            return Err((
                "classes.weight",
                format!("class {:?}: weight must be positive", c.name),
            ));
        }
        if let Some(p) = &c.parent {
            match names.get(p.as_str()) {
                None => {
                    return Err((
                        "classes.parent",
                        format!(
                            "class {:?}: parent {p:?} is not a class listed before it",
                            c.name
                        ),
                    ))
                }
                Some(&j) if !classes[j].flows.is_empty() || !classes[j].traffic.is_empty() => {
                    return Err((
                        "classes.parent",
                        format!(
                            "class {:?}: parent {p:?} takes packets itself, so it is a leaf",
                            c.name
                        ),
                    ))
                }
                _ => {}
            }
        }
        for &f in &c.flows {
            if let Some(other) = flows.insert(f, &c.name) {
                return Err((
                    "classes.flows",
                    format!("flow {f} is in classes {other:?} and {:?}", c.name),
                ));
            }
        }
        for &t in &c.traffic {
            if let Some(other) = traffic.insert(t, &c.name) {
                return Err((
                    "classes.traffic",
                    format!("{t:?} traffic is in classes {other:?} and {:?}", c.name),
                ));
            }
        }
        let is_parent = classes
            .iter()
            .any(|d| d.parent.as_deref() == Some(c.name.as_str()));
        let takes = !c.flows.is_empty() || !c.traffic.is_empty();
        if !is_parent && !takes {
            return Err((
                "classes",
                format!(
                    "class {:?} has no children and takes no flows or traffic",
                    c.name
                ),
            ));
        }
        if c.per_flow && !takes {
            return Err((
                "classes.per_flow",
                format!("class {:?}: per_flow needs flows or traffic", c.name),
            ));
        }
    }
    Ok(())
}

params! {
    /// SFED's parameters (Kamra et al.; digest 002 sections 1-3).
    #[derive(PartialEq)]
    pub struct SfedParams {
        required {
            /// The buffer B, packets, or bytes for byte mode; no default. Also
            /// a hard tail drop.
            pub limit: Limit [Buffer],
        }
        /// The bucket space T = alpha B: alpha 1 ("alpha = 1 throughout").
        pub alpha: f64 [Number] = 1.0,
        /// lambda1, the fraction of a bucket below which drops begin: 1/2.
        pub lambda1: f64 [Number] = 0.5,
        /// lambda2, the fraction below which every arrival drops: 1/4.
        pub lambda2: f64 [Number] = 0.25,
        /// The drop probability at lambda2: 0.02 ("0.02 for RED, FRED and
        /// SFED").
        pub max_p: f64 [Number] = 0.02,
        /// Randomized SFED (section IV-B) instead of exact (IV-A).
        pub randomized: bool [Flag] = false,
        /// Mark ECN-capable packets instead of dropping them (the paper:
        /// "dropped or marked"; its experiments drop).
        pub ecn: bool [Flag] = false,
        /// Bytes handed out per token step in byte mode: 1500.
        pub quantum: u32 [Bytes] = 1500,
        /// The weight of flows without a class and of the flows of a
        /// `per_flow` class: 1.
        pub default_weight: f64 [Number] = 1.0,
        /// The weighted classes (section VI).
        pub classes: Vec<SfedClass> [Tables] = Vec::new(),
    }
}

impl SfedParams {
    /// The paper's parameters with buffer `limit`, exact or randomized.
    pub fn paper(limit: Limit, randomized: bool) -> Self {
        Self {
            randomized,
            ..Self::new(limit)
        }
    }
}

impl QdiscParams for SfedParams {
    const SUMMARY: &'static str =
        "selective fair early detection: token buckets per flow (exact or randomized)";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)?;
        positive("alpha", self.alpha)?;
        probability("lambda1", self.lambda1)?;
        probability("lambda2", self.lambda2)?;
        if !(self.lambda2 > 0.0 && self.lambda2 < self.lambda1) {
            return refuse(
                "lambda2",
                format!("must be in (0, lambda1 = {})", self.lambda1),
            );
        }
        probability("max_p", self.max_p)?;
        nonzero("quantum", self.quantum)?;
        positive("default_weight", self.default_weight)?;
        check_classes(&self.classes).or_else(|(field, message)| refuse(field, message))
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Sfed::new(self.clone(), seed))
    }
}

/// Where a class sends its packets.
#[derive(Clone, Copy, Debug)]
struct Route {
    class: u32,
    /// Tree node the bucket hangs from.
    parent: u32,
    weight: f64,
    per_flow: bool,
}

pub struct Sfed<P> {
    queue: CountedFifo<P>,
    limit: Limit,
    byte_mode: bool,
    /// T, in fixed-point units.
    total: i64,
    sigma: i64,
    /// Tokens per distribution step (one token; `quantum` bytes in byte mode).
    unit: i64,
    lambda1: f64,
    lambda2: f64,
    max_p: f64,
    randomized: bool,
    ecn: bool,
    default_weight: f64,
    buckets: TokenBuckets,
    by_flow: HashMap<u64, Route>,
    by_traffic: [Option<Route>; TrafficClass::COUNT],
    /// Exact variant: the largest share, recomputed after creation/deletion.
    max_share: Option<f64>,
    rng: Rng,
    /// Randomized variant: Σβ, number of distributions, largest β.
    pub beta_sum: u64,
    pub beta_count: u64,
    pub beta_max: u64,
}

impl<P: Packet> Sfed<P> {
    /// Panics on an invalid class list ([`check_classes`] first).
    pub fn new(c: SfedParams, seed: u64) -> Self {
        if let Err((field, msg)) = check_classes(&c.classes) {
            panic!("sfed {field}: {msg}");
        }
        let (b, byte_mode) = match c.limit {
            Limit::Packets(n) => (n, false),
            Limit::Bytes(n) => (n, true),
        };
        // Tree nodes: interior classes and per-flow classes.
        let mut node_of: Vec<Option<u32>> = vec![None; c.classes.len()];
        let mut nodes = Vec::new();
        let index: HashMap<&str, usize> = c
            .classes
            .iter()
            .enumerate()
            .map(|(i, k)| (k.name.as_str(), i))
            .collect();
        let parent_node = |node_of: &Vec<Option<u32>>, k: &SfedClass| {
            k.parent.as_ref().map_or(0, |p| {
                node_of[index[p.as_str()]].expect("parents are nodes")
            })
        };
        for (i, k) in c.classes.iter().enumerate() {
            let is_parent = c
                .classes
                .iter()
                .any(|d| d.parent.as_deref() == Some(k.name.as_str()));
            if is_parent || k.per_flow {
                nodes.push((parent_node(&node_of, k), k.weight));
                node_of[i] = Some(nodes.len() as u32);
            }
        }
        let mut by_flow = HashMap::new();
        let mut by_traffic = [None; TrafficClass::COUNT];
        for (i, k) in c.classes.iter().enumerate() {
            let route = if k.per_flow {
                Route {
                    class: i as u32,
                    parent: node_of[i].unwrap(),
                    weight: c.default_weight,
                    per_flow: true,
                }
            } else {
                Route {
                    class: i as u32,
                    parent: parent_node(&node_of, k),
                    weight: k.weight,
                    per_flow: false,
                }
            };
            for &f in &k.flows {
                by_flow.insert(f, route);
            }
            for &t in &k.traffic {
                by_traffic[t.class().index()] = Some(route);
            }
        }
        let total = (c.alpha * b as f64 * SCALE as f64).round() as i64;
        Self {
            queue: CountedFifo::default(),
            limit: c.limit,
            byte_mode,
            total,
            // σ starts at T (digest 002, section 1.5).
            sigma: total,
            unit: if byte_mode {
                c.quantum as i64 * SCALE
            } else {
                SCALE
            },
            lambda1: c.lambda1,
            lambda2: c.lambda2,
            max_p: c.max_p,
            randomized: c.randomized,
            ecn: c.ecn,
            default_weight: c.default_weight,
            buckets: TokenBuckets::new(&nodes),
            by_flow,
            by_traffic,
            max_share: None,
            rng: Rng::stream(seed, 0x5fed),
            beta_sum: 0,
            beta_count: 0,
            beta_max: 0,
        }
    }

    /// The drop profile f_p at r = x / L.
    pub fn profile(&self, r: f64) -> f64 {
        let (l1, l2, max_p) = (self.lambda1, self.lambda2, self.max_p);
        if r >= l1 {
            0.0
        } else if r >= l2 {
            max_p * (l1 - r) / (l1 - l2)
        } else if r > 0.0 {
            max_p + (1.0 - max_p) * (l2 - r) / l2
        } else {
            1.0
        }
    }

    #[inline]
    fn cost(&self, p: &P) -> i64 {
        if self.byte_mode {
            p.size() as i64 * SCALE
        } else {
            SCALE
        }
    }

    fn classify(&self, p: &P) -> (BucketKey, u32, f64) {
        let key = p.flow_key();
        match self
            .by_flow
            .get(&key)
            .copied()
            .or(self.by_traffic[p.class().index()])
        {
            Some(r) if r.per_flow => (BucketKey::ClassFlow(r.class, key), r.parent, r.weight),
            Some(r) => (BucketKey::Class(r.class), r.parent, r.weight),
            None => (BucketKey::Flow(key), 0, self.default_weight),
        }
    }

    fn create(&mut self, key: BucketKey, parent: u32, weight: f64) -> u32 {
        let slot = self.buckets.create(key, parent, weight);
        let h = self.buckets.height(slot, self.total);
        self.buckets.set_tokens(slot, h);
        self.sigma -= h;
        self.max_share = None;
        if !self.randomized {
            // Cut the others down to their new heights (the new bucket is
            // exactly at its own).
            self.sigma += self.buckets.truncate_all(self.total);
        }
        slot
    }

    fn delete(&mut self, slot: u32) {
        self.sigma += self.buckets.remove(slot);
        self.max_share = None;
    }

    fn distribute_exact(&mut self) {
        while self.sigma >= self.unit {
            let Some(j) = self.buckets.cursor() else {
                return;
            };
            let max = match self.max_share {
                Some(m) => m,
                None => *self.max_share.insert(self.buckets.max_share()),
            };
            let ratio = self.buckets.share(j) / max;
            if self.buckets.take_credit(j, ratio) {
                let x = self.buckets.add_tokens(j, self.unit);
                self.sigma -= self.unit;
                if x >= self.buckets.height(j, self.total) {
                    self.delete(j);
                }
            } else {
                self.buckets.advance();
            }
        }
    }

    fn distribute_randomized(&mut self) {
        if self.buckets.is_empty() {
            return;
        }
        let per = self.unit as u128 * (self.queue.len() as u128 + 1);
        let beta = (self.sigma.unsigned_abs() as u128).div_ceil(per) as u64;
        self.beta_sum += beta;
        self.beta_count += 1;
        self.beta_max = self.beta_max.max(beta);
        for _ in 0..beta {
            if self.sigma.abs() < self.unit {
                break;
            }
            let Some(j) = self.buckets.pick(&mut self.rng) else {
                break;
            };
            let step = if self.sigma > 0 {
                self.unit
            } else {
                -self.unit
            };
            let x = self.buckets.add_tokens(j, step);
            self.sigma -= step;
            if x > self.buckets.height(j, self.total) {
                self.delete(j);
            }
        }
    }

    /// Σx + σ + Q - T: zero at all times (digest 002, section 1.5). O(N).
    pub fn token_imbalance(&self) -> i64 {
        let queued: i64 = self.queue.iter().map(|p| self.cost(p)).sum();
        self.buckets.sum_tokens() + self.sigma + queued - self.total
    }

    /// Active buckets.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// σ and a flow's bucket (tokens, height), in tokens.
    pub fn state_of(&self, flow: u64) -> (f64, Option<(f64, f64)>) {
        let s = SCALE as f64;
        let b = self.buckets.get(BucketKey::Flow(flow));
        (
            self.sigma as f64 / s,
            b.map(|b| {
                (
                    self.buckets.tokens(b) as f64 / s,
                    self.buckets.height(b, self.total) as f64 / s,
                )
            }),
        )
    }
}

impl<P: Packet> QueueDiscipline<P> for Sfed<P> {
    fn name(&self) -> &'static str {
        "sfed"
    }

    fn enqueue(&mut self, mut packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        let (key, parent, weight) = self.classify(&packet);
        let slot = match self.buckets.get(key) {
            Some(s) => s,
            None => self.create(key, parent, weight),
        };
        let height = self.buckets.height(slot, self.total);
        let mut x = self.buckets.tokens(slot);
        if self.randomized && x > height {
            // Collect the excess left when the height shrank.
            self.sigma += x - height;
            x = height;
            self.buckets.set_tokens(slot, x);
        }
        if !self.limit.admits(self.backlog(), packet.size()) {
            verdicts.refuse(packet, DropReason::Overflow);
            return;
        }
        let r = if height > 0 {
            x as f64 / height as f64
        } else {
            0.0
        };
        let p = self.profile(r);
        if p >= 1.0 || (p > 0.0 && self.rng.chance(p)) {
            match packet.ecn() {
                // Marking cannot stand in for a drop from an empty bucket.
                Ecn::Ect if self.ecn && p < 1.0 => {
                    packet.mark_ce();
                    verdicts.mark(packet.size());
                }
                Ecn::Ce if self.ecn && p < 1.0 => {}
                _ => {
                    verdicts.refuse(packet, DropReason::Early);
                    return;
                }
            }
        }
        self.buckets.add_tokens(slot, -self.cost(&packet));
        self.queue.push_back(packet);
    }

    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front()?;
        self.sigma += self.cost(&packet);
        if self.randomized {
            self.distribute_randomized();
        } else {
            self.distribute_exact();
        }
        Some(packet)
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn sfed(b: u64, randomized: bool) -> Sfed<TestPacket> {
        Sfed::new(SfedParams::paper(Limit::Packets(b), randomized), 1)
    }

    fn tokens(s: &Sfed<TestPacket>, flow: u64) -> Option<(f64, f64)> {
        s.state_of(flow).1
    }

    #[test]
    fn drop_profile_break_points() {
        let s = sfed(24, false);
        assert_eq!(s.profile(1.0), 0.0);
        assert_eq!(s.profile(0.5), 0.0);
        assert!((s.profile(0.375) - 0.01).abs() < 1e-12);
        assert!((s.profile(0.25) - 0.02).abs() < 1e-12);
        assert!((s.profile(0.125) - 0.51).abs() < 1e-12);
        assert_eq!(s.profile(0.0), 1.0);
        assert_eq!(s.profile(-0.5), 1.0);
        // Continuous at λ2 from below.
        assert!((s.profile(0.25 - 1e-12) - 0.02).abs() < 1e-9);
    }

    #[test]
    fn exact_trace_by_hand() {
        // B = T = 4. Flow 1 arrives: bucket of 4, σ = 0; one token taken.
        let mut s = sfed(4, false);
        let mut v = Verdicts::new();
        s.enqueue(TestPacket::new(1, 0, 100), 0, &mut v);
        assert_eq!(s.state_of(1), (0.0, Some((3.0, 4.0))));
        // Flow 2 arrives: heights 2; flow 2 gets 2 (σ = -2), flow 1 is cut
        // from 3 to 2 (σ = -1); flow 2 takes a token.
        s.enqueue(TestPacket::new(2, 0, 100), 0, &mut v);
        assert_eq!(s.state_of(1), (-1.0, Some((2.0, 2.0))));
        assert_eq!(tokens(&s, 2), Some((1.0, 2.0)));
        // A departure: σ = 0, nothing to hand out.
        s.dequeue(0, &mut v);
        assert_eq!(s.state_of(1).0, 0.0);
        // The next departure gives σ = 1: one token, to flow 1 (the cursor),
        // which is now full (3 >= 2) and deleted: σ = 0 + 3. The round
        // robin goes on to flow 2: 2 >= 2, deleted: σ = 2 + 2 = T. The queue
        // is empty and every token is back in σ.
        s.dequeue(0, &mut v);
        assert_eq!(s.state_of(1), (4.0, None));
        assert_eq!(s.buckets(), 0);
        assert_eq!(s.token_imbalance(), 0);
        assert!(v.dropped().is_empty());
    }

    #[test]
    fn randomized_collects_excess_lazily() {
        // B = T = 4. Flow 1: bucket 4, σ = 0, takes a token (3).
        let mut s = sfed(4, true);
        let mut v = Verdicts::new();
        s.enqueue(TestPacket::new(1, 0, 100), 0, &mut v);
        // Flow 2: heights become 2; flow 2 gets 2 (σ = -2) and takes one;
        // flow 1 keeps 3 > 2: R-SFED does not truncate at creation.
        s.enqueue(TestPacket::new(2, 0, 100), 0, &mut v);
        assert_eq!(s.state_of(1), (-2.0, Some((3.0, 2.0))));
        assert_eq!(tokens(&s, 2), Some((1.0, 2.0)));
        // Flow 1's next packet: its excess (1) goes to σ first, then it
        // takes a token.
        s.enqueue(TestPacket::new(1, 1, 100), 0, &mut v);
        assert_eq!(s.state_of(1), (-1.0, Some((1.0, 2.0))));
        assert_eq!(s.token_imbalance(), 0);
        // A departure: σ = 0, β = ceil(0 / 3) = 0: nothing moves.
        s.dequeue(0, &mut v);
        assert_eq!(s.state_of(1).0, 0.0);
        assert_eq!(s.beta_max, 0);
        // Next: σ = 1, Q = 1, β = ceil(1 / 2) = 1: one random bucket gets it.
        s.dequeue(0, &mut v);
        assert_eq!(s.beta_max, 1);
        let (x1, x2) = (
            tokens(&s, 1).map_or(0.0, |t| t.0),
            tokens(&s, 2).map_or(0.0, |t| t.0),
        );
        assert_eq!(x1 + x2 + s.state_of(1).0, 3.0);
    }

    #[test]
    fn sigma_starts_at_t_and_an_idle_system_returns_every_token() {
        let mut s = sfed(10, false);
        let mut v = Verdicts::new();
        assert_eq!(s.state_of(0).0, 10.0);
        for f in 0..3 {
            for i in 0..3 {
                s.enqueue(TestPacket::new(f, i, 100), 0, &mut v);
            }
        }
        while s.dequeue(0, &mut v).is_some() {}
        // Empty queue: every bucket filled up and was deleted, except that
        // fractional heights (10/3, 10/2) can leave one bucket short of full
        // by less than a token, with the rest of T in σ (< 1).
        assert!(s.buckets() <= 1);
        for f in 0..3 {
            if let Some((x, l)) = tokens(&s, f) {
                assert!(x > l - 1.0 && x < l, "{x} {l}");
                assert!(s.state_of(0).0 < 1.0);
            }
        }
        assert_eq!(s.token_imbalance(), 0);
        // With integer heights all along (B = 12: 4, 6, 12) every bucket goes.
        let mut s = sfed(12, false);
        for f in 0..3 {
            for i in 0..3 {
                s.enqueue(TestPacket::new(f, i, 100), 0, &mut v);
            }
        }
        while s.dequeue(0, &mut v).is_some() {}
        assert_eq!(s.buckets(), 0);
        assert_eq!(s.state_of(0).0, 12.0);
    }

    /// Random traffic of a few flows, checking conservation after every
    /// event; returns packets departed per flow.
    fn run(
        s: &mut Sfed<TestPacket>,
        rates: &[f64],
        service: f64,
        steps: usize,
        seed: u64,
    ) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let mut v = Verdicts::new();
        let mut out = vec![0u64; rates.len()];
        let total: f64 = rates.iter().sum::<f64>() + service;
        let mut seq = 0;
        for step in 0..steps {
            let mut u = rng.uniform() * total;
            let mut arrived = false;
            for (f, &r) in rates.iter().enumerate() {
                if u < r {
                    s.enqueue(TestPacket::new(f as u64, seq, 512), 0, &mut v);
                    seq += 1;
                    arrived = true;
                    break;
                }
                u -= r;
            }
            if !arrived {
                if let Some(p) = s.dequeue(0, &mut v) {
                    if step > steps / 10 {
                        out[p.flow as usize] += 1;
                    }
                }
            }
            v.drain(|_| {});
            if step % 7 == 0 || steps < 5000 {
                assert_eq!(s.token_imbalance(), 0, "step {step}");
            }
        }
        out
    }

    fn shares(out: &[u64]) -> Vec<f64> {
        let t: u64 = out.iter().sum();
        out.iter().map(|&x| x as f64 / t as f64).collect()
    }

    #[test]
    fn tokens_are_conserved_exactly_in_both_variants_and_byte_mode() {
        for randomized in [false, true] {
            let mut s = sfed(12, randomized);
            run(&mut s, &[0.5, 0.3, 0.1, 0.05], 0.6, 4000, 3);
            let mut b = Sfed::new(SfedParams::paper(Limit::Bytes(12_000), randomized), 2);
            run(&mut b, &[0.5, 0.3, 0.1], 0.6, 4000, 4);
        }
    }

    #[test]
    fn fair_shares_of_three_cbr_flows() {
        // Digest 002 section 2: CBRs at 341.8, 219.7, 48.8 pkt/s on a 376
        // pkt/s link, B = 24: shares 0.435 / 0.435 / 0.130 (max-min).
        for randomized in [false, true] {
            let mut s = sfed(24, randomized);
            let out = run(&mut s, &[341.8, 219.7, 48.8], 376.0, 120_000, 11);
            let sh = shares(&out);
            for (got, want) in sh.iter().zip([0.435, 0.435, 0.130]) {
                assert!((got - want).abs() < 0.03, "randomized {randomized}: {sh:?}");
            }
            if randomized {
                let mean = s.beta_sum as f64 / s.beta_count as f64;
                assert!(mean < 1.5, "mean beta {mean}");
            }
        }
    }

    #[test]
    fn weighted_flows_share_in_proportion() {
        // Digest 002 section 2: weights 2:1, both overloaded: 0.665 / 0.335.
        for randomized in [false, true] {
            let mut c = SfedParams::paper(Limit::Packets(24), randomized);
            c.classes = vec![
                SfedClass {
                    name: "a".into(),
                    parent: None,
                    weight: 2.0,
                    flows: vec![0],
                    traffic: vec![],
                    per_flow: false,
                },
                SfedClass {
                    name: "b".into(),
                    parent: None,
                    weight: 1.0,
                    flows: vec![1],
                    traffic: vec![],
                    per_flow: false,
                },
            ];
            let mut s = Sfed::new(c, 5);
            let sh = shares(&run(&mut s, &[400.0, 400.0], 376.0, 100_000, 12));
            assert!(
                (sh[0] - 0.665).abs() < 0.03,
                "randomized {randomized}: {sh:?}"
            );
        }
    }

    #[test]
    fn aggregates_and_hierarchy() {
        // An aggregate of flows 0 and 1 (weight 1) against flow 2 alone: 1/2
        // each, however the aggregate's flows split theirs.
        let mut c = SfedParams::paper(Limit::Packets(32), true);
        c.classes = vec![SfedClass {
            name: "agg".into(),
            parent: None,
            weight: 1.0,
            flows: vec![0, 1],
            traffic: vec![],
            per_flow: false,
        }];
        let mut s = Sfed::new(c, 5);
        let sh = shares(&run(&mut s, &[300.0, 300.0, 600.0], 376.0, 100_000, 13));
        assert!((sh[0] + sh[1] - 0.5).abs() < 0.04, "{sh:?}");
        // Hierarchy of section 5.5: cbr {0: 2, 1: 1} weight 3, tcp {2: 6, 3: 3}
        // weight 9. All four overloaded: 2/12, 1/12, 6/12, 3/12.
        let leaf = |name: &str, parent: &str, w: f64, f: u64| SfedClass {
            name: name.into(),
            parent: Some(parent.into()),
            weight: w,
            flows: vec![f],
            traffic: vec![],
            per_flow: false,
        };
        let node = |name: &str, w: f64| SfedClass {
            name: name.into(),
            parent: None,
            weight: w,
            flows: vec![],
            traffic: vec![],
            per_flow: false,
        };
        for randomized in [false, true] {
            let mut c = SfedParams::paper(Limit::Packets(48), randomized);
            c.classes = vec![
                node("cbr", 3.0),
                node("tcp", 9.0),
                leaf("c0", "cbr", 2.0, 0),
                leaf("c1", "cbr", 1.0, 1),
                leaf("t0", "tcp", 6.0, 2),
                leaf("t1", "tcp", 3.0, 3),
            ];
            let mut s = Sfed::new(c.clone(), 6);
            let sh = shares(&run(&mut s, &[300.0; 4], 376.0, 150_000, 14));
            for (got, want) in sh
                .iter()
                .zip([2.0 / 12.0, 1.0 / 12.0, 6.0 / 12.0, 3.0 / 12.0])
            {
                assert!((got - want).abs() < 0.03, "randomized {randomized}: {sh:?}");
            }
            // Flow 3 silent: its share goes to its sibling first (9/12).
            let mut s = Sfed::new(c, 6);
            let sh = shares(&run(
                &mut s,
                &[300.0, 300.0, 300.0, 0.0],
                376.0,
                150_000,
                15,
            ));
            for (got, want) in sh.iter().zip([2.0 / 12.0, 1.0 / 12.0, 9.0 / 12.0]) {
                assert!((got - want).abs() < 0.03, "randomized {randomized}: {sh:?}");
            }
        }
    }

    #[test]
    fn per_flow_class_and_traffic_classes() {
        // TCP traffic gets weight 3 with a bucket per TCP flow; everything
        // else shares weight 1 as one aggregate.
        let mut c = SfedParams::paper(Limit::Packets(32), true);
        c.classes = vec![
            SfedClass {
                name: "tcp".into(),
                parent: None,
                weight: 3.0,
                flows: vec![],
                traffic: vec![SfedTraffic::Tcp],
                per_flow: true,
            },
            SfedClass {
                name: "udp".into(),
                parent: None,
                weight: 1.0,
                flows: vec![],
                traffic: vec![SfedTraffic::UdpUntagged, SfedTraffic::UdpTagged],
                per_flow: false,
            },
        ];
        let mut s: Sfed<TestPacket> = Sfed::new(c, 1);
        let mut v = Verdicts::new();
        let mut udp = TestPacket::new(9, 0, 100);
        udp.class = TrafficClass::UdpUntagged;
        s.enqueue(TestPacket::new(1, 0, 100), 0, &mut v);
        s.enqueue(TestPacket::new(2, 0, 100), 0, &mut v);
        s.enqueue(udp, 0, &mut v);
        assert_eq!(s.buckets(), 3);
        let h = |s: &Sfed<TestPacket>, k| {
            s.buckets.height(s.buckets.get(k).unwrap(), s.total) as f64 / SCALE as f64
        };
        assert!((h(&s, BucketKey::ClassFlow(0, 1)) - 12.0).abs() < 1e-6);
        assert!((h(&s, BucketKey::Class(1)) - 8.0).abs() < 1e-6);
    }

    #[test]
    fn bad_class_lists_are_named() {
        let k = |name: &str, parent: Option<&str>, flows: Vec<u64>| SfedClass {
            name: name.into(),
            parent: parent.map(Into::into),
            weight: 1.0,
            flows,
            traffic: vec![],
            per_flow: false,
        };
        assert_eq!(
            check_classes(&[k("a", Some("b"), vec![1]), k("b", None, vec![])])
                .unwrap_err()
                .0,
            "classes.parent"
        );
        assert_eq!(
            check_classes(&[k("a", None, vec![1]), k("b", None, vec![1])])
                .unwrap_err()
                .0,
            "classes.flows"
        );
        assert_eq!(
            check_classes(&[k("a", None, vec![])]).unwrap_err().0,
            "classes"
        );
        assert_eq!(
            check_classes(&[k("a", None, vec![1]), k("b", Some("a"), vec![2])])
                .unwrap_err()
                .0,
            "classes.parent"
        );
        assert!(check_classes(&[k("a", None, vec![]), k("b", Some("a"), vec![2])]).is_ok());
    }
}

#[cfg(test)]
mod conservation {
    use super::*;
    use crate::testkit::TestPacket;
    use proptest::prelude::*;

    fn classes() -> Vec<SfedClass> {
        let c = |name: &str, parent: Option<&str>, weight: f64, flows: Vec<u64>, per_flow: bool| {
            SfedClass {
                name: name.into(),
                parent: parent.map(Into::into),
                weight,
                flows,
                traffic: vec![],
                per_flow,
            }
        };
        vec![
            c("a", None, 3.0, vec![], false),
            c("a0", Some("a"), 2.0, vec![0, 1], false),
            c("a1", Some("a"), 1.0, vec![2, 3], true),
            c("b", None, 5.0, vec![4], false),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Σx + σ + Q = T after every arrival and departure, for both
        /// variants, packet and byte mode, flat and with a class tree.
        #[test]
        fn tokens_are_conserved_after_every_event(
            ops in prop::collection::vec((0u8..3, 0u64..8, prop_oneof![Just(40u32), Just(576), Just(1500)]), 1..300),
            randomized in any::<bool>(),
            bytes in any::<bool>(),
            tree in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let limit = if bytes { Limit::Bytes(9_000) } else { Limit::Packets(7) };
            let mut c = SfedParams::paper(limit, randomized);
            if tree {
                c.classes = classes();
            }
            let mut s: Sfed<TestPacket> = Sfed::new(c, seed);
            let mut v = Verdicts::new();
            for (i, &(op, flow, size)) in ops.iter().enumerate() {
                if op == 0 {
                    s.dequeue(0, &mut v);
                } else {
                    s.enqueue(TestPacket::new(flow, i as u64, size), 0, &mut v);
                }
                v.drain(|_| {});
                prop_assert_eq!(s.token_imbalance(), 0);
            }
        }
    }
}
