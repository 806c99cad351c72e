//! Gathering links: an unmonitored FIFO, not express, that only answers
//! reach, each from the first link of its route, to data packets answered
//! ahead. Its arrivals are known ahead by propagation delays, so they wait
//! in an inbox (`accel::inbox`), in order of arrival, until none can come
//! before them; then they are reserved, many to an event.

use crate::accel::hints::{prefetch, prefetch_start};
use crate::accel::inbox::Inbox;
use crate::engine::events::Event;
use crate::engine::flow::Flow;
use crate::engine::Simulation;
use crate::packet::SimPacket;
use crate::Time;

impl Simulation {
    /// Whether `packet`, reaching its host in its pipe head's event, is
    /// one whose answer a gathering link waits for (`expect_answer`).
    #[inline(always)]
    pub(crate) fn answer_awaited(&self, packet: &SimPacket) -> bool {
        (self.routes.answered_ahead(packet.route, packet.hop))
            .is_some_and(|answer| self.links[answer as usize].feeds_express)
    }

    /// `packet` reaches gathering link `l` (at its `hop`) at `at`: into its
    /// inbox, and an event to take it in by then at the latest.
    pub(crate) fn gather(&mut self, l: usize, mut packet: SimPacket, at: Time) {
        self.census.gathered();
        packet.at = at;
        let i = self.inbox_index(l);
        let (routes, inbox) = (&self.routes, &mut self.accel.inboxes[i]);
        let from = |p: &SimPacket| routes.link(p.route, p.hop - 1).expect("a link before");
        inbox.insert(packet, from);
        if inbox.arm(at) {
            self.events.schedule(at, Event::TxDone(l as u32));
        }
    }

    /// Gathering link `l`'s event: reserve the arrivals in its inbox that
    /// nothing can come before now, in order, up to a batch of them
    /// (`GATHER_BATCH`), then wait for the first left. Each is reserved as
    /// its arrival's event would (the link is a FIFO, whose future its
    /// arrivals alone decide), and goes on through the express links after
    /// it into the pipe of the last.
    #[inline(never)]
    pub(crate) fn drain_inbox(&mut self, l: usize) {
        let i = self.inbox_index(l);
        if !self.accel.inboxes[i].fire(self.now) {
            return; // superseded by an earlier one
        }
        // Constant while it drains: what leaves goes on to senders.
        let horizon = self.accel.inboxes[i].horizon(self.now, self.accel.answer_ahead_before);
        let deep_prefetch = self.accel.deep_prefetch;
        for _ in 0..self.accel.gather_batch {
            let Some(packet) = self.accel.inboxes[i].pop_before(horizon) else {
                break;
            };
            if deep_prefetch {
                self.prefetch_gathered(i);
            }
            match self.reserve(l, &packet, packet.at) {
                Some(arrive) => self.enter_pipe(l, packet, arrive),
                None => self.drop_counted_ahead(packet.at),
            }
        }
        let inbox = &mut self.accel.inboxes[i];
        if let Some(t) = inbox.first_due().filter(|&t| inbox.arm(t)) {
            self.events.schedule(t, Event::TxDone(l as u32));
        }
    }

    /// Ask the caches early for what the next arrivals of inbox `i` will
    /// read, in stages as `prefetch_ahead` does for events: the route's
    /// entry and the sender's flow, then the first entry of the flow's
    /// other route, then the link after the gathering one (the sender's)
    /// and the first link of that other route (which the sender's answer
    /// takes), then the last packet of the first one's pipe, which the
    /// arrival joins. With many flows each is nearly always a miss.
    #[inline]
    fn prefetch_gathered(&self, i: usize) {
        let inbox = &self.accel.inboxes[i];
        if let Some(p) = inbox.get(6) {
            prefetch(self.routes.entry(p.route, p.hop + 1));
            // In case it answers ahead; its number is in the packet.
            prefetch_start(&self.flows[p.flow as usize], Flow::ACK_BYTES);
        }
        let answer_route = |p: &SimPacket| self.flows[p.flow as usize].route(!p.kind.is_reverse());
        if let Some(p) = inbox.get(4) {
            prefetch(self.routes.entry(answer_route(p), 0));
        }
        if let Some(next) = inbox
            .get(3)
            .and_then(|p| self.routes.link(p.route, p.hop + 1))
        {
            prefetch(&self.links[next as usize]);
        }
        if let Some(answer) = inbox
            .get(2)
            .and_then(|p| self.routes.link(answer_route(p), 0))
        {
            prefetch(&self.links[answer as usize]);
        }
        if let Some(next) = inbox
            .get(1)
            .and_then(|p| self.routes.link(p.route, p.hop + 1))
        {
            if let Some(last) = self.pipes.back(&self.links[next as usize].pipe) {
                prefetch(last);
            }
        }
    }

    /// A data packet of `flow` reaching its receiver at `at` will be
    /// answered in its arrival's event: its gathering link waits for it.
    #[cold]
    #[inline(never)]
    pub(crate) fn expect_answer(&mut self, flow: u32, at: Time) {
        self.inbox_answering(flow).expect(at);
    }

    /// An expected data packet of `flow` (`expect_answer`) was answered.
    #[cold]
    #[inline(never)]
    pub(crate) fn answered_expected(&mut self, flow: u32) {
        self.inbox_answering(flow).answered();
    }

    /// The inbox of the gathering link that `flow`'s answers reach, the
    /// second of their route.
    fn inbox_answering(&mut self, flow: u32) -> &mut Inbox {
        let reverse = self.flows[flow as usize].reverse;
        let l = self
            .routes
            .link(reverse, 1)
            .expect("an answer link feeds a gathering link");
        self.inbox(l as usize)
    }

    /// Where gathering link `l`'s inbox is (they are kept by link).
    #[inline]
    fn inbox_index(&self, l: usize) -> usize {
        match (self.accel.inboxes).binary_search_by_key(&(l as u32), |inbox| inbox.link) {
            Ok(i) => i,
            Err(_) => unreachable!("link {l} gathers, so it has an inbox"),
        }
    }

    #[inline]
    fn inbox(&mut self, l: usize) -> &mut Inbox {
        let i = self.inbox_index(l);
        &mut self.accel.inboxes[i]
    }

    /// Packets held in the gathering links' inboxes, on their way there.
    pub fn packets_gathering(&self) -> u64 {
        self.accel
            .inboxes
            .iter()
            .map(|inbox| inbox.len() as u64)
            .sum()
    }
}

/// The most arrivals one event of a gathering link reserves. Each enters
/// a pipe, in a node from the pool's free list, which frees come back to
/// one at a time: a batch of the lead's every ACK (tens of thousands at
/// 10,000 flows and up) took nodes freed a lead ago, out of the caches,
/// one miss after another down the list; a batch this long takes nodes
/// freed since the batch before (docs/performance.md).
pub const GATHER_BATCH: usize = 256;
