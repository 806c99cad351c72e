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

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::PushOut => "push_out",
            DropReason::Policy => "policy",
        }
    }
}

/// Counters every discipline has, kept by [`crate::Qdisc`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QdiscStats {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    /// Largest backlog seen, in packets. (In bytes it was reported
    /// nowhere, and took 8 bytes in every queue of a network.)
    pub peak_packets: u64,
    /// Allocated at the first drop or mark: most queues (every access link
    /// of a dumbbell, one per flow) never drop or mark, and their 96 bytes
    /// were a tenth of a flow's memory.
    losses: Option<Box<LossStats>>,
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

impl QdiscStats {
    /// Drops and marks (all zero if there were none).
    pub fn losses(&self) -> &LossStats {
        self.losses.as_deref().unwrap_or(&NO_LOSSES)
    }

    pub(crate) fn losses_mut(&mut self) -> &mut LossStats {
        self.losses.get_or_insert_with(Default::default)
    }

    pub fn total_drops(&self) -> u64 {
        self.losses().drops.iter().sum()
    }

    pub fn total_drop_bytes(&self) -> u64 {
        self.losses().drop_bytes.iter().sum()
    }
}
