//! A bank of Bloom filters (Bloom 1970; Broder and Mitzenmacher 2002), each
//! of `m` bits with `k` hash functions, stored contiguously.
//!
//! Seed 000, chapter 5.1 (digest 000, section 2.11): each flow sets k bits in
//! its filter; a flow that turns at least one bit from 0 to 1 is counted as a
//! new flow. The k bit positions come from two independent 64-bit hashes by
//! double hashing, g_i = h1 + i*h2 mod m (Kirsch and Mitzenmacher 2006),
//! which is the digest's recommendation (A-BF2).
//!
//! False-positive rate with n flows in a filter: about 0.6185^(m/n) when
//! k = (m/n) ln 2 (digest 000, section 2.11 and 3.6).

#[derive(Clone, Debug)]
pub struct BloomFilters {
    words: Vec<u64>,
    words_per: usize,
    bits: u32,
    hashes: u32,
}

impl BloomFilters {
    /// `filters` filters of `bits` bits each, with `hashes` bit positions
    /// per element.
    pub fn new(filters: usize, bits: u32, hashes: u32) -> Self {
        assert!(bits > 0 && hashes > 0);
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

    /// The k-th bit position of an element with hashes (h1, h2).
    #[inline]
    fn bit(&self, h1: u64, h2: u64, i: u32) -> u32 {
        // h2 | 1 keeps the stride odd, so the k positions differ whenever
        // m is a power of two, and rarely coincide otherwise.
        (h1.wrapping_add((i as u64).wrapping_mul(h2 | 1)) % self.bits as u64) as u32
    }

    /// Set the element's bits in filter `f`; true if any bit turned from 0
    /// to 1 (the element was not reported present).
    #[inline]
    pub fn insert(&mut self, f: usize, h1: u64, h2: u64) -> bool {
        let base = f * self.words_per;
        let mut new = false;
        for i in 0..self.hashes {
            let b = self.bit(h1, h2, i);
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
        (0..self.hashes).all(|i| {
            let b = self.bit(h1, h2, i);
            self.words[base + (b / 64) as usize] & (1u64 << (b % 64)) != 0
        })
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
        // m/n = 10, k = 7: 0.6185^10 = 0.8% (digest 000, section 3.6).
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
        assert!(fp < 0.02, "false-positive rate {fp}");
    }
}
