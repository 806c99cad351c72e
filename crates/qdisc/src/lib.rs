//! Queue disciplines for aqmlab.
//!
//! One trait, [`QueueDiscipline`], serves every discipline, from DropTail to
//! QSDRR, SFED and ChIPS. It knows nothing of the simulator, sockets or Python:
//! the simulator's packet and the emulator's real packet both implement the
//! small [`Packet`] trait, and a discipline sees only that.
//!
//! The contract (DESIGN.md, "The queue-discipline core"):
//! - `enqueue` takes the arriving packet at time `now`. It may drop the arrival
//!   or packets already queued (push-out, as QSDRR and LQD do); every drop goes
//!   into the [`Verdicts`] sink with its [`DropReason`].
//! - `dequeue` hands out the next packet at `now`, and may also drop (CoDel
//!   and PIE drop at the head). It may return `None` while backlogged if the
//!   discipline is not work-conserving; it then says when to ask again through
//!   [`QueueDiscipline::next_wakeup`].
//! - Disciplines that act on a clock (DSDRR's period, Bloom-filter rebalancing,
//!   SFB's rehash) report the next instant they need with `next_wakeup` and
//!   are driven by `wakeup`.
//! - ECN marking sets CE on the packet through [`Packet::mark_ce`] and is
//!   counted with [`Verdicts::mark`].
//!
//! Accounting is done once, for every discipline, by [`Qdisc`], which wraps a
//! discipline and keeps its [`QdiscCounters`] (reported as [`QdiscStats`]):
//! arrivals = departures + drops + backlog holds at every instant, and the
//! bytes written into the buffer and dropped later (seed 000, chapter 6) are
//! counted apart from arrivals refused at the door.

pub mod blocks;
mod blue;
mod droptail;
pub mod drr;
pub mod dsdrr;
pub mod dtdrr;
mod mqfq;
mod packet;
pub mod params;
mod qdisc;
pub mod qsdrr;
pub mod rng;
pub mod scfq;
mod sfb;
mod sfed;
mod sfq;
pub mod source;
mod spec;
mod stats;
pub mod tdrr;
#[doc(hidden)]
pub mod testkit;
mod verdicts;
pub mod wdrr;
pub mod wf2q_plus;

// Classic and modern AQMs, and seed 004's class-based disciplines.
pub mod ared;
pub mod cbt;
pub mod chips;
pub mod choke;
pub mod codel;
pub mod cost;
pub mod dcbt;
pub mod fq_codel;
pub mod fred;
pub mod pie;
pub mod red;
pub mod red_linux;

pub use blocks::{DrrRound, Ewma, FlowQueues, HashFamily};
pub use blue::{Blue, BlueParams, BlueProbability, BlueSteps};
pub use droptail::{DropTail, DropTailParams};
pub use mqfq::{Mqfq, MqfqParams, MqfqReorder};
pub use packet::{Ecn, Packet, TrafficClass};
pub use params::{SpecError, DEFAULT_LINK_RATE_BPS};
pub use qdisc::{ConservationError, Qdisc};
pub use sfb::{Sfb, SfbConfig, SfbParams};
pub use sfed::{check_classes, Sfed, SfedClass, SfedParams, SfedTraffic};
pub use sfq::{ns2_hash, Sfq, SfqAdmission, SfqHash, SfqParams, SharedBuffer};
pub use spec::{catalogue, KindEntry, QdiscParams, QdiscSpec, KINDS};
pub use stats::{DropReason, LossStats, QdiscCounters, QdiscStats};
pub use verdicts::{Dropped, Verdicts};

pub use ared::{Ared, AredParams};
pub use cbt::{Cbt, CbtParams};
pub use chips::ChipsParams;
pub use choke::{Choke, ChokeParams};
pub use codel::{Codel, CodelParams};
pub use dcbt::{Dcbt, DcbtParams, FlowKey, UdpBase, UdpFlows};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use fred::{Fred, FredParams};
pub use pie::{Pie, PieEstimator, PieParams};
pub use red::{Red, RedMode, RedParams};
pub use red_linux::{LinuxRedParams, RedLinux};

pub use drr::DrrParams;
pub use dsdrr::DsdrrParams;
pub use dtdrr::DtdrrParams;
pub use qsdrr::QsdrrParams;
pub use scfq::ScfqParams;
pub use tdrr::TdrrParams;
pub use wdrr::WdrrParams;
pub use wf2q_plus::Wf2qPlusParams;

/// Time in integer nanoseconds since the start of the run.
pub type Time = u64;

/// How much a queue holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: u64,
    pub bytes: u64,
}

/// A buffer limit, counted in packets or in bytes (Linux `pfifo` / `bfifo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Whether a queue holding `backlog` can also take a packet of `size` bytes.
    #[inline]
    pub fn admits(&self, backlog: Backlog, size: u32) -> bool {
        match *self {
            Limit::Packets(max) => backlog.packets < max,
            Limit::Bytes(max) => backlog.bytes + size as u64 <= max,
        }
    }

    /// Whether `backlog` is above the limit (used by push-out disciplines).
    #[inline]
    pub fn exceeded_by(&self, backlog: Backlog) -> bool {
        match *self {
            Limit::Packets(max) => backlog.packets > max,
            Limit::Bytes(max) => backlog.bytes > max,
        }
    }
}

/// A queue discipline: what a router does with the packets waiting for one
/// outgoing link.
pub trait QueueDiscipline<P: Packet> {
    /// Short name, as used in scenario files (`"droptail"`, `"qsdrr"`).
    fn name(&self) -> &'static str;

    /// Offer an arriving packet at time `now`. The arrival and any queued
    /// packets the discipline discards are reported in `verdicts`.
    fn enqueue(&mut self, packet: P, now: Time, verdicts: &mut Verdicts<P>);

    /// Take the next packet to transmit at time `now`, if any. Packets the
    /// discipline discards on the way (head drop) are reported in `verdicts`.
    fn dequeue(&mut self, now: Time, verdicts: &mut Verdicts<P>) -> Option<P>;

    /// What the discipline holds now.
    fn backlog(&self) -> Backlog;

    /// The next instant at which the discipline needs `wakeup`, or at which a
    /// non-work-conserving discipline will release a packet.
    fn next_wakeup(&self) -> Option<Time> {
        None
    }

    /// Whether `next_wakeup` may ever give a time. Asked once, when the
    /// discipline is wrapped in its [`Qdisc`], so that the many disciplines
    /// without a clock are not asked after every packet they queue or send.
    /// A discipline that overrides `next_wakeup` overrides this too.
    fn has_clock(&self) -> bool {
        false
    }

    /// Run the discipline's timer work due at `now` (periodic rebalancing,
    /// rehashing). Drops it makes are reported in `verdicts`.
    fn wakeup(&mut self, _now: Time, _verdicts: &mut Verdicts<P>) {}

    /// Whether `dequeue` may discard packets (CoDel's head drops). Asked
    /// once: a discipline that never does, and has no clock, is changed
    /// only by its arrivals and departures, in time order, so its caller
    /// may run its departures late, when they are next needed, each with
    /// its own time (a simulator's link: `Departures::Deferred`). A
    /// discipline that drops on dequeue overrides this.
    fn drops_on_dequeue(&self) -> bool {
        false
    }

    /// The limit of a plain FIFO (DropTail): a caller that knows it may
    /// compute each arrival's departure at once. `None` for any other.
    fn fifo_limit(&self) -> Option<Limit> {
        None
    }

    /// The queues a flow with key `key` may be put in, for a discipline
    /// that spreads flows over a fixed set of queues by hashing, in the
    /// order of its hash functions (duplicates kept): SFQ's one, MQFQ's d,
    /// SFB's bin at each level (numbered `level * bins + bin`), the bucket
    /// of seed 000's DRR family with `queues` (hash, modulo or Bloom map,
    /// where it is now). Empty for any other. A measurement (which flows
    /// share a queue, seed 001's interference; flows per queue over time,
    /// seed 000's chapter 5), never on a packet's path.
    fn queues_of(&self, _key: u64) -> Vec<u32> {
        Vec::new()
    }

    /// Learn that the flow with key `key` runs between the hosts `hosts`
    /// names (a key equal for every flow from one host to another), for a
    /// discipline that counts host pairs rather than flows (DCBT's flow key,
    /// seed 004 section 3.2). Its caller says so before the flow's first
    /// packet; disciplines that do not count host pairs ignore it.
    fn learn_hosts(&mut self, _key: u64, _hosts: u64) {}
}
