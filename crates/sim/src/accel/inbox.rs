//! The inbox of a gathering link (`Departures::Gathered`): the arrivals
//! of a FIFO that only answers reach, held in order of arrival until no
//! other arrival can come before them, then reserved in one batch.
//!
//! Every arrival at a gathering link is the ACK of a data packet answered
//! by its receiver; the data packet's arrival there is known once the link
//! before the receiver's express link has sent it (reserved it, sent it in
//! an event, or, deferring its departures, at most half its delay late:
//! `Link::sent_ahead`), at least `lead` (the propagation delays left from
//! there to the gathering link) before the ACK can reach it. So at
//! time `now` every arrival before `now + lead` is already in the inbox,
//! except the answers to packets on their way to receivers that were not
//! answered ahead: the inbox counts those (`expect`, `answered`) and holds
//! back the arrivals from the earliest time their answers could come.
//! See docs/simulator.md, "Gathering links".

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::engine::events::Event;
use crate::packet::SimPacket;
use crate::scenario::Ties;
use crate::Time;

pub struct Inbox {
    /// The gathering link.
    pub link: u32,
    /// No answer can reach the link sooner than this after the data
    /// packet it answers was reserved on its way to the receiver.
    lead: Time,
    /// No answer can reach the link sooner than this after the data
    /// packet it answers reached its receiver.
    tail: Time,
    /// The arrivals, `at` their arrival time at the link, in order of
    /// arrival, ties in the order of the links they come from (the order
    /// of those links' pipe heads in the reference: `Event`'s order).
    packets: VecDeque<SimPacket>,
    /// When the data packets on their way to receivers in pipes, not
    /// answered ahead, whose answers will come here, reach their
    /// receivers. They are answered in that order (their arrivals are
    /// events), so the earliest is the next answered.
    expected: BinaryHeap<Reverse<Time>>,
    /// When the pending `TxDone` event that drains the inbox is due
    /// (`Time::MAX`: none).
    armed_at: Time,
    /// The order of the pipe heads' events at one time, as the calendar's.
    ties: Ties,
}

/// `a`'s place in the order of arrivals beside `b`'s: by time, ties
/// (rarely: the key may take a hash) in the order of the pipe heads that
/// bring them in the reference (under `ties`), from the links `from` says
/// they come from (looked up only at a tie, so that an arrival holds no
/// more than its packet).
#[inline]
fn order(
    a: &SimPacket,
    b: &SimPacket,
    ties: Ties,
    from: impl Fn(&SimPacket) -> u32,
) -> std::cmp::Ordering {
    a.at.cmp(&b.at).then_with(|| {
        let key = |p: &SimPacket| Event::PipeHead(from(p)).key(p.at, ties);
        key(a).cmp(&key(b))
    })
}

impl Inbox {
    /// The inbox of gathering link `link`, whose arrivals at one time
    /// come in the order `ties` gives their pipe heads.
    pub fn new(link: u32, lead: Time, tail: Time, ties: Ties) -> Self {
        Self {
            link,
            lead,
            tail,
            packets: VecDeque::new(),
            expected: BinaryHeap::new(),
            armed_at: Time::MAX,
            ties,
        }
    }

    /// Take in an arrival (at `packet.at`), nearly always the latest;
    /// `from` tells the link an arrival comes from.
    #[inline]
    pub fn insert(&mut self, packet: SimPacket, from: impl Fn(&SimPacket) -> u32) {
        match self.packets.back() {
            Some(last) if order(last, &packet, self.ties, &from).is_gt() => {
                self.insert_sorted(packet, from)
            }
            _ => self.packets.push_back(packet),
        }
    }

    /// An arrival before the latest (an answer not given ahead, or one
    /// whose receiver is nearer): placed in order.
    #[cold]
    fn insert_sorted(&mut self, packet: SimPacket, from: impl Fn(&SimPacket) -> u32) {
        let ties = self.ties;
        let i = (self.packets).partition_point(|p| order(p, &packet, ties, &from).is_le());
        self.packets.insert(i, packet);
    }

    /// A data packet reaching its receiver at `at` will be answered in its
    /// arrival's event, not ahead.
    pub fn expect(&mut self, at: Time) {
        self.expected.push(Reverse(at));
    }

    /// The earliest expected packet has reached its receiver and been
    /// answered (its answer is in the inbox, or dropped on the way).
    pub fn answered(&mut self) {
        self.expected.pop();
    }

    /// At time `now`, every arrival before this is in the inbox, and the
    /// link's counters are not read before the arrivals at `before` (the
    /// measurement window's opening, until it opens).
    #[inline]
    pub fn horizon(&self, now: Time, before: Time) -> Time {
        let expected = self.expected.peek().map_or(Time::MAX, |e| e.0 + self.tail);
        (now + self.lead).min(expected).min(before)
    }

    /// The next arrival, if it comes before `horizon`.
    #[inline]
    pub fn pop_before(&mut self, horizon: Time) -> Option<SimPacket> {
        if self.packets.front()?.at < horizon {
            self.packets.pop_front()
        } else {
            None
        }
    }

    /// The `k`-th arrival held, counting from the first (to fetch what it
    /// will read early).
    #[inline]
    pub fn get(&self, k: usize) -> Option<&SimPacket> {
        self.packets.get(k)
    }

    /// An event to drain the inbox is wanted at `at`: whether one must be
    /// scheduled (none is pending by then).
    pub fn arm(&mut self, at: Time) -> bool {
        let earlier = at < self.armed_at;
        if earlier {
            self.armed_at = at;
        }
        earlier
    }

    /// A drain event runs at `now`: whether it is the one pending (an
    /// earlier one may have superseded it), which is then used up.
    pub fn fire(&mut self, now: Time) -> bool {
        let due = self.armed_at == now;
        if due {
            self.armed_at = Time::MAX;
        }
        due
    }

    /// When the first arrival held is due.
    pub fn first_due(&self) -> Option<Time> {
        self.packets.front().map(|p| p.at)
    }

    /// Packets held (on their way to the link).
    pub fn len(&self) -> usize {
        self.packets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Inbox;
    use crate::engine::events::Event;
    use crate::packet::{Kind, SimPacket};
    use crate::scenario::Ties;

    fn at(t: u64, flow: u32) -> SimPacket {
        SimPacket {
            stamp: 0,
            at: t,
            flow,
            route: 0,
            seq: 0,
            size: 40,
            epoch: 0,
            hop: 1,
            kind: Kind::Ack,
            class: Default::default(),
            ecn: Default::default(),
            ece: false,
            tag: 0,
        }
    }

    /// The arrivals' (time, flow) as they leave an inbox ordering ties by
    /// `ties`.
    fn leaving(ties: Ties) -> Vec<(u64, u32)> {
        let mut inbox = Inbox::new(0, 100, 10, ties);
        let arrivals = [
            (50, 0, 9),
            (70, 1, 8),
            (60, 2, 9),
            (70, 3, 2),
            (10, 4, 1),
            (70, 5, 5),
        ];
        let from = |p: &SimPacket| arrivals[p.flow as usize].2;
        for (t, f, _) in arrivals {
            inbox.insert(at(t, f), from);
        }
        let mut out = Vec::new();
        while let Some(p) = inbox.pop_before(inbox.horizon(1_000, u64::MAX)) {
            out.push((p.at, p.flow));
        }
        out
    }

    #[test]
    fn arrivals_leave_in_time_order_ties_as_their_links_pipe_heads() {
        let mut tie = [(8, 1), (2, 3), (5, 5)];
        tie.sort_by_key(|&(from, _)| Event::PipeHead(from).key(70, Ties::Hashed));
        let mut expected = vec![(10, 4), (50, 0), (60, 2)];
        expected.extend(tie.map(|(_, f)| (70, f)));
        assert_eq!(leaving(Ties::Hashed), expected);
    }

    /// Numbered, the arrival from the lowest-numbered link first.
    #[test]
    fn numbered_ties_leave_lowest_link_first() {
        let expected = [(10, 4), (50, 0), (60, 2), (70, 3), (70, 5), (70, 1)];
        assert_eq!(leaving(Ties::Numbered), expected);
    }

    #[test]
    fn holds_back_what_could_still_be_overtaken() {
        let mut inbox = Inbox::new(0, 100, 10, Ties::default());
        inbox.insert(at(150, 0), |_| 0);
        inbox.insert(at(120, 1), |_| 0);
        // At 20, an answer reserved now could arrive at 120: nothing yet.
        assert_eq!(inbox.horizon(20, u64::MAX), 120);
        assert!(inbox.pop_before(120).is_none());
        assert_eq!(inbox.pop_before(121).map(|p| p.flow), Some(1));
        // A packet expected at its receiver at 100 answers at 110 at the
        // soonest: hold back from then until it is answered.
        inbox.expect(100);
        inbox.expect(90);
        assert_eq!(inbox.horizon(60, u64::MAX), 100);
        inbox.answered();
        assert_eq!(inbox.horizon(60, u64::MAX), 110);
        inbox.answered();
        assert_eq!(inbox.horizon(60, u64::MAX), 160);
        assert_eq!(inbox.horizon(60, 150), 150, "the window opens at 150");
        assert!(inbox.pop_before(150).is_none());
        assert_eq!(inbox.pop_before(151).map(|p| p.flow), Some(0));
        assert_eq!(inbox.len(), 0);
    }
}
