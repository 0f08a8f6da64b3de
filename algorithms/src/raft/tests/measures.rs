//! The signals behind the failover measures of issue 13, section 5: which candidates could
//! win (paper §5.4.1, the line the paper's §9.3 measurements drew with uneven logs), and
//! when a follower first hears a new leader.

use super::harness::{config, unstarted};
use crate::raft::{info, RaftConfig, RaftNode, RaftTimer};
use splitbrain_sim::{NodeId, Signal, SimRng};

fn with_logs(log_lengths: &[u64]) -> RaftConfig {
    RaftConfig {
        log_lengths: log_lengths.to_vec(),
        ..config(false, false)
    }
}

/// The dumb oracle: with every entry of term 0, a candidate could win iff its log is at
/// least as long as the majority-th shortest log (a majority then has logs no longer).
fn oracle(lengths: &[u64], me: usize) -> bool {
    let mut sorted = lengths.to_vec();
    sorted.sort_unstable();
    lengths[me] >= sorted[lengths.len() / 2]
}

#[test]
fn eligibility_agrees_with_a_naive_oracle_on_random_logs() {
    let mut rng = SimRng::stream(13, 5);
    for round in 0..2_000 {
        let members = 1 + (round % 9) as usize;
        let lengths: Vec<u64> = (0..members).map(|_| rng.between(0, 4)).collect();
        let c = with_logs(&lengths);
        for me in 0..members {
            let node = RaftNode::new(NodeId::from(me), members, &c);
            assert_eq!(node.eligible(), oracle(&lengths, me), "{lengths:?}, n{me}");
        }
    }
}

#[test]
fn only_a_candidate_that_could_win_says_so_when_it_campaigns() {
    // n0 and n1 hold 1 entry, n2..n4 hold 5: a short log gathers at most two votes.
    let mut cluster = unstarted(5, &with_logs(&[1, 1, 5, 5, 5]), 1);
    let mark = cluster.mark();
    cluster.fire(0, RaftTimer::Election);
    let eligible = |s: &Signal| matches!(s, Signal::CampaignEligible { .. });
    let started = |s: &Signal| matches!(s, Signal::ElectionStarted { .. });
    assert_eq!(cluster.count_signals_since(mark, started), 1);
    assert_eq!(
        cluster.count_signals_since(mark, eligible),
        0,
        "n0 cannot win"
    );
    let mark = cluster.mark();
    cluster.fire(2, RaftTimer::Election);
    assert_eq!(cluster.count_signals_since(mark, started), 1);
    assert_eq!(
        cluster.count_signals_since(mark, |s| *s == Signal::CampaignEligible { term: 1 }),
        1
    );
}

#[test]
fn a_follower_says_once_per_term_that_it_heard_the_new_leader() {
    let mut cluster = unstarted(3, &config(false, false), 2);
    cluster.fire(0, RaftTimer::Election);
    cluster.deliver(0, 1, "RequestVote");
    cluster.deliver(1, 0, "RequestVoteResp");
    let heard = |s: &Signal| {
        *s == Signal::LeaderHeard {
            leader: NodeId(0),
            term: 1,
        }
    };
    let mark = cluster.mark();
    cluster.deliver(0, 1, "AppendEntries");
    assert_eq!(cluster.count_signals_since(mark, heard), 1);
    // The next heartbeat of the same leader is no news.
    cluster.fire(0, RaftTimer::Heartbeat);
    let mark = cluster.mark();
    cluster.deliver(0, 1, "AppendEntries");
    assert_eq!(cluster.count_signals_since(mark, heard), 0);
}

#[test]
fn raft_declares_both_optional_signals() {
    let about = info(&RaftConfig::default(), 5);
    assert!(about.signals.campaign_eligibility);
    assert!(about.signals.leader_heard);
}
