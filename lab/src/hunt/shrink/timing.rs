//! Passes on when faults strike: move each earlier (alone, or with the faults after it),
//! shift its start later (its end kept, so it gets shorter), and snap it to just after the
//! event it follows. Each keeps the faults in time order: a fault moves only between its
//! neighbours, or with every fault after it.

use super::faults::{length_of, with_fault, with_length};
use super::sites::{traced, Site};
use super::{bisect, ScenarioSteps, MIN_STEP_NS};
use splitbrain_scenario::Scenario;
use splitbrain_sim::{FaultSpec, Nanos};

/// How long after the event it follows a snapped fault strikes: just after it.
pub const SNAP_AFTER_NS: Nanos = 1_000;

/// The searches' precision over a stretch of time: a sixteenth of it, at least a
/// millisecond.
fn fine(span_ns: u64) -> u64 {
    (span_ns / 16).max(MIN_STEP_NS)
}

/// No fault may strike before this: the one before it.
fn floor_of(best: &Scenario, i: usize) -> Nanos {
    i.checked_sub(1).map_or(0, |p| best.sim.faults[p].at_ns)
}

/// `best` with fault `i` striking at `at_ns` instead, as long as before.
fn at(best: &Scenario, i: usize, at_ns: Nanos) -> Scenario {
    with_fault(best, i, |f| FaultSpec { at_ns, ..f.clone() })
}

/// Moves each fault halfway towards the one before it (or time zero) while it still fails.
pub(super) fn move_faults_earlier(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        loop {
            let floor = floor_of(&s.best, i);
            let at_ns = s.best.sim.faults[i].at_ns;
            if at_ns < floor + 2 * MIN_STEP_NS
                || !s.try_step(at(&s.best, i, floor + (at_ns - floor) / 2))
            {
                break;
            }
            progress = true;
        }
    }
    progress
}

/// Closes the gap before each fault: moves it, and every fault after it with it (so that
/// they keep their timing among themselves), as early as the failure persists, by binary
/// search between the fault before it (or time zero) and where it is, to a sixteenth of that
/// time, trying round times. Finer than [`move_faults_earlier`], which halves and moves
/// one fault alone.
pub(super) fn close_gaps(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        let floor = floor_of(&s.best, i);
        let at_ns = s.best.sim.faults[i].at_ns;
        if at_ns < floor + 2 * MIN_STEP_NS {
            continue;
        }
        let make = |best: &Scenario, t: u64| {
            let by = best.sim.faults[i].at_ns.checked_sub(t)?;
            let mut candidate = best.clone();
            candidate.sim.faults[i..]
                .iter_mut()
                .for_each(|f| f.at_ns -= by);
            Some(candidate)
        };
        progress |= bisect(s, at_ns, floor, fine(at_ns - floor), &make).is_some();
    }
    progress
}

/// Shifts each fault's start as late as it still fails, its end kept (so it gets shorter),
/// by binary search up to the fault after it (and a millisecond before its end): the search
/// the other way from [`close_gaps`], for a fault whose end is what matters.
pub(super) fn shift_faults_later(s: &mut ScenarioSteps<'_>) -> bool {
    let mut progress = false;
    for i in 0..s.best.sim.faults.len() {
        let fault = &s.best.sim.faults[i];
        let Some(length) = length_of(fault) else {
            continue;
        };
        let (start, end) = (fault.at_ns, fault.at_ns.saturating_add(length));
        let next = s.best.sim.faults.get(i + 1).map_or(Nanos::MAX, |f| f.at_ns);
        let ceiling = next.min(end.saturating_sub(MIN_STEP_NS));
        if ceiling < start + 2 * MIN_STEP_NS {
            continue;
        }
        let make = |best: &Scenario, t: u64| {
            Some(with_fault(best, i, |f| FaultSpec {
                at_ns: t,
                ..with_length(f, end - t)
            }))
        };
        progress |= bisect(s, start, ceiling, fine(ceiling - start), &make).is_some();
    }
    progress
}

/// Snaps each fault to [`SNAP_AFTER_NS`] after the last event before it at a node it strikes
/// (a crash just after the node granted a vote), else after the last event anywhere, if it
/// still fails there: its length kept, else its end kept (for a process fault, no event of
/// its node lies between, so the run is the same). The reproducer then shows the event that
/// matters ([`super::fault_notes`]). One traced run; the faults are taken from the last to the
/// first, so that the trace, which a move changes only after the moved fault, holds for each.
/// A polish pass: run once, it may lengthen a fault (the end kept), which the passes that run
/// to a fixed point never do.
pub(super) fn snap_faults(s: &mut ScenarioSteps<'_>) -> bool {
    let Some(sites) = traced(s) else {
        return false;
    };
    let mut progress = false;
    for i in (0..s.best.sim.faults.len().min(sites.len())).rev() {
        progress |= snap_one(s, i, &sites[i]);
    }
    progress
}

fn snap_one(s: &mut ScenarioSteps<'_>, i: usize, site: &Site) -> bool {
    let fault = s.best.sim.faults[i].clone();
    if site.at_ns != fault.at_ns {
        return false;
    }
    let floor = floor_of(&s.best, i);
    let mut tried = Vec::new();
    for event in [&site.struck_last, &site.last].into_iter().flatten() {
        let snapped = event.t_ns.saturating_add(SNAP_AFTER_NS);
        if snapped >= fault.at_ns || snapped < floor || tried.contains(&snapped) {
            continue;
        }
        tried.push(snapped);
        if s.try_step(at(&s.best, i, snapped)) {
            return true;
        }
        let Some(length) = length_of(&fault) else {
            continue;
        };
        let end_kept = FaultSpec {
            at_ns: snapped,
            ..with_length(&fault, length + (fault.at_ns - snapped))
        };
        if s.try_step(with_fault(&s.best, i, |_| end_kept)) {
            return true;
        }
    }
    false
}
