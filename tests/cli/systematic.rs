//! `hunt --search systematic` from the command line: a counterexample found, shrunk, written
//! and replayed; the bound's flags refused where they mean nothing.

use crate::common::{json, scratch, splitbrain, stderr};

#[test]
fn a_systematic_hunt_finds_shrinks_and_writes_a_reproducer_that_replays() {
    let out_dir = scratch("systematic-out");
    let out = out_dir.to_str().expect("a UTF-8 path");
    let output = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--search",
        "systematic",
        "--steps",
        "3",
        "--json",
        "--out",
        out,
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let v = json(&output);
    assert_eq!(v["search"], "systematic");
    assert_eq!(v["ended"], "first_failure");
    assert_eq!(
        v["counterexample"]["steps"].as_array().map(Vec::len),
        Some(3)
    );
    assert!(v["coverage"]["schedules"].as_u64().unwrap() > 1);
    let reproducer = &v["reproducers"][0];
    assert_eq!(reproducer["key"], "election_safety");
    assert_eq!(reproducer["replay_verified"], true);
    let file = reproducer["file"].as_str().expect("a file");
    let replay = splitbrain(["run", file]);
    assert_eq!(replay.status.code(), Some(1), "{}", stderr(&replay));
}

#[test]
fn bound_flags_need_a_systematic_search_and_seed_flags_do_not_go_with_one() {
    let output = splitbrain(["hunt", "scenarios/raft-broken-nemesis.ron", "--steps", "2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--steps bounds a systematic search"));
    let output = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--search",
        "systematic",
        "--seeds",
        "10",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--seeds does not go with --search systematic"));
    let output = splitbrain([
        "hunt",
        "scenarios/bully-crash.ron",
        "--search",
        "systematic",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("has no `nemesis`"),
        "{}",
        stderr(&output)
    );
}
