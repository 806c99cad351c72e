//! The measurement window: the counters each link's windowed figures
//! subtract, taken when the window opens.

use aqmlab_qdisc::QdiscStats;

use crate::engine::Simulation;

/// The counters a link's windowed figures subtract, taken when the
/// measurement window opens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowStart {
    pub arrivals: u64,
    pub drops: u64,
    pub departure_bytes: u64,
}

impl WindowStart {
    pub fn of(stats: QdiscStats) -> Self {
        Self {
            arrivals: stats.arrivals,
            drops: stats.total_drops(),
            departure_bytes: stats.departure_bytes,
        }
    }
}

/// Every link's [`WindowStart`] in 12 bytes where it fits 32-bit counters
/// (every access link: their counts are small when the window opens), and
/// in full apart for the few links past 2^32 (a busy bottleneck's bytes).
#[derive(Default)]
pub struct WindowStarts {
    narrow: Vec<[u32; 3]>,
    /// By link, ascending.
    wide: Vec<(u32, WindowStart)>,
}

/// A narrow entry that stands for "in `wide`".
const WIDE: [u32; 3] = [u32::MAX; 3];

impl WindowStarts {
    /// Reserved when the simulation is built, so that its memory is
    /// counted with the rest of a link's.
    pub fn with_capacity(links: usize) -> Self {
        Self {
            narrow: Vec::with_capacity(links),
            wide: Vec::new(),
        }
    }

    /// The next link's counters.
    pub fn push(&mut self, w: WindowStart) {
        let narrow = [w.arrivals, w.drops, w.departure_bytes].map(u32::try_from);
        match narrow {
            [Ok(a), Ok(d), Ok(b)] if [a, d, b] != WIDE => self.narrow.push([a, d, b]),
            _ => {
                self.wide.push((self.narrow.len() as u32, w));
                self.narrow.push(WIDE);
            }
        }
    }

    /// Link `l`'s counters; zero if the window never opened.
    pub fn get(&self, l: usize) -> WindowStart {
        match self.narrow.get(l) {
            None => WindowStart::default(),
            Some(&WIDE) => {
                let i = self
                    .wide
                    .binary_search_by_key(&(l as u32), |&(link, _)| link)
                    .expect("a wide entry for each WIDE mark");
                self.wide[i].1
            }
            Some(&[arrivals, drops, departure_bytes]) => WindowStart {
                arrivals: arrivals.into(),
                drops: drops.into(),
                departure_bytes: departure_bytes.into(),
            },
        }
    }
}

impl Simulation {
    /// A `WarmupEnd` event: the measurement window opens. Every link's
    /// counters and every flow's delivered bytes are taken as they stand,
    /// for the windowed figures to subtract.
    pub(crate) fn open_window(&mut self) {
        // The state at the end of the nanosecond before: the window's first
        // nanosecond is in it (`Event`'s order).
        self.settle_all(self.now);
        self.warmed_up = true;
        self.accel.window_opened(self.scenario.duration_ns);
        for flow in &mut self.flows {
            flow.delivered_at_warmup = flow.delivered;
            flow.duplicates_at_warmup = flow.duplicates;
        }
        for wire in &mut self.wires {
            wire.lost_at_warmup = wire.lost;
        }
        let early = std::mem::take(&mut self.accel.early_window);
        for (l, (link, record)) in self.links.iter().zip(&self.link_records).enumerate() {
            let now = || WindowStart::of(link.queue.stats(&record.counters));
            self.at_warmup
                .push(early.get(&(l as u32)).copied().unwrap_or_else(now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{WindowStart, WindowStarts};

    #[test]
    fn window_starts_past_32_bits_are_kept_whole() {
        let max = u32::MAX.into();
        let at = |arrivals, drops, departure_bytes| WindowStart {
            arrivals,
            drops,
            departure_bytes,
        };
        // The second is past 32 bits, the third would read as the mark.
        let all = [
            at(5, 0, 4000),
            at(6, 0, 1 << 40),
            at(max, max, max),
            at(max, 0, 9),
        ];
        let mut starts = WindowStarts::with_capacity(all.len());
        for w in all {
            starts.push(w);
        }
        assert_eq!(starts.wide.len(), 2);
        for (l, &w) in all.iter().enumerate() {
            assert_eq!(starts.get(l), w);
        }
        assert_eq!(starts.get(4), WindowStart::default(), "never opened");
    }
}
