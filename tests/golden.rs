//! Golden outputs, reviewed like code: scenario in, trace out (etcd's datadriven tests).
//!
//! After an intended change to the engine, Raft or the summary, update the snapshots with
//! `INSTA_UPDATE=always cargo test --test golden` (or `cargo insta review`) and read the diff
//! in `tests/snapshots/` before committing it.

use splitbrain_sim::JsonLinesWriter;
use std::path::Path;
use std::process::Command;

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The full JSON Lines trace of a scenario file, as `--trace` would write it.
fn trace_of(relative: &str) -> String {
    let scenario =
        splitbrain::scenario::load(&repo_root().join(relative)).unwrap_or_else(|e| panic!("{e}"));
    let mut writer = JsonLinesWriter::new(Vec::new());
    splitbrain_algorithms::run(&scenario.algorithm, scenario.sim.clone(), Some(&mut writer));
    String::from_utf8(writer.into_inner()).expect("the trace is UTF-8")
}

#[test]
fn a_leader_crash_in_a_three_node_cluster_traces_exactly_as_reviewed() {
    let trace = trace_of("tests/fixtures/raft-election.ron");
    // The fixture's story, checked before the snapshot so that a reviewer of a changed
    // snapshot knows what must still be in it.
    assert!(trace.contains(r#""ev":"crash""#));
    assert!(trace.contains(r#""ev":"restart""#));
    assert!(!trace.contains(r#""check":"election_safety""#));
    insta::assert_snapshot!("raft_election_trace", trace);
}

#[test]
fn the_trace_file_written_by_the_binary_is_the_reviewed_trace() {
    // The binary and the library write the same bytes: one golden covers both.
    let dir = std::env::temp_dir().join(format!("splitbrain-golden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a temp dir");
    let path = dir.join("trace.jsonl");
    let output = Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args([
            "run",
            "tests/fixtures/raft-election.ron",
            "--quiet",
            "--trace",
        ])
        .arg(&path)
        .current_dir(repo_root())
        .output()
        .expect("the splitbrain binary starts");
    let written = std::fs::read_to_string(&path);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        written.expect("the trace was written") == trace_of("tests/fixtures/raft-election.ron"),
        "the binary's trace differs from the library's"
    );
}

#[test]
fn the_leader_crash_summary_reads_exactly_as_reviewed() {
    let output = Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(["run", "scenarios/raft-leader-crash.ron"])
        .current_dir(repo_root())
        .output()
        .expect("the splitbrain binary starts");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
    let summary = String::from_utf8(output.stdout).expect("stdout is UTF-8");
    insta::assert_snapshot!("raft_leader_crash_summary", summary);
}
