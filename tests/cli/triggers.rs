//! Faults triggered by events, end to end: the shipped scenario breaks the broken Raft with
//! event-triggered faults only, its trace says what triggered each fault, and a trigger on a
//! message type the algorithm never sends is refused with its place and exit code 2.

use crate::common;

use common::{assert_no_panic, scenario_file, scratch, splitbrain, stderr, stdout};

const SHIPPED: &str = "scenarios/raft-broken-forgets-vote-triggered.ron";

#[test]
fn the_shipped_scenario_breaks_election_safety_with_triggered_faults_and_traces_why() {
    let trace = scratch("shipped").join("trace.jsonl");
    let o = splitbrain(["run", SHIPPED, "--trace", trace.to_str().unwrap()]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("both claimed leadership of term 1"), "{out}");
    let trace = std::fs::read_to_string(trace).unwrap();
    let faults: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains(r#""ev":"fault""#))
        .collect();
    assert_eq!(faults.len(), 3, "{faults:#?}");
    assert!(faults[1].contains("crash n1, after n1 sent RequestVoteResp (at "));
    assert!(faults[2].contains("crash n0 (leader), 2s after n2 became leader (at "));
}

#[test]
fn a_message_type_the_algorithm_never_sends_is_refused_where_it_is_written() {
    let file = scenario_file(
        "unknown-type",
        "Scenario(\n    algorithm: Raft(),\n    faults: [\n        (at: \"0s\", after: (event: Sent(\"Heartbeat\")), do: Heal),\n    ],\n)\n",
    );
    let o = splitbrain(["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("unknown-type.ron:4:40: raft sends no message of type `Heartbeat`"),
        "{err}"
    );
    assert!(err.contains("hint: expected one of `PreVote`"), "{err}");
}
