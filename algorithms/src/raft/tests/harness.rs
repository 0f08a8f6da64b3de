//! Raft clusters on the shared in-memory network of [`crate::testing`], under Raft's rules:
//! every claim is checked (the token is the term, the claimant is a leader), and a crash
//! drops the messages on their way to the crashed node.

use crate::raft::node::Role;
use crate::raft::{RaftConfig, RaftNode};
use crate::testing::{OnCrash, Rules};
use splitbrain_sim::NodeId;

pub(crate) use crate::testing::{Observed, MS};

/// A cluster of Raft nodes. Local clocks equal true time.
pub(crate) type Cluster = crate::testing::Cluster<RaftNode>;

/// `members` nodes, not started yet.
pub(crate) fn unstarted(members: usize, config: &RaftConfig, seed: u64) -> Cluster {
    let nodes = (0..members)
        .map(|i| RaftNode::new(NodeId::from(i), members, config))
        .collect();
    let rules = Rules {
        latency_ns: (MS, 5 * MS),
        on_crash: OnCrash::DropInFlight,
        check_claim: |node: &RaftNode, term, token| {
            assert_eq!(term, token, "raft fences with its term");
            assert_eq!(node.role(), Role::Leader);
        },
    };
    Cluster::with_rules(nodes, seed, rules)
}

/// `members` nodes, each started at time zero in id order.
pub(crate) fn started(members: usize, config: &RaftConfig, seed: u64) -> Cluster {
    let mut cluster = unstarted(members, config, seed);
    cluster.start();
    cluster
}

/// Settings that keep tests short: 150-300 ms timeouts, 50 ms heartbeats.
pub(crate) fn config(pre_vote: bool, check_quorum: bool) -> RaftConfig {
    RaftConfig {
        pre_vote,
        check_quorum,
        ..RaftConfig::default()
    }
}
