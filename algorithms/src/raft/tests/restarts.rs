//! Restarts: what is durable (term, vote, log) and what is not; the broken variant.

use super::harness::{config, started, unstarted, Cluster, Observed, MS};
use crate::raft::node::Role;
use crate::raft::{RaftConfig, RaftMsg, RaftTimer, RaftVariant};
use splitbrain_sim::Process;

fn forgetful() -> RaftConfig {
    RaftConfig {
        variant: RaftVariant::ForgetsVoteOnRestart,
        ..config(false, false)
    }
}

/// n1 and n2 both run for term 1; n0 votes for n1, then crashes and restarts before n2's
/// request reaches it; n2 retries (paper §5.1) and its request reaches the restarted n0.
/// Returns the cluster and n0's answer to n2's retried request.
fn vote_restart_revote(config: &RaftConfig) -> (Cluster, bool) {
    let mut cluster = unstarted(3, config, 1);
    cluster.fire(1, RaftTimer::Election);
    cluster.fire(2, RaftTimer::Election);
    cluster.deliver(1, 0, "RequestVote");
    cluster.deliver(0, 1, "RequestVoteResp");
    assert_eq!(
        cluster.nodes[1].role(),
        Role::Leader,
        "n1 won term 1 with n0's vote"
    );

    cluster.crash(0); // n2's first request to n0 is lost with the crash
    cluster.restart(0);
    assert_eq!(cluster.nodes[0].term(), 1, "the term is durable");

    cluster.fire(2, RaftTimer::Heartbeat); // n2 retries the peers that did not answer
    let mark = cluster.mark();
    cluster.deliver(2, 0, "RequestVote");
    let granted = match cluster.sent_by_since(0, mark).as_slice() {
        [(2, RaftMsg::RequestVoteResp { term: 1, granted })] => *granted,
        other => panic!("unexpected answer {other:?}"),
    };
    cluster.deliver(0, 2, "RequestVoteResp");
    (cluster, granted)
}

#[test]
fn correct_raft_keeps_its_vote_across_restart_and_refuses_a_second_candidate_in_the_same_term() {
    let (cluster, granted) = vote_restart_revote(&config(false, false));
    assert!(!granted, "paper figure 2: voted_for is persistent");
    assert_eq!(
        cluster.nodes[0].durable.voted_for.map(|id| id.index()),
        Some(1)
    );
    assert_eq!(cluster.nodes[2].role(), Role::Candidate);
    cluster.assert_one_leader_per_term();
}

#[test]
fn the_forgets_vote_on_restart_variant_grants_a_second_vote_in_the_same_term_after_restart() {
    let (cluster, granted) = vote_restart_revote(&forgetful());
    assert!(granted, "the broken variant lost its vote in the crash");
    // And so term 1 has two leaders: exactly what election_safety must catch.
    assert_eq!(cluster.nodes[2].role(), Role::Leader);
    assert_eq!(cluster.nodes[1].role(), Role::Leader);
    let claimants: Vec<usize> = cluster.claims[&1].iter().copied().collect();
    assert_eq!(claimants, [1, 2]);
}

#[test]
fn the_forgetful_variant_behaves_like_correct_raft_when_nobody_restarts() {
    for seed in 0..10 {
        let mut cluster = started(5, &forgetful(), seed);
        let leader = cluster.run_until_leader(2_000 * MS);
        cluster.crash(leader);
        cluster.run_until_leader(2_000 * MS);
        cluster.assert_one_leader_per_term();
    }
}

#[test]
fn a_restarted_node_comes_back_as_a_follower_with_its_term_and_a_fresh_election_timer() {
    let mut cluster = started(3, &config(false, false), 6);
    let leader = cluster.run_until_leader(2_000 * MS);
    let term = cluster.nodes[leader].term();
    cluster.crash(leader);
    let mark = cluster.mark();
    cluster.restart(leader);
    let node = &cluster.nodes[leader];
    assert_eq!(node.role(), Role::Follower);
    assert_eq!(node.term(), term);
    assert_eq!(
        node.durable.voted_for.map(|id| id.index()),
        Some(leader),
        "it voted for itself"
    );
    assert_eq!(node.known_leader(), None);
    assert_eq!(cluster.write_token(leader), None);
    assert!(cluster.timer_armed(leader, RaftTimer::Election));
    assert!(
        !cluster
            .observed_since(leader, mark)
            .contains(&Observed::SteppedDown),
        "the engine accounts for the crash; a restart claims nothing and renounces nothing"
    );
}

#[test]
fn a_restarted_node_keeps_its_log_and_rejoins_the_cluster() {
    let lengths = RaftConfig {
        log_lengths: vec![2, 7, 2],
        ..config(false, false)
    };
    let mut cluster = started(3, &lengths, 8);
    let leader = cluster.run_until_leader(2_000 * MS);
    let follower = (0..3).find(|i| *i != leader).expect("a follower");
    cluster.crash(follower);
    cluster.run_for(500 * MS);
    cluster.restart(follower);
    cluster.run_for(500 * MS);
    assert_eq!(
        cluster.nodes[follower].log_position().last_index,
        [2, 7, 2][follower]
    );
    assert_eq!(
        cluster.nodes[follower].known_leader().map(|id| id.index()),
        Some(cluster.leader())
    );
}

/// Random crash-restarts of any node during constant elections (narrow timeouts make
/// candidates collide). Returns the number of seeds with two leaders in one term.
fn seeds_with_two_leaders_in_a_term(variant: RaftVariant, seeds: u64) -> usize {
    use splitbrain_sim::{SimRng, StreamId};
    let settings = RaftConfig {
        election_timeout_min_ns: 10 * MS,
        election_timeout_max_ns: 14 * MS,
        heartbeat_ns: 3 * MS,
        variant,
        ..RaftConfig::default()
    };
    let mut violating = 0;
    for seed in 0..seeds {
        let mut cluster = started(3, &settings, seed);
        let mut faults = SimRng::stream(seed, StreamId::FAULTS);
        for _ in 0..100 {
            cluster.run_for(faults.between(MS, 20 * MS));
            let victim = faults.index(3);
            cluster.crash(victim);
            cluster.run_for(faults.between(0, 3 * MS));
            cluster.restart(victim);
        }
        if cluster.claims.values().any(|who| who.len() > 1) {
            violating += 1;
        }
    }
    violating
}

#[test]
fn random_restarts_during_elections_make_the_forgetful_variant_elect_two_leaders_in_a_term() {
    // Deterministic: 3 of these 50 seeds violate election safety.
    assert!(seeds_with_two_leaders_in_a_term(RaftVariant::ForgetsVoteOnRestart, 50) > 0);
}

#[test]
fn random_restarts_during_elections_never_give_correct_raft_two_leaders_in_a_term() {
    assert_eq!(
        seeds_with_two_leaders_in_a_term(RaftVariant::Correct, 50),
        0
    );
}

#[test]
#[should_panic(expected = "n0's term went backwards")]
fn the_forgets_term_on_restart_variant_comes_back_in_term_zero() {
    let config = RaftConfig {
        variant: RaftVariant::ForgetsTermOnRestart,
        ..config(false, false)
    };
    let mut cluster = unstarted(3, &config, 1);
    cluster.fire(1, RaftTimer::Election);
    cluster.deliver(1, 0, "RequestVote");
    assert_eq!(cluster.nodes[0].term(), 1);
    cluster.crash(0);
    // The harness checks after every step that no term goes backwards: this restart trips it.
    cluster.restart(0);
}
