//! Per-queue lengths (in packets) with the longest and the shortest
//! non-empty queue in O(1) worst case per change.
//!
//! Seed 000 (digest 000, section 2.7 [REC]): QSDRR and longest-queue drop
//! need the longest queue at every overflow and the test "is Q shorter than
//! all other non-empty queues". Queue lengths change by +-1 per operation,
//! so queues are kept in buckets by length, and the lengths that have at
//! least one queue form a sorted doubly-linked list (like the frequency list
//! of an O(1) LFU cache). A queue moving from length l to l+1 or l-1 lands
//! in a neighbouring bucket of that list, so every change is O(1): the
//! longest length is the top of the list, the shortest non-empty the bottom.
//!
//! Each bucket is a vector with swap-remove, so a random member (a random
//! tie-break among equally long queues, digest 000 A-Q2) is also O(1).

use crate::blocks::PerQueue;
use crate::rng::Rng;

/// No length: the list links use 0, which is never in the list (empty
/// queues are not tracked).
const NIL: u32 = 0;

/// A queue's length and its index in its bucket (`members[len]`), side by
/// side: 8 bytes per queue, which the caller keeps ([`PerQueue`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Place {
    len: u32,
    pos: u32,
}

impl Place {
    /// The queue's length, in packets.
    #[inline]
    pub fn packets(&self) -> u32 {
        self.len
    }
}

/// The buckets and the list of lengths; each queue's [`Place`] is the
/// caller's, passed to the operations that read or move it.
#[derive(Clone, Debug, Default)]
pub struct QueueLengths {
    /// Queues of each length (index 0 unused).
    members: Vec<Vec<u32>>,
    /// Next larger / smaller length present, or NIL.
    up: Vec<u32>,
    down: Vec<u32>,
    min: u32,
    max: u32,
    non_empty: usize,
}

impl QueueLengths {
    pub fn new() -> Self {
        Self {
            members: vec![Vec::new()],
            up: vec![NIL],
            down: vec![NIL],
            ..Default::default()
        }
    }

    /// Number of non-empty queues.
    #[inline]
    pub fn non_empty(&self) -> usize {
        self.non_empty
    }

    /// Length of the longest queue (0 if all are empty).
    #[inline]
    pub fn max_len(&self) -> u32 {
        self.max
    }

    /// Length of the shortest non-empty queue (0 if all are empty).
    #[inline]
    pub fn min_len(&self) -> u32 {
        self.min
    }

    /// How many queues have length `l` (l >= 1).
    #[inline]
    pub fn count_at(&self, l: u32) -> usize {
        self.members.get(l as usize).map_or(0, Vec::len)
    }

    /// One longest queue (deterministic: the first of its bucket).
    #[inline]
    pub fn longest(&self) -> Option<usize> {
        (self.max > 0).then(|| self.members[self.max as usize][0] as usize)
    }

    /// A longest queue chosen uniformly among the ties.
    #[inline]
    pub fn longest_random(&self, rng: &mut Rng) -> Option<usize> {
        if self.max == 0 {
            return None;
        }
        let b = &self.members[self.max as usize];
        Some(
            b[if b.len() == 1 {
                0
            } else {
                rng.below(b.len() as u64) as usize
            }] as usize,
        )
    }

    /// One shortest non-empty queue.
    #[inline]
    pub fn shortest(&self) -> Option<usize> {
        (self.min > 0).then(|| self.members[self.min as usize][0] as usize)
    }

    /// Whether `q` is non-empty and strictly shorter than every other
    /// non-empty queue (true if it is the only non-empty queue).
    #[inline]
    pub fn is_strictly_shortest<A: PerQueue<Place> + ?Sized>(&self, at: &A, q: usize) -> bool {
        let l = at.of(q).len;
        l > 0 && l == self.min && self.members[l as usize].len() == 1
    }

    /// Queue `q` grew by one packet.
    #[inline(always)]
    pub fn inc<A: PerQueue<Place> + ?Sized>(&mut self, at: &mut A, q: usize) {
        let l = at.of(q).len;
        let n = l + 1;
        if self.members.len() <= n as usize {
            self.ensure(n);
        }
        if self.members[n as usize].is_empty() {
            // Link n just above l (or at the bottom if q was empty).
            let below = if l == 0 { NIL } else { l };
            self.link_above(below, n);
        }
        if l == 0 {
            self.non_empty += 1;
        } else {
            self.leave(at, q, l);
        }
        self.join(at, q, n);
    }

    /// Queue `q` shrank by one packet. `q` must be non-empty.
    #[inline(always)]
    pub fn dec<A: PerQueue<Place> + ?Sized>(&mut self, at: &mut A, q: usize) {
        let l = at.of(q).len;
        debug_assert!(l > 0, "dec of an empty queue");
        let n = l - 1;
        if n > 0 && self.members[n as usize].is_empty() {
            // Link n just below l.
            let below = self.down[l as usize];
            self.link_above(below, n);
        }
        self.leave(at, q, l);
        if n == 0 {
            at.of_mut(q).len = 0;
            self.non_empty -= 1;
        } else {
            self.join(at, q, n);
        }
    }

    #[cold]
    fn ensure(&mut self, l: u32) {
        while self.members.len() <= l as usize {
            self.members.push(Vec::new());
            self.up.push(NIL);
            self.down.push(NIL);
        }
    }

    /// Put length `n` into the list just above `below` (NIL: at the bottom).
    #[inline]
    fn link_above(&mut self, below: u32, n: u32) {
        let above = if below == NIL {
            self.min
        } else {
            self.up[below as usize]
        };
        self.down[n as usize] = below;
        self.up[n as usize] = above;
        if below == NIL {
            self.min = n;
        } else {
            self.up[below as usize] = n;
        }
        if above == NIL {
            self.max = n;
        } else {
            self.down[above as usize] = n;
        }
    }

    #[inline]
    fn unlink(&mut self, l: u32) {
        let (below, above) = (self.down[l as usize], self.up[l as usize]);
        if below == NIL {
            self.min = above;
        } else {
            self.up[below as usize] = above;
        }
        if above == NIL {
            self.max = below;
        } else {
            self.down[above as usize] = below;
        }
    }

    #[inline]
    fn join<A: PerQueue<Place> + ?Sized>(&mut self, at: &mut A, q: usize, l: u32) {
        let b = &mut self.members[l as usize];
        let place = at.of_mut(q);
        place.pos = b.len() as u32;
        b.push(q as u32);
        place.len = l;
    }

    #[inline(always)]
    fn leave<A: PerQueue<Place> + ?Sized>(&mut self, at: &mut A, q: usize, l: u32) {
        let b = &mut self.members[l as usize];
        let p = at.of(q).pos as usize;
        b.swap_remove(p);
        if let Some(&moved) = b.get(p) {
            at.of_mut(moved as usize).pos = p as u32;
        }
        if b.is_empty() {
            self.unlink(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_longest_and_shortest() {
        let mut t = QueueLengths::new();
        let mut at = [Place::default(); 3];
        assert_eq!((t.max_len(), t.min_len(), t.longest()), (0, 0, None));
        for _ in 0..5 {
            t.inc(&mut at[..], 0);
        }
        t.inc(&mut at[..], 1);
        // Lengths 5, 1, 0.
        assert_eq!((t.max_len(), t.min_len()), (5, 1));
        assert_eq!(t.longest(), Some(0));
        assert!(t.is_strictly_shortest(&at[..], 1));
        assert!(!t.is_strictly_shortest(&at[..], 2)); // empty queues are never "shortest"
        t.dec(&mut at[..], 1); // queue 1 empties: the shortest jumps from 1 to 5 in O(1)
        assert_eq!((t.max_len(), t.min_len(), t.non_empty()), (5, 5, 1));
        assert!(t.is_strictly_shortest(&at[..], 0)); // the only non-empty queue
        t.inc(&mut at[..], 2);
        t.inc(&mut at[..], 2);
        t.inc(&mut at[..], 2);
        t.inc(&mut at[..], 2);
        t.inc(&mut at[..], 2); // 5, 0, 5: a tie
        assert!(!t.is_strictly_shortest(&at[..], 0));
        assert_eq!(t.count_at(5), 2);
        t.dec(&mut at[..], 2);
        assert!(t.is_strictly_shortest(&at[..], 2));
        assert_eq!(t.longest(), Some(0));
    }

    #[test]
    fn matches_a_scan_on_random_changes() {
        let mut rng = Rng::new(11);
        let mut t = QueueLengths::new();
        let mut at = [Place::default(); 8];
        let mut model = [0u32; 8];
        for _ in 0..20_000 {
            let q = rng.below(8) as usize;
            if model[q] > 0 && rng.chance(0.5) {
                t.dec(&mut at[..], q);
                model[q] -= 1;
            } else {
                t.inc(&mut at[..], q);
                model[q] += 1;
            }
            let max = *model.iter().max().unwrap();
            let min = model.iter().copied().filter(|&l| l > 0).min().unwrap_or(0);
            assert_eq!((t.max_len(), t.min_len()), (max, min));
            assert_eq!(model[t.longest().map_or(0, |q| q)], max);
            let ties = model.iter().filter(|&&l| l == min && l > 0).count();
            for (q, &l) in model.iter().enumerate() {
                assert_eq!(
                    t.is_strictly_shortest(&at[..], q),
                    l > 0 && l == min && ties == 1
                );
                assert_eq!(at[q].packets(), l);
            }
        }
    }
}
