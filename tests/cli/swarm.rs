//! Swarm mode end to end: every seed's record says what its nemesis drew, the summary says
//! which draws found which failure, and `run --seed N` runs exactly what hunt seed N ran.

use crate::common;

use common::{assert_no_panic, json, scratch, splitbrain, stdout};

const BROKEN: &str = "scenarios/raft-broken-nemesis.ron";

fn records(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).expect("the records were written");
    text.lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("a JSON line"))
        .filter(|line| line.get("seed").is_some())
        .collect()
}

#[test]
fn every_record_of_a_swarm_hunt_shows_what_its_seed_drew() {
    let dir = scratch("swarm-records");
    let jsonl = dir.join("seeds.jsonl");
    let o = splitbrain([
        "hunt",
        BROKEN,
        "--seed-range",
        "1..=120",
        "--keep-going",
        "--no-shrink",
        "--quiet",
        "--jsonl",
        jsonl.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    let records = records(&jsonl);
    assert_eq!(records.len(), 120);
    let mut intervals = std::collections::BTreeSet::new();
    for record in &records {
        let drew = &record["nemesis"];
        assert_eq!(drew["swarm"], true, "{record}");
        let enabled = drew["enabled"].as_array().expect("the enabled kinds");
        assert!(!enabled.is_empty(), "{record}");
        for pair in enabled {
            let kind = pair[0].as_str().expect("a kind");
            assert!(["Crash", "CutLink", "Isolate"].contains(&kind), "{record}");
            assert!((1..=4).contains(&pair[1].as_u64().expect("a weight")));
        }
        // raft-broken-nemesis: mean_interval 300ms, so 150ms to 600ms by default.
        let interval = drew["rates"]["mean_interval_ns"].as_u64().expect("a rate");
        assert!((150_000_000..=600_000_000).contains(&interval), "{record}");
        intervals.insert(interval);
    }
    assert!(intervals.len() > 100, "seeds draw their own rates");
}

#[test]
fn run_seed_of_a_swarm_seed_gives_the_hunts_verdict_and_shows_the_draw() {
    let o = splitbrain([
        "hunt",
        BROKEN,
        "--seed-range",
        "1..=200",
        "--keep-going",
        "--no-shrink",
        "--json",
    ]);
    assert_no_panic(&o);
    let summary = &json(&o)["summary"];
    let group = &summary["failures"][0];
    let failing = group["first_seed"]
        .as_u64()
        .expect("some seed of 200 fails");
    let draws = &group["nemesis"];
    assert!(draws["common_kinds"].is_array(), "{group}");
    assert_eq!(draws["first"]["swarm"], true, "{group}");
    let listed: Vec<u64> = group["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    let passing = (1..=200).find(|s| !listed.contains(s)).unwrap();
    let run = |seed: u64| {
        let o = splitbrain(["run", BROKEN, "--seed", &seed.to_string()]);
        assert_no_panic(&o);
        o
    };
    let failed = run(failing);
    assert_eq!(failed.status.code(), Some(1), "{}", stdout(&failed));
    let key = group["key"].as_str().unwrap();
    assert!(stdout(&failed).contains(key), "{}", stdout(&failed));
    assert!(
        stdout(&failed).contains("nemesis drew (swarm: "),
        "{}",
        stdout(&failed)
    );
    let matched = run(passing);
    assert_eq!(matched.status.code(), Some(0), "{}", stdout(&matched));
}

#[test]
fn the_hunt_summary_says_which_draws_found_each_failure() {
    let o = splitbrain([
        "hunt",
        BROKEN,
        "--seed-range",
        "1..=200",
        "--keep-going",
        "--no-shrink",
    ]);
    assert_no_panic(&o);
    let text = stdout(&o);
    assert!(text.contains("kinds on in every failing seed: "), "{text}");
    assert!(text.contains("failing seeds with each kind on: "), "{text}");
    assert!(text.contains("first seed drew (swarm: "), "{text}");
}
