//! `splitbrain run FILE --plot DIR`: the single-run pictures are well-formed, carry the run's
//! own numbers, and are a pure function of scenario and seed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn splitbrain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

fn plot(scenario: &str, name: &str) -> (PathBuf, serde_json::Value) {
    let dir = std::env::temp_dir().join(format!(
        "splitbrain-plot-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let o = splitbrain(&["run", scenario, "--plot", dir.to_str().unwrap(), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (dir, serde_json::from_slice(&o.stdout).unwrap())
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn run_plot_writes_well_formed_charts_and_a_report() {
    let (dir, _) = plot("scenarios/raft-leader-crash.ron", "files");
    let names: Vec<String> = files(&dir).into_iter().map(|(n, _)| n).collect();
    for expected in [
        "report.md",
        "report.html",
        "timeline.svg",
        "timeline.png",
        "timeline.csv",
        "timeline.json",
        "sequence-failover-1.svg",
    ] {
        assert!(
            names.contains(&expected.to_string()),
            "{expected} missing from {names:?}"
        );
    }
    for (name, bytes) in files(&dir) {
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
    let (fa, fb) = (files(&a), files(&b));
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
    let o = splitbrain(&[
        "run",
        "scenarios/raft-healthy.ron",
        "--plot",
        "/proc/splitbrain-cannot-write-here",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}

/// A copy of a shipped scenario that runs for `duration` instead.
fn longer(scenario: &str, duration: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(scenario))
        .unwrap()
        .replace("duration: \"20s\"", &format!("duration: \"{duration}\""));
    assert!(text.contains(duration), "the scenario runs for 20s");
    let path = dir.join("longer.ron");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn run_plot_memory_stays_flat_in_the_length_of_the_run() {
    let dir =
        std::env::temp_dir().join(format!("splitbrain-plot-test-{}-flat", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = longer("scenarios/raft-leader-crash.ron", "30m", &dir);
    // Keeping the whole trace of 30 simulated minutes took about 170 MB; the charts need only
    // the windows around the failovers. 150 MB of address space leaves room for the (debug)
    // binary and no room for the trace.
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 150000; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_splitbrain"))
        .arg("run")
        .arg(&scenario)
        .arg("--plot")
        .arg(dir.join("plot"))
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let names: Vec<String> = files(&dir.join("plot"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(
        names.contains(&"sequence-failover-1.png".to_string()),
        "{names:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plot_folder_that_cannot_be_finished_leaves_no_file_that_looks_complete() {
    let dir = std::env::temp_dir().join(format!(
        "splitbrain-plot-test-{}-unfinished",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("report.html").join("in-the-way")).unwrap();
    let o = splitbrain(&[
        "run",
        "scenarios/raft-leader-crash.ron",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot write the report to"), "{err}");
    assert!(
        err.contains("  hint: nothing of this report was kept"),
        "{err}"
    );
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}
