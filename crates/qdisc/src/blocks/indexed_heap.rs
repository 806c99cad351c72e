//! An indexed binary min-heap over items `0..n` (queue numbers), each with
//! a key that can be changed or removed in O(log n). Ties are broken by the
//! smaller item number, so the order is total and runs repeat exactly.
//!
//! Used where a discipline needs the minimum (or, with negated keys, the
//! maximum) of values that change arbitrarily, not by +-1: TDRR's highest
//! throughput, SCFQ's and WF2Q+'s smallest tags, the Bloom-filter
//! distributor's queue with the fewest flows. (Lengths, which move by +-1,
//! use the O(1) [`crate::blocks::QueueLengths`] instead.)

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct IndexedHeap<K> {
    heap: Vec<u32>,
    pos: Vec<u32>,
    key: Vec<K>,
}

impl<K: Copy + PartialOrd + Default> IndexedHeap<K> {
    /// A heap that can hold items `0..capacity`.
    pub fn new(capacity: usize) -> Self {
        Self {
            heap: Vec::with_capacity(capacity),
            pos: vec![NONE; capacity],
            key: vec![K::default(); capacity],
        }
    }

    /// Make room for one more item number (`capacity()` becomes valid).
    pub fn grow(&mut self) {
        self.pos.push(NONE);
        self.key.push(K::default());
    }

    pub fn capacity(&self) -> usize {
        self.pos.len()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    #[inline]
    pub fn contains(&self, item: usize) -> bool {
        self.pos[item] != NONE
    }

    /// The item's key (its last key if it is not in the heap).
    #[inline]
    pub fn key(&self, item: usize) -> K {
        self.key[item]
    }

    /// The smallest item and its key.
    #[inline]
    pub fn peek(&self) -> Option<(usize, K)> {
        self.heap
            .first()
            .map(|&i| (i as usize, self.key[i as usize]))
    }

    /// Insert `item` with `key`, or change its key if it is there.
    #[inline]
    pub fn set(&mut self, item: usize, key: K) {
        let old = self.key[item];
        self.key[item] = key;
        let p = self.pos[item];
        if p == NONE {
            let p = self.heap.len();
            self.heap.push(item as u32);
            self.pos[item] = p as u32;
            self.up(p);
        } else if self.less_keys(key, item, old, item) {
            self.up(p as usize);
        } else {
            self.down(p as usize);
        }
    }

    /// Remove `item` if it is there.
    #[inline]
    pub fn remove(&mut self, item: usize) {
        let p = self.pos[item];
        if p == NONE {
            return;
        }
        let p = p as usize;
        let last = self.heap.pop().expect("non-empty");
        self.pos[item] = NONE;
        if p < self.heap.len() {
            self.heap[p] = last;
            self.pos[last as usize] = p as u32;
            self.up(p);
            let p = self.pos[last as usize] as usize;
            self.down(p);
        }
    }

    /// Remove and return the smallest item.
    #[inline]
    pub fn pop(&mut self) -> Option<(usize, K)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    #[inline]
    fn less_keys(&self, ka: K, a: usize, kb: K, b: usize) -> bool {
        ka < kb || (ka == kb && a < b)
    }

    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.less_keys(self.key[a], a, self.key[b], b)
    }

    fn up(&mut self, mut p: usize) {
        let item = self.heap[p];
        while p > 0 {
            let parent = (p - 1) / 2;
            if !self.less(item, self.heap[parent]) {
                break;
            }
            self.heap[p] = self.heap[parent];
            self.pos[self.heap[p] as usize] = p as u32;
            p = parent;
        }
        self.heap[p] = item;
        self.pos[item as usize] = p as u32;
    }

    fn down(&mut self, mut p: usize) {
        let n = self.heap.len();
        let item = self.heap[p];
        loop {
            let l = 2 * p + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.less(self.heap[r], self.heap[l]) {
                r
            } else {
                l
            };
            if !self.less(self.heap[c], item) {
                break;
            }
            self.heap[p] = self.heap[c];
            self.pos[self.heap[p] as usize] = p as u32;
            p = c;
        }
        self.heap[p] = item;
        self.pos[item as usize] = p as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn pops_in_key_order_with_index_ties() {
        let mut h = IndexedHeap::new(6);
        for (i, k) in [5u64, 3, 3, 9, 1, 3].into_iter().enumerate() {
            h.set(i, k);
        }
        h.set(3, 0); // decrease
        h.set(4, 7); // increase
        h.remove(1);
        let order: Vec<usize> = std::iter::from_fn(|| h.pop().map(|(i, _)| i)).collect();
        assert_eq!(order, vec![3, 2, 5, 0, 4]);
    }

    #[test]
    fn matches_a_sorted_model() {
        let mut rng = Rng::new(3);
        let mut h = IndexedHeap::new(40);
        let mut model: Vec<Option<u64>> = vec![None; 40];
        for _ in 0..5_000 {
            let i = rng.below(40) as usize;
            match rng.below(3) {
                0 | 1 => {
                    let k = rng.below(20);
                    h.set(i, k);
                    model[i] = Some(k);
                }
                _ => {
                    h.remove(i);
                    model[i] = None;
                }
            }
            let best = model
                .iter()
                .enumerate()
                .filter_map(|(i, k)| k.map(|k| (k, i)))
                .min();
            assert_eq!(h.peek().map(|(i, k)| (k, i)), best);
        }
    }
}
