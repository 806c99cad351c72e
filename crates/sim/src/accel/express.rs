//! Express links: an unmonitored FIFO that every packet reaches from one
//! and the same upstream link. Its arrivals come in that link's order, so a
//! packet's passage through it is reserved as soon as its arrival there is
//! known (when the upstream link reserves or sends it), and the arrival
//! costs no event either.
//!
//! Exact: the FIFO's admissions, waits and departures are those of its
//! arrivals in order, which the upstream link's order gives; its
//! departures at an arrival's nanosecond leave first, as in the reference.
//! Nothing reads an express link during the run but the window's opening:
//! its counters are taken as of the opening when its first arrival at or
//! after it is reserved (`open_express_window`), and arrivals after the
//! run's end are not reserved at all (they stay in the upstream pipe, where
//! the reference leaves them).

use crate::engine::Simulation;
use crate::measure::window::WindowStart;
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
            if arrive > self.scenario.duration_ns {
                break;
            }
            if !self.warmed_up && arrive >= self.scenario.warmup_ns {
                self.open_express_window(next as usize);
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

    /// Express link `e` takes an arrival at or after the window's opening
    /// before the window has opened: its counters as of the opening, for the
    /// window's figures (once).
    #[cold]
    #[inline(never)]
    fn open_express_window(&mut self, e: usize) {
        if self.accel.early_window.contains_key(&(e as u32)) {
            return;
        }
        self.release_started(e, self.scenario.warmup_ns);
        let stats = self.links[e].queue.stats(&self.link_records[e].counters);
        self.accel
            .early_window
            .insert(e as u32, WindowStart::of(stats));
    }
}
