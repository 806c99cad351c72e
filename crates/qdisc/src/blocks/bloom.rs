//! A bank of Bloom filters (Bloom 1970; Broder and Mitzenmacher 2002), each
//! of `m` bits with `k` hash functions, stored contiguously.
//!
//! Seed 000, chapter 5.1 (digest 000, section 2.11): each flow sets k bits in
//! its filter; a flow that turns at least one bit from 0 to 1 is counted as a
//! new flow. The report sizes its filters with the false-positive rate of
//! ideal hashes, about 0.6185^(m/n) at k = (m/n) ln 2 (digest 000, sections
//! 2.11 and 3.6), so the k positions must behave like ideal hashes at the
//! report's small m (10 to 50 bits).
//!
//! The k positions come from two independent 64-bit hashes of the element
//! (digest A-BF2), as in Kirsch and Mitzenmacher, "Less hashing, same
//! performance: building a better Bloom filter" (ESA 2006): the i-th draw is
//! their g_i = h1 + i*h2, here taken mod 2^64 and passed through splitmix64's
//! finalizer. Their positions themselves, g_i mod m, form an arithmetic
//! progression: with m composite a stride sharing a factor with m repeats
//! positions, and even with unit strides the few (start, stride) pairs of a
//! small m make whole progressions collide; at m = 50, k = 7 and 5 elements
//! that is about 3% false positives against the 0.8% the report sizes for
//! (their equivalence with k independent hashes is asymptotic in m). So the
//! draws instead pick a uniform k-subset of [0, m) by Floyd's sampling
//! (Bentley and Floyd, "A sample of brilliance", CACM 30(9), 1987): the k
//! positions are distinct whenever k <= m, for every m, and each k-subset is
//! equally likely.

use crate::rng::splitmix64;

/// The most hash functions a filter takes (the positions live on the stack;
/// k = 32 already means m/n = 46 bits an element, 10^-10 false positives).
pub const MAX_HASHES: u32 = 32;

#[derive(Clone, Debug)]
pub struct BloomFilters {
    words: Vec<u64>,
    words_per: usize,
    bits: u32,
    hashes: u32,
}

/// `h` reduced to `[0, n)` by multiply-shift (no modulo bias worth noting).
#[inline]
fn reduce(h: u64, n: u64) -> u32 {
    ((h as u128 * n as u128) >> 64) as u32
}

impl BloomFilters {
    /// `filters` filters of `bits` bits each, with `hashes` distinct bit
    /// positions per element (so `hashes <= bits` and `hashes <= MAX_HASHES`).
    pub fn new(filters: usize, bits: u32, hashes: u32) -> Self {
        assert!(bits > 0 && hashes > 0 && hashes <= bits.min(MAX_HASHES));
        let words_per = (bits as usize).div_ceil(64);
        Self {
            words: vec![0; filters * words_per],
            words_per,
            bits,
            hashes,
        }
    }

    pub fn filters(&self) -> usize {
        self.words.len() / self.words_per
    }

    /// The k bit positions of an element with hashes (h1, h2), in the first
    /// k slots: distinct, each in [0, m). Floyd's sampling: for j = m-k ..
    /// m-1, draw t in [0, j] and take t, or j if t is already taken.
    #[inline]
    fn positions(&self, h1: u64, h2: u64) -> [u32; MAX_HASHES as usize] {
        let mut taken = [0u32; MAX_HASHES as usize];
        let k = self.hashes;
        for (i, j) in (self.bits - k..self.bits).enumerate() {
            let mut g = h1.wrapping_add((i as u64).wrapping_mul(h2));
            let t = reduce(splitmix64(&mut g), j as u64 + 1);
            taken[i] = if taken[..i].contains(&t) { j } else { t };
        }
        taken
    }

    /// Set the element's bits in filter `f`; true if any bit turned from 0
    /// to 1 (the element was not reported present).
    #[inline]
    pub fn insert(&mut self, f: usize, h1: u64, h2: u64) -> bool {
        let base = f * self.words_per;
        let mut new = false;
        for &b in &self.positions(h1, h2)[..self.hashes as usize] {
            let w = &mut self.words[base + (b / 64) as usize];
            let mask = 1u64 << (b % 64);
            new |= *w & mask == 0;
            *w |= mask;
        }
        new
    }

    /// Whether filter `f` reports the element present (all k bits set).
    #[inline]
    pub fn contains(&self, f: usize, h1: u64, h2: u64) -> bool {
        let base = f * self.words_per;
        self.positions(h1, h2)[..self.hashes as usize]
            .iter()
            .all(|&b| self.words[base + (b / 64) as usize] & (1u64 << (b % 64)) != 0)
    }

    /// Clear every filter.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::HashFamily;
    use proptest::prelude::*;

    /// Whether the k positions of (h1, h2) are distinct and inside [0, m).
    fn distinct_in_range(b: &BloomFilters, h1: u64, h2: u64) -> bool {
        let mut p = b.positions(h1, h2)[..b.hashes as usize].to_vec();
        p.sort_unstable();
        p.dedup();
        p.len() == b.hashes as usize && p.iter().all(|&x| x < b.bits)
    }

    #[test]
    fn k_positions_are_distinct_for_every_m_at_least_k() {
        // Composite m (10, 50, 64, 210, ...) are where double hashing's
        // progression h1 + i*h2 mod m folds onto itself.
        let h = HashFamily::new(2, 3);
        for bits in 1..=256u32 {
            for hashes in 1..=bits.min(MAX_HASHES) {
                let b = BloomFilters::new(1, bits, hashes);
                for key in 0..32u64 {
                    assert!(
                        distinct_in_range(&b, h.hash(0, key), h.hash(1, key)),
                        "m = {bits}, k = {hashes}, key {key}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_k_subset_is_equally_likely() {
        // m = 6, k = 3: 20 subsets, each about 1/20 of the draws (a
        // progression mod 6 reaches only the 12 with stride 1 or 5).
        let h = HashFamily::new(2, 5);
        let b = BloomFilters::new(1, 6, 3);
        let mut seen = std::collections::BTreeMap::new();
        let draws = 200_000u64;
        for key in 0..draws {
            let mut p = b.positions(h.hash(0, key), h.hash(1, key))[..3].to_vec();
            p.sort_unstable();
            *seen.entry(p).or_insert(0u64) += 1;
        }
        assert_eq!(seen.len(), 20);
        // Each count is binomial(200,000, 1/20): sd 97; 5 sd either side.
        for (subset, &n) in &seen {
            assert!((9_500..=10_500).contains(&n), "{subset:?}: {n}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn positions_are_distinct_and_in_range(
            bits in 1u32..100_000, k in 1u32..=MAX_HASHES, h1: u64, h2: u64,
        ) {
            let b = BloomFilters::new(0, bits, k.min(bits));
            prop_assert!(distinct_in_range(&b, h1, h2));
        }

        #[test]
        fn positions_are_distinct_at_the_largest_m(
            bits in (u32::MAX - 64)..=u32::MAX, h1: u64, h2: u64,
        ) {
            let b = BloomFilters::new(0, bits, MAX_HASHES);
            prop_assert!(distinct_in_range(&b, h1, h2));
        }
    }

    #[test]
    fn no_false_negatives_and_counts_new_elements() {
        let h = HashFamily::new(2, 9);
        let mut b = BloomFilters::new(4, 50, 7);
        assert!(b.insert(1, h.hash(0, 42), h.hash(1, 42)));
        assert!(
            !b.insert(1, h.hash(0, 42), h.hash(1, 42)),
            "a second insert sets no new bit"
        );
        assert!(b.contains(1, h.hash(0, 42), h.hash(1, 42)));
        assert!(
            !b.contains(2, h.hash(0, 42), h.hash(1, 42)),
            "filters are separate"
        );
        b.clear();
        assert!(!b.contains(1, h.hash(0, 42), h.hash(1, 42)));
    }

    #[test]
    fn false_positive_rate_is_near_the_formula() {
        // m/n = 10, k = 7: 0.6185^10 = 0.8% (digest 000, section 3.6); ideal
        // hashes giving distinct positions measure 0.88% here. Double
        // hashing's progressions mod 50 would give about 3%.
        let h = HashFamily::new(2, 1);
        let (filters, n) = (2_000usize, 5u64);
        let mut b = BloomFilters::new(filters, 50, 7);
        for f in 0..filters as u64 {
            for j in 0..n {
                let key = f * 1_000 + j;
                b.insert(f as usize, h.hash(0, key), h.hash(1, key));
            }
        }
        let trials = 200_000u64;
        let fp = (0..trials)
            .filter(|t| {
                let key = 1 << 40 | t;
                b.contains(
                    (t % filters as u64) as usize,
                    h.hash(0, key),
                    h.hash(1, key),
                )
            })
            .count() as f64
            / trials as f64;
        assert!((0.006..0.011).contains(&fp), "false-positive rate {fp}");
    }
}
