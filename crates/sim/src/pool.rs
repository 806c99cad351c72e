//! Many FIFO lists in one arena. Every propagation pipe (and every calendar
//! slot) is a list of indices into a shared pool of nodes with a free list,
//! so memory follows the most items ever alive at once in the whole network,
//! not the sum of each list's own peak, as one growable buffer per list
//! would. Push and pop are O(1) and allocate nothing once the pool is warm.

const NIL: u32 = u32::MAX;

struct Node<T> {
    item: T,
    next: u32,
}

/// The head and tail of one list.
#[derive(Clone, Copy, Debug)]
pub struct List {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for List {
    fn default() -> Self {
        Self { head: NIL, tail: NIL, len: 0 }
    }
}

impl List {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

pub struct Pool<T> {
    nodes: Vec<Node<T>>,
    free: u32,
    live: usize,
}

impl<T: Copy> Default for Pool<T> {
    fn default() -> Self {
        Self { nodes: Vec::new(), free: NIL, live: 0 }
    }
}

impl<T: Copy> Pool<T> {
    #[inline]
    pub fn push_back(&mut self, list: &mut List, item: T) {
        let i = self.alloc(Node { item, next: NIL });
        if list.tail == NIL {
            list.head = i;
        } else {
            self.nodes[list.tail as usize].next = i;
        }
        list.tail = i;
        list.len += 1;
    }

    /// Push at the head: touches only the list's header and the new node,
    /// for lists whose order does not matter (calendar slots, sorted later).
    #[inline]
    pub fn push_front(&mut self, list: &mut List, item: T) {
        let i = self.alloc(Node { item, next: list.head });
        if list.tail == NIL {
            list.tail = i;
        }
        list.head = i;
        list.len += 1;
    }

    /// A node from the free list, or a new one.
    #[inline]
    fn alloc(&mut self, node: Node<T>) -> u32 {
        self.live += 1;
        if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// The last item of `list`.
    #[inline]
    pub fn back_mut<'a>(&'a mut self, list: &List) -> Option<&'a mut T> {
        (list.tail != NIL).then(|| &mut self.nodes[list.tail as usize].item)
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
        list.len -= 1;
        self.live -= 1;
        Some(item)
    }

    /// Append every item of `list` to `out`, in list order, and free its
    /// nodes all at once (the list is spliced onto the free list).
    pub fn take_all(&mut self, list: List, out: &mut Vec<T>) {
        if list.head == NIL {
            return;
        }
        let mut i = list.head;
        while i != NIL {
            let node = &self.nodes[i as usize];
            out.push(node.item);
            i = node.next;
        }
        self.nodes[list.tail as usize].next = self.free;
        self.free = list.head;
        self.live -= list.len as usize;
    }

    /// Items alive in all lists.
    pub fn live(&self) -> usize {
        self.live
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
        assert_eq!(b.len(), 4);
    }

    #[test]
    fn push_front_stacks() {
        let mut pool = Pool::default();
        let mut a = List::default();
        for i in 0..3 {
            pool.push_front(&mut a, i);
        }
        pool.push_back(&mut a, 9);
        let all: Vec<_> = std::iter::from_fn(|| pool.pop_front(&mut a)).collect();
        assert_eq!(all, vec![2, 1, 0, 9]);
        assert_eq!(pool.live(), 0);
    }

    #[test]
    fn take_all_frees_every_node() {
        let mut pool = Pool::default();
        let (mut a, mut b) = (List::default(), List::default());
        for i in 0..4 {
            pool.push_back(&mut a, i);
        }
        let mut out = vec![-1];
        pool.take_all(std::mem::take(&mut a), &mut out);
        assert_eq!(out, vec![-1, 0, 1, 2, 3]);
        assert_eq!(pool.live(), 0);
        for i in 0..4 {
            pool.push_back(&mut b, i); // all from the free list
        }
        assert_eq!(pool.capacity(), 4);
        pool.take_all(b, &mut out);
        assert_eq!(out.len(), 9);
    }
}
