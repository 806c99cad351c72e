//! The SACK option of an ACK (RFC 2018): at most three blocks of packets
//! received above the cumulative ACK, the most recent first; and where it
//! travels.
//!
//! The option does not ride in the packet. A packet is a plain value
//! copied through every queue and pipe: three blocks as 16-bit offsets
//! made it 56 bytes and cost 3.4% more instructions a data packet on the
//! 1,000-flow dumbbell; as 12-bit offsets, 48 bytes, 0.6% and 8 more bytes
//! for every packet in flight (the 10,000-flow dumbbell's running peak
//! went 1.2% over its budget), for an option that only the ACKs of SACK
//! flows with a hole open carry. So it travels beside its ACK: the
//! receiver files it in the outbox's [`SackOptions`] under the ACK's flow
//! and a one-byte tag the ACK carries in its padding
//! ([`SimPacket::tag`]); the sender takes it out when the ACK
//! arrives. An ACK dropped on the way leaves its option behind, dropped
//! when a later ACK of the flow takes its own; an ACK overtaken by a later
//! one (a discipline that reorders a flow) finds its option gone and
//! arrives without it. The ACK's size counts the option's bytes.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;

use crate::packet::SimPacket;
use crate::Time;

/// Packets `start..end` were received.
pub type Block = (u32, u32);

/// Blocks an ACK carries at most (ns-2's `maxSackBlocks_`, RFC 2018's
/// three with timestamps).
pub const MAX_BLOCKS: usize = 3;

/// An ACK's SACK blocks, in the order they are reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [Block; MAX_BLOCKS],
    len: u8,
}

impl SackBlocks {
    pub const NONE: Self = Self {
        blocks: [(0, 0); MAX_BLOCKS],
        len: 0,
    };

    /// The option of an ACK whose cumulative ACK is `ack`, from `blocks`
    /// in the order they are reported: the first [`MAX_BLOCKS`] of them
    /// that lie above `ack` (one at or below it says nothing).
    pub fn new(ack: u32, blocks: impl IntoIterator<Item = Block>) -> Self {
        let mut option = Self::NONE;
        for (slot, block) in option
            .blocks
            .iter_mut()
            .zip(blocks.into_iter().filter(|b| b.1 > ack))
        {
            debug_assert!(block.0 > ack, "a SACK block lies above the cumulative ACK");
            *slot = block;
            option.len += 1;
        }
        option
    }

    pub fn iter(&self) -> impl Iterator<Item = Block> + '_ {
        self.blocks[..self.len as usize].iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The option's bytes on the wire: 8 a block, as ns-2's SACK sink adds
    /// to the ACK (`Sacker::append_ack`; RFC 2018's 2-byte header folds
    /// into the TCP header's padding).
    pub fn wire_bytes(&self) -> u32 {
        8 * self.len as u32
    }
}

/// The SACK options of the ACKs in flight, by flow, oldest first.
#[derive(Debug, Default)]
pub struct SackOptions {
    /// A fixed-key hasher: the same on every run (nothing iterates it).
    flows: HashMap<u32, InFlight, BuildHasherDefault<DefaultHasher>>,
}

#[derive(Debug, Default)]
struct InFlight {
    /// The tag given last, 1 to 255 in turn.
    last_tag: u8,
    options: VecDeque<Filed>,
}

/// An option and what tells its ACK apart: its cumulative ACK, the send
/// time it echoes, its transfer and its tag.
#[derive(Debug)]
struct Filed {
    seq: u32,
    stamp: Time,
    epoch: u16,
    tag: u8,
    blocks: SackBlocks,
}

impl SackOptions {
    /// File `blocks` for `ack`, about to be sent, and tag it.
    pub fn file(&mut self, ack: &mut SimPacket, blocks: SackBlocks) {
        let f = self.flows.entry(ack.flow).or_default();
        f.last_tag = f.last_tag % u8::MAX + 1;
        ack.tag = f.last_tag;
        f.options.push_back(Filed {
            seq: ack.seq,
            stamp: ack.stamp,
            epoch: ack.epoch,
            tag: f.last_tag,
            blocks,
        });
    }

    /// The option of `ack`, just arrived (none if it carries none or lost
    /// it), and what was filed before it is forgotten.
    pub fn take(&mut self, ack: &SimPacket) -> SackBlocks {
        if ack.tag == 0 {
            return SackBlocks::NONE;
        }
        let Some(f) = self.flows.get_mut(&ack.flow) else {
            return SackBlocks::NONE;
        };
        // Options of earlier transfers and of ACKs of less data: their
        // ACKs were lost (or overtaken).
        while f
            .options
            .front()
            .is_some_and(|o| o.epoch != ack.epoch || o.seq < ack.seq)
        {
            f.options.pop_front();
        }
        // Among the options of ACKs of as much data, this ACK's; those
        // before it are of ACKs lost.
        let own = |o: &Filed| o.tag == ack.tag && o.stamp == ack.stamp;
        let found = f
            .options
            .iter()
            .take_while(|o| o.seq == ack.seq)
            .position(own);
        let blocks = found.map_or(SackBlocks::NONE, |i| {
            f.options.drain(..i);
            f.options.pop_front().expect("filed").blocks
        });
        if f.options.is_empty() {
            self.flows.remove(&ack.flow);
        }
        blocks
    }

    /// Options filed and not taken.
    pub fn len(&self) -> usize {
        self.flows.values().map(|f| f.options.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::testing::ack;

    #[test]
    fn at_most_three_and_none_at_or_below_the_ack() {
        let stale = (90, 100);
        let option = SackBlocks::new(100, [stale, (101, 102), (103, 104), (105, 106), (107, 108)]);
        let blocks: Vec<_> = option.iter().collect();
        assert_eq!(blocks, vec![(101, 102), (103, 104), (105, 106)]);
        assert_eq!(option.wire_bytes(), 24);
        assert!(SackBlocks::NONE.is_empty());
        assert!(SackBlocks::new(100, [stale]).is_empty());
    }

    fn filed(store: &mut SackOptions, seq: u32, stamp: Time, block: Block) -> SimPacket {
        let mut a = ack(seq, stamp);
        store.file(&mut a, SackBlocks::new(seq, [block]));
        a
    }

    /// Each ACK takes its own option; those of ACKs lost on the way are
    /// dropped; an ACK that lost its option gets none and takes none of a
    /// later ACK's.
    #[test]
    fn each_ack_takes_its_own_option() {
        let mut store = SackOptions::default();
        let a1 = filed(&mut store, 10, 1, (11, 12));
        let a2 = filed(&mut store, 10, 2, (11, 13));
        let a3 = filed(&mut store, 10, 3, (11, 14));
        let a4 = filed(&mut store, 13, 4, (14, 15));
        let a5 = filed(&mut store, 13, 5, (14, 16));
        assert_eq!(store.take(&a1).iter().collect::<Vec<_>>(), vec![(11, 12)]);
        // a2 is lost: a3 drops its option.
        assert_eq!(store.take(&a3).iter().collect::<Vec<_>>(), vec![(11, 14)]);
        // a5 overtakes a4: a4 arrives with nothing, and a2's is long gone.
        assert_eq!(store.take(&a5).iter().collect::<Vec<_>>(), vec![(14, 16)]);
        assert!(store.take(&a4).is_empty());
        assert!(store.take(&a2).is_empty());
        assert!(store.is_empty(), "nothing left behind");
        assert!(store.take(&ack(13, 0)).is_empty(), "an ACK without a tag");
    }

    /// Options of a past transfer of an on-off source are dropped.
    #[test]
    fn a_new_transfer_drops_the_last_ones_options() {
        let mut store = SackOptions::default();
        filed(&mut store, 500, 1, (501, 502));
        let mut next = ack(3, 2);
        next.epoch = 1;
        store.file(&mut next, SackBlocks::new(3, [(4, 5)]));
        assert_eq!(store.take(&next).iter().collect::<Vec<_>>(), vec![(4, 5)]);
        assert_eq!(store.len(), 0);
    }
}
