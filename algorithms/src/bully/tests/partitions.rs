//! Partitions: Bully has no quorum, so every side elects its own coordinator. Two sides that
//! both lost the old coordinator announce the same epoch: the `election_safety` violation
//! the shipped scenario `bully-partition.ron` shows. The fencing tokens still differ.

use super::settled;
use crate::testing::MS;
use splitbrain_sim::Process;

#[test]
fn two_sides_without_the_coordinator_each_announce_the_same_epoch() {
    for seed in 0..10 {
        let mut cluster = settled(5, seed);
        cluster.partition(&[&[0, 1], &[2, 3], &[4]]);
        cluster.run_for(1_000 * MS);
        assert_eq!(cluster.leaders(), vec![1, 3, 4], "seed {seed}");
        assert_eq!(
            cluster
                .claims
                .get(&2)
                .map(|c| c.iter().copied().collect::<Vec<_>>()),
            Some(vec![1, 3]),
            "seed {seed}: n1 and n3 both lead epoch 2"
        );
        // Same epoch, different tokens: the resource can still tell them apart.
        assert_eq!(cluster.write_token(1), Some(2 * 5 + 1));
        assert_eq!(cluster.write_token(3), Some(2 * 5 + 3));
        assert_eq!(cluster.write_token(4), Some(5 + 4));
    }
}

#[test]
fn after_the_heal_the_highest_id_takes_over_in_a_new_epoch_that_everyone_follows() {
    for seed in 0..10 {
        let mut cluster = settled(5, seed);
        cluster.partition(&[&[0, 1], &[2, 3], &[4]]);
        cluster.run_for(1_000 * MS);
        cluster.heal();
        cluster.run_for(500 * MS);
        assert_eq!(cluster.leader(), 4, "seed {seed}");
        assert_eq!(cluster.nodes[4].term(), 3);
        assert!(cluster.all_recognise(4));
        assert!(cluster.nodes.iter().all(|n| n.term() == 3));
    }
}

#[test]
fn an_isolated_coordinator_keeps_its_epoch_while_the_rest_elect_a_higher_one() {
    for seed in 0..10 {
        let mut cluster = settled(5, seed);
        cluster.partition(&[&[0, 1, 2, 3], &[4]]);
        cluster.run_for(1_000 * MS);
        assert_eq!(cluster.leaders(), vec![3, 4]);
        assert_eq!(cluster.nodes[4].term(), 1);
        assert_eq!(cluster.nodes[3].term(), 2);
        // No epoch has two leaders: the stale coordinator is fenced, not duplicated.
        cluster.assert_one_leader_per_term();
        assert!(cluster.write_token(4) < cluster.write_token(3));
        cluster.heal();
        cluster.run_for(500 * MS);
        assert_eq!(cluster.leader(), 4);
        assert_eq!(cluster.nodes[4].term(), 3);
        cluster.assert_one_leader_per_term();
    }
}
