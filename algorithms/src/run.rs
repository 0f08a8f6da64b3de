//! Running an algorithm: [`run`] and [`run_with`], and what a caller may attach to a run
//! ([`RunOptions`]: a trace sink, progress, limits, a stop, properties, checkpoints, a
//! chooser).

use crate::registry::AlgorithmConfig;
use splitbrain_sim::{Nanos, Properties, RunError, RunReport, SimConfig, TraceSink};

/// Runs `config` with this algorithm, tracing to `trace` if given.
pub fn run(
    algorithm: &AlgorithmConfig,
    config: SimConfig,
    trace: Option<&mut dyn TraceSink>,
) -> Result<RunReport, RunError> {
    run_with(
        algorithm,
        config,
        RunOptions {
            trace,
            ..RunOptions::default()
        },
    )
}

/// Runs `config` with this algorithm and the given options.
pub fn run_with(
    algorithm: &AlgorithmConfig,
    config: SimConfig,
    options: RunOptions,
) -> Result<RunReport, RunError> {
    algorithm.run_with(config, options)
}

/// What a caller may attach to a run besides its configuration.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Receives one JSON line per event.
    pub trace: Option<&'a mut dyn TraceSink>,
    /// Told the true time every [`splitbrain_sim::engine::PROGRESS_EVERY_EVENTS`] events.
    pub progress: Option<&'a mut dyn FnMut(Nanos)>,
    /// Stops the run after this many events even if simulated time remains (bounded runs in
    /// tests); the report then ends at the last event handled.
    pub max_events: Option<u64>,
    /// Asked now and then whether to end the run at once (see
    /// [`splitbrain_sim::Sim::with_stop`]).
    pub stop: Option<&'a (dyn Fn() -> Option<splitbrain_sim::limits::Stop> + Sync)>,
    /// Safety properties of the caller's own, checked at every observation besides the
    /// built-in invariants (see [`splitbrain_sim::property`] and
    /// [`splitbrain_sim::Sim::with_properties`]); a break is a violation named after the
    /// property. Borrowed: every run makes fresh property states from it.
    pub properties: Option<&'a Properties>,
    /// Stops the run at a point instead of its end and keeps a snapshot of it there
    /// (`splitbrain run --stop-at`); the report is then the run so far.
    pub step: Option<Step<'a>>,
    /// Digests of the run's state at given true times ([`splitbrain_sim::Sim::digest`]),
    /// for a systematic search; the run goes on to its end (ignored with `step`).
    pub checkpoints: Option<Checkpoints<'a>>,
    /// Picks the way the run goes at its choice points ([`splitbrain_sim::choice`]), for a
    /// systematic search; none: each takes its default.
    pub chooser: Option<&'a mut dyn splitbrain_sim::Chooser>,
}

/// When to take a state digest, and where to put them ([`RunOptions::checkpoints`]).
pub struct Checkpoints<'a> {
    /// True times, in increasing order: the digest is of the state after every event due
    /// at or before each.
    pub at_ns: &'a [splitbrain_sim::Nanos],
    /// Receives one digest per time the run reached, in order (fewer if the run ended or
    /// stopped first): [`splitbrain_sim::Sim::digest`], or with `symmetric` its
    /// [`splitbrain_sim::Sim::digest_symmetric`].
    pub digests: &'a mut Vec<u64>,
    /// The members whose renamings count as one state (docs/hunting.md, "Symmetry"); empty:
    /// states are compared exactly.
    pub symmetric: &'a [splitbrain_sim::NodeId],
    /// With `symmetric`: receives at each time the fingerprint of the renaming that gave
    /// the digest ([`splitbrain_sim::Sim::digest_symmetric_renamed`]), to tell a state
    /// seen again from a renaming of one; untouched without.
    pub renamings: &'a mut Vec<u64>,
}

/// Where to stop a run, and where to put what it looked like there ([`RunOptions::step`]).
pub struct Step<'a> {
    /// The stop.
    pub at: splitbrain_sim::engine::StopAt,
    /// Set to whether the run got to the stop and the snapshot taken there (or at the end,
    /// if the run ended first).
    pub snapshot: &'a mut Option<(
        splitbrain_sim::engine::Reached,
        splitbrain_sim::engine::Snapshot,
    )>,
}

impl<'a> RunOptions<'a> {
    /// The same options, borrowed for a shorter `'b`: so that a caller can add a stop or
    /// properties that live only as long as its own call (`RunOptions { stop: Some(&stop),
    /// ..options.shorten() }`).
    pub fn shorten<'b>(self) -> RunOptions<'b>
    where
        'a: 'b,
    {
        RunOptions {
            // `&'a mut dyn T` does not shorten by itself behind an `Option`: re-borrowed.
            trace: match self.trace {
                Some(sink) => Some(sink),
                None => None,
            },
            progress: match self.progress {
                Some(progress) => Some(progress),
                None => None,
            },
            max_events: self.max_events,
            stop: self.stop,
            properties: self.properties,
            step: self.step.map(|step| Step {
                at: step.at,
                snapshot: step.snapshot,
            }),
            checkpoints: self.checkpoints.map(|c| Checkpoints {
                at_ns: c.at_ns,
                digests: c.digests,
                symmetric: c.symmetric,
                renamings: c.renamings,
            }),
            chooser: match self.chooser {
                Some(chooser) => Some(chooser),
                None => None,
            },
        }
    }
}
