//! Steady-state cost (docs/reports.md, "Steady-state cost"): the messages sent while the
//! cluster is steady, and for how long it was. Steady: no fault under way (every fault that
//! fired has healed, resumed or struck), no election open, no futile campaign, and the
//! oracle's leader has held leadership for twice the failure-detection time (the stability
//! window of the failover episodes).

use super::Sim;
use crate::process::Process;
use crate::report::{KindCount, SteadyState, WRITE_KIND};
use crate::time::Nanos;

/// The books of the steady state.
#[derive(Debug, Default)]
pub(super) struct SteadyBooks {
    /// Steady time summed so far (up to `conditions_since_ns` of the current stretch).
    pub(super) steady_ns: Nanos,
    /// Since when the conditions other than the leader's age have held, if they do.
    conditions_since_ns: Option<Nanos>,
    /// Since when the oracle's leader has led, if there is one.
    leader_since_ns: Option<Nanos>,
    /// Leadership claims and ended spans seen, to notice a change of leader cheaply.
    seen: (usize, usize),
    /// Messages sent while steady, by type: by members, and by the coordination service.
    pub(super) by_members: Vec<u64>,
    pub(super) by_service: Vec<u64>,
}

impl<P: Process> Sim<'_, P> {
    /// When the current steady stretch began (conditions held and the leader old enough),
    /// if the cluster is steady now.
    fn steady_from_ns(&self) -> Option<Nanos> {
        let books = &self.steady;
        let since = books.conditions_since_ns?;
        let leader_since = books.leader_since_ns?;
        let window_ns = self.info.failure_detection_ns.saturating_mul(2);
        let from = since.max(leader_since.saturating_add(window_ns));
        (from <= self.now).then_some(from)
    }

    /// Whether a message sent now is steady-state traffic.
    pub(super) fn is_steady(&self) -> bool {
        self.steady_from_ns().is_some()
    }

    /// Counts a message of type `kind` sent now by `from_service` or a member, if steady.
    pub(super) fn count_steady_send(&mut self, kind: usize, from_service: bool) {
        if self.steady.conditions_since_ns.is_none() || !self.is_steady() {
            return;
        }
        let books = &mut self.steady;
        let tally = if from_service {
            &mut books.by_service
        } else {
            &mut books.by_members
        };
        if tally.is_empty() {
            *tally = vec![0; self.message_stats.len()];
        }
        tally[kind] += 1;
    }

    /// Brings the books up to date after an event: a change of leader, a fault, an election
    /// opening or closing ends the current stretch (and may begin another).
    pub(super) fn update_steady(&mut self) {
        if self.futile_nodes > 0 && !self.network.is_partitioned() {
            self.forget_futile_campaigns();
        }
        let seen = (self.leadership.claims.len(), self.leadership.spans.len());
        let leader_changed = seen != self.steady.seen;
        let holds =
            self.pending_heals == 0 && self.open_election.is_none() && self.futile_nodes == 0;
        let held = self.steady.conditions_since_ns.is_some();
        if held && (!holds || leader_changed) {
            self.close_steady_stretch();
        }
        if leader_changed {
            self.steady.seen = seen;
            self.steady.leader_since_ns = self
                .leadership
                .leader()
                .and_then(|l| self.leadership.since(l));
        }
        if holds && self.steady.conditions_since_ns.is_none() {
            self.steady.conditions_since_ns = Some(self.now);
        }
    }

    /// Adds the stretch under way to the steady time and ends it.
    fn close_steady_stretch(&mut self) {
        if let Some(from) = self.steady_from_ns() {
            self.steady.steady_ns += self.now - from;
        }
        self.steady.conditions_since_ns = None;
    }

    /// The steady state at the end of the run.
    pub(super) fn steady_state_at_end(&mut self) -> SteadyState {
        self.close_steady_stretch();
        let counts = |tally: &[u64]| -> Vec<KindCount> {
            let mut named = self.named_counts(tally);
            named.retain(|k| k.kind != WRITE_KIND);
            named
        };
        SteadyState {
            duration_ns: self.steady.steady_ns,
            messages: counts(&self.steady.by_members),
            service_messages: counts(&self.steady.by_service),
        }
    }
}
