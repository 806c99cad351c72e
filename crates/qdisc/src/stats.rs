/// Why a packet was dropped (ns-3 traffic-control style: every drop has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer (or the discipline's share of it) was full.
    Overflow = 0,
    /// An early, probabilistic or AQM drop before the buffer is full (RED,
    /// CoDel, PIE, SFED's drop profile).
    Early = 1,
    /// A queued packet was pushed out to make room for an arrival (LQD,
    /// QSDRR's front drop).
    PushOut = 2,
    /// A per-flow or per-class policy refused the packet (FRED's per-flow cap,
    /// CBT's class thresholds, CHOKe's matched pair).
    Policy = 3,
}

impl DropReason {
    pub const ALL: [DropReason; 4] = [
        DropReason::Overflow,
        DropReason::Early,
        DropReason::PushOut,
        DropReason::Policy,
    ];

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::PushOut => "push_out",
            DropReason::Policy => "policy",
        }
    }
}

/// Counters every discipline has, kept by [`crate::Qdisc`] in memory its
/// caller holds apart from it: a packet let through an idle FIFO, the most
/// common passage by far, is counted in the `Qdisc` itself and touches
/// none of these. Read through [`crate::Qdisc::stats`], which adds it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QdiscCounters {
    pub(crate) totals: Totals,
    /// Allocated at the first drop or mark: most queues (every access link
    /// of a dumbbell, one per flow) never drop or mark, and their 96 bytes
    /// were a tenth of a flow's memory.
    losses: Option<Box<LossStats>>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    /// Largest backlog seen, in packets. (In bytes it was reported
    /// nowhere, and took 8 bytes in every queue of a network.)
    pub peak_packets: u64,
}

impl Totals {
    /// `packets` of `bytes` in all, each counted in and out at once.
    pub fn count_passed(&mut self, packets: u64, bytes: u64) {
        self.arrivals += packets;
        self.arrival_bytes += bytes;
        self.departures += packets;
        self.departure_bytes += bytes;
        if packets > 0 {
            self.peak_packets = self.peak_packets.max(1);
        }
    }
}

/// What a queue has counted: its [`QdiscCounters`] with the packets it let
/// through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QdiscStats<'a> {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    /// Largest backlog seen, in packets.
    pub peak_packets: u64,
    losses: &'a LossStats,
}

/// Drops and marks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LossStats {
    /// Drops by [`DropReason`], indexed by `reason as usize`.
    pub drops: [u64; 4],
    pub drop_bytes: [u64; 4],
    /// Packets (and bytes) that were written into the buffer and later
    /// dropped: the wasted memory bandwidth of seed 000, chapter 6.
    pub buffered_drops: u64,
    pub buffered_drop_bytes: u64,
    pub marks: u64,
    pub mark_bytes: u64,
}

static NO_LOSSES: LossStats = LossStats {
    drops: [0; 4],
    drop_bytes: [0; 4],
    buffered_drops: 0,
    buffered_drop_bytes: 0,
    marks: 0,
    mark_bytes: 0,
};

impl QdiscCounters {
    pub(crate) fn losses_mut(&mut self) -> &mut LossStats {
        self.losses.get_or_insert_with(Default::default)
    }

    /// An arrival of `bytes`.
    #[inline]
    pub fn count_arrival(&mut self, bytes: u32) {
        self.totals.arrivals += 1;
        self.totals.arrival_bytes += bytes as u64;
    }

    /// `packets` departures of `bytes` in all.
    #[inline]
    pub fn count_departures(&mut self, packets: u64, bytes: u64) {
        self.totals.departures += packets;
        self.totals.departure_bytes += bytes;
    }

    /// `packets` of `bytes` in all let through an idle FIFO without being
    /// queued: each counted in and out at once.
    pub fn count_passed(&mut self, packets: u64, bytes: u64) {
        self.totals.count_passed(packets, bytes);
    }

    /// The queue holds `packets` now.
    #[inline]
    pub fn note_peak(&mut self, packets: u64) {
        self.totals.peak_packets = self.totals.peak_packets.max(packets);
    }

    /// A packet of `bytes` dropped for `reason`; `buffered` if it had been
    /// written into the buffer first.
    pub fn count_drop(&mut self, reason: DropReason, bytes: u32, buffered: bool) {
        let s = self.losses_mut();
        let (r, bytes) = (reason.index(), bytes as u64);
        s.drops[r] += 1;
        s.drop_bytes[r] += bytes;
        if buffered {
            s.buffered_drops += 1;
            s.buffered_drop_bytes += bytes;
        }
    }
}

impl<'a> QdiscStats<'a> {
    /// `counters`, and `passed_packets` of `passed_bytes` in all let
    /// through.
    pub fn new(counters: &'a QdiscCounters, passed_packets: u64, passed_bytes: u64) -> Self {
        let mut t = counters.totals;
        t.count_passed(passed_packets, passed_bytes);
        Self {
            arrivals: t.arrivals,
            arrival_bytes: t.arrival_bytes,
            departures: t.departures,
            departure_bytes: t.departure_bytes,
            peak_packets: t.peak_packets,
            losses: counters.losses.as_deref().unwrap_or(&NO_LOSSES),
        }
    }

    /// Drops and marks (all zero if there were none).
    pub fn losses(&self) -> &'a LossStats {
        self.losses
    }

    pub fn total_drops(&self) -> u64 {
        self.losses().drops.iter().sum()
    }

    pub fn total_drop_bytes(&self) -> u64 {
        self.losses().drop_bytes.iter().sum()
    }
}
