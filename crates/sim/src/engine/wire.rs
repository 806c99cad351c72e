//! Random loss on a link's wire (docs/simulator.md, "Random loss").
//!
//! A packet on a lossy link is transmitted whole and propagates, and is
//! lost with the link's probability `loss`, independently of every other
//! packet, as it reaches the far end: at the head of the link's pipe. This
//! is ns-2's uniform `ErrorModel` in packet units placed after the link by
//! `$ns link-lossmodel` (`SimpleLink insert-linkloss`, tcl/lib/ns-link.tcl:
//! the error module takes the packets `LinkDelay` delivers, and
//! `ErrorModel::recv`, queue/errmodel.cc, drops one when a uniform draw
//! falls below `rate_`), and ns-3's `RateErrorModel` as a receiving device's
//! error model. The lost packet has held the transmitter for its whole
//! transmission time, and the queue counts it as a departure.
//!
//! Each lossy link draws from a random stream of its own, derived from the
//! scenario's seed and the link's number, once for each packet that reaches
//! its pipe's head, in the pipe's order: adding loss to one link changes no
//! other component's numbers, and every engine draws the same numbers for
//! the same packets. The accelerations that would let a packet skip the
//! pipe head of a lossy link step aside there (`accel::plan`).

use aqmlab_qdisc::rng::Rng;

use super::build::STREAM_WIRE;
use crate::engine::Simulation;
use crate::packet::SimPacket;

/// A lossy link's wire: its probability, its stream and what it lost.
/// Only lossy links have one (`Simulation::wires`, by link).
pub struct Wire {
    pub link: u32,
    loss: f64,
    rng: Rng,
    /// Packets and bytes lost so far.
    pub lost: u64,
    pub lost_bytes: u64,
    /// `lost` when the measurement window opened.
    pub lost_at_warmup: u64,
}

impl Wire {
    /// The wire of link `link`, which loses packets with probability `loss`.
    pub fn new(link: u32, loss: f64, seed: u64) -> Self {
        Self {
            link,
            loss,
            rng: Rng::stream(seed, STREAM_WIRE + link as u64),
            lost: 0,
            lost_bytes: 0,
            lost_at_warmup: 0,
        }
    }

    /// Whether a packet of `size` bytes is lost (counted if it is).
    #[inline]
    fn loses(&mut self, size: u32) -> bool {
        let lost = self.rng.chance(self.loss);
        if lost {
            self.lost += 1;
            self.lost_bytes += size as u64;
        }
        lost
    }
}

impl Simulation {
    /// A packet of `size` bytes reaches the far end of lossy link `l` now:
    /// whether its wire lost it. (Its size alone, not the packet: the
    /// packet stays in registers on the pipe head's way on.)
    #[inline(never)]
    pub(crate) fn wire_loses(&mut self, l: usize, size: u32) -> bool {
        let w = self.wire_of(l).expect("a lossy link has a wire");
        self.wires[w].loses(size)
    }

    /// Count `packet`, lost on link `l`'s wire now, as a drop, end to end
    /// and for its flow, and trace it.
    #[cold]
    #[inline(never)]
    pub(crate) fn count_lost(&mut self, l: usize, packet: SimPacket) {
        self.ledger.dropped += 1;
        self.flows[packet.flow as usize].dropped += 1;
        if let Some(tracer) = &mut self.tracer {
            tracer.lost(self.now, l as u32, &packet);
        }
    }

    /// Where link `l`'s wire is in `wires`, if it loses packets.
    pub fn wire_of(&self, l: usize) -> Option<usize> {
        self.wires
            .binary_search_by_key(&(l as u32), |w| w.link)
            .ok()
    }

    /// Packets lost on every wire over the whole run.
    pub fn packets_lost(&self) -> u64 {
        self.wires.iter().map(|w| w.lost).sum()
    }
}
