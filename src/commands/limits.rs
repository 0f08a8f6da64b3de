//! The runtime guard as the CLI runs it: every run watched by the wall clock (the engine
//! reads none), and what the CLI says when a run outgrows a limit (`--max-events`,
//! `--max-in-flight`, `--max-memory`, `--max-time`).

// The wall clock bounds a run's time; it never changes what a run computes.
#![allow(clippy::disallowed_types)]

use splitbrain_algorithms::{AlgorithmConfig, RunOptions};
use splitbrain_sim::limits::{Limit, LimitExceeded, Stop};
use splitbrain_sim::{RunError, RunReport, SimConfig, TraceSink};
use std::time::{Duration, Instant};

/// Runs `sim` with `algorithm`, ended once it has taken longer than its
/// `limits.max_wall_ms` by the wall clock, or once `interrupted` says so.
pub fn run_watched(
    algorithm: &AlgorithmConfig,
    sim: SimConfig,
    trace: Option<&mut dyn TraceSink>,
    interrupted: &(dyn Fn() -> bool + Sync),
) -> Result<RunReport, LimitExceeded> {
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
) -> Result<RunReport, LimitExceeded> {
    let watch = WallWatch::start(sim.limits.max_wall_ms);
    let stop = || watch.check(interrupted);
    let options = RunOptions {
        // Re-borrowed, so that they live no longer than `stop`.
        trace: match options.trace {
            Some(sink) => Some(sink),
            None => None,
        },
        progress: match options.progress {
            Some(progress) => Some(progress),
            None => None,
        },
        max_events: options.max_events,
        stop: Some(&stop),
        properties: options.properties,
    };
    splitbrain_algorithms::run_with(algorithm, sim, options).map_err(|e| match e {
        RunError::Limit(e) => e,
        // The CLI runs the built-in algorithms, whose effects the engine never refuses: a
        // refusal is a bug in one of them, and a hunt reports it as that seed's panic.
        RunError::Refused(refused) => panic!("bug in a built-in algorithm: {refused}"),
    })
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

/// The error and its hint, for the run named by `what` (a file and seed, a design...).
pub fn message(what: &str, e: &LimitExceeded) -> String {
    format!("error: {what}: {e}\n  hint: {}", hint(e))
}

/// How to get past the limit: raise it, or make the run smaller.
pub fn hint(e: &LimitExceeded) -> String {
    let raised = match e.limit {
        // In whole MiB or ms: what the flags take back.
        Limit::Memory => format!("{}MiB", e.allowed.saturating_mul(2).div_ceil(1 << 20)),
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
        Limit::Memory => "a shorter `duration` or fewer nodes",
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
