//! Passes on the faults themselves: remove them (ddmin), shorten them, weaken them.

use super::{bisect, ScenarioSteps, MIN_STEP_NS};
use splitbrain_scenario::Scenario;
use splitbrain_sim::{FaultAction, FaultSpec};

/// Removes chunks of faults, halving the chunk size down to single faults (ddmin-style).
pub(super) fn remove_faults(s: &mut ScenarioSteps<'_>) -> bool {
    ddmin(s, &|best, range| {
        let mut candidate = best.clone();
        candidate.sim.faults.drain(range);
        Some(candidate)
    })
}

/// Removes chunks of faults as [`remove_faults`] does, and slides the faults after a chunk
/// earlier, to where the chunk began, so that they keep their timing among themselves: a
/// timing bug's last faults often need the ones before only to set up a state that the
/// run, slid to an earlier moment, reaches as well. (A chunk at the end, or one whose faults
/// all strike at one time, is [`remove_faults`]'s.)
pub(super) fn remove_and_slide(s: &mut ScenarioSteps<'_>) -> bool {
    ddmin(s, &|best, range| {
        let faults = &best.sim.faults;
        let (from, to) = (faults[range.start].at_ns, faults.get(range.end)?.at_ns);
        if to == from {
            return None;
        }
        let mut candidate = best.clone();
        let end = range.end;
        for f in &mut candidate.sim.faults[end..] {
            f.at_ns -= to - from;
        }
        candidate.sim.faults.drain(range);
        Some(candidate)
    })
}

/// Tries `make(best, chunk)` for chunks of the faults, halving the chunk size down to single
/// faults (ddmin-style), keeping every candidate that still fails; a chunk `make` gives no
/// candidate for is passed over.
fn ddmin(
    s: &mut ScenarioSteps<'_>,
    make: &dyn Fn(&Scenario, std::ops::Range<usize>) -> Option<Scenario>,
) -> bool {
    let mut progress = false;
    let mut chunk = s.best.sim.faults.len().div_ceil(2).max(1);
    while !s.best.sim.faults.is_empty() && !s.exhausted() {
        let mut start = 0;
        while start < s.best.sim.faults.len() {
            let end = (start + chunk).min(s.best.sim.faults.len());
            let kept = make(&s.best, start..end).is_some_and(|c| s.try_step(c));
            if kept {
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
pub(super) fn length_of(fault: &FaultSpec) -> Option<u64> {
    match fault.action {
        FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => Some(d),
        _ => fault.heal_after_ns,
    }
}

/// The fault lasting `length` (from the same start).
pub(super) fn with_length(fault: &FaultSpec, length: u64) -> FaultSpec {
    let mut f = fault.clone();
    match &mut f.action {
        FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => {
            *d = length
        }
        _ => f.heal_after_ns = Some(length),
    }
    f
}

/// `best` with fault `i` replaced by `change(fault)`.
pub(super) fn with_fault(
    best: &Scenario,
    i: usize,
    change: impl FnOnce(&FaultSpec) -> FaultSpec,
) -> Scenario {
    let mut candidate = best.clone();
    candidate.sim.faults[i] = change(&best.sim.faults[i]);
    candidate
}

/// Halves each fault's length while the failure persists.
pub(super) fn halve_faults(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        while let Some(length) = length_of(&s.best.sim.faults[i]).filter(|l| *l >= 2 * MIN_STEP_NS)
        {
            if !s.try_step(with_fault(&s.best, i, |f| with_length(f, length / 2))) {
                break;
            }
            progress = true;
        }
    }
    progress
}

/// The search's precision for a quantity of `value`: a sixteenth of it, at least `floor`.
fn fine(value: u64, floor: u64) -> u64 {
    (value / 16).max(floor)
}

/// Shortens each fault to the shortest length that still fails, more finely than halving:
/// the shortest step first (often the length does not matter at all), then a binary search
/// between it and the fault's length, to a sixteenth of that length, trying round lengths.
pub(super) fn shorten_faults(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        progress |= shorten_one(s, i);
    }
    progress
}

fn shorten_one(s: &mut ScenarioSteps<'_>, i: usize) -> bool {
    let Some(length) = length_of(&s.best.sim.faults[i]).filter(|l| *l >= 2 * MIN_STEP_NS) else {
        return false;
    };
    let make = |best: &Scenario, l: u64| Some(with_fault(best, i, |f| with_length(f, l)));
    if s.try_step(with_fault(&s.best, i, |f| with_length(f, MIN_STEP_NS))) {
        return true;
    }
    let gap = fine(length, MIN_STEP_NS);
    bisect(s, length, MIN_STEP_NS, gap, &make).is_some()
}

/// How strong a fault is, apart from its length: a clock jump's size, a drift's rate, a loss
/// or duplication rate, a slow disk's fsync time.
pub(super) fn magnitude_of(action: &FaultAction) -> Option<u64> {
    match *action {
        FaultAction::ClockJump(_, ns) => Some(ns.unsigned_abs()),
        FaultAction::ClockDrift(_, ppm) => Some(ppm.unsigned_abs()),
        FaultAction::Loss(ppm) | FaultAction::Duplicate(ppm) => Some(u64::from(ppm)),
        FaultAction::SlowDisk(_, ns) => Some(ns),
        _ => None,
    }
}

/// The same fault with magnitude `m` (its sign kept).
pub(super) fn with_magnitude(fault: &FaultSpec, m: u64) -> FaultSpec {
    let mut f = fault.clone();
    let signed = |old: i64| {
        let m = i64::try_from(m).unwrap_or(i64::MAX);
        if old < 0 {
            -m
        } else {
            m
        }
    };
    match &mut f.action {
        FaultAction::ClockJump(_, ns) | FaultAction::ClockDrift(_, ns) => *ns = signed(*ns),
        FaultAction::Loss(ppm) | FaultAction::Duplicate(ppm) => {
            *ppm = u32::try_from(m).unwrap_or(u32::MAX)
        }
        FaultAction::SlowDisk(_, ns) => *ns = m,
        _ => {}
    }
    f
}

/// The least magnitude a search goes down to: a millisecond of clock or fsync, one part per
/// million of rate.
fn least_magnitude(action: &FaultAction) -> u64 {
    match action {
        FaultAction::ClockJump(..) | FaultAction::SlowDisk(..) => MIN_STEP_NS,
        _ => 1,
    }
}

/// Weakens each fault that has a magnitude (a clock jump or drift, a loss or duplication
/// rate, a slow disk) to the weakest that still fails, by binary search towards its least
/// magnitude, to a sixteenth of the magnitude kept, trying round values: a drift bug's
/// reproducer then says how much drift it takes.
pub(super) fn weaken_faults(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        let action = &s.best.sim.faults[i].action;
        let (Some(m), least) = (magnitude_of(action), least_magnitude(action)) else {
            continue;
        };
        if m < 2 * least {
            continue;
        }
        let make = |best: &Scenario, m: u64| Some(with_fault(best, i, |f| with_magnitude(f, m)));
        progress |= bisect(s, m, least, fine(m, least), &make).is_some();
    }
    progress
}
