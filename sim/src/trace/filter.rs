//! A trace limited to some processes and a time window (`run --trace-nodes`,
//! `--trace-window`; docs/trace-format.md).

use super::{Milestone, TraceEvent, TraceSink};
use crate::{Nanos, NodeId};

/// A time window of a trace (`--trace-window`): true times `from..to`, both ends included, either left out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The first true time kept.
    pub from_ns: Nanos,
    /// The last true time kept.
    pub to_ns: Nanos,
}

/// A trace sink that passes on only the events of some processes and of a time window.
/// Run-wide events (faults, heals, liveness) are kept whatever the processes; a write at the
/// resource is kept when its writer is. Milestones (not lines) always pass.
pub struct Filtered<'a> {
    /// Where kept events go.
    pub inner: &'a mut dyn TraceSink,
    /// Per process id: whether its events are kept; `None`: every process's.
    pub nodes: Option<Vec<bool>>,
    /// The time window kept; `None`: the whole run.
    pub window: Option<Window>,
    /// The resource's id (its events are attributed to their writer).
    pub resource: NodeId,
}

impl Filtered<'_> {
    fn keeps(&self, event: &TraceEvent) -> bool {
        if let Some(w) = self.window
            && (event.t_ns < w.from_ns || event.t_ns > w.to_ns)
        {
            return false;
        }
        let Some(nodes) = &self.nodes else {
            return true;
        };
        let node = match event.node {
            None => return true,
            Some(n) if n == self.resource => event.kind.sender().map(|(from, _)| from),
            Some(n) => Some(n),
        };
        node.is_some_and(|n| nodes.get(n.index()).copied().unwrap_or(false))
    }
}

impl TraceSink for Filtered<'_> {
    fn record(&mut self, event: &TraceEvent) {
        if self.keeps(event) {
            self.inner.record(event);
        }
    }

    fn milestone(&mut self, now_ns: Nanos, milestone: Milestone<'_>) {
        self.inner.milestone(now_ns, milestone);
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.inner.finish()
    }

    fn held_bytes(&self) -> u64 {
        self.inner.held_bytes()
    }
}
