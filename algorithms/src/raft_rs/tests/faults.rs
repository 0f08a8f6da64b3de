//! Pre-vote and check-quorum under partitions, through the engine; each option shown against
//! a run without it, so the tests can tell the options apart.

use super::{fault, run, settings, struck, SEC};
use raft::StateRole;
use splitbrain_sim::{FaultAction, PartitionShape, SimConfig, Target};

/// A 5-member run in which a follower is cut off from everyone at 10 s, for good.
fn isolated_follower(seed: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 5, 30 * SEC);
    sim.faults.push(fault(
        10 * SEC,
        FaultAction::Partition(PartitionShape::Isolate(Target::Follower)),
    ));
    sim
}

/// A 5-member run in which the leader is cut off from everyone at 10 s, for good.
fn isolated_leader(seed: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 5, 20 * SEC);
    sim.faults.push(fault(
        10 * SEC,
        FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
    ));
    sim
}

#[test]
fn with_pre_vote_an_isolated_follower_keeps_its_term_and_without_it_the_term_climbs() {
    for seed in 0..6 {
        for pre_vote in [true, false] {
            let outcome = run(isolated_follower(seed), &settings(pre_vote, false));
            let report = &outcome.report;
            let cut_off = struck(report, 0)[0].index();
            let term_at_cut = report.leaders[0].term;
            let node = &outcome.nodes[cut_off];
            if pre_vote {
                // raft-rs `Raft::hup`: with pre_vote, a timeout campaigns as a pre-candidate
                // at the same term; only a won pre-vote raises it.
                assert_eq!(node.term, term_at_cut, "seed {seed}: {node:?}");
                assert_eq!(node.state, StateRole::PreCandidate, "seed {seed}");
                assert!(report.counters.pre_votes_started >= 10, "seed {seed}");
            } else {
                // Twenty seconds alone: at least ten timeouts of at most two seconds each.
                assert!(node.term >= term_at_cut + 10, "seed {seed}: {node:?}");
                assert_eq!(node.state, StateRole::Candidate, "seed {seed}");
            }
            assert_eq!(
                report.leaders.len(),
                1,
                "seed {seed}: the majority keeps its leader"
            );
            assert!(
                report.violations.is_empty(),
                "seed {seed}: {:?}",
                report.violations
            );
        }
    }
}

#[test]
fn with_check_quorum_an_isolated_leader_steps_down_and_without_it_leads_on() {
    for seed in 0..6 {
        for check_quorum in [true, false] {
            let config = settings(false, check_quorum);
            let outcome = run(isolated_leader(seed), &config);
            let report = &outcome.report;
            let old = report.leaders[0].clone();
            assert_eq!(struck(report, 0), [old.node], "seed {seed}");
            assert_eq!(
                report.leaders.len(),
                2,
                "seed {seed}: the majority elects anew"
            );
            let old_span = report
                .leadership_spans
                .iter()
                .find(|span| span.node == old.node)
                .unwrap();
            let node = &outcome.nodes[old.node.index()];
            if check_quorum {
                // raft-rs `Raft::tick_heartbeat` checks the quorum every election_tick
                // ticks (`MsgCheckQuorum`); the first check after the cut may still count
                // the peers' last answers, the second steps down.
                let election_ns = config.election_tick as u64 * config.tick_ns;
                assert!(
                    old_span.to_ns <= 10 * SEC + 2 * election_ns + config.tick_ns,
                    "seed {seed}: {old_span:?}"
                );
                assert_ne!(node.state, StateRole::Leader, "seed {seed}");
                assert_eq!(node.known_leader, None, "seed {seed}");
            } else {
                assert_eq!(old_span.to_ns, report.end_ns, "seed {seed}: {old_span:?}");
                assert_eq!(node.state, StateRole::Leader, "seed {seed}");
                assert!(report.overlap_ns > 5 * SEC, "seed {seed}");
            }
            assert!(
                report.violations.is_empty(),
                "seed {seed}: {:?}",
                report.violations
            );
        }
    }
}
