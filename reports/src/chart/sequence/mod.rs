//! The message sequence (Lamport) diagram of a window of a trace, typically around a failover.
//! This module replays the trace into lanes, arrows and markers; `figure` draws them on a
//! time axis (`time_axis`) that gives bursts of messages the room.

mod around;
mod capture;
mod figure;
mod time_axis;

pub use around::{
    AroundFailovers, CapturedWindow, CapturedWindows, FailoverRecorder, Settle,
    OPEN_WINDOW_BUDGET_EVENTS,
};
use capture::LaneState;
pub use capture::{SequenceRecorder, SequenceTrace};

use super::{render, Chart, ChartError};
use crate::table::{Cell, DataTable};
use figure::SequenceFigure;
use plotters::style::RGBColor;
use splitbrain_sim::report::LeadershipSpan;
use splitbrain_sim::{EventKind, Nanos, TraceEvent, NANOS_PER_MILLI};

/// How a sequence diagram names and labels its lifelines.
#[derive(Clone, Copy, Debug, Default)]
pub struct SequenceLabels<'a> {
    /// Lifeline names by process id (the rest are `nN`, or `resource`).
    pub node_names: &'a [String],
    /// Whether the resource's header reads `fenced` or `not fenced`.
    pub fenced: bool,
    /// The run's leadership spans (the report's): a claim is labelled with the term the run
    /// summary gives it. A process whose own term differs from its claims' (an etcd client
    /// counts revisions) then shows no other term. Empty: the trace's terms throughout.
    pub leadership: &'a [LeadershipSpan],
    /// How many of the processes are the group's members (ids `0..members`); the processes
    /// after them, but the resource, are the coordination service's. When a window holds
    /// more than [`SEQUENCE_MAX_ARROWS`] messages, those among service processes (an etcd
    /// cluster's Raft heartbeats) are folded: counted in the note, not drawn, so the
    /// members' traffic and the takeover stay in view. `None`: nothing is folded.
    pub members: Option<usize>,
}

impl SequenceLabels<'_> {
    /// The term of `node`'s claim in force at `t_ns`, per the run's leadership spans.
    fn claimed_term(&self, node: u32, t_ns: Nanos) -> Option<u64> {
        self.leadership
            .iter()
            .rev()
            .find(|s| {
                s.node.0 == node && s.from_ns <= t_ns && (t_ns < s.to_ns || s.from_ns == s.to_ns)
            })
            .map(|s| s.term)
    }
}

/// At most this many message arrows are drawn; the chart says so when it leaves some out.
pub const SEQUENCE_MAX_ARROWS: usize = 150;

const HEIGHT: u32 = 1100;
const ARROW_LABEL_PX: u32 = 14;
const HEAL: RGBColor = RGBColor(46, 125, 50);
const WRITE: RGBColor = RGBColor(150, 150, 150);

/// How long before a failover its sequence diagram starts.
pub const SEQUENCE_LOOKBACK_NS: Nanos = 50 * NANOS_PER_MILLI;

/// A window around a failover for [`sequence_diagram`]: from [`SEQUENCE_LOOKBACK_NS`] (50 ms)
/// before the fault to a little after it settled (the new leader's first accepted write):
/// a fifth of the failover, at least 100 ms and at most a second (a minute's failover would
/// otherwise end on twelve seconds of the new leader's writes); one second after the fault
/// when it never settled.
pub fn sequence_window(fault_at_ns: Nanos, settled_at_ns: Option<Nanos>) -> (Nanos, Nanos) {
    let from = fault_at_ns.saturating_sub(SEQUENCE_LOOKBACK_NS);
    let tail =
        |failover: Nanos| (failover / 5).clamp(100 * NANOS_PER_MILLI, 1000 * NANOS_PER_MILLI);
    let to = match settled_at_ns {
        Some(s) if s > fault_at_ns => s + tail(s - fault_at_ns),
        _ => fault_at_ns + 1000 * NANOS_PER_MILLI,
    };
    (from, to)
}

/// What became of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Delivered,
    /// Arrived while the receiver was paused; handled at resume.
    Held,
    /// Dropped on arrival (receiver crashed, or a partition began meanwhile).
    Dropped,
    WriteAccepted,
    WriteRejected,
}

impl Fate {
    fn of(kind: &EventKind) -> Option<Self> {
        Some(match kind {
            EventKind::Deliver { .. } => Fate::Delivered,
            EventKind::Held { .. } => Fate::Held,
            EventKind::Drop { .. } => Fate::Dropped,
            EventKind::WriteAccepted { .. } => Fate::WriteAccepted,
            EventKind::WriteRejected { .. } => Fate::WriteRejected,
            _ => return None,
        })
    }
}

/// The message type of a message event.
fn message_of(kind: &EventKind) -> &str {
    match kind {
        EventKind::Deliver { message, .. }
        | EventKind::Held { message, .. }
        | EventKind::Drop { message, .. } => message,
        _ => "",
    }
}

struct Arrow<'a> {
    from: usize,
    to: usize,
    sent: Nanos,
    at: Nanos,
    kind: &'a str,
    fate: Fate,
}

/// The service-internal messages a diagram left out ([`SequenceLabels::members`]).
#[derive(Default)]
struct Folded<'a> {
    count: usize,
    /// Their message types, in order of first appearance.
    kinds: Vec<&'a str>,
}

enum MarkKind {
    Crash,
    Restart,
    Freeze,
    Resume,
    Leads(u64),
    StepsDown,
    Term(u64),
    Broke(String),
}

struct Marker {
    lane: usize,
    at: Nanos,
    kind: MarkKind,
}

/// A run-wide event drawn across every lifeline.
struct Rule<'a> {
    at: Nanos,
    text: &'a str,
    heal: bool,
}

struct Lane {
    name: String,
    /// The state at the start of the window, for the header.
    state: String,
    /// Intervals (within the window) during which the process was down.
    down: Vec<(Nanos, Nanos)>,
    /// Intervals (within the window) during which the process was paused or stalled.
    frozen: Vec<(Nanos, Nanos)>,
}

/// One lifeline per process (members, services, the resource), true time flowing down; one
/// arrow per message sent and received (or dropped, or held) inside `from_ns..=to_ns`, from
/// (sender, send time) to (receiver, arrival time), coloured by message type and labelled
/// where there is room; writes to the resource in grey, rejected ones in red. Crashes,
/// restarts, freezes (pauses and stalls, drawn as a band on the lifeline) and resumes,
/// leadership claims and hand-overs, term changes and broken invariants are marked on the
/// lifelines; faults and heals are lines across. At most [`SEQUENCE_MAX_ARROWS`]
/// arrows are drawn (the first in time), after folding the service's internal messages
/// ([`SequenceLabels::members`]); the chart says how many it left out.
///
/// `events` is the whole trace (the state at the start of the window is replayed from it);
/// `labels` names the lifelines and numbers the claims ([`SequenceLabels`]).
/// The data table has one row per message in the window: `from, to, message, fate, sent_ns,
/// received_ns, drawn`.
pub fn sequence_diagram(
    name: &str,
    title: &str,
    events: &[TraceEvent],
    from_ns: Nanos,
    to_ns: Nanos,
    labels: &SequenceLabels<'_>,
) -> Result<Chart, ChartError> {
    let mut recorder = SequenceRecorder::new(&[(from_ns, to_ns)]);
    for e in events {
        recorder.observe(e);
    }
    let window = recorder
        .finish_windows()
        .pop()
        .expect("one window asked, one given");
    sequence_diagram_of(name, title, &window, labels)
}

/// [`sequence_diagram`] of a window gathered by a [`SequenceRecorder`] as the run went, without
/// keeping the whole trace.
pub fn sequence_diagram_of(
    name: &str,
    title: &str,
    window: &SequenceTrace,
    labels: &SequenceLabels<'_>,
) -> Result<Chart, ChartError> {
    let node_names = labels.node_names;
    let (from_ns, to_ns) = (window.from_ns, window.to_ns);
    let ids: Vec<u32> = window.ids.iter().copied().collect();
    let lane_of = |id: u32| ids.binary_search(&id).expect("every id has a lane");
    let resources = &window.resources;

    // Each process's state when the window opens (a resource neither leads nor has a term).
    let mut states: Vec<LaneState> = ids
        .iter()
        .map(|id| {
            let state = window.before.get(id).copied().unwrap_or_default();
            match resources.contains(id) {
                true => LaneState {
                    leader: false,
                    term: None,
                    ..state
                },
                false => state,
            }
        })
        .collect();
    let terms_agree = terms_agree(window, labels);
    let mut lanes: Vec<Lane> = ids
        .iter()
        .zip(&states)
        .map(|(&id, state)| Lane {
            name: lane_name(id, node_names, resources.contains(&id)),
            state: lane_header(
                id,
                state,
                resources.contains(&id),
                labels,
                terms_agree,
                from_ns,
            ),
            down: Vec::new(),
            frozen: Vec::new(),
        })
        .collect();

    let mut arrows = Vec::new();
    let mut markers = Vec::new();
    let mut rules = Vec::new();
    let since_start = |on: bool| on.then_some(from_ns);
    let mut down_since: Vec<Option<Nanos>> = states.iter().map(|s| since_start(s.down)).collect();
    let mut frozen_since: Vec<Option<Nanos>> =
        states.iter().map(|s| since_start(s.frozen)).collect();
    for e in &window.events {
        let Some(id) = e.node.map(|n| n.0) else {
            match &e.kind {
                EventKind::Fault { description } => rules.push(Rule {
                    at: e.t_ns,
                    text: description,
                    heal: false,
                }),
                EventKind::Heal { description } => rules.push(Rule {
                    at: e.t_ns,
                    text: description,
                    heal: true,
                }),
                _ => {}
            }
            continue;
        };
        let lane = lane_of(id);
        if let (Some(fate), Some((from, sent))) = (Fate::of(&e.kind), e.kind.sender())
            && sent >= from_ns
        {
            let kind = if resources.contains(&id) {
                "write"
            } else {
                message_of(&e.kind)
            };
            arrows.push(Arrow {
                from: lane_of(from.0),
                to: lane,
                sent,
                at: e.t_ns,
                kind,
                fate,
            });
        }
        let mut mark = |kind| {
            markers.push(Marker {
                lane,
                at: e.t_ns,
                kind,
            })
        };
        match e.kind {
            EventKind::Crash => {
                mark(MarkKind::Crash);
                down_since[lane] = Some(e.t_ns);
                if let Some(since) = frozen_since[lane].take() {
                    lanes[lane].frozen.push((since, e.t_ns));
                }
            }
            EventKind::Freeze { .. } if frozen_since[lane].is_none() => {
                mark(MarkKind::Freeze);
                frozen_since[lane] = Some(e.t_ns);
            }
            EventKind::Resume => {
                mark(MarkKind::Resume);
                if let Some(since) = frozen_since[lane].take() {
                    lanes[lane].frozen.push((since, e.t_ns));
                }
            }
            EventKind::Restart => {
                mark(MarkKind::Restart);
                if let Some(since) = down_since[lane].take() {
                    lanes[lane].down.push((since, e.t_ns));
                }
            }
            _ => {}
        }
        if e.broke_invariant() {
            mark(MarkKind::Broke(e.broken.to_string()));
        }
        if !resources.contains(&id) {
            match (states[lane].leader, e.leader) {
                (false, true) => {
                    let claimed = labels.claimed_term(id, e.t_ns);
                    mark(MarkKind::Leads(claimed.or(e.term).unwrap_or(0)))
                }
                (true, false) if !matches!(e.kind, EventKind::Crash) => mark(MarkKind::StepsDown),
                _ => {
                    if let (Some(old), Some(new)) = (states[lane].term, e.term)
                        && new != old
                        && !e.leader
                        && terms_agree
                    {
                        mark(MarkKind::Term(new));
                    }
                }
            }
            states[lane].leader = e.leader;
            states[lane].term = e.term.or(states[lane].term);
        }
    }
    for (lane, since) in down_since.iter().enumerate() {
        if let Some(since) = since {
            lanes[lane].down.push((*since, to_ns));
        }
    }
    for (lane, since) in frozen_since.iter().enumerate() {
        if let Some(since) = since {
            lanes[lane].frozen.push((*since, to_ns));
        }
    }
    let is_service = |lane: usize| {
        let id = ids[lane];
        labels.members.is_some_and(|m| id as usize >= m) && !resources.contains(&id)
    };
    let over_cap = arrows.len() > SEQUENCE_MAX_ARROWS;
    let is_folded: Vec<bool> = arrows
        .iter()
        .map(|a| over_cap && is_service(a.from) && is_service(a.to))
        .collect();

    let data = message_table(name, &lanes, &arrows, &is_folded);
    let mut folded = Folded::default();
    let arrows: Vec<Arrow<'_>> = arrows
        .into_iter()
        .zip(&is_folded)
        .filter_map(|(a, &fold)| {
            if fold {
                folded.count += 1;
                if !folded.kinds.contains(&a.kind) {
                    folded.kinds.push(a.kind);
                }
            }
            (!fold).then_some(a)
        })
        .collect();

    let mut kinds: Vec<&str> = Vec::new();
    for a in arrows.iter().take(SEQUENCE_MAX_ARROWS) {
        if a.kind != "write" && !kinds.contains(&a.kind) {
            kinds.push(a.kind);
        }
    }
    let figure = SequenceFigure {
        title,
        from_ns,
        to_ns,
        lanes,
        arrows,
        markers,
        rules,
        kinds,
        folded,
    };
    render(name, title, data, &figure)
}

/// Whether the processes' own terms are their claims' terms (Raft's are; an etcd client's is
/// the revision it saw): if not, only claims are numbered, with the summary's terms.
fn terms_agree(window: &SequenceTrace, labels: &SequenceLabels<'_>) -> bool {
    let leads_in_window = window.events.iter().filter(|e| e.leader);
    let leads_before = window.before.iter().filter(|(_, s)| s.leader);
    leads_in_window
        .filter_map(|e| Some((e.node?.0, e.t_ns, e.term)))
        .chain(leads_before.map(|(&id, s)| (id, window.from_ns, s.term)))
        .all(|(id, t, term)| labels.claimed_term(id, t).is_none_or(|c| Some(c) == term))
}

/// A lifeline's name: the one given, else `resource` or `nN`.
fn lane_name(id: u32, node_names: &[String], is_resource: bool) -> String {
    match node_names.get(id as usize) {
        Some(name) => name.clone(),
        None if is_resource => "resource".to_string(),
        None => format!("n{id}"),
    }
}

/// A lifeline's header: its state when the window opens at `from_ns`.
fn lane_header(
    id: u32,
    state: &LaneState,
    is_resource: bool,
    labels: &SequenceLabels<'_>,
    terms_agree: bool,
    from_ns: Nanos,
) -> String {
    if is_resource {
        return if labels.fenced {
            "fenced"
        } else {
            "not fenced"
        }
        .to_string();
    }
    if state.down {
        return "down".to_string();
    }
    let claimed = labels.claimed_term(id, from_ns);
    let header = match (state.leader, claimed.or(state.term)) {
        (true, Some(t)) => format!("leader t{t}"),
        (false, Some(t)) if terms_agree => format!("term {t}"),
        _ => String::new(),
    };
    match state.frozen {
        true => format!("{header} frozen").trim_start().to_string(),
        false => header,
    }
}

/// One row per message in the window: `from, to, message, fate, sent_ns, received_ns, drawn`
/// (`false` for a message folded away or past the cap).
fn message_table(name: &str, lanes: &[Lane], arrows: &[Arrow<'_>], folded: &[bool]) -> DataTable {
    let columns = [
        "from",
        "to",
        "message",
        "fate",
        "sent_ns",
        "received_ns",
        "drawn",
    ];
    let mut data = DataTable::new(name, &columns);
    let mut shown = 0;
    for (a, &folded) in arrows.iter().zip(folded) {
        let drawn = !folded && shown < SEQUENCE_MAX_ARROWS;
        shown += usize::from(!folded);
        let fate = match a.fate {
            Fate::Delivered => "delivered",
            Fate::Held => "held",
            Fate::Dropped => "dropped",
            Fate::WriteAccepted => "accepted",
            Fate::WriteRejected => "rejected",
        };
        data.push(vec![
            lanes[a.from].name.as_str().into(),
            lanes[a.to].name.as_str().into(),
            a.kind.into(),
            fate.into(),
            a.sent.into(),
            a.at.into(),
            Cell::Text(drawn.to_string()),
        ]);
    }
    data
}
