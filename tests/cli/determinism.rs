//! Determinism guard: the same scenario and seed give the same trace hash and the same
//! report, for every scenario in the library and for a seed it was not tuned for.

use crate::common;

use common::{repo_root, scenario_files};
use splitbrain::scenario::{self, Scenario};
use splitbrain_sim::TraceHasher;
use std::path::Path;

/// A scenario of the library, by its path relative to the repository root.
fn load(relative: &Path) -> Scenario {
    scenario::load(&repo_root().join(relative)).unwrap_or_else(|e| panic!("{e}"))
}

/// One run: the trace hash, the number of trace lines, and the report as JSON.
fn fingerprint(scenario: &Scenario, seed: u64) -> (u64, u64, String) {
    let mut sim = scenario.sim.clone();
    sim.seed = seed;
    let mut hasher = TraceHasher::default();
    let report = splitbrain_algorithms::run(&scenario.algorithm, sim, Some(&mut hasher))
        .expect("within the default limits");
    let json = serde_json::to_string(&report).expect("the report serializes");
    (hasher.hash(), hasher.lines(), json)
}

fn assert_runs_agree(file: &Path, scenario: &Scenario, seed: u64) {
    let (hash_a, lines_a, report_a) = fingerprint(scenario, seed);
    let (hash_b, lines_b, report_b) = fingerprint(scenario, seed);
    assert!(
        lines_a > 0,
        "{} (seed {seed}): the trace is empty",
        file.display()
    );
    assert_eq!(
        (hash_a, lines_a),
        (hash_b, lines_b),
        "{} (seed {seed}): two runs traced differently",
        file.display()
    );
    assert!(
        report_a == report_b,
        "{} (seed {seed}): two runs reported differently\n{report_a}\n{report_b}",
        file.display()
    );
}

#[test]
fn every_scenario_traces_and_reports_identically_twice_with_its_own_seed() {
    for file in scenario_files() {
        let scenario = load(&file);
        assert_runs_agree(&file, &scenario, scenario.sim.seed);
    }
}

#[test]
fn every_scenario_traces_and_reports_identically_twice_with_the_next_seed() {
    for file in scenario_files() {
        let scenario = load(&file);
        assert_runs_agree(&file, &scenario, scenario.sim.seed.wrapping_add(1));
    }
}

#[test]
fn a_traced_run_reports_exactly_what_an_untraced_run_reports() {
    // Attaching a sink must observe the run, never change it.
    for file in scenario_files() {
        let scenario = load(&file);
        let (_, _, traced) = fingerprint(&scenario, scenario.sim.seed);
        let untraced = splitbrain_algorithms::run(&scenario.algorithm, scenario.sim.clone(), None)
            .expect("within the default limits");
        let untraced = serde_json::to_string(&untraced).expect("the report serializes");
        assert!(
            traced == untraced,
            "{}: the trace sink changed the run",
            file.display()
        );
    }
}

#[test]
fn the_trace_hash_tells_two_seeds_apart() {
    // Otherwise the hash could be a constant and the checks above would prove nothing.
    let mut differing = Vec::new();
    for file in scenario_files() {
        let scenario = load(&file);
        let seed = scenario.sim.seed;
        let (hash_a, _, _) = fingerprint(&scenario, seed);
        let (hash_b, _, _) = fingerprint(&scenario, seed.wrapping_add(1));
        if hash_a != hash_b {
            differing.push(file);
        }
    }
    assert!(
        !differing.is_empty(),
        "no scenario's trace hash depends on the seed: the hash looks constant"
    );
}
