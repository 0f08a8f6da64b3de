//! Leadership transfer (thesis §3.10).

use super::harness::{config, started, unstarted, Observed, MS};
use crate::raft::node::Role;
use crate::raft::{RaftConfig, RaftMsg, RaftTimer};
use splitbrain_sim::{Process, Signal};

/// The naive oracle for the target: the peer with the longest log (all entries are of term
/// 0 here), lowest id on ties.
fn expected_target(lengths: &[u64], leader: usize) -> usize {
    let longest = (0..lengths.len())
        .filter(|peer| *peer != leader)
        .map(|peer| lengths[peer])
        .max();
    (0..lengths.len())
        .find(|peer| *peer != leader && Some(lengths[*peer]) == longest)
        .expect("a peer")
}

#[test]
fn transfer_hands_leadership_to_the_chosen_peer_with_timeout_now_and_stops_writes_during_the_transfer(
) {
    let lengths = vec![3, 4, 5, 4, 3];
    for seed in 0..10 {
        // Pre-vote and check-quorum on: the transfer must get past both.
        let settings = RaftConfig {
            log_lengths: lengths.clone(),
            ..config(true, true)
        };
        let mut cluster = started(5, &settings, seed);
        cluster.run_until_leader(2_000 * MS);
        // Settled: a longer log that refused the first winner may still depose it (its
        // timer runs on under the paper's timer_reset), and every follower has answered a
        // heartbeat recently.
        cluster.run_for(1_000 * MS);
        let leader = cluster.leader();
        let term = cluster.nodes[leader].term();
        let target = expected_target(&lengths, leader);

        let mark = cluster.mark();
        cluster.resign(leader);
        assert_eq!(
            cluster.sent_by_since(leader, mark),
            [(target, RaftMsg::TimeoutNow { term })]
        );
        assert_eq!(cluster.nodes[leader].role(), Role::Leader);
        assert_eq!(
            cluster.write_token(leader),
            None,
            "thesis §3.10: no writes during a transfer"
        );

        cluster.run_for(100 * MS);
        assert_eq!(cluster.leader(), target, "seed {seed}");
        assert_eq!(
            cluster.nodes[target].term(),
            term + 1,
            "no pre-vote, no lost round"
        );
        assert!(cluster
            .observed_since(leader, mark)
            .contains(&Observed::SteppedDown));
        let asked = cluster.sent_by_since(target, mark);
        assert!(asked
            .iter()
            .all(|(_, msg)| !matches!(msg, RaftMsg::PreVote { .. })));
        assert!(asked
            .iter()
            .any(|(_, msg)| matches!(msg, RaftMsg::RequestVote { transfer: true, .. })));
        assert_eq!(
            cluster.count_signals_since(mark, |s| *s == Signal::DisruptionPrevented),
            0
        );
        cluster.assert_one_leader_per_term();
    }
}

#[test]
fn a_transfer_that_does_not_complete_in_time_is_aborted_and_the_leader_serves_again() {
    let mut cluster = started(5, &config(false, true), 3);
    let leader = cluster.run_until_leader(2_000 * MS);
    let term = cluster.nodes[leader].term();
    cluster.run_for(120 * MS);
    cluster.resign(leader);
    let target = expected_target(&[0; 5], leader);
    cluster.crash(target); // the TimeoutNow is lost with it
    cluster.run_for(290 * MS);
    assert_eq!(
        cluster.write_token(leader),
        None,
        "still waiting for the transfer"
    );
    cluster.run_for(20 * MS);
    assert_eq!(cluster.leader(), leader);
    assert_eq!(
        cluster.write_token(leader),
        Some(term),
        "aborted after election_timeout_max"
    );
}

#[test]
fn resign_on_a_follower_does_nothing() {
    let mut cluster = started(3, &config(false, false), 4);
    let leader = cluster.run_until_leader(2_000 * MS);
    let follower = (leader + 1) % 3;
    let mark = cluster.mark();
    cluster.resign(follower);
    assert!(cluster.observed_since(follower, mark).is_empty());
    assert!(!cluster.timer_armed(follower, RaftTimer::Transfer));
}

#[test]
fn resign_without_a_recently_answering_peer_keeps_the_leader_serving() {
    let mut cluster = unstarted(3, &config(false, false), 4);
    cluster.fire(0, RaftTimer::Election);
    cluster.deliver(0, 1, "RequestVote");
    cluster.deliver(1, 0, "RequestVoteResp");
    assert_eq!(cluster.nodes[0].role(), Role::Leader);
    let mark = cluster.mark();
    cluster.resign(0); // no follower has answered a heartbeat yet
    assert!(cluster.sent_by_since(0, mark).is_empty());
    assert_eq!(cluster.write_token(0), Some(1));
}

#[test]
fn resigning_twice_sends_one_timeout_now() {
    let mut cluster = started(3, &config(false, false), 5);
    let leader = cluster.run_until_leader(2_000 * MS);
    cluster.run_for(60 * MS);
    let mark = cluster.mark();
    cluster.resign(leader);
    cluster.resign(leader);
    let timeouts = cluster
        .sent_by_since(leader, mark)
        .into_iter()
        .filter(|(_, m)| matches!(m, RaftMsg::TimeoutNow { .. }));
    assert_eq!(timeouts.count(), 1);
}
