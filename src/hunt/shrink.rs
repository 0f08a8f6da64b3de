//! Shrinking a failing schedule: remove faults, shorten them, move them earlier, reduce the
//! cluster and the run, re-running the same seed after every step and keeping a step only if
//! the same failure (same key) still happens. Greedy, to a fixed point or a run budget.
//!
//! Each fault draws its targets from its own stream (keyed by the fault), so removing one
//! fault leaves the others striking the same nodes; that is what lets this converge.

use super::record::Failure;
use crate::scenario::Scenario;
use splitbrain_sim::{FaultAction, FaultSpec};

/// A shrunk scenario and what it cost.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub scenario: Scenario,
    pub failure: Failure,
    /// Runs spent shrinking.
    pub runs: u32,
}

struct Shrinker<'a> {
    key: &'a str,
    runs: u32,
    max_runs: u32,
    /// Asked before every run: true ends the shrinking where it is (a signal arrived).
    stop: &'a dyn Fn() -> bool,
}

impl Shrinker<'_> {
    /// Runs `candidate`; returns its failure with our key, if it still fails that way.
    fn still_fails(&mut self, candidate: &Scenario) -> Option<Failure> {
        if self.runs >= self.max_runs {
            return None;
        }
        if (self.stop)() {
            self.max_runs = self.runs;
            return None;
        }
        self.runs += 1;
        let record = super::run_judged(candidate);
        record.failures.into_iter().find(|f| f.key == self.key)
    }

    /// Keeps `candidate` if it still fails; returns whether it did.
    fn try_step(
        &mut self,
        best: &mut Scenario,
        failure: &mut Failure,
        candidate: Scenario,
    ) -> bool {
        match self.still_fails(&candidate) {
            Some(f) => {
                *best = candidate;
                *failure = f;
                true
            }
            None => false,
        }
    }
}

/// Shrinks `start` (explicit faults, no nemesis) that fails with `failure`, in at most
/// `max_runs` runs, ending early (with what it has) when `stop` says so.
pub fn shrink(
    start: &Scenario,
    failure: &Failure,
    max_runs: u32,
    stop: &dyn Fn() -> bool,
) -> Shrunk {
    let mut s = Shrinker {
        key: &failure.key,
        runs: 0,
        max_runs,
        stop,
    };
    let mut best = start.clone();
    let mut current = failure.clone();
    loop {
        let mut progress = false;
        progress |= remove_faults(&mut s, &mut best, &mut current);
        progress |= shorten_faults(&mut s, &mut best, &mut current);
        progress |= move_faults_earlier(&mut s, &mut best, &mut current);
        progress |= reduce_members(&mut s, &mut best, &mut current);
        progress |= shorten_run(&mut s, &mut best, &mut current);
        if !progress || s.runs >= s.max_runs {
            break;
        }
    }
    Shrunk {
        scenario: best,
        failure: current,
        runs: s.runs,
    }
}

/// Removes chunks of faults, halving the chunk size down to single faults (ddmin-style).
fn remove_faults(s: &mut Shrinker<'_>, best: &mut Scenario, failure: &mut Failure) -> bool {
    let mut progress = false;
    let mut chunk = best.sim.faults.len().div_ceil(2).max(1);
    while chunk >= 1 && !best.sim.faults.is_empty() {
        let mut start = 0;
        while start < best.sim.faults.len() {
            let mut candidate = best.clone();
            let end = (start + chunk).min(candidate.sim.faults.len());
            candidate.sim.faults.drain(start..end);
            if s.try_step(best, failure, candidate) {
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
fn shorten_faults(s: &mut Shrinker<'_>, best: &mut Scenario, failure: &mut Failure) -> bool {
    let mut progress = false;
    for i in 0..best.sim.faults.len() {
        while let Some(length) = length_of(&best.sim.faults[i]).filter(|l| *l >= 2 * MIN_STEP_NS) {
            let mut candidate = best.clone();
            candidate.sim.faults[i] = with_length(&best.sim.faults[i], length / 2);
            if !s.try_step(best, failure, candidate) {
                break;
            }
            progress = true;
        }
    }
    progress
}

/// Moves each fault halfway towards the one before it (or time zero) while it still fails.
fn move_faults_earlier(s: &mut Shrinker<'_>, best: &mut Scenario, failure: &mut Failure) -> bool {
    let mut progress = false;
    for i in 0..best.sim.faults.len() {
        loop {
            let floor = if i == 0 {
                0
            } else {
                best.sim.faults[i - 1].at_ns
            };
            let at = best.sim.faults[i].at_ns;
            if at < floor + 2 * MIN_STEP_NS {
                break;
            }
            let mut candidate = best.clone();
            candidate.sim.faults[i].at_ns = floor + (at - floor) / 2;
            if !s.try_step(best, failure, candidate) {
                break;
            }
            progress = true;
        }
    }
    progress
}

/// Drops the highest-numbered member while the failure persists.
fn reduce_members(s: &mut Shrinker<'_>, best: &mut Scenario, failure: &mut Failure) -> bool {
    let mut progress = false;
    while best.sim.members > 1 {
        let Some(candidate) = best.resized(best.sim.members - 1) else {
            break;
        };
        if !s.try_step(best, failure, candidate) {
            break;
        }
        progress = true;
    }
    progress
}

/// Ends the run just after a safety violation (liveness needs its whole bound).
fn shorten_run(s: &mut Shrinker<'_>, best: &mut Scenario, failure: &mut Failure) -> bool {
    let Some(at) = failure.at_ns.filter(|_| failure.key != "liveness") else {
        return false;
    };
    // Round up to a whole 100 ms past the violation, for a readable file.
    let end = (at / 100_000_000 + 1) * 100_000_000;
    if end >= best.sim.duration_ns {
        return false;
    }
    let mut candidate = best.clone();
    candidate.sim.duration_ns = end;
    candidate.sim.faults.retain(|f| f.at_ns < end);
    s.try_step(best, failure, candidate)
}
