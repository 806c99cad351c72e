//! The queues of the sorted-priority fair-queueing schedulers (SCFQ, WF2Q+;
//! seed 000, chapter 7): one FIFO per flow, made at the flow's first packet
//! with the flow's weight, in one shared buffer. The schedulers differ only
//! in the tags they keep beside them.

use std::ops::{Deref, DerefMut};

use crate::blocks::{FlowQueues, FlowWeights, QueueMap};
use crate::{Limit, Packet};

/// Per-flow FIFOs ([`FlowQueues`], which this derefs to), with each flow's
/// weight and the buffer's limit.
pub struct WeightedQueues<P> {
    map: QueueMap,
    queues: FlowQueues<P>,
    limit: Limit,
    weights: FlowWeights,
    weight: Vec<f64>,
}

impl<P: Packet> WeightedQueues<P> {
    pub fn new(limit: Limit, weights: FlowWeights) -> Self {
        Self {
            map: QueueMap::per_flow(),
            queues: FlowQueues::new(0),
            limit,
            weights,
            weight: Vec::new(),
        }
    }

    /// Whether the buffer has room for `packet`.
    #[inline]
    pub fn admits(&self, packet: &P) -> bool {
        self.limit.admits(self.queues.total(), packet.size())
    }

    /// The queue of flow `key`, made with the flow's weight if the flow is
    /// new (queues are numbered in order of first arrival).
    #[inline]
    pub fn classify(&mut self, key: u64) -> usize {
        let q = self.map.classify(key);
        if q == self.queues.count() {
            self.queues.add_queue();
            self.weight.push(self.weights.get(key));
        }
        q
    }

    /// Queue `q`'s weight.
    #[inline]
    pub fn weight(&self, q: usize) -> f64 {
        self.weight[q]
    }
}

impl<P> Deref for WeightedQueues<P> {
    type Target = FlowQueues<P>;

    fn deref(&self) -> &FlowQueues<P> {
        &self.queues
    }
}

impl<P> DerefMut for WeightedQueues<P> {
    fn deref_mut(&mut self) -> &mut FlowQueues<P> {
        &mut self.queues
    }
}
