//! Mechanisms several disciplines share, written once (DESIGN.md): seeded
//! hash families, EWMA with idle-time correction, per-queue FIFOs with byte
//! counts, the deficit round robin, and SFED's token buckets.

pub mod drr;
pub mod ewma;
pub mod flow_queues;
pub mod hash;
pub mod token_buckets;

pub use drr::DrrRound;
pub use ewma::Ewma;
pub use flow_queues::FlowQueues;
pub use hash::HashFamily;
pub use token_buckets::TokenBuckets;
