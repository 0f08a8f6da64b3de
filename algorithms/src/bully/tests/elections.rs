//! Elections in a healthy network: who wins, with which epoch and token, and what the
//! timeouts do.

use super::{cluster, settled};
use crate::bully::node::Role;
use crate::bully::{BullyMsg, BullyTimer};
use crate::testing::{Observed, MS};
use splitbrain_sim::{NodeId, Process, Signal};

#[test]
fn a_fresh_cluster_elects_its_highest_id_at_once_with_epoch_one() {
    for members in 1..=7 {
        let mut cluster = cluster(members, 1);
        cluster.start();
        let top = members - 1;
        assert_eq!(cluster.leaders(), vec![top], "{members} members");
        assert_eq!(cluster.claims_since(0).len(), 1);
        cluster.run_for(100 * MS);
        assert_eq!(cluster.leader(), top);
        assert!(cluster.all_recognise(top), "{members} members");
        for node in &cluster.nodes {
            assert_eq!(node.term(), 1, "{members} members");
        }
    }
}

#[test]
fn the_fencing_token_is_the_epoch_times_the_members_plus_the_id() {
    let cluster = settled(5, 2);
    assert_eq!(cluster.write_token(4), Some(5 + 4));
    for follower in 0..4 {
        assert_eq!(cluster.write_token(follower), None);
    }
    let (_, node, term, token) = cluster.claims_since(0)[0];
    assert_eq!((node, term, token), (4, 1, 9));
}

#[test]
fn heartbeats_keep_followers_from_suspecting_the_coordinator() {
    for seed in 0..5 {
        let mut cluster = settled(5, seed);
        let quiet = cluster.mark();
        cluster.run_for(10_000 * MS);
        assert_eq!(cluster.leader(), 4);
        let unrest = cluster.count_signals_since(quiet, |s| {
            matches!(s, Signal::LeaderSuspected | Signal::ElectionStarted { .. })
        });
        assert_eq!(unrest, 0, "seed {seed}");
        let sent = cluster.sent_since(quiet);
        assert_eq!(sent.keys().copied().collect::<Vec<_>>(), vec!["Heartbeat"]);
        // 200 heartbeat rounds of 4 messages in 10 s.
        assert_eq!(sent["Heartbeat"], 200 * 4);
    }
}

#[test]
fn a_crashed_coordinator_is_replaced_by_the_highest_live_id_in_a_higher_epoch() {
    for seed in 0..10 {
        let mut cluster = settled(5, seed);
        cluster.crash(4);
        let next = cluster.run_until_leader(1_000 * MS);
        assert_eq!(next, 3, "seed {seed}");
        assert_eq!(cluster.nodes[3].term(), 2);
        cluster.crash(3);
        cluster.crash(2);
        let next = cluster.run_until_leader(1_000 * MS);
        assert_eq!(next, 1, "seed {seed}");
        assert_eq!(cluster.nodes[1].term(), 3);
        cluster.run_for(100 * MS);
        assert!(cluster.all_recognise(1));
        cluster.assert_one_leader_per_term();
    }
}

#[test]
fn the_failure_detector_fires_after_the_failure_timeout_and_signals_a_suspicion() {
    let mut cluster = settled(4, 3);
    cluster.crash(3);
    let crashed_at = cluster.now();
    let mark = cluster.mark();
    cluster.run_for(150 * MS);
    assert_eq!(
        cluster.count_signals_since(mark, |s| *s == Signal::LeaderSuspected),
        0
    );
    cluster.run_for(100 * MS);
    // Each follower suspects on its own unless an ELECTION from one that suspected first
    // reaches it before its own timer fires.
    let suspicions = cluster.count_signals_since(mark, |s| *s == Signal::LeaderSuspected);
    assert!((1..=3).contains(&suspicions), "{suspicions}");
    let first_election = cluster.history[mark..]
        .iter()
        .find(|(_, _, o)| matches!(o, Observed::Signal(Signal::ElectionStarted { term: 2 })))
        .map(|(at, ..)| *at)
        .expect("an election for epoch 2");
    let waited = first_election - crashed_at;
    assert!((150 * MS..=250 * MS).contains(&waited), "{waited}");
}

#[test]
fn an_ok_followed_by_silence_makes_the_candidate_elect_again_after_the_coordinator_timeout() {
    let mut cluster = settled(4, 4);
    cluster.crash(3);
    for i in 0..3 {
        cluster.disarm(i, BullyTimer::Failure);
    }
    let mark = cluster.mark();
    // n1 suspects; n2 answers it and then crashes before it can announce itself.
    cluster.fire(1, BullyTimer::Failure);
    cluster.run_for(10 * MS);
    assert_eq!(cluster.nodes[1].role(), Role::AwaitingCoordinator);
    assert!(cluster.timer_armed(1, BullyTimer::Coordinator));
    cluster.crash(2);
    cluster.run_for(140 * MS);
    assert_eq!(
        cluster.count_signals_since(mark, |s| matches!(s, Signal::ElectionRoundFailed { .. })),
        0
    );
    cluster.run_for(20 * MS);
    assert_eq!(
        cluster.count_signals_since(mark, |s| matches!(s, Signal::ElectionRoundFailed { .. })),
        1
    );
    // The second round finds nobody above n1 alive: n1 wins after the answer timeout.
    let leader = cluster.run_until_leader(100 * MS);
    assert_eq!(leader, 1);
    assert_eq!(cluster.nodes[1].term(), 2);
}

#[test]
fn a_candidate_that_hears_no_ok_declares_itself_coordinator_after_the_answer_timeout() {
    let mut cluster = settled(3, 5);
    cluster.crash(2);
    cluster.disarm(0, BullyTimer::Failure);
    cluster.disarm(1, BullyTimer::Failure);
    cluster.fire(1, BullyTimer::Failure);
    let fired_at = cluster.now();
    assert_eq!(cluster.nodes[1].role(), Role::Candidate);
    cluster.run_for(49 * MS);
    assert!(cluster.leaders().is_empty());
    cluster.run_for(2 * MS);
    assert_eq!(cluster.leader(), 1);
    let (at, ..) = *cluster.claims_since(0).last().expect("a claim");
    assert_eq!(at - fired_at, 50 * MS);
}

#[test]
fn a_false_suspicion_re_elects_the_live_coordinator_with_a_new_epoch() {
    let mut cluster = settled(5, 6);
    // n0 misses heartbeats (a lossy moment) and suspects n4, which is alive.
    cluster.fire(0, BullyTimer::Failure);
    cluster.run_for(200 * MS);
    assert_eq!(cluster.leader(), 4);
    assert_eq!(
        cluster.nodes[4].term(),
        2,
        "one new epoch for the whole cascade"
    );
    assert!(cluster.all_recognise(4));
    cluster.assert_one_leader_per_term();
}

#[test]
fn a_late_election_message_gets_a_reminder_and_not_a_new_epoch() {
    let mut cluster = settled(3, 7);
    let mark = cluster.mark();
    // An ELECTION carrying an epoch older than n2's coordinatorship, as if sent before
    // the announcement reached its sender.
    cluster.drive(2, |node, ctx| {
        node.on_message(ctx, NodeId(0), BullyMsg::Election { epoch: 0 })
    });
    assert_eq!(
        cluster.sent_by_since(2, mark),
        vec![
            (0, BullyMsg::Ok { epoch: 1 }),
            (0, BullyMsg::Coordinator { epoch: 1 })
        ]
    );
    assert_eq!(cluster.nodes[2].term(), 1);
    assert_eq!(
        cluster.count_signals_since(mark, |s| matches!(s, Signal::ElectionStarted { .. })),
        0
    );
}

#[test]
fn a_lone_member_elects_itself_and_never_suspects_anyone() {
    let mut cluster = cluster(1, 8);
    cluster.start();
    assert_eq!(cluster.leader(), 0);
    cluster.run_for(5_000 * MS);
    assert_eq!(cluster.leader(), 0);
    assert_eq!(cluster.nodes[0].term(), 1);
    assert!(cluster.sent_since(0).is_empty());
}

#[test]
fn the_winner_announces_one_above_the_highest_epoch_its_electors_carried() {
    let mut cluster = settled(5, 11);
    // n0 has seen epoch 7 somewhere; its ELECTION carries it to every higher id.
    cluster.nodes[0].durable.highest_epoch = 7;
    cluster.crash(4);
    for i in 0..4 {
        cluster.disarm(i, BullyTimer::Failure);
    }
    cluster.fire(0, BullyTimer::Failure);
    assert_eq!(cluster.run_until_leader(1_000 * MS), 3);
    assert_eq!(cluster.nodes[3].term(), 8);
    cluster.run_for(100 * MS);
    assert!(cluster.nodes.iter().take(4).all(|n| n.term() == 8));
}
