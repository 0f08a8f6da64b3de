//! Whole-ring tests on the shared in-memory network of [`crate::testing`].

mod counts;
mod elections;
mod engine;
mod partitions;

use crate::ring::{info, RingConfig, RingInitiators, RingNode, RingTopology, RingVariant};
use crate::testing::{Cluster, MS};
use splitbrain_sim::NodeId;
use std::sync::Arc;

/// Settings with the given variant and initiators, defaults otherwise.
pub(crate) fn config(variant: RingVariant, initiators: RingInitiators) -> RingConfig {
    RingConfig {
        variant,
        initiators,
        ..RingConfig::default()
    }
}

/// A ring with exactly this order (ids in ring order), not started.
pub(crate) fn ring_of(order: &[u32], config: &RingConfig, seed: u64) -> Cluster<RingNode> {
    let topology = Arc::new(RingTopology::from_order(
        order.iter().map(|i| NodeId(*i)).collect(),
    ));
    let nodes = (0..order.len())
        .map(|i| RingNode::new(NodeId::from(i), config, Arc::clone(&topology)))
        .collect();
    Cluster::new(nodes, seed)
}

/// An ascending ring of `members`, started and settled on its first coordinator.
pub(crate) fn settled(members: usize, config: &RingConfig, seed: u64) -> Cluster<RingNode> {
    let order: Vec<u32> = (0..members as u32).collect();
    let mut cluster = ring_of(&order, config, seed);
    cluster.start();
    cluster.run_for(500 * MS);
    cluster
}

/// Every variant and initiator choice.
pub(crate) const ALL_CONFIGS: [(RingVariant, RingInitiators); 4] = [
    (RingVariant::ChangRoberts, RingInitiators::All),
    (RingVariant::ChangRoberts, RingInitiators::Detector),
    (RingVariant::AllIds, RingInitiators::All),
    (RingVariant::AllIds, RingInitiators::Detector),
];

#[test]
fn info_names_ring_and_bounds_detection_by_the_failure_timeout_and_two_laps() {
    let config = RingConfig::default();
    for members in [1, 5, 1000] {
        let about = info(&config, members);
        assert_eq!(about.name, "ring");
        assert_eq!(about.min_group_for_progress, 1);
        assert_eq!(
            about.failure_detection_ns,
            config.failure_timeout_ns + 3 * members as u64 * config.ack_timeout_ns
        );
    }
}
