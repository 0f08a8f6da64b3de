//! Membership changes: the `ConfChange` fault and nemesis kind.

use super::*;
use splitbrain_sim::nemesis::NemesisKind;
use splitbrain_sim::MemberChange;

const EXTERNAL: &str = r#"algorithm: External(command: ["python3", "node.py"])"#;

#[test]
fn every_membership_change_is_read_as_the_fault_it_names() {
    let source = format!(
        "({EXTERNAL}, nodes: 5, faults: [
            (at: \"1s\", do: ConfChange(Leader, Remove(2))),
            (at: \"2s\", do: ConfChange(Leader, Add(2))),
            (at: \"3s\", do: ConfChange(Node(1), AddLearner(4))),
            (at: \"4s\", do: ConfChange(Leader, Promote(4))),
        ])"
    );
    let actions: Vec<FaultAction> = parsed(&source)
        .sim
        .faults
        .into_iter()
        .map(|f| f.action)
        .collect();
    assert_eq!(
        actions,
        vec![
            FaultAction::ConfChange(Target::Leader, MemberChange::Remove(2)),
            FaultAction::ConfChange(Target::Leader, MemberChange::Add(2)),
            FaultAction::ConfChange(Target::Node(1), MemberChange::AddLearner(4)),
            FaultAction::ConfChange(Target::Leader, MemberChange::Promote(4)),
        ]
    );
}

#[test]
fn membership_changes_survive_writing_and_reading_back() {
    let source = format!(
        "({EXTERNAL}, nodes: 5, faults: [
            (at: \"1s\", do: ConfChange(Leader, Remove(2))),
            (at: \"2s..3s\", do: ConfChange(Follower, Add(0))),
            (at: \"3s\", do: ConfChange(Random, AddLearner(4))),
            (at: \"4s\", do: ConfChange(Leader, Promote(4))),
        ], nemesis: (kinds: [ConfChange, Resign]))"
    );
    let scenario = parsed(&source);
    let text = to_ron(&scenario);
    assert!(text.contains("ConfChange(Leader, Remove(2))"), "{text}");
    assert!(text.contains("ConfChange(Random, AddLearner(4))"), "{text}");
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
}

#[test]
fn a_member_past_the_last_is_refused_at_the_member_with_a_hint() {
    let marked = format!(
        "({EXTERNAL}, nodes: 3, faults: [(at: \"1s\", do: ConfChange(Leader, Remove(@3)))])"
    );
    assert_error_at(&marked, "member 3 does not exist in a cluster of 3");
    let (source, _) = unmark(&marked);
    let hint = error_of(&source).hint().expect("a hint");
    assert!(hint.contains("numbered from 0 to 2"), "{hint}");
    let marked =
        format!("({EXTERNAL}, nodes: 3, faults: [(at: \"1s\", do: ConfChange(@Node(7), Add(1)))])");
    assert_error_at(&marked, "node 7 does not exist in a cluster of 3");
}

#[test]
fn built_in_algorithms_take_the_fault_but_refuse_the_nemesis_kind() {
    // An explicit fault is ignored (a schedule from an external hunt runs on Raft as it is).
    parsed("(algorithm: Raft(), faults: [(at: \"1s\", do: ConfChange(Leader, Remove(2)))])");
    assert_error_at(
        "(algorithm: Raft(), nemesis: (kinds: @[Crash, ConfChange]))",
        "nemesis kind `ConfChange` would inject nothing: raft has a fixed membership",
    );
    let error = error_of("(algorithm: Raft(), nemesis: (kinds: [ConfChange]))");
    assert!(error.hint().expect("a hint").contains("External"));
    // A design with external nodes takes it.
    parsed(&format!(
        "(algorithm: Raft(), designs: [(name: \"x\", {EXTERNAL})], nemesis: (kinds: [ConfChange]))"
    ));
}

#[test]
fn the_nemesis_kind_is_asked_for_by_name_only() {
    let scenario = parsed(&format!("({EXTERNAL}, nemesis: ())"));
    let nemesis = scenario.nemesis.expect("a nemesis");
    assert!(!nemesis.kinds_drawn().contains(&NemesisKind::ConfChange));
    let scenario = parsed(&format!("({EXTERNAL}, nemesis: (kinds: [ConfChange]))"));
    assert_eq!(
        scenario.nemesis.expect("a nemesis").kinds,
        vec![NemesisKind::ConfChange]
    );
}
