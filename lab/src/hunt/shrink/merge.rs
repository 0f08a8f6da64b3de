//! Fewer faults for the same effect: drop those that did nothing, and merge two that cover
//! one another (two overlapping pauses of one node, a second crash of a node already down,
//! two cuts of the same shape around the same node) into one that lasts as long as both.

use super::faults::{length_of, with_length};
use super::sites::{traced, Site};
use super::ScenarioSteps;
use splitbrain_sim::{FaultAction, FaultSpec, Nanos};

/// Drops every fault that did nothing in the best's run (its target matched nobody when it
/// fired), in one step, then merges pairs that cover one another ([`mergeable`]), each
/// tried once. One traced run.
pub(super) fn merge_faults(s: &mut ScenarioSteps<'_>) -> bool {
    let Some(mut sites) = traced(s) else {
        return false;
    };
    let fired = sites.len().min(s.best.sim.faults.len());
    sites.truncate(fired);
    if sites
        .iter()
        .zip(&s.best.sim.faults)
        .any(|(site, f)| site.at_ns != f.at_ns)
    {
        return false;
    }
    let mut progress = drop_inert(s, &mut sites);
    let mut i = 0;
    while i < sites.len() && !s.exhausted() {
        match (i + 1..sites.len()).find(|&j| mergeable(s, &sites, i, j)) {
            Some(j) if s.try_step(merged(&s.best, i, j)) => {
                sites.remove(j);
                progress = true;
            }
            _ => i += 1,
        }
    }
    progress
}

/// Removes the faults whose sites say they did nothing, keeping `sites` in step.
fn drop_inert(s: &mut ScenarioSteps<'_>, sites: &mut Vec<Site>) -> bool {
    if !sites.iter().any(|site| site.skipped) {
        return false;
    }
    let mut candidate = s.best.clone();
    let mut index = 0;
    candidate.sim.faults.retain(|_| {
        index += 1;
        !sites.get(index - 1).is_some_and(|site| site.skipped)
    });
    if !s.try_step(candidate) {
        return false;
    }
    sites.retain(|site| !site.skipped);
    true
}

/// When fault `i` ends: its start plus its length, or its start for one without.
fn end_of(f: &FaultSpec) -> Nanos {
    f.at_ns.saturating_add(length_of(f).unwrap_or(0))
}

/// Whether faults `i` and `j` (`i < j`) may merge: the same kind and shape, striking the same
/// nodes (as they resolved in the run), with a length to stretch, and `j` starting before
/// `i` ends or within the longer one's length after (a crash, then another of the same node).
fn mergeable(s: &ScenarioSteps<'_>, sites: &[Site], i: usize, j: usize) -> bool {
    let (a, b) = (&s.best.sim.faults[i], &s.best.sim.faults[j]);
    let (Some(len_a), Some(len_b)) = (length_of(a), length_of(b)) else {
        return false;
    };
    let same = sites[i].kind == sites[j].kind
        && sites[i].nodes == sites[j].nodes
        && !sites[i].nodes.is_empty()
        && same_shape(&a.action, &b.action);
    same && b.at_ns <= end_of(a).saturating_add(len_a.max(len_b))
}

/// Whether two actions are the same kind of fault, of a kind that merging keeps the same: a
/// crash, a pause, a suspend, or a partition of the same shape (a stall strikes a handler,
/// and a clock, loss or disk fault sets a value: not merged).
fn same_shape(a: &FaultAction, b: &FaultAction) -> bool {
    use FaultAction::*;
    match (a, b) {
        (Crash(_), Crash(_)) | (Pause(..), Pause(..)) | (Suspend(..), Suspend(..)) => true,
        (Partition(x), Partition(y)) => std::mem::discriminant(x) == std::mem::discriminant(y),
        _ => false,
    }
}

/// `best` with fault `i` lasting until the later of the two ends and fault `j` removed.
fn merged(
    best: &splitbrain_scenario::Scenario,
    i: usize,
    j: usize,
) -> splitbrain_scenario::Scenario {
    let mut candidate = best.clone();
    let (a, b) = (&best.sim.faults[i], &best.sim.faults[j]);
    let end = end_of(a).max(end_of(b));
    candidate.sim.faults[i] = with_length(a, end - a.at_ns);
    candidate.sim.faults.remove(j);
    candidate
}
