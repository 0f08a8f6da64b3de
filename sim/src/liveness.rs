//! The liveness check: after the last fault heals, a leader that every live, connected member
//! recognises must appear within a bound. Incremental: each handler updates one member's
//! recognised leader, and a count per leader says when everyone agrees.
//!
//! A member that learns who leads only by asking the service ([`Recognition::OnDemand`]: a
//! ZooKeeper recipe waiter, as `LeaderLatch.getLeader()` reads the children when called)
//! recognises what its question would show now: the service's answer (the service process's
//! own `known_leader`, [`LivenessMonitor::observe_answer`]). It agrees with a leader the
//! service names, that names itself, and that every other member naming a leader names too
//! (docs/engine.md, "Liveness").

use crate::ids::NodeId;
use crate::report::LivenessVerdict;
use crate::time::{format_duration, Nanos};
use std::collections::BTreeMap;

/// What a member says about who leads, as the liveness check reads it after its handlers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Recognition {
    /// It names this leader (itself included), or nobody.
    Names(Option<NodeId>),
    /// It does not keep track of who leads and can ask the service now
    /// ([`crate::Process::learns_leader_on_demand`]).
    OnDemand,
}

#[derive(Debug)]
enum Phase {
    /// Faults are still active.
    Waiting,
    /// Watching the group for agreement.
    Watching {
        in_group: Vec<bool>,
        group_size: usize,
        votes: BTreeMap<NodeId, usize>,
        /// Members of the group that would ask ([`Recognition::OnDemand`]).
        on_demand: usize,
    },
    Done(LivenessVerdict),
}

/// Watches for a recognised leader after the last fault.
#[derive(Debug)]
pub struct LivenessMonitor {
    pub(crate) quiet_from_ns: Nanos,
    pub(crate) bound_ns: Nanos,
    /// What each member recognises, updated after each of its handlers.
    recognised: Vec<Recognition>,
    /// Whom the coordination service would name if asked now (`None` without a service,
    /// while it is down, or while nobody holds the seat), updated after each of its handlers.
    answer: Option<NodeId>,
    phase: Phase,
}

impl LivenessMonitor {
    pub(crate) fn new(members: usize, bound_ns: Nanos) -> Self {
        Self {
            quiet_from_ns: 0,
            bound_ns,
            recognised: vec![Recognition::Names(None); members],
            answer: None,
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
            self.rule_out(now, reason);
            return;
        }
        let mut in_group = vec![false; self.recognised.len()];
        let mut votes = BTreeMap::new();
        let mut on_demand = 0;
        for node in &group {
            in_group[node.index()] = true;
            match self.recognised[node.index()] {
                Recognition::Names(Some(leader)) => *votes.entry(leader).or_insert(0) += 1,
                Recognition::Names(None) => {}
                Recognition::OnDemand => on_demand += 1,
            }
        }
        self.phase = Phase::Watching {
            in_group,
            group_size: group.len(),
            votes,
            on_demand,
        };
        self.check(now);
    }

    /// The faults are over but left no way to elect a leader (the coordination service is
    /// down): the verdict is `Impossible` for `reason`.
    pub fn rule_out(&mut self, now: Nanos, reason: String) {
        self.quiet_from_ns = now;
        self.phase = Phase::Done(LivenessVerdict::Impossible {
            quiet_from_ns: now,
            reason,
        });
    }

    /// Whether the watch has started.
    pub fn started(&self) -> bool {
        !matches!(self.phase, Phase::Waiting)
    }

    /// `node` handled an event; it now recognises `seen`.
    #[inline]
    pub fn observe(&mut self, now: Nanos, node: NodeId, seen: Recognition) {
        let Some(slot) = self.recognised.get_mut(node.index()) else {
            return;
        };
        if *slot == seen {
            return;
        }
        let before = std::mem::replace(slot, seen);
        if let Phase::Watching {
            in_group,
            votes,
            on_demand,
            ..
        } = &mut self.phase
        {
            if !in_group[node.index()] {
                return;
            }
            match before {
                Recognition::Names(Some(old)) => {
                    let count = votes
                        .get_mut(&old)
                        .expect("a recognised leader was counted");
                    *count -= 1;
                }
                Recognition::Names(None) => {}
                Recognition::OnDemand => *on_demand -= 1,
            }
            match seen {
                Recognition::Names(Some(new)) => *votes.entry(new).or_insert(0) += 1,
                Recognition::Names(None) => {}
                Recognition::OnDemand => *on_demand += 1,
            }
            self.check(now);
        }
    }

    /// `node` crashed: it recognises nobody.
    pub fn forget(&mut self, now: Nanos, node: NodeId) {
        self.observe(now, node, Recognition::Names(None));
    }

    /// The service handled an event (or went down: `None`); asked now, it would name
    /// `answer`.
    pub fn observe_answer(&mut self, now: Nanos, answer: Option<NodeId>) {
        if self.answer != answer {
            self.answer = answer;
            self.check(now);
        }
    }

    fn check(&mut self, now: Nanos) {
        let Phase::Watching {
            in_group,
            group_size,
            votes,
            on_demand,
        } = &self.phase
        else {
            return;
        };
        // Agreement: a member of the group names itself, every other member that names a
        // leader names it, and the rest would ask the service, which names it too. Without
        // askers: every member names it.
        let agreed = votes.iter().find(|(leader, count)| {
            **count + *on_demand == *group_size
                && in_group.get(leader.index()) == Some(&true)
                && self.recognised[leader.index()] == Recognition::Names(Some(**leader))
                && (*on_demand == 0 || self.answer == Some(**leader))
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

    fn names(leader: u32) -> Recognition {
        Recognition::Names(Some(NodeId(leader)))
    }

    /// When and on whom liveness was met so far, if it was.
    fn met(m: &LivenessMonitor) -> Option<(Nanos, NodeId)> {
        match m.verdict(50) {
            LivenessVerdict::Met { at_ns, leader, .. } => Some((at_ns, leader)),
            _ => None,
        }
    }

    #[test]
    fn liveness_is_met_when_the_whole_group_agrees() {
        let mut m = LivenessMonitor::new(3, 100);
        m.observe(5, NodeId(0), names(0));
        m.start(10, ids(&[0, 1, 2]), 3, 2);
        m.observe(11, NodeId(1), names(0));
        assert!(matches!(
            m.verdict(50),
            LivenessVerdict::Inconclusive { .. }
        ));
        m.observe(12, NodeId(2), names(0));
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
        m.observe(11, NodeId(1), names(1));
        m.observe(12, NodeId(2), names(2));
        assert!(m.on_deadline().is_some());
        assert!(matches!(m.verdict(200), LivenessVerdict::Missed { .. }));
    }

    #[test]
    fn members_that_would_ask_agree_with_a_leader_the_service_names_and_that_names_itself() {
        let mut m = LivenessMonitor::new(3, 100);
        m.observe_answer(5, Some(NodeId(0)));
        m.start(10, ids(&[0, 1, 2]), 3, 2);
        m.observe(11, NodeId(1), Recognition::OnDemand);
        m.observe(12, NodeId(2), Recognition::OnDemand);
        assert_eq!(
            met(&m),
            None,
            "askers and an answer make no leader: n0 does not name itself yet"
        );
        m.observe(13, NodeId(0), names(0));
        assert_eq!(met(&m), Some((13, NodeId(0))));
    }

    #[test]
    fn askers_do_not_agree_with_a_leader_the_service_does_not_name() {
        let mut m = LivenessMonitor::new(3, 100);
        m.start(10, ids(&[0, 1, 2]), 3, 2);
        m.observe(11, NodeId(0), names(0));
        m.observe(12, NodeId(1), Recognition::OnDemand);
        m.observe(13, NodeId(2), Recognition::OnDemand);
        m.observe_answer(14, Some(NodeId(2)));
        m.observe_answer(15, None);
        assert_eq!(
            met(&m),
            None,
            "the service names n2, then nobody: asking would not show n0"
        );
        m.observe_answer(16, Some(NodeId(0)));
        assert_eq!(met(&m), Some((16, NodeId(0))));
    }

    #[test]
    fn without_askers_the_service_answer_does_not_matter() {
        let mut m = LivenessMonitor::new(2, 100);
        m.observe_answer(5, Some(NodeId(1)));
        m.start(10, ids(&[0, 1]), 2, 2);
        m.observe(11, NodeId(0), names(0));
        m.observe(12, NodeId(1), names(0));
        assert_eq!(met(&m), Some((12, NodeId(0))));
    }

    #[test]
    fn askers_do_not_hide_a_member_that_names_another_leader() {
        let mut m = LivenessMonitor::new(3, 100);
        m.observe_answer(5, Some(NodeId(0)));
        m.observe(6, NodeId(2), Recognition::OnDemand);
        m.observe(7, NodeId(1), names(2));
        m.start(10, ids(&[0, 1, 2]), 3, 2);
        m.observe(11, NodeId(0), names(0));
        assert_eq!(
            met(&m),
            None,
            "n1 names n2 (n0 has one vote and one asker of three)"
        );
        m.observe(12, NodeId(1), names(0));
        assert_eq!(met(&m), Some((12, NodeId(0))));
    }

    #[test]
    fn an_asker_that_stops_asking_or_crashes_while_watched_blocks_agreement() {
        for stop in [
            |m: &mut LivenessMonitor| m.observe(12, NodeId(2), Recognition::Names(None)),
            |m: &mut LivenessMonitor| m.forget(12, NodeId(2)),
        ] {
            let mut m = LivenessMonitor::new(3, 100);
            m.observe_answer(5, Some(NodeId(0)));
            m.start(10, ids(&[0, 1, 2]), 3, 2);
            m.observe(11, NodeId(1), Recognition::OnDemand);
            m.observe(11, NodeId(2), Recognition::OnDemand);
            stop(&mut m);
            m.observe(13, NodeId(0), names(0));
            assert!(
                m.on_deadline().is_some(),
                "n2 can no longer ask (nor names anyone)"
            );
        }
    }

    #[test]
    fn a_leader_named_by_the_others_must_name_itself_not_ask() {
        let mut m = LivenessMonitor::new(3, 100);
        m.observe_answer(5, Some(NodeId(0)));
        m.start(10, ids(&[0, 1, 2]), 3, 2);
        m.observe(11, NodeId(1), names(0));
        m.observe(12, NodeId(2), names(0));
        m.observe(13, NodeId(0), Recognition::OnDemand);
        assert!(
            m.on_deadline().is_some(),
            "n0 would ask who leads: it does not lead, whatever the others and the service say"
        );
    }
}
