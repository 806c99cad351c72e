//! A TCP receiver's out-of-order packets while a hole is open: which
//! packets above the next expected one have arrived (ns-2's TCPSink keeps
//! the same set in its `seen` array).
//!
//! A bitmap, bit `i` for packet `next_expected + i`: the first
//! `INLINE_WORDS` words (128 packets) inline, any further in a boxed
//! slice that only a window reaching past them needs. The receiver keeps
//! it boxed (8 bytes in a flow that receives in order, nearly all the
//! time). With many flows the box is a cache miss at each out-of-order
//! arrival; the `VecDeque` of flags it replaces had its ring in a block of
//! its own, a second miss (at 50,000 flows, a quarter of a data packet's
//! time at its receiver).

/// Words of flags inline: 32 bytes with the slice, and the receiver's box
/// 40 with what a SACK receiver adds (`receiver::Reordering`), as the
/// boxed deque with its smallest ring. Four words put the 10,000-flow
/// dumbbell's running peak 26 KB over its memory budget
/// (docs/performance.md).
const INLINE_WORDS: usize = 2;

#[derive(Clone, Debug, Default)]
pub struct Holes {
    inline: [u64; INLINE_WORDS],
    /// Words past the inline ones, without trailing zero words: a slice,
    /// not a vector, for 8 bytes (it is resized only when a window
    /// reaches past 128 packets above a hole).
    more: Box<[u64]>,
}

impl Holes {
    /// Packet `next_expected + i` arrived; whether it had not before.
    pub fn insert(&mut self, i: usize) -> bool {
        let (w, bit) = (i / 64, i % 64);
        if w >= INLINE_WORDS && self.more.len() <= w - INLINE_WORDS {
            self.resize_more(w - INLINE_WORDS + 1);
        }
        let word = self.word_mut(w);
        let new = *word & 1 << bit == 0;
        *word |= 1 << bit;
        new
    }

    /// Take the packets arrived in order from bit 0 on out of the map, and
    /// say how many: the next expected packet moves up by as many.
    pub fn take_in_order(&mut self) -> u32 {
        let mut taken = 0;
        let mut w = 0;
        loop {
            let word = self.word(w);
            taken += word.trailing_ones() as usize;
            if word != u64::MAX {
                break;
            }
            w += 1;
        }
        if taken > 0 {
            self.shift_down(taken);
        }
        taken as u32
    }

    /// Whether no packet above the hole has arrived.
    pub fn is_empty(&self) -> bool {
        self.more.is_empty() && self.inline.iter().all(|&w| w == 0)
    }

    fn words(&self) -> usize {
        INLINE_WORDS + self.more.len()
    }

    /// Word `w`, zero past the end.
    fn word(&self, w: usize) -> u64 {
        match w.checked_sub(INLINE_WORDS) {
            None => self.inline[w],
            Some(m) => self.more.get(m).copied().unwrap_or(0),
        }
    }

    fn word_mut(&mut self, w: usize) -> &mut u64 {
        match w.checked_sub(INLINE_WORDS) {
            None => &mut self.inline[w],
            Some(m) => &mut self.more[m],
        }
    }

    /// Bit `i + by` becomes bit `i`.
    fn shift_down(&mut self, by: usize) {
        let (words, bits) = (by / 64, by % 64);
        for w in 0..self.words() {
            let low = self.word(w + words);
            let high = self.word(w + words + 1);
            // A shift by 64 is not defined: with no bits to carry, none.
            let carried = if bits == 0 { 0 } else { high << (64 - bits) };
            *self.word_mut(w) = low >> bits | carried;
        }
        let used = self.more.iter().rposition(|&w| w != 0).map_or(0, |w| w + 1);
        if used < self.more.len() {
            self.resize_more(used);
        }
    }

    fn resize_more(&mut self, words: usize) {
        let mut more = std::mem::take(&mut self.more).into_vec();
        more.resize(words, 0);
        self.more = more.into_boxed_slice();
    }

    /// The run of packets arrived around packet `next_expected + i`
    /// (which has arrived): bits `start..end`, all set, `start - 1` and
    /// `end` clear.
    pub fn run(&self, i: usize) -> (usize, usize) {
        debug_assert!(self.word(i / 64) & 1 << (i % 64) != 0, "bit {i} is set");
        // Upwards: the ones from bit i on.
        let mut end = i;
        loop {
            let ones = (self.word(end / 64) >> (end % 64)).trailing_ones() as usize;
            end += ones;
            // Stopped inside the word, or at a word boundary with nothing more.
            if !end.is_multiple_of(64) || ones == 0 {
                break;
            }
        }
        // Downwards: the ones from bit i down (bit 0, the hole, is clear).
        let mut start = i + 1;
        loop {
            let top = start - 1;
            let ones = (self.word(top / 64) << (63 - top % 64)).leading_ones() as usize;
            start -= ones;
            if ones <= top % 64 || start == 0 {
                break;
            }
        }
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_qdisc::rng::Rng;
    use std::collections::VecDeque;

    const INLINE_PACKETS: usize = 64 * INLINE_WORDS;

    /// Against the map it replaces (a flag per packet, popped from the
    /// front while set), over random arrivals in and far past the inline
    /// bits: the same packets taken in order at every step, and empty at
    /// the same times.
    #[test]
    fn takes_what_a_deque_of_flags_takes() {
        let mut rng = Rng::new(11);
        for spread in [8, 200, 700] {
            let mut holes = Holes::default();
            let mut flags: VecDeque<bool> = VecDeque::new();
            for step in 0..20_000 {
                // Mostly just above the hole, sometimes the hole itself.
                let i = if rng.below(8) == 0 {
                    0
                } else {
                    rng.below(spread) as usize
                };
                if i >= flags.len() {
                    flags.resize(i + 1, false);
                }
                flags[i] = true;
                let mut expected = 0;
                while flags.front() == Some(&true) {
                    flags.pop_front();
                    expected += 1;
                }
                holes.insert(i);
                assert_eq!(
                    holes.take_in_order(),
                    expected,
                    "spread {spread}, step {step}"
                );
                assert_eq!(holes.is_empty(), !flags.contains(&true), "step {step}");
            }
        }
    }

    #[test]
    fn a_whole_word_in_order_and_one_past_the_inline_bits() {
        let mut holes = Holes::default();
        for i in 1..=64 {
            holes.insert(i);
        }
        holes.insert(INLINE_PACKETS + 3);
        assert_eq!(holes.take_in_order(), 0, "the hole is still open");
        holes.insert(0);
        assert_eq!(holes.take_in_order(), 65);
        assert!(!holes.is_empty());
        // INLINE_PACKETS + 3 is now bit INLINE_PACKETS + 3 - 65.
        for i in 0..INLINE_PACKETS + 3 - 65 {
            holes.insert(i);
        }
        assert_eq!(holes.take_in_order(), (INLINE_PACKETS + 3 - 65 + 1) as u32);
        assert!(holes.is_empty());
        assert!(holes.more.is_empty());
    }

    /// Against a walk over flags, on random maps reaching past the inline
    /// words: the run around every packet that arrived.
    #[test]
    fn runs_are_what_a_walk_over_flags_finds() {
        let mut rng = Rng::new(5);
        for _ in 0..200 {
            let mut holes = Holes::default();
            let mut flags = vec![false; 400];
            // Sparse runs and runs across whole words, over six words.
            let density = 1 + rng.below(300);
            for (i, flag) in flags.iter_mut().enumerate().skip(1) {
                if rng.below(density + 1) != 0 {
                    *flag = true;
                    holes.insert(i);
                }
            }
            for i in (0..flags.len()).filter(|&i| flags[i]) {
                let start = (0..=i).rev().find(|&j| !flags[j]).unwrap() + 1;
                let end = (i..flags.len()).find(|&j| !flags[j]).unwrap_or(flags.len());
                assert_eq!(holes.run(i), (start, end), "packet {i}");
            }
        }
        let mut holes = Holes::default();
        for i in (1..=200).filter(|&i| i != 150) {
            holes.insert(i);
        }
        assert_eq!(holes.run(10), (1, 150));
        assert_eq!(holes.run(160), (151, 201));
    }
}
