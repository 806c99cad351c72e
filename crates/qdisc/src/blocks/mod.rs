//! Mechanisms several disciplines share, written once (DESIGN.md): seeded
//! hash families, EWMA with idle-time correction, per-queue FIFOs with byte
//! counts, and the deficit round robin.

pub mod drr;
pub mod ewma;
pub mod flow_queues;
pub mod hash;

pub use drr::DrrRound;
pub use ewma::Ewma;
pub use flow_queues::FlowQueues;
pub use hash::HashFamily;
