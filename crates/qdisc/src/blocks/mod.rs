//! Mechanisms several disciplines share, written once (DESIGN.md): seeded
//! hash families, EWMA with idle-time correction, per-queue FIFOs with byte
//! counts, the deficit round robin (and FQ-CoDel's sparse-flow variant),
//! SFED's token buckets, the CoDel control loop, and time-stamped packets.

pub mod codel;
pub mod drr;
pub mod ewma;
pub mod flow_queues;
pub mod hash;
pub mod token_buckets;
pub mod stamped;

pub use codel::{CodelParams, CodelQueue, CodelVars, FlowHead};
pub use drr::{DrrRound, SparseRound};
pub use ewma::Ewma;
pub use flow_queues::FlowQueues;
pub use hash::HashFamily;
pub use token_buckets::TokenBuckets;
pub use stamped::Stamped;
