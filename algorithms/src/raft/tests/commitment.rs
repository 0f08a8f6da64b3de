//! Commitment, for a Raft embedded in a replicated service (`RaftNode::embedded`, an etcd
//! member): a new leader's empty entry, proposals, the commit index on the leader and its
//! followers (paper §5.3, §5.4.2), and that plain Raft tracks none of it.

use super::harness::{config, MS};
use crate::raft::RaftNode;
use crate::testing::Cluster;
use splitbrain_sim::NodeId;

fn embedded(members: usize, seed: u64) -> Cluster<RaftNode> {
    let nodes = (0..members)
        .map(|i| RaftNode::embedded(NodeId::from(i), members, &config(false, true)))
        .collect();
    let mut cluster = Cluster::new(nodes, seed);
    cluster.start();
    cluster
}

#[test]
fn a_new_leader_commits_its_empty_entry_and_every_member_learns_it() {
    for seed in 1..=5 {
        let mut cluster = embedded(3, seed);
        let leader = cluster.run_until_leader(2000 * MS);
        cluster.run_for(200 * MS);
        let node = &cluster.nodes[leader];
        assert_eq!(node.last_index(), 1, "seed {seed}: the empty entry");
        assert_eq!(node.term_at(1), Some(node.current_term()));
        for (i, n) in cluster.nodes.iter().enumerate() {
            assert_eq!(n.commit_index(), 1, "seed {seed}: n{i}");
        }
    }
}

#[test]
fn proposals_commit_once_a_majority_has_them_and_only_on_the_leader() {
    let mut cluster = embedded(3, 7);
    let leader = cluster.run_until_leader(2000 * MS);
    cluster.run_for(200 * MS);
    let follower = (leader + 1) % 3;
    let mut refused = Some(0);
    cluster.drive(follower, |node, ctx| refused = node.propose(ctx));
    assert_eq!(refused, None, "a follower does not propose");
    // The two followers cut off: the leader's entry cannot reach a majority.
    cluster.isolate(leader);
    let mut index = None;
    cluster.drive(leader, |node, ctx| index = node.propose(ctx));
    assert_eq!(index, Some(2));
    cluster.run_for(50 * MS);
    assert_eq!(
        cluster.nodes[leader].commit_index(),
        1,
        "no majority, no commit"
    );
    cluster.heal();
    cluster.run_for(300 * MS);
    // Heartbeat answers show the followers behind; the leader catches them up and commits.
    assert!(cluster.nodes.iter().any(|n| n.is_leader()), "someone leads");
    for (i, n) in cluster.nodes.iter().enumerate() {
        if n.is_leader() {
            assert!(n.commit_index() >= 2, "n{i}: {}", n.commit_index());
        }
    }
}

#[test]
fn plain_raft_appends_no_entry_on_election_and_commits_nothing() {
    let mut cluster = super::harness::started(3, &config(false, true), 3);
    let leader = cluster.run_until_leader(2000 * MS);
    cluster.run_for(200 * MS);
    assert_eq!(cluster.nodes[leader].last_index(), 0);
    assert!(cluster.nodes.iter().all(|n| n.commit_index() == 0));
}
