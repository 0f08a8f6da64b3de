//! A node's stderr, drained by a thread of its own for as long as the process lives: a node
//! that logs much while it handles one event never blocks on a full pipe, whatever its
//! `stderr` setting.
//!
//! The pipe is read only under the reader's lock, by that thread and by the exchange right
//! after each reply. Every byte the node wrote before its reply is therefore either already
//! kept or still in the pipe when the reply is read, and the lines of a step are a function
//! of the node's inputs (the trace stays deterministic), however the thread was scheduled.
//! What is kept is bounded: the last lines for error messages, each line cut at
//! [`LINE_BYTES`], and at most [`STEP_BYTES`] of lines per step for the trace.

use super::os;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::Read;
use std::process::ChildStderr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Where a node's stderr (its log) goes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Stderr {
    /// Kept: its last lines are quoted when the node fails.
    #[default]
    Keep,
    /// Passed through to splitbrain's own stderr as the node writes it.
    Show,
    /// Put in the trace as `log` events, each line at the step whose reply followed it
    /// (what the node writes before it answers an event belongs to that event); and quoted
    /// when the node fails.
    Trace,
}

/// How many of a node's last stderr lines an error quotes.
const TAIL_LINES: usize = 12;

/// The longest stderr line kept; the rest of it is counted, not kept.
const LINE_BYTES: usize = 4 * 1024;

/// The most stderr one step puts into the trace; the rest is counted, not kept.
const STEP_BYTES: usize = 1 << 20;

/// The reader of one node's stderr.
pub(crate) struct StderrReader {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    closed: Condvar,
}

struct State {
    pipe: ChildStderr,
    /// Whether the lines go to the trace (`Stderr::Trace`), not only to errors.
    traced: bool,
    /// The bytes of a line not ended yet (at most [`LINE_BYTES`]), and how many were cut.
    partial: Vec<u8>,
    cut_bytes: usize,
    /// Lines for the trace since the last step, their size, and what did not fit.
    pending: Vec<String>,
    pending_bytes: usize,
    dropped_bytes: u64,
    /// The last lines, for errors.
    tail: VecDeque<String>,
    /// Whether the pipe closed (every process holding it ended).
    closed: bool,
}

impl StderrReader {
    /// Starts draining `pipe`; `traced` keeps each step's lines for the trace.
    pub fn start(pipe: ChildStderr, traced: bool) -> StderrReader {
        os::set_nonblocking(&pipe);
        #[cfg(unix)]
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&pipe);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                pipe,
                traced,
                partial: Vec::new(),
                cut_bytes: 0,
                pending: Vec::new(),
                pending_bytes: 0,
                dropped_bytes: 0,
                tail: VecDeque::new(),
                closed: false,
            }),
            closed: Condvar::new(),
        });
        let drained = Arc::clone(&shared);
        std::thread::spawn(move || loop {
            #[cfg(unix)]
            os::wait_readable(&fd, Duration::from_secs(3600));
            #[cfg(not(unix))]
            std::thread::sleep(Duration::from_millis(10));
            let mut state = drained.lock();
            state.drain();
            if state.closed {
                drop(state);
                drained.closed.notify_all();
                return;
            }
        });
        StderrReader { shared }
    }

    /// The complete lines written since the last call, for the trace (none unless traced):
    /// called right after a reply, they are the lines the node wrote while handling it.
    pub fn take_lines(&self) -> Vec<String> {
        let mut state = self.shared.lock();
        state.drain();
        let mut lines = std::mem::take(&mut state.pending);
        if state.dropped_bytes > 0 {
            lines.push(format!(
                "[splitbrain: {} more bytes of stderr at this step were not kept (at most {STEP_BYTES} per step)]",
                state.dropped_bytes
            ));
        }
        state.pending_bytes = 0;
        state.dropped_bytes = 0;
        lines
    }

    /// The last lines, once the pipe closed (the process ended) or half a second passed.
    pub fn last_lines(&self) -> Vec<String> {
        let state = self.shared.lock();
        let (mut state, _) = self
            .shared
            .closed
            .wait_timeout_while(state, Duration::from_millis(500), |s| !s.closed)
            .unwrap_or_else(|e| e.into_inner());
        state.drain();
        state.tail.iter().cloned().collect()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    /// Reads what the pipe holds, without blocking.
    fn drain(&mut self) {
        if self.closed || cfg!(not(unix)) {
            return;
        }
        let mut chunk = [0u8; 8192];
        loop {
            match self.pipe.read(&mut chunk) {
                Ok(0) => {
                    self.closed = true;
                    return;
                }
                Ok(n) => self.absorb(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return, // WouldBlock: nothing more for now.
            }
        }
    }

    /// Splits `bytes` into lines, keeping what the bounds allow.
    fn absorb(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.extend_partial(&rest[..end]);
            self.end_line();
            rest = &rest[end + 1..];
        }
        self.extend_partial(rest);
    }

    fn extend_partial(&mut self, bytes: &[u8]) {
        let room = LINE_BYTES
            .saturating_sub(self.partial.len())
            .min(bytes.len());
        self.partial.extend_from_slice(&bytes[..room]);
        self.cut_bytes += bytes.len() - room;
    }

    fn end_line(&mut self) {
        let mut line = String::from_utf8_lossy(&self.partial).into_owned();
        if self.cut_bytes > 0 {
            line.push_str(&format!("... ({} more bytes)", self.cut_bytes));
        }
        self.partial.clear();
        self.cut_bytes = 0;
        if self.traced {
            if self.pending_bytes + line.len() <= STEP_BYTES {
                self.pending_bytes += line.len();
                self.pending.push(line.clone());
            } else {
                self.dropped_bytes += line.len() as u64 + 1;
            }
        }
        if self.tail.len() == TAIL_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }
}
