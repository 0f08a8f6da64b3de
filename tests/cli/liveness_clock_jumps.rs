//! Liveness after a backward wall-clock step. Real election code times with its monotonic
//! clock, which a step does not move: correct Raft elects at once. For code that times with
//! its wall clock (asked for per node), the watch starts when the stepped clock has caught up
//! with what it read before the step, so a correct algorithm is not blamed for the seconds
//! its late timers and its "heard from the leader recently" judgement take to recover; a
//! real liveness failure is still reported.

use splitbrain::scenario::parse;
use splitbrain::verdict::judge;
use splitbrain_sim::{LivenessVerdict, RunReport, NANOS_PER_MILLI as MS, NANOS_PER_SEC as S};

/// Correct Raft with pre-vote and check-quorum, three nodes: the leader crashes for good
/// and, at the same instant, a follower's wall clock steps back 24.45 s. If the nodes time
/// with their wall clocks, that follower refuses pre-votes (by its clock it heard from the
/// leader moments ago) and its election timer runs late, so the one other survivor cannot be
/// elected until the clock has caught up.
fn scenario(liveness: &str) -> String {
    let wall = "(node: 0, timers: Wall), (node: 1, timers: Wall), (node: 2, timers: Wall)";
    scenario_timing(liveness, &format!("clocks: (nodes: [{wall}]),"))
}

fn scenario_timing(liveness: &str, clocks: &str) -> String {
    format!(
        r#"Scenario(
    seed: 1,
    duration: "60s",
    nodes: 3,
    algorithm: Raft(pre_vote: true, check_quorum: true),
    {clocks}
    faults: [
        (at: "20s", do: Crash(Leader)),
        (at: "20s", do: ClockJump(Follower, "-24.45s")),
    ],
    {liveness}
)"#
    )
}

fn run(source: &str, seed: u64) -> (RunReport, u8) {
    let mut scenario = parse(source, "jump.ron").expect("a valid scenario");
    scenario.sim.seed = seed;
    let report = splitbrain_algorithms::run(&scenario.algorithm, scenario.sim.clone(), None)
        .expect("within the default limits");
    let code = splitbrain::exit::of_outcome(&judge(&scenario.expect, &report));
    (report, code)
}

fn liveness_of(source: &str, seed: u64) -> (LivenessVerdict, u8) {
    let (report, code) = run(source, seed);
    (report.liveness, code)
}

#[test]
fn a_wall_clock_step_does_not_delay_an_election_timed_on_the_monotonic_clock() {
    for seed in 1..=3 {
        let (report, code) = run(&scenario_timing("", ""), seed);
        let elected = report.leaders.iter().find(|claim| claim.at_ns > 20 * S);
        let at_ns = elected.expect("a new leader after the crash").at_ns;
        assert!(at_ns < 22 * S, "seed {seed}: elected at {at_ns}");
        assert_eq!(code, 0, "seed {seed}");
        // Timed on the wall clock, the same step holds the election back by seconds.
        let (wall, _) = run(&scenario(""), seed);
        let late = wall.leaders.iter().find(|claim| claim.at_ns > 20 * S);
        assert!(
            late.expect("elected in the end").at_ns > 30 * S,
            "seed {seed}"
        );
    }
}

#[test]
fn a_backward_jump_does_not_make_correct_raft_fail_liveness() {
    for seed in 1..=3 {
        let (verdict, code) = liveness_of(&scenario(""), seed);
        let LivenessVerdict::Met { quiet_from_ns, .. } = verdict else {
            panic!("seed {seed}: {verdict:?}");
        };
        assert!(
            quiet_from_ns >= 20 * S + 24_450 * MS,
            "seed {seed}: the watch starts once the clock caught up, not at {quiet_from_ns}"
        );
        assert_eq!(code, 0, "seed {seed}");
    }
}

#[test]
fn a_real_liveness_failure_after_a_backward_jump_is_still_reported() {
    // No leader can be recognised within 1 ms of the quiet point: a miss, measured from
    // the moment the jumped clock caught up.
    let (verdict, code) = liveness_of(&scenario("liveness: (bound: \"1ms\"),"), 1);
    let LivenessVerdict::Missed { quiet_from_ns, .. } = verdict else {
        panic!("{verdict:?}");
    };
    assert!(quiet_from_ns >= 20 * S + 24_450 * MS, "{quiet_from_ns}");
    assert_eq!(code, 3);
}
