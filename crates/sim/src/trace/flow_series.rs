//! Each flow's throughput over time: the payload bytes it delivers in
//! order at its receiver (its goodput, as `throughput_bps` in the flow
//! table) in each window of a fixed length, window `k` spanning
//! `[k w, (k + 1) w)` and the last ending with the run. Taken as packets
//! arrive, each at its own time, so a window's bytes are those that
//! arrived in it even when the engine does an arrival's work ahead of it.
//!
//! An arrival is seen before its host takes it in, with the bytes its flow
//! had delivered by then: the bytes the flow's previous arrival delivered
//! are known at the next (or, for its last, at the end), and counted in the
//! window of the arrival that delivered them.

use crate::Time;

/// One flow's window in progress: that of its last arrival.
#[derive(Clone, Copy, Default)]
struct Open {
    window: u64,
    /// Bytes delivered in it, but those of its last arrival.
    bytes: u64,
    /// The flow's bytes delivered before its last arrival.
    counted: u64,
}

/// A row of the series: a window's end, a flow, its throughput (b/s).
pub type SeriesRow = (Time, u32, f64);

/// Every flow's bytes by window.
pub struct FlowSeries {
    window: Time,
    open: Vec<Open>,
    /// Windows past, each with its bytes: (window, flow, bytes), those
    /// with bytes only.
    closed: Vec<(u64, u32, u64)>,
}

impl FlowSeries {
    /// Windows of `window` ns (more than 0).
    pub fn new(window: Time) -> Self {
        assert!(window > 0, "a window lasts");
        Self {
            window,
            open: Vec::new(),
            closed: Vec::new(),
        }
    }

    /// A packet of `flow` reaches its host now, which had delivered
    /// `delivered` bytes in all before it.
    pub fn arrived(&mut self, now: Time, flow: u32, delivered: u64) {
        let f = flow as usize;
        if f >= self.open.len() {
            self.open.resize(f + 1, Open::default());
        }
        let window = now / self.window;
        let open = &mut self.open[f];
        open.bytes += delivered - open.counted;
        open.counted = delivered;
        if window != open.window && open.bytes > 0 {
            self.closed.push((open.window, flow, open.bytes));
            open.bytes = 0;
        }
        open.window = window;
    }

    /// The series of a run that ended at `end` (> 0), whose flow `f`
    /// started at `starts[f]` and delivered `delivered[f]` bytes in all:
    /// every window of every flow from the one it started in, windows in
    /// time order and flows in order in each. A packet at the very end
    /// counts in the last window.
    pub fn rows(&self, starts: &[Time], delivered: &[u64], end: Time) -> Vec<SeriesRow> {
        let last = (end - 1) / self.window;
        let open = (self.open.iter().zip(delivered).enumerate())
            .map(|(f, (o, &all))| (o.window, f as u32, o.bytes + all - o.counted))
            .filter(|&(_, _, bytes)| bytes > 0);
        let mut bytes: Vec<(u64, u32, u64)> = (self.closed.iter().copied())
            .chain(open)
            .map(|(w, f, b)| (w.min(last), f, b))
            .collect();
        bytes.sort_unstable_by_key(|&(w, f, _)| (w, f));
        let mut bytes = bytes.into_iter().peekable();
        let mut rows = Vec::new();
        for w in 0..=last {
            let (from, to) = (w * self.window, ((w + 1) * self.window).min(end));
            let seconds = (to - from) as f64 * 1e-9;
            for (f, &start) in starts.iter().enumerate() {
                let mut sum = 0;
                while let Some((_, _, b)) = bytes.next_if(|&(bw, bf, _)| (bw, bf) == (w, f as u32))
                {
                    sum += b;
                }
                if start / self.window <= w {
                    rows.push((to, f as u32, sum as f64 * 8.0 / seconds));
                }
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::FlowSeries;

    #[test]
    fn bytes_fall_in_the_window_of_their_arrival() {
        let mut s = FlowSeries::new(100);
        // Flow 1 delivers 10 bytes at 50, 20 at 120 and 5 at 199, then 7 at
        // 450 (after two empty windows) and 1 at the very end, 500: 43 in
        // all, each arrival seen with the bytes before it.
        for (now, before) in [(50, 0), (120, 10), (199, 30), (450, 35), (500, 42)] {
            s.arrived(now, 1, before);
        }
        s.arrived(310, 0, 0); // flow 0, which started at 300, delivers 1,000
        let rows = s.rows(&[300, 0], &[1_000, 43], 500);
        let bits = |bytes: f64| bytes * 8.0 / (100.0 * 1e-9);
        let expected = [
            (100, 1, bits(10.0)),
            (200, 1, bits(25.0)),
            (300, 1, 0.0),
            (400, 0, bits(1_000.0)),
            (400, 1, 0.0),
            (500, 0, 0.0),
            (500, 1, bits(8.0)),
        ];
        assert_eq!(rows, expected);
    }

    #[test]
    fn a_short_last_window_divides_by_its_own_length() {
        let mut s = FlowSeries::new(100);
        s.arrived(230, 0, 0);
        let rows = s.rows(&[0], &[50], 250);
        assert_eq!(rows.last(), Some(&(250, 0, 50.0 * 8.0 / (50.0 * 1e-9))));
        assert_eq!(rows.len(), 3);
    }
}
