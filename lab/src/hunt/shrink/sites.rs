//! Where each fault fell in a run: whom it struck, whether it did anything, and the events
//! just before it, read from the run's trace ([`TraceSink`]). The timing passes place faults
//! just after those events, and a reproducer says, beside each fault, which event it follows
//! ([`fault_notes`]).

use super::ScenarioSteps;
use crate::runner::run_seed;
use splitbrain_scenario::Scenario;
use splitbrain_sim::trace::{EventKind, TraceEvent, TraceSink};
use splitbrain_sim::{format_duration, Nanos, NodeId};

/// One fault as a run fired it.
#[derive(Clone, Debug)]
pub(super) struct Site {
    /// When it fired.
    pub(super) at_ns: Nanos,
    /// Its kind (`crash`, `partition`...).
    pub(super) kind: String,
    /// The nodes its target resolved to.
    pub(super) nodes: Vec<NodeId>,
    /// Its target matched nobody: it did nothing.
    pub(super) skipped: bool,
    /// The last event at a node it struck before it fired.
    pub(super) struck_last: Option<TraceEvent>,
    /// The last event anywhere before it fired (a heal counts, another fault does not).
    pub(super) last: Option<TraceEvent>,
}

/// Keeps, for each fault as it fires, the last event of every node and of the run before it.
/// A fault's own effects (the freeze, crash or restart it causes) are traced just before
/// the fault itself: events of the run's current step are held apart until the step ends.
#[derive(Default)]
struct SiteSink {
    by_node: Vec<Option<TraceEvent>>,
    last: Option<TraceEvent>,
    /// Events of the step under way: a fault's effects, if a fault comes next.
    step: Vec<TraceEvent>,
    at_faults: Vec<(Option<TraceEvent>, Vec<Option<TraceEvent>>)>,
}

impl SiteSink {
    fn settle(&mut self) {
        for event in std::mem::take(&mut self.step) {
            if let Some(node) = event.node {
                if self.by_node.len() <= node.index() {
                    self.by_node.resize(node.index() + 1, None);
                }
                self.by_node[node.index()] = Some(event.clone());
            }
            self.last = Some(event);
        }
    }
}

/// Whether an event may be a fault's own effect, traced before the fault.
fn effect_of_a_fault(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Freeze { .. }
            | EventKind::Crash
            | EventKind::Restart
            | EventKind::Resign
            | EventKind::ConfChange { .. }
    )
}

impl TraceSink for SiteSink {
    fn record(&mut self, event: &TraceEvent) {
        match event.kind {
            EventKind::Fault { .. } => {
                self.at_faults
                    .push((self.last.clone(), self.by_node.clone()));
                self.step.clear();
                return;
            }
            EventKind::Quiet | EventKind::LivenessDeadline | EventKind::Log { .. } => return,
            _ => {}
        }
        if !effect_of_a_fault(&event.kind) {
            self.settle();
            self.step.push(event.clone());
            return self.settle();
        }
        if self.step.first().is_some_and(|e| e.t_ns != event.t_ns) {
            self.settle();
        }
        self.step.push(event.clone());
    }
}

/// The sites of the faults `s` fires, in the order they fire (its faults' order: the
/// shrinker keeps them in time order); `None` if the run gives no report.
pub(super) fn sites_of(s: &Scenario) -> Option<Vec<Site>> {
    let mut sink = SiteSink::default();
    let report = run_seed(s, Some(&mut sink), &|| false).ok()?;
    let sites = report
        .faults
        .iter()
        .zip(sink.at_faults)
        .map(|(record, (last, by_node))| {
            let struck_last = record
                .nodes
                .iter()
                .filter_map(|n| by_node.get(n.index()).cloned().flatten())
                .max_by_key(|e| e.t_ns);
            Site {
                at_ns: record.at_ns,
                kind: record.kind.clone(),
                nodes: record.nodes.clone(),
                skipped: record.skipped,
                struck_last,
                last,
            }
        });
    Some(sites.collect())
}

/// [`sites_of`] the best candidate, counted as a run of the shrink's budget; `None` when
/// the budget is spent.
pub(super) fn traced(s: &mut ScenarioSteps<'_>) -> Option<Vec<Site>> {
    if !s.spend() {
        return None;
    }
    sites_of(&s.best)
}

/// A trace event in words, for a reproducer's notes: `n2 handled RequestVote from n4`.
///
/// ```
/// use splitbrain_lab::hunt::shrink::describe_event;
/// use splitbrain_sim::trace::{Broken, EventKind, TraceEvent};
/// use splitbrain_sim::NodeId;
///
/// let e = TraceEvent { t_ns: 5, node: Some(NodeId(2)), local_ns: None, term: None,
///     leader: false, broken: Broken::default(),
///     kind: EventKind::Timer { timer: "election".into() } };
/// assert_eq!(describe_event(&e), "n2's election timer fired");
/// ```
pub fn describe_event(e: &TraceEvent) -> String {
    let node = e.node.map_or("the run".to_string(), |n| n.to_string());
    match &e.kind {
        EventKind::Start => format!("{node} started"),
        EventKind::Deliver { message, from, .. } => format!("{node} handled {message} from {from}"),
        EventKind::Timer { timer } => format!("{node}'s {timer} timer fired"),
        EventKind::Workload => format!("{node}'s write tick"),
        EventKind::Held { message, from, .. } => format!("{node} held {message} from {from}"),
        EventKind::Drop { message, from, .. } => {
            format!("{message} from {from} to {node} was dropped")
        }
        EventKind::Disconnect { peer } => format!("{node} lost its connection to {peer}"),
        EventKind::Persist { .. } => format!("{node} began a durable write"),
        EventKind::Freeze { .. } => format!("{node} froze"),
        EventKind::Resume => format!("{node} resumed"),
        EventKind::Crash => format!("{node} crashed"),
        EventKind::Restart => format!("{node} restarted"),
        EventKind::Resign => format!("{node} was asked to resign"),
        EventKind::ConfChange { .. } => format!("{node} was asked to change membership"),
        EventKind::ServiceLeads => format!("{node} began to lead the service"),
        EventKind::ServiceFollows => format!("{node} stopped leading the service"),
        EventKind::WriteAccepted { token, from, .. } => {
            format!("the resource accepted token {token} from {from}")
        }
        EventKind::WriteRejected { token, from, .. } => {
            format!("the resource rejected token {token} from {from}")
        }
        EventKind::Heal { description } => format!("heal: {description}"),
        EventKind::ClockCaughtUp => format!("{node}'s clock caught up"),
        other => other.name().to_string(),
    }
}

/// For each fault of `s` (in its order), the event it follows, in words: the last event at a
/// node it strikes (else the last event anywhere) and how long before it, as a reproducer
/// notes beside it (`1us after n2 handled RequestVote from n4`); `None` for a fault that
/// did not fire, and all `None` if the run gives no report. One traced run.
pub fn fault_notes(s: &Scenario) -> Vec<Option<String>> {
    let sites = sites_of(s).unwrap_or_default();
    let mut notes = vec![None; s.sim.faults.len()];
    // Faults fire in time order; a stable sort of the indices pairs each with its site.
    let mut order: Vec<usize> = (0..s.sim.faults.len()).collect();
    order.sort_by_key(|&i| s.sim.faults[i].at_ns);
    for (site, i) in sites.iter().zip(order) {
        notes[i] = site.struck_last.as_ref().or(site.last.as_ref()).map(|e| {
            let before = site.at_ns.saturating_sub(e.t_ns);
            format!("{} after {}", format_duration(before), describe_event(e))
        });
    }
    notes
}
