//! Building typed trace events ([`crate::trace::TraceEvent`]) and telling the sink of
//! measurement milestones. Everything here returns at once when no sink is attached, so an
//! untraced run builds nothing per event.

use super::Sim;
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::process::Process;
use crate::time::LocalNanos;
use crate::trace::{Broken, EventKind, Milestone, TraceEvent};

impl<'t, P: Process> Sim<'t, P> {
    /// Whether a trace sink is attached.
    pub(super) fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// Marks the next trace event as having broken `broken` (kept only for a trace).
    /// A safety break is also credited to the faults it is attributed to.
    pub(super) fn flag(&mut self, broken: Option<Invariant>) {
        let Some(invariant) = broken else {
            return;
        };
        if invariant.is_safety() {
            self.attribute_break();
        }
        if self.tracing() {
            self.flagged.push(invariant);
        }
    }

    /// An event at process `node`.
    pub(super) fn trace_node(&mut self, node: NodeId, kind: EventKind) {
        if !self.tracing() {
            return;
        }
        let (local_ns, term) = match self.processes.get(node.index()) {
            Some(p) => (
                Some(self.nodes[node.index()].clocks.wall_reading(self.now)),
                Some(p.term()),
            ),
            None => (None, None),
        };
        let leader = self.leadership.believes(node);
        self.emit(Some(node), local_ns, kind, term, leader);
    }

    /// A write reaching the resource (`kind` is `WriteAccepted` or `WriteRejected`).
    pub(super) fn trace_write(&mut self, kind: EventKind) {
        debug_assert!(kind.is_write());
        let resource = self.resource_id;
        self.emit(Some(resource), None, kind, None, false);
    }

    /// An event about the whole run (faults, heals, liveness).
    pub(super) fn trace_global(&mut self, kind: EventKind) {
        self.emit(None, None, kind, None, false);
    }

    fn emit(
        &mut self,
        node: Option<NodeId>,
        local_ns: Option<LocalNanos>,
        kind: EventKind,
        term: Option<u64>,
        leader: bool,
    ) {
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        let event = TraceEvent {
            t_ns: self.now,
            node,
            local_ns,
            kind,
            term,
            leader,
            broken: Broken::from(std::mem::take(&mut self.flagged)),
        };
        trace.record(&event);
        let kept = trace.held_bytes();
        self.trace_lines += 1;
        self.trace_holds(kept);
    }

    /// Tells the sink that a failover opened now.
    pub(super) fn tell_failover_opened(&mut self) {
        if let Some(trace) = self.trace.as_mut() {
            trace.milestone(self.now, Milestone::FailoverOpened);
        }
    }

    /// Tells the sink of the failovers that closed since `closed_before` had.
    pub(super) fn tell_closed_failovers(&mut self, closed_before: usize) {
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        for record in &self.failovers.done[closed_before..] {
            trace.milestone(self.now, Milestone::FailoverClosed(record));
        }
    }

    /// Tells the sink that an election opened now.
    pub(super) fn tell_election_opened(&mut self) {
        if let Some(trace) = self.trace.as_mut() {
            trace.milestone(self.now, Milestone::ElectionOpened);
        }
    }

    /// Tells the sink that the last election of the report was just decided.
    pub(super) fn tell_election_decided(&mut self) {
        let (Some(trace), Some(record)) = (self.trace.as_mut(), self.elections.last()) else {
            return;
        };
        trace.milestone(self.now, Milestone::ElectionDecided(record));
    }
}
