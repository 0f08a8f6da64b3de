//! Crashes and recoveries: the durable epoch, the takeover by a recovering higher id, and the
//! flapping when it keeps crashing.

use super::settled;
use crate::bully::node::Role;
use crate::bully::BullyTimer;
use crate::testing::MS;
use splitbrain_sim::{Process, Signal};

#[test]
fn a_recovering_higher_id_takes_over_within_a_heartbeat_in_a_higher_epoch() {
    for seed in 0..10 {
        let mut cluster = settled(5, seed);
        cluster.crash(4);
        assert_eq!(cluster.run_until_leader(1_000 * MS), 3);
        assert_eq!(cluster.nodes[3].term(), 2);
        cluster.run_for(500 * MS);
        cluster.restart(4);
        assert_eq!(
            cluster.nodes[4].term(),
            1,
            "the durable epoch survives the crash"
        );
        assert_eq!(cluster.nodes[4].role(), Role::Follower);
        assert!(cluster.leaders().contains(&3), "n4 listens before it acts");
        let restarted_at = cluster.now();
        // n3's next heartbeat (at most 50 ms away) tells n4 that a lower id leads.
        cluster.run_for(70 * MS);
        assert_eq!(cluster.leader(), 4, "seed {seed}");
        let (at, node, epoch, token) = *cluster.claims_since(0).last().expect("a claim");
        assert_eq!((node, epoch, token), (4, 3, 3 * 5 + 4));
        assert!(at - restarted_at <= 60 * MS);
        cluster.run_for(50 * MS);
        assert!(cluster.all_recognise(4));
        cluster.assert_one_leader_per_term();
    }
}

#[test]
fn a_restarted_node_does_not_announce_an_epoch_it_missed_while_down() {
    for seed in 0..10 {
        let mut cluster = settled(5, seed);
        cluster.crash(4);
        cluster.run_until_leader(1_000 * MS); // n3, epoch 2
        cluster.crash(3);
        cluster.run_until_leader(1_000 * MS); // n2, epoch 3
        cluster.run_for(100 * MS);
        // n4 comes back remembering epoch 1: announcing 1 + 1 would repeat n3's epoch.
        cluster.restart(4);
        cluster.run_for(200 * MS);
        assert_eq!(cluster.leader(), 4);
        assert_eq!(cluster.nodes[4].term(), 4, "seed {seed}");
        cluster.assert_one_leader_per_term();
    }
}

#[test]
fn a_restarted_node_that_hears_nobody_elects_after_the_failure_timeout() {
    let mut cluster = settled(3, 1);
    for node in 0..3 {
        cluster.crash(node);
    }
    cluster.restart(1);
    let mark = cluster.mark();
    cluster.run_for(190 * MS);
    assert!(cluster.leaders().is_empty());
    cluster.run_for(100 * MS);
    assert_eq!(cluster.leader(), 1);
    assert_eq!(
        cluster.count_signals_since(mark, |s| *s == Signal::LeaderSuspected),
        1
    );
    assert_eq!(cluster.nodes[1].term(), 2);
}

#[test]
fn a_restarted_lower_id_follows_the_coordinator_without_an_election() {
    let mut cluster = settled(5, 2);
    cluster.crash(1);
    cluster.run_for(300 * MS);
    cluster.restart(1);
    let mark = cluster.mark();
    cluster.run_for(1_000 * MS);
    assert_eq!(cluster.leader(), 4);
    assert!(cluster.all_recognise(4));
    assert_eq!(
        cluster.count_signals_since(mark, |s| matches!(s, Signal::ElectionStarted { .. })),
        0
    );
    assert!(cluster.timer_armed(1, BullyTimer::Failure));
}

#[test]
fn a_flapping_highest_id_takes_over_every_time_it_comes_back() {
    let mut cluster = settled(5, 3);
    let mut last_epoch = 1;
    for round in 0..6 {
        cluster.crash(4);
        let interim = cluster.run_until_leader(1_000 * MS);
        assert_eq!(interim, 3, "round {round}");
        cluster.run_for(300 * MS);
        cluster.restart(4);
        cluster.run_for(150 * MS);
        assert_eq!(cluster.leader(), 4, "round {round}");
        let epoch = cluster.nodes[4].term();
        assert_eq!(
            epoch,
            last_epoch + 2,
            "one epoch for n3, one for n4's takeover"
        );
        last_epoch = epoch;
    }
    cluster.assert_one_leader_per_term();
    // Two leader changes per flap.
    let claimants: Vec<usize> = cluster.claims_since(0).iter().map(|c| c.1).collect();
    assert_eq!(claimants.len(), 13);
    assert!(claimants.windows(2).all(|w| w[0] != w[1]));
}
