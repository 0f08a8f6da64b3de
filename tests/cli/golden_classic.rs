//! Golden traces of the classic elections, Bully and Chang-Roberts, reviewed like code:
//! scenario in, trace out (etcd's datadriven tests). Each fixture's story is asserted before
//! the snapshot, so that a reviewer of a changed snapshot knows what must still be in it.
//!
//! After an intended change to the engine or to these algorithms, update the snapshots with
//! `INSTA_UPDATE=always cargo test --test cli golden_classic::` (or `cargo insta review`) and
//! read the diff in `tests/cli/snapshots/` before committing it.

use crate::common;

use common::{repo_root, trace_of};

/// The lines of `trace` that contain every one of `parts`.
fn lines_with<'a>(trace: &'a str, parts: &[&str]) -> Vec<&'a str> {
    trace
        .lines()
        .filter(|line| parts.iter().all(|part| line.contains(part)))
        .collect()
}

#[test]
fn a_bully_failover_and_takeover_traces_exactly_as_reviewed() {
    let trace = trace_of("tests/fixtures/bully-election.ron");
    assert_eq!(
        lines_with(&trace, &[r#""ev":"crash""#, r#""node":2"#]).len(),
        1
    );
    assert_eq!(
        lines_with(&trace, &[r#""ev":"restart""#, r#""node":2"#]).len(),
        1
    );
    // n1 asks n2 (dead: dropped) and wins epoch 2; n2 comes back and wins epoch 3.
    assert!(!lines_with(
        &trace,
        &[r#""ev":"drop""#, r#""what":"Election""#, r#""from":1"#]
    )
    .is_empty());
    assert!(!lines_with(
        &trace,
        &[r#""what":"Coordinator""#, r#""from":1"#, r#""term":2"#]
    )
    .is_empty());
    assert!(!lines_with(
        &trace,
        &[r#""what":"Coordinator""#, r#""from":2"#, r#""term":3"#]
    )
    .is_empty());
    assert!(!trace.contains(r#""check":"election_safety""#));
    insta::assert_snapshot!("bully_election_trace", trace);
}

#[test]
fn a_chang_roberts_failover_with_a_skipped_successor_traces_exactly_as_reviewed() {
    let trace = trace_of("tests/fixtures/ring-election.ron");
    assert_eq!(
        lines_with(&trace, &[r#""ev":"crash""#, r#""node":3"#]).len(),
        1
    );
    // A ring message to the dead n3 is dropped; its sender's ack timer fires and the
    // candidacy goes on; an elected lap of epoch 2 follows.
    assert!(!lines_with(&trace, &[r#""ev":"drop""#, r#""what":"Election""#]).is_empty());
    assert!(!lines_with(&trace, &[r#""ev":"timer""#, r#""what":"ack""#]).is_empty());
    assert!(!lines_with(&trace, &[r#""what":"Elected""#, r#""term":2"#]).is_empty());
    assert!(!trace.contains(r#""check":"election_safety""#));
    insta::assert_snapshot!("ring_election_trace", trace);
}

#[test]
fn the_scale_fixtures_of_the_performance_notes_load_and_the_ring_one_elects_as_documented() {
    let bully = splitbrain::scenario::load(&repo_root().join("tests/fixtures/bully-1000.ron"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bully.sim.members, 1000);
    let ring = splitbrain::scenario::load(&repo_root().join("tests/fixtures/ring-1000.ron"))
        .unwrap_or_else(|e| panic!("{e}"));
    let report = splitbrain_algorithms::run(&ring.algorithm, ring.sim.clone(), None)
        .expect("within the default limits");
    // docs/performance.md and the fixture's comment quote these figures.
    assert_eq!(report.leaders.len(), 1);
    assert_eq!(report.leaders[0].node.index(), 999);
    assert_eq!(report.elections[0].messages_of("Election"), 7438);
    assert!(report.violations.is_empty());
}
