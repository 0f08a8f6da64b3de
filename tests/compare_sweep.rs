//! `splitbrain compare` and `sweep` end to end: the output folder (report.md, report.html,
//! every chart as well-formed SVG and PNG with its CSV and JSON), CSV numbers that equal the
//! command's own summary, byte-identical folders from the same inputs, and bad arguments that
//! exit 2 without panicking.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn splitbrain(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_splitbrain"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs")
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "splitbrain-compare-sweep-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn no_panic(output: &Output) {
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// Every file of a folder, by name.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// Checks the report files and every chart of `charts`; returns the folder's files.
fn check_folder(dir: &Path, charts: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let files = snapshot(dir);
    let md = String::from_utf8(files["report.md"].clone()).unwrap();
    let html = String::from_utf8(files["report.html"].clone()).unwrap();
    assert!(md.starts_with("# "), "{md}");
    assert!(
        md.contains("splitbrain "),
        "the report gives the command: {md}"
    );
    assert!(html.contains("<svg"), "charts are inline in the html");
    assert!(!html.contains("<script"), "no script in the html");
    for chart in charts {
        let svg = String::from_utf8(files[&format!("{chart}.svg")].clone()).unwrap();
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{chart}.svg: {e}"));
        let png = &files[&format!("{chart}.png")];
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{chart}.png");
        let csv = String::from_utf8(files[&format!("{chart}.csv")].clone()).unwrap();
        assert!(csv.lines().count() >= 2, "{chart}.csv has rows: {csv}");
        let data: serde_json::Value =
            serde_json::from_slice(&files[&format!("{chart}.json")]).unwrap();
        assert_eq!(data["name"], *chart);
        assert_eq!(
            data["rows"].as_array().unwrap().len(),
            csv.lines().count() - 1,
            "{chart}: json and csv rows"
        );
        assert!(md.contains(&format!("({chart}.png)")), "{chart} is shown");
    }
    files
}

/// Rows of `NAME.csv` as `column -> cell` maps (no quoted commas in the columns read here).
fn csv_rows(files: &BTreeMap<String, Vec<u8>>, name: &str) -> Vec<BTreeMap<String, String>> {
    let text = String::from_utf8(files[&format!("{name}.csv")].clone()).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn compare_writes_a_complete_folder_whose_numbers_match_its_summary_and_repeat() {
    let out = scratch("compare");
    let dir = out.join("report");
    let args = [
        "compare",
        "scenarios/compare-failover.ron",
        "--algorithms",
        "raft,bully,ring",
        "--seeds",
        "4",
        "--sizes",
        "3,5",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ];
    let first = splitbrain(&args);
    no_panic(&first);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let summary = json(&first);
    let mut names: Vec<String> = [
        "failover_cdf",
        "messages_per_election",
        "messages_vs_cluster_size",
    ]
    .map(String::from)
    .to_vec();
    for alg in ["raft", "bully", "ring"] {
        names.push(format!("timeline_{alg}"));
        names.push(format!("sequence_{alg}"));
    }
    let charts: Vec<&str> = names.iter().map(String::as_str).collect();
    let files = check_folder(&dir, &charts);
    let md = String::from_utf8(files["report.md"].clone()).unwrap();
    assert!(md.contains("--seeds 4"), "{md}");
    assert!(md.contains("1..=4"), "the seeds are listed: {md}");

    // The CDF's rows per algorithm are its failovers, as the summary says.
    let cdf = csv_rows(&files, "failover_cdf");
    let algorithms = summary["algorithms"].as_array().unwrap();
    assert_eq!(algorithms.len(), 3);
    for a in algorithms {
        let label = a["label"].as_str().unwrap();
        let rows = cdf.iter().filter(|r| r["series"] == label).count();
        assert_eq!(rows as u64, a["failovers"].as_u64().unwrap(), "{label}");
        assert!(rows >= 4, "{label}: a failover per fault per seed");
        let unresolved = cdf
            .iter()
            .filter(|r| r["series"] == label && r["failover_ns"].is_empty())
            .count();
        assert_eq!(unresolved as u64, a["unresolved"].as_u64().unwrap());
        // The p99 in summary.csv is the one the command printed.
        let row = csv_rows(&files, "summary")
            .into_iter()
            .find(|r| r["algorithm"] == label)
            .unwrap();
        assert_eq!(
            row["recovery_p99_ns"],
            a["recovery"]["p99_ns"].as_u64().unwrap().to_string()
        );
        // The objective is met and broken down.
        let o = &a["objective"];
        assert_eq!(o["budget_ns"], 2_000_000_000u64);
        assert_eq!(o["startup_delay_ns"], 100_000_000u64);
        assert_eq!(o["met"], true);
        // Messages per election: the chart's segments sum to the summary's mean.
        let total: f64 = csv_rows(&files, "messages_per_election")
            .iter()
            .filter(|r| r["group"] == label)
            .map(|r| r["messages_per_election"].parse::<f64>().unwrap())
            .sum();
        let said = a["messages_per_election"].as_f64().unwrap();
        assert!((total - said).abs() < 1e-9, "{label}: {total} vs {said}");
    }
    // Raft with quorum never overlaps much; Bully and Ring have fenced stale writes.
    let bully = algorithms.iter().find(|a| a["label"] == "bully").unwrap();
    assert!(bully["fenced_rejections"].as_u64().unwrap() > 0);

    // The same inputs give the same bytes.
    let second = splitbrain(&args);
    assert_eq!(second.status.code(), Some(0));
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(files, snapshot(&dir), "the folder is byte-identical");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn sweep_writes_a_folder_per_value_and_repeats_byte_for_byte() {
    let out = scratch("sweep");
    let dir = out.join("report");
    let args = [
        "sweep",
        "scenarios/sweep-election-timeout.ron",
        "--param",
        "election_timeout=150ms..300ms,150ms..160ms",
        "--trials",
        "6",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ];
    let first = splitbrain(&args);
    no_panic(&first);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let summary = json(&first);
    let files = check_folder(&dir, &["failover_cdf", "messages_per_election"]);
    let cdf = csv_rows(&files, "failover_cdf");
    let values = summary["values"].as_array().unwrap();
    assert_eq!(values.len(), 2);
    for v in values {
        let label = v["label"].as_str().unwrap();
        assert!(label.starts_with("election_timeout="), "{label}");
        let rows = cdf.iter().filter(|r| r["series"] == label).count();
        assert_eq!(rows as u64, v["failovers"].as_u64().unwrap(), "{label}");
        assert_eq!(rows, 6, "{label}: one failover per trial");
        let share = v["first_round_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&share));
    }
    // Each trial's offset is within the 50ms heartbeat and the same for every value.
    let trials = csv_rows(&files, "trials");
    assert_eq!(trials.len(), 12);
    for t in &trials {
        let offset: u64 = t["offset_ns"].parse().unwrap();
        assert!(offset < 50_000_000, "{offset}");
        let same = trials
            .iter()
            .find(|u| u["trial"] == t["trial"] && u["value"] != t["value"])
            .unwrap();
        assert_eq!(same["offset_ns"], t["offset_ns"]);
    }
    let second = splitbrain(&args);
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(files, snapshot(&dir), "the folder is byte-identical");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_sweep_of_cluster_sizes_draws_messages_against_size() {
    let out = scratch("nodes");
    let dir = out.join("report");
    let o = splitbrain(&[
        "sweep",
        "scenarios/sweep-election-timeout.ron",
        "--param",
        "nodes=3,5,7",
        "--trials",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let files = check_folder(
        &dir,
        &[
            "failover_cdf",
            "messages_per_election",
            "messages_vs_cluster_size",
        ],
    );
    let points = csv_rows(&files, "messages_vs_cluster_size");
    let nodes: Vec<&str> = points.iter().map(|r| r["nodes"].as_str()).collect();
    assert_eq!(nodes, ["3", "5", "7"]);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_arguments_exit_2_with_a_hint_and_no_panic() {
    let out = scratch("bad");
    let dir = out.join("never");
    let d = dir.to_str().unwrap();
    let sweep = "scenarios/sweep-election-timeout.ron";
    let cases: Vec<Vec<&str>> = vec![
        vec!["compare", sweep, "--algorithms", "raft,paxos", "--out", d],
        vec!["compare", sweep, "--seeds", "0", "--out", d],
        vec!["compare", "scenarios/no-such-file.ron", "--out", d],
        vec!["sweep", sweep, "--param", "bogus=1", "--out", d],
        vec!["sweep", sweep, "--param", "election_timeout", "--out", d],
        vec![
            "sweep",
            sweep,
            "--param",
            "election_timeout=1ms",
            "--out",
            d,
        ],
        vec!["sweep", sweep, "--param", "heartbeat=400ms", "--out", d],
        vec!["sweep", sweep, "--param", "failure_timeout=1s", "--out", d],
        vec!["sweep", sweep, "--param", "nodes=0", "--out", d],
        vec!["sweep", sweep, "--param", "loss=1.5", "--out", d],
        vec!["sweep", sweep, "--param", "latency=fast", "--out", d],
        vec![
            "sweep", sweep, "--param", "nodes=3", "--trials", "0", "--out", d,
        ],
    ];
    for args in cases {
        let o = splitbrain(&args);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("error") || err.contains(':'),
            "{args:?}: {err}"
        );
        if args[0] == "sweep" || args.contains(&"raft,paxos") {
            assert!(err.contains("  hint: "), "{args:?}: {err}");
        }
    }
    assert!(!dir.exists(), "nothing is written on bad input");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_lease_sweep_scales_the_lease_design_and_failover_follows_it() {
    let out = scratch("lease");
    let dir = out.join("report");
    let o = splitbrain(&[
        "sweep",
        "scenarios/k8s-handover.ron",
        "--param",
        "lease=600ms,3s",
        "--trials",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let files = check_folder(&dir, &["failover_cdf", "messages_per_election"]);
    let summary = csv_rows(&files, "summary");
    let slowest = |value: &str| -> u64 {
        let row = summary
            .iter()
            .find(|r| r["value"] == value)
            .unwrap_or_else(|| panic!("no {value} in {summary:?}"));
        row["recovery_max_ns"].parse().expect("a number")
    };
    // The crash fails over after about one lease duration, counted from the candidates' last
    // sight of a renewal, which may come before the crash (the handover is faster).
    assert!(
        slowest("lease=600ms") < 1_000_000_000,
        "{}",
        slowest("lease=600ms")
    );
    assert!(
        slowest("lease=3s") > 2_000_000_000,
        "{}",
        slowest("lease=3s")
    );
    let _ = std::fs::remove_dir_all(&out);
}
