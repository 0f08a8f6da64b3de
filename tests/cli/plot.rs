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
        // The report and the page name their own folder in the command line; everything
        // else is identical.
        if na.starts_with("report.") || na == "run.html" {
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

/// The JSON the run's page (`run.html`) embeds.
fn view_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"run-data\">";
    let start = html.find(open).expect("the page embeds its data") + open.len();
    let end = start + html[start..].find("</script>").expect("the data ends");
    serde_json::from_str(&html[start..end]).expect("the embedded data is JSON")
}

#[test]
fn run_plot_writes_a_self_contained_page_holding_every_event() {
    let dir = scratch_path("view-files");
    let trace = scratch_path("view-files-trace.jsonl");
    let o = splitbrain([
        "run",
        "scenarios/raft-leader-crash.ron",
        "--plot",
        dir.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(dir.join("run.html")).unwrap();
    for remote in ["http://", "https://", "src=", "href=", "@import", "url("] {
        assert!(!html.contains(remote), "run.html refers to {remote}");
    }
    assert!(
        html.contains("<script>") && html.contains("<style>"),
        "inline"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let data = view_data(&html);
    let events = data["events"].as_array().unwrap();
    assert_eq!(events.len(), lines.len(), "one event per trace line");
    assert_eq!(data["total"], lines.len());
    let kinds = data["kinds"].as_array().unwrap();
    let strings = data["strings"].as_array().unwrap();
    for (e, line) in events.iter().zip(&lines) {
        assert_eq!(e[0], line["t"]);
        assert_eq!(e[1], line["node"]);
        assert_eq!(e[2], line["local"]);
        assert_eq!(kinds[e[3].as_u64().unwrap() as usize], line["ev"]);
        assert_eq!(strings[e[4].as_u64().unwrap() as usize], line["what"]);
        assert_eq!(
            (e[5].clone(), e[6].clone()),
            (line["from"].clone(), line["sent"].clone())
        );
        assert_eq!(e[7], line["term"]);
        assert_eq!(e[8] == 1, line["leader"] == true);
        let check = &strings[e[9].as_u64().unwrap() as usize];
        assert_eq!(
            if check == "" {
                "ok"
            } else {
                check.as_str().unwrap()
            },
            line["check"]
        );
    }
    assert_eq!(
        data["first_violation"],
        serde_json::Value::Null,
        "a safe run"
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("run.html"), "the report points to the page");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn the_page_of_a_violating_run_opens_at_its_first_violation() {
    let dir = scratch_path("view-violation");
    let trace = scratch_path("view-violation-trace.jsonl");
    let o = splitbrain([
        "run",
        "scenarios/raft-broken-forgets-vote.ron",
        "--plot",
        dir.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first_bad = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .position(|l| !l.ends_with("\"check\":\"ok\"}"))
        .expect("the scenario violates");
    let data = view_data(&std::fs::read_to_string(dir.join("run.html")).unwrap());
    assert_eq!(data["first_violation"], first_bad);
    let violations = data["violations"].as_array().unwrap();
    assert!(
        violations
            .iter()
            .any(|v| v.as_str().unwrap().starts_with("election_safety: ")),
        "{violations:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&trace);
}

#[test]
fn the_page_is_the_same_bytes_for_the_same_run() {
    let pages: Vec<String> = ["view-twice-a", "view-twice-b"]
        .iter()
        .map(|name| {
            let dir = scratch_path(name);
            let o = splitbrain([
                "run",
                "scenarios/raft-broken-forgets-vote.ron",
                "--plot",
                dir.to_str().unwrap(),
                "--quiet",
            ]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let html = std::fs::read_to_string(dir.join("run.html")).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            // The command line names its own folder; everything else is identical.
            html.replace(name, "X")
        })
        .collect();
    assert_eq!(pages[0], pages[1]);
}
