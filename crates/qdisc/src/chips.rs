//! ChIPS: Cut-In Packet Scheduling (Chung and Claypool, ACM Multimedia
//! 2000), as seed 004 implements it on DCBT in Linux (seed
//! 004_c0b2b5d4c8285cc0.txt, section 3.3; digest 004 section 1.5).
//!
//! An accepted multimedia (tagged UDP) packet is moved forward in the queue
//! "to the queue average", while `avg > min_th` and
//! `total_flows >= 2 mm_flows` (DCBT's flow counts). To keep multimedia in
//! order, the MQP queues a copy of every accepted multimedia packet in a
//! separate FIFO, the *in-order queue*; whenever a multimedia packet
//! reaches the head of the main queue, the oldest packet of the in-order
//! queue is sent in its place. Multimedia leaves in arrival order, in
//! transmission slots moved forward.
//!
//! This is the digest's zero-copy form ([REC]): the main queue holds a
//! *slot* (the original's length) and the in-order queue holds the packet
//! itself. Decisions (digest 004, section 7):
//! - A13: the slot goes in at the last packet boundary with at most `avg`
//!   bytes ahead of it, and only when the main queue holds more than `avg`
//!   bytes; otherwise at the tail.
//! - A14: the activation rule is the implementation's: `avg > min_th` and
//!   `mm_flows <= ratio total_flows` (ratio 0.5: `total >= 2 mm`).
//! - A19: one in-order queue for the whole class, as the MQP.
//! - A20: no virtual-FIFO accounting (the MQP dropped the virtual queue);
//!   class counters follow the packets actually queued.
//! - Edge cases of section 1.5: the trait has no requeue, and no DCBT drop
//!   removes a queued packet, so a slot is never removed except by sending
//!   it; the slot's length is the original's, while the backlog counts the
//!   packets actually held (the in-order queue's), so the bytes sent
//!   always match the bytes accounted.
//!
//! Cost: finding the cut-in point walks the main queue from the head,
//! O(queue length) per cut-in multimedia packet (the MQP's "pointer" into
//! the queue); everything else is O(1).

use std::collections::VecDeque;

use crate::dcbt::{Dcbt, DcbtParams};
use crate::params::{params, probability, SpecError, VALID};
use crate::spec::QdiscParams;
use crate::{Packet, QueueDiscipline, TrafficClass};

params! {
    /// ChIPS's parameters: DCBT's, and when to cut in.
    #[derive(PartialEq)]
    pub struct ChipsParams {
        #[flatten] pub dcbt: DcbtParams,
        /// Cut multimedia in while `mm_flows <= chips_ratio total_flows`: 0.5,
        /// i.e. `total >= 2 mm` (seed 004 section 3.3; digest 004 A14).
        pub chips_ratio: f64 [Number] = 0.5,
    }
}

impl QdiscParams for ChipsParams {
    const SUMMARY: &'static str = "ChIPS: DCBT with cut-in for multimedia, kept in order";

    fn validate(&self) -> Result<(), SpecError> {
        self.dcbt.validate()?;
        probability("chips_ratio", self.chips_ratio)
    }

    fn fill_link_rate(&mut self, bps: u64) {
        self.dcbt.fill_link_rate(bps);
    }

    fn build<P: Packet + Send + 'static>(&self, seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(Dcbt::new(&self.dcbt, Some(self.chips_ratio), seed).expect(VALID))
    }
}

enum Entry<P> {
    Packet(P),
    /// A multimedia transmission slot; the packet is in the in-order queue.
    Slot(u32),
}

/// The main queue with cut-in slots, and the in-order multimedia queue.
pub(crate) struct CutInQueue<P> {
    main: VecDeque<Entry<P>>,
    inorder: VecDeque<P>,
    /// Sum of entry lengths in `main` (slots count the original's length).
    main_bytes: u64,
    /// Bytes of the packets actually held.
    bytes: u64,
    packets: u64,
}

impl<P: Packet> CutInQueue<P> {
    pub fn new() -> Self {
        Self {
            main: VecDeque::new(),
            inorder: VecDeque::new(),
            main_bytes: 0,
            bytes: 0,
            packets: 0,
        }
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    #[inline]
    pub fn packets(&self) -> u64 {
        self.packets
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    /// Bytes of the main queue (what a cut-in measures against `avg`).
    #[cfg(test)]
    pub fn main_bytes(&self) -> u64 {
        self.main_bytes
    }

    /// An ordinary packet: to the tail of the main queue.
    #[inline]
    pub fn push_back(&mut self, packet: P) {
        let size = packet.size();
        self.main_bytes += size as u64;
        self.bytes += size as u64;
        self.packets += 1;
        self.main.push_back(Entry::Packet(packet));
    }

    /// An accepted multimedia packet under ChIPS: the packet to the in-order
    /// queue, its slot to the main queue, cut in at `avg` bytes from the
    /// head if `cut_in_at` is given and the main queue holds more than that.
    /// Returns the slot's index in the main queue.
    pub fn push_multimedia(&mut self, packet: P, cut_in_at: Option<u64>) -> usize {
        let size = packet.size();
        self.inorder.push_back(packet);
        self.bytes += size as u64;
        self.packets += 1;
        let index = match cut_in_at {
            Some(avg) if self.main_bytes > avg => {
                // The last boundary with at most `avg` bytes ahead.
                let mut ahead = 0u64;
                let mut i = 0;
                for e in &self.main {
                    let len = match e {
                        Entry::Packet(p) => p.size() as u64,
                        Entry::Slot(l) => *l as u64,
                    };
                    if ahead + len > avg {
                        break;
                    }
                    ahead += len;
                    i += 1;
                }
                i
            }
            _ => self.main.len(),
        };
        self.main_bytes += size as u64;
        self.main.insert(index, Entry::Slot(size));
        index
    }

    /// The head of the main queue; a slot sends the oldest multimedia packet.
    #[inline]
    pub fn pop(&mut self) -> Option<P> {
        let packet = match self.main.pop_front()? {
            Entry::Packet(p) => {
                self.main_bytes -= p.size() as u64;
                p
            }
            Entry::Slot(len) => {
                self.main_bytes -= len as u64;
                self.inorder
                    .pop_front()
                    .expect("one in-order packet per slot")
            }
        };
        self.bytes -= packet.size() as u64;
        self.packets -= 1;
        Some(packet)
    }

    /// Whether a packet of this class takes the in-order path.
    #[inline]
    pub fn is_multimedia(class: TrafficClass) -> bool {
        class == TrafficClass::UdpTagged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;

    fn mm(seq: u64, size: u32) -> TestPacket {
        let mut p = TestPacket::new(9, seq, size);
        p.class = TrafficClass::UdpTagged;
        p
    }

    #[test]
    fn cut_in_position_is_the_last_boundary_within_avg() {
        let mut q = CutInQueue::new();
        for i in 0..10 {
            q.push_back(TestPacket::new(1, i, 1000));
        }
        // avg 3500 B: after 3 packets (3000 <= 3500 < 4000).
        assert_eq!(q.push_multimedia(mm(0, 500), Some(3500)), 3);
        // avg 3500 again: 3 x 1000 + slot 500 = 3500 -> after the slot.
        assert_eq!(q.push_multimedia(mm(1, 500), Some(3500)), 4);
        // No cut-in: the tail.
        assert_eq!(q.push_multimedia(mm(2, 500), None), 12);
        // avg beyond the queue: the tail.
        assert_eq!(q.push_multimedia(mm(3, 500), Some(1_000_000)), 13);
        assert_eq!(q.packets(), 14);
        assert_eq!(q.bytes(), 12_000);
    }

    #[test]
    fn multimedia_leaves_in_arrival_order_in_the_moved_slots() {
        let mut q = CutInQueue::new();
        for i in 0..6 {
            q.push_back(TestPacket::new(1, i, 1000));
        }
        // mm0 (1000 B) appended at the tail (slot 6); mm1 (200 B) cut in at
        // avg 2000 -> slot at index 2, ahead of mm0's slot.
        q.push_multimedia(mm(0, 1000), None);
        q.push_multimedia(mm(1, 200), Some(2000));
        let order: Vec<(u64, u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|p| (p.flow, p.seq, p.size))
            .collect();
        // The first slot (index 2) sends mm0, the oldest; the later one mm1.
        assert_eq!(
            order,
            vec![
                (1, 0, 1000),
                (1, 1, 1000),
                (9, 0, 1000),
                (1, 2, 1000),
                (1, 3, 1000),
                (1, 4, 1000),
                (1, 5, 1000),
                (9, 1, 200)
            ]
        );
        assert_eq!(q.bytes(), 0);
        assert_eq!(q.main_bytes(), 0);
    }
}
