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

/// A group watched for agreement on one leader.
#[derive(Debug, PartialEq, Eq)]
struct Watch {
    in_group: Vec<bool>,
    group_size: usize,
    votes: BTreeMap<NodeId, usize>,
    /// Members of the group that would ask ([`Recognition::OnDemand`]).
    on_demand: usize,
}

impl Watch {
    /// Watches `group`, each member recognising what `recognised` says now.
    fn new(group: &[NodeId], recognised: &[Recognition]) -> Self {
        let mut watch = Self {
            in_group: vec![false; recognised.len()],
            group_size: group.len(),
            votes: BTreeMap::new(),
            on_demand: 0,
        };
        for node in group {
            watch.in_group[node.index()] = true;
            watch.count(recognised[node.index()], 1);
        }
        watch
    }

    /// Adds (`+1`) or takes away (`-1`) one member's recognition.
    fn count(&mut self, seen: Recognition, by: isize) {
        let slot = match seen {
            Recognition::Names(Some(leader)) => self.votes.entry(leader).or_insert(0),
            Recognition::Names(None) => return,
            Recognition::OnDemand => &mut self.on_demand,
        };
        *slot = slot
            .checked_add_signed(by)
            .expect("a counted recognition is taken away once");
    }

    /// `node` recognised `before` and now `seen`.
    fn update(&mut self, node: NodeId, before: Recognition, seen: Recognition) {
        if self.in_group[node.index()] {
            self.count(before, -1);
            self.count(seen, 1);
        }
    }

    /// The leader the whole group agrees on, if any. Agreement: a member of the group names
    /// itself, every other member that names a leader names it, and the rest would ask the
    /// service, which names it too. Without askers: every member names it.
    fn agreed(&self, recognised: &[Recognition], answer: Option<NodeId>) -> Option<NodeId> {
        let (leader, _) = self.votes.iter().find(|(leader, count)| {
            **count + self.on_demand == self.group_size
                && self.in_group.get(leader.index()) == Some(&true)
                && recognised[leader.index()] == Recognition::Names(Some(**leader))
                && (self.on_demand == 0 || answer == Some(**leader))
        })?;
        Some(*leader)
    }

    /// The members watched, in id order.
    fn group(&self) -> Vec<NodeId> {
        self.in_group
            .iter()
            .enumerate()
            .filter(|(_, g)| **g)
            .map(|(i, _)| NodeId::from(i))
            .collect()
    }
}

#[derive(Debug)]
enum Phase {
    /// Faults are still active.
    Waiting,
    /// Watching the group for agreement.
    Watching(Watch),
    Done(LivenessVerdict),
}

/// A quorum live and connected while faults are still active: it must agree on a leader
/// within the bound too (see [`LivenessMonitor::watch_during_faults`]).
#[derive(Debug)]
struct Window {
    from_ns: Nanos,
    generation: u64,
    watch: Watch,
}

/// A window that ran out without a leader: liveness failed while faults were active.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Stall {
    /// When the group was last formed (a fault or heal made it).
    pub from_ns: Nanos,
    /// When the bound ran out.
    pub to_ns: Nanos,
    /// The members that had to agree.
    pub group: Vec<NodeId>,
}

impl Stall {
    /// In words: "no leader recognised by all 2 live connected members (a quorum) from 1s
    /// to 6s, while other faults were active".
    pub fn describe(&self) -> String {
        format!(
            "no leader recognised by all {} live connected members (a quorum) from {} to {}, \
             while other faults were active",
            self.group.len(),
            format_duration(self.from_ns),
            format_duration(self.to_ns)
        )
    }
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
    /// The quorum watched while faults are active, if one is.
    window: Option<Window>,
    /// Windows opened so far: a deadline names the window it is for.
    windows: u64,
    /// The first window that ran out without a leader.
    stall: Option<Stall>,
}

impl LivenessMonitor {
    pub(crate) fn new(members: usize, bound_ns: Nanos) -> Self {
        Self {
            quiet_from_ns: 0,
            bound_ns,
            recognised: vec![Recognition::Names(None); members],
            answer: None,
            phase: Phase::Waiting,
            window: None,
            windows: 0,
            stall: None,
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
        self.window = None;
        self.phase = Phase::Watching(Watch::new(&group, &self.recognised));
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
        if let Phase::Watching(watch) = &mut self.phase {
            watch.update(node, before, seen);
        }
        if let Some(window) = &mut self.window {
            window.watch.update(node, before, seen);
        }
        self.check(now);
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
        if let Some(window) = &self.window
            && window.watch.agreed(&self.recognised, self.answer).is_some()
        {
            self.window = None;
        }
        let Phase::Watching(watch) = &self.phase else {
            return;
        };
        if let Some(leader) = watch.agreed(&self.recognised, self.answer) {
            let verdict = LivenessVerdict::Met {
                quiet_from_ns: self.quiet_from_ns,
                leader,
                at_ns: now,
            };
            self.phase = Phase::Done(verdict);
        }
    }

    /// While faults are still active: `group`, when it is a quorum live and connected with
    /// nothing else in the way of an election, must agree on a leader within the bound, as
    /// after the last fault. A new group opens a window, to close at the deadline returned
    /// with its number ([`LivenessMonitor::on_window_deadline`]); the same group keeps its
    /// window; `None` (no such group now) closes it. A group that agrees already opens none.
    pub fn watch_during_faults(
        &mut self,
        now: Nanos,
        group: Option<Vec<NodeId>>,
    ) -> Option<(u64, Nanos)> {
        if self.started() || self.stall.is_some() {
            return None;
        }
        let Some(group) = group else {
            self.window = None;
            return None;
        };
        let watch = Watch::new(&group, &self.recognised);
        if self
            .window
            .as_ref()
            .is_some_and(|w| w.watch.in_group == watch.in_group)
        {
            return None;
        }
        if watch.agreed(&self.recognised, self.answer).is_some() {
            self.window = None;
            return None;
        }
        self.windows += 1;
        self.window = Some(Window {
            from_ns: now,
            generation: self.windows,
            watch,
        });
        Some((self.windows, now.saturating_add(self.bound_ns)))
    }

    /// Window `generation`'s bound ran out: if it is still open (no leader, the same group),
    /// liveness failed while faults were active. Returns the group and the detail.
    pub fn on_window_deadline(
        &mut self,
        now: Nanos,
        generation: u64,
    ) -> Option<(Vec<NodeId>, String)> {
        if self
            .window
            .as_ref()
            .is_none_or(|w| w.generation != generation)
        {
            return None;
        }
        let window = self.window.take()?;
        let stall = Stall {
            from_ns: window.from_ns,
            to_ns: now,
            group: window.watch.group(),
        };
        let found = (stall.group.clone(), stall.describe());
        self.stall = Some(stall);
        Some(found)
    }

    /// Whether a window is open.
    pub fn window_open(&self) -> bool {
        self.window.is_some()
    }

    /// The open window's number and deadline, if one is open.
    pub fn window_due(&self) -> Option<(u64, Nanos)> {
        let w = self.window.as_ref()?;
        Some((w.generation, w.from_ns.saturating_add(self.bound_ns)))
    }

    /// The first window that ran out without a leader, if one did.
    pub fn stall(&self) -> Option<&Stall> {
        self.stall.as_ref()
    }

    /// The bound ran out. Returns the failure detail if liveness was missed.
    pub fn on_deadline(&mut self) -> Option<(Vec<NodeId>, String)> {
        let Phase::Watching(watch) = &self.phase else {
            return None;
        };
        let group = watch.group();
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

    #[test]
    fn a_quorum_without_a_leader_during_faults_is_a_stall_at_its_deadline() {
        let mut m = LivenessMonitor::new(3, 100);
        let (generation, due) = m
            .watch_during_faults(10, Some(ids(&[1, 2])))
            .expect("a window opens");
        assert_eq!(due, 110);
        assert_eq!(
            m.watch_during_faults(20, Some(ids(&[1, 2]))),
            None,
            "the same group keeps its window"
        );
        m.observe(30, NodeId(1), names(1));
        let (group, detail) = m.on_window_deadline(due, generation).expect("a stall");
        assert_eq!(group, ids(&[1, 2]));
        assert!(detail.contains("from 10ns to 110ns"), "{detail}");
        assert_eq!(m.stall().map(|s| (s.from_ns, s.to_ns)), Some((10, 110)));
    }

    #[test]
    fn agreement_or_another_group_closes_the_window() {
        let mut m = LivenessMonitor::new(3, 100);
        let (first, _) = m.watch_during_faults(10, Some(ids(&[1, 2]))).unwrap();
        m.observe(30, NodeId(1), names(1));
        m.observe(31, NodeId(2), names(1));
        assert!(!m.window_open(), "agreed");
        assert_eq!(m.on_window_deadline(110, first), None);
        let (second, _) = m.watch_during_faults(40, Some(ids(&[0, 1, 2]))).unwrap();
        assert_ne!(first, second, "n0 must learn the leader too");
        assert_eq!(m.watch_during_faults(50, None), None);
        assert_eq!(m.on_window_deadline(140, second), None, "no quorum: closed");
        assert_eq!(m.stall(), None);
    }

    #[test]
    fn a_group_that_agrees_already_opens_no_window_and_the_quiet_watch_takes_over() {
        let mut m = LivenessMonitor::new(3, 100);
        m.observe(1, NodeId(0), names(0));
        m.observe(1, NodeId(1), names(0));
        assert_eq!(m.watch_during_faults(10, Some(ids(&[0, 1]))), None);
        let (generation, _) = m.watch_during_faults(20, Some(ids(&[0, 1, 2]))).unwrap();
        m.start(30, ids(&[0, 1, 2]), 3, 2);
        assert_eq!(m.on_window_deadline(120, generation), None);
        assert_eq!(m.watch_during_faults(40, Some(ids(&[1, 2]))), None);
    }
}
