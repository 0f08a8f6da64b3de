//! The time-to-bug benchmark's scenarios (benches/time-to-bug/, docs/hunting.md, "Time to
//! bug") stay what the benchmark needs: each validates, names on a `// breaks:` line the
//! invariants its unsafe setting breaks, and (but for the three the benchmark shows to be slow)
//! a short hunt finds one of them, on a seed that `run --seed` replays to the same violation.

use crate::common;

use common::{assert_no_panic, json, repo_root, scratch, splitbrain, stdout};
use std::path::{Path, PathBuf};

/// Found only after hundreds or thousands of seeds (the benchmark's table), or by no seed
/// hunt at all (the 3-node files: a systematic search's rows, benches/systematic.py):
/// validated, not hunted here.
const SLOW: &[&str] = &[
    "raft-forgets-vote.ron",
    "raft-forgets-vote-no-prevote.ron",
    "raft-forgets-vote-crash-bridge.ron",
    "raft-forgets-vote-3.ron",
    "raft-forgets-vote-3-no-prevote.ron",
];

/// The invariants the checker knows for the built-in algorithms (docs/scenario-format.md).
const INVARIANTS: &[&str] = &["election_safety", "fencing_safety", "term_monotonic"];

/// Every scenario of benches/time-to-bug/, relative to the repository root, sorted.
fn bench_files() -> Vec<PathBuf> {
    let dir = repo_root().join("benches").join("time-to-bug");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the benches/time-to-bug folder exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|x| x == "ron"))
        .map(|path| {
            PathBuf::from("benches/time-to-bug").join(path.file_name().expect("a file name"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the benchmark looks empty: {files:?}");
    files
}

/// The invariants a bench scenario says it breaks.
fn breaks_of(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(repo_root().join(file)).expect("readable scenario");
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("// breaks:"))
        .unwrap_or_else(|| panic!("{}: no `// breaks:` line", file.display()));
    line.split(',')
        .map(|name| name.trim().to_string())
        .collect()
}

#[test]
fn every_time_to_bug_scenario_validates() {
    let files = bench_files();
    let mut args = vec!["check".to_string()];
    args.extend(files.iter().map(|file| file.display().to_string()));
    let o = splitbrain(args);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(stdout(&o).matches(": ok").count(), files.len(), "{o:?}");
}

#[test]
fn every_time_to_bug_scenario_names_invariants_the_checker_knows() {
    for file in bench_files() {
        let breaks = breaks_of(&file);
        assert!(!breaks.is_empty(), "{}: empty `// breaks:`", file.display());
        for name in &breaks {
            assert!(
                INVARIANTS.contains(&name.as_str()),
                "{}: unknown invariant {name}",
                file.display()
            );
        }
    }
}

#[test]
fn a_short_hunt_finds_what_each_fast_time_to_bug_scenario_breaks() {
    let out = scratch("hunts");
    for file in bench_files() {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        if SLOW.contains(&name.as_str()) {
            continue;
        }
        let path = file.display().to_string();
        // The hunt stops after the batch of 64 seeds that holds the first violation.
        let o = splitbrain([
            "hunt",
            path.as_str(),
            "--seeds",
            "640",
            "--no-shrink",
            "--json",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_no_panic(&o);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{path}: no violation in 640 seeds: {o:?}"
        );
        let summary = json(&o)["summary"].clone();
        let failures = summary["failures"].as_array().expect("failures").clone();
        let breaks = breaks_of(&file);
        let found = failures
            .iter()
            .find(|f| breaks.contains(&f["key"].as_str().unwrap().to_string()))
            .unwrap_or_else(|| panic!("{path}: found {failures:?}, not one of {breaks:?}"));
        let seed = found["first_seed"].as_u64().unwrap().to_string();
        let key = found["key"].as_str().unwrap();
        let replay = splitbrain(["run", path.as_str(), "--seed", seed.as_str(), "--quiet"]);
        assert_no_panic(&replay);
        assert_eq!(
            replay.status.code(),
            Some(1),
            "{path} seed {seed}: {replay:?}"
        );
        assert!(
            stdout(&replay).contains(&format!("VIOLATION of {key}")),
            "{path} seed {seed}: {}",
            stdout(&replay)
        );
    }
}
