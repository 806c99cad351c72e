use crate::verdicts::Checkpoint;
use crate::{
    Backlog, Limit, Packet, QdiscCounters, QdiscSpec, QdiscStats, QueueDiscipline, Time, Verdicts,
};

/// A queue discipline with its accounting.
///
/// Every discipline is wrapped in one: the counting of arrivals, departures,
/// drops by reason, marks and peak backlog is written here once instead of in
/// each discipline, into the [`QdiscCounters`] the caller passes (kept apart,
/// so that the caller decides where the counters live). The caller drains
/// `verdicts` after each call; `Qdisc` has already counted what they hold.
pub struct Qdisc<P: Packet> {
    /// Boxed whole, so that a `Qdisc` is one thin pointer.
    inner: Box<Inner<P>>,
}

struct Inner<P: Packet> {
    discipline: Box<dyn QueueDiscipline<P> + Send>,
    /// [`QueueDiscipline::has_clock`], asked once: most have none, and
    /// asking them for their next wake-up after every packet cost a virtual
    /// call each time.
    has_clock: bool,
    /// [`QueueDiscipline::drops_on_dequeue`], asked once.
    drops_on_dequeue: bool,
}

/// The accounting identity failed: a discipline lost or invented packets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConservationError {
    pub discipline: &'static str,
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
    pub backlog: u64,
}

impl std::fmt::Display for ConservationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: arrivals {} != departures {} + drops {} + backlog {}",
            self.discipline, self.arrivals, self.departures, self.drops, self.backlog
        )
    }
}

impl<'a> QdiscStats<'a> {
    /// Check arrivals = departures + drops + `backlog` for the queue of
    /// discipline `name`.
    pub fn check_conservation(
        &self,
        name: &'static str,
        backlog: u64,
    ) -> Result<(), ConservationError> {
        if self.arrivals == self.departures + self.total_drops() + backlog {
            Ok(())
        } else {
            Err(ConservationError {
                discipline: name,
                arrivals: self.arrivals,
                departures: self.departures,
                drops: self.total_drops(),
                backlog,
            })
        }
    }
}

impl<P: Packet> Qdisc<P> {
    pub fn new(discipline: Box<dyn QueueDiscipline<P> + Send>) -> Self {
        Self {
            inner: Box::new(Inner {
                has_clock: discipline.has_clock(),
                drops_on_dequeue: discipline.drops_on_dequeue(),
                discipline,
            }),
        }
    }

    /// The discipline a spec describes, with its accounting.
    pub fn from_spec(spec: &QdiscSpec, seed: u64) -> Self
    where
        P: Send + 'static,
    {
        Self::new(spec.build(seed))
    }

    pub fn name(&self) -> &'static str {
        self.inner.discipline.name()
    }

    #[inline]
    pub fn enqueue(
        &mut self,
        counters: &mut QdiscCounters,
        packet: P,
        now: Time,
        verdicts: &mut Verdicts<P>,
    ) {
        count_arrival(counters, &packet);
        let mark = verdicts.checkpoint();
        self.inner.discipline.enqueue(packet, now, verdicts);
        account(counters, verdicts, mark);
        counters.note_peak(self.backlog().packets);
    }

    /// Everything counted: `counters`, the ones passed to every call.
    pub fn stats<'a>(&self, counters: &'a QdiscCounters) -> QdiscStats<'a> {
        QdiscStats::new(counters, 0, 0)
    }

    /// Whether the discipline may ask to be woken (see `next_wakeup`).
    #[inline]
    pub fn has_clock(&self) -> bool {
        self.inner.has_clock
    }

    /// Whether only the discipline's arrivals and departures, in time
    /// order, change it (no clock, no drop on dequeue), so that its caller
    /// may run its departures late, each at its own time, once they are
    /// needed (see [`QueueDiscipline::drops_on_dequeue`]). Not a FIFO,
    /// whose future its arrivals tell at once (`fifo_limit`).
    pub fn defers_departures(&self) -> bool {
        !self.inner.has_clock && !self.inner.drops_on_dequeue && self.fifo_limit().is_none()
    }

    /// The queues a flow's key hashes to ([`QueueDiscipline::queues_of`]).
    pub fn queues_of(&self, key: u64) -> Vec<u32> {
        self.inner.discipline.queues_of(key)
    }

    /// Tell the discipline a flow's hosts ([`QueueDiscipline::learn_hosts`]).
    pub fn learn_hosts(&mut self, key: u64, hosts: u64) {
        self.inner.discipline.learn_hosts(key, hosts)
    }

    /// The limit of a plain FIFO (DropTail), whose departures are known at
    /// each arrival; `None` for any other discipline.
    pub fn fifo_limit(&self) -> Option<Limit> {
        self.inner.discipline.fifo_limit()
    }

    #[inline]
    pub fn dequeue(
        &mut self,
        counters: &mut QdiscCounters,
        now: Time,
        verdicts: &mut Verdicts<P>,
    ) -> Option<P> {
        let mark = verdicts.checkpoint();
        let packet = self.inner.discipline.dequeue(now, verdicts);
        if let Some(p) = &packet {
            count_departure(counters, p);
        }
        account(counters, verdicts, mark);
        packet
    }

    /// The next instant the discipline needs `wakeup`: never without a
    /// clock.
    #[inline]
    pub fn next_wakeup(&self) -> Option<Time> {
        match self.inner.has_clock {
            true => self.inner.discipline.next_wakeup(),
            false => {
                debug_assert!(self.says_its_clock(), "{} has a clock", self.name());
                None
            }
        }
    }

    /// Whether the discipline said it has a clock if it needs one: a
    /// discipline without a clock (`has_clock` false) is never asked for
    /// its wake-up, so one that forgot to say would never be woken. Checked
    /// after every call by the trace tests (`testkit::run_trace`).
    pub fn says_its_clock(&self) -> bool {
        self.inner.has_clock || self.inner.discipline.next_wakeup().is_none()
    }

    pub fn wakeup(&mut self, counters: &mut QdiscCounters, now: Time, verdicts: &mut Verdicts<P>) {
        let mark = verdicts.checkpoint();
        self.inner.discipline.wakeup(now, verdicts);
        account(counters, verdicts, mark);
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        self.inner.discipline.backlog()
    }

    /// Check arrivals = departures + drops + backlog.
    pub fn check_conservation(&self, counters: &QdiscCounters) -> Result<(), ConservationError> {
        (self.stats(counters)).check_conservation(self.name(), self.backlog().packets)
    }
}

#[inline]
fn count_arrival<P: Packet>(counters: &mut QdiscCounters, packet: &P) {
    counters.count_arrival(packet.size());
}

#[inline]
fn count_departure<P: Packet>(counters: &mut QdiscCounters, packet: &P) {
    counters.count_departures(1, packet.size() as u64);
}

/// Count what the discipline reported since `since`. The verdicts stay in
/// the sink for the caller to drain.
#[inline]
fn account<P: Packet>(counters: &mut QdiscCounters, verdicts: &Verdicts<P>, since: Checkpoint) {
    let dropped = &verdicts.dropped()[since.dropped..];
    let marked = verdicts.marked() - since.marked;
    if dropped.is_empty() && marked == 0 {
        return;
    }
    for d in dropped {
        counters.count_drop(d.reason, d.packet.size(), d.buffered);
    }
    let s = counters.losses_mut();
    s.marks += marked;
    s.mark_bytes += verdicts.marked_bytes() - since.marked_bytes;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;
    use crate::{DropTailParams, Limit};

    fn fifo(limit: Limit) -> Qdisc<TestPacket> {
        Qdisc::from_spec(&QdiscSpec::Droptail(DropTailParams { limit }), 0)
    }

    /// One pointer: what a simulator's link holds of it.
    #[test]
    fn a_qdisc_is_one_pointer() {
        assert_eq!(std::mem::size_of::<Qdisc<TestPacket>>(), 8);
    }

    /// Arrivals, departures, drops and the peak, counted; the identity
    /// checked.
    #[test]
    fn counts_what_passes_and_what_is_refused() {
        let mut q = fifo(Limit::Packets(2));
        let mut counters = QdiscCounters::default();
        let mut verdicts = Verdicts::new();
        for seq in 0..3 {
            q.enqueue(
                &mut counters,
                TestPacket::new(1, seq, 100),
                0,
                &mut verdicts,
            );
        }
        assert_eq!(verdicts.dropped().len(), 1);
        q.dequeue(&mut counters, 0, &mut verdicts).unwrap();
        let s = q.stats(&counters);
        assert_eq!(
            (s.arrivals, s.departures, s.total_drops(), s.peak_packets),
            (3, 1, 1, 2)
        );
        assert_eq!(q.fifo_limit(), Some(Limit::Packets(2)));
        q.check_conservation(&counters).unwrap();
    }
}
