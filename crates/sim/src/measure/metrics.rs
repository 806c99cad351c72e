//! Result tables and the small accumulators behind them.

use std::borrow::Cow;
use std::sync::Arc;

use crate::names::Names;
use crate::Time;

/// One column of a result table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    Str(Names),
    /// Strings that repeat (node names, kinds, disciplines): each row an
    /// index into `values`, which columns may share, so a table with a row
    /// per link or flow holds no string of its own for them.
    Cat {
        values: Arc<Names>,
        codes: Vec<u32>,
    },
    Bool(Vec<bool>),
    /// Nullable columns (missing values become nulls in Python).
    OptF64(Vec<Option<f64>>),
    OptU64(Vec<Option<u64>>),
    /// A list of numbers per row, or a missing value.
    OptListU32(Vec<Option<Vec<u32>>>),
}

impl Column {
    /// Rows.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Cat { codes, .. } => codes.len(),
            Column::Bool(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::OptU64(v) => v.len(),
            Column::OptListU32(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table as named columns of equal length (what polars is built from).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &str, column: Column) {
        self.columns.push((name.to_string(), column));
    }

    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    pub fn f64(&self, name: &str) -> &[f64] {
        match self.get(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }

    /// A column of strings, stored plainly or as categories.
    pub fn strings(&self, name: &str) -> Vec<Cow<'_, str>> {
        match self.get(name) {
            Some(Column::Str(v)) => v.iter().collect(),
            Some(Column::Cat { values, codes }) => {
                codes.iter().map(|&c| values.get(c as usize)).collect()
            }
            _ => panic!("no string column {name}"),
        }
    }

    pub fn u64(&self, name: &str) -> &[u64] {
        match self.get(name) {
            Some(Column::U64(v)) => v,
            _ => panic!("no u64 column {name}"),
        }
    }
}

/// A summary value.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    F64(f64),
    U64(u64),
    Str(String),
    Bool(bool),
}

/// Queueing delays on a log scale: bin 0 is [0, 1 us); then eight bins per
/// decade up to 100 s. Mean kept exactly.
#[derive(Clone, Debug)]
pub struct DelayHistogram {
    pub counts: Vec<u64>,
    pub sum_ns: u128,
    pub samples: u64,
}

pub const BINS_PER_DECADE: usize = 8;
const DECADES: usize = 8;

/// Bins: [0, 1 us), then eight per decade up to 100 s.
const BINS: usize = 1 + BINS_PER_DECADE * DECADES;

impl Default for DelayHistogram {
    /// Empty and unallocated: most links are never monitored.
    fn default() -> Self {
        Self {
            counts: Vec::new(),
            sum_ns: 0,
            samples: 0,
        }
    }
}

impl DelayHistogram {
    #[inline]
    pub fn record(&mut self, delay: Time) {
        if self.counts.is_empty() {
            self.counts = vec![0; BINS];
        }
        self.counts[Self::bin(delay)] += 1;
        self.sum_ns += delay as u128;
        self.samples += 1;
    }

    /// The bin of a delay, by definition: 1 + 8 log10(delay / 1 us), floored.
    fn bin_by_log(delay: Time) -> usize {
        if delay < 1_000 {
            0
        } else {
            let b = 1 + (BINS_PER_DECADE as f64 * (delay as f64 / 1_000.0).log10()) as usize;
            b.min(BINS - 1)
        }
    }

    /// The same bin from a table of each bin's lowest delay in ns, found once
    /// by bisection on `bin_by_log` itself (it rises with the delay), so the
    /// bins are exactly those of the formula without a log10 per packet.
    /// The delay's power of two gives the bin of its octave's start; an
    /// octave spans 2.4 bins, so at most three edge comparisons (free of
    /// branches) finish the job, instead of a binary search of the table.
    #[inline]
    fn bin(delay: Time) -> usize {
        struct Tables {
            /// `edge[b]`: the highest delay of bin `b` (the last: all).
            edge: [Time; BINS],
            /// `start[k]`: the bin of delay 2^k.
            start: [u8; 64],
        }
        static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
        let t = TABLES.get_or_init(|| {
            let edge = std::array::from_fn(|k| {
                if k == BINS - 1 {
                    return Time::MAX;
                }
                let (mut lo, mut hi) = (0, 1 << 62); // bin_by_log(lo) <= k < bin_by_log(hi)
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if Self::bin_by_log(mid) > k {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                hi - 1
            });
            let start = std::array::from_fn(|k| Self::bin_by_log(1 << k) as u8);
            Tables { edge, start }
        });
        let octave = 63 - (delay | 1).leading_zeros() as usize;
        let mut b = t.start[octave] as usize;
        for _ in 0..3 {
            b += (delay > t.edge[b]) as usize;
        }
        b
    }

    /// Bin `i` covers `[low, high)` seconds.
    pub fn bounds(i: usize) -> (f64, f64) {
        let edge = |k: usize| 1e-6 * 10f64.powf(k as f64 / BINS_PER_DECADE as f64);
        if i == 0 {
            (0.0, 1e-6)
        } else {
            (edge(i - 1), edge(i))
        }
    }

    pub fn mean_s(&self) -> f64 {
        if self.samples == 0 {
            f64::NAN
        } else {
            self.sum_ns as f64 / self.samples as f64 * 1e-9
        }
    }

    /// Upper edge of the bin holding quantile `q` (an upper bound).
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.samples == 0 {
            return f64::NAN;
        }
        let target = (q * self.samples as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= target {
                return Self::bounds(i).1;
            }
        }
        Self::bounds(self.counts.len() - 1).1
    }
}

/// Jain's fairness index (Jain, Chiu, Hawe 1984): (sum x)^2 / (n sum x^2).
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (n * sq)
    }
}

/// Long-format time series: (time, metric, entity, value) rows.
#[derive(Default)]
pub struct TimeSeries {
    pub time_s: Vec<f64>,
    pub metric: Vec<&'static str>,
    pub entity: Vec<u32>,
    pub value: Vec<f64>,
}

impl TimeSeries {
    #[inline]
    pub fn push(&mut self, time: Time, metric: &'static str, entity: u32, value: f64) {
        self.time_s.push(time as f64 / 1e9);
        self.metric.push(metric);
        self.entity.push(entity);
        self.value.push(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_of_equal_shares_is_one_and_of_one_hog_is_one_over_n() {
        assert!((jain_index(&[3.0, 3.0, 3.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn histogram_bins_and_quantiles() {
        let mut h = DelayHistogram::default();
        assert!(h.counts.is_empty());
        h.record(500); // bin 0
        h.record(1_000); // 1 us: bin 1
        h.record(10_000_000); // 10 ms = 10^4 us: bin 1 + 32
        assert_eq!(h.counts[0], 1);
        assert_eq!(h.counts[1], 1);
        assert_eq!(h.counts[33], 1);
        let (lo, hi) = DelayHistogram::bounds(33);
        assert!(lo <= 0.010 && 0.010 < hi * 1.0001);
        assert!((h.quantile_s(1.0) - hi).abs() < 1e-12);
        assert!((h.mean_s() - (500.0 + 1000.0 + 1e7) / 3.0 * 1e-9).abs() < 1e-15);
    }

    /// The table gives the formula's bin for every delay near a bin edge and
    /// for a spread of others.
    #[test]
    fn bin_table_matches_the_formula() {
        let mut delays: Vec<Time> = (0..3_000).collect();
        for k in 0..=BINS as u32 {
            let edge = (1_000.0 * 10f64.powf(k as f64 / BINS_PER_DECADE as f64)) as Time;
            delays.extend(edge.saturating_sub(3)..edge + 3);
        }
        for k in 0..63 {
            delays.extend((1u64 << k).saturating_sub(2)..(1 << k) + 2);
        }
        delays.push(Time::MAX);
        let mut rng = aqmlab_qdisc::rng::Rng::new(5);
        delays.extend((0..100_000).map(|_| rng.below(1 << 40)));
        for d in delays {
            assert_eq!(
                DelayHistogram::bin(d),
                DelayHistogram::bin_by_log(d),
                "delay {d} ns"
            );
        }
    }
}
