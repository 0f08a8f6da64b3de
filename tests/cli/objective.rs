//! Recovery-time objectives in `run`: the budget broken down per failover, exit 3 when a
//! failover misses it, and the start-up delay inside the measured recovery.

use crate::common;

use common::{json, scratch, shipped_scenario, splitbrain, stdout};
use std::path::PathBuf;
use std::process::Output;

/// raft-leader-crash.ron with `objective`, written to a scratch folder of its own.
fn with_objective(objective: &str, name: &str) -> PathBuf {
    let source = shipped_scenario("raft-leader-crash.ron").replace(
        "    expect: Safe,",
        &format!("    objective: {objective},\n    expect: Safe,"),
    );
    let file = scratch(&format!("objective-{name}")).join("objective.ron");
    std::fs::write(&file, source).unwrap();
    file
}

fn run_with_objective(objective: &str, name: &str) -> Output {
    splitbrain(["run", with_objective(objective, name).to_str().unwrap()])
}

#[test]
fn a_failover_over_the_budget_exits_3_with_the_budget_broken_down() {
    let o = run_with_objective(
        "(failover_p99: \"50ms\", startup_delay: \"100ms\")",
        "tight",
    );
    assert_eq!(o.status.code(), Some(3));
    let text = stdout(&o);
    assert!(
        text.contains("Recovery-time objective: failover within 50ms, start-up 100ms"),
        "{text}"
    );
    for column in [
        "detection",
        "election",
        "start-up",
        "to first write",
        "total",
        "MISSED",
    ] {
        assert!(text.contains(column), "{column} missing:\n{text}");
    }
    assert!(
        text.contains("RECOVERY-TIME OBJECTIVE WAS MISSED"),
        "{text}"
    );
}

#[test]
fn a_failover_within_the_budget_exits_0() {
    let o = run_with_objective("(failover_p99: \"5s\")", "loose");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains(" met"));
}

#[test]
fn the_startup_delay_is_inside_the_measured_recovery() {
    let recovery_ns = |objective: &str, name: &str| {
        let file = with_objective(objective, name);
        let o = splitbrain(["run", file.to_str().unwrap(), "--json"]);
        json(&o)["report"]["failovers"][0]["recovery_ns"]
            .as_u64()
            .unwrap()
    };
    let without = recovery_ns("(startup_delay: \"0s\")", "zero");
    let with = recovery_ns("(startup_delay: \"1s\")", "second");
    // The new leader serves only after its delay: recovery grows by about the delay (the
    // write ticks are 100 ms apart, so within one tick of it).
    let grew = with - without;
    assert!(
        (900_000_000..=1_100_000_000).contains(&grew),
        "recovery grew by {grew} ns"
    );
}

#[test]
fn a_hunt_judges_the_objective_as_run_does() {
    let file = with_objective("(failover_p99: \"50ms\")", "hunted");
    let file = file.to_str().unwrap();
    let o = splitbrain(["hunt", file, "--seeds", "3", "--no-shrink", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v = json(&o);
    assert_eq!(v["summary"]["failed_seeds"], 3, "{v}");
    assert_eq!(v["summary"]["failures"][0]["key"], "objective", "{v}");
    let replay = v["replays"][0]["command"].as_str().unwrap_or_default();
    assert!(
        replay.starts_with("splitbrain run ") && replay.ends_with(" --seed 1"),
        "--no-shrink names the command that replays the first failing seed: {v}"
    );
    let loose = with_objective("(failover_p99: \"5s\")", "hunted-loose");
    let o = splitbrain(["hunt", loose.to_str().unwrap(), "--seeds", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}
