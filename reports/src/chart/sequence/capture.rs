//! What a sequence diagram needs of a trace, gathered as the trace goes by: the processes
//! seen (one lifeline each), which of them is the fenced resource, each process's state when
//! the window opens, and the events inside the window. Memory is bounded by the window, not
//! by the length of the run, so `run --plot` of a four-hour run keeps no more than of a
//! minute's.

use splitbrain_sim::{EventKind, Nanos, TraceEvent, TraceSink};
use std::collections::{BTreeMap, BTreeSet};

/// A process's state replayed from the events before a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LaneState {
    pub down: bool,
    /// Paused or stalled (between `freeze` and `resume`).
    pub frozen: bool,
    pub leader: bool,
    pub term: Option<u64>,
}

impl LaneState {
    /// Folds in one event at this process (the replay of the state before the window).
    pub(super) fn apply(&mut self, e: &TraceEvent) {
        match e.kind {
            EventKind::Crash => (self.down, self.frozen) = (true, false),
            EventKind::Restart => self.down = false,
            EventKind::Freeze { .. } => self.frozen = true,
            EventKind::Resume => self.frozen = false,
            _ => {}
        }
        // Read only for members and services: a resource's lane shows `fenced`.
        self.leader = e.leader;
        self.term = e.term.or(self.term);
    }
}

/// One window of a trace, ready for [`super::sequence_diagram_of`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SequenceTrace {
    pub(super) from_ns: Nanos,
    pub(super) to_ns: Nanos,
    /// Every process of the whole trace (as receiver or sender).
    pub(super) ids: BTreeSet<u32>,
    /// The processes that received writes: the fenced resource.
    pub(super) resources: BTreeSet<u32>,
    /// Each process's state when the window opens (absent: nothing happened there before).
    pub(super) before: BTreeMap<u32, LaneState>,
    /// The events with `from_ns <= t <= to_ns`, in trace order.
    pub(super) events: Vec<TraceEvent>,
}

impl SequenceTrace {
    pub(super) fn new(from_ns: Nanos, to_ns: Nanos) -> Self {
        Self {
            from_ns: from_ns.min(to_ns),
            to_ns: to_ns.max(from_ns),
            ..Self::default()
        }
    }

    /// How many events of the trace this window keeps (those inside it).
    pub fn events_kept(&self) -> usize {
        self.events.len()
    }

    /// Folds in one event: before the window, into the lanes' states; inside, kept.
    pub(super) fn observe(&mut self, e: &TraceEvent) {
        if e.t_ns < self.from_ns {
            if let Some(id) = e.node {
                self.before.entry(id.0).or_default().apply(e);
            }
        } else if e.t_ns <= self.to_ns {
            self.events.push(e.clone());
        }
    }
}

/// The processes of a trace (one lifeline each) and which of them is the fenced resource,
/// gathered from every event.
#[derive(Clone, Debug, Default)]
pub(super) struct Lifelines {
    pub ids: BTreeSet<u32>,
    pub resources: BTreeSet<u32>,
}

impl Lifelines {
    /// Folds in one event.
    pub fn observe(&mut self, e: &TraceEvent) {
        let sender = e.kind.sender().map(|(from, _)| from.0);
        self.ids
            .extend(e.node.map(|n| n.0).into_iter().chain(sender));
        if e.kind.is_write() {
            self.resources.extend(e.node.map(|n| n.0));
        }
    }

    /// `window` with these lifelines.
    pub fn complete(&self, window: SequenceTrace) -> SequenceTrace {
        SequenceTrace {
            ids: self.ids.clone(),
            resources: self.resources.clone(),
            ..window
        }
    }
}

/// A [`TraceSink`] that keeps, for each of a few windows given up front, only what the
/// sequence diagram of that window draws.
#[derive(Debug, Default)]
pub struct SequenceRecorder {
    lifelines: Lifelines,
    windows: Vec<SequenceTrace>,
}

impl SequenceRecorder {
    /// A recorder for the windows `from_ns..=to_ns` (each as for [`super::sequence_diagram`]).
    pub fn new(windows: &[(Nanos, Nanos)]) -> Self {
        Self {
            windows: windows
                .iter()
                .map(|&(from, to)| SequenceTrace::new(from, to))
                .collect(),
            ..Self::default()
        }
    }

    /// Folds in one event.
    pub fn observe(&mut self, e: &TraceEvent) {
        self.lifelines.observe(e);
        for window in &mut self.windows {
            window.observe(e);
        }
    }

    /// The windows, in the order given.
    pub fn finish_windows(self) -> Vec<SequenceTrace> {
        let lifelines = self.lifelines;
        self.windows
            .into_iter()
            .map(|w| lifelines.complete(w))
            .collect()
    }
}

impl TraceSink for SequenceRecorder {
    fn record(&mut self, event: &TraceEvent) {
        self.observe(event);
    }
}
