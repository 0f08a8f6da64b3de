//! The liveness check: after the last fault heals, a leader that every live, connected member
//! recognises must appear within a bound. Incremental: each handler updates one member's
//! recognised leader, and a count per leader says when everyone agrees.

use crate::ids::NodeId;
use crate::report::LivenessVerdict;
use crate::time::{format_duration, Nanos};
use std::collections::BTreeMap;

#[derive(Debug)]
enum Phase {
    /// Faults are still active.
    Waiting,
    /// Watching the group for agreement.
    Watching {
        in_group: Vec<bool>,
        group_size: usize,
        votes: BTreeMap<NodeId, usize>,
    },
    Done(LivenessVerdict),
}

/// Watches for a recognised leader after the last fault.
#[derive(Debug)]
pub struct LivenessMonitor {
    pub(crate) quiet_from_ns: Nanos,
    pub(crate) bound_ns: Nanos,
    /// The leader each member recognises, updated after each of its handlers.
    recognised: Vec<Option<NodeId>>,
    phase: Phase,
}

impl LivenessMonitor {
    pub(crate) fn new(members: usize, bound_ns: Nanos) -> Self {
        Self {
            quiet_from_ns: 0,
            bound_ns,
            recognised: vec![None; members],
            phase: Phase::Waiting,
        }
    }

    /// The deadline by which a leader must be recognised.
    pub fn deadline_ns(&self) -> Nanos {
        self.quiet_from_ns.saturating_add(self.bound_ns)
    }

    /// The faults are over: start watching `group` (live, mutually connected members), or
    /// give the verdict `Impossible` when it is smaller than `min_group`.
    pub fn start(&mut self, now: Nanos, group: Vec<NodeId>, members: usize, min_group: usize) {
        self.quiet_from_ns = now;
        if group.len() < min_group {
            let reason = format!(
                "only {} of {members} members are live and connected after the last fault; \
                 the algorithm needs {min_group} to elect a leader",
                group.len()
            );
            self.phase = Phase::Done(LivenessVerdict::Impossible {
                quiet_from_ns: self.quiet_from_ns,
                reason,
            });
            return;
        }
        let mut in_group = vec![false; self.recognised.len()];
        let mut votes = BTreeMap::new();
        for node in &group {
            in_group[node.index()] = true;
            if let Some(leader) = self.recognised[node.index()] {
                *votes.entry(leader).or_insert(0) += 1;
            }
        }
        self.phase = Phase::Watching {
            in_group,
            group_size: group.len(),
            votes,
        };
        self.check(now);
    }

    /// Whether the watch has started.
    pub fn started(&self) -> bool {
        !matches!(self.phase, Phase::Waiting)
    }

    /// `node` handled an event; it now recognises `leader`.
    #[inline]
    pub fn observe(&mut self, now: Nanos, node: NodeId, leader: Option<NodeId>) {
        let Some(slot) = self.recognised.get_mut(node.index()) else {
            return;
        };
        if *slot == leader {
            return;
        }
        let before = std::mem::replace(slot, leader);
        if let Phase::Watching {
            in_group, votes, ..
        } = &mut self.phase
        {
            if !in_group[node.index()] {
                return;
            }
            if let Some(old) = before {
                let count = votes
                    .get_mut(&old)
                    .expect("a recognised leader was counted");
                *count -= 1;
            }
            if let Some(new) = leader {
                *votes.entry(new).or_insert(0) += 1;
            }
            self.check(now);
        }
    }

    /// `node` crashed: it recognises nobody.
    pub fn forget(&mut self, now: Nanos, node: NodeId) {
        self.observe(now, node, None);
    }

    fn check(&mut self, now: Nanos) {
        let Phase::Watching {
            in_group,
            group_size,
            votes,
        } = &self.phase
        else {
            return;
        };
        let agreed = votes.iter().find(|(leader, count)| {
            **count == *group_size && in_group.get(leader.index()) == Some(&true)
        });
        if let Some((leader, _)) = agreed {
            let verdict = LivenessVerdict::Met {
                quiet_from_ns: self.quiet_from_ns,
                leader: *leader,
                at_ns: now,
            };
            self.phase = Phase::Done(verdict);
        }
    }

    /// The bound ran out. Returns the failure detail if liveness was missed.
    pub fn on_deadline(&mut self) -> Option<(Vec<NodeId>, String)> {
        let Phase::Watching { in_group, .. } = &self.phase else {
            return None;
        };
        let group: Vec<NodeId> = in_group
            .iter()
            .enumerate()
            .filter(|(_, g)| **g)
            .map(|(i, _)| NodeId::from(i))
            .collect();
        let detail = format!(
            "no leader recognised by all {} live connected members within {} of the last fault",
            group.len(),
            format_duration(self.bound_ns)
        );
        let verdict = LivenessVerdict::Missed {
            quiet_from_ns: self.quiet_from_ns,
            bound_ns: self.bound_ns,
            group: group.clone(),
        };
        self.phase = Phase::Done(verdict);
        Some((group, detail))
    }

    /// The verdict at the end of the run.
    pub fn verdict(&self, end_ns: Nanos) -> LivenessVerdict {
        match &self.phase {
            Phase::Done(v) => v.clone(),
            Phase::Waiting => LivenessVerdict::FaultsActive { end_ns },
            Phase::Watching { .. } => LivenessVerdict::Inconclusive {
                quiet_from_ns: self.quiet_from_ns,
                bound_ns: self.bound_ns,
                end_ns,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[u32]) -> Vec<NodeId> {
        v.iter().map(|i| NodeId(*i)).collect()
    }

    #[test]
    fn liveness_is_met_when_the_whole_group_agrees() {
        let mut m = LivenessMonitor::new(3, 100);
        m.observe(5, NodeId(0), Some(NodeId(0)));
        m.start(10, ids(&[0, 1, 2]), 3, 2);
        m.observe(11, NodeId(1), Some(NodeId(0)));
        assert!(matches!(
            m.verdict(50),
            LivenessVerdict::Inconclusive { .. }
        ));
        m.observe(12, NodeId(2), Some(NodeId(0)));
        assert!(matches!(
            m.verdict(50),
            LivenessVerdict::Met { at_ns: 12, .. }
        ));
    }

    #[test]
    fn a_group_too_small_makes_liveness_impossible_not_failed() {
        let mut m = LivenessMonitor::new(5, 100);
        m.start(10, ids(&[0, 1]), 5, 3);
        assert!(matches!(m.verdict(50), LivenessVerdict::Impossible { .. }));
        assert!(m.on_deadline().is_none());
    }

    #[test]
    fn the_deadline_without_agreement_is_a_miss() {
        let mut m = LivenessMonitor::new(3, 100);
        m.start(10, ids(&[0, 1, 2]), 3, 2);
        m.observe(11, NodeId(1), Some(NodeId(1)));
        m.observe(12, NodeId(2), Some(NodeId(2)));
        assert!(m.on_deadline().is_some());
        assert!(matches!(m.verdict(200), LivenessVerdict::Missed { .. }));
    }
}
