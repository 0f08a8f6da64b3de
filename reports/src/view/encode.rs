//! The run's events as the compact JSON the page embeds: one array per event, strings
//! (message types, timer names, fault descriptions, invariant names) interned in a table so
//! that a run of 100,000 events embeds in a few megabytes.

use splitbrain_sim::{EventKind, TraceEvent};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The event kinds in the order their codes index (`kinds` in the embedded data).
pub(super) const KINDS: [&str; 24] = [
    "start",
    "deliver",
    "timer",
    "workload",
    "held",
    "drop",
    "disconnect",
    "persist",
    "log",
    "freeze",
    "resume",
    "crash",
    "restart",
    "resign",
    "write_accepted",
    "write_rejected",
    "fault",
    "heal",
    "clock_caught_up",
    "quiet",
    "liveness_deadline",
    "service_leads",
    "service_follows",
    "conf_change",
];

/// The code of a kind: its index in [`KINDS`]. Exhaustive, so that a new kind does not
/// compile until it has a code (a test checks the codes against the names).
fn kind_code(kind: &EventKind) -> usize {
    match kind {
        EventKind::Start => 0,
        EventKind::Deliver { .. } => 1,
        EventKind::Timer { .. } => 2,
        EventKind::Workload => 3,
        EventKind::Held { .. } => 4,
        EventKind::Drop { .. } => 5,
        EventKind::Disconnect { .. } => 6,
        EventKind::Persist { .. } => 7,
        EventKind::Log { .. } => 8,
        EventKind::Freeze { .. } => 9,
        EventKind::Resume => 10,
        EventKind::Crash => 11,
        EventKind::Restart => 12,
        EventKind::Resign => 13,
        EventKind::WriteAccepted { .. } => 14,
        EventKind::WriteRejected { .. } => 15,
        EventKind::Fault { .. } => 16,
        EventKind::Heal { .. } => 17,
        EventKind::ClockCaughtUp => 18,
        EventKind::Quiet => 19,
        EventKind::LivenessDeadline => 20,
        EventKind::ServiceLeads => 21,
        EventKind::ServiceFollows => 22,
        EventKind::ConfChange { .. } => 23,
    }
}

/// The trace's `what` column of an event (docs/trace-format.md), as text.
pub(super) fn what_text(kind: &EventKind) -> String {
    match kind {
        EventKind::Deliver { message, .. }
        | EventKind::Held { message, .. }
        | EventKind::Drop { message, .. } => message.to_string(),
        EventKind::Timer { timer } => timer.to_string(),
        EventKind::WriteAccepted { token, .. } | EventKind::WriteRejected { token, .. } => {
            token.to_string()
        }
        EventKind::Fault { description } | EventKind::Heal { description } => description.clone(),
        EventKind::Log { text } => text.clone(),
        EventKind::Quiet => splitbrain_sim::trace::QUIET_WHAT.to_string(),
        EventKind::Disconnect { peer } => peer.0.to_string(),
        EventKind::Persist { done_ns } => done_ns.to_string(),
        EventKind::Freeze { until_ns } => until_ns.to_string(),
        EventKind::ConfChange { change } => change.to_string(),
        _ => String::new(),
    }
}

/// Interns strings in order of first use; index 0 is the empty string (`ok`, no `what`).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Strings {
    index: BTreeMap<String, usize>,
    list: Vec<String>,
    /// The bytes of the interned texts, each kept twice (in the list and as a key).
    text_bytes: usize,
}

impl Default for Strings {
    fn default() -> Self {
        let mut strings = Self {
            index: BTreeMap::new(),
            list: Vec::new(),
            text_bytes: 0,
        };
        strings.intern(String::new());
        strings
    }
}

impl Strings {
    /// The bytes the interned texts take (each is kept twice).
    pub(super) fn text_bytes(&self) -> usize {
        self.text_bytes
    }

    /// The index of `text`, added if new.
    pub(super) fn intern(&mut self, text: String) -> usize {
        if let Some(&i) = self.index.get(&text) {
            return i;
        }
        let i = self.list.len();
        self.text_bytes += 2 * text.len();
        self.list.push(text.clone());
        self.index.insert(text, i);
        i
    }

    /// The table as a JSON array.
    pub(super) fn to_json(&self) -> String {
        json_string_array(&self.list)
    }
}

/// Appends one event as `[t, node, local, kind, what, from, sent, term, leader, check]`:
/// `null` where the trace has `null`, `what` and `check` as indexes into `strings`
/// (`check` 0 is `ok`), `leader` as 0 or 1.
pub(super) fn push_event(out: &mut String, e: &TraceEvent, strings: &mut Strings) {
    let what = strings.intern(what_text(&e.kind));
    let check = strings.intern(e.broken.to_string());
    let sender = e.kind.sender();
    let _ = write!(out, "[{},", e.t_ns);
    push_opt(out, e.node.map(|n| i128::from(n.0)));
    push_opt(out, e.local_ns.map(i128::from));
    let _ = write!(out, "{},{},", kind_code(&e.kind), what);
    push_opt(out, sender.map(|(from, _)| i128::from(from.0)));
    push_opt(out, sender.map(|(_, sent)| i128::from(sent)));
    push_opt(out, e.term.map(i128::from));
    let _ = write!(out, "{},{}]", u8::from(e.leader), check);
}

fn push_opt(out: &mut String, value: Option<i128>) {
    match value {
        Some(v) => {
            let _ = write!(out, "{v},");
        }
        None => out.push_str("null,"),
    }
}

/// A JSON string that is safe inside an HTML `<script>` element: `<`, `>` and `&` are
/// written as `\u003c`-style escapes, so no `</script>` or `<!--` can appear.
pub(super) fn json_string(text: &str) -> String {
    let json = serde_json::to_string(text).expect("a string serializes");
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A JSON array of strings, each as [`json_string`].
pub(super) fn json_string_array(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| json_string(s)).collect();
    format!("[{}]", inner.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::{Broken, Invariant, NodeId};

    #[test]
    fn each_kinds_code_indexes_its_own_name() {
        let kinds = [
            EventKind::Start,
            EventKind::Workload,
            EventKind::Resume,
            EventKind::Crash,
            EventKind::Restart,
            EventKind::Resign,
            EventKind::ClockCaughtUp,
            EventKind::Quiet,
            EventKind::LivenessDeadline,
            EventKind::ServiceLeads,
            EventKind::ServiceFollows,
        ];
        for kind in kinds {
            assert_eq!(KINDS[kind_code(&kind)], kind.name());
        }
    }

    #[test]
    fn script_closing_tags_cannot_appear_in_an_embedded_string() {
        let s = json_string("</script><!-- & \"x\"");
        assert!(!s.contains('<'));
        assert!(!s.contains('>'));
        let back: String = serde_json::from_str(&s).unwrap();
        assert_eq!(back, "</script><!-- & \"x\"");
    }

    #[test]
    fn an_event_becomes_one_array_with_interned_strings() {
        let e = TraceEvent {
            t_ns: 5,
            node: Some(NodeId(1)),
            local_ns: Some(-3),
            kind: EventKind::Deliver {
                message: "Vote".into(),
                from: NodeId(2),
                sent_ns: 4,
            },
            term: Some(2),
            leader: true,
            broken: Broken::from(vec![Invariant::ElectionSafety]),
        };
        let mut strings = Strings::default();
        let mut out = String::new();
        push_event(&mut out, &e, &mut strings);
        assert_eq!(out, "[5,1,-3,1,1,2,4,2,1,2]");
        assert_eq!(strings.to_json(), "[\"\",\"Vote\",\"election_safety\"]");
    }
}
