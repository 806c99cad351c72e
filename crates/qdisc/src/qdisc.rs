use crate::verdicts::Checkpoint;
use crate::{
    Backlog, DropReason, DropTail, Packet, QdiscSpec, QdiscStats, QueueDiscipline, Time, Verdicts,
};

/// A queue discipline with its accounting.
///
/// Every discipline is wrapped in one: the counting of arrivals, departures,
/// drops by reason, marks and peak backlog is written here once instead of in
/// each discipline. The caller drains `verdicts` after each call; `Qdisc` has
/// already counted what they hold.
///
/// The discipline first (`repr(C)`): a packet leaving a link's pipe reads
/// only whether its FIFO holds anything, in the first [`Self::FRONT_BYTES`].
#[repr(C)]
pub struct Qdisc<P: Packet> {
    discipline: Discipline<P>,
    stats: QdiscStats,
}

/// The discipline itself. A FIFO, the most common queue by far (every
/// access link of a simulated network), is held inline: no pointer to
/// follow and no virtual call on the simulator's hottest path. Any other
/// is boxed, told apart by whether it has a clock
/// ([`QueueDiscipline::has_clock`]): most have none, and asking them for
/// their next wake-up after every packet cost a virtual call each time.
enum Discipline<P: Packet> {
    Fifo(DropTail<P>),
    Any(Box<dyn QueueDiscipline<P> + Send>),
    Clocked(Box<dyn QueueDiscipline<P> + Send>),
}

/// Call a method of whichever discipline is inside, statically for a FIFO.
macro_rules! each {
    ($discipline:expr, $d:ident => $call:expr) => {
        match $discipline {
            Discipline::Fifo($d) => $call,
            Discipline::Any($d) | Discipline::Clocked($d) => $call,
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
        Self {
            discipline: Self::boxed(discipline),
            stats: QdiscStats::default(),
        }
    }

    fn boxed(discipline: Box<dyn QueueDiscipline<P> + Send>) -> Discipline<P> {
        if discipline.has_clock() {
            Discipline::Clocked(discipline)
        } else {
            Discipline::Any(discipline)
        }
    }

    /// The discipline a spec describes, with its accounting.
    pub fn from_spec(spec: &QdiscSpec, seed: u64) -> Self
    where
        P: Send + 'static,
    {
        let discipline = match *spec {
            QdiscSpec::Droptail { limit } => Discipline::Fifo(DropTail::new(limit)),
            _ => Self::boxed(spec.build(seed)),
        };
        Self {
            discipline,
            stats: QdiscStats::default(),
        }
    }

    /// The bytes at its start that tell whether a FIFO holds anything (what
    /// a caller fetches early to know whether it must release started
    /// copies).
    pub const FRONT_BYTES: usize = std::mem::size_of::<Discipline<P>>();

    pub fn name(&self) -> &'static str {
        each!(&self.discipline, d => d.name())
    }

    #[inline]
    pub fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) {
        self.count_arrival(&packet);
        let mark = verdicts.checkpoint();
        each!(&mut self.discipline, d => d.enqueue(packet, now, verdicts));
        self.account(verdicts, mark);
        self.note_peak();
    }

    /// `enqueue` for the inline FIFO, whose one verdict is refusing the
    /// arrival; returns whether the packet was admitted. An admitted packet
    /// (nearly all of them) needs no look at the verdicts.
    #[inline]
    pub fn enqueue_fifo(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>) -> bool {
        if !matches!(&self.discipline, Discipline::Fifo(fifo) if fifo.admits(&packet)) {
            let mark = verdicts.checkpoint();
            self.enqueue(packet, now, verdicts);
            return verdicts.dropped().len() == mark.dropped;
        }
        self.count_arrival(&packet);
        if let Discipline::Fifo(fifo) = &mut self.discipline {
            fifo.push(packet, verdicts);
        }
        self.note_peak();
        true
    }

    #[inline]
    fn count_arrival(&mut self, packet: &P) {
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += packet.size() as u64;
    }

    #[inline]
    fn note_peak(&mut self) {
        let packets = self.backlog().packets;
        self.stats.peak_packets = self.stats.peak_packets.max(packets);
    }

    /// Let an arrival through when the discipline is an empty FIFO that
    /// admits it and the caller will transmit it at once: the packet is
    /// counted in and out exactly as `enqueue` then `dequeue` would, without
    /// touching the buffer. Returns false, having done nothing, otherwise.
    #[inline]
    pub fn pass_through(&mut self, packet: &P) -> bool {
        let Discipline::Fifo(fifo) = &self.discipline else {
            return false;
        };
        if !fifo.is_empty() || !fifo.admits(packet) {
            return false;
        }
        let bytes = packet.size() as u64;
        let s = &mut self.stats;
        s.arrivals += 1;
        s.arrival_bytes += bytes;
        s.departures += 1;
        s.departure_bytes += bytes;
        s.peak_packets = s.peak_packets.max(1);
        true
    }

    /// Whether the discipline may ask to be woken (see `next_wakeup`).
    #[inline]
    pub fn has_clock(&self) -> bool {
        matches!(self.discipline, Discipline::Clocked(_))
    }

    /// Whether the discipline is the inline FIFO (DropTail).
    #[inline]
    pub fn is_fifo(&self) -> bool {
        matches!(self.discipline, Discipline::Fifo(_))
    }

    /// For a FIFO whose departures its caller computes (a reserving link):
    /// the packets at the front for which `left` holds leave, counted as
    /// departures. Nothing else to check: a FIFO's dequeue neither drops
    /// nor marks. Does nothing for any other discipline.
    #[inline]
    pub fn release_fifo(&mut self, left: impl Fn(&P) -> bool, verdicts: &mut Verdicts<P>) {
        let Discipline::Fifo(fifo) = &mut self.discipline else {
            return;
        };
        let released = fifo.release_while(left, verdicts);
        self.stats.departures += released.packets;
        self.stats.departure_bytes += released.bytes;
    }

    #[inline]
    pub fn dequeue(&mut self, now: Time, verdicts: &mut Verdicts<P>) -> Option<P> {
        let mark = verdicts.checkpoint();
        let packet = each!(&mut self.discipline, d => d.dequeue(now, verdicts));
        if let Some(p) = &packet {
            self.stats.departures += 1;
            self.stats.departure_bytes += p.size() as u64;
        }
        self.account(verdicts, mark);
        packet
    }

    /// The next instant the discipline needs `wakeup`: never without a
    /// clock.
    #[inline]
    pub fn next_wakeup(&self) -> Option<Time> {
        match &self.discipline {
            Discipline::Clocked(d) => d.next_wakeup(),
            Discipline::Any(_) | Discipline::Fifo(_) => {
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
            Discipline::Any(d) => d.next_wakeup().is_none(),
            Discipline::Clocked(_) | Discipline::Fifo(_) => true,
        }
    }

    pub fn wakeup(&mut self, now: Time, verdicts: &mut Verdicts<P>) {
        let mark = verdicts.checkpoint();
        each!(&mut self.discipline, d => d.wakeup(now, verdicts));
        self.account(verdicts, mark);
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        each!(&self.discipline, d => d.backlog())
    }

    pub fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    /// Check arrivals = departures + drops + backlog.
    pub fn check_conservation(&self) -> Result<(), ConservationError> {
        let s = &self.stats;
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

    /// Count what the discipline reported since `since`. The verdicts stay
    /// in the sink for the caller to drain.
    #[inline]
    fn account(&mut self, verdicts: &Verdicts<P>, since: Checkpoint) {
        let dropped = &verdicts.dropped()[since.dropped..];
        let marked = verdicts.marked() - since.marked;
        if dropped.is_empty() && marked == 0 {
            return;
        }
        let s = self.stats.losses_mut();
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
}

impl DropReason {
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}
