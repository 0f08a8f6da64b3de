//! The windows of the sequence diagrams around a run's first failovers (or, without one, its
//! first election), kept in the same pass as the run. Which failovers there are and when
//! each settled is only known as the run goes, so the recorder listens to the engine's
//! milestones ([`Milestone`]): it keeps the last [`SEQUENCE_LOOKBACK_NS`] of events while a
//! window may still open, starts a window from them when a failover opens, keeps every
//! event while it is open, and trims the window to its end once the failover closed.
//!
//! Memory: the lookback's events, plus each wanted window from its start to its end or, for
//! a failover that stays open, to the next failover or the end of the run. A window that
//! stays open for more than a budget of events is given up (only its bounds are kept), so
//! memory stays bounded by the budget whatever the length of the run; the caller draws such
//! a window from a second run with a [`super::SequenceRecorder`].

use super::capture::{LaneState, Lifelines, SequenceTrace};
use super::{sequence_window, SEQUENCE_LOOKBACK_NS};
use splitbrain_sim::report::Failover;
use splitbrain_sim::{Milestone, Nanos, TraceEvent, TraceSink};
use std::collections::{BTreeMap, VecDeque};

/// The events a window may hold while its end is unknown, by default (about 30 MB).
pub const OPEN_WINDOW_BUDGET_EVENTS: usize = 1 << 18;

/// When a failover's diagram counts it settled (see [`sequence_window`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settle {
    /// At the new leader's first accepted write (recovery).
    Recovery,
    /// At recovery or, for a failover that never recovered, at the new leader's claim.
    RecoveryOrElection,
}

impl Settle {
    /// The true time `failover` settled by this rule, if it did.
    pub fn settled_at(self, failover: &Failover) -> Option<Nanos> {
        let after_ns = match self {
            Settle::Recovery => failover.recovery_ns,
            Settle::RecoveryOrElection => failover.recovery_ns.or(failover.election_ns),
        };
        after_ns.map(|d| failover.at_ns + d)
    }
}

/// Which windows a [`FailoverRecorder`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AroundFailovers {
    /// How many failovers, from the first, get a window.
    pub failovers: usize,
    /// Where a failover's window ends.
    pub settle: Settle,
    /// Whether a run without any failover gets the window of its first election.
    pub first_election: bool,
}

/// A window as a [`FailoverRecorder`] kept it.
#[derive(Clone, Debug, PartialEq)]
pub enum CapturedWindow {
    /// Everything its diagram draws.
    Kept(SequenceTrace),
    /// It held more events than the budget while its end was unknown: only its bounds are
    /// known. Draw it from a second run with a [`super::SequenceRecorder`] of these bounds.
    TooLong {
        /// The window's start in true time (ns): [`super::SEQUENCE_LOOKBACK_NS`] before the
        /// fault or the election's start.
        from_ns: Nanos,
        /// The window's end in true time (ns), as [`super::sequence_window`] gives it.
        to_ns: Nanos,
    },
}

impl CapturedWindow {
    /// The window's true-time bounds, `from_ns..=to_ns`.
    pub fn bounds(&self) -> (Nanos, Nanos) {
        match self {
            CapturedWindow::Kept(trace) => (trace.from_ns, trace.to_ns),
            CapturedWindow::TooLong { from_ns, to_ns } => (*from_ns, *to_ns),
        }
    }
}

/// What a [`FailoverRecorder`] kept of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CapturedWindows {
    /// One per failover of the run, in order, up to the number asked for.
    pub failovers: Vec<CapturedWindow>,
    /// The first election's window, when asked for, the run had no failover and the
    /// election was decided.
    pub first_election: Option<CapturedWindow>,
}

/// The events of the last [`SEQUENCE_LOOKBACK_NS`], for a window that opens now; what older
/// events left behind is folded into each process's state.
#[derive(Debug, Default)]
struct Lookback {
    events: VecDeque<TraceEvent>,
    before: BTreeMap<u32, LaneState>,
}

impl Lookback {
    fn push(&mut self, e: &TraceEvent) {
        let horizon = e.t_ns.saturating_sub(SEQUENCE_LOOKBACK_NS);
        while self.events.front().is_some_and(|old| old.t_ns < horizon) {
            let old = self.events.pop_front().expect("checked above");
            if let Some(id) = old.node {
                self.before.entry(id.0).or_default().apply(&old);
            }
        }
        self.events.push_back(e.clone());
    }

    /// A window from `from_ns` with everything it needs of the events so far.
    fn window_from(&self, from_ns: Nanos) -> SequenceTrace {
        let mut window = SequenceTrace::new(from_ns, Nanos::MAX);
        window.before = self.before.clone();
        for e in &self.events {
            window.observe(e);
        }
        window
    }

    fn clear(&mut self) {
        self.events.clear();
        self.before.clear();
    }
}

/// A window being kept.
#[derive(Debug)]
struct Capture {
    window: SequenceTrace,
    /// Whether its end is known (`window.to_ns` is then final).
    closed: bool,
    too_long: bool,
}

impl Capture {
    fn open(window: SequenceTrace) -> Self {
        Self {
            window,
            closed: false,
            too_long: false,
        }
    }

    fn observe(&mut self, e: &TraceEvent, budget_events: usize) {
        if self.too_long || e.t_ns > self.window.to_ns {
            return;
        }
        self.window.observe(e);
        if !self.closed && self.window.events.len() > budget_events {
            self.too_long = true;
            self.window.events = Vec::new();
            self.window.before.clear();
        }
    }

    /// The end is known: `(from_ns, to_ns)` as [`sequence_window`] has it.
    fn close(&mut self, (from_ns, to_ns): (Nanos, Nanos)) {
        assert_eq!(
            from_ns, self.window.from_ns,
            "the window opened where it starts"
        );
        assert!(!self.closed, "a window closes once");
        self.closed = true;
        self.window.to_ns = to_ns;
        let inside = self.window.events.partition_point(|e| e.t_ns <= to_ns);
        self.window.events.truncate(inside);
    }

    fn finish(self, lifelines: &Lifelines) -> CapturedWindow {
        if self.too_long {
            return CapturedWindow::TooLong {
                from_ns: self.window.from_ns,
                to_ns: self.window.to_ns,
            };
        }
        CapturedWindow::Kept(lifelines.complete(self.window))
    }
}

/// A [`TraceSink`] that keeps, during the run itself, the windows of the sequence diagrams
/// around the run's first failovers (or its first election): the same windows a
/// [`super::SequenceRecorder`] keeps on a second run given their bounds from the report.
#[derive(Debug)]
pub struct FailoverRecorder {
    wanted: AroundFailovers,
    budget_events: usize,
    lifelines: Lifelines,
    lookback: Lookback,
    failovers: Vec<Capture>,
    failovers_opened: usize,
    election: Option<Capture>,
    election_opened: bool,
}

impl FailoverRecorder {
    /// A recorder for the windows `wanted`, with the default budget.
    pub fn new(wanted: AroundFailovers) -> Self {
        Self {
            wanted,
            budget_events: OPEN_WINDOW_BUDGET_EVENTS,
            lifelines: Lifelines::default(),
            lookback: Lookback::default(),
            failovers: Vec::new(),
            failovers_opened: 0,
            election: None,
            election_opened: false,
        }
    }

    /// At most `events` per window while its end is unknown (see [`CapturedWindow::TooLong`]).
    pub fn with_budget(mut self, events: usize) -> Self {
        self.budget_events = events;
        self
    }

    /// Whether a window may still open (and so the lookback is needed).
    fn may_open(&self) -> bool {
        let failover = self.failovers_opened < self.wanted.failovers;
        let election = self.wanted.first_election && !self.election_opened;
        failover || (election && self.failovers_opened == 0)
    }

    fn on_failover_opened(&mut self, now_ns: Nanos) {
        // A run with a failover draws no election.
        self.election = None;
        if self.failovers_opened < self.wanted.failovers {
            let (from_ns, _) = sequence_window(now_ns, None);
            let window = self.lookback.window_from(from_ns);
            self.failovers.push(Capture::open(window));
        }
        self.failovers_opened += 1;
    }

    fn on_failover_closed(&mut self, failover: &Failover) {
        let index = self.failovers_opened.checked_sub(1);
        let Some(capture) = index.and_then(|i| self.failovers.get_mut(i)) else {
            return;
        };
        let settled = self.wanted.settle.settled_at(failover);
        capture.close(sequence_window(failover.at_ns, settled));
    }

    fn on_election_opened(&mut self, now_ns: Nanos) {
        if self.wanted.first_election && !self.election_opened && self.failovers_opened == 0 {
            let (from_ns, _) = sequence_window(now_ns, None);
            self.election = Some(Capture::open(self.lookback.window_from(from_ns)));
        }
        self.election_opened = true;
    }

    /// The windows kept, with every process of the run as lifelines.
    pub fn finish_windows(self) -> CapturedWindows {
        let lifelines = self.lifelines;
        let failovers = self
            .failovers
            .into_iter()
            .map(|c| {
                assert!(
                    c.closed,
                    "the engine closes every failover by the end of the run"
                );
                c.finish(&lifelines)
            })
            .collect();
        let first_election = self
            .election
            .filter(|c| c.closed)
            .map(|c| c.finish(&lifelines));
        CapturedWindows {
            failovers,
            first_election,
        }
    }
}

impl TraceSink for FailoverRecorder {
    fn record(&mut self, event: &TraceEvent) {
        self.lifelines.observe(event);
        let budget = self.budget_events;
        for capture in self.failovers.iter_mut().chain(self.election.as_mut()) {
            capture.observe(event, budget);
        }
        if self.may_open() {
            self.lookback.push(event);
        } else if !self.lookback.events.is_empty() {
            self.lookback.clear();
        }
    }

    fn milestone(&mut self, now_ns: Nanos, milestone: Milestone<'_>) {
        match milestone {
            Milestone::FailoverOpened => self.on_failover_opened(now_ns),
            Milestone::FailoverClosed(failover) => self.on_failover_closed(failover),
            Milestone::ElectionOpened => self.on_election_opened(now_ns),
            Milestone::ElectionDecided(election) => {
                if let Some(capture) = self.election.as_mut().filter(|c| !c.closed) {
                    capture.close(sequence_window(election.started_ns, election.decided_ns));
                }
            }
        }
    }
}
