//! The SACK option an ACK carries (RFC 2018): at most three blocks of
//! packets received above the cumulative ACK, the most recent first.
//!
//! Each edge is kept as its offset above the ACK's cumulative sequence
//! number, in 16 bits: 12 bytes in every packet where absolute 32-bit
//! edges would take 24 (a packet is a plain value, copied through every
//! queue and pipe). A block wholly at or below the cumulative ACK says
//! nothing and is left out; an edge more than 65,535 packets above it is
//! cut there, so the sender learns less of what lies that far above,
//! never anything false (and a scoreboard retransmits only holes below a
//! SACKed packet, [`super::scoreboard`]).

/// Packets `start..end` were received.
pub type Block = (u32, u32);

/// Blocks an ACK carries at most (ns-2's `maxSackBlocks_`, RFC 2018's
/// three with timestamps).
pub const MAX_BLOCKS: usize = 3;

/// An ACK's SACK blocks, as offsets `[start, end]` above its cumulative
/// ACK; an unused slot is `[0, 0]` (a block starts at least one above).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks([[u16; 2]; MAX_BLOCKS]);

impl SackBlocks {
    pub const NONE: Self = Self([[0; 2]; MAX_BLOCKS]);

    /// The option of an ACK whose cumulative ACK is `ack`, from `blocks`
    /// in the order they are reported (the first [`MAX_BLOCKS`] of them
    /// that lie above `ack`).
    pub fn new(ack: u32, blocks: impl IntoIterator<Item = Block>) -> Self {
        let offset = |seq: u32| seq.saturating_sub(ack).min(u16::MAX as u32) as u16;
        let in_reach = |&(start, end): &Block| end > ack && offset(start) < u16::MAX;
        let mut option = Self::NONE;
        for (slot, (start, end)) in option.0.iter_mut().zip(blocks.into_iter().filter(in_reach)) {
            debug_assert!(start > ack, "a SACK block lies above the cumulative ACK");
            *slot = [offset(start).max(1), offset(end)];
        }
        option
    }

    /// The blocks of an ACK whose cumulative ACK is `ack`, in order.
    pub fn iter(&self, ack: u32) -> impl Iterator<Item = Block> + '_ {
        self.0
            .iter()
            .take_while(|[start, end]| start < end)
            .map(move |&[start, end]| (ack + start as u32, ack + end as u32))
    }

    pub fn is_empty(&self) -> bool {
        self.0[0][0] == self.0[0][1]
    }

    /// The option's bytes on the wire: 8 a block, as ns-2's SACK sink adds
    /// to the ACK (`Sacker::append_ack`; RFC 2018's 2-byte header folds
    /// into the TCP header's padding).
    pub fn wire_bytes(&self) -> u32 {
        8 * self.iter(0).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_in_order_relative_to_their_ack() {
        let option = SackBlocks::new(100, [(105, 107), (120, 130), (102, 103)]);
        let blocks: Vec<_> = option.iter(100).collect();
        assert_eq!(blocks, vec![(105, 107), (120, 130), (102, 103)]);
        assert_eq!(option.wire_bytes(), 24);
        assert!(!option.is_empty());
    }

    #[test]
    fn at_most_three_and_none_at_or_below_the_ack() {
        let stale = (90, 100);
        let option = SackBlocks::new(100, [stale, (101, 102), (103, 104), (105, 106), (107, 108)]);
        let blocks: Vec<_> = option.iter(100).collect();
        assert_eq!(blocks, vec![(101, 102), (103, 104), (105, 106)]);
        assert!(SackBlocks::NONE.is_empty());
        assert!(SackBlocks::new(100, [stale]).is_empty());
        assert_eq!(SackBlocks::NONE.wire_bytes(), 0);
    }

    #[test]
    fn edges_far_above_are_cut_at_16_bits() {
        let far = 1_000_000;
        let option = SackBlocks::new(
            far,
            [(far + 10, far + 70_000), (far + 80_000, far + 90_000)],
        );
        let blocks: Vec<_> = option.iter(far).collect();
        assert_eq!(
            blocks,
            vec![(far + 10, far + 65_535)],
            "the second block is out of reach"
        );
        let beyond = SackBlocks::new(far, [(far + 80_000, far + 90_000), (far + 1, far + 2)]);
        assert_eq!(
            beyond.iter(far).collect::<Vec<_>>(),
            vec![(far + 1, far + 2)]
        );
    }
}
