//! Each pass of the scenario shrinker on a schedule whose failure is a rule about the faults
//! (no run: a few microseconds a try), and the passes that read a run's trace on a tiny
//! scenario (three Raft nodes for two seconds).

use super::*;
use splitbrain_sim::{FaultAction, FaultSpec, NodeId, PartitionShape, Target};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn scenario(faults: Vec<FaultSpec>) -> Scenario {
    let text = r#"Scenario(duration: "2s", nodes: 3, algorithm: Raft())"#;
    let mut s = splitbrain_scenario::parse(text, "t.ron").expect("a valid scenario");
    s.sim.faults = faults;
    s
}

fn fault(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
        after: None,
    }
}

fn failure() -> Failure {
    Failure {
        key: "election_safety".to_string(),
        at_ns: None,
        nodes: Vec::new(),
        detail: String::new(),
    }
}

/// Runs `pass` once on `start`, a candidate failing while `fails` says so; the best after it
/// and the runs it took.
fn once(
    start: Scenario,
    pass: Pass<Scenario, Failure>,
    fails: impl Fn(&[FaultSpec]) -> bool,
) -> (Scenario, u32) {
    let mut run = |c: &Scenario| fails(&c.sim.faults).then(failure);
    let mut s = Steps {
        best: start,
        outcome: failure(),
        runs: 0,
        max_runs: 200,
        stop: &|| false,
        run: &mut run,
    };
    pass(&mut s);
    (s.best, s.runs)
}

/// Whether `n` has at most `digits` significant digits: what a reproducer shows is round.
fn round(n: u64, digits: u32) -> bool {
    let scale = 10u64.pow(n.checked_ilog10().unwrap_or(0).saturating_sub(digits - 1));
    n.is_multiple_of(scale)
}

#[test]
fn round_between_picks_the_roundest_value_strictly_inside() {
    assert_eq!(round_between(0, 1_000), Some(500));
    assert_eq!(round_between(1_200, 1_290), Some(1_250));
    assert_eq!(
        round_between(2_700_000_001, 3_000_000_000),
        Some(2_900_000_000)
    );
    assert_eq!(round_between(5, 6), None);
}

#[test]
fn shorten_finds_the_shortest_failing_length_more_finely_than_halving() {
    let pause = |d| FaultAction::Pause(Target::Node(1), d);
    let start = scenario(vec![fault(S, pause(2 * S), None)]);
    let fails = |f: &[FaultSpec]| faults::length_of(&f[0]).unwrap() >= 237 * MS;
    let (best, runs) = once(start.clone(), faults::shorten_faults, fails);
    let length = faults::length_of(&best.sim.faults[0]).unwrap();
    // Within a sixteenth of the length of the threshold, and round.
    assert!(
        (237 * MS..237 * MS + 2 * S / 16).contains(&length),
        "{length}"
    );
    assert!(round(length, 2), "{length}");
    assert!(runs <= 8, "{runs}");
    // Halving stops at 250ms: the next half, 125ms, passes.
    let (halved, _) = once(start, faults::halve_faults, fails);
    assert_eq!(faults::length_of(&halved.sim.faults[0]), Some(250 * MS));
}

#[test]
fn weaken_finds_the_least_drift_that_still_fails_and_keeps_its_sign() {
    let drift = |ppm| FaultAction::ClockDrift(Target::Leader, ppm);
    let start = scenario(vec![fault(S, drift(-400_000), Some(S))]);
    let fails =
        |f: &[FaultSpec]| matches!(f[0].action, FaultAction::ClockDrift(_, p) if p <= -123_456);
    let (best, _) = once(start, faults::weaken_faults, fails);
    let FaultAction::ClockDrift(_, ppm) = best.sim.faults[0].action else {
        panic!("still a drift");
    };
    assert!((-123_456 - 25_000..=-123_456).contains(&ppm), "{ppm}");
}

#[test]
fn closing_a_gap_moves_the_faults_after_it_together() {
    // The bug needs the two crashes 200ms apart, wherever they are.
    let crash = || FaultAction::Crash(Target::Leader);
    let start = scenario(vec![
        fault(5 * S, crash(), Some(MS)),
        fault(5 * S + 200 * MS, crash(), Some(MS)),
    ]);
    let fails = |f: &[FaultSpec]| f[1].at_ns - f[0].at_ns == 200 * MS;
    let (best, _) = once(start.clone(), timing::close_gaps, fails);
    let (a, b) = (best.sim.faults[0].at_ns, best.sim.faults[1].at_ns);
    assert!(a <= 5 * S / 16, "{a}");
    assert_eq!(b - a, 200 * MS);
    // Moving one fault alone cannot.
    let (alone, _) = once(start.clone(), timing::move_faults_earlier, fails);
    assert_eq!(alone.sim.faults, start.sim.faults);
}

#[test]
fn shifting_a_start_later_keeps_the_end_and_shortens_the_fault() {
    // The bug needs n1 paused from 2.7s to 3s; the pause starts at 2s.
    let start = scenario(vec![fault(
        2 * S,
        FaultAction::Pause(Target::Node(1), S),
        None,
    )]);
    let fails = |f: &[FaultSpec]| {
        let end = f[0].at_ns + faults::length_of(&f[0]).unwrap();
        f[0].at_ns <= 2_700 * MS && end >= 3 * S
    };
    let (best, _) = once(start, timing::shift_faults_later, fails);
    let f = &best.sim.faults[0];
    assert!(
        (2_700 * MS - S / 16..=2_700 * MS).contains(&f.at_ns),
        "{}",
        f.at_ns
    );
    assert_eq!(f.at_ns + faults::length_of(f).unwrap(), 3 * S);
}

#[test]
fn a_removal_that_fails_alone_succeeds_when_the_later_faults_slide_into_its_place() {
    // The bug needs two faults 100ms apart, set up by a fault 9s before them, or early
    // enough (by 1s) that the run's start sets it up.
    let crash = |t| fault(t, FaultAction::Crash(Target::Leader), Some(MS));
    let start = scenario(vec![crash(S), crash(10 * S), crash(10 * S + 100 * MS)]);
    let fails = |f: &[FaultSpec]| {
        (1..f.len()).any(|i| {
            let t = f[i - 1].at_ns;
            let set_up = t <= S || f[..i - 1].iter().any(|e| e.at_ns + 9 * S <= t);
            f[i].at_ns - t == 100 * MS && set_up
        })
    };
    let (plain, _) = once(start.clone(), faults::remove_faults, fails);
    assert_eq!(plain.sim.faults.len(), 3);
    let (slid, _) = once(start, faults::remove_and_slide, fails);
    let times: Vec<u64> = slid.sim.faults.iter().map(|f| f.at_ns).collect();
    assert_eq!(times, [S, S + 100 * MS]);
}

#[test]
fn overlapping_pauses_of_one_node_merge_and_a_fault_that_struck_nobody_goes() {
    let pause = |d| FaultAction::Pause(Target::Node(1), d);
    // No one leads 1ms into the run: the crash of the leader strikes nobody.
    let start = scenario(vec![
        fault(MS, FaultAction::Crash(Target::Leader), Some(MS)),
        fault(S, pause(500 * MS), None),
        fault(S + 200 * MS, pause(500 * MS), None),
    ]);
    let (best, runs) = once(start, merge::merge_faults, |_| true);
    assert_eq!(best.sim.faults, vec![fault(S, pause(700 * MS), None)]);
    assert_eq!(runs, 3, "a traced run, the drop, the merge");
}

#[test]
fn a_fault_snaps_to_just_after_the_last_event_of_the_node_it_strikes() {
    let start = scenario(vec![fault(
        1_500 * MS,
        FaultAction::Crash(Target::Node(1)),
        Some(100 * MS),
    )]);
    let (best, _) = once(start, timing::snap_faults, |_| true);
    let f = &best.sim.faults[0];
    assert!(f.at_ns < 1_500 * MS);
    assert_eq!(f.heal_after_ns, Some(100 * MS), "its length kept");
    let note = fault_notes(&best)[0].clone().unwrap();
    assert!(note.starts_with("1us after n1 "), "{note}");
}

#[test]
fn a_drawn_target_is_named_by_the_node_it_struck() {
    let isolate = |t| FaultAction::Partition(PartitionShape::Isolate(t));
    let start = scenario(vec![
        fault(S, FaultAction::Crash(Target::Random), Some(MS)),
        fault(S + MS, isolate(Target::Leader), Some(MS)),
    ]);
    let struck = sites::sites_of(&start).unwrap()[0].nodes.clone();
    let (best, _) = once(start, targets::pin_targets, |_| true);
    let [NodeId(node)] = struck[..] else {
        panic!("one node struck: {struck:?}");
    };
    assert_eq!(
        best.sim.faults[0].action,
        FaultAction::Crash(Target::Node(node))
    );
    assert_eq!(
        best.sim.faults[1].action,
        isolate(Target::Leader),
        "the leader stays"
    );
}

#[test]
fn the_clock_drift_hunt_the_shrinker_is_measured_on_is_a_valid_scenario() {
    let text = include_str!("../../../../benches/shrink/k8s-clock-drift.ron");
    let s = splitbrain_scenario::parse(text, "k8s-clock-drift.ron").expect("valid");
    assert!(s.nemesis.is_some_and(|n| n.max_drift_ppm == 600_000));
}
