//! Disks: Raft writes its term and vote before it asks or answers, so an election takes at
//! least three fsyncs; a crash before a write completes loses it, and the broken variant
//! that skips the fsync of its vote is caught while the correct Raft stays safe.

use crate::common;

use common::run_text;

const FIGURE16: &str = include_str!("../../scenarios/raft-figure16.ron");
const BROKEN_NEMESIS: &str = include_str!("../../scenarios/raft-broken-nemesis.ron");

const MS: u64 = 1_000_000;

/// How long each decided election took, in ns.
fn election_times(text: &str) -> Vec<u64> {
    run_text(text)
        .elections
        .iter()
        .filter_map(|e| e.decided_ns.map(|d| d - e.started_ns))
        .collect()
}

fn with_seed(text: &str, seed: u64) -> String {
    text.replacen("seed: 1,", &format!("seed: {seed},"), 1)
}

#[test]
fn an_election_waits_for_the_candidates_and_the_voters_fsyncs() {
    for seed in 1..=10 {
        let text = with_seed(FIGURE16, seed);
        // Candidate's write, then each voter's write of the term and of its vote: at least
        // three fsyncs of at least 1 ms each.
        let times = election_times(&text);
        assert!(!times.is_empty(), "seed {seed}: a leader was elected");
        assert!(times.iter().all(|t| *t >= 3 * MS), "seed {seed}: {times:?}");
        let instant = text.replace(
            "    disk: (fsync: Exponential(mean: \"4ms\", min: \"1ms\")),\n",
            "",
        );
        assert_ne!(instant, text, "the scenario has a disk");
        let times = election_times(&instant);
        assert!(times.iter().all(|t| *t < MS), "seed {seed}: {times:?}");
    }
}

/// The broken-vote hunt scenario with a disk, run as `variant`, written to a scratch file.
fn broken_nemesis_with_disk(variant: &str) -> std::path::PathBuf {
    let text = BROKEN_NEMESIS
        .replace("ForgetsVoteOnRestart", variant)
        .replace(
            "    workload:",
            "    disk: (fsync: Exponential(mean: \"4ms\", min: \"1ms\")),\n    workload:",
        );
    assert!(text.contains("disk:"));
    let path = common::scratch_path(&format!("disk-nemesis-{variant}.ron"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn skipping_the_vote_fsync_is_caught_and_the_correct_raft_stays_safe_with_a_disk() {
    let hunt = |variant: &str| {
        let path = broken_nemesis_with_disk(variant);
        let path = path.to_str().unwrap().to_string();
        common::splitbrain([
            "hunt",
            &path,
            "--seeds",
            "300",
            "--keep-going",
            "--no-shrink",
        ])
    };
    let correct = hunt("Correct");
    assert_eq!(
        correct.status.code(),
        Some(0),
        "{}",
        common::stdout(&correct)
    );
    let broken = hunt("ForgetsVoteOnRestart");
    assert_eq!(broken.status.code(), Some(1), "{}", common::stdout(&broken));
    assert!(common::stdout(&broken).contains("election_safety"));
}

const ETCD_SLOW_DISK: &str = include_str!("../../scenarios/raft-etcd-slow-disk.ron");

/// In how many of seeds 1..=`seeds` the leadership changed hands, with every fsync of the
/// leader's disk taking `slow` (as the scenario writes it) from 5 s to 15 s.
fn seeds_with_a_leader_change(slow: &str, seeds: u64) -> u64 {
    let text = ETCD_SLOW_DISK.replace("\"1500ms\"", &format!("\"{slow}\""));
    assert!(text.contains(&format!("SlowDisk(Leader, \"{slow}\")")));
    (1..=seeds)
        .filter(|&seed| run_text(&with_seed(&text, seed)).counters.leader_changes > 0)
        .count() as u64
}

#[test]
fn a_slow_leader_disk_causes_elections_only_when_its_fsyncs_outlast_the_election_timeout() {
    // The leader's heartbeats wait behind its WAL fsyncs: a follower hears from it once per
    // fsync. Shorter than the 1 s minimum election timeout, nobody campaigns; longer than
    // the 2 s maximum, every follower does.
    assert_eq!(seeds_with_a_leader_change("1ms", 20), 0, "a healthy disk");
    assert_eq!(seeds_with_a_leader_change("700ms", 20), 0);
    assert_eq!(seeds_with_a_leader_change("2500ms", 20), 20);
}

const ETCD: &str = include_str!("../../scenarios/etcd-holder-stall.ron");
const ZOOKEEPER: &str = include_str!("../../scenarios/zk-recipe.ron");

/// `text` with the service's disk taking `fsync` per write, with group commit (both servers
/// sync what queued up in one go: etcd's `Ready`, ZooKeeper's SyncRequestProcessor).
fn with_service_disk(text: &str, fsync: &str) -> String {
    let disk = format!("    disk: (service: Constant(\"{fsync}\"), batch: true),\n    workload:");
    let with = text.replacen("    workload:", &disk, 1);
    assert_ne!(
        with, text,
        "the scenario has a workload line to insert before"
    );
    with
}

#[test]
fn a_coordination_service_answers_its_writes_only_after_its_fsync() {
    // Each election ends with a claim the service's answer to a write made possible: etcd's
    // Txn (initial election) or the watch event of a revocation; ZooKeeper's create or the
    // notification of a closed session. With a 300 ms service disk, each takes at least
    // that; with the default instant disk, each is far quicker.
    for (name, text) in [("etcd", ETCD), ("zookeeper", ZOOKEEPER)] {
        let instant = election_times(text);
        assert!(instant.len() >= 2, "{name}: {instant:?}");
        assert!(instant.iter().all(|t| *t < 300 * MS), "{name}: {instant:?}");
        let slow = election_times(&with_service_disk(text, "300ms"));
        assert!(slow.len() >= 2, "{name}: {slow:?}");
        assert!(slow.iter().all(|t| *t >= 300 * MS), "{name}: {slow:?}");
    }
}
