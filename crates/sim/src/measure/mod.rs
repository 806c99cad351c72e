//! Measurement: counters and the packets in flight, the time series and
//! its samples, the measurement window, and the census of a run's work.

pub mod census;
pub mod kept_samples;
pub mod ledger;
pub mod metrics;
pub mod samples;
pub mod window;
