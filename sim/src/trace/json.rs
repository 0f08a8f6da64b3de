//! The JSON Lines rendering of trace events (docs/trace-format.md: the documented, stable
//! `--trace` format) and its parser back to typed events, for trace files read from disk.
//! Rendering then parsing gives the event back (a property test below checks it).

use super::event::{Broken, EventKind, Name, TraceEvent, QUIET_WHAT};
use crate::ids::NodeId;
use crate::invariant::Invariant;
use serde::Deserialize;
use std::fmt::{self, Write};

/// Appends the JSON line of `event` (without the newline) to `line`: every column, always
/// in the documented order.
pub fn write_json_line(event: &TraceEvent, line: &mut String) {
    let _ = write!(line, "{{\"t\":{},\"node\":", event.t_ns);
    push_opt(line, event.node.map(|n| u64::from(n.0)));
    line.push_str(",\"local\":");
    push_opt(line, event.local_ns);
    let _ = write!(line, ",\"ev\":\"{}\",\"what\":", event.kind.name());
    push_what(line, &event.kind);
    let sender = event.kind.sender();
    line.push_str(",\"from\":");
    push_opt(line, sender.map(|(from, _)| u64::from(from.0)));
    line.push_str(",\"sent\":");
    push_opt(line, sender.map(|(_, sent_ns)| sent_ns));
    line.push_str(",\"term\":");
    push_opt(line, event.term);
    let _ = write!(line, ",\"leader\":{},\"check\":\"", event.leader);
    if event.broken.is_empty() {
        line.push_str("ok");
    } else {
        let _ = write!(line, "{}", event.broken);
    }
    line.push_str("\"}");
}

/// The `what` column: message type, timer name, token or description, depending on the kind.
fn push_what(line: &mut String, kind: &EventKind) {
    match kind {
        EventKind::Deliver { message, .. }
        | EventKind::Held { message, .. }
        | EventKind::Drop { message, .. } => push_json_string(line, message),
        EventKind::Timer { timer } => push_json_string(line, timer),
        EventKind::WriteAccepted { token, .. } | EventKind::WriteRejected { token, .. } => {
            let _ = write!(line, "\"{token}\"");
        }
        EventKind::Fault { description } | EventKind::Heal { description } => {
            push_json_string(line, description)
        }
        EventKind::Log { text } => push_json_string(line, text),
        EventKind::ConfChange { change } => push_json_string(line, &change.to_string()),
        EventKind::Quiet => push_json_string(line, QUIET_WHAT),
        EventKind::Disconnect { peer } => {
            let _ = write!(line, "\"{}\"", peer.0);
        }
        EventKind::Persist { done_ns } => {
            let _ = write!(line, "\"{done_ns}\"");
        }
        EventKind::Freeze { until_ns } => {
            let _ = write!(line, "\"{until_ns}\"");
        }
        EventKind::Start
        | EventKind::Workload
        | EventKind::Resume
        | EventKind::Crash
        | EventKind::Restart
        | EventKind::Resign
        | EventKind::ServiceLeads
        | EventKind::ServiceFollows
        | EventKind::ClockCaughtUp
        | EventKind::LivenessDeadline => line.push_str("\"\""),
    }
}

fn push_opt(line: &mut String, value: Option<impl fmt::Display>) {
    match value {
        Some(v) => {
            let _ = write!(line, "{v}");
        }
        None => line.push_str("null"),
    }
}

fn push_json_string(line: &mut String, text: &str) {
    line.push('"');
    for c in text.chars() {
        match c {
            '"' => line.push_str("\\\""),
            '\\' => line.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(line, "\\u{:04x}", c as u32);
            }
            c => line.push(c),
        }
    }
    line.push('"');
}

/// A trace line that is not a trace event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceParseError {
    /// 1-based line number (1 for a single line parsed alone).
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for TraceParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TraceParseError {}

/// A line as JSON has it, before it is checked into a [`TraceEvent`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLine {
    t: u64,
    node: Option<u32>,
    local: Option<i64>,
    ev: String,
    what: String,
    from: Option<u32>,
    sent: Option<u64>,
    term: Option<u64>,
    leader: bool,
    check: String,
}

/// Parses one trace line (one JSON object) into the event it renders.
pub fn parse_trace_line(line: &str) -> Result<TraceEvent, TraceParseError> {
    let error = |message: String| TraceParseError { line: 1, message };
    let raw: RawLine = serde_json::from_str(line).map_err(|e| error(e.to_string()))?;
    let kind = kind_of(&raw).map_err(error)?;
    let broken = broken_of(&raw.check).map_err(error)?;
    Ok(TraceEvent {
        t_ns: raw.t,
        node: raw.node.map(NodeId),
        local_ns: raw.local,
        kind,
        term: raw.term,
        leader: raw.leader,
        broken,
    })
}

/// Parses a whole trace file; blank lines are skipped.
pub fn parse_trace(text: &str) -> Result<Vec<TraceEvent>, TraceParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| parse_trace_line(l).map_err(|e| TraceParseError { line: i + 1, ..e }))
        .collect()
}

/// The kinds whose lines name a sender (`from`, `sent`).
const WITH_SENDER: [&str; 5] = [
    "deliver",
    "held",
    "drop",
    "write_accepted",
    "write_rejected",
];

/// The event kind of a line, with what its `what`, `from` and `sent` columns carry.
fn kind_of(raw: &RawLine) -> Result<EventKind, String> {
    let ev = raw.ev.as_str();
    let sender = match (raw.from, raw.sent) {
        (Some(from), Some(sent_ns)) => Some((NodeId(from), sent_ns)),
        (None, None) => None,
        _ => return Err("\"from\" and \"sent\" are both null or both set".to_string()),
    };
    match (WITH_SENDER.contains(&ev), sender) {
        (true, Some((from, sent_ns))) => with_sender(ev, &raw.what, from, sent_ns),
        (true, None) => Err(format!("a {ev:?} line needs \"from\" and \"sent\"")),
        (false, Some(_)) => Err(format!("\"from\" and \"sent\" are null on a {ev:?} line")),
        (false, None) => without_sender(ev, &raw.what),
    }
}

/// A message event or a write: `what` is the message type or the token.
fn with_sender(ev: &str, what: &str, from: NodeId, sent_ns: u64) -> Result<EventKind, String> {
    let message = Name::Owned(what.to_string());
    let token = || {
        what.parse::<u64>()
            .map_err(|_| format!("a write's token is a number, not {what:?}"))
    };
    Ok(match ev {
        "deliver" => EventKind::Deliver {
            message,
            from,
            sent_ns,
        },
        "held" => EventKind::Held {
            message,
            from,
            sent_ns,
        },
        "drop" => EventKind::Drop {
            message,
            from,
            sent_ns,
        },
        "write_accepted" => EventKind::WriteAccepted {
            token: token()?,
            from,
            sent_ns,
        },
        _ => EventKind::WriteRejected {
            token: token()?,
            from,
            sent_ns,
        },
    })
}

/// The kinds without a sender: `what` is a timer name, a description, or fixed text.
fn without_sender(ev: &str, what: &str) -> Result<EventKind, String> {
    let text = || what.to_string();
    match ev {
        "timer" => Ok(EventKind::Timer {
            timer: Name::Owned(text()),
        }),
        "fault" => Ok(EventKind::Fault {
            description: text(),
        }),
        "heal" => Ok(EventKind::Heal {
            description: text(),
        }),
        "log" => Ok(EventKind::Log { text: text() }),
        "disconnect" => what
            .parse::<u32>()
            .map(|peer| EventKind::Disconnect { peer: NodeId(peer) })
            .map_err(|_| format!("a disconnect's peer is a node number, not {what:?}")),
        "persist" => what
            .parse::<u64>()
            .map(|done_ns| EventKind::Persist { done_ns })
            .map_err(|_| format!("a persist's completion is a time in ns, not {what:?}")),
        "conf_change" => what
            .split_once(' ')
            .and_then(|(op, member)| {
                crate::fault::MemberChange::from_op(op, member.parse::<u32>().ok()?)
            })
            .map(|change| EventKind::ConfChange { change })
            .ok_or(format!(
                "a conf_change is an operation and a member, not {what:?}"
            )),
        "freeze" => what
            .parse::<u64>()
            .map(|until_ns| EventKind::Freeze { until_ns })
            .map_err(|_| format!("a freeze's end is a time in ns, not {what:?}")),
        _ => {
            let kind = fixed_text(ev).ok_or(format!("unknown event kind {ev:?}"))?;
            let expected = if kind == EventKind::Quiet {
                QUIET_WHAT
            } else {
                ""
            };
            if what != expected {
                return Err(format!("\"what\" is {expected:?} on a {ev:?} line"));
            }
            Ok(kind)
        }
    }
}

/// The kinds whose `what` never varies.
fn fixed_text(ev: &str) -> Option<EventKind> {
    Some(match ev {
        "start" => EventKind::Start,
        "workload" => EventKind::Workload,
        "resume" => EventKind::Resume,
        "crash" => EventKind::Crash,
        "restart" => EventKind::Restart,
        "resign" => EventKind::Resign,
        "service_leads" => EventKind::ServiceLeads,
        "service_follows" => EventKind::ServiceFollows,
        "clock_caught_up" => EventKind::ClockCaughtUp,
        "quiet" => EventKind::Quiet,
        "liveness_deadline" => EventKind::LivenessDeadline,
        _ => return None,
    })
}

/// The `check` column: `ok`, or comma-separated invariant names.
fn broken_of(check: &str) -> Result<Broken, String> {
    if check == "ok" {
        return Ok(Broken::default());
    }
    check
        .split(',')
        .map(|name| {
            Invariant::from_name(name)
                .or_else(|| property_name(name).map(Invariant::Property))
                .ok_or(format!("unknown invariant {name:?}"))
        })
        .collect()
}

/// A user property's name read back from a trace (see [`crate::property`]): lowercase
/// letters, digits and `_`, kept for the life of the process (one copy per distinct name).
fn property_name(name: &str) -> Option<&'static str> {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    if !crate::property::is_well_formed(name) || crate::property::RESERVED_NAMES.contains(&name) {
        return None;
    }
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = names.get(name) {
        return Some(known);
    }
    let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(kept);
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_user_propertys_name_in_the_check_column_reads_back() {
        let broken = broken_of("election_safety,one_holder_at_a_time").unwrap();
        let names: Vec<&str> = broken.iter().map(|i| i.name()).collect();
        assert!(names.contains(&"one_holder_at_a_time"), "{names:?}");
        assert!(broken_of("Not A Name").is_err());
        assert!(broken_of("panic").is_err());
    }

    fn render(event: &TraceEvent) -> String {
        let mut line = String::new();
        write_json_line(event, &mut line);
        line
    }

    #[test]
    fn the_documented_example_line_parses_and_renders_back_byte_for_byte() {
        let line = r#"{"t":1274125533,"node":1,"local":1274125533,"ev":"deliver","what":"RequestVoteResp","from":2,"sent":1270005533,"term":2,"leader":true,"check":"election_safety"}"#;
        let e = parse_trace_line(line).unwrap();
        assert_eq!(e.t_ns, 1_274_125_533);
        assert_eq!(
            e.kind,
            EventKind::Deliver {
                message: Name::Borrowed("RequestVoteResp"),
                from: NodeId(2),
                sent_ns: 1_270_005_533
            }
        );
        assert!(e.broken.contains(Invariant::ElectionSafety));
        assert_eq!(render(&e), line);
    }

    #[test]
    fn run_wide_events_have_no_node() {
        let line = r#"{"t":5000000000,"node":null,"local":null,"ev":"fault","what":"crash n1 (leader)","from":null,"sent":null,"term":null,"leader":false,"check":"ok"}"#;
        let e = parse_trace_line(line).unwrap();
        assert_eq!(e.node, None);
        assert_eq!(e.kind.sender(), None);
        assert_eq!(render(&e), line);
    }

    #[test]
    fn a_bad_line_names_its_line_number() {
        let text = "\n{\"t\":1}\n";
        let err = parse_trace(text).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().starts_with("trace line 2: "), "{err}");
    }

    #[test]
    fn a_line_the_typed_event_cannot_hold_is_an_error() {
        let good = r#"{"t":1,"node":0,"local":1,"ev":"crash","what":"","from":null,"sent":null,"term":1,"leader":false,"check":"ok"}"#;
        assert!(parse_trace_line(good).is_ok());
        for (from, to) in [
            ("\"crash\"", "\"crush\""),
            ("\"what\":\"\"", "\"what\":\"x\""),
            // Not a built-in invariant, nor a name a property can have.
            ("\"check\":\"ok\"", "\"check\":\"Safety!\""),
            ("\"from\":null", "\"from\":2"),
            ("\"check\":\"ok\"", "\"check\":\"ok\",\"extra\":1"),
        ] {
            let bad = good.replacen(from, to, 1);
            assert!(parse_trace_line(&bad).is_err(), "{bad}");
        }
        let write = r#"{"t":1,"node":3,"local":null,"ev":"write_accepted","what":"x","from":0,"sent":0,"term":null,"leader":false,"check":"ok"}"#;
        assert!(parse_trace_line(write).is_err(), "a token is a number");
        let quiet = good.replacen("\"crash\"", "\"quiet\"", 1);
        assert!(
            parse_trace_line(&quiet).is_err(),
            "quiet says what it starts"
        );
        let quiet = quiet.replacen("\"what\":\"\"", "\"what\":\"liveness watch starts\"", 1);
        assert!(parse_trace_line(&quiet).is_ok(), "{quiet}");
    }

    fn name() -> impl Strategy<Value = Name> {
        any::<String>().prop_map(Name::Owned)
    }

    fn kind() -> impl Strategy<Value = EventKind> {
        let sender = (any::<u32>().prop_map(NodeId), any::<u64>());
        prop_oneof![
            Just(EventKind::Start),
            (name(), sender.clone()).prop_map(|(message, (from, sent_ns))| {
                EventKind::Deliver {
                    message,
                    from,
                    sent_ns,
                }
            }),
            name().prop_map(|timer| EventKind::Timer { timer }),
            Just(EventKind::Workload),
            (name(), sender.clone()).prop_map(|(message, (from, sent_ns))| EventKind::Held {
                message,
                from,
                sent_ns
            }),
            (name(), sender.clone()).prop_map(|(message, (from, sent_ns))| EventKind::Drop {
                message,
                from,
                sent_ns
            }),
            any::<u32>().prop_map(|peer| EventKind::Disconnect { peer: NodeId(peer) }),
            any::<u64>().prop_map(|done_ns| EventKind::Persist { done_ns }),
            "[ -~]{0,20}".prop_map(|text| EventKind::Log { text }),
            any::<u64>().prop_map(|until_ns| EventKind::Freeze { until_ns }),
            Just(EventKind::Resume),
            Just(EventKind::Crash),
            Just(EventKind::Restart),
            Just(EventKind::Resign),
            (0..4usize, any::<u32>()).prop_map(|(op, member)| EventKind::ConfChange {
                change: crate::fault::MemberChange::from_op(
                    crate::fault::MemberChange::OPS[op],
                    member
                )
                .unwrap()
            }),
            Just(EventKind::ServiceLeads),
            Just(EventKind::ServiceFollows),
            (any::<u64>(), sender.clone()).prop_map(|(token, (from, sent_ns))| {
                EventKind::WriteAccepted {
                    token,
                    from,
                    sent_ns,
                }
            }),
            (any::<u64>(), sender).prop_map(|(token, (from, sent_ns))| {
                EventKind::WriteRejected {
                    token,
                    from,
                    sent_ns,
                }
            }),
            any::<String>().prop_map(|description| EventKind::Fault { description }),
            any::<String>().prop_map(|description| EventKind::Heal { description }),
            Just(EventKind::ClockCaughtUp),
            Just(EventKind::Quiet),
            Just(EventKind::LivenessDeadline),
        ]
    }

    fn event() -> impl Strategy<Value = TraceEvent> {
        let broken = proptest::collection::vec(proptest::sample::select(&Invariant::ALL[..]), 0..4);
        (
            any::<u64>(),
            any::<Option<u32>>(),
            any::<Option<i64>>(),
            kind(),
            any::<Option<u64>>(),
            any::<bool>(),
            broken,
        )
            .prop_map(
                |(t_ns, node, local_ns, kind, term, leader, broken)| TraceEvent {
                    t_ns,
                    node: node.map(NodeId),
                    local_ns,
                    kind,
                    term,
                    leader,
                    broken: Broken::from(broken),
                },
            )
    }

    proptest! {
        #[test]
        fn rendering_then_parsing_gives_the_event_back(e in event()) {
            let line = render(&e);
            prop_assert!(!line.contains('\n'), "one event, one line: {}", line);
            let back = parse_trace_line(&line).map_err(|err| TestCaseError::fail(format!("{err}: {line}")))?;
            prop_assert_eq!(&back, &e);
            prop_assert_eq!(render(&back), line);
        }
    }
}
