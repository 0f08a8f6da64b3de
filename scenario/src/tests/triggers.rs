//! Faults triggered by events (`after:`): read, checked against the algorithm's names,
//! written back.

use super::*;
use splitbrain_sim::{Actor, SignalKind, Trigger, TriggerEvent};

const TRIGGERED: &str = r#"(
    nodes: 3,
    algorithm: Raft(variant: ForgetsVoteOnRestart),
    faults: [
        (at: "0s", after: (event: Sent("RequestVoteResp"), by: Node(1)), do: Crash(Node(1)),
         heal_after: "20ms"),
        (at: "1s", after: (event: Signal(ElectionStarted), nth: 3, delay: "5ms..10ms"),
         do: Pause(Leader, "1s")),
        (at: "2s", after: Trigger(event: BecameLeader, by: Leader), do: Crash(Leader)),
        (at: "3s", after: (event: Observed("my \"own\" name"), by: Follower), do: Heal),
        (at: "4s", after: (event: SteppedDown, by: Any, nth: 1, delay: "0s"), do: Heal),
    ],
)"#;

#[test]
fn a_triggered_fault_reads_with_its_defaults_filled_in() {
    let scenario = parsed(TRIGGERED);
    let faults = &scenario.sim.faults;
    assert_eq!(
        faults[0].after,
        Some(Trigger {
            event: TriggerEvent::Sent("RequestVoteResp".into()),
            by: Actor::Node(1),
            nth: 1,
            delay_ns: 0,
        })
    );
    assert_eq!(faults[0].heal_after_ns, Some(20 * MS));
    let second = faults[1].after.as_ref().unwrap();
    assert_eq!(
        second.event,
        TriggerEvent::Signal(SignalKind::ElectionStarted)
    );
    assert_eq!(
        (second.by, second.nth, second.delay_ns),
        (Actor::Any, 3, 5 * MS)
    );
    assert_eq!(
        scenario.fault_spreads[1].delay_ns,
        5 * MS,
        "a range of delays"
    );
    assert_eq!(faults[2].after.as_ref().unwrap().by, Actor::Leader);
    assert_eq!(
        faults[3].after.as_ref().unwrap().event,
        TriggerEvent::Observed("my \"own\" name".into())
    );
}

#[test]
fn triggered_faults_survive_writing_and_reading_back_canonically() {
    let scenario = parsed(TRIGGERED);
    let text = to_ron(&scenario);
    assert!(
        text.contains(
            r#"(at: "0s", after: (event: Sent("RequestVoteResp"), by: Node(1), nth: 1, delay: "0s"), do: Crash(Node(1)), heal_after: "20ms")"#
        ),
        "{text}"
    );
    assert!(text.contains(r#"delay: "5ms..10ms""#), "{text}");
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
    assert_eq!(to_ron(&parsed(&text)), text, "canonical");
    // A seed's draw of the delay is written as the value drawn, and reads back.
    let drawn = parsed(TRIGGERED).materialize(7);
    let delay_ns = drawn.sim.faults[1].after.as_ref().unwrap().delay_ns;
    assert!((5 * MS..=10 * MS).contains(&delay_ns));
    assert_eq!(parse(&to_ron(&drawn), ORIGIN), Ok(drawn));
}

#[test]
fn trigger_mistakes_are_refused_at_the_offending_value() {
    let raft = r#"nodes: 3, algorithm: Raft()"#;
    let cases: Vec<(String, &str)> = vec![
        (
            format!(
                r#"({raft}, faults: [(at: "0s", after: (event: Sent(@"RequestVoteResponse")), do: Heal)])"#
            ),
            "raft sends no message of type `RequestVoteResponse`",
        ),
        (
            format!(
                r#"({raft}, faults: [(at: "0s", after: (event: BecameLeader, by: Node(@3)), do: Heal)])"#
            ),
            "node 3 does not exist in a cluster of 3",
        ),
        (
            format!(
                r#"({raft}, faults: [(at: "0s", after: (event: BecameLeader, nth: @0), do: Heal)])"#
            ),
            "`nth` is 0: occurrences are counted from 1 to 4294967295",
        ),
        (
            format!(
                r#"({raft}, faults: [(at: "0s", after: (event: BecameLeader, delay: @"9ms..2ms"), do: Heal)])"#
            ),
            "the range \"9ms..2ms\" ends before it starts",
        ),
        (
            format!(
                r#"({raft}, faults: [(at: "0s", after: (event: Signal(@ElectionStart)), do: Heal)])"#
            ),
            "unknown signal `ElectionStart`",
        ),
        (
            format!(
                r#"({raft}, faults: [(at: "0s", after: (event: BecameLeader, @after: "1s"), do: Heal)])"#
            ),
            "unknown field `after` in a fault's trigger (`after`)",
        ),
        (
            format!(
                r#"({raft}, designs: [(name: "b", algorithm: Bully())],
                   faults: [(at: "0s", after: (event: Sent(@"AppendEntries")), do: Heal)])"#
            ),
            "design `b` (bully) sends no message of type `AppendEntries`",
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(&marked, message);
    }
}

#[test]
fn an_unknown_message_type_is_located_and_gets_a_suggestion() {
    let source = "(nodes: 3, algorithm: Raft(),\n faults: [(at: \"0s\", after: (event: Sent(\"RequestVoteResponse\")), do: Heal)])";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:2:42: raft sends no message of type `RequestVoteResponse`\n  hint: did \
         you mean `RequestVoteResp`?"
    );
}

#[test]
fn running_another_algorithm_is_refused_when_it_never_sends_the_message() {
    let scenario = parsed(TRIGGERED);
    let bully = splitbrain_algorithms::AlgorithmConfig::default_named("bully").unwrap();
    let refused = scenario
        .refuse_algorithm(&bully, "--algorithm")
        .unwrap_err();
    assert_eq!(
        refused.message,
        "the fault at 0s waits for a `RequestVoteResp` message, which bully never sends"
    );
}

#[test]
fn shrinking_the_cluster_drops_a_fault_whose_trigger_watches_a_node_gone() {
    let scenario = parsed(TRIGGERED);
    let smaller = scenario.resized(1).unwrap();
    assert!(smaller
        .sim
        .faults
        .iter()
        .all(|f| f.after.as_ref().is_none_or(|t| t.by != Actor::Node(1))));
    assert_eq!(smaller.sim.faults.len(), 4);
}
