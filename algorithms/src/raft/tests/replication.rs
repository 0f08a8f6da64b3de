//! The proposal workload (`propose_every`): the leader's log grows, followers copy it
//! (paper §5.3) through reordering, partitions, restarts and a change of leader, and a
//! follower never keeps an entry the leader does not have.

use super::harness::{config, started, Cluster, MS};
use crate::raft::log::RaftLog;
use crate::raft::{RaftConfig, RaftMsg};

fn proposing() -> RaftConfig {
    RaftConfig {
        propose_every_ns: Some(10 * MS),
        ..config(false, false)
    }
}

/// The terms of a log, one per entry.
fn terms(log: &RaftLog) -> Vec<u64> {
    (1..=log.last_index())
        .map(|index| log.term_at(index).expect("within the log"))
        .collect()
}

/// Every live follower's log is a prefix of the leader's, at most `lag` entries short.
fn assert_followers_caught_up(cluster: &Cluster, lag: usize) {
    let leader = cluster.leader();
    let theirs = terms(&cluster.nodes[leader].durable.log);
    for (i, node) in cluster.nodes.iter().enumerate() {
        if i == leader || !cluster.is_up(i) {
            continue;
        }
        let mine = terms(&node.durable.log);
        assert!(
            theirs.starts_with(&mine),
            "n{i}'s log {mine:?} is not a prefix of leader n{leader}'s {theirs:?}"
        );
        assert!(
            mine.len() + lag >= theirs.len(),
            "n{i} has {} entries, the leader {}",
            mine.len(),
            theirs.len()
        );
    }
}

#[test]
fn followers_copy_the_leaders_entries_as_they_are_proposed() {
    for seed in 1..=20 {
        let mut cluster = started(3, &proposing(), seed);
        let leader = cluster.run_until_leader(2_000 * MS);
        cluster.run_for(500 * MS);
        let entries = cluster.nodes[leader].durable.log.last_index();
        assert!(
            (45..=51).contains(&entries),
            "seed {seed}: {entries} entries"
        );
        assert_followers_caught_up(&cluster, 2);
    }
}

#[test]
fn a_follower_cut_off_for_a_while_catches_up_after_the_partition_heals() {
    for seed in 1..=20 {
        let mut cluster = started(5, &proposing(), seed);
        let leader = cluster.run_until_leader(2_000 * MS);
        let follower = (leader + 1) % 5;
        cluster.isolate(follower);
        cluster.run_for(120 * MS); // shorter than any election timeout: no election
        cluster.heal();
        cluster.run_for(300 * MS);
        assert_eq!(cluster.leader(), leader, "seed {seed}");
        assert_followers_caught_up(&cluster, 2);
    }
}

#[test]
fn a_deposed_leaders_own_entries_are_replaced_by_the_new_leaders() {
    for seed in 1..=20 {
        let mut cluster = started(5, &proposing(), seed);
        let old = cluster.run_until_leader(2_000 * MS);
        let rest: Vec<usize> = (0..5).filter(|&i| i != old).collect();
        cluster.partition(&[&[old], &rest]);
        cluster.run_for(1_000 * MS);
        let new = *cluster
            .leaders()
            .iter()
            .find(|&&l| l != old)
            .expect("the majority elected a leader");
        // The old leader kept proposing in its term, alone: entries nobody else has.
        let stranded = cluster.nodes[old].durable.log.last_term();
        assert!(stranded < cluster.nodes[new].durable.current_term);
        cluster.heal();
        cluster.run_for(600 * MS);
        assert_eq!(cluster.leader(), new, "seed {seed}");
        assert_followers_caught_up(&cluster, 2);
    }
}

#[test]
fn a_restarted_follower_catches_up_from_what_it_had_on_disk() {
    for seed in 1..=20 {
        let mut cluster = started(3, &proposing(), seed);
        let leader = cluster.run_until_leader(2_000 * MS);
        let follower = (leader + 1) % 3;
        cluster.run_for(100 * MS);
        cluster.crash(follower);
        cluster.run_for(100 * MS);
        cluster.restart(follower);
        cluster.run_for(400 * MS);
        assert_followers_caught_up(&cluster, 2);
    }
}

#[test]
fn without_a_workload_nothing_is_appended_or_sent() {
    let mut cluster = started(3, &config(false, false), 1);
    let leader = cluster.run_until_leader(2_000 * MS);
    let mark = cluster.mark();
    cluster.run_for(500 * MS);
    assert_eq!(cluster.nodes[leader].durable.log.last_index(), 0);
    let appends = cluster
        .sent_by_since(leader, mark)
        .iter()
        .filter(|(_, msg)| matches!(msg, RaftMsg::Append { .. }))
        .count();
    assert_eq!(appends, 0);
}
