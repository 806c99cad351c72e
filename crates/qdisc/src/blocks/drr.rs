//! Deficit round robin (Shreedhar and Varghese, SIGCOMM 1995), as Linux
//! `sch_drr.c` runs it: the active queues in a ring; the queue at the front
//! sends while its head fits in its deficit, otherwise it gets one more
//! quantum and goes to the back. O(1) per packet when quanta are at least
//! the largest packet.

use std::collections::VecDeque;

use crate::blocks::{Fifos, PerQueue};
use crate::Packet;

/// No queue.
const NIL: u32 = u32::MAX;

/// A queue's place in the round: its links, deficit, quantum and ticket
/// together (32 bytes), so that serving or activating a queue touches one
/// place, not one array per field. It is in the round iff `next` is not NIL
/// (a ring of one links to itself). The caller keeps one per queue
/// ([`PerQueue`]): [`DrrRound`] in a vector of its own, the DRR queue set
/// in each queue's cache line with its FIFO and length.
#[derive(Clone, Copy, Debug)]
pub struct Member {
    next: u32,
    prev: u32,
    deficit: u64,
    quantum: u64,
    /// Order of service: each time a queue joins the back of the ring it
    /// takes the next ticket, so the front has the smallest (MQFQ's
    /// "served sooner" and its one-round resequencing use this).
    ticket: u64,
}

impl Member {
    /// A queue out of the round, with its quantum in bytes.
    pub fn idle(quantum: u64) -> Self {
        Self {
            next: NIL,
            prev: NIL,
            deficit: 0,
            quantum,
            ticket: 0,
        }
    }

    #[inline]
    pub fn is_active(&self) -> bool {
        self.next != NIL
    }

    /// The bytes the queue may still send: for the queue at the front, what
    /// is left of its current visit; for any other queue in the round, its
    /// next visit's quantum is already included. 0 for a queue not in the
    /// round.
    #[inline]
    pub fn deficit(&self) -> u64 {
        self.deficit
    }

    #[inline]
    pub fn quantum(&self) -> u64 {
        self.quantum
    }

    /// Where the queue stands in the service order (smaller is served
    /// sooner), or `None` if it is not in the round.
    #[inline]
    pub fn ticket(&self) -> Option<u64> {
        self.is_active().then_some(self.ticket)
    }
}

/// The round itself: the active queues form a circular doubly-linked ring
/// through the members (indices, no allocation per packet), so a queue
/// emptied by a discard leaves the round in O(1) with its deficit reset, as
/// the digest of seed 000 recommends (section 2.4): `remove`. The members
/// are the caller's, passed to each operation.
#[derive(Debug)]
pub struct DrrRing {
    head: u32,
    next_ticket: u64,
}

impl Default for DrrRing {
    fn default() -> Self {
        Self {
            head: NIL,
            next_ticket: 0,
        }
    }
}

impl DrrRing {
    /// Put queue `q` in the round if it is not there yet. Call after a packet
    /// joins an empty queue.
    #[inline]
    pub fn activate<M: PerQueue<Member> + ?Sized>(&mut self, members: &mut M, q: usize) {
        let q32 = q as u32;
        let head = self.head;
        let ticket = self.next_ticket;
        let m = members.of_mut(q);
        if m.next != NIL {
            return;
        }
        m.deficit = m.quantum;
        m.ticket = ticket;
        self.next_ticket += 1;
        if head == NIL {
            m.next = q32;
            m.prev = q32;
            self.head = q32;
        } else {
            // The tail is the head's predecessor.
            let t = members.of(head as usize).prev;
            let m = members.of_mut(q);
            m.prev = t;
            m.next = head;
            members.of_mut(t as usize).next = q32;
            members.of_mut(head as usize).prev = q32;
        }
    }

    /// Take queue `q` out of the round (its deficit is reset). Call when a
    /// discard empties it.
    #[inline]
    pub fn remove<M: PerQueue<Member> + ?Sized>(&mut self, members: &mut M, q: usize) {
        let m = members.of_mut(q);
        let (p, n) = (m.prev, m.next);
        if n == NIL {
            return;
        }
        m.next = NIL;
        m.prev = NIL;
        m.deficit = 0;
        if n == q as u32 {
            self.head = NIL;
        } else {
            members.of_mut(p as usize).next = n;
            members.of_mut(n as usize).prev = p;
            if self.head == q as u32 {
                self.head = n;
            }
        }
    }

    /// Take the next packet by DRR, or `None` if every queue is empty.
    /// Queues that empty leave the round. `queues` gives both the FIFOs and
    /// the members.
    #[inline]
    pub fn next<P, Q>(&mut self, queues: &mut Q) -> Option<(usize, P)>
    where
        P: Packet,
        Q: Fifos<P> + PerQueue<Member> + ?Sized,
    {
        loop {
            if self.head == NIL {
                return None;
            }
            let q = self.head as usize;
            let Some(size) = queues.head_size(q) else {
                // Emptied from outside without `remove`.
                self.remove(queues, q);
                continue;
            };
            let deficit = &mut queues.of_mut(q).deficit;
            if size <= *deficit {
                *deficit -= size;
                let packet = queues.pop_front(q).expect("head exists");
                if queues.is_empty(q) {
                    self.remove(queues, q);
                }
                return Some((q, packet));
            }
            self.rotate_head(queues, q);
        }
    }

    /// The head `q` spent its deficit: one more quantum, a new ticket, and
    /// it becomes the tail of the ring (the head moves on to its successor).
    #[inline]
    fn rotate_head<M: PerQueue<Member> + ?Sized>(&mut self, members: &mut M, q: usize) {
        let m = members.of_mut(q);
        m.deficit += m.quantum;
        m.ticket = self.next_ticket;
        self.next_ticket += 1;
        self.head = m.next;
    }

    /// The queue whose turn it is, if any.
    #[inline]
    pub fn current(&self) -> Option<usize> {
        (self.head != NIL).then_some(self.head as usize)
    }

    /// The ticket the next queue to join the back of the ring will take.
    #[inline]
    pub fn next_ticket(&self) -> u64 {
        self.next_ticket
    }
}

/// A DRR round with its members in a table of their own, over any FIFOs
/// (MQFQ's).
#[derive(Debug)]
pub struct DrrRound {
    ring: DrrRing,
    members: Vec<Member>,
}

/// The FIFOs and the members of a [`DrrRound`], seen together by
/// [`DrrRing::next`].
struct WithMembers<'a, F> {
    fifos: &'a mut F,
    members: &'a mut [Member],
}

impl<P, F: Fifos<P>> Fifos<P> for WithMembers<'_, F> {
    #[inline]
    fn head(&self, q: usize) -> Option<&P> {
        self.fifos.head(q)
    }
    fn head_size(&self, q: usize) -> Option<u64>
    where
        P: Packet,
    {
        self.fifos.head_size(q)
    }
    #[inline]
    fn pop_front(&mut self, q: usize) -> Option<P> {
        self.fifos.pop_front(q)
    }
    #[inline]
    fn is_empty(&self, q: usize) -> bool {
        self.fifos.is_empty(q)
    }
}

impl<F> PerQueue<Member> for WithMembers<'_, F> {
    #[inline]
    fn of(&self, q: usize) -> &Member {
        &self.members[q]
    }
    #[inline]
    fn of_mut(&mut self, q: usize) -> &mut Member {
        &mut self.members[q]
    }
}

impl DrrRound {
    /// `count` queues with the same `quantum` in bytes.
    pub fn new(count: usize, quantum: u64) -> Self {
        Self::weighted(vec![quantum; count])
    }

    /// One quantum per queue (WDRR: quanta proportional to weights).
    pub fn weighted(quantum: Vec<u64>) -> Self {
        Self {
            ring: DrrRing::default(),
            members: quantum.into_iter().map(Member::idle).collect(),
        }
    }

    /// Add one queue with its quantum; returns its number.
    pub fn add_queue(&mut self, quantum: u64) -> usize {
        self.members.push(Member::idle(quantum));
        self.members.len() - 1
    }

    /// See [`DrrRing::activate`].
    #[inline]
    pub fn activate(&mut self, q: usize) {
        self.ring.activate(&mut self.members[..], q);
    }

    #[inline]
    pub fn is_active(&self, q: usize) -> bool {
        self.members[q].is_active()
    }

    /// See [`DrrRing::remove`].
    #[inline]
    pub fn remove(&mut self, q: usize) {
        self.ring.remove(&mut self.members[..], q);
    }

    /// See [`DrrRing::next`].
    pub fn next<P: Packet>(&mut self, queues: &mut impl Fifos<P>) -> Option<(usize, P)> {
        self.ring.next(&mut WithMembers {
            fifos: queues,
            members: &mut self.members,
        })
    }

    /// The queue whose turn it is, if any.
    pub fn current(&self) -> Option<usize> {
        self.ring.current()
    }

    /// See [`Member::deficit`].
    #[inline]
    pub fn deficit(&self, q: usize) -> u64 {
        self.members[q].deficit()
    }

    #[inline]
    pub fn quantum(&self, q: usize) -> u64 {
        self.members[q].quantum()
    }

    /// See [`Member::ticket`].
    #[inline]
    pub fn ticket(&self, q: usize) -> Option<u64> {
        self.members[q].ticket()
    }

    /// The ticket the next queue to join the back of the ring will take.
    #[inline]
    pub fn next_ticket(&self) -> u64 {
        self.ring.next_ticket()
    }

    /// End the front queue's visit now if its head no longer fits its
    /// deficit (it gets its next quantum and goes to the back), instead of
    /// at the next `next`. Called after `next`, this is ns-2 SFQ's eager
    /// `active = active->next`: a queue that becomes active in between then
    /// joins behind the queue just served, as in ns-2 (MQFQ uses it).
    pub fn end_spent_visit<P: Packet>(&mut self, queues: &impl Fifos<P>) {
        let Some(q) = self.ring.current() else {
            return;
        };
        if let Some(head) = queues.head(q) {
            if head.size() as u64 > self.members[q].deficit {
                self.ring.rotate_head(&mut self.members[..], q);
            }
        }
    }
}

/// The DRR of FQ-CoDel (RFC 8290 section 4.2, Linux `sch_fq_codel.c`):
/// flows that just became active wait in a *new* list served before the
/// *old* list, so sparse flows go first; deficits are signed and charged
/// after sending. The caller drives it because what happens at the head
/// (CoDel may drop the whole head flow) is the discipline's business:
///
/// ```text
/// loop { (q, new) = head()?; if deficit(q) <= 0 { rotate_head(); continue }
///        match dequeue from q { None => retire_head(), Some(p) => { charge(q, p); return p } } }
/// ```
#[derive(Debug)]
pub struct SparseRound {
    new: VecDeque<usize>,
    old: VecDeque<usize>,
    listed: Vec<bool>,
    deficit: Vec<i64>,
    quantum: i64,
}

impl SparseRound {
    pub fn new(count: usize, quantum: u64) -> Self {
        Self {
            new: VecDeque::new(),
            old: VecDeque::new(),
            listed: vec![false; count],
            deficit: vec![0; count],
            quantum: quantum as i64,
        }
    }

    /// A packet joined queue `q`: if `q` is on neither list it goes to the
    /// tail of the new list with one quantum. Returns whether it was added.
    #[inline]
    pub fn activate(&mut self, q: usize) -> bool {
        if self.listed[q] {
            return false;
        }
        self.listed[q] = true;
        self.deficit[q] = self.quantum;
        self.new.push_back(q);
        true
    }

    /// The queue to serve: the head of the new list, else of the old list;
    /// with whether it came from the new list.
    #[inline]
    pub fn head(&self) -> Option<(usize, bool)> {
        match self.new.front() {
            Some(&q) => Some((q, true)),
            None => self.old.front().map(|&q| (q, false)),
        }
    }

    #[inline]
    pub fn deficit(&self, q: usize) -> i64 {
        self.deficit[q]
    }

    fn pop_head(&mut self) -> Option<(usize, bool)> {
        match self.new.pop_front() {
            Some(q) => Some((q, true)),
            None => self.old.pop_front().map(|q| (q, false)),
        }
    }

    /// The head queue spent its deficit: one more quantum, and to the tail
    /// of the old list.
    #[inline]
    pub fn rotate_head(&mut self) {
        if let Some((q, _)) = self.pop_head() {
            self.deficit[q] += self.quantum;
            self.old.push_back(q);
        }
    }

    /// The head queue had nothing to send. A new queue moves to the old list
    /// if that is not empty (a pass through the old flows prevents
    /// starvation); otherwise it leaves the round.
    #[inline]
    pub fn retire_head(&mut self) {
        if let Some((q, from_new)) = self.pop_head() {
            if from_new && !self.old.is_empty() {
                self.old.push_back(q);
            } else {
                self.listed[q] = false;
            }
        }
    }

    /// Charge `bytes` sent from queue `q`.
    #[inline]
    pub fn charge(&mut self, q: usize, bytes: u32) {
        self.deficit[q] -= bytes as i64;
    }

    #[inline]
    pub fn is_listed(&self, q: usize) -> bool {
        self.listed[q]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;
    use crate::FlowQueues;

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
        let order: Vec<usize> =
            std::iter::from_fn(|| drr.next(&mut queues).map(|(q, _)| q)).collect();
        assert_eq!(order, vec![1, 2, 0, 1, 2]);
    }

    #[test]
    fn tickets_follow_the_ring_through_removal_and_spent_visits() {
        let mut queues = FlowQueues::new(3);
        let mut drr = DrrRound::new(3, 1000);
        for q in 0..3 {
            queues.push_back(q, TestPacket::new(q as u64, 0, 1000));
            queues.push_back(q, TestPacket::new(q as u64, 1, 1000));
            drr.activate(q);
        }
        assert_eq!(
            (
                drr.ticket(0),
                drr.ticket(1),
                drr.ticket(2),
                drr.next_ticket()
            ),
            (Some(0), Some(1), Some(2), 3)
        );
        // Queue 0 spends its quantum; ending the visit sends it to the back.
        assert_eq!(drr.next(&mut queues).map(|(q, _)| q), Some(0));
        drr.end_spent_visit(&queues);
        assert_eq!(
            (drr.current(), drr.ticket(0), drr.deficit(0)),
            (Some(1), Some(3), 1000)
        );
        // Removing the middle queue keeps the others' order.
        queues.pop_front(2);
        queues.pop_front(2);
        drr.remove(2);
        assert_eq!(drr.ticket(2), None);
        let order: Vec<usize> =
            std::iter::from_fn(|| drr.next(&mut queues).map(|(q, _)| q)).collect();
        assert_eq!(order, vec![1, 0, 1]);
        assert_eq!(drr.current(), None);
    }
}
