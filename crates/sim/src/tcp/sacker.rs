//! The SACK blocks a receiver reports, formed as ns-2's SACK sink forms
//! them (`Sacker::append_ack` in tcp-sink.cc; `Agent/TCPSink/Sack1`,
//! `maxSackBlocks_` 3, no D-SACK): the first block is the run of packets
//! around the one just received; the others repeat the blocks of the
//! previous ACKs, most recent first, less those the first block covers.
//! RFC 2018 section 4 asks for the same.
//!
//! The receiver keeps a `Sacker` only while a hole is open: ns-2 empties
//! its stack on the first ACK with no hole, which is the ACK that closes
//! the last one.

use super::sack_blocks::{Block, SackBlocks, MAX_BLOCKS};

/// The blocks reported last, most recent first: ns-2's `SackStack`, as
/// deep as an ACK has blocks.
#[derive(Clone, Debug, Default)]
pub struct Sacker {
    stack: [Block; MAX_BLOCKS],
    len: usize,
}

/// What the packet just received is to the SACK sink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Above the hole, in the run `start..end` of packets received.
    AboveHole(Block),
    /// At or below the cumulative ACK `next_expected` (it filled a hole,
    /// or came twice): no block of its own, but the blocks now below the
    /// cumulative ACK are dropped.
    Below { next_expected: u32 },
}

impl Sacker {
    /// The SACK option of the ACK for `arrival`, whose cumulative ACK is
    /// `next_expected` (`Sacker::append_ack`).
    pub fn report(&mut self, arrival: Arrival, next_expected: u32) -> SackBlocks {
        // ns-2's "most recent" block: the packet's run, or for a packet
        // below the cumulative ACK everything below it, (0, next
        // expected), which covers every block that went stale.
        let (recent, pushed) = match arrival {
            Arrival::AboveHole(run) => (run, true),
            Arrival::Below { next_expected } => ((0, next_expected), false),
        };
        let mut blocks = [(0, 0); MAX_BLOCKS];
        let mut n = 0;
        if pushed {
            blocks[0] = recent;
            n = 1;
        }
        // Then the earlier blocks in order, less those the recent one
        // covers (popped from the stack for good).
        let mut k = 0;
        while n < MAX_BLOCKS && k < self.len {
            let (start, end) = self.stack[k];
            if recent.0 <= start && recent.1 >= end {
                self.pop(k);
                continue;
            }
            blocks[n] = self.stack[k];
            n += 1;
            k += 1;
        }
        if pushed {
            self.push(recent);
        }
        SackBlocks::new(next_expected, blocks[..n].iter().copied())
    }

    /// The newest block on top; the oldest falls off a full stack.
    fn push(&mut self, block: Block) {
        self.len = (self.len + 1).min(MAX_BLOCKS);
        self.stack.copy_within(0..self.len - 1, 1);
        self.stack[0] = block;
    }

    fn pop(&mut self, k: usize) {
        self.stack.copy_within(k + 1..self.len, k);
        self.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(s: &mut Sacker, arrival: Arrival, next: u32) -> Vec<Block> {
        s.report(arrival, next).iter().collect()
    }

    /// Packet 10 is lost, then 12 and 14: every ACK reports the newest
    /// packet's run first, then the older runs, three at most.
    #[test]
    fn most_recent_first_and_at_most_three() {
        let mut s = Sacker::default();
        let above = Arrival::AboveHole;
        assert_eq!(report(&mut s, above((11, 12)), 10), vec![(11, 12)]);
        assert_eq!(
            report(&mut s, above((13, 14)), 10),
            vec![(13, 14), (11, 12)]
        );
        assert_eq!(
            report(&mut s, above((15, 16)), 10),
            vec![(15, 16), (13, 14), (11, 12)]
        );
        assert_eq!(
            report(&mut s, above((17, 18)), 10),
            vec![(17, 18), (15, 16), (13, 14)],
            "the oldest block no longer fits"
        );
        // 16 joins 15 and 17: the new run covers both older blocks.
        assert_eq!(
            report(&mut s, above((15, 18)), 10),
            vec![(15, 18), (13, 14)]
        );
        // The oldest fell off the stack when 17 came: it is not reported
        // again though it is still above the hole.
        assert_eq!(
            report(&mut s, above((19, 20)), 10),
            vec![(19, 20), (15, 18), (13, 14)]
        );
    }

    /// A retransmission fills the first hole: its ACK reports the blocks
    /// above the new cumulative ACK and drops those below it.
    #[test]
    fn a_filled_hole_drops_the_blocks_below_the_ack() {
        let mut s = Sacker::default();
        report(&mut s, Arrival::AboveHole((11, 12)), 10);
        report(&mut s, Arrival::AboveHole((13, 14)), 10);
        // 10 arrives: the cumulative ACK moves to 12 (11 was there).
        let after = report(&mut s, Arrival::Below { next_expected: 12 }, 12);
        assert_eq!(after, vec![(13, 14)]);
        assert_eq!(s.len, 1, "(11, 12) is gone from the stack");
        // A duplicate below the ACK repeats what is left.
        assert_eq!(
            report(&mut s, Arrival::Below { next_expected: 12 }, 12),
            vec![(13, 14)]
        );
    }
}
