//! A clock stepped back lags until it reads again what it read before the step; liveness is
//! judged from then, so correct Raft is not reported as failing because of when a nemesis
//! stepped a clock, and a real failure after the catch-up is still reported.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Correct Raft, 3 nodes: the leader crashes for good, then a follower's clock steps back
/// 24.45 s. It believes it heard the leader a moment ago and refuses pre-votes until its
/// clock catches up; until then the other survivor cannot win (it needs that vote).
const JUMP_AFTER_CRASH: &str = r#"Scenario(
    name: "raft-backward-jump-liveness",
    seed: 3,
    duration: "60s",
    nodes: 3,
    algorithm: Raft(election_timeout: ("150ms", "300ms"), heartbeat: "50ms", pre_vote: true, check_quorum: true),
    workload: (write_every: "100ms"),
    faults: [
        (at: "20s", do: Crash(Leader)),
        (at: "20.1s", do: ClockJump(Follower, "-24.45s")),
    ],
    LIVENESS
    expect: Safe,
)"#;

fn run(name: &str, liveness: &str) -> Output {
    let dir: PathBuf = std::env::temp_dir().join(format!("splitbrain-jump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.ron"));
    std::fs::write(&file, JUMP_AFTER_CRASH.replace("LIVENESS", liveness)).unwrap();
    Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(["run", file.to_str().unwrap()])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .unwrap()
}

fn liveness_line(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .find(|l| l.trim_start().starts_with("liveness"))
        .unwrap_or_else(|| panic!("no liveness line:\n{out}"))
        .to_string()
}

#[test]
fn correct_raft_is_not_failed_for_a_clock_still_catching_up_after_a_backward_step() {
    let o = run("default-bound", "");
    let line = liveness_line(&o);
    assert_eq!(o.status.code(), Some(0), "{line}");
    assert!(line.contains("held"), "{line}");
    // The watch starts when the stepped clock has caught up: 20.1 s + 24.45 s.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("44.55s"), "the fault's end is shown:\n{out}");
}

#[test]
fn a_liveness_failure_after_the_catch_up_is_still_reported() {
    // No election completes within a millisecond of the catch-up.
    let o = run("tight-bound", "liveness: (bound: \"1ms\"),");
    let line = liveness_line(&o);
    assert_eq!(o.status.code(), Some(3), "{line}");
    assert!(line.contains("FAILED") && line.contains("44.55s"), "{line}");
}
