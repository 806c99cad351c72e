//! A SACK sender's scoreboard, as ns-2's Sack1 keeps it: `ScoreBoardRQ`
//! (scoreboard-rq.cc, over the reassembly queue of rq.cc), which ns-2.35's
//! `Sack1TcpAgent` uses in place of the older array of scoreboard.cc. It
//! holds the packets SACKed above the cumulative ACK, as disjoint blocks
//! in order, and how far this recovery's retransmissions have gone.
//!
//! A hole is worth retransmitting only with a SACKed packet above it
//! (`GetNextRetran` asks the queue for a hole with blocks above it); holes
//! are retransmitted once each, lowest first (`h_seqno_`), until the
//! scoreboard is cleared.

use super::sack_blocks::Block;

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed packets above the cumulative ACK: ascending, disjoint and
    /// not adjacent (the reassembly queue coalesces them).
    blocks: Vec<Block>,
    /// ns-2's `h_seqno_`: the holes below it were retransmitted.
    next_retransmission: u32,
}

impl Scoreboard {
    /// Take in an ACK (`UpdateScoreBoard`): forget what the cumulative
    /// ACK `snd_una` covers, add the ACK's blocks. Returns whether the
    /// blocks said anything new (`CheckUpdate`: the SACKed total grew).
    pub fn update(&mut self, snd_una: u32, blocks: impl Iterator<Item = Block>) -> bool {
        self.blocks.retain_mut(|b| {
            b.0 = b.0.max(snd_una);
            b.0 < b.1
        });
        let before = self.sacked();
        for b in blocks {
            self.add((b.0.max(snd_una), b.1));
        }
        self.sacked() != before
    }

    /// Packets SACKed in all (the reassembly queue's `total()`).
    fn sacked(&self) -> u64 {
        self.blocks.iter().map(|&(s, e)| (e - s) as u64).sum()
    }

    /// Merge `block` in, coalescing what it overlaps or touches
    /// (`ReassemblyQueue::add`).
    fn add(&mut self, (mut start, mut end): Block) {
        if start >= end {
            return;
        }
        // The blocks it touches: those ending at or after its start and
        // starting at or before its end.
        let first = self.blocks.partition_point(|b| b.1 < start);
        let last = self.blocks.partition_point(|b| b.0 <= end);
        if first < last {
            start = start.min(self.blocks[first].0);
            end = end.max(self.blocks[last - 1].1);
        }
        self.blocks.splice(first..last, [(start, end)]);
    }

    /// Forget everything (`ClearScoreBoard`): a new ACK outside recovery,
    /// the end of a recovery, a timeout.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.next_retransmission = 0;
    }

    /// The next packet to retransmit (`GetNextRetran`): the lowest one
    /// from `snd_una` and not yet retransmitted that is not SACKed and
    /// has a SACKed packet above it.
    pub fn next_retransmission(&mut self, snd_una: u32) -> Option<u32> {
        let mut seq = self.next_retransmission.max(snd_una);
        for &(start, end) in &self.blocks {
            if start > seq {
                self.next_retransmission = seq;
                return Some(seq);
            }
            seq = seq.max(end);
        }
        None
    }

    /// `seq` was retransmitted (`MarkRetran`): look above it next.
    pub fn mark_retransmitted(&mut self, seq: u32) {
        self.next_retransmission = self.next_retransmission.max(seq + 1);
    }

    /// Whether `seq` is SACKed.
    pub fn is_sacked(&self, seq: u32) -> bool {
        let i = self.blocks.partition_point(|b| b.1 <= seq);
        self.blocks.get(i).is_some_and(|b| b.0 <= seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(snd_una: u32, blocks: &[Block]) -> Scoreboard {
        let mut s = Scoreboard::default();
        s.update(snd_una, blocks.iter().copied());
        s
    }

    #[test]
    fn blocks_coalesce_and_the_ack_trims_them() {
        let mut s = board(10, &[(12, 14), (16, 18), (14, 15)]);
        assert_eq!(s.blocks, vec![(12, 15), (16, 18)]);
        assert!(s.update(10, [(15, 16)].into_iter()), "15 is new");
        assert_eq!(s.blocks, vec![(12, 18)]);
        assert!(!s.update(10, [(13, 17)].into_iter()), "nothing new");
        assert!(s.update(10, [(20, 21)].into_iter()));
        s.update(13, std::iter::empty());
        assert_eq!(s.blocks, vec![(13, 18), (20, 21)]);
        s.update(19, std::iter::empty());
        assert_eq!(s.blocks, vec![(20, 21)]);
        assert!(s.is_sacked(20) && !s.is_sacked(19) && !s.is_sacked(21));
    }

    /// Holes 10, 13-14 and 17 under SACKed packets, 20+ unknown: each
    /// hole once, lowest first, none above the highest SACKed packet.
    #[test]
    fn retransmissions_are_the_holes_below_sacked_data_once_each() {
        let mut s = board(10, &[(11, 13), (15, 17), (18, 20)]);
        let mut resent = Vec::new();
        while let Some(seq) = s.next_retransmission(10) {
            s.mark_retransmitted(seq);
            resent.push(seq);
        }
        assert_eq!(resent, vec![10, 13, 14, 17]);
        // A new block above shows a new hole; the old ones are not resent.
        s.update(10, [(21, 22)].into_iter());
        assert_eq!(s.next_retransmission(10), Some(20));
        // The cumulative ACK passing the pointer moves it up.
        s.update(13, std::iter::empty());
        s.clear();
        s.update(13, [(15, 17)].into_iter());
        assert_eq!(
            s.next_retransmission(13),
            Some(13),
            "cleared: from the ACK again"
        );
    }

    /// Found but not sent (the receiver's window is full): asked again,
    /// the same hole comes back.
    #[test]
    fn a_hole_found_and_not_marked_is_found_again() {
        let mut s = board(10, &[(12, 13)]);
        assert_eq!(s.next_retransmission(10), Some(10));
        assert_eq!(s.next_retransmission(10), Some(10));
        s.mark_retransmitted(10);
        assert_eq!(s.next_retransmission(10), Some(11));
        s.mark_retransmitted(11);
        assert_eq!(s.next_retransmission(10), None);
    }
}
