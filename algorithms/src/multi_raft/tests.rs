//! Whole-cluster runs through the engine: every range elects and leases, the coalesced
//! heartbeats stay one message per store pair, the per-range properties fire on the broken
//! variant and stay quiet on the correct model under crashes and partitions.

use super::{MultiRaftConfig, MultiRaftLease, MultiRaftVariant};
use crate::registry::AlgorithmConfig;
use crate::run;
use splitbrain_sim::nemesis::{generate, NemesisConfig, NemesisKind};
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, Latency, NodeId, PartitionShape, RunReport, SimConfig,
    Target,
};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;

const EXPIRATION: MultiRaftLease = MultiRaftLease::Expiration;
const EPOCH: MultiRaftLease = MultiRaftLease::Epoch;
const LEADER: MultiRaftLease = MultiRaftLease::Leader;
const KINDS: [MultiRaftLease; 3] = [EXPIRATION, EPOCH, LEADER];
const CORRECT: MultiRaftVariant = MultiRaftVariant::Correct;
const EARLY: MultiRaftVariant = MultiRaftVariant::EarlyLease;
const REUSED: MultiRaftVariant = MultiRaftVariant::ReusedSequence;

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

/// The blast radius of a store crash: the ranges it led and leased are unavailable, each
/// until another store leads it and takes its lease; with no fault nothing is lost.
#[test]
fn a_store_crash_is_measured_as_the_ranges_unavailable_until_led_and_leased_again() {
    for lease in KINDS {
        let quiet = run_with(SimConfig::quiet(3, 5, 20 * SEC), 50, lease, CORRECT);
        assert_eq!(measure(&quiet, "ranges_lost"), 0.0, "{lease:?}");
        assert_eq!(measure(&quiet, "never_available"), 0.0, "{lease:?}");
        // Store 4 holds no replica of the liveness range (0, 1, 2): the others keep
        // heartbeating their liveness records.
        let mut sim = SimConfig::quiet(3, 5, 30 * SEC);
        sim.faults
            .push(fault(8 * SEC, FaultAction::Crash(Target::Node(4)), None));
        let report = run_with(sim, 50, lease, CORRECT);
        assert!(broken(&report).is_empty(), "{:?}", report.violations);
        let lost = measure(&report, "ranges_lost");
        // Store 4 led and leased about a fifth of the 50 ranges.
        assert!((5.0..=20.0).contains(&lost), "{lease:?}: {lost} lost");
        let moved = measure(&report, "lease_moves") - measure(&report, "lease_transfers");
        assert_eq!(moved, lost, "{lease:?}: the moves not by rebalancing");
        let max_s = measure(&report, "outage_max_s");
        assert!(
            max_s > 0.0 && max_s < 22.0,
            "{lease:?}: recovered, {max_s} s"
        );
        // Every stretch counted: the failures', and the handovers of rebalancing.
        let handovers = measure(&report, "handovers");
        let handover_s = if handovers > 0.0 {
            handovers * measure(&report, "handover_max_s")
        } else {
            0.0
        };
        let range_s = measure(&report, "unavailable_range_s");
        assert!(
            range_s <= lost * max_s + handover_s + 1e-9,
            "{lease:?}: {range_s}"
        );
    }
}

/// CockroachDB's failover table (`pkg/base/config.go`, the comment on
/// `defaultRangeLeaseDuration`, generated by `TestDefaultRaftConfig`), in seconds: the
/// fastest and slowest total failover of each path, RTTs of 10-400 ms.
const RAFT_ELECTION_S: (f64, f64) = (1.03, 5.20);
const EXPIRATION_LEASE_S: (f64, f64) = (3.01, 6.40);
const EPOCH_LEASE_S: (f64, f64) = (3.03, 7.20);
const LEADER_LEASE_S: (f64, f64) = (2.04, 6.70);

/// 7 stores, one-way latency 5-200 ms (RTT 10-400 ms, the table's), store 6 crashing for
/// good at 10 s (it holds no replica of the liveness range).
fn crash_of_store_6(seed: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 7, 25 * SEC);
    sim.network.default.latency = Latency::Uniform(5 * MS, 200 * MS);
    sim.faults
        .push(fault(10 * SEC, FaultAction::Crash(Target::Node(6)), None));
    sim
}

/// Over seeds 1-20, the fastest and the slowest one-round failover of every range the
/// crash struck, and the share of its elections that took more than one round.
fn failover_spread(lease: MultiRaftLease, of: &str) -> (f64, f64, f64) {
    let (mut fastest, mut slowest, mut multi, mut lost) = (f64::MAX, 0.0f64, 0.0, 0.0);
    for seed in 1..=20 {
        let report = run_with(crash_of_store_6(seed), 210, lease, CORRECT);
        assert!(broken(&report).is_empty(), "{lease:?}, seed {seed}");
        lost += measure(&report, "ranges_lost");
        assert!(measure(&report, "ranges_lost") >= 10.0, "seed {seed}");
        fastest = fastest.min(measure(&report, &format!("{of}_min_s")));
        slowest = slowest.max(measure(&report, &format!("{of}_max_one_round_s")));
        multi += measure(&report, "multi_round_elections");
    }
    (fastest, slowest, multi / lost)
}

fn assert_within(case: &str, (fastest, slowest): (f64, f64), (low, high): (f64, f64)) {
    assert!(
        low <= fastest && slowest <= high,
        "{case}: {fastest:.2}-{slowest:.2} s, the table's {low:.2}-{high:.2} s"
    );
}

/// The four rows of the failover table, reproduced by a crash of one store of seven under
/// each lease kind: every range's unavailability (its lease held by its leader again)
/// falls within the row of its lease kind, and every range's time without a leader
/// within the Raft election row (without fortification: expiration leases). The table
/// counts one election round; a split vote (two candidates in one term) costs another
/// randomized timeout, so ranges whose election took more terms are counted apart.
#[test]
fn the_failover_table_of_cockroachdb_holds_for_each_lease_kind_over_seeds_1_to_20() {
    let (fastest, slowest, _) = failover_spread(EXPIRATION, "leaderless");
    assert_within("Raft election", (fastest, slowest), RAFT_ELECTION_S);
    for (lease, row) in [
        (EXPIRATION, EXPIRATION_LEASE_S),
        (EPOCH, EPOCH_LEASE_S),
        (LEADER, LEADER_LEASE_S),
    ] {
        let (fastest, slowest, multi) = failover_spread(lease, "outage");
        assert_within(&format!("{lease:?}"), (fastest, slowest), row);
        // Split votes, and candidates ignored by followers that heard the leader within
        // the election timeout (CheckQuorum), are the exception.
        assert!(
            multi < 0.4,
            "{lease:?}: {multi:.2} of the elections multi-round"
        );
    }
}

/// Store 3 is isolated for 2 s (long enough for some of its ranges to elect another
/// leader, too short for its liveness record to expire), then cut from store 4 alone for
/// 30 s. With epoch leases, a range whose lease store 3 keeps and whose leadership went
/// to store 4 is unavailable for the whole cut: store 3 heartbeats its liveness record
/// and cannot be replaced, store 4 cannot hand it the leadership. Leader leases follow
/// the leader, so no range waits for the cut to heal.
fn leaseholder_cut_from_leader(seed: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 5, 50 * SEC);
    sim.network.default.latency = Latency::Uniform(5 * MS, 50 * MS);
    let isolate = FaultAction::Partition(PartitionShape::Isolate(Target::Node(3)));
    sim.faults.push(fault(10 * SEC, isolate, Some(2 * SEC)));
    let cut = PartitionShape::CutLink(Target::Node(3), Target::Node(4));
    sim.faults
        .push(fault(12 * SEC, FaultAction::Partition(cut), Some(30 * SEC)));
    sim
}

#[test]
fn epoch_leases_leave_a_leaseholder_cut_from_its_leader_unavailable_and_leader_leases_heal() {
    let mut hazard_seeds = 0;
    for seed in 1..=20 {
        let epoch = run_with(leaseholder_cut_from_leader(seed), 100, EPOCH, CORRECT);
        let leader = run_with(leaseholder_cut_from_leader(seed), 100, LEADER, CORRECT);
        for report in [&epoch, &leader] {
            assert!(
                broken(report).is_empty(),
                "seed {seed}: {:?}",
                report.violations
            );
        }
        if measure(&epoch, "outage_max_s") >= 29.0 {
            hazard_seeds += 1;
        }
        let healed = measure(&leader, "outage_max_s");
        assert!(
            healed.is_nan() || healed < 20.0,
            "seed {seed}: leader leases out for {healed} s"
        );
    }
    assert!(
        hazard_seeds >= 15,
        "the hazard showed on {hazard_seeds} of 20 seeds"
    );
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
    // The overlap lasts until the old leader hears of the new term from the voter that
    // betrayed it (its next heartbeat round) and needs the new leader fortified first: a
    // race that the broken variant wins on most seeds, never the correct model (below).
    let caught = (1..=10)
        .filter(|&seed| {
            let report = run_with(cut_link(seed), 30, LEADER, EARLY);
            if broken(&report).is_empty() {
                return false;
            }
            assert_breaks_disjointness(&report, &format!("seed {seed}"));
            true
        })
        .count();
    assert!(caught >= 5, "caught on {caught} of 10 seeds");
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
    for lease in KINDS {
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
        assert!(leases > 200 * 12 * 3 / 2, "{lease:?}: {leases} leases");
    }
}

#[test]
fn the_broken_variant_is_caught_by_the_same_sweep_with_every_lease_kind() {
    for lease in KINDS {
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
            "range_fencing",
            "blast_radius"
        ]
    );
    let _ = Invariant::from_name("election_safety").expect("a built-in invariant");
}

/// Found by the hunt at 700 ranges (seed 895, shrunk): the first range's leader crashes and
/// restarts within a millisecond, its followers still supporting its store. Its restart
/// raises its requester epoch, which ends their fortification of its old leadership, so
/// they elect again; before, they stayed fortified to a leader that no longer led, and no
/// range it had led ever elected again.
#[test]
fn a_leader_restarted_at_once_does_not_leave_its_followers_fortified_to_nothing() {
    for seed in 1..=10 {
        let mut sim = SimConfig::quiet(seed, 3, 40 * SEC);
        sim.faults
            .push(fault(5 * SEC, FaultAction::Crash(Target::Leader), Some(MS)));
        let report = run_with(sim, 30, LEADER, CORRECT);
        assert!(
            broken(&report).is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        assert!(
            !report.liveness_failed(),
            "seed {seed}: {:?}",
            report.liveness
        );
        let out = measure(&report, "outage_max_s");
        assert!(out < 10.0, "seed {seed}: a range out for {out} s");
    }
}

/// A run of `ranges` ranges with lease rebalancing on or off.
fn run_rebalancing(sim: SimConfig, ranges: u64, lease: MultiRaftLease, on: bool) -> RunReport {
    let config = AlgorithmConfig::from(MultiRaftConfig {
        ranges,
        lease,
        lease_rebalancing: on,
        ..MultiRaftConfig::default()
    });
    run(&config, sim, None).expect("within the default limits")
}

/// Store 4 of 5 crashes at 5 s and comes back at 10 s with no lease; the others took its
/// leases meanwhile.
fn restart_of_store_4(seed: u64) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, 5, 120 * SEC);
    let crash = FaultAction::Crash(Target::Node(4));
    sim.faults.push(fault(5 * SEC, crash, Some(5 * SEC)));
    sim
}

/// CockroachDB's count-based lease rebalancing: after a restart leaves a store with no
/// lease, the overfull stores transfer leases to it until every store is within the
/// allocator's band (mean 40: at most 45, or above the mean only while no replica's store
/// is below 35); without rebalancing the restarted store stays empty.
#[test]
fn lease_rebalancing_moves_leases_back_to_a_restarted_store_with_every_lease_kind() {
    for lease in KINDS {
        for seed in 1..=3 {
            let case = format!("{lease:?}, seed {seed}");
            let on = run_rebalancing(restart_of_store_4(seed), 200, lease, true);
            assert!(broken(&on).is_empty(), "{case}: {:?}", on.violations);
            let balance = measure(&on, "lease_balance_max_over_mean");
            assert!(balance <= 45.0 / 40.0, "{case}: balance {balance}");
            let transfers = measure(&on, "lease_transfers");
            assert!(transfers >= 25.0, "{case}: {transfers} transfers");
            // Every transfer ended with a store leading and holding the lease: the target
            // within a few round trips, or, if the target died before the record reached
            // it, the leader after the transferred lease expired (6 s).
            assert_eq!(measure(&on, "handovers"), transfers, "{case}");
            let handover_s = measure(&on, "handover_max_s");
            assert!(handover_s < 7.0, "{case}: a handover took {handover_s} s");
            let off = run_rebalancing(restart_of_store_4(seed), 200, lease, false);
            let unbalanced = measure(&off, "lease_balance_max_over_mean");
            assert!(unbalanced >= 1.2, "{case}: balance {unbalanced} without");
            assert_eq!(measure(&off, "lease_transfers"), 0.0, "{case}");
        }
    }
}

/// A lease that keeps its predecessor's sequence lets the range's resource take one
/// fencing token from two stores, though the leases never overlap: `range_fencing` breaks,
/// `lease_disjointness` does not.
#[test]
fn a_new_holder_reusing_the_lease_sequence_breaks_range_fencing_alone() {
    for lease in KINDS {
        let mut sim = SimConfig::quiet(1, 5, 30 * SEC);
        sim.faults
            .push(fault(8 * SEC, FaultAction::Crash(Target::Node(4)), None));
        let report = run_with(sim.clone(), 50, lease, REUSED);
        assert_eq!(broken(&report), ["range_fencing"], "{lease:?}");
        let correct = run_with(sim, 50, lease, CORRECT);
        assert!(broken(&correct).is_empty(), "{lease:?}");
        assert!(measure(&correct, "range_writes") > 50.0 * 20.0, "{lease:?}");
    }
}

/// With leader leases, a leader cut off one way (its messages arrive, its followers'
/// answers do not) steps down by CheckQuorum while its store keeps their support: its
/// followers stay fortified until it releases them (`MsgDeFortifyLeader`), then elect.
#[test]
fn a_leader_that_steps_down_releases_the_followers_it_fortified() {
    for seed in 1..=5 {
        let mut sim = SimConfig::quiet(seed, 3, 40 * SEC);
        for from in [1, 2] {
            let shape = PartitionShape::OneWay {
                from: Target::Node(from),
                to: Target::Node(0),
            };
            let cut = fault(8 * SEC, FaultAction::Partition(shape), Some(25 * SEC));
            sim.faults.push(cut);
        }
        let report = run_with(sim, 30, LEADER, CORRECT);
        assert!(
            broken(&report).is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        let lost = measure(&report, "ranges_lost");
        assert!(lost >= 5.0, "seed {seed}: store 0 led {lost} ranges");
        let out = measure(&report, "outage_max_s");
        assert!(
            out < 12.0,
            "seed {seed}: a range out for {out} s of the 25 s cut"
        );
    }
}

/// Every store reports the messages it sent on each heartbeat round; the blast radius turns
/// them into messages per second per store, which add up to what the engine counted.
#[test]
fn the_stores_report_their_own_message_rates() {
    for lease in KINDS {
        let report = run_with(SimConfig::quiet(4, 5, 20 * SEC), 50, lease, CORRECT);
        let engine: u64 = (report.messages.iter())
            .filter(|m| m.kind != "write")
            .map(|m| m.sent)
            .sum();
        let mean = measure(&report, "messages_per_s_mean_store");
        // The last reports come within a heartbeat of the end.
        let reported = mean * 5.0 * 20.0;
        let share = reported / engine as f64;
        assert!(
            (0.9..=1.0).contains(&share),
            "{lease:?}: {reported} of {engine}"
        );
        let busiest = measure(&report, "messages_per_s_max_store");
        let peak = measure(&report, "messages_per_s_peak");
        assert!(
            mean <= busiest && busiest <= peak,
            "{lease:?}: {mean} {busiest} {peak}"
        );
    }
}

/// The sweep above has too few ranges for a store to stray 5 leases from the mean; here
/// 100 ranges on 5 stores (mean 20) under the same nemesis: its crashes leave stores
/// empty and others overfull, so leases move by transfer while faults strike. (The hunts
/// at 700 ranges run thousands of such schedules: docs/performance.md.)
#[test]
fn lease_transfers_keep_every_property_over_forty_fault_schedules() {
    for lease in KINDS {
        let mut transfers = 0.0;
        for seed in 1..=40 {
            let report = run_with(with_nemesis(seed, 30 * SEC), 100, lease, CORRECT);
            let case = format!("{lease:?}, seed {seed}");
            assert!(
                broken(&report).is_empty(),
                "{case}: {:?}",
                report.violations
            );
            transfers += measure(&report, "lease_transfers");
        }
        assert!(transfers >= 80.0, "{lease:?}: {transfers} transfers");
    }
}
