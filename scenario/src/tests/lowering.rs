//! How written values become engine values.

use super::*;
use splitbrain_sim::TimerClock;

#[test]
fn the_full_example_lowers_to_engine_terms() {
    let scenario = parsed(FULL_EXAMPLE);
    assert_eq!(scenario.name, "raft-leader-pause");
    assert_eq!(scenario.sim.seed, 7);
    assert_eq!(scenario.sim.liveness_bound_ns, Some(5 * S));
    assert_eq!(
        scenario.algorithm,
        AlgorithmConfig::from(RaftConfig {
            election_timeout_min_ns: 150 * MS,
            election_timeout_max_ns: 300 * MS,
            heartbeat_ns: 50 * MS,
            pre_vote: true,
            check_quorum: true,
            log_lengths: vec![3, 3, 2, 2, 1],
            variant: RaftVariant::Correct,
            timer_reset: RaftTimerReset::OnAnyStepDown,
            propose_every_ns: None,
            timeout_draw: RaftTimeoutDraw::EveryRestart,
        })
    );
    assert_eq!(
        scenario.sim.clocks,
        ClockConfig {
            max_drift_ppm: 100,
            max_offset_ns: 0,
            per_node: vec![NodeClock {
                node: 2,
                drift_ppm: 5000,
                offset_ns: S as i64,
                timers: TimerClock::Monotonic,
            }],
            service: None,
        }
    );
    assert_eq!(
        scenario.sim.network.default.latency,
        Latency::Uniform(MS, 10 * MS)
    );
    assert_eq!(scenario.sim.network.overrides[0].link.loss_ppm, 200_000);
    let actions: Vec<&FaultAction> = scenario.sim.faults.iter().map(|f| &f.action).collect();
    assert_eq!(
        actions,
        vec![
            &FaultAction::Crash(Target::Leader),
            &FaultAction::Restart(Target::AllCrashed),
            &FaultAction::Stall(Target::Leader, 20 * S),
            &FaultAction::Pause(Target::Node(1), 3 * S),
            &FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
            &FaultAction::Partition(PartitionShape::Groups(vec![vec![0, 1], vec![2, 3, 4]])),
            &FaultAction::Partition(PartitionShape::MajorityMinority(Target::Leader)),
            &FaultAction::Partition(PartitionShape::OneWay {
                from: Target::Leader,
                to: Target::All
            }),
            &FaultAction::Partition(PartitionShape::CutLink(Target::Node(0), Target::Node(1))),
            &FaultAction::Partition(PartitionShape::Bridge(Target::Node(2))),
            &FaultAction::Heal,
            &FaultAction::ClockJump(Target::Node(2), -3 * S as i64),
            &FaultAction::ClockDrift(Target::Node(2), 50_000),
            &FaultAction::Loss(300_000),
            &FaultAction::Duplicate(100_000),
            &FaultAction::Resign(Target::Leader),
            &FaultAction::Pause(Target::Leader, S),
        ]
    );
    assert_eq!(
        scenario.sim.faults[16].after,
        Some(splitbrain_sim::Trigger {
            event: splitbrain_sim::TriggerEvent::Sent("AppendEntries".into()),
            by: splitbrain_sim::Actor::Leader,
            nth: 3,
            delay_ns: 10 * MS,
        })
    );
    assert_eq!(scenario.sim.faults[0].heal_after_ns, Some(2 * S));
    assert_eq!(scenario.sim.faults[13].heal_after_ns, Some(2 * S));
    assert_eq!(scenario.sim.faults[13].at_ns, 45 * S);
}

#[test]
fn probabilities_round_to_the_nearest_part_per_million() {
    let scenario = parsed("(algorithm: Raft(), network: (loss: 0.0000004, duplicate: 0.0000006))");
    assert_eq!(scenario.sim.network.default.loss_ppm, 0);
    assert_eq!(scenario.sim.network.default.duplicate_ppm, 1);
    let scenario = parsed("(algorithm: Raft(), network: (loss: 1, duplicate: 0))");
    assert_eq!(scenario.sim.network.default.loss_ppm, 1_000_000);
}

#[test]
fn expectations_name_safety_invariants_as_a_set() {
    let scenario =
        parsed("(algorithm: Raft(), expect: Violates([fencing_safety, election_safety]))");
    let expected = [Invariant::ElectionSafety, Invariant::FencingSafety]
        .into_iter()
        .collect();
    assert_eq!(scenario.expect, Expect::Violates(expected));
}

#[test]
fn exponential_latency_has_a_zero_minimum_unless_given() {
    let scenario = parsed(r#"(algorithm: Raft(), network: (latency: Exponential(mean: "5ms")))"#);
    assert_eq!(
        scenario.sim.network.default.latency,
        Latency::Exponential {
            mean_ns: 5 * MS,
            min_ns: 0
        }
    );
}

#[test]
fn bully_and_ring_settings_lower_to_their_configs() {
    let scenario = parsed(
        r#"(algorithm: Bully(heartbeat: "10ms", failure_timeout: "1s", answer_timeout: "25ms",
            coordinator_timeout: "1m"))"#,
    );
    assert_eq!(
        scenario.algorithm,
        AlgorithmConfig::from(BullyConfig {
            heartbeat_ns: 10 * MS,
            failure_timeout_ns: S,
            answer_timeout_ns: 25 * MS,
            coordinator_timeout_ns: 60 * S,
        })
    );
    assert_eq!(scenario.algorithm.name(), "bully");
    let scenario = parsed(
        r#"(algorithm: Ring(variant: AllIds, order: Random, initiators: All, heartbeat: "20ms",
            failure_timeout: "100ms", ack_timeout: "7ms"))"#,
    );
    assert_eq!(
        scenario.algorithm,
        AlgorithmConfig::from(RingConfig {
            variant: RingVariant::AllIds,
            order: RingOrder::Random,
            initiators: RingInitiators::All,
            heartbeat_ns: 20 * MS,
            failure_timeout_ns: 100 * MS,
            ack_timeout_ns: 7 * MS,
        })
    );
    assert_eq!(scenario.algorithm.name(), "ring");
}
