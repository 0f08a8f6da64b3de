//! Whole-cluster tests of the Bully algorithm on the shared in-memory network of
//! [`crate::testing`].

mod counts;
mod elections;
mod partitions;
mod restarts;

use crate::bully::{info, BullyConfig, BullyNode};
use crate::testing::{Cluster, MS};
use splitbrain_sim::NodeId;

/// A cluster of `members` Bully nodes with the default settings, not started.
pub(crate) fn cluster(members: usize, seed: u64) -> Cluster<BullyNode> {
    let config = BullyConfig::default();
    let nodes = (0..members)
        .map(|i| BullyNode::new(NodeId::from(i), members, &config))
        .collect();
    Cluster::new(nodes, seed)
}

/// A started cluster that has settled on its first coordinator (the highest id).
pub(crate) fn settled(members: usize, seed: u64) -> Cluster<BullyNode> {
    let mut cluster = cluster(members, seed);
    cluster.start();
    cluster.run_for(100 * MS);
    cluster
}

#[test]
fn info_names_bully_and_lets_a_single_node_make_progress() {
    let config = BullyConfig::default();
    for members in [1, 2, 5, 1000] {
        let about = info(&config, members);
        assert_eq!(about.name, "bully");
        assert_eq!(about.min_group_for_progress, 1);
        assert_eq!(
            about.failure_detection_ns,
            config.failure_timeout_ns + config.answer_timeout_ns + config.coordinator_timeout_ns
        );
    }
}
