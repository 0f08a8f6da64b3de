//! `splitbrain run FILE --plot DIR`: the single-run pictures are well-formed, carry the run's
//! own numbers, and are a pure function of scenario and seed.

use crate::common;

use common::{
    file_names, read_folder, scratch, scratch_path, shipped_scenario, splitbrain,
    splitbrain_limited, stderr,
};
use std::path::{Path, PathBuf};

fn plot(scenario: &str, name: &str) -> (PathBuf, serde_json::Value) {
    let dir = scratch_path(name);
    let o = splitbrain(["run", scenario, "--plot", dir.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (dir, serde_json::from_slice(&o.stdout).unwrap())
}

#[test]
fn run_plot_writes_well_formed_charts_and_a_report() {
    let (dir, _) = plot("scenarios/raft-leader-crash.ron", "files");
    let names: Vec<String> = read_folder(&dir).into_keys().collect();
    for expected in [
        "report.md",
        "report.html",
        "timeline.svg",
        "timeline.png",
        "timeline.csv",
        "timeline.json",
        "sequence_failover_1.svg",
    ] {
        assert!(
            names.contains(&expected.to_string()),
            "{expected} missing from {names:?}"
        );
    }
    for (name, bytes) in read_folder(&dir) {
        if name.ends_with(".svg") {
            let text = String::from_utf8(bytes).unwrap();
            roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        } else if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        } else if name.ends_with(".json") {
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("splitbrain run scenarios/raft-leader-crash.ron --seed 7 --plot"),
        "the exact command"
    );
    assert!(!html.contains("src=\"http"), "self-contained");
}

#[test]
fn the_timeline_numbers_are_the_runs_own_leadership_spans() {
    let (dir, run) = plot("scenarios/raft-leader-crash.ron", "numbers");
    let csv = std::fs::read_to_string(dir.join("timeline.csv")).unwrap();
    let spans = run["report"]["leadership_spans"].as_array().unwrap();
    let rows: Vec<&str> = csv
        .lines()
        .filter(|l| l.starts_with("leadership,"))
        .collect();
    assert_eq!(rows.len(), spans.len());
    for span in spans {
        let from = span["from_ns"].as_u64().unwrap().to_string();
        assert!(
            rows.iter().any(|r| r.contains(&from)),
            "span from {from} not in {rows:?}"
        );
    }
}

#[test]
fn plotting_twice_gives_the_same_bytes() {
    let (a, _) = plot("scenarios/bully-partition.ron", "twice-a");
    let (b, _) = plot("scenarios/bully-partition.ron", "twice-b");
    let (fa, fb) = (read_folder(&a), read_folder(&b));
    assert_eq!(fa.len(), fb.len());
    for ((na, ba), (nb, bb)) in fa.iter().zip(&fb) {
        assert_eq!(na, nb);
        let differs = ba != bb;
        // The report names its own folder in the command line; everything else is identical.
        if na.starts_with("report.") {
            let (ta, tb) = (String::from_utf8_lossy(ba), String::from_utf8_lossy(bb));
            assert_eq!(
                ta.replace("twice-a", "X"),
                tb.replace("twice-b", "X"),
                "{na}"
            );
        } else {
            assert!(!differs, "{na} differs between two identical runs");
        }
    }
}

#[test]
fn an_unwritable_plot_folder_is_bad_input() {
    let o = splitbrain([
        "run",
        "scenarios/raft-healthy.ron",
        "--plot",
        "/proc/splitbrain-cannot-write-here",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("panicked"));
}

/// A copy of a shipped scenario that runs for `duration` instead.
fn longer(scenario: &str, duration: &str, dir: &Path) -> PathBuf {
    let text = shipped_scenario(scenario)
        .replace("duration: \"20s\"", &format!("duration: \"{duration}\""));
    assert!(text.contains(duration), "the scenario runs for 20s");
    let path = dir.join("longer.ron");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn run_plot_memory_stays_flat_in_the_length_of_the_run() {
    let dir = scratch("flat");
    let scenario = longer("raft-leader-crash.ron", "30m", &dir);
    // Keeping the whole trace of 30 simulated minutes took about 170 MB; the charts need only
    // the windows around the failovers. 150 MB of address space leaves room for the (debug)
    // binary and no room for the trace.
    let plot = dir.join("plot");
    let o = splitbrain_limited(
        150_000,
        &[
            "run",
            scenario.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let names: Vec<String> = read_folder(&plot).into_keys().collect();
    assert!(
        names.contains(&"sequence_failover_1.png".to_string()),
        "{names:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plot_folder_that_cannot_be_finished_leaves_no_file_that_looks_complete() {
    let dir = scratch_path("unfinished");
    std::fs::create_dir_all(dir.join("report.html").join("in-the-way")).unwrap();
    let o = splitbrain([
        "run",
        "scenarios/raft-leader-crash.ron",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("cannot write the report to"), "{err}");
    assert!(err.contains("  hint: the folder is as it was"), "{err}");
    assert_eq!(file_names(&dir), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}
