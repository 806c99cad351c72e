//! Mechanisms several disciplines share, written once (DESIGN.md): the
//! single-queue disciplines' FIFO with its byte count, seeded hash families, EWMA with idle-time correction, per-queue FIFOs with byte
//! counts (a ring each, or lists in one shared pool), the deficit round robin (and FQ-CoDel's sparse-flow variant),
//! SFED's token buckets, the CoDel control loop, time-stamped packets,
//! per-queue lengths with O(1) longest and shortest, an indexed heap, Bloom
//! filters and the Bloom-filter flow distributor, the flow-to-queue map, and
//! the DRR queue set the discard policies of seed 000 share (with each
//! queue's FIFO, DRR and length records in one cache line, `per_queue`), and
//! the weighted per-flow queues of SCFQ and WF2Q+.

pub mod bloom;
pub mod bloom_balance;
pub mod codel;
pub mod counted_fifo;
pub mod drr;
pub mod drr_queues;
pub mod ewma;
pub mod flow_queues;
pub mod hash;
pub mod indexed_heap;
pub mod lengths;
pub mod per_queue;
pub mod pooled_queues;
pub mod queue_map;
pub mod stamped;
pub mod token_buckets;
pub mod weighted_queues;

pub use bloom::BloomFilters;
pub use bloom_balance::{Balancing, BloomBalancer, BloomConfig, BloomParams};
pub use codel::{CodelConfig, CodelQueue, CodelVars, FlowHead};
pub use counted_fifo::CountedFifo;
pub use drr::{DrrRing, DrrRound, Member, SparseRound};
pub(crate) use drr_queues::delegate_to_drr_queues;
pub use drr_queues::{ever_fits, free_space, DrrQueues, PerFlowQueues};
pub use ewma::Ewma;
pub use flow_queues::{Fifos, FlowQueues};
pub use hash::HashFamily;
pub use indexed_heap::IndexedHeap;
pub use lengths::{Place, QueueLengths};
pub use per_queue::PerQueue;
pub use pooled_queues::{Fifo, PooledQueues};
pub use queue_map::{FlowMap, FlowWeight, FlowWeights, KeyHasher, Mapping, QueueMap, WeightParams};
pub use stamped::Stamped;
pub use token_buckets::TokenBuckets;
pub use weighted_queues::WeightedQueues;
