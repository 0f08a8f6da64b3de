//! Fault times and lengths given as ranges (`"20s..40s"`), drawn per seed.

use super::*;

/// Every quantity a fault range can take, on one line each.
const RANGED: &str = r#"Scenario(
    duration: "2m",
    nodes: 3,
    algorithm: Raft(),
    faults: [
        (at: "20s..40s", do: Partition(Isolate(Leader)), heal_after: "20s..40s"),
        (at: "70s", do: Pause(Leader, "3s..8s")),
        (at: "80s..81s", do: ClockJump(Node(1), "-3s..-1s")),
        (at: "90s", do: Suspend(Random, "4s")),
    ],
)"#;

fn faults_of(seed: u64) -> Vec<FaultSpec> {
    parsed(RANGED).materialize(seed).sim.faults
}

fn pause_ns(fault: &FaultSpec) -> u64 {
    fault.action.built_in_duration().expect("a pause")
}

#[test]
fn a_seed_draws_the_same_values_every_time_within_each_range() {
    for seed in [0, 1, 7, 12_345] {
        let faults = faults_of(seed);
        assert_eq!(faults, faults_of(seed), "seed {seed}");
        assert!((20 * S..=40 * S).contains(&faults[0].at_ns));
        assert!((20 * S..=40 * S).contains(&faults[0].heal_after_ns.unwrap()));
        assert!((3 * S..=8 * S).contains(&pause_ns(&faults[1])));
        assert!((80 * S..=81 * S).contains(&faults[2].at_ns));
        let FaultAction::ClockJump(_, step) = faults[2].action else {
            panic!("a clock jump")
        };
        assert!((-3 * S as i64..=-(S as i64)).contains(&step), "{step}");
        assert_eq!(
            faults[3],
            parsed(RANGED).sim.faults[3],
            "a fixed fault is as written"
        );
    }
}

#[test]
fn seeds_spread_over_the_range() {
    let pauses: Vec<u64> = (1..=100)
        .map(|seed| pause_ns(&faults_of(seed)[1]))
        .collect();
    let short = pauses.iter().filter(|p| **p < 4 * S).count();
    let long = pauses.iter().filter(|p| **p > 7 * S).count();
    assert!(
        short >= 10 && long >= 10,
        "{short} short, {long} long of 100"
    );
    // Each quantity has its own draw: the `at` and `heal_after` of one fault differ.
    let differ = (1..=20)
        .filter(|seed| {
            let f = &faults_of(*seed)[0];
            f.at_ns != f.heal_after_ns.unwrap()
        })
        .count();
    assert!(differ >= 19, "{differ} of 20");
}

#[test]
fn a_range_drawn_per_seed_is_the_same_for_every_algorithm() {
    let mut other = parsed(RANGED);
    other.algorithm = parsed("Scenario(nodes: 3, algorithm: Bully())").algorithm;
    assert_eq!(other.materialize(5).sim.faults, faults_of(5));
}

#[test]
fn a_range_ending_before_it_starts_is_an_error_at_the_range_with_a_hint() {
    let source = "Scenario(\n    algorithm: Raft(),\n    faults: [\n        (at: \"40s..20s\", do: Crash(Leader)),\n    ],\n)";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:4:14: the range \"40s..20s\" ends before it starts\n  hint: a range is \
         drawn per seed between its two ends, the smaller first: \"20s..40s\""
    );
    assert_error_at(
        r#"(algorithm: Raft(), faults: [(at: "1s", do: Stall(Leader, @"8s..3s"))])"#,
        "the range \"8s..3s\" ends before it starts",
    );
    assert_error_at(
        r#"(algorithm: Raft(), faults: [(at: "1s", do: ClockJump(Leader, @"-1s..-3s"))])"#,
        "the range \"-1s..-3s\" ends before it starts",
    );
    assert_error_at(
        r#"(algorithm: Raft(), faults: [(at: "1s", do: Crash(Leader), heal_after: @"9s..2s")])"#,
        "the range \"9s..2s\" ends before it starts",
    );
}

#[test]
fn a_range_with_an_end_that_is_no_duration_is_an_error_with_a_hint() {
    let error =
        error_of(r#"(algorithm: Raft(), faults: [(at: "1s", do: Pause(Leader, "3s..8x"))])"#);
    assert_eq!(
        error.message(),
        "invalid duration range \"3s..8x\": unknown unit `x`"
    );
    assert!(error.to_string().contains("like \"20s..40s\""), "{error}");
    assert_error_at(
        r#"(algorithm: Raft(), faults: [(at: @"1s..", do: Crash(Leader))])"#,
        "invalid duration range \"1s..\": empty duration",
    );
}

#[test]
fn a_range_whose_high_end_is_past_the_run_is_an_error() {
    assert_error_at(
        r#"(duration: "30s", algorithm: Raft(), faults: [(at: @"20s..40s", do: Crash(Leader))])"#,
        "the fault at 40s is not before the end of the run (30s)",
    );
}

#[test]
fn ranges_are_written_back_as_ranges_and_a_seed_as_the_values_it_drew() {
    let scenario = parsed(RANGED);
    let text = to_ron(&scenario);
    assert!(text.contains(r#"at: "20s..40s""#), "{text}");
    assert!(text.contains(r#"ClockJump(Node(1), "-3s..-1s")"#), "{text}");
    assert_eq!(parse(&text, ORIGIN), Ok(scenario.clone()), "\n{text}");
    // A reproducer: the seed's values, fixed, replay that seed exactly.
    let run = scenario.materialize(9);
    let written = to_ron(&run);
    assert!(!written.contains(".."), "{written}");
    let replay = parse(&written, ORIGIN).unwrap();
    assert_eq!(replay.materialize(9), run);
    assert_eq!(replay.materialize(9).sim.faults, faults_of(9));
}
