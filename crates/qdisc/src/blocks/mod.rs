//! Mechanisms several disciplines share, written once (DESIGN.md): seeded
//! hash families, EWMA with idle-time correction, per-queue FIFOs with byte
//! counts, the deficit round robin, per-queue lengths with O(1) longest and
//! shortest, an indexed heap, Bloom filters and the Bloom-filter flow
//! distributor, the flow-to-queue map, and the DRR queue set the
//! discard policies of seed 000 share.

pub mod bloom;
pub mod bloom_balance;
pub mod drr;
pub mod drr_queues;
pub mod ewma;
pub mod flow_queues;
pub mod hash;
pub mod indexed_heap;
pub mod lengths;
pub mod queue_map;

pub use bloom::BloomFilters;
pub use bloom_balance::{Balancing, BloomBalancer, BloomConfig};
pub use drr::DrrRound;
pub use drr_queues::{ever_fits, free_space, DrrQueues};
pub use ewma::Ewma;
pub use flow_queues::FlowQueues;
pub use hash::HashFamily;
pub use indexed_heap::IndexedHeap;
pub use lengths::QueueLengths;
pub use queue_map::{FlowMap, FlowWeights, KeyHasher, QueueMap};
