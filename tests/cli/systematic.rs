//! `hunt --search systematic` from the command line: a counterexample found, shrunk, written
//! and replayed; the bound's flags refused where they mean nothing.

use crate::common::{json, scratch, splitbrain, stderr};

#[test]
fn a_systematic_hunt_finds_shrinks_and_writes_a_reproducer_that_replays() {
    let out_dir = scratch("systematic-out");
    let out = out_dir.to_str().expect("a UTF-8 path");
    let output = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--search",
        "systematic",
        "--steps",
        "3",
        "--json",
        "--out",
        out,
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let v = json(&output);
    assert_eq!(v["search"], "systematic");
    assert_eq!(v["ended"], "first_failure");
    assert_eq!(
        v["counterexample"]["steps"].as_array().map(Vec::len),
        Some(3)
    );
    assert!(v["coverage"]["schedules"].as_u64().unwrap() > 1);
    let reproducer = &v["reproducers"][0];
    assert_eq!(reproducer["key"], "election_safety");
    assert_eq!(reproducer["replay_verified"], true);
    let file = reproducer["file"].as_str().expect("a file");
    let replay = splitbrain(["run", file]);
    assert_eq!(replay.status.code(), Some(1), "{}", stderr(&replay));
}

#[test]
fn bound_flags_need_a_systematic_search_and_seed_flags_do_not_go_with_one() {
    let output = splitbrain(["hunt", "scenarios/raft-broken-nemesis.ron", "--steps", "2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--steps bounds a systematic search"));
    let output = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--search",
        "systematic",
        "--seeds",
        "10",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--seeds does not go with --search systematic"));
    let output = splitbrain([
        "hunt",
        "scenarios/bully-crash.ron",
        "--search",
        "systematic",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("has no `nemesis`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_external_node_that_reports_a_digest_is_pruned_like_a_built_in() {
    // tests/fixtures/external/node.py in `digest` mode says its state is the same at every
    // tick, so the state a tick later is one explored already; without a digest a node's
    // state is its step count, new at every instant (only schedules that meet at one instant
    // with as many steps are pruned).
    let scenario = |mode: &str| {
        crate::common::scenario_file(
            &format!("systematic-external-{mode}"),
            &format!(
                r#"Scenario(
    name: "systematic-external-{mode}",
    duration: "2s",
    nodes: 3,
    algorithm: External(command: ["python3", "tests/fixtures/external/node.py", "{mode}"], deadline: "2s"),
    network: (latency: Constant("5ms")),
    nemesis: (kinds: [Pause], mean_interval: "300ms", fault_duration: ("10ms", "10ms"), start: "100ms", quiet: "1s"),
    expect: Safe,
)"#
            ),
        )
    };
    let coverage = |mode: &str| {
        let path = scenario(mode);
        let output = splitbrain([
            "hunt",
            path.to_str().unwrap(),
            "--search",
            "systematic",
            "--steps",
            "1",
            "--depth",
            "4",
            "--grid",
            "100ms",
            "--json",
            "--no-shrink",
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let v = json(&output);
        let count = |field: &str| v["coverage"][field].as_u64().unwrap();
        (count("schedules"), count("distinct_states"))
    };
    let (with, without) = (coverage("digest"), coverage("ok"));
    assert!(with.0 < without.0, "schedules {with:?} {without:?}");
    assert!(with.1 < without.1, "distinct states {with:?} {without:?}");
}

#[test]
fn shards_of_a_search_merge_into_the_whole_search_and_a_missing_shard_is_refused() {
    let dir = scratch("systematic-shards");
    let file = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();
    let hunt = |extra: &[&str]| {
        let mut args = vec![
            "hunt",
            "scenarios/raft-broken-nemesis.ron",
            "--search",
            "systematic",
            "--steps",
            "1",
            "--depth",
            "3",
            "--json",
        ];
        args.extend_from_slice(extra);
        let output = splitbrain(args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        json(&output)
    };
    let whole = hunt(&[]);
    let (zero, one) = (file("shard-0.jsonl"), file("shard-1.jsonl"));
    let first = hunt(&["--shard", "0/2", "--jsonl", &zero]);
    assert_eq!(first["shard"], "0/2");
    hunt(&["--shard", "1/2", "--jsonl", &one]);
    let report = file("hunt.xml");
    let merged = splitbrain(["merge", &zero, &one, "--json", "--junit", &report]);
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    let xml = std::fs::read_to_string(&report).expect("the JUnit report");
    assert!(
        xml.contains("failures=\"0\"") && xml.contains("name=\"election_safety\""),
        "{xml}"
    );
    let merged = json(&merged);
    assert_eq!(merged["complete"], true);
    assert_eq!(merged["coverage"]["complete_to"], 1);
    // The shards split the one-step schedules: together they ran the whole search's.
    assert_eq!(
        merged["coverage"]["schedules"],
        whole["coverage"]["schedules"]
    );
    let partial = splitbrain(["merge", &zero]);
    assert_eq!(partial.status.code(), Some(2));
    assert!(
        stderr(&partial).contains("shard 1/2: no file"),
        "{}",
        stderr(&partial)
    );
    let allowed = splitbrain(["merge", &zero, "--allow-partial", "--json"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    let allowed = json(&allowed);
    assert_eq!(allowed["complete"], false);
    assert_eq!(allowed["coverage"]["complete_to"], serde_json::Value::Null);
}
