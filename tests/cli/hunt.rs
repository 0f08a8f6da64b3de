//! `splitbrain hunt` and `merge` end to end: determinism whatever the jobs, shards that merge
//! into the unsharded result, broken variants caught and shrunk into reproducers that replay,
//! correct Raft clean over a sweep, and the CI outputs (JSON Lines, JUnit, time budget).

use crate::common;

use common::{assert_no_panic, json, scratch, shipped_scenario, splitbrain, stderr, stdout};

#[test]
fn a_hunt_gives_the_same_summary_whatever_the_number_of_jobs() {
    let out = scratch("jobs");
    let run = |jobs: &str| {
        let o = splitbrain([
            "hunt",
            "scenarios/raft-broken-nemesis.ron",
            "--seeds",
            "300",
            "--keep-going",
            "--no-shrink",
            "--json",
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_no_panic(&o);
        json(&o)["summary"].clone()
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert_eq!(one, run("5"));
    assert!(
        one["failed_seeds"].as_u64().unwrap() > 0,
        "the broken variant fails somewhere in 300 seeds"
    );
}

#[test]
fn shards_merged_equal_the_unsharded_hunt() {
    let dir = scratch("shards");
    let whole = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--seed-range",
        "1..=200",
        "--keep-going",
        "--no-shrink",
        "--json",
    ]);
    let mut files = Vec::new();
    for shard in ["0/3", "1/3", "2/3"] {
        let file = dir.join(format!("shard-{}.jsonl", &shard[..1]));
        let o = splitbrain([
            "hunt",
            "scenarios/raft-broken-nemesis.ron",
            "--seed-range",
            "1..=200",
            "--shard",
            shard,
            "--keep-going",
            "--no-shrink",
            "--quiet",
            "--jsonl",
            file.to_str().unwrap(),
        ]);
        assert_no_panic(&o);
        files.push(file.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let merged = splitbrain(&args);
    assert_eq!(merged.status.code(), whole.status.code());
    assert_eq!(json(&merged)["summary"], json(&whole)["summary"]);
    assert_eq!(json(&merged)["summary"]["seeds_run"], 200);
}

#[test]
fn the_forgets_vote_variant_is_caught_and_its_shrunk_reproducer_replays_the_violation() {
    let out = scratch("vote");
    let o = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--seeds",
        "500",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json(&o);
    let reproducers = doc["reproducers"].as_array().unwrap();
    let election = reproducers
        .iter()
        .find(|r| r["key"] == "election_safety")
        .expect("election_safety is shrunk");
    assert_eq!(election["replay_verified"], true);
    assert!(
        election["faults_after"].as_u64().unwrap() < election["faults_before"].as_u64().unwrap()
    );
    let file = election["file"].as_str().unwrap();
    let replay = splitbrain(["run", file, "--json"]);
    assert_eq!(replay.status.code(), Some(1));
    let violated: Vec<String> = json(&replay)["report"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["invariant"].as_str().unwrap().to_string())
        .collect();
    assert!(
        violated.contains(&"election_safety".to_string()),
        "{violated:?}"
    );
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        !text.contains("nemesis:"),
        "a reproducer has explicit faults only"
    );
}

#[test]
fn the_forgets_term_variant_is_caught_as_a_term_monotonic_violation() {
    let dir = scratch("term");
    let source = shipped_scenario("raft-broken-nemesis.ron")
        .replace("ForgetsVoteOnRestart", "ForgetsTermOnRestart");
    let file = dir.join("forgets-term.ron");
    std::fs::write(&file, source).unwrap();
    let o = splitbrain([
        "hunt",
        file.to_str().unwrap(),
        "--seeds",
        "200",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let doc = json(&o);
    let keys: Vec<&str> = doc["summary"]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"term_monotonic"), "{keys:?}");
    let r = doc["reproducers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "term_monotonic")
        .unwrap();
    assert_eq!(r["replay_verified"], true);
}

#[test]
fn correct_raft_stays_clean_over_a_sweep_with_a_swarm_nemesis() {
    let o = splitbrain([
        "hunt",
        "scenarios/raft-nemesis.ron",
        "--seeds",
        "300",
        "--keep-going",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let summary = &json(&o)["summary"];
    assert_eq!(summary["failed_seeds"], 0);
    // A clean sweep proves something only if the dangerous cases happened.
    let coverage = summary["coverage"].as_array().unwrap();
    let situations: Vec<&str> = coverage
        .iter()
        .map(|c| c["situation"].as_str().unwrap())
        .collect();
    let named: Vec<&str> = splitbrain::hunt::record::Coverage::default()
        .named()
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(situations, named, "every coverage counter is reported");
    let faults = coverage.last().unwrap();
    assert!(faults["seeds"].as_u64().unwrap() > 0, "{faults}");
    for situation in [
        "split votes",
        "dueling candidates",
        "stale leader writes",
        "minority side",
    ] {
        let line = coverage
            .iter()
            .find(|c| c["situation"].as_str().unwrap().contains(situation))
            .unwrap();
        assert!(
            line["seeds"].as_u64().unwrap() > 0,
            "{situation} never happened"
        );
    }
}

#[test]
fn per_seed_records_are_written_and_junit_is_well_formed() {
    let dir = scratch("ci");
    let jsonl = dir.join("seeds.jsonl");
    let junit = dir.join("hunt.xml");
    let o = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--seeds",
        "100",
        "--keep-going",
        "--no-shrink",
        "--quiet",
        "--jsonl",
        jsonl.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    let lines: Vec<String> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 102, "a header, one line per seed, an end line");
    assert!(lines[0].contains("\"hunt\""));
    assert!(
        lines[101].contains("\"ended\":\"complete\""),
        "{}",
        lines[101]
    );
    for (i, line) in lines[1..101].iter().enumerate() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(record["seed"], i as u64 + 1);
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("JUnit XML parses");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert!(cases
        .iter()
        .any(|c| c.attribute("name") == Some("election_safety")));
    let failed = cases
        .iter()
        .filter(|c| c.children().any(|k| k.has_tag_name("failure")))
        .count();
    assert!(failed >= 1);
}

#[test]
fn a_spent_time_budget_stops_the_hunt_with_a_partial_summary() {
    let o = splitbrain([
        "hunt",
        "scenarios/raft-nemesis.ron",
        "--seeds",
        "100000",
        "--time-budget",
        "1ns",
        "--jobs",
        "1",
        "--json",
    ]);
    let doc = json(&o);
    assert_eq!(doc["ended"], "time_budget");
    assert_eq!(
        doc["summary"]["seeds_run"], 1,
        "one seed always runs, then no more start"
    );
}

#[test]
fn bad_hunt_arguments_are_bad_input() {
    for args in [
        vec!["hunt", "scenarios/raft-nemesis.ron", "--seed-range", "9..3"],
        vec!["hunt", "scenarios/raft-nemesis.ron", "--seed-range", "x"],
        vec!["hunt", "scenarios/raft-nemesis.ron", "--shard", "4/4"],
        vec![
            "hunt",
            "scenarios/raft-nemesis.ron",
            "--time-budget",
            "soon",
        ],
        vec![
            "hunt",
            "scenarios/raft-nemesis.ron",
            "--seeds",
            "5",
            "--seed-range",
            "1..3",
        ],
        vec!["hunt", "missing.ron"],
        vec!["merge", "missing.jsonl"],
    ] {
        let o = splitbrain(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_no_panic(&o);
    }
}

#[test]
fn run_with_a_seed_runs_what_that_seed_of_the_hunt_ran() {
    let hunt = splitbrain([
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--seed-range",
        "39..=39",
        "--no-shrink",
        "--json",
    ]);
    let hunt_failed = json(&hunt)["summary"]["failed_seeds"].as_u64().unwrap();
    let run = splitbrain([
        "run",
        "scenarios/raft-broken-nemesis.ron",
        "--seed",
        "39",
        "--quiet",
    ]);
    assert_eq!(hunt_failed == 1, run.status.code() == Some(1));
}

/// The shipped coordination-service hunts stay clean over their first seeds, liveness
/// included: etcd's waiters on the Stream transport once never heard of a new leader behind a
/// predecessor that was not the leader (7 of the first 100 etcd-nemesis seeds failed; seeds 3
/// and 15 among them), until they observed the leader's key as clientv3's Election.Observe does.
/// ZooKeeper's waiters had the same gap in the check (seed 793 the first of 12 in 10,000),
/// until a connected waiter counted as asking who leads, as real applications do.
#[test]
fn the_service_hunts_first_seeds_are_clean_liveness_included() {
    for (scenario, seeds) in [
        ("scenarios/etcd-nemesis.ron", "1..201"),
        ("scenarios/lease-gc-pause.ron", "2182..=2182"),
        ("scenarios/zk-nemesis.ron", "1..=1000"),
    ] {
        let o = splitbrain([
            "hunt",
            scenario,
            "--seed-range",
            seeds,
            "--keep-going",
            "--no-shrink",
            "--quiet",
        ]);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(0), "{scenario}: {}", stdout(&o));
    }
}

/// The hunt's summary line and its JSON name the algorithm and the transport it ran on.
#[test]
fn a_hunt_names_the_transport_it_ran_on() {
    let out = scratch("hunt-transport");
    let args = |json: bool| {
        let mut args = vec![
            "hunt",
            "scenarios/etcd-nemesis.ron",
            "--seeds",
            "2",
            "--keep-going",
            "--no-shrink",
            "--out",
            out.to_str().unwrap(),
        ];
        if json {
            args.push("--json");
        }
        args
    };
    let text = splitbrain(args(false));
    assert_no_panic(&text);
    assert!(
        stdout(&text).contains("seeds of etcd-nemesis (etcd on Stream)"),
        "{}",
        stdout(&text)
    );
    let doc = json(&splitbrain(args(true)));
    assert_eq!(doc["algorithm"], "etcd");
    assert_eq!(doc["transport"], "Stream");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_hunt_of_a_scenario_with_an_expect_rate_says_how_its_seeds_compare_with_it() {
    // raft-broken-nemesis expects Safe on 95% of seeds: seeds 1-40 hold a few failing ones.
    let args = [
        "hunt",
        "scenarios/raft-broken-nemesis.ron",
        "--seeds",
        "40",
        "--keep-going",
        "--no-shrink",
    ];
    let output = splitbrain(args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        out.contains(
            "expect_rate: the scenario expects its outcome on 95.0% of seeds; it matched on "
        ),
        "{out}"
    );
    let output = splitbrain(args.iter().copied().chain(["--json"]));
    let v = json(&output);
    let rate = &v["expect_rate"];
    assert_eq!(rate["expected"], 0.95);
    assert_eq!(rate["seeds_run"], 40);
    let failed = v["summary"]["failed_seeds"].as_u64().expect("a count");
    assert_eq!(rate["matched"].as_u64(), Some(40 - failed));
    // A scenario that expects every seed says nothing of a rate.
    let output = splitbrain([
        "hunt",
        "scenarios/raft-nemesis.ron",
        "--seeds",
        "2",
        "--json",
    ]);
    assert!(json(&output).get("expect_rate").is_none());
}
