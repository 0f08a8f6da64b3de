//! Which members a systematic search may take for one another (docs/hunting.md,
//! "Symmetry"): decided once per search, from the scenario. Two states that differ only by
//! the names of these members are one state ([`splitbrain_sim::Sim::digest_symmetric`]).
//!
//! A member qualifies when the algorithm renames its processes' state
//! ([`splitbrain_algorithms::AlgorithmConfig::member_keys`]) and sets it as it sets the
//! others, when it has no clock, disk or link of its own in the scenario, and when no
//! explicit fault, heal or trigger of the scenario names it. The nemesis's own choices may
//! name members: they are the search's steps, each tried on every member. Service
//! processes never qualify.

use splitbrain_scenario::Scenario;
use splitbrain_sim::fault::{Actor, FaultAction, FaultSpec, MemberChange, PartitionShape, Target};
use splitbrain_sim::NodeId;
use std::collections::BTreeMap;

/// The members of `scenario` (its nemesis aside) that may take each other's names: the
/// largest set of members set alike that nothing names (the lowest ids among equally large
/// ones), in id order; empty when fewer than two qualify.
pub fn interchangeable(scenario: &Scenario) -> Vec<NodeId> {
    let members = scenario.sim.members;
    let Some(keys) = scenario.algorithm.member_keys(members) else {
        return Vec::new();
    };
    let named = named_members(scenario);
    let mut classes: BTreeMap<u64, Vec<NodeId>> = BTreeMap::new();
    for (member, key) in keys.iter().enumerate().take(members) {
        if !named.contains(&(member as u32)) {
            classes.entry(*key).or_default().push(NodeId::from(member));
        }
    }
    // The largest class; among equally large ones, the one with the lowest id.
    let largest = classes
        .into_values()
        .max_by(|a, b| a.len().cmp(&b.len()).then_with(|| b[0].cmp(&a[0])));
    largest.filter(|class| class.len() >= 2).unwrap_or_default()
}

/// The members the scenario sets apart by name: explicit clocks and disks, link overrides,
/// and explicit faults (their targets, shapes, member changes and triggers).
fn named_members(scenario: &Scenario) -> Vec<u32> {
    let sim = &scenario.sim;
    let mut named: Vec<u32> = Vec::new();
    named.extend(sim.clocks.per_node.iter().map(|c| c.node));
    named.extend(sim.disk.per_node.iter().map(|d| d.node));
    for link in &sim.network.overrides {
        named.extend([link.from, link.to]);
    }
    for fault in &sim.faults {
        named.extend(named_by_fault(fault));
    }
    named.sort();
    named.dedup();
    named
}

/// The members `fault` names.
fn named_by_fault(fault: &FaultSpec) -> Vec<u32> {
    let mut named = named_by_action(&fault.action);
    if let Some(trigger) = &fault.after
        && let Actor::Node(member) = trigger.by
    {
        named.push(member);
    }
    named
}

/// The members `action` names: its targets ([`FaultAction::targets`]), a partition's groups,
/// a membership change's member.
fn named_by_action(action: &FaultAction) -> Vec<u32> {
    let mut named: Vec<u32> = action
        .targets()
        .into_iter()
        .flat_map(named_by_target)
        .collect();
    match action {
        FaultAction::Partition(PartitionShape::Groups(groups)) => {
            named.extend(groups.iter().flatten().copied());
        }
        FaultAction::ConfChange(_, change) => {
            let (MemberChange::Add(m)
            | MemberChange::Remove(m)
            | MemberChange::AddLearner(m)
            | MemberChange::Promote(m)) = change;
            named.push(*m);
        }
        _ => {}
    }
    named
}

/// The member `target` names, if it names one.
fn named_by_target(target: &Target) -> Vec<u32> {
    match target {
        Target::Node(member) => vec![*member],
        _ => Vec::new(),
    }
}

/// `group` as the announce line says it: `n0-n2`, or `n0, n2, n4`.
fn describe(group: &[NodeId]) -> String {
    let contiguous = group.windows(2).all(|w| w[1].0 == w[0].0 + 1);
    match (group.first(), group.last()) {
        (Some(first), Some(last)) if contiguous && group.len() > 2 => format!("{first}-{last}"),
        _ => group
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What the announce line of a search adds about symmetry: `; symmetry: n0-n2
/// interchangeable`, or nothing.
pub fn announce(group: &[NodeId]) -> String {
    if group.is_empty() {
        return String::new();
    }
    format!("; symmetry: {} interchangeable", describe(group))
}

/// What the result line adds about the points pruned as renamings: `, 12 of them as
/// renamings`, or nothing.
pub fn pruned(symmetric_prunes: u64) -> String {
    if symmetric_prunes == 0 {
        return String::new();
    }
    format!(", {symmetric_prunes} of them as renamings")
}
