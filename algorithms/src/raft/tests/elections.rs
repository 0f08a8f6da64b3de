//! Basic elections: one leader per term, heartbeats, the up-to-date rule, split votes.

use super::harness::{config, started, unstarted, Cluster, Observed, MS};
use crate::raft::node::Role;
use crate::raft::{RaftConfig, RaftMsg, RaftTimer};
use splitbrain_sim::{Process, Signal};

/// Runs a cluster for a while, crashing and restarting the leader again and again so that
/// many terms are contested, and checks election safety over the whole history.
fn churn(members: usize, config: &RaftConfig, seed: u64) -> Cluster {
    let mut cluster = started(members, config, seed);
    for _ in 0..6 {
        let leader = cluster.run_until_leader(5_000 * MS);
        cluster.run_for(200 * MS);
        cluster.crash(leader);
        cluster.run_until_leader(5_000 * MS);
        cluster.restart(leader);
        cluster.run_for(100 * MS);
    }
    cluster
}

#[test]
fn a_three_node_cluster_elects_exactly_one_leader_per_term() {
    for seed in 0..30 {
        let cluster = churn(3, &config(false, false), seed);
        cluster.assert_one_leader_per_term();
        assert!(
            cluster.claims.len() >= 6,
            "seed {seed}: only {:?}",
            cluster.claims
        );
    }
}

#[test]
fn a_five_node_cluster_elects_exactly_one_leader_per_term() {
    for seed in 0..30 {
        for (pre_vote, check_quorum) in [(false, false), (true, false), (false, true), (true, true)]
        {
            let cluster = churn(5, &config(pre_vote, check_quorum), seed);
            cluster.assert_one_leader_per_term();
        }
    }
}

#[test]
fn narrow_timeouts_cause_split_votes_that_still_elect_one_leader_per_term() {
    // With a timeout range barely wider than the latency, candidates collide often.
    let tight = RaftConfig {
        election_timeout_min_ns: 10 * MS,
        election_timeout_max_ns: 12 * MS,
        heartbeat_ns: 3 * MS,
        ..RaftConfig::default()
    };
    let mut failed_rounds = 0;
    for seed in 0..40 {
        let mut cluster = started(5, &tight, seed);
        cluster.run_until_leader(10_000 * MS);
        cluster.assert_one_leader_per_term();
        failed_rounds +=
            cluster.count_signals_since(0, |s| matches!(s, Signal::ElectionRoundFailed { .. }));
    }
    assert!(
        failed_rounds > 0,
        "no split vote in 40 seeds; the test exercises nothing"
    );
}

#[test]
fn every_live_node_recognises_the_elected_leader() {
    let mut cluster = started(5, &config(false, false), 3);
    let leader = cluster.run_until_leader(2_000 * MS);
    cluster.run_for(100 * MS);
    for node in &cluster.nodes {
        assert_eq!(node.known_leader().map(|id| id.index()), Some(leader));
        assert_eq!(node.term(), cluster.nodes[leader].term());
    }
    assert_eq!(
        cluster.write_token(leader),
        Some(cluster.nodes[leader].term())
    );
}

#[test]
fn a_leaders_heartbeats_keep_followers_from_starting_elections() {
    for seed in 0..10 {
        let mut cluster = started(5, &config(false, false), seed);
        let leader = cluster.run_until_leader(2_000 * MS);
        let term = cluster.nodes[leader].term();
        cluster.run_for(50 * MS);
        let settled = cluster.mark();
        cluster.run_for(10_000 * MS);
        assert_eq!(cluster.leader(), leader);
        assert_eq!(cluster.nodes[leader].term(), term);
        let unrest = cluster.count_signals_since(settled, |s| {
            matches!(s, Signal::LeaderSuspected | Signal::ElectionStarted { .. })
        });
        assert_eq!(unrest, 0, "seed {seed}");
    }
}

#[test]
fn a_crashed_leader_is_replaced_in_a_later_term() {
    let mut cluster = started(3, &config(false, false), 11);
    let first = cluster.run_until_leader(2_000 * MS);
    let first_term = cluster.nodes[first].term();
    cluster.crash(first);
    let second = cluster.run_until_leader(2_000 * MS);
    assert_ne!(second, first);
    assert!(cluster.nodes[second].term() > first_term);
}

#[test]
fn a_single_member_cluster_elects_itself_on_its_first_timeout() {
    for pre_vote in [false, true] {
        let mut cluster = started(1, &config(pre_vote, true), 1);
        cluster.run_for(300 * MS);
        assert_eq!(cluster.leader(), 0);
        cluster.run_for(5_000 * MS);
        assert_eq!(cluster.leader(), 0, "check-quorum counts the leader itself");
        assert_eq!(cluster.nodes[0].term(), 1);
    }
}

#[test]
fn a_node_with_a_shorter_log_never_wins_while_the_longer_log_majority_is_reachable() {
    // Paper §5.4.1: n0 and n1 hold 1 entry, n2..n4 hold 5; the short logs can gather at
    // most two votes, never a majority of five, even as the long-log leaders crash.
    let lengths = RaftConfig {
        log_lengths: vec![1, 1, 5, 5, 5],
        ..config(false, false)
    };
    for seed in 0..20 {
        let mut cluster = started(5, &lengths, seed);
        for _ in 0..4 {
            let leader = cluster.run_until_leader(5_000 * MS);
            assert!(leader >= 2, "seed {seed}: short-log n{leader} won");
            cluster.crash(leader);
            let next = cluster.run_until_leader(5_000 * MS);
            assert!(next >= 2, "seed {seed}: short-log n{next} won");
            cluster.restart(leader);
        }
        let short_claims: Vec<_> = cluster
            .claims
            .iter()
            .filter(|(_, who)| who.iter().any(|n| *n < 2))
            .collect();
        assert!(short_claims.is_empty(), "seed {seed}: {short_claims:?}");
        cluster.assert_one_leader_per_term();
    }
}

#[test]
fn a_candidate_retries_its_vote_request_only_to_peers_that_have_not_answered() {
    let mut cluster = unstarted(3, &config(false, false), 5);
    cluster.fire(0, RaftTimer::Election);
    assert_eq!(cluster.nodes[0].role(), Role::Candidate);
    cluster.deliver(0, 1, "RequestVote");
    cluster.deliver(1, 0, "RequestVoteResp"); // a grant: n0 wins with 2 of 3
    assert_eq!(cluster.nodes[0].role(), Role::Leader);

    let mut cluster = unstarted(5, &config(false, false), 5);
    cluster.fire(0, RaftTimer::Election);
    cluster.deliver(0, 1, "RequestVote");
    cluster.deliver(1, 0, "RequestVoteResp");
    let before = cluster.mark();
    cluster.fire(0, RaftTimer::Heartbeat);
    let retried: Vec<usize> = cluster
        .sent_by_since(0, before)
        .into_iter()
        .filter(|(_, msg)| matches!(msg, RaftMsg::RequestVote { term: 1, .. }))
        .map(|(to, _)| to)
        .collect();
    // n1 answered; n2, n3, n4 are asked again.
    assert_eq!(retried, [2, 3, 4]);
}

#[test]
fn a_candidate_whose_timer_fires_reports_the_failed_round_and_runs_again_in_a_later_term() {
    let mut cluster = unstarted(3, &config(false, false), 9);
    cluster.fire(0, RaftTimer::Election);
    assert_eq!(cluster.nodes[0].term(), 1);
    cluster.fire(0, RaftTimer::Election);
    assert_eq!(cluster.nodes[0].term(), 2);
    let seen = cluster.observed_since(0, 0);
    let signals: Vec<_> = seen
        .iter()
        .filter(|o| matches!(o, Observed::Signal(_)))
        .collect();
    assert_eq!(
        signals,
        [
            &Observed::Signal(Signal::LeaderSuspected),
            &Observed::Signal(Signal::ElectionStarted { term: 1 }),
            // Equal (empty) logs: every candidate could win.
            &Observed::Signal(Signal::CampaignEligible { term: 1 }),
            &Observed::Signal(Signal::ElectionRoundFailed { term: 1 }),
            &Observed::Signal(Signal::ElectionStarted { term: 2 }),
            &Observed::Signal(Signal::CampaignEligible { term: 2 }),
        ]
    );
}

#[test]
fn a_duplicated_grant_is_counted_once() {
    let mut cluster = unstarted(5, &config(false, false), 2);
    cluster.fire(0, RaftTimer::Election);
    cluster.deliver(0, 1, "RequestVote");
    cluster.fire(0, RaftTimer::Heartbeat); // n1's answer is still in flight: asked again
    cluster.deliver(0, 1, "RequestVote");
    cluster.deliver(1, 0, "RequestVoteResp");
    cluster.deliver(1, 0, "RequestVoteResp");
    assert_eq!(
        cluster.nodes[0].role(),
        Role::Candidate,
        "two grants from n1 are one vote"
    );
}

#[test]
fn a_stale_leader_steps_down_when_a_follower_answers_with_a_later_term() {
    let mut cluster = started(3, &config(false, false), 4);
    let old = cluster.run_until_leader(2_000 * MS);
    cluster.isolate(old);
    cluster.run_for(2_000 * MS);
    let leaders = cluster.leaders();
    assert_eq!(
        leaders.len(),
        2,
        "the majority elected a new leader: {leaders:?}"
    );
    assert_eq!(
        cluster.nodes[old].role(),
        Role::Leader,
        "without check-quorum it still believes"
    );
    let mark = cluster.mark();
    cluster.heal();
    cluster.run_for(200 * MS);
    assert_eq!(cluster.leaders().len(), 1);
    assert_ne!(cluster.leader(), old);
    assert!(cluster
        .observed_since(old, mark)
        .contains(&Observed::SteppedDown));
    cluster.assert_one_leader_per_term();
}
