//! Accelerations: ways of skipping the reference engine's events where
//! their outcome is known, each reproducing the reference exactly.
//!
//! Which acceleration applies where is decided once, before the run, by
//! [`plan::Plan::build`]: pure functions of the topology, one eligibility
//! rule each. The engine (`crate::engine`) hands a link's arrivals,
//! departures or sends to its acceleration where the plan says so; with
//! [`Accelerations::NONE`] the plan is empty and the engine is the
//! reference. Each mechanism is one file:
//!
//! | file | skips | eligible |
//! |---|---|---|
//! | `reserve.rs` | a FIFO's `TxDone` events | every FIFO |
//! | `express.rs` | the arrival events of an express link | an unmonitored FIFO fed by one link |
//! | `defer.rs` | most `TxDone` events of other disciplines | no clock, no drop on dequeue |
//! | `ahead.rs` | a packet's last `PipeHead` | a TCP flow whose answer leaves on its own idle FIFO |
//! | `gather.rs` | the arrival events of a gathering link | a FIFO only answers ahead reach |
//! | `prefetch.rs` | no event: cache misses | always |

pub mod ahead;
pub mod defer;
pub mod express;
pub mod fifo;
pub mod gather;
pub(crate) mod hints;
pub(crate) mod inbox;
pub mod plan;
pub mod prefetch;
pub mod reserve;

use std::collections::HashMap;

use crate::engine::Simulation;
use crate::measure::kept_samples::KeptSamples;
use crate::measure::window::WindowStart;
use crate::scenario::Scenario;
use crate::Time;

pub use plan::Plan;

/// Which accelerations a run may use (each where the plan finds it
/// eligible).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accelerations {
    /// FIFOs reserve their departures at each arrival (`reserve.rs`).
    pub reserve: bool,
    /// Express links are reserved when their upstream link sends
    /// (`express.rs`; needs `reserve`).
    pub express: bool,
    /// Departures of disciplines without a clock run late (`defer.rs`).
    pub defer: bool,
    /// Receivers answer data packets ahead of their arrival (`ahead.rs`;
    /// needs `reserve`).
    pub answer_data: bool,
    /// Senders answer ACKs ahead of their arrival (`ahead.rs`; needs
    /// `reserve`).
    pub answer_acks: bool,
    /// Gathering links reserve their arrivals in batches (`gather.rs`;
    /// needs `express` and `answer_data`).
    pub gather: bool,
    /// Data the next events read is fetched early (`prefetch.rs`).
    pub prefetch: bool,
}

impl Accelerations {
    /// Every acceleration: the fast engine.
    pub const ALL: Self = Self {
        reserve: true,
        express: true,
        defer: true,
        answer_data: true,
        answer_acks: true,
        gather: true,
        prefetch: true,
    };

    /// None: the reference engine.
    pub const NONE: Self = Self {
        reserve: false,
        express: false,
        defer: false,
        answer_data: false,
        answer_acks: false,
        gather: false,
        prefetch: false,
    };

    /// Each acceleration's name, as `parse` reads it.
    pub const NAMES: [&'static str; 7] = [
        "reserve",
        "express",
        "defer",
        "answer_data",
        "answer_acks",
        "gather",
        "prefetch",
    ];

    /// An engine by name: "fast" (every acceleration), "reference" (none),
    /// or the accelerations to use, separated by commas ("reserve,defer"),
    /// for measuring what each earns. One that needs another it is not
    /// given (`express` without `reserve`) applies nowhere.
    pub fn parse(engine: &str) -> Result<Self, String> {
        match engine {
            "fast" => return Ok(Self::ALL),
            "reference" => return Ok(Self::NONE),
            _ => {}
        }
        let mut acc = Self::NONE;
        for name in engine.split(',').map(str::trim) {
            *acc.flag(name).ok_or_else(|| {
                format!(
                    "{name:?} is not an engine (\"fast\", \"reference\") or an acceleration ({})",
                    Self::NAMES.join(", ")
                )
            })? = true;
        }
        Ok(acc)
    }

    fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "reserve" => &mut self.reserve,
            "express" => &mut self.express,
            "defer" => &mut self.defer,
            "answer_data" => &mut self.answer_data,
            "answer_acks" => &mut self.answer_acks,
            "gather" => &mut self.gather,
            "prefetch" => &mut self.prefetch,
            _ => return None,
        })
    }
}

/// What the accelerations keep between events.
pub struct AccelState {
    pub(crate) prefetch: bool,
    /// Fetch several events ahead (many flows: `prefetch.rs`).
    pub(crate) deep_prefetch: bool,
    /// Some TCP profile delays its ACKs: only then does a data packet
    /// reaching its receiver read the flow's last line (`prefetch_flow`).
    pub(crate) delays_acks: bool,
    /// Packets reaching their host before this time may be answered ahead
    /// (`ahead.rs`) and gathered (`gather.rs`): the window's opening until
    /// it opens (an arrival at the opening comes after it), then just past
    /// the run's end (events at the end still run).
    pub(crate) answer_ahead_before: Time,
    /// What the next sample reads of the senders that answered ahead past
    /// its time.
    pub(crate) kept_samples: KeptSamples,
    /// The gathering links' inboxes, by link.
    pub(crate) inboxes: Vec<inbox::Inbox>,
    /// The most arrivals one event of a gathering link reserves
    /// (`drain_inbox`).
    pub(crate) gather_batch: usize,
    /// The counters as of the window's opening of the express links that
    /// reserved an arrival at or after it before it opened
    /// (`express.rs`), by link.
    pub(crate) early_window: HashMap<u32, WindowStart>,
    /// Short reserving FIFOs' buffers, lent to the next that needs one.
    pub(crate) spares: fifo::Spares,
}

impl AccelState {
    pub fn new(scenario: &Scenario) -> Self {
        Self {
            prefetch: false,
            deep_prefetch: false,
            delays_acks: scenario.tcp_profiles.iter().any(|p| p.delayed_ack),
            answer_ahead_before: scenario.warmup_ns.min(scenario.duration_ns + 1),
            kept_samples: KeptSamples::default(),
            inboxes: Vec::new(),
            gather_batch: gather::GATHER_BATCH,
            early_window: HashMap::new(),
            spares: fifo::Spares::default(),
        }
    }

    /// The measurement window opened: work may be done ahead up to the
    /// run's end.
    pub fn window_opened(&mut self, duration: Time) {
        self.answer_ahead_before = duration + 1;
    }
}

impl Simulation {
    /// Let a gathering link's event reserve at most `most` arrivals (the
    /// rest wait for an event at the first of them), so that tests can
    /// split batches where a run would not. Call before `run`.
    pub fn gather_in_batches_of(&mut self, most: usize) {
        assert!(most > 0, "a batch holds at least one arrival");
        self.accel.gather_batch = most;
    }

    /// How many flows' data packets, and how many flows' ACKs, may be
    /// answered ahead.
    pub fn answering_ahead(&self) -> (usize, usize) {
        let ahead = |route| {
            let end = self.routes.links(route).count() as u8;
            self.routes.answered_ahead(route, end).is_some()
        };
        let data = self.flows.iter().filter(|f| ahead(f.forward)).count();
        let acks = self.flows.iter().filter(|f| ahead(f.reverse)).count();
        (data, acks)
    }

    /// Bring every link whose work runs ahead of or behind the events up to
    /// just before `before`: its state as the reference has it at the end
    /// of the nanosecond before.
    pub(crate) fn settle_all(&mut self, before: Time) {
        self.catch_up_all(before);
        self.release_all_started(before);
    }

    /// Bring monitored link `l` up to a sample taken now, which sees the
    /// state before the events of its nanosecond (`Event`'s order).
    pub(crate) fn settle_for_sample(&mut self, l: usize) {
        if self.links[l].reserves() {
            self.release_started(l, self.now);
        } else if self.links[l].defers() {
            self.catch_up(l, self.now);
        }
    }
}
