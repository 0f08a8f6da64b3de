//! The per-event trace: a stream of typed [`TraceEvent`]s handed to a [`TraceSink`] as the
//! engine handles them. JSON Lines ([`JsonLinesWriter`], columns in docs/trace-format.md)
//! is one rendering of the stream; [`TraceHasher`] hashes that rendering; a chart recorder
//! reads the typed events directly. Without a sink nothing is built per event.

mod event;
mod filter;
mod json;

pub use event::{Broken, EventKind, Name, TraceEvent, QUIET_WHAT};
pub use filter::{Filtered, Window};
pub use json::{parse_trace, parse_trace_line, write_json_line, TraceParseError};

use crate::report::{ElectionRecord, Failover};
use crate::time::Nanos;
use std::io::Write;

/// Receives the events of one run, in the order the engine handled them.
pub trait TraceSink {
    /// One event.
    fn record(&mut self, event: &TraceEvent);

    /// A step of the run's measurements, told as it happens (no trace line has it): lets a
    /// sink keep a window of the trace around a failover whose end is only known later.
    fn milestone(&mut self, _now_ns: Nanos, _milestone: Milestone<'_>) {}

    /// Flushes buffered output; returns the first write error, if writing failed.
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// The bytes this sink keeps in memory for the run (a page's events, a window of the
    /// trace), counted by the sink itself: the engine asks after each event it records and
    /// charges the answer to the run's `--max-memory` (docs/engine.md, "Memory charged per
    /// run"). It must depend only on what was recorded. The default, 0, is right for a
    /// sink that streams (a file, a hash) or keeps a bounded summary.
    fn held_bytes(&self) -> u64 {
        0
    }
}

/// A step of the failover and election measurements ([`crate::report`]), in the order of
/// [`crate::RunReport::failovers`] and [`crate::RunReport::elections`].
#[derive(Clone, Copy, Debug)]
pub enum Milestone<'a> {
    /// A fault struck the leader: the next failover of the report opened now (after the
    /// previous one closed).
    FailoverOpened,
    /// The open failover closed (recovered, superseded by the next strike, or left
    /// unresolved at the end of the run) as the report has it.
    FailoverClosed(&'a Failover),
    /// The first campaign (by a member that could win) since the last election ended: an
    /// election opened now.
    ElectionOpened,
    /// A claim decided the open election, as the report has it. An election still open at
    /// the end of the run, or abandoned (its campaigners all accepted a leader), gets no
    /// milestone.
    ElectionDecided(&'a ElectionRecord),
}

/// Writes the JSON Lines rendering of the trace to any writer (a file, a buffer).
pub struct JsonLinesWriter<W: Write> {
    out: W,
    line: String,
    error: Option<std::io::Error>,
}

impl<W: Write> JsonLinesWriter<W> {
    /// A writer to `out` (buffer it: every event is one small write).
    pub fn new(out: W) -> Self {
        Self {
            out,
            line: String::with_capacity(256),
            error: None,
        }
    }

    /// The writer, for a buffer's contents.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> TraceSink for JsonLinesWriter<W> {
    fn record(&mut self, event: &TraceEvent) {
        if self.error.is_some() {
            return;
        }
        self.line.clear();
        write_json_line(event, &mut self.line);
        self.line.push('\n');
        if let Err(e) = self.out.write_all(self.line.as_bytes()) {
            self.error = Some(e);
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert(e);
        }
        self.error.take().map_or(Ok(()), Err)
    }
}

/// Hashes the JSON Lines rendering of the trace (64-bit FNV-1a) without keeping it: for
/// determinism checks. The hash is that of the bytes `--trace` would write.
#[derive(Clone, Debug)]
pub struct TraceHasher {
    hash: u64,
    lines: u64,
    line: String,
}

impl Default for TraceHasher {
    fn default() -> Self {
        Self {
            hash: 0xcbf2_9ce4_8422_2325,
            lines: 0,
            line: String::with_capacity(256),
        }
    }
}

impl TraceHasher {
    /// The hash of everything recorded so far.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// How many events were recorded.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    fn eat(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.hash ^= u64::from(*b);
            self.hash = self.hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl TraceSink for TraceHasher {
    fn record(&mut self, event: &TraceEvent) {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        write_json_line(event, &mut line);
        line.push('\n');
        self.eat(line.as_bytes());
        self.line = line;
        self.lines += 1;
    }
}

/// Sends every event and milestone to two sinks.
pub struct Tee<'a>(pub &'a mut dyn TraceSink, pub &'a mut dyn TraceSink);

impl TraceSink for Tee<'_> {
    fn record(&mut self, event: &TraceEvent) {
        self.0.record(event);
        self.1.record(event);
    }

    fn milestone(&mut self, now_ns: Nanos, milestone: Milestone<'_>) {
        self.0.milestone(now_ns, milestone);
        self.1.milestone(now_ns, milestone);
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.0.finish().and(self.1.finish())
    }

    fn held_bytes(&self) -> u64 {
        self.0.held_bytes().saturating_add(self.1.held_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeId;

    fn crash(t_ns: Nanos) -> TraceEvent {
        TraceEvent {
            t_ns,
            node: Some(NodeId(1)),
            local_ns: Some(7),
            kind: EventKind::Crash,
            term: Some(2),
            leader: false,
            broken: Broken::default(),
        }
    }

    #[test]
    fn the_hasher_tells_different_traces_apart() {
        let mut a = TraceHasher::default();
        let mut b = TraceHasher::default();
        a.record(&crash(1));
        b.record(&crash(2));
        assert_ne!(a.hash(), b.hash());
        let mut c = TraceHasher::default();
        c.record(&crash(1));
        assert_eq!(a.hash(), c.hash());
    }

    #[test]
    fn the_hasher_hashes_the_bytes_the_writer_writes() {
        let mut w = JsonLinesWriter::new(Vec::new());
        let mut h = TraceHasher::default();
        for t in 0..3 {
            w.record(&crash(t));
            h.record(&crash(t));
        }
        let mut bytes = TraceHasher::default();
        bytes.eat(&w.into_inner());
        assert_eq!(h.hash(), bytes.hash());
        assert_eq!(h.lines(), 3);
    }

    #[test]
    fn the_writer_writes_one_documented_line_per_event() {
        let mut w = JsonLinesWriter::new(Vec::new());
        w.record(&crash(5));
        w.record(&crash(6));
        w.finish().unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        let line = r#"{"t":5,"node":1,"local":7,"ev":"crash","what":"","from":null,"sent":null,"term":2,"leader":false,"check":"ok"}"#;
        assert_eq!(text.lines().next(), Some(line));
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with("}\n"));
    }
}
