//! Fault-free clusters and leader crashes, through the engine.

use super::{fault, run, settings, struck, Outcome, MS, SEC};
use crate::raft_rs::RaftRsConfig;
use raft::StateRole;
use splitbrain_sim::{FaultAction, LivenessVerdict, SimConfig, Target};

/// Three maximum election timeouts: room for two split-vote rounds after the first.
fn election_bound_ns(config: &RaftRsConfig) -> u64 {
    3 * config.max_election_timeout_ns().unwrap()
}

/// Every member's final state agrees that `leader` leads `term`.
fn assert_settled(outcome: &Outcome, leader: usize, term: u64) {
    for (index, node) in outcome.nodes.iter().enumerate() {
        let role = if index == leader {
            StateRole::Leader
        } else {
            StateRole::Follower
        };
        assert_eq!(node.state, role, "n{index}: {node:?}");
        assert_eq!(node.term, term, "n{index}: {node:?}");
        assert_eq!(
            node.known_leader.map(|l| l.index()),
            Some(leader),
            "n{index}"
        );
        assert_eq!(node.stored_term, term, "n{index}: the hard state is stored");
    }
}

#[test]
fn a_quiet_cluster_of_three_or_five_elects_one_leader_in_time_and_keeps_it() {
    for members in [3, 5] {
        for pre_vote in [false, true] {
            let config = settings(pre_vote, false);
            for seed in 0..8 {
                let outcome = run(SimConfig::quiet(seed, members, 30 * SEC), &config);
                let report = &outcome.report;
                let case = format!("{members} members, pre_vote {pre_vote}, seed {seed}");
                assert_eq!(report.leaders.len(), 1, "{case}: {:?}", report.leaders);
                let first = &report.leaders[0];
                assert!(
                    first.at_ns <= election_bound_ns(&config),
                    "{case}: {first:?}"
                );
                assert_eq!(first.token, first.term, "{case}: the token is the term");
                assert_eq!(report.leadership_spans.len(), 1, "{case}");
                assert_eq!(report.leadership_spans[0].to_ns, report.end_ns, "{case}");
                assert!(
                    report.violations.is_empty(),
                    "{case}: {:?}",
                    report.violations
                );
                assert_settled(&outcome, first.node.index(), first.term);
            }
        }
    }
}

#[test]
fn a_crashed_leader_is_replaced_in_a_higher_term_and_rejoins_as_a_follower_after_restart() {
    let config = RaftRsConfig::default();
    for seed in 0..6 {
        let mut sim = SimConfig::quiet(seed, 5, 40 * SEC);
        sim.faults
            .push(fault(10 * SEC, FaultAction::Crash(Target::Leader)));
        sim.faults
            .push(fault(20 * SEC, FaultAction::Restart(Target::AllCrashed)));
        let outcome = run(sim, &config);
        let report = &outcome.report;
        let old = report.leaders[0].clone();
        assert_eq!(struck(report, 0), [old.node], "seed {seed}");
        assert_eq!(report.leaders.len(), 2, "seed {seed}: {:?}", report.leaders);
        let new = &report.leaders[1];
        assert_ne!(new.node, old.node, "seed {seed}");
        assert!(new.term > old.term, "seed {seed}: {new:?} after {old:?}");
        let detected_by_ns = 10 * SEC + election_bound_ns(&config);
        assert!(
            new.at_ns > 10 * SEC && new.at_ns <= detected_by_ns,
            "seed {seed}: {new:?}"
        );
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        // The old leader came back from its stored term (term_monotonic held, no violation)
        // and follows the new leader without disturbing it: one leader since.
        assert_settled(&outcome, new.node.index(), new.term);
        assert!(
            matches!(report.liveness, LivenessVerdict::Met { .. }),
            "seed {seed}: {:?}",
            report.liveness
        );
    }
}

#[test]
fn a_resigning_leader_hands_over_to_a_peer_within_a_few_messages() {
    let config = RaftRsConfig::default();
    for seed in 0..6 {
        let mut sim = SimConfig::quiet(seed, 5, 20 * SEC);
        sim.faults
            .push(fault(10 * SEC, FaultAction::Resign(Target::Leader)));
        let outcome = run(sim, &config);
        let report = &outcome.report;
        assert_eq!(report.leaders.len(), 2, "seed {seed}: {:?}", report.leaders);
        let (old, new) = (&report.leaders[0], &report.leaders[1]);
        assert_ne!(new.node, old.node, "seed {seed}");
        assert_eq!(
            new.term,
            old.term + 1,
            "seed {seed}: MsgTimeoutNow starts one election"
        );
        // raft-rs sends MsgTimeoutNow at once to an up-to-date peer, which campaigns on
        // receipt: no election timeout passes.
        assert!(new.at_ns < 10 * SEC + 100 * MS, "seed {seed}: {new:?}");
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        assert_settled(&outcome, new.node.index(), new.term);
    }
}
