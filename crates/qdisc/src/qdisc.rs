use crate::verdicts::Checkpoint;
use crate::{
    Backlog, DropReason, DropTail, DropTailParams, Packet, QdiscCounters, QdiscSpec, QdiscStats,
    QueueDiscipline, Time, Verdicts,
};

/// A queue discipline with its accounting.
///
/// Every discipline is wrapped in one: the counting of arrivals, departures,
/// drops by reason, marks and peak backlog is written here once instead of in
/// each discipline, into the [`QdiscCounters`] the caller passes (kept apart,
/// so that a packet through an idle FIFO touches only the `Qdisc`'s 24
/// bytes: a simulated link's one hot cache line holds them). The caller
/// drains `verdicts` after each call; `Qdisc` has already counted what they
/// hold.
pub struct Qdisc<P: Packet> {
    discipline: Discipline<P>,
    passed: Passed,
}

/// The discipline itself, in 16 bytes. A FIFO, the most common queue by
/// far (every access link of a simulated network), is held inline: no
/// pointer to follow and no virtual call on the simulator's hottest path.
/// Any other is boxed behind a thin pointer, which the FIFO's niche tells
/// apart without a tag.
enum Discipline<P: Packet> {
    Fifo(DropTail<P>),
    Boxed(Box<Boxed<P>>),
}

/// Any discipline but the FIFO: the trait object's fat pointer lives here,
/// so that `Discipline` holds a thin one (a pointer more to follow, for
/// the few links that are not FIFOs, which stay in the caches).
struct Boxed<P: Packet> {
    discipline: Box<dyn QueueDiscipline<P> + Send>,
    /// [`QueueDiscipline::has_clock`], asked once: most have none, and
    /// asking them for their next wake-up after every packet cost a virtual
    /// call each time.
    has_clock: bool,
    /// [`QueueDiscipline::drops_on_dequeue`], asked once.
    drops_on_dequeue: bool,
}

/// Packets let through an idle FIFO (`Qdisc::pass_through`), each counted
/// once here rather than as an arrival and a departure in the counters
/// apart; 32 bits each, added to the counters before they would overflow.
#[derive(Clone, Copy, Default)]
struct Passed {
    packets: u32,
    bytes: u32,
}

impl Passed {
    /// Add these and one more packet of `size` bytes to `counters`.
    #[cold]
    fn empty_into(&mut self, counters: &mut QdiscCounters, size: u32) {
        let (packets, bytes) = (self.packets as u64 + 1, self.bytes as u64 + size as u64);
        counters.totals.count_passed(packets, bytes);
        *self = Passed::default();
    }
}

/// Call a method of whichever discipline is inside, statically for a FIFO.
macro_rules! each {
    (&mut $discipline:expr, $d:ident => $call:expr) => {
        match &mut $discipline {
            Discipline::Fifo($d) => $call,
            Discipline::Boxed(boxed) => {
                let $d = &mut boxed.discipline;
                $call
            }
        }
    };
    (&$discipline:expr, $d:ident => $call:expr) => {
        match &$discipline {
            Discipline::Fifo($d) => $call,
            Discipline::Boxed(boxed) => {
                let $d = &boxed.discipline;
                $call
            }
        }
    };
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

impl<P: Packet> Qdisc<P> {
    pub fn new(discipline: Box<dyn QueueDiscipline<P> + Send>) -> Self {
        Self::with(Self::boxed(discipline))
    }

    fn with(discipline: Discipline<P>) -> Self {
        Self {
            discipline,
            passed: Passed::default(),
        }
    }

    fn boxed(discipline: Box<dyn QueueDiscipline<P> + Send>) -> Discipline<P> {
        Discipline::Boxed(Box::new(Boxed {
            has_clock: discipline.has_clock(),
            drops_on_dequeue: discipline.drops_on_dequeue(),
            discipline,
        }))
    }

    /// The discipline a spec describes, with its accounting.
    pub fn from_spec(spec: &QdiscSpec, seed: u64) -> Self
    where
        P: Send + 'static,
    {
        let discipline = match *spec {
            QdiscSpec::Droptail(DropTailParams { limit }) => Discipline::Fifo(DropTail::new(limit)),
            _ => Self::boxed(spec.build(seed)),
        };
        Self::with(discipline)
    }

    pub fn name(&self) -> &'static str {
        each!(&self.discipline, d => d.name())
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
        each!(&mut self.discipline, d => d.enqueue(packet, now, verdicts));
        account(counters, verdicts, mark);
        self.note_peak(counters);
    }

    /// `enqueue` for the inline FIFO, whose one verdict is refusing the
    /// arrival; returns whether the packet was admitted. An admitted packet
    /// (nearly all of them) needs no look at the verdicts.
    #[inline]
    pub fn enqueue_fifo(
        &mut self,
        counters: &mut QdiscCounters,
        packet: P,
        now: Time,
        verdicts: &mut Verdicts<P>,
    ) -> bool {
        if !matches!(&self.discipline, Discipline::Fifo(fifo) if fifo.admits(&packet)) {
            let mark = verdicts.checkpoint();
            self.enqueue(counters, packet, now, verdicts);
            return verdicts.dropped().len() == mark.dropped;
        }
        count_arrival(counters, &packet);
        if let Discipline::Fifo(fifo) = &mut self.discipline {
            fifo.push(packet, verdicts);
        }
        self.note_peak(counters);
        true
    }

    #[inline]
    fn note_peak(&self, counters: &mut QdiscCounters) {
        let packets = self.backlog().packets;
        let t = &mut counters.totals;
        t.peak_packets = t.peak_packets.max(packets);
    }

    /// Let an arrival through when the discipline is an empty FIFO that
    /// admits it and the caller will transmit it at once: the packet is
    /// counted in and out as `enqueue` then `dequeue` would count it,
    /// without touching the buffer. Returns false, having done nothing,
    /// otherwise. Counted in the `Qdisc` itself: `counters` are asked for
    /// only when its 32-bit counts are full, every 4 GB.
    #[inline]
    pub fn pass_through<'c>(
        &mut self,
        packet: &P,
        counters: impl FnOnce() -> &'c mut QdiscCounters,
    ) -> bool {
        let Discipline::Fifo(fifo) = &self.discipline else {
            return false;
        };
        if !fifo.lets_pass(packet) {
            return false;
        }
        let p = &mut self.passed;
        match (p.packets.checked_add(1), p.bytes.checked_add(packet.size())) {
            (Some(packets), Some(bytes)) => *p = Passed { packets, bytes },
            _ => p.empty_into(counters(), packet.size()),
        }
        true
    }

    /// Whether the discipline is a FIFO that, empty, lets a packet of
    /// `size` bytes pass (`pass_through`).
    pub fn admits_into_empty(&self, size: u32) -> bool {
        matches!(&self.discipline, Discipline::Fifo(fifo) if fifo.admits_into_empty(size))
    }

    /// Everything counted: `counters` (the ones passed to every call) with
    /// the packets let through.
    pub fn stats<'a>(&self, counters: &'a QdiscCounters) -> QdiscStats<'a> {
        QdiscStats::new(
            counters,
            self.passed.packets as u64,
            self.passed.bytes as u64,
        )
    }

    /// Whether the discipline may ask to be woken (see `next_wakeup`).
    #[inline]
    pub fn has_clock(&self) -> bool {
        matches!(&self.discipline, Discipline::Boxed(b) if b.has_clock)
    }

    /// Whether only the discipline's arrivals and departures, in time
    /// order, change it (no clock, no drop on dequeue), so that its caller
    /// may run its departures late, each at its own time, once they are
    /// needed (see [`QueueDiscipline::drops_on_dequeue`]). Not the FIFO,
    /// whose departures a simulator computes on arrival.
    pub fn defers_departures(&self) -> bool {
        matches!(&self.discipline, Discipline::Boxed(b) if !b.has_clock && !b.drops_on_dequeue)
    }

    /// Whether the discipline is the inline FIFO (DropTail).
    #[inline]
    pub fn is_fifo(&self) -> bool {
        matches!(self.discipline, Discipline::Fifo(_))
    }

    /// For a FIFO holding packets: where its buffer's state lies (without
    /// reading it), and then (reading it) its first packet, so that a
    /// caller can fetch what `release_fifo` will read in stages, early.
    #[inline]
    pub fn fifo_buffer(&self) -> Option<&impl Sized> {
        match &self.discipline {
            Discipline::Fifo(fifo) => fifo.buffer_state(),
            Discipline::Boxed(_) => None,
        }
    }

    /// See `fifo_buffer`.
    #[inline]
    pub fn fifo_front(&self) -> Option<&P> {
        match &self.discipline {
            Discipline::Fifo(fifo) => fifo.front(),
            Discipline::Boxed(_) => None,
        }
    }

    /// For a FIFO whose departures its caller computes (a reserving link):
    /// the packets at the front for which `left` holds leave, counted as
    /// departures. Nothing else to check: a FIFO's dequeue neither drops
    /// nor marks. Does nothing for any other discipline.
    #[inline]
    pub fn release_fifo(
        &mut self,
        counters: &mut QdiscCounters,
        left: impl Fn(&P) -> bool,
        verdicts: &mut Verdicts<P>,
    ) {
        let Discipline::Fifo(fifo) = &mut self.discipline else {
            return;
        };
        let released = fifo.release_while(left, verdicts);
        // Nearly always none: then the counters, a cache line an idle
        // link's packet otherwise never reads, are left untouched.
        if released.packets > 0 {
            counters.totals.departures += released.packets;
            counters.totals.departure_bytes += released.bytes;
        }
    }

    #[inline]
    pub fn dequeue(
        &mut self,
        counters: &mut QdiscCounters,
        now: Time,
        verdicts: &mut Verdicts<P>,
    ) -> Option<P> {
        let mark = verdicts.checkpoint();
        let packet = each!(&mut self.discipline, d => d.dequeue(now, verdicts));
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
        match &self.discipline {
            Discipline::Boxed(b) if b.has_clock => b.discipline.next_wakeup(),
            _ => {
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
        match &self.discipline {
            Discipline::Boxed(b) if !b.has_clock => b.discipline.next_wakeup().is_none(),
            _ => true,
        }
    }

    pub fn wakeup(&mut self, counters: &mut QdiscCounters, now: Time, verdicts: &mut Verdicts<P>) {
        let mark = verdicts.checkpoint();
        each!(&mut self.discipline, d => d.wakeup(now, verdicts));
        account(counters, verdicts, mark);
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        each!(&self.discipline, d => d.backlog())
    }

    /// Check arrivals = departures + drops + backlog.
    pub fn check_conservation(&self, counters: &QdiscCounters) -> Result<(), ConservationError> {
        let s = self.stats(counters);
        let backlog = self.backlog().packets;
        if s.arrivals == s.departures + s.total_drops() + backlog {
            Ok(())
        } else {
            Err(ConservationError {
                discipline: self.name(),
                arrivals: s.arrivals,
                departures: s.departures,
                drops: s.total_drops(),
                backlog,
            })
        }
    }
}

#[inline]
fn count_arrival<P: Packet>(counters: &mut QdiscCounters, packet: &P) {
    counters.totals.arrivals += 1;
    counters.totals.arrival_bytes += packet.size() as u64;
}

#[inline]
fn count_departure<P: Packet>(counters: &mut QdiscCounters, packet: &P) {
    counters.totals.departures += 1;
    counters.totals.departure_bytes += packet.size() as u64;
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
    let s = counters.losses_mut();
    for d in dropped {
        let r = d.reason.index();
        let bytes = d.packet.size() as u64;
        s.drops[r] += 1;
        s.drop_bytes[r] += bytes;
        if d.buffered {
            s.buffered_drops += 1;
            s.buffered_drop_bytes += bytes;
        }
    }
    s.marks += marked;
    s.mark_bytes += verdicts.marked_bytes() - since.marked_bytes;
}

impl DropReason {
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::TestPacket;
    use crate::Limit;

    fn fifo(limit: Limit) -> Qdisc<TestPacket> {
        Qdisc::from_spec(&QdiscSpec::Droptail(DropTailParams { limit }), 0)
    }

    /// What a link's one cache line holds of it (the simulator's `Link`).
    #[test]
    fn a_qdisc_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Qdisc<TestPacket>>(), 24);
    }

    /// Packets let through are counted in and out as `enqueue` then
    /// `dequeue` count them, also past the 32 bits they are kept in.
    #[test]
    fn passed_packets_count_as_arrivals_and_departures() {
        let mut q = fifo(Limit::Packets(10));
        let mut counters = QdiscCounters::default();
        let big = 1 << 31;
        for seq in 0..3 {
            assert!(q.pass_through(&TestPacket::new(1, seq, big), || &mut counters));
        }
        let s = q.stats(&counters);
        assert_eq!((s.arrivals, s.departures, s.peak_packets), (3, 3, 1));
        assert_eq!(
            (s.arrival_bytes, s.departure_bytes),
            (3 * big as u64, 3 * big as u64)
        );
        assert!(counters.totals.arrivals > 0, "the 32-bit count overflowed");
        q.check_conservation(&counters).unwrap();

        // As if queued and sent.
        let (mut queued, mut counted) = (fifo(Limit::Packets(10)), QdiscCounters::default());
        let mut verdicts = Verdicts::new();
        for seq in 0..3 {
            queued.enqueue(&mut counted, TestPacket::new(1, seq, big), 0, &mut verdicts);
            queued.dequeue(&mut counted, 0, &mut verdicts).unwrap();
        }
        assert_eq!(queued.stats(&counted), s);
    }
}
