//! The one seed runner: every run that `hunt`, `compare` and `sweep` make goes through
//! [`run_seed`], watched by the runtime guard (the engine's limits, and the wall clock, which
//! the engine never reads), with a panic in the run caught as that run's failure.

// The wall clock bounds a run's time; it never changes what a run computes.
#![allow(clippy::disallowed_types)]

use crate::panics;
use splitbrain_algorithms::transcript::{self, Transcript};
use splitbrain_algorithms::{AlgorithmConfig, Checkpoints, RunOptions};
use splitbrain_scenario::Scenario;
use splitbrain_sim::limits::{Limit, LimitExceeded, Stop};
use splitbrain_sim::{RefusedEffect, RunError, RunReport, SimConfig, TraceSink};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a run gave no report.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum RunFailure {
    /// The run outgrew its runtime guard (events, messages in flight, memory, wall time).
    #[error("{0}")]
    Outgrown(LimitExceeded),
    /// The run panicked: a bug in the algorithm or in splitbrain. The panic's message and
    /// place, and the node and event whose handler panicked when a process did.
    #[error("{0}")]
    Panicked(String),
    /// A process asked for an effect the engine refuses (a message to a node that does not
    /// exist...): a bug in the algorithm, named with its node and event.
    #[error("{0}")]
    Refused(Box<RefusedEffect>),
    /// The caller's `abort` ended the run (a signal).
    #[error("the run was stopped on purpose")]
    Aborted,
}

/// Runs an explicit scenario (its nemesis already drawn: see [`Scenario::materialize`]),
/// with `trace` riding along if given, ended once `abort` says so. The one runner of
/// `hunt`, `compare` and `sweep`: a run that panics is that run's failure
/// ([`RunFailure::Panicked`]), never the end of the command.
pub fn run_seed(
    scenario: &Scenario,
    trace: Option<&mut dyn TraceSink>,
    abort: &(dyn Fn() -> bool + Sync),
) -> Result<RunReport, RunFailure> {
    let options = RunOptions {
        trace,
        ..RunOptions::default()
    };
    run_scenario(scenario, options, abort)
}

/// [`run_seed`] with state digests taken at `checkpoints.at_ns` and the choice points
/// decided by `chooser`, for a systematic search.
pub fn run_seed_checkpointed(
    scenario: &Scenario,
    checkpoints: Checkpoints<'_>,
    chooser: &mut dyn splitbrain_sim::Chooser,
    abort: &(dyn Fn() -> bool + Sync),
) -> Result<RunReport, RunFailure> {
    let options = RunOptions {
        checkpoints: Some(checkpoints),
        chooser: Some(chooser),
        ..RunOptions::default()
    };
    run_scenario(scenario, options, abort)
}

/// Runs `scenario` with `options` and the scenario's own properties: see [`run_seed`].
fn run_scenario(
    scenario: &Scenario,
    options: RunOptions,
    abort: &(dyn Fn() -> bool + Sync),
) -> Result<RunReport, RunFailure> {
    let sim = scenario.sim.clone();
    let options = RunOptions {
        properties: (!scenario.properties.is_empty()).then_some(&scenario.properties),
        ..options.shorten()
    };
    let run = || run_watched_with(&scenario.algorithm, sim, options, abort);
    match panics::catch(run) {
        Ok(Ok(report)) => Ok(report),
        Ok(Err(RunError::Limit(e))) if e.limit == Limit::Interrupted => Err(RunFailure::Aborted),
        Ok(Err(RunError::Limit(e))) => Err(RunFailure::Outgrown(e)),
        Ok(Err(RunError::Refused(refused))) => Err(RunFailure::Refused(Box::new(refused))),
        Err(panic) => Err(RunFailure::Panicked(panic.message)),
    }
}

/// Runs `sim` with `algorithm`, ended once it has taken longer than its
/// `limits.max_wall_ms` by the wall clock, or once `interrupted` says so. A panic is not
/// caught (see [`run_seed`]).
pub fn run_watched(
    algorithm: &AlgorithmConfig,
    sim: SimConfig,
    trace: Option<&mut dyn TraceSink>,
    interrupted: &(dyn Fn() -> bool + Sync),
) -> Result<RunReport, RunError> {
    let options = RunOptions {
        trace,
        ..RunOptions::default()
    };
    run_watched_with(algorithm, sim, options, interrupted)
}

/// [`run_watched`] with the other options a caller attaches (a progress observer); their
/// `stop` is the watch's.
pub fn run_watched_with(
    algorithm: &AlgorithmConfig,
    sim: SimConfig,
    options: RunOptions,
    interrupted: &(dyn Fn() -> bool + Sync),
) -> Result<RunReport, RunError> {
    let watch = WallWatch::start(sim.limits.max_wall_ms);
    let stop = || watch.check(interrupted);
    let options = RunOptions {
        stop: Some(&stop),
        ..options.shorten()
    };
    splitbrain_algorithms::run_with(algorithm, sim, options)
}

/// A run's start by the wall clock, and how long it may take.
struct WallWatch {
    started: Instant,
    allowed: Duration,
}

impl WallWatch {
    /// Starts watching a run that may take `max_wall_ms`.
    fn start(max_wall_ms: u64) -> Self {
        Self {
            started: Instant::now(),
            allowed: Duration::from_millis(max_wall_ms),
        }
    }

    /// Why the run should end now, if it should: `interrupted`, or its time is up.
    fn check(&self, interrupted: &(dyn Fn() -> bool + Sync)) -> Option<Stop> {
        if interrupted() {
            return Some(Stop::Interrupted);
        }
        let elapsed = self.started.elapsed();
        (elapsed > self.allowed).then(|| Stop::WallTime {
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// How to get past a limit: raise it, or make the run smaller.
pub fn hint(e: &LimitExceeded) -> String {
    let raised = match e.limit {
        // In whole MiB or ms: what the flags take back.
        Limit::Memory | Limit::NodeInFlight => {
            format!("{}MiB", e.allowed.saturating_mul(2).div_ceil(1 << 20))
        }
        Limit::WallTime => format!("{}ms", e.allowed.saturating_mul(2)),
        _ => e.allowed.saturating_mul(2).to_string(),
    };
    let smaller = match e.limit {
        Limit::Events => "a shorter `duration`, fewer nodes or longer timings",
        Limit::InFlight => {
            "fewer nodes, a shorter `duration`, or timings that do not send faster than the \
             network delivers (a `Stream` timeout or retransmission timeout far below the \
             latency reconnects and resends without end)"
        }
        Limit::Memory => {
            "a shorter `duration` or fewer nodes, or nodes that send no faster than their peers \
             take (messages to a paused node wait for it)"
        }
        Limit::NodeInFlight => {
            "a node that sends less, or no faster than its peers take: messages to a paused \
             node wait for it, and a slow disk holds back what its node sends"
        }
        Limit::WallTime => {
            "fewer nodes (some models' events cost more as the cluster grows) or a shorter \
             `duration`; `splitbrain run` shows its progress after two seconds"
        }
        Limit::Interrupted => return "it was stopped on purpose".to_string(),
    };
    format!(
        "if the run is meant to be this big, raise the limit (e.g. {} {raised}); otherwise try \
         {smaller}",
        e.limit.flag()
    )
}

/// The result of `run --check-determinism`: the reported run compared with a run on fresh
/// processes and with one on the same processes reused.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Determinism {
    /// Whether the three runs' reports, the two re-runs' traces and every external node's
    /// transcript were identical.
    pub identical: bool,
    /// The two re-runs' trace hashes, in hex.
    pub trace_hashes: [String; 2],
    /// Lines in the first re-run's trace.
    pub trace_lines: u64,
    /// For external nodes (`docs/protocol.md`): the first step at which a node, told the
    /// same in two of the runs, answered differently: the node is not a function of its
    /// inputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<String>,
}

/// What the reported run gave, for [`check_determinism`] to compare: its report and, for
/// external nodes, what they were told and answered ([`transcript::Recording`]).
pub struct ReportedRun<'a> {
    /// The run's report.
    pub report: &'a RunReport,
    /// Its external nodes' transcript (empty for built-in algorithms).
    pub transcript: Transcript,
}

/// Runs the scenario twice more and compares: the first re-run on new processes (a node
/// whose answers depend on its process, its pid or a per-process hash seed, differs from the
/// reported run), the second on the same processes re-initialised (a node keeping state
/// across `init` differs from the first). The transcripts name the first step that differed.
pub fn check_determinism(
    scenario: &Scenario,
    reported: ReportedRun<'_>,
) -> Result<Determinism, RunError> {
    let hash_once = || {
        let mut hasher = splitbrain_sim::TraceHasher::default();
        let sim = scenario.sim.clone();
        let report = run_watched(&scenario.algorithm, sim, Some(&mut hasher), &|| false)?;
        let json = serde_json::to_string(&report).expect("results serialize");
        Ok::<_, RunError>((hasher, json))
    };
    splitbrain_algorithms::end_idle_processes();
    let (fresh, told_fresh) = transcript::recording(hash_once);
    let (reused, told_reused) = transcript::recording(hash_once);
    let ((fresh, fresh_json), (reused, reused_json)) = (fresh?, reused?);
    let reported_json = serde_json::to_string(reported.report).expect("results serialize");
    let first_difference = reported
        .transcript
        .first_difference(&told_fresh, ("the reported run", "a run on new processes"))
        .or_else(|| {
            told_fresh.first_difference(
                &told_reused,
                (
                    "a run on new processes",
                    "a run on the same processes reused",
                ),
            )
        });
    let identical = fresh.hash() == reused.hash()
        && reported_json == fresh_json
        && fresh_json == reused_json
        && first_difference.is_none();
    Ok(Determinism {
        identical,
        first_difference,
        trace_hashes: [
            format!("{:016x}", fresh.hash()),
            format!("{:016x}", reused.hash()),
        ],
        trace_lines: fresh.lines(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_panics_is_that_runs_failure() {
        let text = r#"Scenario(duration: "2s", nodes: 3, algorithm: Raft())"#;
        let scenario = splitbrain_scenario::parse(text, "short.ron").expect("a valid scenario");
        struct Boom;
        impl TraceSink for Boom {
            fn record(&mut self, _: &splitbrain_sim::TraceEvent) {
                panic!("the sink breaks");
            }
        }
        let failure = run_seed(&scenario, Some(&mut Boom), &|| false).unwrap_err();
        let RunFailure::Panicked(message) = failure else {
            panic!("{failure:?}")
        };
        assert!(message.contains("the sink breaks"), "{message}");
    }
}
