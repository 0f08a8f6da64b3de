//! Partitions: a ring has no quorum, so every side that lost its coordinator elects one.
//! Two such sides announce the same epoch: the `election_safety` violation that
//! `scenarios/ring-partition.ron` shows.

use super::{config, ring_of, ALL_CONFIGS};
use crate::testing::MS;
use splitbrain_sim::Process;

#[test]
fn two_sides_without_the_coordinator_each_announce_the_same_epoch() {
    for (variant, initiators) in ALL_CONFIGS {
        let mut cluster = ring_of(&[0, 1, 2, 3, 4, 5], &config(variant, initiators), 1);
        cluster.start();
        cluster.run_for(500 * MS);
        assert_eq!(cluster.leader(), 5);
        cluster.partition(&[&[0, 1, 2], &[3, 4], &[5]]);
        cluster.run_for(3_000 * MS);
        let what = format!("{variant:?}/{initiators:?}");
        assert_eq!(cluster.leaders(), vec![2, 4, 5], "{what}");
        let epoch_two: Vec<usize> = cluster.claims[&2].iter().copied().collect();
        assert_eq!(epoch_two, vec![2, 4], "{what}");
        assert_eq!(cluster.write_token(2), Some(2 * 6 + 2));
        assert_eq!(cluster.write_token(4), Some(2 * 6 + 4));
    }
}

#[test]
fn after_the_heal_everyone_follows_the_highest_epoch_then_id() {
    for (variant, initiators) in ALL_CONFIGS {
        let mut cluster = ring_of(&[0, 1, 2, 3, 4, 5], &config(variant, initiators), 2);
        cluster.start();
        cluster.run_for(500 * MS);
        cluster.partition(&[&[0, 1, 2], &[3, 4], &[5]]);
        cluster.run_for(3_000 * MS);
        cluster.heal();
        cluster.run_for(500 * MS);
        let what = format!("{variant:?}/{initiators:?}");
        // (epoch 2, n4) is the highest announcement: n2 and the stale n5 give way to it.
        assert_eq!(cluster.leader(), 4, "{what}");
        assert!(cluster.all_recognise(4), "{what}");
        assert!(cluster.nodes.iter().all(|n| n.term() == 2), "{what}");
    }
}

#[test]
fn an_isolated_coordinator_keeps_its_epoch_while_the_rest_elect_a_higher_one() {
    for (variant, initiators) in ALL_CONFIGS {
        let mut cluster = ring_of(&[3, 0, 4, 1, 2], &config(variant, initiators), 3);
        cluster.start();
        cluster.run_for(500 * MS);
        cluster.partition(&[&[0, 1, 2, 3], &[4]]);
        cluster.run_for(3_000 * MS);
        assert_eq!(cluster.leaders(), vec![3, 4]);
        assert_eq!(cluster.nodes[4].term(), 1);
        assert_eq!(cluster.nodes[3].term(), 2);
        cluster.assert_one_leader_per_term();
        cluster.heal();
        cluster.run_for(500 * MS);
        assert_eq!(cluster.leader(), 3, "{variant:?}/{initiators:?}");
        cluster.assert_one_leader_per_term();
    }
}
