//! Golden outputs, reviewed like code: scenario in, trace out (etcd's datadriven tests).
//!
//! After an intended change to the engine, Raft or the summary, update the snapshots with
//! `INSTA_UPDATE=always cargo test --test cli golden::` (or `cargo insta review`) and read the
//! diff in `tests/cli/snapshots/` before committing it.

use crate::common;

use common::{scratch, splitbrain, stdout, trace_of};

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
    let dir = scratch("golden");
    let path = dir.join("trace.jsonl");
    let output = splitbrain([
        "run",
        "tests/fixtures/raft-election.ron",
        "--quiet",
        "--trace",
        path.to_str().unwrap(),
    ]);
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
    let output = splitbrain(["run", "scenarios/raft-leader-crash.ron"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
    let summary = stdout(&output);
    insta::assert_snapshot!("raft_leader_crash_summary", summary);
}
