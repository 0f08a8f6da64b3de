//! One node's OS process and the pipe to it: spawning it (in a process group of its own),
//! the `hello` handshake, one exchange per event (a line out, a line back within the
//! deadline), and the per-thread pool that keeps processes across the runs of a hunt (a
//! `--jobs` worker has its own). Its stderr is drained by [`StderrReader`].
//!
//! No clock is read here either: a node's deadline is counted in `poll(2)` timeouts of the
//! waits for its output (a node silent that long is hung), and the waits for a process to
//! exit are counted sleeps. Real time bounds the OS process; it never enters the simulation.

use super::names::{check_name, Declared};
use super::os;
use super::stderr::{Stderr, StderrReader};
use crate::text::shorten;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::ops::Range;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// The protocol version this simulator speaks (`hello` says it; a node answers with the
/// version it speaks, 1 or 2, and `init` says the one agreed).
pub const PROTOCOL_VERSION: u32 = 2;

/// The oldest protocol version a node may answer `hello` with.
const OLDEST_PROTOCOL_VERSION: u32 = 1;

/// The read buffer's size: most replies fit many times over.
const READ_BUFFER_BYTES: usize = 16 * 1024;

/// The longest reply line a node may write (a node writing without end is stopped here).
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// The least time a new process has to answer `hello`.
pub const START_DEADLINE: Duration = Duration::from_secs(60);

/// How long one wait for a node's output lasts before the node is looked at (has it exited,
/// leaving a process it started holding its stdout?): a slice of its deadline.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// What introduces a node's last stderr lines in an error.
pub(crate) const STDERR_WORDS: &str = "; its stderr ended with:";

/// What a node is told when it is silent past its deadline: the usual cause.
const FLUSH_HINT: &str = "if the node did answer, it did not flush its stdout: a node must \
                          flush after every line (docs/protocol.md, checklist)";

/// How a node's process is started, and what identifies it in the pool.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Launch {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Where its stderr goes.
    pub stderr: Stderr,
    /// The member id it runs as (a pool keeps one process per id).
    pub node: usize,
}

/// A running node process, the leader of its own process group.
pub(crate) struct NodeProc {
    child: Child,
    /// Taken only to close it, when the process is dropped.
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    /// Bytes read from stdout: `buf[start..end]` is not consumed yet. Read into directly
    /// (no copy), grown only for a line longer than it.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Its stderr's reader, unless its stderr is passed through (`Stderr::Show`).
    stderr: Option<StderrReader>,
    /// What the node declared in `hello_ok`.
    pub declared: Declared,
    /// Set while an exchange is under way: a process dropped then is out of step.
    in_exchange: bool,
}

impl NodeProc {
    /// Starts `launch` and does the `hello` handshake within `deadline`, or within
    /// [`START_DEADLINE`] if that is longer (an interpreter or a JVM may take a while to
    /// start on a busy machine).
    pub fn spawn(launch: &Launch, deadline: Duration) -> Result<NodeProc, String> {
        let deadline = deadline.max(START_DEADLINE);
        let (program, args) = launch
            .command
            .split_first()
            .ok_or_else(|| "the command is empty".to_string())?;
        let stderr = if launch.stderr == Stderr::Show {
            Stdio::inherit()
        } else {
            Stdio::piped()
        };
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = os::own_group(&mut command)
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", shorten(&launch.command.join(" "))))?;
        let stderr = child
            .stderr
            .take()
            .map(|pipe| StderrReader::start(pipe, launch.stderr == Stderr::Trace));
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("stdin and stdout are piped");
        };
        let mut proc = NodeProc {
            child,
            stdin: Some(stdin),
            stdout,
            buf: vec![0; READ_BUFFER_BYTES],
            start: 0,
            end: 0,
            stderr,
            declared: Declared::default(),
            in_exchange: false,
        };
        let hello = format!("{{\"type\":\"hello\",\"protocol\":{PROTOCOL_VERSION}}}\n");
        let line = proc.exchange(hello.as_bytes(), deadline)?;
        let declared = parse_hello(proc.reply(line))?;
        proc.declared = declared;
        Ok(proc)
    }

    /// Sends one event line (ending in `\n`) and returns where the node's one reply line
    /// (without its `\n`) is: [`NodeProc::reply`] gives it, until the next exchange. Waits at
    /// most `deadline` of real time for the node's output.
    ///
    /// A line the node wrote out of turn, already read: under protocol version 1 an error
    /// here; under version 2 it is taken as this event's reply, whose step then tells.
    pub fn exchange(&mut self, event: &[u8], deadline: Duration) -> Result<Range<usize>, String> {
        self.in_exchange = true;
        let echoes_steps = self.declared.echoes_steps();
        if self.start < self.end && !echoes_steps {
            let extra = String::from_utf8_lossy(&self.buf[self.start..self.end]).into_owned();
            return Err(format!(
                "the node wrote more than one line for its last event; the extra: `{}`",
                shorten(extra.trim_end())
            ));
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("its stdin is closed".to_string());
        };
        if let Err(e) = stdin.write_all(event).and_then(|()| stdin.flush()) {
            return Err(self.gone(&format!("cannot write to its stdin ({e})")));
        }
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        let line = self.read_line(deadline)?;
        self.in_exchange = false;
        Ok(line)
    }

    /// The reply line an exchange returned.
    pub fn reply(&self, line: Range<usize>) -> &[u8] {
        &self.buf[line]
    }

    /// Reads up to the next `\n` into the buffer, polling the pipe so that a node silent
    /// for `deadline` cannot hang the run (nor one that exited while a process it started
    /// holds its stdout open), and refusing a line past [`MAX_REPLY_BYTES`] (so a node
    /// writing without end cannot either).
    fn read_line(&mut self, deadline: Duration) -> Result<Range<usize>, String> {
        let mut silent = Duration::ZERO;
        loop {
            if let Some(pos) = self.buf[self.start..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                let line = self.start..self.start + pos;
                self.start = line.end + 1;
                return Ok(line);
            }
            self.make_room()?;
            if silent >= deadline {
                os::kill_group(&mut self.child);
                return Err(format!(
                    "no answer within the deadline of {} (the process was killed; {FLUSH_HINT}){}",
                    splitbrain_sim::time::format_duration(
                        u64::try_from(deadline.as_nanos()).unwrap_or(u64::MAX)
                    ),
                    self.tail_words()
                ));
            }
            let slice = WAIT_SLICE.min(deadline - silent);
            if !os::wait_readable(&self.stdout, slice) {
                silent += slice;
                if os::exits_within(&mut self.child, 1, Duration::ZERO) {
                    return Err(self.gone(
                        "it exited without answering, while a process it started kept its \
                         stdout open",
                    ));
                }
                continue;
            }
            silent = Duration::ZERO;
            match self.stdout.read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(self.gone("it closed its stdout")),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.gone(&format!("cannot read its stdout ({e})"))),
            }
        }
    }

    /// Room in the buffer for more of a line: what was consumed moved out, the buffer grown
    /// for a line longer than it, up to [`MAX_REPLY_BYTES`].
    fn make_room(&mut self) -> Result<(), String> {
        if self.end < self.buf.len() {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
            return Ok(());
        }
        if self.buf.len() >= MAX_REPLY_BYTES {
            os::kill_group(&mut self.child);
            return Err(format!(
                "its reply is longer than {MAX_REPLY_BYTES} bytes without a line end (the process was killed)"
            ));
        }
        self.buf.resize(self.buf.len() * 2, 0);
        Ok(())
    }

    /// The words for a process that went away: how it ended, and its last stderr lines.
    /// Whatever it started is killed with it.
    fn gone(&mut self, what: &str) -> String {
        let exited = os::exits_within(&mut self.child, 200, Duration::from_millis(5));
        os::kill_group(&mut self.child);
        let status = match (exited, self.child.wait()) {
            (true, Ok(status)) => describe_exit(status),
            _ => "did not exit (it was killed)".to_string(),
        };
        format!("{what}: the process {status}{}", self.tail_words())
    }

    /// `; its stderr ended with:\n  ...`, or nothing.
    fn tail_words(&mut self) -> String {
        let lines = self
            .stderr
            .as_ref()
            .map(StderrReader::last_lines)
            .unwrap_or_default();
        if lines.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = lines.iter().map(|l| shorten(l)).collect();
        format!("{STDERR_WORDS}\n    {}", lines.join("\n    "))
    }

    /// The stderr lines written since the last reply, when they go to the trace.
    pub fn take_log_lines(&mut self) -> Vec<String> {
        self.stderr
            .as_ref()
            .map(StderrReader::take_lines)
            .unwrap_or_default()
    }

    /// Whether the process can be used for another run.
    fn is_in_step(&self) -> bool {
        !self.in_exchange && self.start == self.end
    }
}

impl Drop for NodeProc {
    /// Closes the node's stdin (a node ends at end of input), gives it a moment to exit, and
    /// kills its process group: what it started goes with it.
    fn drop(&mut self) {
        drop(self.stdin.take());
        os::exits_within(&mut self.child, 100, Duration::from_millis(2));
        os::kill_group(&mut self.child);
        let _ = self.child.wait();
    }
}

/// `hello_ok`'s declared names and protocol version, checked.
fn parse_hello(line: &[u8]) -> Result<Declared, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct HelloOk {
        #[serde(rename = "type")]
        kind: String,
        protocol: u32,
        messages: Vec<String>,
        timers: Vec<String>,
    }
    let text = String::from_utf8_lossy(line);
    let hello: HelloOk = serde_json::from_str(&text).map_err(|e| {
        format!(
            "its answer to `hello` is not a `hello_ok` line ({}): `{}`",
            shorten(&e.to_string()),
            shorten(&text)
        )
    })?;
    if hello.kind != "hello_ok" {
        return Err(format!(
            "it answered `hello` with type `{}`, not `hello_ok`",
            shorten(&hello.kind)
        ));
    }
    if !(OLDEST_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&hello.protocol) {
        return Err(format!(
            "it speaks protocol version {}; this splitbrain speaks versions \
             {OLDEST_PROTOCOL_VERSION} to {PROTOCOL_VERSION}",
            hello.protocol
        ));
    }
    for name in hello.messages.iter().chain(&hello.timers) {
        check_name(name)?;
    }
    Ok(Declared {
        protocol: hello.protocol,
        messages: hello.messages,
        timers: hello.timers,
    })
}

/// `exited with status 1` or `was killed by signal 9`.
fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "exited".to_string(),
    }
}

thread_local! {
    /// Processes idle between runs on this thread, by how they were launched.
    static POOL: RefCell<BTreeMap<Launch, NodeProc>> = const { RefCell::new(BTreeMap::new()) };
}

/// A process for `launch`: the idle one this thread kept, or a new one.
pub(crate) fn take(launch: &Launch, deadline: Duration) -> Result<NodeProc, String> {
    let idle = POOL.with(|pool| pool.borrow_mut().remove(launch));
    match idle {
        Some(proc) => Ok(proc),
        None => NodeProc::spawn(launch, deadline),
    }
}

/// Keeps `proc` for the next run on this thread, if it is in step (else it is killed).
pub(crate) fn give_back(launch: Launch, proc: NodeProc) {
    if proc.is_in_step() {
        // During thread teardown the pool may be gone: the process is then dropped (killed).
        let _ = POOL.try_with(|pool| pool.borrow_mut().insert(launch, proc));
    }
}

/// Ends every idle process this thread keeps, so that the next runs start new ones.
pub fn end_idle_processes() {
    POOL.with(|pool| pool.borrow_mut().clear());
}
