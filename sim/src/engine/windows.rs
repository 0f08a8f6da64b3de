//! Liveness while faults are still active (docs/engine.md, "Liveness"): after each fault, heal
//! and resume, and once a fault that slows elections down is over, the live members that all
//! talk to each other both ways, when they are a quorum, must agree on a leader within the
//! liveness bound. The deadline is checked before each event instead of being an event of its
//! own, so that a run without a window handles the same events as before.

use super::Sim;
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::process::Process;
use crate::time::Nanos;
use crate::trace::EventKind;

/// The engine's side of the windows; the watching itself is the
/// [`LivenessMonitor`](crate::liveness::LivenessMonitor)'s.
#[derive(Debug)]
pub(super) struct Windows {
    /// Until when a fault that slows elections down (anything but crashes, restarts,
    /// partitions and handovers) may still act: no window opens before.
    disturbed_until_ns: Nanos,
    /// The open window's number and deadline.
    due: Option<(u64, Nanos)>,
    /// When to look at the group again: the end of a disturbance.
    recheck_ns: Option<Nanos>,
    /// The earliest of the two: the event loop calls [`Sim::before_event_at`] for an event
    /// at or past it (`Nanos::MAX` when there is nothing to do).
    pub(super) next_check_ns: Nanos,
}

impl Default for Windows {
    fn default() -> Self {
        Self {
            disturbed_until_ns: 0,
            due: None,
            recheck_ns: None,
            next_check_ns: Nanos::MAX,
        }
    }
}

impl Windows {
    fn update_next_check(&mut self) {
        // A window is over once an event comes strictly after its deadline.
        let due = self.due.map_or(Nanos::MAX, |(_, at)| at.saturating_add(1));
        self.next_check_ns = due.min(self.recheck_ns.unwrap_or(Nanos::MAX));
    }
}

impl<P: Process> Sim<'_, P> {
    /// A fault that slows elections down acts until `until_ns` (`Nanos::MAX`: for the rest of
    /// the run): no window before, and a fresh look at the group then.
    pub(super) fn disturbed_until(&mut self, until_ns: Nanos) {
        let applies = self.windows_apply();
        let w = &mut self.windows;
        w.disturbed_until_ns = w.disturbed_until_ns.max(until_ns);
        w.recheck_ns =
            (applies && w.disturbed_until_ns < Nanos::MAX).then_some(w.disturbed_until_ns);
        w.update_next_check();
    }

    /// Whether this run's algorithm is judged during faults: it needs a quorum of more than
    /// one member and elects without a coordination service.
    fn windows_apply(&self) -> bool {
        self.info.min_group_for_progress >= 2 && !self.has_service()
    }

    /// Opens, keeps or closes the window on the group as it is now.
    pub(super) fn watch_during_faults(&mut self) {
        if self.quiet || !self.windows_apply() {
            return;
        }
        let group = self.quorum_during_faults();
        self.liveness.watch_during_faults(self.now, group);
        self.windows.due = self.liveness.window_due();
        self.windows.update_next_check();
    }

    /// The group a window watches now: the live members, all talking to each other both
    /// ways, when they are a quorum and no fault but crashes, partitions and handovers acts.
    fn quorum_during_faults(&self) -> Option<Vec<NodeId>> {
        if self.now < self.windows.disturbed_until_ns {
            return None;
        }
        let group = self.live_connected_group();
        let both_ways = |a: NodeId, b: NodeId| {
            a == b || (self.network.connected(a, b) && self.network.connected(b, a))
        };
        let clique = group
            .iter()
            .all(|a| group.iter().all(|b| both_ways(*a, *b)));
        (group.len() >= self.info.min_group_for_progress && clique).then_some(group)
    }

    /// Before an event at `next_ns`: a window whose deadline passed is a liveness failure at
    /// its deadline; a disturbance that ended lets a window open then.
    pub(super) fn before_event_at(&mut self, next_ns: Nanos) {
        self.close_window_due_by(next_ns.saturating_sub(1));
        if let Some(at) = self.windows.recheck_ns.filter(|at| *at <= next_ns) {
            self.windows.recheck_ns = None;
            self.now = self.now.max(at);
            self.watch_during_faults();
        }
        self.windows.update_next_check();
    }

    /// Closes the open window if its deadline is at or before `by_ns`: liveness failed while
    /// faults were active. Time moves to the deadline (never back) for the trace line.
    pub(super) fn close_window_due_by(&mut self, by_ns: Nanos) {
        let Some((generation, due_ns)) = self.windows.due.filter(|(_, at)| *at <= by_ns) else {
            return;
        };
        self.windows.due = None;
        self.windows.update_next_check();
        if let Some((group, detail)) = self.liveness.on_window_deadline(due_ns, generation) {
            self.now = self.now.max(due_ns);
            self.checker.record_liveness(self.now, group, detail);
            self.flag(Some(Invariant::Liveness));
            self.trace_global(EventKind::LivenessDeadline);
        }
    }
}
