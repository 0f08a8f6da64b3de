//! Issue 43, points 9 to 11, end to end through the binary: settings a service's form would
//! ignore are refused where they are written; a hunt's `--jsonl` on a FIFO and a signal
//! before its seed loop never leave it hanging; a scenario that starts programs says which,
//! before starting them, and `check` finds a program that cannot be started.

use crate::common;

use common::{assert_no_panic, scenario_file, scratch, splitbrain, stderr};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

/// Point 9: each setting that its form would ignore fails `check` with exit 2, at its line
/// and column, with a hint; before, each passed and ran as if it were not written.
#[test]
fn check_refuses_settings_a_service_would_ignore_at_their_place() {
    let cases = [
        (
            "k8s-client-rules",
            "Scenario(\n    nodes: 3,\n    algorithm: ExternalClient(\n        command: [\"python3\", \"tests/fixtures/external/etcd_client.py\"],\n        service: K8sLease(rules: Strict),\n    ),\n)\n",
            ":5:34: the service's `rules` is a setting of its built-in client",
        ),
        (
            "zk-init-limit",
            "Scenario(\n    nodes: 3,\n    algorithm: ZooKeeper(init_limit: 20),\n)\n",
            ":3:38: `init_limit` is a setting of a ZooKeeper ensemble",
        ),
        (
            "etcd-version",
            "Scenario(\n    nodes: 3,\n    algorithm: Etcd(version: \"3.5\"),\n)\n",
            ":3:30: `version` is a setting of an etcd cluster",
        ),
    ];
    for (name, text, expected) in cases {
        let path = scenario_file(name, text);
        let output = splitbrain(["check", path.to_str().expect("a UTF-8 path")]);
        assert_no_panic(&output);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}.ron{expected}")),
            "{name}: {err}"
        );
        assert!(err.contains("hint: "), "{name}: {err}");
    }
}

/// Waits for `child` about `seconds` at most (a guard so that a hang fails the test instead
/// of hanging it; no timing is asserted); a child still running then is killed, and `None`.
fn wait_at_most(child: &mut Child, seconds: u64) -> Option<ExitStatus> {
    for _ in 0..seconds * 50 {
        if let Some(status) = child.try_wait().expect("wait for the hunt") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// What `child` wrote on its piped stderr.
fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut text);
    }
    text
}

/// A new FIFO `name` in a scratch folder.
#[track_caller]
fn fifo(name: &str) -> PathBuf {
    let path = scratch(name).join("records.jsonl");
    let c_path = CString::new(path.as_os_str().as_bytes()).expect("no NUL in the path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    path
}

/// Sets or clears `O_NONBLOCK` on `fd`.
fn set_nonblocking(fd: &OwnedFd, on: bool) {
    // SAFETY: `fd` is open; F_GETFL and F_SETFL take no pointer.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        let flags = if on {
            flags | libc::O_NONBLOCK
        } else {
            flags & !libc::O_NONBLOCK
        };
        assert_eq!(libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags), 0);
    }
}

/// A pipe whose buffer is full: a write to `.1` blocks until `.0` is read.
fn full_pipe() -> (File, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 just opened both, and nothing else owns them.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    set_nonblocking(&write, true);
    let mut writer = File::from(write);
    let chunk = [b'x'; 4096];
    loop {
        match writer.write(&chunk) {
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => panic!("filling the pipe: {e}"),
        }
    }
    let write = OwnedFd::from(writer);
    set_nonblocking(&write, false);
    (File::from(read), write)
}

/// Point 10: `--jsonl` on a FIFO that nobody reads waited in `open` before the first seed,
/// for ever. It is refused at once, exit 2, with what to do.
#[test]
fn a_jsonl_fifo_nobody_reads_is_refused_at_once() {
    let path = fifo("fifo-no-reader");
    let mut child = Command::new(common::bin())
        .args([
            "hunt",
            "scenarios/raft-nemesis.ron",
            "--seeds",
            "3",
            "--no-shrink",
        ])
        .arg("--jsonl")
        .arg(&path)
        .current_dir(common::repo_root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the hunt");
    let status = wait_at_most(&mut child, 20);
    let err = stderr_of(&mut child);
    let status = status.unwrap_or_else(|| panic!("the hunt waited for a reader: {err}"));
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("named pipe (FIFO) that nobody is reading"),
        "{err}"
    );
    assert!(err.contains("hint: start its reader first"), "{err}");
}

/// A FIFO with a reader is still written through, header to end line, and its writes block
/// again (not `O_NONBLOCK`): what a slow reader has not read yet is not lost.
#[test]
fn a_jsonl_fifo_with_a_reader_gets_every_record() {
    let path = fifo("fifo-reader");
    // Open for reading first, without waiting for the writer, as `cat FIFO &` would be.
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .expect("open the FIFO to read");
    let reading = std::thread::spawn(move || {
        let fd = OwnedFd::from(reader);
        set_nonblocking(&fd, false);
        let mut text = String::new();
        let mut reader = File::from(fd);
        // Reads to the writer's close: until then a read waits.
        let mut chunk = [0u8; 4096];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) if text.contains("{\"end\"") => break,
                Ok(0) => std::thread::sleep(Duration::from_millis(10)),
                Ok(n) => text.push_str(std::str::from_utf8(&chunk[..n]).expect("UTF-8")),
                Err(e) => panic!("reading the FIFO: {e}"),
            }
        }
        text
    });
    let output = splitbrain([
        "hunt",
        "scenarios/raft-nemesis.ron",
        "--seeds",
        "3",
        "--no-shrink",
        "--jsonl",
        path.to_str().expect("a UTF-8 path"),
    ]);
    assert_no_panic(&output);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        stderr(&output)
    );
    let text = reading.join().expect("the reader ends");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "header, 3 records, end: {text}");
    assert!(lines[0].starts_with("{\"hunt\""), "{text}");
    assert!(lines[4].starts_with("{\"end\""), "{text}");
}

/// Point 10: a signal before the seed loop was only noted, for the loop to read, and a hunt
/// blocked before it (here writing its first line to a full stdout pipe; before, opening a
/// FIFO) kept waiting. The first signal before the loop now ends the process at once, with
/// 128 + its number.
#[test]
fn a_signal_before_the_seed_loop_ends_the_hunt_at_once() {
    let (read_end, write_end) = full_pipe();
    let mut child = Command::new(common::bin())
        .args([
            "hunt",
            "scenarios/raft-nemesis.ron",
            "--seeds",
            "1000",
            "--no-shrink",
        ])
        .current_dir(common::repo_root())
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the hunt");
    // Let it reach the write of its first line ("seeds 1..=1000, ..."), where it blocks. A
    // signal that comes earlier must end it just the same.
    std::thread::sleep(Duration::from_millis(500));
    let pid = i32::try_from(child.id()).expect("a pid");
    // SAFETY: sends a signal to our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = wait_at_most(&mut child, 10);
    drop(read_end);
    let err = stderr_of(&mut child);
    let status = status.unwrap_or_else(|| panic!("SIGTERM did not end the hunt: {err}"));
    assert_eq!(status.code(), Some(143), "{status:?}: {err}");
}

/// A scenario whose nodes run `sh -c SCRIPT`, the script then `exec`ing the fixture node in
/// `mode`; written as `name.ron`. Returns the file and the command as written.
#[track_caller]
fn shell_node_scenario(
    name: &str,
    script: &str,
    mode: &str,
    extra: &str,
) -> (PathBuf, Vec<String>) {
    let script = format!("{script}; exec python3 tests/fixtures/external/node.py {mode}");
    let text = format!(
        "Scenario(\n    name: \"{name}\",\n    duration: \"1s\",\n    nodes: 3,\n    algorithm: External(command: [\"sh\", \"-c\", {script:?}]{extra}),\n    expect: Safe,\n)\n"
    );
    let path = scenario_file(name, &text);
    let command = vec!["sh".to_string(), "-c".to_string(), script];
    (path, command)
}

/// The note a command prints before it starts `command`.
fn announced(path: &std::path::Path, command: &[String]) -> String {
    let line: Vec<String> = command
        .iter()
        .map(|w| {
            if w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
            {
                w.clone()
            } else {
                format!("'{w}'")
            }
        })
        .collect();
    format!(
        "note: {} starts a program for each node: {}",
        path.display(),
        line.join(" ")
    )
}

/// Point 11: `run`, `hunt`, `compare` and `sweep` say on stderr which program they start
/// before they start it (the node's own first words, passed through by `stderr: Show`, come
/// after the note), and list it under `programs` in their JSON.
#[test]
fn the_programs_a_scenario_starts_are_announced_first_and_listed_in_json() {
    let (path, command) =
        shell_node_scenario("announced", "echo node-started >&2", "ok", ", stderr: Show");
    let file = path.to_str().expect("a UTF-8 path");
    let note = announced(&path, &command);
    let out = scratch("announced-out");
    let compare_out = out.join("compare");
    let sweep_out = out.join("sweep");
    let runs = [
        vec!["run", file],
        vec!["run", file, "--json"],
        vec!["hunt", file, "--seeds", "2", "--no-shrink", "--json"],
        vec![
            "compare",
            file,
            "--algorithms",
            "external",
            "--seeds",
            "1",
            "--sizes",
            "3",
            "--json",
            "--out",
            compare_out.to_str().expect("UTF-8"),
        ],
        vec![
            "sweep",
            file,
            "--trials",
            "1",
            "--json",
            "--out",
            sweep_out.to_str().expect("UTF-8"),
        ],
    ];
    for args in runs {
        let output = splitbrain(&args);
        assert_no_panic(&output);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {err}");
        let noted = err.find(&note).unwrap_or_else(|| panic!("{args:?}: {err}"));
        let started = err.find("node-started").expect("the node started");
        assert!(noted < started, "{args:?}: said after the start: {err}");
        assert_eq!(err.matches(&note).count(), 1, "{args:?}: said once: {err}");
        if args.contains(&"--json") {
            let programs = &common::json(&output)["programs"];
            assert_eq!(programs, &serde_json::json!([command]), "{args:?}");
        }
    }
    // A built-in algorithm starts nothing, and says nothing.
    let output = splitbrain(["run", "scenarios/raft-nemesis.ron", "--json"]);
    assert!(!stderr(&output).contains("starts a program"));
    assert_eq!(common::json(&output)["programs"], serde_json::json!([]));
}

/// Point 11: `check`, `list` and `merge` never start a program (the node here marks a file
/// when it starts); `check` says which one the scenario would start.
#[test]
fn check_list_and_merge_never_start_a_program() {
    let dir = scratch("never-started");
    let mark = dir.join("started");
    let (path, command) = shell_node_scenario(
        "never-started",
        &format!("touch {}", mark.display()),
        "ok",
        "",
    );
    let folder = path.parent().expect("a folder").to_str().expect("UTF-8");
    let file = path.to_str().expect("a UTF-8 path");
    // A hunt starts it, and writes the records `merge` reads.
    let records = dir.join("records.jsonl");
    let records = records.to_str().expect("UTF-8");
    let hunt = splitbrain([
        "hunt",
        file,
        "--seeds",
        "2",
        "--no-shrink",
        "--jsonl",
        records,
    ]);
    assert_eq!(hunt.status.code(), Some(0), "{}", stderr(&hunt));
    assert!(mark.exists(), "the hunt started the node");
    std::fs::remove_file(&mark).expect("remove the mark");
    let check = splitbrain(["check", file]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let said = common::stdout(&check);
    let line = announced(&path, &command);
    let line = line.split(": ").last().expect("the command");
    assert!(
        said.contains(&format!("note: starts a program for each node: {line}")),
        "{said}"
    );
    for args in [vec!["list", "--dir", folder], vec!["merge", records]] {
        let output = splitbrain(&args);
        assert_no_panic(&output);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert!(!mark.exists(), "check, list or merge started the node");
}

/// Point 11 (and 8): a `command` whose program is a file without an execute bit passed
/// `check`, and failed only once a run started it. `check` refuses it at `command`, without
/// running it.
#[test]
fn check_refuses_a_program_that_is_not_executable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("not-executable");
    let node = dir.join("node.py");
    let mark = dir.join("started");
    std::fs::write(&node, format!("#!/bin/sh\ntouch {}\n", mark.display())).expect("write");
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let text = format!(
        "Scenario(\n    nodes: 3,\n    algorithm: External(command: [{:?}]),\n)\n",
        node.display().to_string()
    );
    let path = scenario_file("not-executable-scenario", &text);
    let output = splitbrain(["check", path.to_str().expect("UTF-8")]);
    assert_no_panic(&output);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            ":3:34: the program `{}` is not executable",
            node.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("hint: make it executable (`chmod +x`)"),
        "{err}"
    );
    assert!(!mark.exists(), "check ran the program");
}

/// Point 11: a reproducer is code when its scenario starts a program: its header names the
/// command, and says to run it only from a source one trusts.
#[test]
fn a_reproducer_names_the_programs_it_starts_in_its_header() {
    let text = "Scenario(\n    name: \"two-holders\",\n    duration: \"1s\",\n    nodes: 3,\n    algorithm: External(command: [\"python3\", \"tests/fixtures/external/node.py\", \"double_holder\"], properties: [AtMostOne(\"lock_held\")]),\n    expect: Safe,\n)\n";
    let path = scenario_file("two-holders", text);
    let out = scratch("two-holders-out");
    let output = splitbrain([
        "hunt",
        path.to_str().expect("UTF-8"),
        "--seeds",
        "1",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    assert_no_panic(&output);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let files = common::file_names(&out);
    assert_eq!(files.len(), 1, "{files:?}");
    let reproducer = std::fs::read_to_string(out.join(&files[0])).expect("the reproducer");
    let header: Vec<&str> = reproducer
        .lines()
        .take_while(|l| l.starts_with("//"))
        .collect();
    assert!(
        header.contains(
            &"// It starts this program for each node: python3 tests/fixtures/external/node.py \
              double_holder. Run it only if you trust where it came from."
        ),
        "{reproducer}"
    );
}
