//! DropTail: a FIFO that refuses arrivals when full. Linux `pfifo`/`bfifo`;
//! ns-2/ns-3 `DropTail`. The baseline every seed compares against.

use crate::blocks::CountedFifo;
use crate::params::{params, positive_limit, SpecError};
use crate::spec::QdiscParams;
use crate::{Backlog, DropReason, Limit, Packet, QueueDiscipline, Time, Verdicts};

params! {
    /// DropTail's one parameter.
    pub struct DropTailParams {
        required {
            /// The buffer, in packets (Linux `pfifo`) or bytes (`bfifo`); no
            /// default: every seed sizes it for its experiment.
            pub limit: Limit [Buffer],
        }
    }
}

impl QdiscParams for DropTailParams {
    const SUMMARY: &'static str = "FIFO; drops arrivals that do not fit";

    fn validate(&self) -> Result<(), SpecError> {
        positive_limit(self.limit)
    }

    fn build<P: Packet + Send + 'static>(&self, _seed: u64) -> Box<dyn QueueDiscipline<P> + Send> {
        Box::new(DropTail::new(self.limit))
    }
}

pub struct DropTail<P> {
    queue: CountedFifo<P>,
    limit: Limit,
}

impl<P: Packet> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        Self {
            queue: CountedFifo::default(),
            limit,
        }
    }
}

impl<P: Packet> QueueDiscipline<P> for DropTail<P> {
    fn name(&self) -> &'static str {
        "droptail"
    }

    fn enqueue(&mut self, packet: P, _now: Time, verdicts: &mut Verdicts<P>) {
        if self.limit.admits(self.backlog(), packet.size()) {
            self.queue.push_back(packet);
        } else {
            verdicts.refuse(packet, DropReason::Overflow);
        }
    }

    fn dequeue(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) -> Option<P> {
        let packet = self.queue.pop_front()?;
        Some(packet)
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }

    fn fifo_limit(&self) -> Option<Limit> {
        Some(self.limit)
    }
}
