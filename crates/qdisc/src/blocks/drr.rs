//! Deficit round robin (Shreedhar and Varghese, SIGCOMM 1995), as Linux
//! `sch_drr.c` runs it: the active queues in a ring; the queue at the front
//! sends while its head fits in its deficit, otherwise it gets one more
//! quantum and goes to the back. O(1) per packet when quanta are at least
//! the largest packet.

use crate::{FlowQueues, Packet};

/// No queue.
const NIL: u32 = u32::MAX;

/// The active queues form a circular doubly-linked ring (indices, no
/// allocation per packet), so a queue emptied by a discard leaves the round
/// in O(1) with its deficit reset, as the digest of seed 000 recommends
/// (section 2.4): `remove`.
#[derive(Debug)]
pub struct DrrRound {
    head: u32,
    next: Vec<u32>,
    prev: Vec<u32>,
    in_round: Vec<bool>,
    deficit: Vec<u64>,
    quantum: Vec<u64>,
}

impl DrrRound {
    /// `count` queues with the same `quantum` in bytes.
    pub fn new(count: usize, quantum: u64) -> Self {
        Self::weighted(vec![quantum; count])
    }

    /// One quantum per queue (WDRR: quanta proportional to weights).
    pub fn weighted(quantum: Vec<u64>) -> Self {
        let count = quantum.len();
        Self {
            head: NIL,
            next: vec![NIL; count],
            prev: vec![NIL; count],
            in_round: vec![false; count],
            deficit: vec![0; count],
            quantum,
        }
    }

    /// Add one queue with its quantum; returns its number.
    pub fn add_queue(&mut self, quantum: u64) -> usize {
        self.next.push(NIL);
        self.prev.push(NIL);
        self.in_round.push(false);
        self.deficit.push(0);
        self.quantum.push(quantum);
        self.quantum.len() - 1
    }

    /// Put queue `q` in the round if it is not there yet. Call after a packet
    /// joins an empty queue.
    #[inline]
    pub fn activate(&mut self, q: usize) {
        if self.in_round[q] {
            return;
        }
        self.in_round[q] = true;
        self.deficit[q] = self.quantum[q];
        let q32 = q as u32;
        if self.head == NIL {
            self.head = q32;
            self.next[q] = q32;
            self.prev[q] = q32;
        } else {
            // The tail is the head's predecessor.
            let h = self.head as usize;
            let t = self.prev[h];
            self.next[t as usize] = q32;
            self.prev[q] = t;
            self.next[q] = self.head;
            self.prev[h] = q32;
        }
    }

    #[inline]
    pub fn is_active(&self, q: usize) -> bool {
        self.in_round[q]
    }

    /// Take queue `q` out of the round (its deficit is reset). Call when a
    /// discard empties it.
    #[inline]
    pub fn remove(&mut self, q: usize) {
        if !self.in_round[q] {
            return;
        }
        self.in_round[q] = false;
        self.deficit[q] = 0;
        let (p, n) = (self.prev[q], self.next[q]);
        if n == q as u32 {
            self.head = NIL;
        } else {
            self.next[p as usize] = n;
            self.prev[n as usize] = p;
            if self.head == q as u32 {
                self.head = n;
            }
        }
    }

    /// Take the next packet by DRR, or `None` if every queue is empty.
    /// Queues that empty leave the round.
    pub fn next<P: Packet>(&mut self, queues: &mut FlowQueues<P>) -> Option<(usize, P)> {
        loop {
            if self.head == NIL {
                return None;
            }
            let q = self.head as usize;
            let Some(head) = queues.head(q) else {
                // Emptied from outside without `remove`.
                self.remove(q);
                continue;
            };
            let size = head.size() as u64;
            if size <= self.deficit[q] {
                self.deficit[q] -= size;
                let packet = queues.pop_front(q).expect("head exists");
                if queues.is_empty(q) {
                    self.remove(q);
                }
                return Some((q, packet));
            }
            self.deficit[q] += self.quantum[q];
            self.head = self.next[q];
        }
    }

    /// The queue whose turn it is, if any.
    pub fn current(&self) -> Option<usize> {
        (self.head != NIL).then_some(self.head as usize)
    }

    /// Queue `q`'s deficit counter in bytes.
    pub fn deficit(&self, q: usize) -> u64 {
        self.deficit[q]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    #[test]
    fn equal_quanta_share_bytes_equally() {
        let mut queues = FlowQueues::new(2);
        let mut drr = DrrRound::new(2, 1500);
        for i in 0..30 {
            queues.push_back(0, TestPacket::new(0, i, 1500));
            queues.push_back(1, TestPacket::new(1, i, 500));
        }
        drr.activate(0);
        drr.activate(1);
        let mut sent = [0u64; 2];
        for _ in 0..20 {
            let (q, p) = drr.next(&mut queues).unwrap();
            sent[q] += p.size() as u64;
        }
        // 20 packets: 5 rounds of one 1500 B and three 500 B packets.
        assert_eq!(sent, [7500, 7500]);
    }

    #[test]
    fn a_removed_queue_rejoins_at_the_tail_with_a_fresh_quantum() {
        let mut queues = FlowQueues::new(3);
        let mut drr = DrrRound::new(3, 1500);
        for q in 0..3 {
            queues.push_back(q, TestPacket::new(q as u64, 0, 1000));
            queues.push_back(q, TestPacket::new(q as u64, 1, 1000));
            drr.activate(q);
        }
        // Queue 0 sends one packet (deficit 1500 -> 500), then a discard
        // empties it: it leaves the round with its deficit reset.
        assert_eq!(drr.next(&mut queues).map(|(q, _)| q), Some(0));
        queues.pop_front(0);
        drr.remove(0);
        assert_eq!(drr.deficit(0), 0);
        queues.push_back(0, TestPacket::new(0, 2, 1000));
        drr.activate(0);
        // 0's 500-byte deficit was lost; 1 is served next, then 2, then 0
        // from the tail of the ring.
        let order: Vec<usize> = std::iter::from_fn(|| drr.next(&mut queues).map(|(q, _)| q)).collect();
        assert_eq!(order, vec![1, 2, 0, 1, 2]);
    }
}
