//! Reading `--trace` files (JSON Lines, columns in docs/trace-format.md) back into events, for
//! the sequence diagram.

use serde::Deserialize;

/// One line of a trace: one event as the engine handled it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct TraceEvent {
    /// True time in nanoseconds since the start of the run.
    pub t: u64,
    /// The process the event happened at; `None` for run-wide events (faults, heals).
    pub node: Option<u32>,
    /// That process's own clock in nanoseconds (may be negative after a backward jump).
    pub local: Option<i64>,
    /// The event kind: `deliver`, `timer`, `crash`, `write_accepted`, `fault`...
    pub ev: String,
    /// Message type, timer name, token or fault description, depending on `ev`.
    pub what: String,
    /// The sender, for message events and writes.
    pub from: Option<u32>,
    /// True time the message was sent.
    pub sent: Option<u64>,
    /// The process's term or epoch after the event.
    pub term: Option<u64>,
    /// Whether the process believes it leads after the event.
    pub leader: bool,
    /// `ok`, or the comma-separated invariants this event broke.
    pub check: String,
}

impl TraceEvent {
    /// Whether this event carries a message from `from` sent at `sent` to `node`.
    pub fn is_message(&self) -> bool {
        matches!(
            self.ev.as_str(),
            "deliver" | "held" | "drop" | "write_accepted" | "write_rejected"
        ) && self.from.is_some()
            && self.sent.is_some()
            && self.node.is_some()
    }

    /// Whether the checker found a broken invariant at this event.
    pub fn broke_invariant(&self) -> bool {
        self.check != "ok"
    }
}

/// A trace line that is not a trace event.
#[derive(Debug, thiserror::Error)]
#[error("trace line {line}: {message}")]
pub struct TraceParseError {
    /// 1-based line number (1 for a single line parsed alone).
    pub line: usize,
    pub message: String,
}

/// Parses one trace line (one JSON object).
pub fn parse_trace_line(line: &str) -> Result<TraceEvent, TraceParseError> {
    serde_json::from_str(line).map_err(|e| TraceParseError {
        line: 1,
        message: e.to_string(),
    })
}

/// Parses a whole trace file; blank lines are skipped.
pub fn parse_trace(text: &str) -> Result<Vec<TraceEvent>, TraceParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            parse_trace_line(l).map_err(|e| TraceParseError {
                line: i + 1,
                message: e.message,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_line_parses() {
        let line = r#"{"t":1274125533,"node":1,"local":1274125533,"ev":"deliver","what":"RequestVoteResp","from":2,"sent":1270005533,"term":2,"leader":true,"check":"election_safety"}"#;
        let e = parse_trace_line(line).unwrap();
        assert_eq!(e.t, 1_274_125_533);
        assert_eq!(
            (e.node, e.from, e.sent),
            (Some(1), Some(2), Some(1_270_005_533))
        );
        assert_eq!(e.what, "RequestVoteResp");
        assert!(e.is_message());
        assert!(e.broke_invariant());
    }

    #[test]
    fn run_wide_events_have_no_node() {
        let line = r#"{"t":5000000000,"node":null,"local":null,"ev":"fault","what":"crash n1 (leader)","from":null,"sent":null,"term":null,"leader":false,"check":"ok"}"#;
        let e = parse_trace_line(line).unwrap();
        assert_eq!(e.node, None);
        assert!(!e.is_message());
    }

    #[test]
    fn a_bad_line_names_its_line_number() {
        let text = "\n{\"t\":1}\n";
        let err = parse_trace(text).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().starts_with("trace line 2: "), "{err}");
    }
}
