//! Many lists in one arena. Every propagation pipe is a FIFO [`List`] and
//! every calendar slot an unordered [`Bag`] of indices into a shared pool of
//! nodes with a free list, so memory follows the most items ever alive at
//! once in the whole network, not the sum of each list's own peak, as one
//! growable buffer per list would. Push and pop are O(1) and allocate
//! nothing once the pool is warm.

use crate::accel::hints::{prefetch, prefetch_all};

const NIL: u32 = u32::MAX;

struct Node<T> {
    item: T,
    next: u32,
}

/// The head and tail of one list: 8 bytes in every link. No length: it
/// is counted by walking (`Pool::len`), which only the end of a run does.
#[derive(Clone, Copy, Debug)]
pub struct List {
    head: u32,
    tail: u32,
}

impl Default for List {
    fn default() -> Self {
        Self {
            head: NIL,
            tail: NIL,
        }
    }
}

impl List {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// A list whose order does not matter (a calendar slot, sorted when it is
/// drained): only a head, 4 bytes, and a push touches nothing but the new
/// node.
#[derive(Clone, Copy, Debug)]
pub struct Bag {
    head: u32,
}

impl Default for Bag {
    fn default() -> Self {
        Self { head: NIL }
    }
}

/// A position in a bag walked ahead of its draining (`Pool::step_ahead`).
/// Only a hint: if the bag changes meanwhile, the walk goes astray
/// harmlessly (it reads nodes, never writes them).
#[derive(Clone, Copy, Debug)]
pub struct Walk(u32);

impl Default for Walk {
    fn default() -> Self {
        Self(NIL)
    }
}

pub struct Pool<T> {
    nodes: Vec<Node<T>>,
    free: u32,
}

impl<T: Copy> Default for Pool<T> {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            free: NIL,
        }
    }
}

impl<T: Copy> Pool<T> {
    #[inline]
    pub fn push_back(&mut self, list: &mut List, item: T) {
        self.push_back_after(list, item, |_| {});
    }

    #[inline]
    pub fn put(&mut self, bag: &mut Bag, item: T) {
        bag.head = self.alloc(Node {
            item,
            next: bag.head,
        });
    }

    /// A node from the free list, or a new one.
    #[inline]
    fn alloc(&mut self, node: Node<T>) -> u32 {
        if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            // The next node given out: freed long ago when the list's
            // recent frees are used up (a burst), and read at once then.
            if let Some(next) = self.nodes.get(self.free as usize) {
                prefetch(next);
            }
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    #[inline]
    pub fn front<'a>(&'a self, list: &List) -> Option<&'a T> {
        (list.head != NIL).then(|| &self.nodes[list.head as usize].item)
    }

    #[inline]
    pub fn back<'a>(&'a self, list: &List) -> Option<&'a T> {
        (list.tail != NIL).then(|| &self.nodes[list.tail as usize].item)
    }

    /// Append `item` to `list`, first giving the item it follows (if any)
    /// to `ahead`; returns whether the list was empty.
    #[inline]
    pub fn push_back_after(
        &mut self,
        list: &mut List,
        item: T,
        ahead: impl FnOnce(&mut T),
    ) -> bool {
        let i = self.alloc(Node { item, next: NIL });
        if list.tail == NIL {
            list.head = i;
            list.tail = i;
            return true;
        }
        let last = &mut self.nodes[list.tail as usize];
        ahead(&mut last.item);
        last.next = i;
        list.tail = i;
        false
    }

    #[inline]
    pub fn pop_front(&mut self, list: &mut List) -> Option<T> {
        if list.head == NIL {
            return None;
        }
        let i = list.head;
        let node = &mut self.nodes[i as usize];
        let item = node.item;
        list.head = node.next;
        if list.head == NIL {
            list.tail = NIL;
        }
        node.next = self.free;
        self.free = i;
        Some(item)
    }

    /// Where a walk of `bag` with `step_ahead` starts.
    #[inline]
    pub fn walk(&self, bag: &Bag) -> Walk {
        self.walk_from(bag.head)
    }

    /// Where a walk of `list` with `step_ahead` starts. Items pushed
    /// behind its tail before the walk gets there are walked too.
    #[inline]
    pub fn walk_list(&self, list: &List) -> Walk {
        self.walk_from(list.head)
    }

    #[inline]
    fn walk_from(&self, head: u32) -> Walk {
        if head != NIL {
            prefetch_all(&self.nodes[head as usize]);
        }
        Walk(head)
    }

    /// One node further along a walk, fetching the next node into the
    /// caches (both lines of a node that straddles two, as a 24-byte
    /// event's node can: its link to the next may be in the second): a bag's nodes lie anywhere in the pool, each found through
    /// the one before, so walked in one go (`take_all`) every node can be a
    /// cache miss the walk waits for. Walked a node at a time beforehand,
    /// a step per event, they are in the caches when the bag is taken.
    /// At the last node the walk waits there, for a list that grows
    /// behind its tail.
    #[inline]
    pub fn step_ahead(&self, walk: &mut Walk) {
        if walk.0 != NIL {
            let next = self.nodes[walk.0 as usize].next;
            if next != NIL {
                walk.0 = next;
                prefetch_all(&self.nodes[next as usize]);
            }
        }
    }

    /// Move every item of `bag` to the end of `out` and return how many
    /// there were; the nodes go back to the free list in one splice.
    pub fn take_all(&mut self, bag: Bag, out: &mut Vec<T>) -> usize {
        let (mut i, mut last, mut n) = (bag.head, NIL, 0);
        while i != NIL {
            let node = &self.nodes[i as usize];
            out.push(node.item);
            (last, i) = (i, node.next);
            n += 1;
        }
        if last != NIL {
            self.nodes[last as usize].next = self.free;
            self.free = bag.head;
        }
        n
    }

    /// Move every item of `list`, in order, to the head of the bag
    /// `bags[index(item)]`, relinking its node: nothing is copied or freed.
    /// Returns how many there were.
    pub fn scatter(
        &mut self,
        list: List,
        bags: &mut [Bag],
        mut index: impl FnMut(&T) -> usize,
    ) -> usize {
        let (mut i, mut n) = (list.head, 0);
        while i != NIL {
            let node = &mut self.nodes[i as usize];
            let bag = &mut bags[index(&node.item)];
            (i, node.next, bag.head) = (node.next, bag.head, i);
            n += 1;
        }
        n
    }

    /// The number of items in `list`, counted.
    pub fn len(&self, list: &List) -> usize {
        let (mut i, mut n) = (list.head, 0);
        while i != NIL {
            i = self.nodes[i as usize].next;
            n += 1;
        }
        n
    }

    /// Items alive in all lists: the nodes not on the free list, counted
    /// (not kept up to date on every push and pop, which nothing but the
    /// tests reads).
    pub fn live(&self) -> usize {
        let (mut i, mut free) = (self.free, 0);
        while i != NIL {
            i = self.nodes[i as usize].next;
            free += 1;
        }
        self.nodes.len() - free
    }

    /// Nodes ever allocated: the pool's high-water mark.
    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_share_the_pool_and_keep_fifo_order() {
        let mut pool = Pool::default();
        let (mut a, mut b) = (List::default(), List::default());
        for i in 0..5 {
            pool.push_back(&mut a, i);
            pool.push_back(&mut b, 10 + i);
        }
        assert_eq!(pool.pop_front(&mut a), Some(0));
        assert_eq!(pool.pop_front(&mut b), Some(10));
        pool.push_back(&mut a, 5); // reuses a freed node
        assert_eq!(pool.capacity(), 10);
        let rest: Vec<_> = std::iter::from_fn(|| pool.pop_front(&mut a)).collect();
        assert_eq!(rest, vec![1, 2, 3, 4, 5]);
        assert!(a.is_empty());
        assert_eq!(pool.live(), 4);
        assert_eq!(pool.len(&b), 4);
    }

    #[test]
    fn push_back_after_shows_the_item_ahead() {
        let mut pool = Pool::default();
        let mut list = List::default();
        let mut seen = Vec::new();
        for i in 0..3 {
            let was_empty = pool.push_back_after(&mut list, (i, 0), |ahead| {
                seen.push(ahead.0);
                ahead.1 = i;
            });
            assert_eq!(was_empty, i == 0);
        }
        assert_eq!(seen, vec![0, 1]);
        let items: Vec<_> = std::iter::from_fn(|| pool.pop_front(&mut list)).collect();
        assert_eq!(items, vec![(0, 1), (1, 2), (2, 0)]);
        assert!(pool.push_back_after(&mut list, (3, 0), |_| unreachable!("nothing ahead")));
    }

    #[test]
    fn bags_share_the_pool_with_lists() {
        let mut pool = Pool::default();
        let (mut bag, mut list) = (Bag::default(), List::default());
        for i in 0..4 {
            pool.put(&mut bag, i);
        }
        pool.push_back(&mut list, 10);
        let mut out = vec![-1];
        assert_eq!(pool.take_all(std::mem::take(&mut bag), &mut out), 4);
        out[1..].sort();
        assert_eq!(out, vec![-1, 0, 1, 2, 3]);
        assert_eq!(pool.live(), 1);
        for i in 0..4 {
            pool.put(&mut bag, i); // all from the free list
        }
        assert_eq!(pool.capacity(), 5);
        assert_eq!(pool.take_all(bag, &mut out), 4);
        assert_eq!(pool.take_all(Bag::default(), &mut out), 0);
        assert_eq!(pool.pop_front(&mut list), Some(10));
    }

    #[test]
    fn scatter_moves_a_list_into_bags_in_order() {
        let mut pool = Pool::default();
        let mut list = List::default();
        for i in 0..6 {
            pool.push_back(&mut list, i);
        }
        let mut bags = [Bag::default(); 2];
        assert_eq!(pool.scatter(list, &mut bags, |&i| i % 2), 6);
        assert_eq!((pool.live(), pool.capacity()), (6, 6));
        let mut out = Vec::new();
        pool.take_all(bags[0], &mut out);
        pool.take_all(bags[1], &mut out);
        // A bag gives the last put first.
        assert_eq!(out, vec![4, 2, 0, 5, 3, 1]);
    }
}
