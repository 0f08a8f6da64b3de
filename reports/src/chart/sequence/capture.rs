//! What a sequence diagram needs of a trace, gathered as the trace goes by: the processes
//! seen (one lifeline each), which of them is the fenced resource, each process's state when
//! the window opens, and the events inside the window. Memory is bounded by the window, not
//! by the length of the run, so `run --plot` of a four-hour run keeps no more than of a
//! minute's.

use crate::trace::{parse_trace_line, TraceEvent, TraceParseError};
use splitbrain_sim::{Nanos, TraceSink};
use std::collections::{BTreeMap, BTreeSet};

/// A process's state replayed from the events before a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LaneState {
    pub down: bool,
    pub leader: bool,
    pub term: Option<u64>,
}

impl LaneState {
    /// Folds in one event at this process (the replay of the state before the window).
    fn apply(&mut self, e: &TraceEvent) {
        match e.ev.as_str() {
            "crash" => self.down = true,
            "restart" => self.down = false,
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
    fn new(from_ns: Nanos, to_ns: Nanos) -> Self {
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

    fn observe(&mut self, e: &TraceEvent) {
        if e.t < self.from_ns {
            if let Some(id) = e.node {
                self.before.entry(id).or_default().apply(e);
            }
        } else if e.t <= self.to_ns {
            self.events.push(e.clone());
        }
    }
}

/// A [`TraceSink`] that keeps, for each of a few windows given up front, only what the
/// sequence diagram of that window draws. Lines that are not trace events are an error,
/// returned by [`SequenceRecorder::finish_windows`].
#[derive(Debug, Default)]
pub struct SequenceRecorder {
    ids: BTreeSet<u32>,
    resources: BTreeSet<u32>,
    windows: Vec<SequenceTrace>,
    lines: usize,
    error: Option<TraceParseError>,
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
        self.ids.extend(e.node.into_iter().chain(e.from));
        if e.ev.starts_with("write_") {
            self.resources.extend(e.node);
        }
        for window in &mut self.windows {
            window.observe(e);
        }
    }

    /// The windows, in the order given; the first line that was no trace event is an error.
    pub fn finish_windows(self) -> Result<Vec<SequenceTrace>, TraceParseError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let (ids, resources) = (self.ids, self.resources);
        Ok(self
            .windows
            .into_iter()
            .map(|w| SequenceTrace {
                ids: ids.clone(),
                resources: resources.clone(),
                ..w
            })
            .collect())
    }
}

impl TraceSink for SequenceRecorder {
    fn record(&mut self, line: &str) {
        self.lines += 1;
        if self.error.is_some() || line.trim().is_empty() {
            return;
        }
        match parse_trace_line(line) {
            Ok(e) => self.observe(&e),
            Err(e) => {
                self.error = Some(TraceParseError {
                    line: self.lines,
                    message: e.message,
                })
            }
        }
    }
}
