//! aqmlab's packet-level discrete-event simulator.
//!
//! A resolved [`Scenario`] goes in; [`Results`] (summary, per-flow,
//! per-queue and time-series tables) come out. See DESIGN.md, "The
//! simulator", for the principles that make it fast: integer nanoseconds,
//! packets as plain values, links as transmitter + FIFO pipe with only the
//! pipe's head in the event list, arenas addressed by index, one lazily
//! cancelled timer per TCP flow.

pub mod accel;
pub mod check;
pub mod engine;
pub mod measure;
pub mod names;
pub mod packet;
pub mod pool;
pub mod results;
pub mod scenario;
pub mod tcp;
pub mod trace;
pub mod traffic;

pub use accel::Accelerations;
pub use engine::Simulation;
pub use measure::census;
pub use measure::metrics;

pub use aqmlab_qdisc::Time;
pub use check::ScenarioError;
pub use metrics::{Column, Scalar, Table};
pub use names::Names;
pub use results::Results;
pub use scenario::Scenario;

/// Why a run did not produce results.
#[derive(Debug)]
pub enum RunError {
    /// The scenario is invalid; the message names the field.
    Invalid(ScenarioError),
    /// The progress callback asked to stop.
    Cancelled,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Invalid(e) => write!(f, "{e}"),
            RunError::Cancelled => write!(f, "run cancelled"),
        }
    }
}

impl std::error::Error for RunError {}

/// Check and run a scenario with every acceleration. `progress` gets the
/// simulated seconds done now and then; returning false cancels the run.
pub fn run(scenario: Scenario, progress: impl FnMut(f64) -> bool) -> Result<Results, RunError> {
    run_with(scenario, Accelerations::ALL, progress)
}

/// `run` with only `accelerations` (`Accelerations::NONE`: the reference
/// engine). The results are the same to the bit, whichever they are.
pub fn run_with(
    scenario: Scenario,
    accelerations: Accelerations,
    progress: impl FnMut(f64) -> bool,
) -> Result<Results, RunError> {
    scenario.check().map_err(RunError::Invalid)?;
    let started = std::time::Instant::now();
    let mut sim = Simulation::with_accelerations(scenario, accelerations);
    if !sim.run(progress) {
        return Err(RunError::Cancelled);
    }
    Ok(Results::collect(sim, started.elapsed().as_secs_f64()))
}

/// Parse a scenario from its JSON form and run it.
pub fn run_json(json: &str, progress: impl FnMut(f64) -> bool) -> Result<Results, RunError> {
    let scenario: Scenario = serde_json::from_str(json)
        .map_err(|e| RunError::Invalid(ScenarioError::new("scenario", e.to_string())))?;
    run(scenario, progress)
}

/// An optional time in 8 bytes (`Option<Time>` takes 16). A TCP flow keeps
/// five and every link one, so the difference is a tenth of a flow's
/// memory. No event is ever at `Time::MAX`, which stands for "none".
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MaybeTime(Time);

impl MaybeTime {
    pub const NONE: Self = Self(Time::MAX);

    #[inline]
    pub fn at(t: Time) -> Self {
        debug_assert!(t != Time::MAX, "Time::MAX stands for no time");
        Self(t)
    }

    #[inline]
    pub fn get(self) -> Option<Time> {
        (self.0 != Time::MAX).then_some(self.0)
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == Time::MAX
    }
}

impl Default for MaybeTime {
    fn default() -> Self {
        Self::NONE
    }
}

impl From<Option<Time>> for MaybeTime {
    fn from(t: Option<Time>) -> Self {
        t.map_or(Self::NONE, Self::at)
    }
}
