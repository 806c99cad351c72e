//! Express links: an unmonitored FIFO that every packet reaches from one
//! and the same upstream link. Its arrivals come in that link's order, so a
//! packet's passage through it is reserved as soon as its arrival there is
//! known (when the upstream link reserves or sends it), and the arrival
//! costs no event either.

use crate::engine::Simulation;
use crate::packet::SimPacket;
use crate::Time;

impl Simulation {
    /// `packet` will reach the far end of link `l` at `arrive`: take it on
    /// through the express links that follow, now. Returns the last link
    /// it entered (whose pipe it joins) and when it leaves that link's far
    /// end, or `None` if one of them dropped it or it went into a gathering
    /// link's inbox.
    #[inline(always)]
    pub(crate) fn through_express(
        &mut self,
        packet: &mut SimPacket,
        mut l: usize,
        mut arrive: Time,
    ) -> Option<(usize, Time)> {
        while let Some(next) = self.routes.link(packet.route, packet.hop + 1) {
            if !self.links[next as usize].is_express() {
                if self.links[next as usize].gathers() {
                    packet.hop += 1;
                    self.gather(next as usize, *packet, arrive);
                    return None;
                }
                break;
            }
            packet.hop += 1;
            l = next as usize;
            match self.reserve(l, packet, arrive) {
                Some(at) => arrive = at,
                None => {
                    self.drop_counted_ahead(arrive);
                    return None;
                }
            }
        }
        Some((l, arrive))
    }
}
