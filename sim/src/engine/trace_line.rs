//! Formatting trace lines (JSON Lines; columns in docs/trace-format.md). Only called when a
//! trace sink is attached, so an untraced run pays nothing.

use super::Sim;
use crate::ids::NodeId;
use crate::process::Process;
use crate::time::Nanos;
use std::fmt::Write;

impl<'t, P: Process> Sim<'t, P> {
    /// A line about something that happened at `node`.
    pub(super) fn trace_node(
        &mut self,
        node: NodeId,
        ev: &str,
        what: &str,
        from: Option<(NodeId, Nanos)>,
    ) {
        if self.trace.is_none() {
            return;
        }
        let (local, term) = match self.processes.get(node.index()) {
            Some(p) => (
                Some(self.nodes[node.index()].clock.local_at(self.now)),
                Some(p.term()),
            ),
            None => (None, None),
        };
        let leads = self.leadership.believes(node);
        self.emit(Some(node), local, ev, what, from, term, leads);
    }

    /// A line about the resource receiving a write from `from`.
    pub(super) fn trace_write(&mut self, from: NodeId, sent_ns: Nanos, ev: &str, token: u64) {
        if self.trace.is_none() {
            return;
        }
        let what = token.to_string();
        let resource = self.resource_id;
        self.emit(
            Some(resource),
            None,
            ev,
            &what,
            Some((from, sent_ns)),
            None,
            false,
        );
    }

    /// A line about the whole run (faults, heals, liveness).
    pub(super) fn trace_global(&mut self, ev: &str, what: &str) {
        if self.trace.is_none() {
            return;
        }
        self.emit(None, None, ev, what, None, None, false);
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        node: Option<NodeId>,
        local: Option<i64>,
        ev: &str,
        what: &str,
        from: Option<(NodeId, Nanos)>,
        term: Option<u64>,
        leads: bool,
    ) {
        let line = &mut self.trace_line;
        line.clear();
        let _ = write!(line, "{{\"t\":{},\"node\":", self.now);
        push_opt(line, node.map(|n| u64::from(n.0)));
        line.push_str(",\"local\":");
        match local {
            Some(l) => {
                let _ = write!(line, "{l}");
            }
            None => line.push_str("null"),
        }
        let _ = write!(line, ",\"ev\":\"{ev}\",\"what\":");
        push_json_string(line, what);
        line.push_str(",\"from\":");
        push_opt(line, from.map(|(n, _)| u64::from(n.0)));
        line.push_str(",\"sent\":");
        push_opt(line, from.map(|(_, sent)| sent));
        line.push_str(",\"term\":");
        push_opt(line, term);
        let _ = write!(line, ",\"leader\":{leads},\"check\":\"");
        if self.flagged.is_empty() {
            line.push_str("ok");
        } else {
            let names: Vec<&str> = self.flagged.iter().map(|i| i.name()).collect();
            line.push_str(&names.join(","));
            self.flagged.clear();
        }
        line.push_str("\"}");
        if let Some(trace) = self.trace.as_mut() {
            trace.record(&self.trace_line);
        }
    }
}

fn push_opt(line: &mut String, value: Option<u64>) {
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
