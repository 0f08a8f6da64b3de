//! Per-event trace output (JSON Lines). Without a sink nothing is kept per event.

use std::io::Write;

/// Receives one trace line (without the newline) per event.
pub trait TraceSink {
    fn record(&mut self, line: &str);
    /// Flushes buffered output; returns an error message if writing failed.
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// Writes JSON Lines to any writer (a file, a buffer).
pub struct JsonLinesWriter<W: Write> {
    out: W,
    error: Option<String>,
}

impl<W: Write> JsonLinesWriter<W> {
    pub fn new(out: W) -> Self {
        Self { out, error: None }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> TraceSink for JsonLinesWriter<W> {
    fn record(&mut self, line: &str) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self
            .out
            .write_all(line.as_bytes())
            .and_then(|_| self.out.write_all(b"\n"))
        {
            self.error = Some(e.to_string());
        }
    }

    fn finish(&mut self) -> Result<(), String> {
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert(e.to_string());
        }
        self.error.clone().map_or(Ok(()), Err)
    }
}

/// Hashes the trace (64-bit FNV-1a) without keeping it: for determinism checks.
#[derive(Clone, Debug)]
pub struct TraceHasher {
    hash: u64,
    lines: u64,
}

impl Default for TraceHasher {
    fn default() -> Self {
        Self {
            hash: 0xcbf2_9ce4_8422_2325,
            lines: 0,
        }
    }
}

impl TraceHasher {
    /// The hash of everything recorded so far.
    pub fn hash(&self) -> u64 {
        self.hash
    }

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
    fn record(&mut self, line: &str) {
        self.eat(line.as_bytes());
        self.eat(b"\n");
        self.lines += 1;
    }
}

/// Sends every line to two sinks.
pub struct Tee<'a>(pub &'a mut dyn TraceSink, pub &'a mut dyn TraceSink);

impl TraceSink for Tee<'_> {
    fn record(&mut self, line: &str) {
        self.0.record(line);
        self.1.record(line);
    }

    fn finish(&mut self) -> Result<(), String> {
        self.0.finish().and(self.1.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hasher_tells_different_traces_apart() {
        let mut a = TraceHasher::default();
        let mut b = TraceHasher::default();
        a.record("x");
        b.record("y");
        assert_ne!(a.hash(), b.hash());
        let mut c = TraceHasher::default();
        c.record("x");
        assert_eq!(a.hash(), c.hash());
    }

    #[test]
    fn the_writer_adds_one_newline_per_line() {
        let mut w = JsonLinesWriter::new(Vec::new());
        w.record("{}");
        w.record("{}");
        w.finish().unwrap();
        assert_eq!(w.into_inner(), b"{}\n{}\n");
    }
}
