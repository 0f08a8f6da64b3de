//! Ring elections in a healthy network and around crashes: who wins, epochs and tokens,
//! skipping a dead successor, restarting a stalled election.

use super::{config, ring_of, settled, ALL_CONFIGS};
use crate::ring::{RingInitiators, RingMsg, RingTimer, RingVariant};
use crate::testing::{Observed, MS};
use splitbrain_sim::{NodeId, Process, Signal};

#[test]
fn a_fresh_ring_elects_its_highest_id_in_epoch_one_whatever_the_order() {
    let orders: [&[u32]; 4] = [
        &[0, 1, 2, 3, 4],
        &[4, 3, 2, 1, 0],
        &[2, 4, 0, 3, 1],
        &[3, 0, 4, 1, 2],
    ];
    for (variant, initiators) in ALL_CONFIGS {
        for order in orders {
            let mut cluster = ring_of(order, &config(variant, initiators), 1);
            cluster.start();
            cluster.run_for(300 * MS);
            let what = format!("{variant:?}/{initiators:?} on {order:?}");
            assert_eq!(cluster.leader(), 4, "{what}");
            assert!(cluster.all_recognise(4), "{what}");
            assert_eq!(
                cluster.claims_since(0),
                vec![(cluster.claims_since(0)[0].0, 4, 1, 9)]
            );
            for node in &cluster.nodes {
                assert_eq!(node.term(), 1, "{what}");
            }
        }
    }
}

#[test]
fn heartbeats_keep_the_ring_quiet_once_a_coordinator_is_known() {
    for (variant, initiators) in ALL_CONFIGS {
        let mut cluster = settled(5, &config(variant, initiators), 2);
        let quiet = cluster.mark();
        cluster.run_for(5_000 * MS);
        assert_eq!(cluster.leader(), 4);
        let sent = cluster.sent_since(quiet);
        assert_eq!(sent.keys().copied().collect::<Vec<_>>(), vec!["Heartbeat"]);
        assert_eq!(
            cluster.count_signals_since(quiet, |s| matches!(s, Signal::LeaderSuspected)),
            0
        );
    }
}

#[test]
fn a_crashed_coordinator_is_skipped_and_the_highest_live_id_takes_over() {
    for (variant, initiators) in ALL_CONFIGS {
        for seed in 0..5 {
            let mut cluster = settled(5, &config(variant, initiators), seed);
            cluster.crash(4);
            let next = cluster.run_until_leader(2_000 * MS);
            let what = format!("{variant:?}/{initiators:?} seed {seed}");
            assert_eq!(next, 3, "{what}");
            assert_eq!(cluster.nodes[3].term(), 2, "{what}");
            cluster.run_for(500 * MS);
            assert!(cluster.all_recognise(3), "{what}");
            // n3's successor n4 is dead: its ring messages reached n0 only after a skip.
            assert!(
                cluster
                    .lost
                    .get("Election")
                    .or(cluster.lost.get("Token"))
                    .is_some(),
                "{what}"
            );
            cluster.assert_one_leader_per_term();
        }
    }
}

#[test]
fn with_detector_initiators_only_the_coordinators_successor_suspects() {
    for variant in [RingVariant::ChangRoberts, RingVariant::AllIds] {
        for order in [
            [0u32, 1, 2, 3, 4, 5],
            [5, 4, 3, 2, 1, 0],
            [3, 5, 1, 0, 4, 2],
        ] {
            let mut cluster = ring_of(&order, &config(variant, RingInitiators::Detector), 3);
            cluster.start();
            cluster.run_for(500 * MS);
            cluster.crash(5);
            let mark = cluster.mark();
            cluster.run_until_leader(2_000 * MS);
            let suspects: Vec<usize> = cluster.history[mark..]
                .iter()
                .filter(|(_, _, o)| *o == Observed::Signal(Signal::LeaderSuspected))
                .map(|(_, node, _)| *node)
                .collect();
            let at = order.iter().position(|id| *id == 5).expect("on the ring");
            let successor = order[(at + 1) % order.len()] as usize;
            assert_eq!(suspects, vec![successor], "{variant:?} on {order:?}");
        }
    }
}

#[test]
fn with_all_initiators_every_survivor_suspects_on_its_own() {
    let mut cluster = settled(
        5,
        &config(RingVariant::ChangRoberts, RingInitiators::All),
        4,
    );
    cluster.crash(4);
    let mark = cluster.mark();
    cluster.run_until_leader(2_000 * MS);
    let suspicions = cluster.count_signals_since(mark, |s| *s == Signal::LeaderSuspected);
    let campaigns =
        cluster.count_signals_since(mark, |s| matches!(s, Signal::ElectionStarted { .. }));
    assert!(suspicions >= 2, "{suspicions}");
    assert_eq!(
        campaigns, 4,
        "every survivor puts its own id in circulation once"
    );
}

#[test]
fn an_unacknowledged_message_goes_to_the_next_successor_after_the_ack_timeout() {
    let cfg = config(RingVariant::ChangRoberts, RingInitiators::Detector);
    let mut cluster = settled(4, &cfg, 5);
    // n1 is dead; n0 starts an election by hand.
    cluster.crash(1);
    let mark = cluster.mark();
    cluster.drive(0, |node, ctx| node.campaign(ctx));
    let first = cluster.sent_by_since(0, mark);
    assert!(matches!(
        first[..],
        [(
            1,
            RingMsg::Election {
                candidate: NodeId(0),
                ..
            }
        )]
    ));
    cluster.run_for(29 * MS);
    assert_eq!(
        cluster.sent_by_since(0, mark).len(),
        1,
        "still waiting for the ack"
    );
    cluster.run_for(2 * MS);
    let sent = cluster.sent_by_since(0, mark);
    assert!(
        matches!(
            sent[1],
            (
                2,
                RingMsg::Election {
                    candidate: NodeId(0),
                    ..
                }
            )
        ),
        "{sent:?}"
    );
    // n3 wins again (a new epoch), and n0's later ring messages skip n1 at once.
    cluster.run_for(500 * MS);
    assert_eq!(cluster.leader(), 3);
    assert_eq!(cluster.nodes[3].term(), 2);
    let sent = cluster.sent_by_since(0, mark);
    let ring_messages = sent.iter().filter(|(_, m)| m.seq().is_some()).count();
    assert!(ring_messages >= 3, "{sent:?}");
    assert_eq!(
        sent.iter().filter(|(to, _)| *to == 1).count(),
        1,
        "{sent:?}"
    );
}

#[test]
fn a_winner_that_dies_before_its_candidacy_returns_leaves_an_election_that_starts_again() {
    let cfg = config(RingVariant::ChangRoberts, RingInitiators::Detector);
    let mut cluster = settled(4, &cfg, 6);
    cluster.latency_ns = (MS, MS);
    cluster.crash(3);
    for node in 0..3 {
        cluster.disarm(node, RingTimer::Failure);
    }
    // Ring 0 -> 1 -> 2 -> (3, dead) -> 0, one millisecond a hop. n0 runs at t; n1 and n2
    // substitute their ids; n2's candidacy waits 30 ms on dead n3, reaches n0 at t+33 and
    // n1 at t+34. n2 dies just before it would come back: n2's id then stops at n0 (which
    // forwarded it already) and the election stalls until the participants give up.
    let mark = cluster.mark();
    cluster.drive(0, |node, ctx| node.campaign(ctx));
    cluster.run_for(34 * MS + MS / 2);
    assert!(cluster.leaders().is_empty());
    cluster.crash(2);
    let stalled = cluster.mark();
    cluster.run_for(600 * MS);
    // n2's id reaches n0, which forwarded it already, and stops there (each node forwards a
    // candidacy once per election): the stalled ring is silent, not circling n2's id.
    let during_stall = cluster.sent_since(stalled);
    assert!(
        during_stall.get("Election").copied().unwrap_or(0) <= 2,
        "{during_stall:?}"
    );
    cluster.run_for(2_400 * MS);
    assert_eq!(cluster.leader(), 1);
    assert!(
        cluster.count_signals_since(mark, |s| matches!(s, Signal::ElectionRoundFailed { .. })) >= 1
    );
    cluster.assert_one_leader_per_term();
    // The dead candidate's id went round once and stopped: nothing but heartbeats now.
    let settled = cluster.mark();
    cluster.run_for(2_000 * MS);
    let sent = cluster.sent_since(settled);
    assert_eq!(
        sent.keys().copied().collect::<Vec<_>>(),
        vec!["Heartbeat"],
        "{sent:?}"
    );
}

#[test]
fn a_restarted_node_rejoins_as_a_follower_and_the_next_election_visits_it() {
    for variant in [RingVariant::ChangRoberts, RingVariant::AllIds] {
        let cfg = config(variant, RingInitiators::Detector);
        let mut cluster = settled(5, &cfg, 7);
        cluster.crash(4);
        cluster.run_until_leader(2_000 * MS); // n3
        cluster.run_for(500 * MS);
        cluster.restart(4);
        cluster.run_for(500 * MS);
        assert_eq!(cluster.leader(), 3, "{variant:?}: no takeover on a ring");
        assert!(cluster.all_recognise(3));
        assert_eq!(
            cluster.nodes[4].term(),
            2,
            "the heartbeat brought the epoch"
        );
        // The next election (n3 dies) finds n4 again and elects it.
        cluster.crash(3);
        assert_eq!(cluster.run_until_leader(2_000 * MS), 4, "{variant:?}");
        assert_eq!(cluster.nodes[4].term(), 3);
        cluster.assert_one_leader_per_term();
    }
}

#[test]
fn a_lone_node_elects_itself() {
    for (variant, initiators) in ALL_CONFIGS {
        let mut cluster = ring_of(&[0], &config(variant, initiators), 8);
        cluster.start();
        assert_eq!(cluster.leader(), 0);
        cluster.run_for(2_000 * MS);
        assert_eq!(cluster.nodes[0].term(), 1);
        assert!(cluster.sent_since(0).is_empty());
    }
}

#[test]
fn the_fencing_token_is_the_epoch_times_the_members_plus_the_id() {
    let mut cluster = settled(5, &config(RingVariant::AllIds, RingInitiators::Detector), 9);
    assert_eq!(cluster.write_token(4), Some(5 + 4));
    cluster.crash(4);
    cluster.run_until_leader(2_000 * MS);
    assert_eq!(cluster.write_token(3), Some(2 * 5 + 3));
    assert_eq!(cluster.write_token(0), None);
}

#[test]
fn the_winner_announces_one_above_the_highest_epoch_anywhere_on_the_ring() {
    for (variant, initiators) in ALL_CONFIGS {
        let mut cluster = settled(5, &config(variant, initiators), 10);
        // n1 has seen epoch 7 somewhere (on the other side of an old partition, say).
        cluster.nodes[1].durable.highest_epoch = 7;
        cluster.crash(4);
        cluster.run_until_leader(2_000 * MS);
        let what = format!("{variant:?}/{initiators:?}");
        assert_eq!(cluster.leader(), 3, "{what}");
        assert_eq!(
            cluster.nodes[3].term(),
            8,
            "{what}: the lap brought n1's epoch"
        );
    }
}
