//! Pre-vote (thesis §9.6) and check-quorum with leader stickiness (thesis §6.2, §4.2.3).

use super::harness::{config, started, unstarted, Cluster, Observed, MS};
use crate::raft::node::Role;
use crate::raft::{RaftMsg, RaftTimer};
use splitbrain_sim::{NodeId, Process, Signal};

/// Elects a leader in a 5-node cluster, isolates one follower for three seconds, heals,
/// and lets things settle. Returns the cluster, the first leader, its term, the follower,
/// and a history bookmark taken at the isolation.
fn isolate_and_rejoin_a_follower(pre_vote: bool, seed: u64) -> (Cluster, usize, u64, usize, usize) {
    let mut cluster = started(5, &config(pre_vote, false), seed);
    let leader = cluster.run_until_leader(2_000 * MS);
    let term = cluster.nodes[leader].term();
    let follower = (leader + 1) % 5;
    let mark = cluster.mark();
    cluster.isolate(follower);
    cluster.run_for(3_000 * MS);
    cluster.heal();
    cluster.run_for(1_000 * MS);
    (cluster, leader, term, follower, mark)
}

#[test]
fn pre_vote_keeps_a_rejoining_isolated_node_from_bumping_the_term() {
    let mut refusals = 0;
    for seed in 0..10 {
        let (cluster, leader, term, follower, mark) = isolate_and_rejoin_a_follower(true, seed);
        let probes = cluster.observed_since(follower, mark);
        assert!(probes
            .iter()
            .any(|o| matches!(o, Observed::Signal(Signal::PreVoteStarted { .. }))));
        assert!(!probes
            .iter()
            .any(|o| matches!(o, Observed::Signal(Signal::ElectionStarted { .. }))));
        assert_eq!(
            cluster.leader(),
            leader,
            "seed {seed}: the leader was not disturbed"
        );
        for node in &cluster.nodes {
            assert_eq!(node.term(), term, "seed {seed}");
        }
        assert_eq!(
            cluster.nodes[follower].known_leader().map(|id| id.index()),
            Some(leader)
        );
        // Thesis §9.6: if a pre-vote reached the others before the leader's heartbeat
        // reached it, they refused (they hear the leader).
        refusals += cluster.count_signals_since(mark, |s| *s == Signal::DisruptionPrevented);
    }
    assert!(
        refusals > 0,
        "no pre-vote met a live leader's follower in 10 seeds"
    );
}

#[test]
fn without_pre_vote_a_rejoining_isolated_node_forces_a_new_term() {
    let (cluster, _, term, follower, _) = isolate_and_rejoin_a_follower(false, 0);
    assert!(
        cluster.nodes[follower].term() > term + 5,
        "it campaigned alone, term after term"
    );
    let now_leader = cluster.leader();
    assert!(
        cluster.nodes[now_leader].term() > term,
        "its rejoining deposed the old term"
    );
    cluster.assert_one_leader_per_term();
}

#[test]
fn a_pre_vote_grant_changes_neither_the_voters_term_nor_its_vote() {
    let mut cluster = unstarted(3, &config(true, false), 1);
    let mark = cluster.mark();
    cluster.drive(0, |node, ctx| {
        node.on_message(
            ctx,
            NodeId(1),
            RaftMsg::PreVote {
                term: 5,
                last_log_index: 0,
                last_log_term: 0,
            },
        );
    });
    assert_eq!(
        cluster.sent_by_since(0, mark),
        [(
            1,
            RaftMsg::PreVoteResp {
                term: 5,
                granted: true
            }
        )]
    );
    assert_eq!(cluster.nodes[0].term(), 0);
    assert_eq!(cluster.nodes[0].durable.voted_for, None);
    assert!(
        !cluster.timer_armed(0, RaftTimer::Election),
        "a pre-vote grant does not reset the timer"
    );
}

#[test]
fn a_pre_candidate_becomes_candidate_only_on_a_majority_of_pre_votes() {
    let mut cluster = unstarted(5, &config(true, false), 1);
    cluster.fire(0, RaftTimer::Election);
    assert_eq!(cluster.nodes[0].role(), Role::PreCandidate);
    assert_eq!(
        cluster.nodes[0].term(),
        0,
        "thesis §9.6: no term change before the pre-vote wins"
    );
    cluster.deliver(0, 1, "PreVote");
    cluster.deliver(1, 0, "PreVoteResp");
    assert_eq!(cluster.nodes[0].role(), Role::PreCandidate, "two of five");
    cluster.deliver(0, 2, "PreVote");
    cluster.deliver(2, 0, "PreVoteResp");
    assert_eq!(cluster.nodes[0].role(), Role::Candidate);
    assert_eq!(cluster.nodes[0].term(), 1);
}

#[test]
fn a_pre_vote_refusal_from_a_later_term_makes_the_pre_candidate_follow_that_term() {
    let mut cluster = unstarted(3, &config(true, false), 1);
    cluster.nodes[1].durable.current_term = 7;
    cluster.fire(0, RaftTimer::Election);
    cluster.deliver(0, 1, "PreVote");
    cluster.deliver(1, 0, "PreVoteResp");
    assert_eq!(cluster.nodes[0].role(), Role::Follower);
    assert_eq!(cluster.nodes[0].term(), 7);
    assert_eq!(
        cluster.nodes[1].term(),
        7,
        "a pre-vote request never changes the receiver's term"
    );
}

#[test]
fn a_failed_pre_vote_round_is_reported_and_retried() {
    let mut cluster = unstarted(3, &config(true, false), 1);
    cluster.fire(0, RaftTimer::Election);
    let mark = cluster.mark();
    cluster.fire(0, RaftTimer::Election);
    let seen = cluster.observed_since(0, mark);
    assert!(seen.contains(&Observed::Signal(Signal::ElectionRoundFailed { term: 1 })));
    assert!(seen.contains(&Observed::Signal(Signal::PreVoteStarted { term: 1 })));
    assert_eq!(cluster.nodes[0].term(), 0);
}

#[test]
fn check_quorum_makes_an_isolated_leader_step_down_in_its_own_term() {
    for seed in 0..10 {
        let mut cluster = started(5, &config(false, true), seed);
        let leader = cluster.run_until_leader(2_000 * MS);
        let term = cluster.nodes[leader].term();
        let isolated_at = cluster.now();
        let mark = cluster.mark();
        cluster.isolate(leader);
        while cluster.nodes[leader].role() == Role::Leader {
            cluster.run_for(MS);
            // One round may already be half over; the second must fail.
            assert!(
                cluster.now() - isolated_at <= 2 * 150 * MS + MS,
                "seed {seed}: still leading"
            );
        }
        assert_eq!(cluster.nodes[leader].role(), Role::Follower);
        assert_eq!(
            cluster.nodes[leader].term(),
            term,
            "thesis §6.2: it steps down, same term"
        );
        assert_eq!(cluster.write_token(leader), None);
        assert!(cluster
            .observed_since(leader, mark)
            .contains(&Observed::SteppedDown));
    }
}

#[test]
fn without_check_quorum_an_isolated_leader_keeps_believing_it_leads() {
    let mut cluster = started(5, &config(false, false), 2);
    let leader = cluster.run_until_leader(2_000 * MS);
    cluster.isolate(leader);
    cluster.run_for(3_000 * MS);
    assert_eq!(cluster.nodes[leader].role(), Role::Leader);
    assert!(cluster.write_token(leader).is_some());
}

#[test]
fn check_quorum_followers_refuse_votes_while_they_hear_from_a_live_leader() {
    for seed in 0..10 {
        let mut cluster = started(3, &config(false, true), seed);
        let leader = cluster.run_until_leader(2_000 * MS);
        let term = cluster.nodes[leader].term();
        // The leader's heartbeats no longer reach one follower, which starts elections.
        let deaf = (leader + 1) % 3;
        cluster.cut_one_way(leader, deaf);
        let mark = cluster.mark();
        cluster.run_for(3_000 * MS);
        assert!(
            cluster.nodes[deaf].term() > term,
            "the deaf follower campaigned"
        );
        assert_eq!(
            cluster.leader(),
            leader,
            "seed {seed}: thesis §4.2.3, leader stickiness"
        );
        assert_eq!(cluster.nodes[leader].term(), term);
        let prevented = cluster.count_signals_since(mark, |s| *s == Signal::DisruptionPrevented);
        assert!(prevented > 0);
    }
}

#[test]
fn without_check_quorum_a_deaf_follower_deposes_a_live_leader() {
    let mut cluster = started(3, &config(false, false), 0);
    let leader = cluster.run_until_leader(2_000 * MS);
    let term = cluster.nodes[leader].term();
    cluster.cut_one_way(leader, (leader + 1) % 3);
    cluster.run_for(3_000 * MS);
    assert!((0..3).all(|i| cluster.nodes[i].term() > term));
    cluster.assert_one_leader_per_term();
}
