//! One node's OS process and the pipe to it: spawning it, the `hello` handshake, one
//! exchange per event (a line out, a line back within the deadline), the tail of its stderr
//! for error messages, and the per-thread pool that keeps processes across the runs of a
//! hunt (a `--jobs` worker has its own).
//!
//! No clock is read here either: a node's deadline is the `poll(2)` timeout of each wait
//! for its output (a node silent that long is hung), and the waits for a process to exit are
//! counted sleeps. Real time bounds the OS process; it never enters the simulation.

use super::names::{check_name, Declared};
use super::settings::Stderr;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::ops::Range;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The protocol version this simulator speaks (`hello` and `init` say it).
pub const PROTOCOL_VERSION: u32 = 1;

/// The read buffer's size: most replies fit many times over.
const READ_BUFFER_BYTES: usize = 16 * 1024;

/// The longest reply line a node may write (a node writing without end is stopped here).
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// The least time a new process has to answer `hello`.
pub const START_DEADLINE: Duration = Duration::from_secs(60);

/// What introduces a node's last stderr lines in an error.
pub(crate) const STDERR_WORDS: &str = "; its stderr ended with:";

/// How many of a node's last stderr lines an error quotes.
const STDERR_TAIL_LINES: usize = 12;

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

/// A running node process.
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
    /// Where its stderr goes: passed through, kept by a thread, or read after each reply.
    stderr: StderrSink,
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
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", launch.command.join(" ")))?;
        let stderr = match (launch.stderr, child.stderr.take()) {
            (Stderr::Keep, Some(pipe)) => {
                let tail = Arc::new(StderrTail::default());
                keep_tail(pipe, Arc::clone(&tail));
                StderrSink::Tail(tail)
            }
            (Stderr::Trace, Some(pipe)) => StderrSink::Traced(TracedStderr::new(pipe)),
            _ => StderrSink::Passed,
        };
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
    /// most `deadline` of real time.
    pub fn exchange(&mut self, event: &[u8], deadline: Duration) -> Result<Range<usize>, String> {
        self.in_exchange = true;
        if self.start < self.end {
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
        (self.start, self.end) = (0, 0);
        let line = self.read_line(deadline)?;
        self.in_exchange = false;
        Ok(line)
    }

    /// The reply line an exchange returned.
    pub fn reply(&self, line: Range<usize>) -> &[u8] {
        &self.buf[line]
    }

    /// Reads up to the next `\n` into the buffer, polling the pipe so that a node silent
    /// for `deadline` cannot hang the run, and refusing a line past [`MAX_REPLY_BYTES`] (so a
    /// node writing without end cannot either); the buffer was emptied by the exchange.
    fn read_line(&mut self, deadline: Duration) -> Result<Range<usize>, String> {
        loop {
            if let Some(pos) = self.buf[self.start..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                let line = self.start..self.start + pos;
                self.start = line.end + 1;
                return Ok(line);
            }
            if self.end == self.buf.len() {
                if self.buf.len() >= MAX_REPLY_BYTES {
                    let _ = self.child.kill();
                    return Err(format!(
                        "its reply is longer than {MAX_REPLY_BYTES} bytes without a line end (the process was killed)"
                    ));
                }
                self.buf.resize(self.buf.len() * 2, 0); // a line longer than the buffer
            }
            if !wait_readable(&self.stdout, deadline) {
                let _ = self.child.kill();
                return Err(format!(
                    "no answer within the deadline of {} (the process was killed){}",
                    splitbrain_sim::time::format_duration(
                        u64::try_from(deadline.as_nanos()).unwrap_or(u64::MAX)
                    ),
                    self.tail_words()
                ));
            }
            match self.stdout.read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(self.gone("it closed its stdout")),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.gone(&format!("cannot read its stdout ({e})"))),
            }
        }
    }

    /// The words for a process that went away: how it ended, and its last stderr lines.
    fn gone(&mut self, what: &str) -> String {
        let status = wait_briefly(&mut self.child);
        format!("{what}: the process {status}{}", self.tail_words())
    }

    /// `; its stderr ended with:\n  ...`, or nothing.
    fn tail_words(&mut self) -> String {
        let lines = match &mut self.stderr {
            StderrSink::Passed => Vec::new(),
            StderrSink::Tail(tail) => tail.last_lines(),
            StderrSink::Traced(traced) => traced.last_lines(),
        };
        if lines.is_empty() {
            return String::new();
        }
        format!("{STDERR_WORDS}\n    {}", lines.join("\n    "))
    }

    /// The stderr lines written since the last reply, when they go to the trace.
    pub fn take_log_lines(&mut self) -> Vec<String> {
        match &mut self.stderr {
            StderrSink::Traced(traced) => traced.take_lines(),
            _ => Vec::new(),
        }
    }

    /// Whether the process can be used for another run.
    fn is_in_step(&self) -> bool {
        !self.in_exchange && self.start == self.end
    }
}

impl Drop for NodeProc {
    /// Closes the node's stdin (a node ends at end of input) and gives it a moment to exit
    /// before killing it.
    fn drop(&mut self) {
        drop(self.stdin.take());
        if exit_status(&mut self.child, 100, Duration::from_millis(2)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `hello_ok`'s declared names, checked.
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
            "its answer to `hello` is not a `hello_ok` line ({e}): `{}`",
            shorten(&text)
        )
    })?;
    if hello.kind != "hello_ok" {
        return Err(format!(
            "it answered `hello` with type `{}`, not `hello_ok`",
            hello.kind
        ));
    }
    if hello.protocol != PROTOCOL_VERSION {
        return Err(format!(
            "it speaks protocol version {}; this splitbrain speaks version {PROTOCOL_VERSION}",
            hello.protocol
        ));
    }
    for name in hello.messages.iter().chain(&hello.timers) {
        check_name(name)?;
    }
    Ok(Declared {
        messages: hello.messages,
        timers: hello.timers,
    })
}

/// `text`, cut to a readable length for an error message.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 300;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}

/// Where a process's stderr goes.
enum StderrSink {
    /// Straight to splitbrain's stderr (`Stderr::Show`).
    Passed,
    /// Its last lines kept by a thread of its own (`Stderr::Keep`).
    Tail(Arc<StderrTail>),
    /// Read after each reply, for the trace (`Stderr::Trace`).
    Traced(TracedStderr),
}

/// A stderr pipe read without blocking, right after each reply: everything the node wrote
/// to it before it wrote the reply is there by then (the pipe's bytes are in order in
/// time), so the lines of a step are a function of the node's inputs.
struct TracedStderr {
    pipe: std::process::ChildStderr,
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// The last lines, for errors.
    tail: VecDeque<String>,
}

impl TracedStderr {
    fn new(pipe: std::process::ChildStderr) -> Self {
        set_nonblocking(&pipe);
        Self {
            pipe,
            partial: Vec::new(),
            tail: VecDeque::new(),
        }
    }

    /// The complete lines written since the last call.
    fn take_lines(&mut self) -> Vec<String> {
        if cfg!(not(unix)) {
            return Vec::new(); // The pipe would block.
        }
        let mut chunk = [0u8; 4096];
        loop {
            match self.pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => self.partial.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break, // WouldBlock: nothing more for now.
            }
        }
        let mut lines = Vec::new();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(&self.partial[..end]).into_owned();
            self.partial.drain(..=end);
            if self.tail.len() == STDERR_TAIL_LINES {
                self.tail.pop_front();
            }
            self.tail.push_back(line.clone());
            lines.push(line);
        }
        lines
    }

    /// The last lines, once what is in the pipe is read.
    fn last_lines(&mut self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(50));
        self.take_lines();
        self.tail.iter().cloned().collect()
    }
}

#[cfg(unix)]
fn set_nonblocking(pipe: &std::process::ChildStderr) {
    use std::os::unix::io::AsRawFd;
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a file descriptor this process owns, flags read then extended.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Without `fcntl`, a traced stderr would block: it is read only when the node fails.
#[cfg(not(unix))]
fn set_nonblocking(_pipe: &std::process::ChildStderr) {}

/// The last lines a process wrote to its stderr, and whether the pipe closed.
#[derive(Default)]
struct StderrTail {
    state: Mutex<(VecDeque<String>, bool)>,
    closed: Condvar,
}

impl StderrTail {
    /// The lines kept, once the pipe closed (the process ended) or half a second passed.
    fn last_lines(&self) -> Vec<String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (state, _) = self
            .closed
            .wait_timeout_while(state, Duration::from_millis(500), |(_, closed)| !*closed)
            .unwrap_or_else(|e| e.into_inner());
        state.0.iter().cloned().collect()
    }
}

/// Keeps the last lines of `stderr` in `tail`, on a thread of its own until the pipe closes.
fn keep_tail(stderr: std::process::ChildStderr, tail: Arc<StderrTail>) {
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let mut state = tail.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.0.len() == STDERR_TAIL_LINES {
                state.0.pop_front();
            }
            state.0.push_back(line);
        }
        tail.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        tail.closed.notify_all();
    });
}

/// `exited with status 1` or `was killed by signal 9` within about a second, else `did not
/// exit (it was killed)`.
fn wait_briefly(child: &mut Child) -> String {
    match exit_status(child, 200, Duration::from_millis(5)) {
        Some(status) => describe_exit(status),
        None => {
            let _ = child.kill();
            "did not exit (it was killed)".to_string()
        }
    }
}

/// `child`'s exit status, asked `tries` times `pause` apart (no clock is read).
fn exit_status(child: &mut Child, tries: u32, pause: Duration) -> Option<std::process::ExitStatus> {
    for _ in 0..tries {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => std::thread::sleep(pause),
            Err(_) => return None,
        }
    }
    None
}

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

/// Whether `stdout` has something to read (or is closed) within `wait` (a signal that
/// interrupts the wait starts it again: a deadline only ever grows a little).
#[cfg(unix)]
fn wait_readable(stdout: &ChildStdout, wait: Duration) -> bool {
    use std::os::unix::io::AsRawFd;
    let mut fd = libc::pollfd {
        fd: stdout.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(wait.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    loop {
        // SAFETY: one valid pollfd, for the length given.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        if ready >= 0 {
            return ready > 0;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// Without `poll`, a read simply blocks: the deadline is not enforced.
#[cfg(not(unix))]
fn wait_readable(_stdout: &ChildStdout, _wait: Duration) -> bool {
    true
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
