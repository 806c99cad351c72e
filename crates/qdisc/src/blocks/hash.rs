//! A family of independent hash functions of a flow key, each with its own
//! seed: SFQ's perturbed hash, MQFQ's d hashes, SFB's levels, Bloom filters.

use crate::rng::{mix, splitmix64};

#[derive(Clone, Debug)]
pub struct HashFamily {
    seeds: Vec<u64>,
}

impl HashFamily {
    /// `count` hash functions whose seeds are derived from `seed`.
    pub fn new(count: usize, seed: u64) -> Self {
        let mut s = seed;
        Self {
            seeds: (0..count).map(|_| splitmix64(&mut s)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.seeds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seeds.is_empty()
    }

    /// The `i`-th hash of `key`, 64 well-mixed bits.
    #[inline]
    pub fn hash(&self, i: usize, key: u64) -> u64 {
        mix(key, self.seeds[i])
    }

    /// The `i`-th hash of `key` reduced to `[0, buckets)` without modulo bias
    /// worth noting (multiply-shift).
    #[inline]
    pub fn bucket(&self, i: usize, key: u64, buckets: usize) -> usize {
        ((self.hash(i, key) as u128 * buckets as u128) >> 64) as usize
    }

    /// Draw new seeds (SFQ's perturbation, SFB's rehash).
    pub fn reseed(&mut self, seed: u64) {
        *self = Self::new(self.seeds.len(), seed);
    }
}
