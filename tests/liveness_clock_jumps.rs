//! Liveness after a backward clock jump: the watch starts when the jumped clock has caught up
//! with what it read before the jump, so a correct algorithm is not blamed for the seconds its
//! late timers and its "heard from the leader recently" judgement take to recover; a real
//! liveness failure is still reported.

use splitbrain::scenario::parse;
use splitbrain::verdict::judge;
use splitbrain_sim::{LivenessVerdict, NANOS_PER_MILLI as MS, NANOS_PER_SEC as S};

/// Correct Raft with pre-vote and check-quorum, three nodes: the leader crashes for good
/// and, at the same instant, a follower's clock jumps back 24.45 s. That follower refuses
/// pre-votes (by its clock it heard from the leader moments ago) and its election timer runs
/// late, so the one other survivor cannot be elected until the clock has caught up.
fn scenario(liveness: &str) -> String {
    format!(
        r#"Scenario(
    seed: 1,
    duration: "60s",
    nodes: 3,
    algorithm: Raft(pre_vote: true, check_quorum: true),
    faults: [
        (at: "20s", do: Crash(Leader)),
        (at: "20s", do: ClockJump(Follower, "-24.45s")),
    ],
    {liveness}
)"#
    )
}

fn liveness_of(source: &str, seed: u64) -> (LivenessVerdict, u8) {
    let mut scenario = parse(source, "jump.ron").expect("a valid scenario");
    scenario.sim.seed = seed;
    let report = splitbrain_algorithms::run(&scenario.algorithm, scenario.sim.clone(), None);
    let code = judge(&scenario.expect, &report).exit_code();
    (report.liveness, code)
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
