//! Shrinking a failure: a greedy search, generic over what is shrunk ([`shrink`]), and the
//! scenario shrinker built on it ([`shrink_scenario`]): remove faults, shorten them, move
//! them earlier, reduce the cluster and the run, re-running the same seed after every step
//! and keeping a step only if the same failure (same key) still happens. Greedy, to a fixed
//! point or a run budget.
//!
//! Each fault draws its targets from its own stream (keyed by the fault), so removing one
//! fault leaves the others striking the same nodes; that is what lets this converge.

use super::record::Failure;
use splitbrain_scenario::Scenario;
use splitbrain_sim::{FaultAction, FaultSpec};

/// What shrinking kept, and what it cost.
#[derive(Clone, Debug)]
pub struct Shrunk<C, O> {
    /// The smallest candidate that still failed.
    pub candidate: C,
    /// How it failed.
    pub outcome: O,
    /// Runs spent shrinking.
    pub runs: u32,
}

/// The state of a shrink that a pass works on: the best candidate so far and how it failed,
/// and the budget of runs.
pub struct Steps<'a, C, O> {
    /// The smallest candidate found so far that still fails.
    pub best: C,
    /// How it fails.
    pub outcome: O,
    runs: u32,
    max_runs: u32,
    /// Asked before every run: true ends the shrinking where it is (a signal arrived).
    stop: &'a dyn Fn() -> bool,
    /// Runs a candidate: `Some` with how it failed if it still fails the same way.
    run: &'a mut dyn FnMut(&C) -> Option<O>,
}

impl<C, O> Steps<'_, C, O> {
    /// Runs `candidate` and keeps it (as [`Steps::best`]) if it still fails; returns
    /// whether it did. Nothing runs once the budget is spent or `stop` says so.
    pub fn try_step(&mut self, candidate: C) -> bool {
        if self.runs >= self.max_runs {
            return false;
        }
        if (self.stop)() {
            self.max_runs = self.runs;
            return false;
        }
        self.runs += 1;
        match (self.run)(&candidate) {
            Some(outcome) => {
                self.best = candidate;
                self.outcome = outcome;
                true
            }
            None => false,
        }
    }
}

/// A pass of a shrinker: tries smaller candidates through [`Steps::try_step`]; returns
/// whether any was kept.
pub type Pass<C, O> = fn(&mut Steps<'_, C, O>) -> bool;

/// Shrinks `start`, which fails with `outcome`: applies `passes` in turn until none makes
/// progress or `max_runs` runs are spent, ending early (with what it has) when `stop` says
/// so. `run` runs a candidate and says how it fails, if it still fails the same way.
///
/// ```
/// use splitbrain_lab::hunt::shrink::{shrink, Steps};
///
/// // The smallest number above 100 that is still a multiple of 7.
/// fn halve(s: &mut Steps<'_, u64, u64>) -> bool {
///     let mut progress = false;
///     while s.try_step(s.best / 2) {
///         progress = true;
///     }
///     progress
/// }
/// fn decrement(s: &mut Steps<'_, u64, u64>) -> bool {
///     s.try_step(s.best - 7)
/// }
/// let fails = |n: &u64| (*n > 100 && n % 7 == 0).then_some(*n);
/// let shrunk = shrink(7_000, 7_000, 100, &|| false, &[halve, decrement], fails);
/// assert_eq!(shrunk.candidate, 105);
/// ```
pub fn shrink<C: Clone, O>(
    start: C,
    outcome: O,
    max_runs: u32,
    stop: &dyn Fn() -> bool,
    passes: &[Pass<C, O>],
    mut run: impl FnMut(&C) -> Option<O>,
) -> Shrunk<C, O> {
    let mut s = Steps {
        best: start,
        outcome,
        runs: 0,
        max_runs,
        stop,
        run: &mut run,
    };
    loop {
        let mut progress = false;
        for pass in passes {
            progress |= pass(&mut s);
        }
        if !progress || s.runs >= s.max_runs {
            break;
        }
    }
    Shrunk {
        candidate: s.best,
        outcome: s.outcome,
        runs: s.runs,
    }
}

/// Shrinks `start` (explicit faults, no nemesis) that fails with `failure`, in at most
/// `max_runs` runs, ending early (with what it has) when `stop` says so. Each candidate runs
/// through the hunt's judged runner (a panic is a failure under the key `panic`).
pub fn shrink_scenario(
    start: &Scenario,
    failure: &Failure,
    max_runs: u32,
    stop: &dyn Fn() -> bool,
) -> Shrunk<Scenario, Failure> {
    let key = failure.key.clone();
    let still_fails = |candidate: &Scenario| {
        let record = super::run_judged(candidate);
        record.failures.into_iter().find(|f| f.key == key)
    };
    let passes: [Pass<Scenario, Failure>; 5] = [
        remove_faults,
        shorten_faults,
        move_faults_earlier,
        reduce_members,
        shorten_run,
    ];
    shrink(
        start.clone(),
        failure.clone(),
        max_runs,
        stop,
        &passes,
        still_fails,
    )
}

type ScenarioSteps<'a> = Steps<'a, Scenario, Failure>;

/// Removes chunks of faults, halving the chunk size down to single faults (ddmin-style).
fn remove_faults(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    let mut chunk = s.best.sim.faults.len().div_ceil(2).max(1);
    while chunk >= 1 && !s.best.sim.faults.is_empty() {
        let mut start = 0;
        while start < s.best.sim.faults.len() {
            let mut candidate = s.best.clone();
            let end = (start + chunk).min(candidate.sim.faults.len());
            candidate.sim.faults.drain(start..end);
            if s.try_step(candidate) {
                progress = true;
            } else {
                start += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    progress
}

/// The fault's own length (heal_after, pause or stall duration), if it has one.
fn length_of(fault: &FaultSpec) -> Option<u64> {
    match fault.action {
        FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => Some(d),
        _ => fault.heal_after_ns,
    }
}

fn with_length(fault: &FaultSpec, length: u64) -> FaultSpec {
    let mut f = fault.clone();
    match &mut f.action {
        FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => {
            *d = length
        }
        _ => f.heal_after_ns = Some(length),
    }
    f
}

const MIN_STEP_NS: u64 = 1_000_000;

/// Halves each fault's length while the failure persists.
fn shorten_faults(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        while let Some(length) = length_of(&s.best.sim.faults[i]).filter(|l| *l >= 2 * MIN_STEP_NS)
        {
            let mut candidate = s.best.clone();
            candidate.sim.faults[i] = with_length(&s.best.sim.faults[i], length / 2);
            if !s.try_step(candidate) {
                break;
            }
            progress = true;
        }
    }
    progress
}

/// Moves each fault halfway towards the one before it (or time zero) while it still fails.
fn move_faults_earlier(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        loop {
            let floor = if i == 0 {
                0
            } else {
                s.best.sim.faults[i - 1].at_ns
            };
            let at = s.best.sim.faults[i].at_ns;
            if at < floor + 2 * MIN_STEP_NS {
                break;
            }
            let mut candidate = s.best.clone();
            candidate.sim.faults[i].at_ns = floor + (at - floor) / 2;
            if !s.try_step(candidate) {
                break;
            }
            progress = true;
        }
    }
    progress
}

/// Drops the highest-numbered member while the failure persists.
fn reduce_members(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    while s.best.sim.members > 1 {
        let Some(candidate) = s.best.resized(s.best.sim.members - 1) else {
            break;
        };
        if !s.try_step(candidate) {
            break;
        }
        progress = true;
    }
    progress
}

/// Ends the run just after a safety violation (liveness needs its whole bound, and a missed
/// objective the failover's whole recovery: a failover cut short never recovers).
fn shorten_run(s: &mut ScenarioSteps<'_>) -> bool {
    let needs_the_rest = ["liveness", "objective"].contains(&s.outcome.key.as_str());
    let Some(at) = s.outcome.at_ns.filter(|_| !needs_the_rest) else {
        return false;
    };
    // Round up to a whole 100 ms past the violation, for a readable file.
    let end = (at / 100_000_000 + 1) * 100_000_000;
    if end >= s.best.sim.duration_ns {
        return false;
    }
    let mut candidate = s.best.clone();
    candidate.sim.duration_ns = end;
    candidate.sim.faults.retain(|f| f.at_ns < end);
    s.try_step(candidate)
}
