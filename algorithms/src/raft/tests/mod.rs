//! Whole-cluster tests of Raft election, driven by the shared deterministic in-memory
//! network of [`crate::testing`] (under Raft's rules: `harness.rs`) instead of the engine.

mod harness;

mod commitment;
mod elections;
mod measures;
mod options;
mod replication;
mod restarts;
mod timeout_draw;
mod timer_reset;
mod transfer;

use crate::raft::{info, RaftConfig};

#[test]
fn info_names_raft_and_asks_for_a_majority_within_one_maximum_election_timeout() {
    let config = RaftConfig::default();
    for (members, majority) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (7, 4)] {
        let about = info(&config, members);
        assert_eq!(about.name, "raft");
        assert_eq!(about.failure_detection_ns, config.election_timeout_max_ns);
        assert_eq!(about.min_group_for_progress, majority, "{members} members");
    }
}
