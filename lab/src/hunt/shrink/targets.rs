//! Naming whom a fault struck: a `Random` or `Follower` target becomes the node it resolved
//! to in the run, so that a reproducer says who is struck (the leader stays `Leader`: who
//! leads is what the reader follows).

use super::sites::traced;
use super::ScenarioSteps;
use splitbrain_sim::{FaultAction, PartitionShape, Target};

/// Names, in one step, the node every fault with a drawn target (`Random`, `Follower`)
/// struck in the best's run, for the faults that strike one node; kept if it still fails
/// (a fault draws from a stream of its own, keyed by what it is: a named target may strike
/// differently, so this is a step like any other). One traced run and one try.
pub(super) fn pin_targets(s: &mut ScenarioSteps<'_>) -> bool {
    let drawn = |t: &Target| matches!(t, Target::Random | Target::Follower);
    let pinnable = |f: &splitbrain_sim::FaultSpec| first_target(&f.action).is_some_and(drawn);
    if !s.best.sim.faults.iter().any(pinnable) {
        return false;
    }
    let Some(sites) = traced(s) else {
        return false;
    };
    let mut candidate = s.best.clone();
    let mut pinned = false;
    for (fault, site) in candidate.sim.faults.iter_mut().zip(&sites) {
        let [node] = site.nodes[..] else {
            continue;
        };
        if site.at_ns != fault.at_ns || !pinnable(fault) {
            continue;
        }
        if let Some(target) = first_target_mut(&mut fault.action) {
            *target = Target::Node(node.0);
            pinned = true;
        }
    }
    pinned && s.try_step(candidate)
}

/// The target of a fault that strikes one node through it: a process fault's, or an
/// isolation's (other shapes resolve further targets, or groups, from their draws).
fn first_target(action: &FaultAction) -> Option<&Target> {
    match action {
        FaultAction::Crash(t)
        | FaultAction::Pause(t, _)
        | FaultAction::Suspend(t, _)
        | FaultAction::Stall(t, _)
        | FaultAction::ClockJump(t, _)
        | FaultAction::ClockDrift(t, _)
        | FaultAction::SlowDisk(t, _)
        | FaultAction::Partition(PartitionShape::Isolate(t)) => Some(t),
        _ => None,
    }
}

fn first_target_mut(action: &mut FaultAction) -> Option<&mut Target> {
    match action {
        FaultAction::Crash(t)
        | FaultAction::Pause(t, _)
        | FaultAction::Suspend(t, _)
        | FaultAction::Stall(t, _)
        | FaultAction::ClockJump(t, _)
        | FaultAction::ClockDrift(t, _)
        | FaultAction::SlowDisk(t, _)
        | FaultAction::Partition(PartitionShape::Isolate(t)) => Some(t),
        _ => None,
    }
}
