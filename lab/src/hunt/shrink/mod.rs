//! Shrinking a failure: a greedy search, generic over what is shrunk ([`shrink`],
//! [`shrink_in_tiers`]), and the scenario shrinker built on it ([`shrink_scenario`]),
//! re-running the same seed after every step and keeping a step only if the same failure
//! (same key) still happens. Greedy, to a fixed point or a run budget, in three tiers:
//!
//! - coarse, to a fixed point: remove faults (ddmin), drop those that did nothing and merge
//!   those that cover one another, halve lengths, halve the time from the fault before,
//!   drop members, end the run at the violation;
//! - fine, at each fixed point: remove faults and slide the later ones into their place
//!   (their timing among themselves kept);
//! - polish, once at the end: name the node a drawn target struck, find the shortest length
//!   and the weakest clock jump, drift or loss by binary search, close the gaps between
//!   faults, shift starts later, and snap each fault to just after the event it follows.
//!
//! Each fault draws its targets from its own stream (keyed by the fault), so removing one
//! fault leaves the others striking the same nodes; that is what lets this converge.
//!
//! Every step the coarse and fine passes keep makes the schedule smaller by one measure, in
//! this order: fewer faults, fewer members, a shorter run, a smaller sum of fault lengths and
//! magnitudes, a smaller sum of fault times. So they cannot undo one another, and shrinking
//! ends; the polish passes run once.

mod faults;
mod merge;
mod sites;
mod targets;
#[cfg(test)]
mod tests;
mod timing;

pub use sites::{describe_event, fault_notes};

use super::record::Failure;
use splitbrain_scenario::Scenario;

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
    /// Whether no run is left: the budget is spent, or `stop` said so.
    pub fn exhausted(&self) -> bool {
        self.runs >= self.max_runs
    }

    /// Counts one run a pass makes to look, not to try a candidate (a traced run); returns
    /// whether it may make it (the budget allows, and `stop` does not say otherwise).
    pub fn spend(&mut self) -> bool {
        if self.runs >= self.max_runs {
            return false;
        }
        if (self.stop)() {
            self.max_runs = self.runs;
            return false;
        }
        self.runs += 1;
        true
    }

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
    run: impl FnMut(&C) -> Option<O>,
) -> Shrunk<C, O> {
    let tiers = Tiers {
        coarse: passes,
        fine: &[],
        polish: &[],
    };
    shrink_in_tiers(start, outcome, max_runs, stop, tiers, run)
}

/// A shrinker's passes in three tiers: the `coarse` ones, cheap and large, run to a fixed
/// point; the `fine` ones, dearer, run once each time the coarse ones reach a fixed point,
/// and again only after a coarse one made progress since; the `polish` ones, which make
/// what is kept finer but never smaller in count (shorter, earlier, rounder), run once, last.
pub struct Tiers<'p, C, O> {
    /// Run to a fixed point.
    pub coarse: &'p [Pass<C, O>],
    /// Run once at each fixed point of the coarse ones.
    pub fine: &'p [Pass<C, O>],
    /// Run once at the end.
    pub polish: &'p [Pass<C, O>],
}

/// [`shrink`] with passes in [`Tiers`].
///
/// ```
/// use splitbrain_lab::hunt::shrink::{shrink_in_tiers, Steps, Tiers};
///
/// // A multiple of 6 above 100 fails. Halve to a fixed point, then step down by 6 (and
/// // halve again if that helped), then try one less, once.
/// fn halve(s: &mut Steps<'_, u64, u64>) -> bool {
///     s.try_step(s.best / 2)
/// }
/// fn six(s: &mut Steps<'_, u64, u64>) -> bool {
///     s.try_step(s.best - 6)
/// }
/// fn one(s: &mut Steps<'_, u64, u64>) -> bool {
///     s.try_step(s.best - 1)
/// }
/// let fails = |n: &u64| (*n > 100 && n % 6 == 0).then_some(*n);
/// let tiers = Tiers { coarse: &[halve], fine: &[six], polish: &[one] };
/// let shrunk = shrink_in_tiers(960, 960, 100, &|| false, tiers, fails);
/// assert_eq!(shrunk.candidate, 114);
/// assert_eq!(shrunk.runs, 7); // 480, 240, 120, 60 (passes); 114, 57 (passes); 113 (passes)
/// ```
pub fn shrink_in_tiers<C: Clone, O>(
    start: C,
    outcome: O,
    max_runs: u32,
    stop: &dyn Fn() -> bool,
    tiers: Tiers<'_, C, O>,
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
    to_fixed_point(&mut s, tiers.coarse);
    while !s.exhausted() && each_once(&mut s, tiers.fine) && to_fixed_point(&mut s, tiers.coarse) {}
    each_once(&mut s, tiers.polish);
    Shrunk {
        candidate: s.best,
        outcome: s.outcome,
        runs: s.runs,
    }
}

/// Applies `passes` in turn, once each; returns whether any made progress.
fn each_once<C, O>(s: &mut Steps<'_, C, O>, passes: &[Pass<C, O>]) -> bool {
    let mut progress = false;
    for pass in passes {
        progress |= pass(s);
    }
    progress
}

/// Applies `passes` in turn until none makes progress or the budget is spent; returns
/// whether any made progress.
fn to_fixed_point<C, O>(s: &mut Steps<'_, C, O>, passes: &[Pass<C, O>]) -> bool {
    let mut progress = false;
    while each_once(s, passes) {
        progress = true;
        if s.exhausted() {
            break;
        }
    }
    progress
}

/// Shrinks `start` (explicit faults, no nemesis) that fails with `failure`, in at most
/// `max_runs` runs, ending early (with what it has) when `stop` says so. Each candidate runs
/// through the hunt's judged runner (a panic is a failure under the key `panic`). Its faults
/// are put in time order first (the order they fire in: the run is the same), and the
/// timing passes keep them so.
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
    let mut start = start.clone();
    // Stable: faults due at the same time fire in the order written, which stays. (A
    // scenario still holding ranges lines them up with its faults: left as it is.)
    if start.fault_spreads.is_empty() {
        start.sim.faults.sort_by_key(|f| f.at_ns);
    }
    let tiers = Tiers {
        coarse: &COARSE_PASSES,
        fine: &FINE_PASSES,
        polish: &POLISH_PASSES,
    };
    shrink_in_tiers(start, failure.clone(), max_runs, stop, tiers, still_fails)
}

/// The scenario shrinker's cheap passes, run to a fixed point: remove faults, drop those
/// that did nothing and merge those that cover one another, halve lengths, halve the time
/// from the fault before, drop members, end the run at the violation (last: a removal
/// that delays the violation may still find it later in the whole run).
pub const COARSE_PASSES: [Pass<Scenario, Failure>; 6] = [
    faults::remove_faults,
    merge::merge_faults,
    faults::halve_faults,
    timing::move_faults_earlier,
    reduce_members,
    shorten_run,
];

/// The scenario shrinker's dearer pass, run at each fixed point of the coarse ones: remove
/// faults and slide the later ones into their place.
pub const FINE_PASSES: [Pass<Scenario, Failure>; 1] = [faults::remove_and_slide];

/// The scenario shrinker's last passes, once each (binary searches: a few runs per fault):
/// name the node a `Random` or `Follower` target struck, the shortest length, the weakest
/// clock jump, drift or loss, the earliest time (the faults after moving with it), the
/// latest start (the end kept), and a snap to just after the event each fault follows.
pub const POLISH_PASSES: [Pass<Scenario, Failure>; 6] = [
    targets::pin_targets,
    faults::shorten_faults,
    faults::weaken_faults,
    timing::close_gaps,
    timing::shift_faults_later,
    timing::snap_faults,
];

type ScenarioSteps<'a> = Steps<'a, Scenario, Failure>;

/// The finest step in time or length a pass takes.
const MIN_STEP_NS: u64 = 1_000_000;

/// Searches between `fail` (the best's value, which fails) and `pass` (one that is taken not
/// to), trying `make(best, value)` for values in between, each as round as it can be
/// ([`round_between`]), until the two are within `gap`; keeps every candidate that still
/// fails. Returns the last value kept, if any.
fn bisect(
    s: &mut ScenarioSteps<'_>,
    mut fail: u64,
    mut pass: u64,
    gap: u64,
    make: &dyn Fn(&Scenario, u64) -> Option<Scenario>,
) -> Option<u64> {
    let mut kept = None;
    while fail.abs_diff(pass) > gap.max(1) && !s.exhausted() {
        let Some(mid) = round_between(pass, fail) else {
            break;
        };
        let Some(candidate) = make(&s.best, mid) else {
            break;
        };
        if s.try_step(candidate) {
            fail = mid;
            kept = Some(mid);
        } else {
            pass = mid;
        }
    }
    kept
}

/// The roundest value strictly between `a` and `b` (the fewest significant digits), nearest
/// their midpoint: what a reproducer shows stays readable (`250ms`, not `243.890123ms`).
///
/// ```text
/// round_between(0, 1_000) = 500;  round_between(1_200, 1_290) = 1_250
/// ```
fn round_between(a: u64, b: u64) -> Option<u64> {
    let (lo, hi) = (a.min(b), a.max(b));
    if hi - lo < 2 {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    let mut unit = 10u64.pow(mid.checked_ilog10().unwrap_or(0));
    loop {
        let rounded = (mid + unit / 2) / unit * unit;
        if rounded > lo && rounded < hi {
            return Some(rounded);
        }
        if unit == 1 {
            return Some(mid);
        }
        unit /= 10;
    }
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

/// The time of the safety violation being kept, if the failure is one and has a time
/// (liveness needs its whole bound, and a missed objective the failover's whole recovery).
fn violation_at(s: &ScenarioSteps<'_>) -> Option<u64> {
    let needs_the_rest = ["liveness", "objective"].contains(&s.outcome.key.as_str());
    s.outcome.at_ns.filter(|_| !needs_the_rest)
}

/// Ends the run just after a safety violation (liveness needs its whole bound, and a missed
/// objective the failover's whole recovery: a failover cut short never recovers), dropping
/// the faults after it.
fn shorten_run(s: &mut ScenarioSteps<'_>) -> bool {
    let Some(at) = violation_at(s) else {
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
