//! What hunting a real library's known bug needs (issue 44): a reference (the fixed version)
//! that a failure must pass for it to count, and a quorum below which a group's silence is no
//! liveness failure.

use crate::common;

use common::{json, scenario_file, splitbrain, stdout};

/// A scenario of 3 nodes named `name`, `duration` long, with `algorithm` and `rest` (its
/// faults, nemesis, resource), written to a scratch folder of its own.
fn three_nodes(name: &str, duration: &str, algorithm: &str, rest: &str) -> std::path::PathBuf {
    let text = format!(
        "Scenario(\n    name: \"{name}\",\n    duration: \"{duration}\",\n    nodes: 3,\n    \
         algorithm: {algorithm},\n{rest}\n)"
    );
    scenario_file(name, &text)
}

/// The Python Raft that forgets its vote, under a nemesis, with `extra` settings.
fn forgets_vote(name: &str, extra: &str) -> std::path::PathBuf {
    let algorithm = format!(
        r#"External(command: ["python3", "clients/python/examples/raft_forgets_vote.py"], heartbeat: "50ms"{extra})"#
    );
    let rest = r#"    resource: (fencing: true),
    nemesis: (kinds: [Crash, CutLink, Isolate, Pause], mean_interval: "300ms", fault_duration: ("10ms", "2s"), start: "500ms", quiet: "5s"),"#;
    three_nodes(name, "20s", &algorithm, rest)
}

#[test]
fn a_failure_counts_only_when_the_reference_passes_the_same_schedule() {
    // Seed 25 breaks election safety (scenarios/external/python-forgets-vote.ron).
    let hunt = |file: &std::path::Path| {
        splitbrain([
            "hunt",
            file.to_str().unwrap(),
            "--seed-range",
            "25..=25",
            "--no-shrink",
            "--json",
        ])
    };
    let fixed = forgets_vote(
        "reference-fixed",
        r#", reference: ["python3", "clients/python/examples/raft.py"]"#,
    );
    let o = hunt(&fixed);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v = json(&o);
    assert_eq!(v["summary"]["failed_seeds"], 1, "{v}");
    assert!(v["summary"].get("reference_failed_seeds").is_none(), "{v}");
    let programs = v["programs"].as_array().unwrap();
    assert_eq!(
        programs.len(),
        2,
        "the reference is a program the hunt starts: {v}"
    );

    let same = forgets_vote(
        "reference-same",
        r#", reference: ["python3", "clients/python/examples/raft_forgets_vote.py"]"#,
    );
    let jsonl = same.with_extension("jsonl");
    let o = splitbrain([
        "hunt",
        same.to_str().unwrap(),
        "--seed-range",
        "25..=25",
        "--no-shrink",
        "--json",
        "--jsonl",
        jsonl.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = json(&o);
    assert_eq!(v["summary"]["failed_seeds"], 0, "{v}");
    assert_eq!(v["summary"]["reference_failed_seeds"], 1, "{v}");
    // The record keeps how its run went, and `merge` takes it.
    let o = splitbrain(["merge", jsonl.to_str().unwrap(), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(json(&o)["summary"]["reference_failed_seeds"], 1);
}

#[test]
fn an_empty_or_missing_reference_is_refused_at_its_line() {
    let file = forgets_vote("reference-empty", ", reference: []");
    let o = splitbrain(["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`reference` names no program"), "{err}");
    assert!(err.contains("reference-empty.ron:5:"), "{err}");
    let file = forgets_vote("reference-missing", r#", reference: ["./no-such-node"]"#);
    let o = splitbrain(["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no-such-node"), "{err}");
}

/// The correct Python Raft with two of three members crashed for good at 1 s.
fn two_crashed_for_good(name: &str, quorum: &str) -> std::path::PathBuf {
    let algorithm = format!(
        r#"External(command: ["python3", "clients/python/examples/raft.py"], heartbeat: "50ms"{quorum})"#
    );
    let rest = r#"    faults: [(at: "1s", do: Crash(Node(0))), (at: "1s", do: Crash(Node(1)))],"#;
    three_nodes(name, "10s", &algorithm, rest)
}

#[test]
fn one_member_left_of_three_is_no_liveness_failure_under_a_majority_quorum() {
    let run = |file: &std::path::Path| splitbrain(["run", file.to_str().unwrap(), "--json"]);
    let o = run(&two_crashed_for_good("quorum-default", ""));
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = json(&o);
    let liveness = v["report"]["liveness"].to_string();
    assert!(liveness.contains("needs 2"), "{liveness}");
    let o = run(&two_crashed_for_good("quorum-any", ", quorum: Any"));
    assert_eq!(
        o.status.code(),
        Some(3),
        "one member alone cannot elect: {}",
        stdout(&o)
    );
    let file = two_crashed_for_good("quorum-too-big", ", quorum: AtLeast(4)");
    let o = splitbrain(["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a quorum of 4 is not between 1 and the 3 members"),
        "{err}"
    );
}

#[test]
fn run_on_reference_runs_the_same_schedule_on_the_fixed_version() {
    let file = forgets_vote(
        "on-reference",
        r#", reference: ["python3", "clients/python/examples/raft.py"]"#,
    );
    let file = file.to_str().unwrap();
    let buggy = splitbrain(["run", file, "--seed", "25"]);
    assert_eq!(buggy.status.code(), Some(1), "{}", stdout(&buggy));
    let fixed = splitbrain(["run", file, "--seed", "25", "--on-reference"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
    let none = two_crashed_for_good("on-reference-none", "");
    let o = splitbrain(["run", none.to_str().unwrap(), "--on-reference"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("names no `reference`"));
}

/// The corpus runs in CI through scripts/known_bugs.py (it builds Go and Rust pins); here,
/// only that every file still reads, and that each buggy file names its fixed version.
#[test]
fn every_file_of_the_corpus_checks_and_each_buggy_one_names_a_reference() {
    let dir = common::repo_root().join("scenarios/known-bugs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 12, "{files:?}");
    for file in files {
        let o = splitbrain(["check", file.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let text = std::fs::read_to_string(&file).unwrap();
        let buggy = [
            "v3.2.32.ron",
            "v3.3.13.ron",
            "0.3.0.ron",
            "v3.4.ron",
            "v3.4-nemesis.ron",
        ];
        if buggy.iter().any(|b| file.to_str().unwrap().ends_with(b)) {
            assert!(
                text.contains("reference:"),
                "{} names no reference",
                file.display()
            );
        }
    }
}

/// `command` on 3 nodes: n0 crashes for good at 1 s and is cut off until 14.5 s, so the
/// faults end too late for the run's quiet tail to be judged (5 s are needed).
fn never_quiet(name: &str, command: &str) -> std::path::PathBuf {
    let algorithm =
        format!(r#"External(command: {command}, heartbeat: "100ms", failure_detection: "500ms")"#);
    let rest = r#"    faults: [(at: "1s", do: Crash(Node(0))), (at: "1500ms", do: Partition(Isolate(Node(0))), heal_after: "13s")],"#;
    three_nodes(name, "15s", &algorithm, rest)
}

#[test]
fn a_quorum_that_elects_nobody_while_faults_are_active_fails_liveness() {
    // The fixture's n0 leads for ever and nobody else ever does.
    let stuck = never_quiet(
        "stall-during-faults",
        r#"["python3", "tests/fixtures/external/node.py", "ok"]"#,
    );
    let o = splitbrain(["run", stuck.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    let v = json(&o);
    let stall = &v["report"]["stall"];
    assert_eq!(stall["from_ns"], 1_000_000_000u64, "{v}");
    assert_eq!(
        stall["to_ns"], 6_000_000_000u64,
        "the bound is ten failure detections"
    );
    assert_eq!(stall["group"], serde_json::json!([1, 2]));
    assert_eq!(v["report"]["liveness"]["verdict"], "inconclusive", "{v}");
    // A Raft elects among the two: no stall.
    let raft = never_quiet(
        "no-stall-during-faults",
        r#"["python3", "clients/python/examples/raft.py"]"#,
    );
    let o = splitbrain(["run", raft.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(json(&o)["report"].get("stall").is_none());
}
