//! What the router measures: per-flow counters, delay histograms, and the
//! process's own CPU time and memory (getrusage).

use aqmlab_qdisc::{DropReason, Time};
use serde::Serialize;

use crate::packet::FiveTuple;

/// Bins per decade of a [`Histogram`]: each bin is 7.5% wide.
const BINS_PER_DECADE: f64 = 32.0;
/// Decades of nanoseconds covered: 1 ns to 100 s.
const DECADES: usize = 11;

/// A histogram of durations with logarithmic bins (a fixed relative error,
/// from nanoseconds to seconds, in a few kilobytes).
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    pub count: u64,
    pub sum_ns: u128,
    pub min_ns: Time,
    pub max_ns: Time,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: vec![0; DECADES * BINS_PER_DECADE as usize + 1],
            count: 0,
            sum_ns: 0,
            min_ns: Time::MAX,
            max_ns: 0,
        }
    }
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, ns: Time) {
        let bin = if ns == 0 {
            0
        } else {
            ((ns as f64).log10() * BINS_PER_DECADE) as usize + 1
        };
        let last = self.counts.len() - 1;
        self.counts[bin.min(last)] += 1;
        self.count += 1;
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// The value below which a fraction `q` of the samples lie, to the
    /// bin's width (its geometric middle), clamped to the extremes seen.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = (q * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (bin, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let middle = match bin {
                    0 => 0.0,
                    b => 10f64.powf((b as f64 - 0.5) / BINS_PER_DECADE),
                };
                return Some(middle.clamp(self.min_ns as f64, self.max_ns as f64));
            }
        }
        Some(self.max_ns as f64)
    }

    pub fn summary(&self) -> DelaySummary {
        let seconds = |ns: Option<f64>| ns.map(|v| v / 1e9);
        DelaySummary {
            count: self.count,
            mean_s: (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64 / 1e9),
            min_s: (self.count > 0).then(|| self.min_ns as f64 / 1e9),
            max_s: (self.count > 0).then(|| self.max_ns as f64 / 1e9),
            p50_s: seconds(self.quantile(0.5)),
            p90_s: seconds(self.quantile(0.9)),
            p99_s: seconds(self.quantile(0.99)),
            p999_s: seconds(self.quantile(0.999)),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct DelaySummary {
    pub count: u64,
    pub mean_s: Option<f64>,
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
    pub p50_s: Option<f64>,
    pub p90_s: Option<f64>,
    pub p99_s: Option<f64>,
    pub p999_s: Option<f64>,
}

/// One flow (a 5-tuple) as the router saw it.
#[derive(Debug)]
pub struct FlowStats {
    pub tuple: FiveTuple,
    pub tos: u8,
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Drops by the disciplines, by [`DropReason`].
    pub drops: [u64; 4],
    /// Packets lost on a link's wire (its random loss).
    pub lost: u64,
    /// Packets that left ECN-capable and arrived with CE.
    pub marked: u64,
    /// Time from entering the router to leaving it.
    pub transit: Histogram,
    /// Interarrival jitter of RFC 3550 (section 6.4.1) over the transit
    /// times, in nanoseconds: what the network added to the source's spacing.
    pub jitter_ns: f64,
    last_transit: Option<Time>,
    /// Packets delivered after a packet its sender sent later: an IPv4
    /// identification behind the highest delivered (Linux numbers a
    /// connected socket's packets in sequence, RFC 6864).
    pub reordered: u64,
    highest_id: Option<u16>,
    /// The sample at which `delivered_series` starts.
    pub first_sample: usize,
    /// Bytes and packets delivered so far, at each sample.
    pub delivered_series: Vec<(u64, u64)>,
    /// `jitter_ns` at each sample, in seconds (Iperf's jitter report of
    /// every interval).
    pub jitter_series: Vec<f64>,
}

impl FlowStats {
    pub fn new(tuple: FiveTuple, tos: u8, first_sample: usize) -> Self {
        Self {
            tuple,
            tos,
            arrivals: 0,
            arrival_bytes: 0,
            delivered: 0,
            delivered_bytes: 0,
            drops: [0; 4],
            lost: 0,
            marked: 0,
            transit: Histogram::default(),
            jitter_ns: 0.0,
            last_transit: None,
            reordered: 0,
            highest_id: None,
            first_sample,
            delivered_series: Vec::new(),
            jitter_series: Vec::new(),
        }
    }

    /// A packet delivered after `transit` nanoseconds in the router.
    pub fn count_transit(&mut self, transit: Time) {
        self.transit.record(transit);
        if let Some(last) = self.last_transit {
            let d = (transit as f64 - last as f64).abs();
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    /// A packet delivered with IPv4 identification `id` (compared modulo 2^16).
    pub fn count_order(&mut self, id: u16) {
        match self.highest_id {
            Some(high) if (id.wrapping_sub(high) as i16) < 0 => self.reordered += 1,
            _ => self.highest_id = Some(id),
        }
    }

    pub fn count_drop(&mut self, reason: DropReason) {
        self.drops[reason.index()] += 1;
    }
}

/// The router's own cost: CPU time from getrusage(RUSAGE_SELF); peak
/// resident memory from /proc/self/status (VmHWM, which, unlike
/// getrusage's ru_maxrss, is not inherited across the exec of
/// `ip netns exec` that starts the router).
#[derive(Debug, Serialize)]
pub struct Usage {
    pub user_s: f64,
    pub system_s: f64,
    /// Peak resident set size, in kilobytes.
    pub max_rss_kb: u64,
}

impl Usage {
    pub fn now() -> Self {
        // SAFETY: getrusage writes the struct it is given and nothing else.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Self {
            user_s: seconds(u.ru_utime),
            system_s: seconds(u.ru_stime),
            max_rss_kb: peak_rss_kb().unwrap_or(u.ru_maxrss as u64),
        }
    }
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_behind_the_highest_identification_are_reordered_across_the_wrap() {
        let tuple = crate::packet::FiveTuple {
            proto: 17,
            src: 1,
            dst: 2,
            sport: 3,
            dport: 4,
        };
        let mut f = FlowStats::new(tuple, 0, 0);
        for id in [65534, 65535, 1, 0, 2, 65535, 3] {
            f.count_order(id);
        }
        assert_eq!(f.reordered, 2); // 0 after 1, 65535 after 2
    }

    #[test]
    fn quantiles_are_within_a_bin_of_the_truth() {
        let mut h = Histogram::default();
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        for (q, truth) in [(0.5, 500e3), (0.9, 900e3), (0.99, 990e3)] {
            let v = h.quantile(q).unwrap();
            assert!((v / truth - 1.0).abs() < 0.08, "q{q}: {v} against {truth}");
        }
        assert_eq!(h.min_ns, 1000);
        assert_eq!(h.max_ns, 1_000_000);
        assert!((h.summary().mean_s.unwrap() - 500.5e-6).abs() < 1e-12);
    }

    #[test]
    fn an_empty_histogram_has_no_quantiles() {
        assert_eq!(Histogram::default().quantile(0.5), None);
    }
}
