//! Whole-cluster runs through the engine: every range elects and leases, the coalesced
//! heartbeats stay one message per store pair, the per-range properties fire on the broken
//! variant and stay quiet on the correct model under crashes and partitions.

use super::{MultiRaftConfig, MultiRaftLease, MultiRaftVariant};
use crate::registry::AlgorithmConfig;
use crate::run;
use splitbrain_sim::nemesis::{generate, NemesisConfig, NemesisKind};
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, NodeId, PartitionShape, RunReport, SimConfig, Target,
};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;

const EXPIRATION: MultiRaftLease = MultiRaftLease::Expiration;
const LEADER: MultiRaftLease = MultiRaftLease::Leader;
const CORRECT: MultiRaftVariant = MultiRaftVariant::Correct;
const EARLY: MultiRaftVariant = MultiRaftVariant::EarlyLease;

fn config(ranges: u64, lease: MultiRaftLease, variant: MultiRaftVariant) -> AlgorithmConfig {
    AlgorithmConfig::from(MultiRaftConfig {
        ranges,
        lease,
        variant,
        ..MultiRaftConfig::default()
    })
}

fn run_with(
    sim: SimConfig,
    ranges: u64,
    lease: MultiRaftLease,
    variant: MultiRaftVariant,
) -> RunReport {
    run(&config(ranges, lease, variant), sim, None).expect("within the default limits")
}

fn observed(report: &RunReport, kind: &str) -> u64 {
    let found = report.observations.iter().find(|o| o.kind == kind);
    found.map_or(0, |o| o.count)
}

fn sent(report: &RunReport, kind: &str) -> u64 {
    let found = report.messages.iter().find(|m| m.kind == kind);
    found.map_or(0, |m| m.sent)
}

fn broken(report: &RunReport) -> Vec<String> {
    let names = report
        .violations
        .iter()
        .map(|v| v.invariant.name().to_string());
    names.collect()
}

fn fault(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
        after: None,
    }
}

#[test]
fn every_range_of_a_healthy_cluster_elects_a_leader_and_takes_a_lease_of_either_kind() {
    for lease in [EXPIRATION, LEADER] {
        let report = run_with(SimConfig::quiet(1, 5, 12 * SEC), 60, lease, CORRECT);
        assert!(broken(&report).is_empty(), "{:?}", report.violations);
        // One election per range (a split vote may add a few), one lease per range, held
        // to the end: extended in time, or supported all along.
        let leaders = observed(&report, "range_leader");
        assert!((60..=66).contains(&leaders), "{lease:?}: {leaders} leaders");
        assert_eq!(observed(&report, "lease_start"), 60, "{lease:?}");
        assert_eq!(observed(&report, "lease_end"), 0, "{lease:?}");
    }
}

#[test]
fn heartbeats_are_one_message_per_store_pair_and_tick_whatever_the_number_of_ranges() {
    let duration_ns = 20 * SEC;
    let small = run_with(SimConfig::quiet(2, 5, duration_ns), 10, LEADER, CORRECT);
    let large = run_with(SimConfig::quiet(2, 5, duration_ns), 200, LEADER, CORRECT);
    // 5 stores, 4 peers each, a heartbeat round every 2 ticks of 500 ms: at most 20 per
    // second (a store that leads nothing a peer holds sends it none).
    let rounds = duration_ns / SEC;
    for report in [&small, &large] {
        let beats = sent(report, "Heartbeats");
        assert!(beats <= 20 * rounds, "{beats} heartbeat messages");
        assert!(beats >= 10 * rounds, "{beats} heartbeat messages");
    }
    let ratio = sent(&large, "Heartbeats") as f64 / sent(&small, "Heartbeats") as f64;
    assert!(
        ratio < 2.0,
        "20x the ranges, {ratio}x the heartbeat messages"
    );
}

#[test]
fn a_store_that_crashes_loses_its_leaderships_and_leases_to_the_others() {
    for lease in [EXPIRATION, LEADER] {
        let mut sim = SimConfig::quiet(3, 5, 20 * SEC);
        let crash = fault(8 * SEC, FaultAction::Crash(Target::Node(0)), None);
        sim.faults.push(crash);
        let report = run_with(sim, 50, lease, CORRECT);
        assert!(broken(&report).is_empty(), "{:?}", report.violations);
        // Store 0 held 30 of the 150 replicas and led about a fifth of the ranges: they
        // elect again and take new leases.
        assert!(observed(&report, "range_leader") >= 50 + 5, "{lease:?}");
        assert!(observed(&report, "lease_start") >= 50 + 5, "{lease:?}");
    }
}

fn measure(report: &RunReport, name: &str) -> f64 {
    let found = report.measures.iter().find(|m| m.name == name);
    found.map_or_else(
        || panic!("no measure {name}: {:?}", report.measures),
        |m| m.value,
    )
}

/// The blast radius of a store crash: the leases it held are lost, each until another store
/// takes it, within the lease kind's failover bound; with no fault nothing is lost.
#[test]
fn a_store_crash_is_measured_as_the_leases_it_held_lost_until_taken_again() {
    for lease in [EXPIRATION, LEADER] {
        let quiet = run_with(SimConfig::quiet(3, 5, 20 * SEC), 50, lease, CORRECT);
        assert_eq!(measure(&quiet, "ranges_lost"), 0.0, "{lease:?}");
        assert_eq!(measure(&quiet, "never_leased"), 0.0, "{lease:?}");
        let mut sim = SimConfig::quiet(3, 5, 30 * SEC);
        sim.faults
            .push(fault(8 * SEC, FaultAction::Crash(Target::Node(0)), None));
        let report = run_with(sim, 50, lease, CORRECT);
        let lost = measure(&report, "ranges_lost");
        // Store 0 held about a fifth of the 50 leases.
        assert!((5.0..=20.0).contains(&lost), "{lease:?}: {lost} lost");
        assert_eq!(
            measure(&report, "lease_moves"),
            lost,
            "{lease:?}: each moved once"
        );
        let max_s = measure(&report, "outage_max_s");
        assert!(
            max_s > 0.0 && max_s < 22.0,
            "{lease:?}: recovered, {max_s} s"
        );
        let range_s = measure(&report, "unavailable_range_s");
        assert!(range_s <= lost * max_s + 1e-9, "{lease:?}: {range_s}");
    }
}

/// The leaseholder-isolating partition: store 0 keeps its expiration leases (by its clock)
/// while the others elect new leaders.
fn isolated_store(seed: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 5, 20 * SEC);
    let isolate = FaultAction::Partition(PartitionShape::Isolate(Target::Node(0)));
    sim.faults.push(fault(8 * SEC, isolate, Some(8 * SEC)));
    sim
}

/// One cut link, between store 0 and store 1: in the ranges store 0 leads, store 1 stops
/// hearing its leader and campaigns, while the third replica still hears and supports
/// store 0.
fn cut_link(seed: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 5, 20 * SEC);
    let cut = FaultAction::Partition(PartitionShape::CutLink(Target::Node(0), Target::Node(1)));
    sim.faults.push(fault(8 * SEC, cut, Some(8 * SEC)));
    sim
}

fn assert_breaks_disjointness(report: &RunReport, case: &str) {
    assert_eq!(broken(report), ["lease_disjointness"], "{case}");
    let violation = &report.violations[0];
    assert!(
        violation.nodes.contains(&NodeId(0)),
        "{case}: {violation:?}"
    );
}

#[test]
fn an_expiration_lease_taken_without_waiting_out_the_old_one_breaks_lease_disjointness() {
    for seed in 1..=3 {
        let report = run_with(isolated_store(seed), 30, EXPIRATION, EARLY);
        assert_breaks_disjointness(&report, &format!("seed {seed}"));
    }
}

#[test]
fn a_vote_given_while_supporting_the_fortified_leader_breaks_lease_disjointness() {
    for seed in 1..=3 {
        let report = run_with(cut_link(seed), 30, LEADER, EARLY);
        assert_breaks_disjointness(&report, &format!("seed {seed}"));
    }
}

#[test]
fn the_correct_model_keeps_leases_disjoint_under_the_same_partitions() {
    for seed in 1..=3 {
        for (lease, sim) in [(EXPIRATION, isolated_store(seed)), (LEADER, cut_link(seed))] {
            let report = run_with(sim, 30, lease, CORRECT);
            let case = format!("{lease:?}, seed {seed}");
            assert!(
                broken(&report).is_empty(),
                "{case}: {:?}",
                report.violations
            );
        }
        let report = run_with(isolated_store(seed), 30, LEADER, CORRECT);
        assert!(
            broken(&report).is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        assert!(observed(&report, "lease_start") > 30, "leases moved");
    }
}

/// The fault kinds of the safety sweep: crashes and every partition shape, message loss and
/// duplication, and clock drift (kept within the maximum offset, see [`MAX_DRIFT_PPM`]).
/// Pauses and clock jumps are left out: docs/algorithms/multi-raft.md, "What the checks
/// assume".
const SWEEP_KINDS: [NemesisKind; 9] = [
    NemesisKind::Crash,
    NemesisKind::Isolate,
    NemesisKind::MajorityMinority,
    NemesisKind::OneWay,
    NemesisKind::CutLink,
    NemesisKind::Bridge,
    NemesisKind::LossBurst,
    NemesisKind::Duplicate,
    NemesisKind::ClockDrift,
];

/// The largest drift of the sweep: 0.5%, so that two clocks drifting apart for a whole
/// 30 s run end 300 ms apart, within CockroachDB's 500 ms maximum offset (a cluster whose
/// clocks go further apart breaks the lease rules' assumption, and CockroachDB stops such
/// nodes; the drift of seed 136 at the nemesis' default 10% did break lease_disjointness).
const MAX_DRIFT_PPM: u32 = 5_000;

fn with_nemesis(seed: u64, duration_ns: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 5, duration_ns);
    let nemesis = NemesisConfig {
        kinds: SWEEP_KINDS.to_vec(),
        kinds_listed: true,
        mean_interval_ns: 2 * SEC,
        fault_duration_ns: (500 * MS, 8 * SEC),
        start_ns: SEC,
        quiet_ns: 5 * SEC,
        max_drift_ppm: MAX_DRIFT_PPM,
        ..NemesisConfig::default()
    };
    sim.faults
        .extend(generate(&nemesis, seed, 5, duration_ns).faults);
    sim.faults.sort_by_key(|f| f.at_ns);
    sim
}

#[test]
fn the_correct_model_keeps_both_properties_over_two_hundred_fault_schedules() {
    for lease in [EXPIRATION, LEADER] {
        let (mut faults, mut leases) = (0, 0);
        for seed in 1..=200 {
            let sim = with_nemesis(seed, 30 * SEC);
            faults += sim.faults.len();
            let report = run_with(sim, 12, lease, CORRECT);
            let case = format!("{lease:?}, seed {seed}");
            assert!(
                broken(&report).is_empty(),
                "{case}: {:?}",
                report.violations
            );
            leases += observed(&report, "lease_start");
        }
        // The schedules bite: faults on every seed, leases move far beyond the first 12.
        assert!(faults > 3 * 200, "{faults} faults");
        assert!(leases > 200 * 12 * 2, "{lease:?}: {leases} leases");
    }
}

#[test]
fn the_broken_variant_is_caught_by_the_same_sweep_with_either_lease() {
    for lease in [EXPIRATION, LEADER] {
        let caught = (1..=40)
            .filter(|&seed| {
                let report = run_with(with_nemesis(seed, 30 * SEC), 12, lease, EARLY);
                broken(&report).contains(&"lease_disjointness".to_string())
            })
            .count();
        assert!(caught >= 5, "{lease:?}: caught on {caught} of 40 seeds");
    }
}

#[test]
fn the_per_range_properties_are_installed_on_every_run_of_the_algorithm() {
    let names = config(10, LEADER, CORRECT).property_names();
    assert_eq!(
        names,
        [
            "range_election_safety",
            "lease_disjointness",
            "blast_radius"
        ]
    );
    let _ = Invariant::from_name("election_safety").expect("a built-in invariant");
}
