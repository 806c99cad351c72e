//! The token buckets of SFED (seed 002, digest 002 sections 1-3), shared by
//! its exact and randomized variants and by its weighted, aggregate and
//! hierarchical forms.
//!
//! - Tokens are fixed point ([`SCALE`] units per token), so that moving
//!   tokens between buckets, σ and the queue conserves them exactly
//!   (Σx + σ + Q = T holds to the unit, digest 002 section 1.5).
//! - Buckets live in a slab, found by key in a hash map: O(1) per packet,
//!   O(active buckets) memory.
//! - A ring (doubly linked through the slab) gives the exact variant its
//!   round-robin order with a persistent cursor; new buckets join the tail,
//!   just before the cursor (digest 002, section 7 item 9).
//! - A weight tree gives every bucket its share: the product, along its
//!   path to the root, of its weight over the summed weights of its active
//!   siblings (digest 002 section 3.3 [R]). Each node keeps that sum and its
//!   active children, so a share costs O(depth) and a weighted random pick
//!   (top down, rejection sampling at each level) O(depth) expected. With
//!   no classes the tree is the root alone and every share is 1/N.

use std::collections::HashMap;

use crate::rng::Rng;

/// Fixed-point units per token.
pub const SCALE: i64 = 1 << 20;

/// What a bucket belongs to: a flow, an aggregate class, or a flow inside a
/// class that gives each of its flows a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BucketKey {
    Flow(u64),
    Class(u32),
    ClassFlow(u32, u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Child {
    Bucket(u32),
    Node(u32),
}

#[derive(Clone, Debug)]
struct Bucket {
    key: BucketKey,
    tokens: i64,
    weight: f64,
    parent: u32,
    /// Index in the parent's list of active children.
    pos: u32,
    prev: u32,
    next: u32,
    /// Weighted round robin credit of the exact variant.
    credit: f64,
    granted: bool,
    live: bool,
}

#[derive(Clone, Debug)]
struct Node {
    parent: u32,
    weight: f64,
    pos: u32,
    /// Sum of the weights of the active children.
    active_weight: f64,
    children: Vec<Child>,
    /// An upper bound on the children's weights (for rejection sampling).
    max_weight: f64,
}

#[derive(Debug)]
pub struct TokenBuckets {
    slots: Vec<Bucket>,
    free: Vec<u32>,
    index: HashMap<BucketKey, u32>,
    nodes: Vec<Node>,
    cursor: Option<u32>,
    len: usize,
}

impl TokenBuckets {
    /// A tree of interior nodes: node 0 is the root; `nodes[i] = (parent,
    /// weight)` for nodes 1.., each parent listed before its children.
    pub fn new(nodes: &[(u32, f64)]) -> Self {
        let mut all = vec![Node {
            parent: 0,
            weight: 1.0,
            pos: 0,
            active_weight: 0.0,
            children: Vec::new(),
            max_weight: 0.0,
        }];
        for &(parent, weight) in nodes {
            assert!(
                (parent as usize) < all.len(),
                "a node's parent comes before it"
            );
            all.push(Node {
                parent,
                weight,
                pos: 0,
                active_weight: 0.0,
                children: Vec::new(),
                max_weight: 0.0,
            });
        }
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            index: HashMap::new(),
            nodes: all,
            cursor: None,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, key: BucketKey) -> Option<u32> {
        self.index.get(&key).copied()
    }

    #[inline]
    pub fn tokens(&self, slot: u32) -> i64 {
        self.slots[slot as usize].tokens
    }

    #[inline]
    pub fn set_tokens(&mut self, slot: u32, tokens: i64) {
        self.slots[slot as usize].tokens = tokens;
    }

    #[inline]
    pub fn add_tokens(&mut self, slot: u32, tokens: i64) -> i64 {
        let b = &mut self.slots[slot as usize];
        b.tokens += tokens;
        b.tokens
    }

    pub fn key(&self, slot: u32) -> BucketKey {
        self.slots[slot as usize].key
    }

    /// A new bucket for `key` under tree node `parent`, holding no tokens.
    pub fn create(&mut self, key: BucketKey, parent: u32, weight: f64) -> u32 {
        let b = Bucket {
            key,
            tokens: 0,
            weight,
            parent,
            pos: 0,
            prev: 0,
            next: 0,
            credit: 0.0,
            granted: false,
            live: true,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = b;
                s
            }
            None => {
                self.slots.push(b);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key, slot);
        self.len += 1;
        // The ring: just before the cursor, i.e. last in the current cycle.
        match self.cursor {
            None => {
                self.slots[slot as usize].prev = slot;
                self.slots[slot as usize].next = slot;
                self.cursor = Some(slot);
            }
            Some(c) => {
                let prev = self.slots[c as usize].prev;
                self.slots[slot as usize].prev = prev;
                self.slots[slot as usize].next = c;
                self.slots[prev as usize].next = slot;
                self.slots[c as usize].prev = slot;
            }
        }
        self.attach(Child::Bucket(slot), parent, weight);
        slot
    }

    /// Delete a bucket; returns the tokens it held.
    pub fn remove(&mut self, slot: u32) -> i64 {
        let b = self.slots[slot as usize].clone();
        debug_assert!(b.live);
        self.index.remove(&b.key);
        self.len -= 1;
        if self.len == 0 {
            self.cursor = None;
        } else {
            self.slots[b.prev as usize].next = b.next;
            self.slots[b.next as usize].prev = b.prev;
            if self.cursor == Some(slot) {
                self.cursor = Some(b.next);
            }
        }
        self.detach(Child::Bucket(slot), b.parent, b.weight);
        self.slots[slot as usize].live = false;
        self.free.push(slot);
        b.tokens
    }

    fn set_pos(&mut self, child: Child, pos: u32) {
        match child {
            Child::Bucket(s) => self.slots[s as usize].pos = pos,
            Child::Node(n) => self.nodes[n as usize].pos = pos,
        }
    }

    fn attach(&mut self, child: Child, parent: u32, weight: f64) {
        let node = &mut self.nodes[parent as usize];
        let pos = node.children.len() as u32;
        node.children.push(child);
        node.active_weight += weight;
        node.max_weight = node.max_weight.max(weight);
        let became_active = node.children.len() == 1;
        self.set_pos(child, pos);
        if became_active && parent != 0 {
            let (grand, w) = (
                self.nodes[parent as usize].parent,
                self.nodes[parent as usize].weight,
            );
            self.attach(Child::Node(parent), grand, w);
        }
    }

    fn detach(&mut self, child: Child, parent: u32, weight: f64) {
        let pos = match child {
            Child::Bucket(s) => self.slots[s as usize].pos,
            Child::Node(n) => self.nodes[n as usize].pos,
        } as usize;
        let node = &mut self.nodes[parent as usize];
        node.children.swap_remove(pos);
        node.active_weight -= weight;
        let moved = node.children.get(pos).copied();
        let now_empty = node.children.is_empty();
        if now_empty {
            node.active_weight = 0.0;
        }
        if let Some(m) = moved {
            self.set_pos(m, pos as u32);
        }
        if now_empty && parent != 0 {
            let (grand, w) = (
                self.nodes[parent as usize].parent,
                self.nodes[parent as usize].weight,
            );
            self.detach(Child::Node(parent), grand, w);
        }
    }

    /// The bucket's share of the link and of the tokens: its normalized
    /// weight, compounded up the tree.
    pub fn share(&self, slot: u32) -> f64 {
        let b = &self.slots[slot as usize];
        let mut share = b.weight / self.nodes[b.parent as usize].active_weight;
        let mut v = b.parent;
        while v != 0 {
            let n = &self.nodes[v as usize];
            share *= n.weight / self.nodes[n.parent as usize].active_weight;
            v = n.parent;
        }
        share
    }

    /// Height of the bucket when the system holds `total` tokens.
    #[inline]
    pub fn height(&self, slot: u32, total: i64) -> i64 {
        (self.share(slot) * total as f64) as i64
    }

    /// A bucket drawn with probability equal to its share.
    pub fn pick(&self, rng: &mut Rng) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let mut v = 0u32;
        loop {
            let n = &self.nodes[v as usize];
            let child = loop {
                let c = n.children[rng.below(n.children.len() as u64) as usize];
                let w = match c {
                    Child::Bucket(s) => self.slots[s as usize].weight,
                    Child::Node(m) => self.nodes[m as usize].weight,
                };
                if w >= n.max_weight || rng.uniform() * n.max_weight < w {
                    break c;
                }
            };
            match child {
                Child::Bucket(s) => return Some(s),
                Child::Node(m) => v = m,
            }
        }
    }

    /// The bucket at the round-robin cursor.
    #[inline]
    pub fn cursor(&self) -> Option<u32> {
        self.cursor
    }

    /// Move the cursor to the next bucket; the one it leaves may be granted
    /// credit again at its next visit.
    pub fn advance(&mut self) {
        if let Some(c) = self.cursor {
            self.slots[c as usize].granted = false;
            self.cursor = Some(self.slots[c as usize].next);
        }
    }

    /// Weighted round robin: grant the cursor's bucket `ratio` credits once
    /// per visit, and take one credit if it has one.
    pub fn take_credit(&mut self, slot: u32, ratio: f64) -> bool {
        let b = &mut self.slots[slot as usize];
        if !b.granted {
            b.credit += ratio;
            b.granted = true;
        }
        if b.credit >= 1.0 - 1e-9 {
            b.credit -= 1.0;
            true
        } else {
            false
        }
    }

    /// The live buckets, in ring order from the cursor.
    pub fn ring(&self) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.cursor;
        let mut left = self.len;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            let s = at?;
            left -= 1;
            at = Some(self.slots[s as usize].next);
            Some(s)
        })
    }

    /// Cut every bucket down to its height; returns the tokens cut off
    /// (exact SFED's bucket creation, O(N)).
    pub fn truncate_all(&mut self, total: i64) -> i64 {
        let slots: Vec<u32> = self.ring().collect();
        let mut excess = 0;
        for s in slots {
            let h = self.height(s, total);
            let b = &mut self.slots[s as usize];
            if b.tokens > h {
                excess += b.tokens - h;
                b.tokens = h;
            }
        }
        excess
    }

    /// The largest share among the live buckets (O(N)).
    pub fn max_share(&self) -> f64 {
        self.ring().map(|s| self.share(s)).fold(0.0, f64::max)
    }

    /// Σ tokens over the live buckets (O(N); for checks).
    pub fn sum_tokens(&self) -> i64 {
        self.ring().map(|s| self.tokens(s)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_the_tree_and_go_to_siblings_first() {
        // Digest 002 section 5.5: root -> {cbr 3, tcp 9}; cbr -> {2, 1};
        // tcp -> {6, 3}.
        let mut t = TokenBuckets::new(&[(0, 3.0), (0, 9.0)]);
        let c0 = t.create(BucketKey::Class(0), 1, 2.0);
        let c1 = t.create(BucketKey::Class(1), 1, 1.0);
        let t0 = t.create(BucketKey::Class(2), 2, 6.0);
        let t1 = t.create(BucketKey::Class(3), 2, 3.0);
        let s = |t: &TokenBuckets, b| (t.share(b) * 12.0 * 1e9).round() / 1e9;
        assert_eq!(
            [s(&t, c0), s(&t, c1), s(&t, t0), s(&t, t1)],
            [2.0, 1.0, 6.0, 3.0]
        );
        // TCP1 idle: its share goes to TCP0, the CBR leaves keep theirs.
        t.remove(t1);
        assert_eq!([s(&t, c0), s(&t, c1), s(&t, t0)], [2.0, 1.0, 9.0]);
        // Both TCPs idle: the CBR class takes the link, 2:1.
        t.remove(t0);
        assert_eq!([s(&t, c0), s(&t, c1)], [8.0, 4.0]);
    }

    #[test]
    fn weighted_pick_matches_shares() {
        let mut t = TokenBuckets::new(&[(0, 3.0), (0, 9.0)]);
        let b = [
            t.create(BucketKey::Class(0), 1, 2.0),
            t.create(BucketKey::Class(1), 1, 1.0),
            t.create(BucketKey::Class(2), 2, 6.0),
            t.create(BucketKey::Class(3), 2, 3.0),
        ];
        let mut rng = Rng::new(5);
        let mut n = [0u32; 4];
        for _ in 0..120_000 {
            let p = t.pick(&mut rng).unwrap();
            n[b.iter().position(|&x| x == p).unwrap()] += 1;
        }
        for (i, want) in [2.0, 1.0, 6.0, 3.0].into_iter().enumerate() {
            let got = n[i] as f64 / 10_000.0;
            assert!((got - want).abs() < 0.1, "bucket {i}: {got} vs {want}");
        }
    }

    #[test]
    fn ring_inserts_before_the_cursor_and_skips_removed() {
        let mut t = TokenBuckets::new(&[]);
        let a = t.create(BucketKey::Flow(1), 0, 1.0);
        let b = t.create(BucketKey::Flow(2), 0, 1.0);
        t.advance(); // cursor at b
        let c = t.create(BucketKey::Flow(3), 0, 1.0);
        assert_eq!(t.ring().collect::<Vec<_>>(), vec![b, a, c]);
        t.remove(b);
        assert_eq!(t.cursor(), Some(a));
        assert_eq!(t.ring().collect::<Vec<_>>(), vec![a, c]);
        assert_eq!(t.share(a), 0.5);
    }
}
