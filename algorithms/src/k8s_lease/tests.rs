//! The Kubernetes Lease lock on the engine.

use super::*;
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, PartitionShape, RunReport, Sim, SimConfig, Target,
    NANOS_PER_MILLI,
};

const S: u64 = 1_000_000_000;

fn run(variant: K8sVariant, fencing: bool, faults: Vec<FaultSpec>) -> RunReport {
    let config = K8sConfig {
        variant,
        ..K8sConfig::default()
    };
    let mut sim = SimConfig::quiet(3, 3, 15 * S);
    sim.write_every_ns = 100 * NANOS_PER_MILLI;
    sim.fencing = fencing;
    sim.faults = faults;
    Sim::new(sim, info(&config, 3), K8sProcess::cluster(3, &config)).run()
}

#[test]
fn one_leader_is_elected_and_a_crash_fails_over_after_the_lease_duration() {
    let report = run(
        K8sVariant::Lease,
        true,
        vec![FaultSpec {
            at_ns: 5 * S,
            action: FaultAction::Crash(Target::Leader),
            // Restarted sooner, the old leader would find itself still the holder and renew
            // its own lease (client-go does the same for a restarted pod of one identity).
            heal_after_ns: Some(5 * S),
        }],
    );
    assert!(
        report.violated_safety().is_empty(),
        "{:?}",
        report.violations
    );
    assert_eq!(report.leaders.len(), 2, "{:?}", report.leaders);
    let takeover = report.leaders[1].at_ns - 5 * S;
    // Candidates count the lease duration from their own sight of the last change, which
    // can be up to one retry period older than the crash.
    assert!(takeover >= 1_300 * NANOS_PER_MILLI, "{takeover}");
    assert!(takeover <= 1_900 * NANOS_PER_MILLI, "{takeover}");
}

#[test]
fn a_stalled_leader_is_fenced_and_caught_without_fencing() {
    // The stall must strike the workload's handler for a write to be decided before it; try
    // ten phases of the 100ms write tick.
    let stall = |k: u64| {
        vec![FaultSpec {
            at_ns: 5 * S + k * 10 * NANOS_PER_MILLI,
            action: FaultAction::Stall(Target::Leader, 3 * S),
            heal_after_ns: None,
        }]
    };
    for variant in [K8sVariant::Lease, K8sVariant::DbRow] {
        let mut caught = 0;
        for k in 0..10 {
            assert!(run(variant, true, stall(k)).violated_safety().is_empty());
            if run(variant, false, stall(k)).violated_safety() == vec![Invariant::FencingSafety] {
                caught += 1;
            }
        }
        assert!(caught > 0, "{variant:?}: an unfenced stall is never caught");
    }
}

#[test]
fn a_partitioned_leader_steps_down_at_its_renew_deadline_before_anyone_takes_over() {
    let report = run(
        K8sVariant::Lease,
        false,
        vec![FaultSpec {
            at_ns: 5 * S,
            action: FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
            heal_after_ns: Some(3 * S),
        }],
    );
    assert!(
        report.violated_safety().is_empty(),
        "{:?}",
        report.violations
    );
    assert_eq!(report.overlap_ns, 0);
}
