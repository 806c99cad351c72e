//! A small, fast, seedable random number generator: xoshiro256++ (Blackman and
//! Vigna, 2019) seeded through SplitMix64. Twenty lines instead of a
//! dependency, and a stable stream: results never change with a crate update.

/// SplitMix64 step: a good 64-bit mixer, also used to derive seeds.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Mix two 64-bit values into one well-spread value (for deriving a stream
/// per component from a master seed).
#[inline]
pub fn mix(a: u64, b: u64) -> u64 {
    let mut s = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    splitmix64(&mut s)
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        Self {
            s: [
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
            ],
        }
    }

    /// An independent stream for component `id` under `seed`.
    pub fn stream(seed: u64, id: u64) -> Self {
        Self::new(mix(seed, id.wrapping_add(1)))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1), 53 bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe under `ln`.
    #[inline]
    pub fn uniform_pos(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias is
    /// below 2^-32 for the n used here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_pos().ln()
    }

    /// Pareto with the given mean and shape (> 1), as ns-2's `Pareto`:
    /// scale = mean (shape - 1) / shape.
    #[inline]
    pub fn pareto(&mut self, mean: f64, shape: f64) -> f64 {
        let scale = mean * (shape - 1.0) / shape;
        scale / self.uniform_pos().powf(1.0 / shape)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_repeatable_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::stream(7, 1).next_u64(), Rng::stream(7, 2).next_u64());
    }

    #[test]
    fn distributions_have_their_means() {
        let mut r = Rng::new(42);
        let n = 200_000;
        let u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        let e: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        let p: f64 = (0..n).map(|_| r.pareto(2.0, 2.5)).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.01, "uniform mean {u}");
        assert!((e - 3.0).abs() < 0.05, "exponential mean {e}");
        assert!((p - 2.0).abs() < 0.1, "pareto mean {p}");
        let b = (0..n).map(|_| r.below(10)).filter(|&x| x == 3).count() as f64 / n as f64;
        assert!((b - 0.1).abs() < 0.01);
    }
}
