//! `splitbrain compare` and `sweep` end to end: the output folder (report.md, report.html,
//! every chart as well-formed SVG and PNG with its CSV and JSON), CSV numbers that equal the
//! command's own summary, byte-identical folders from the same inputs, and bad arguments that
//! exit 2 without panicking.

use crate::common;

use common::{
    assert_no_panic, csv_rows, file_names, json, read_folder, scenario_file, scratch, splitbrain,
    splitbrain_limited, stderr, stdout,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Checks the report files and every chart of `charts`; returns the folder's files.
fn check_folder(dir: &Path, charts: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let files = read_folder(dir);
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
    let first = splitbrain(args);
    assert_no_panic(&first);
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
    // Four seeds bound no p99: the note says so, and every percentile has its interval.
    assert!(
        md.contains("too few samples to bound these from above"),
        "{md}"
    );
    let percentiles = csv_rows(&files, "percentiles");
    let p99 = percentiles
        .iter()
        .find(|r| r["design"] == "raft" && r["measure"] == "recovery" && r["percentile"] == "p99")
        .expect("raft's recovery p99 row");
    assert!(p99["high_ns"].is_empty(), "{p99:?}");
    let recovery = summary["algorithms"][0]["recovery"]["p99_interval"].clone();
    assert!(recovery["high_ns"].is_null(), "{recovery}");

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
            .find(|r| r["design"] == label)
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
    // Each design says where its settings came from: the scenario's own algorithm keeps its
    // settings, the others run their built-in defaults, and the report says so.
    let origins: Vec<(&str, &str)> = summary["designs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap(), d["origin"].as_str().unwrap()))
        .collect();
    assert_eq!(
        origins,
        [
            ("raft", "scenario_algorithm"),
            ("bully", "built_in_defaults"),
            ("ring", "built_in_defaults")
        ]
    );
    assert!(md.contains("built-in defaults (--algorithms)"), "{md}");
    // Raft with quorum never overlaps much; Bully and Ring have fenced stale writes.
    let bully = algorithms.iter().find(|a| a["label"] == "bully").unwrap();
    assert!(bully["fenced_rejections"].as_u64().unwrap() > 0);

    // The same inputs give the same bytes, on one thread as on every core.
    let second = splitbrain(args.iter().copied().chain(["--jobs", "1"]));
    assert_eq!(second.status.code(), Some(0));
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(files, read_folder(&dir), "the folder is byte-identical");
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
    let first = splitbrain(args);
    assert_no_panic(&first);
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
    // On one thread as on every core.
    let second = splitbrain(args.iter().copied().chain(["--jobs", "1"]));
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(files, read_folder(&dir), "the folder is byte-identical");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_sweep_of_the_election_timer_rule_runs_each_rule_on_the_same_trials() {
    let out = scratch("timer-reset");
    let dir = out.join("report");
    let o = splitbrain([
        "sweep",
        "scenarios/sweep-timer-reset.ron",
        "--param",
        "timer_reset=OnGrantOrLeader,OnAnyStepDown",
        "--trials",
        "3",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let summary = json(&o);
    let labels: Vec<&str> = summary["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["timer_reset=OnGrantOrLeader", "timer_reset=OnAnyStepDown"]
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_sweep_of_cluster_sizes_draws_messages_against_size() {
    let out = scratch("nodes");
    let dir = out.join("report");
    let o = splitbrain([
        "sweep",
        "scenarios/sweep-election-timeout.ron",
        "--param",
        "nodes=3,5,7",
        "--trials",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
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
        vec![
            "sweep",
            sweep,
            "--param",
            "timer_reset=Sometimes",
            "--out",
            d,
        ],
        vec!["sweep", sweep, "--param", "failure_timeout=1s", "--out", d],
        vec!["sweep", sweep, "--param", "nodes=0", "--out", d],
        vec!["sweep", sweep, "--param", "loss=1.5", "--out", d],
        vec!["sweep", sweep, "--param", "latency=fast", "--out", d],
        vec![
            "sweep", sweep, "--param", "nodes=3", "--trials", "0", "--out", d,
        ],
        vec!["sweep", sweep, "--trials", "0", "--out", d],
        vec![
            "sweep",
            sweep,
            "--param",
            "election_timeout=150ms..300ms",
            "--heartbeat-fraction",
            "0",
            "--out",
            d,
        ],
        vec![
            "sweep",
            sweep,
            "--param",
            "election_timeout=150ms..300ms",
            "--heartbeat-fraction",
            "1",
            "--out",
            d,
        ],
        vec!["sweep", sweep, "--heartbeat-fraction", "0.1", "--out", d],
        vec![
            "sweep",
            sweep,
            "--param",
            "nodes=3",
            "--heartbeat-fraction",
            "0.1",
            "--out",
            d,
        ],
        vec![
            "sweep",
            sweep,
            "--param",
            "election_timeout=1ns..2ns",
            "--heartbeat-fraction",
            "0.1",
            "--out",
            d,
        ],
    ];
    for args in cases {
        let o = splitbrain(&args);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = stderr(&o);
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
    let o = splitbrain([
        "sweep",
        "scenarios/k8s-handover.ron",
        "--param",
        "lease=600ms,3s",
        "--trials",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
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

#[test]
fn absurd_seed_and_trial_counts_exit_2_naming_the_maximum_before_any_work() {
    let out = scratch("absurd");
    let dir = out.join("never");
    let d = dir.to_str().unwrap();
    let sweep = "scenarios/sweep-election-timeout.ron";
    let cases: Vec<Vec<&str>> = vec![
        vec!["compare", sweep, "--seeds", "1000000000", "--out", d],
        vec![
            "compare",
            sweep,
            "--seeds",
            "18446744073709551615",
            "--out",
            d,
        ],
        vec![
            "compare",
            sweep,
            "--algorithms",
            "raft,bully",
            "--seeds",
            "50001",
            "--out",
            d,
        ],
        vec![
            "sweep",
            sweep,
            "--param",
            "nodes=3",
            "--trials",
            "1000000000",
            "--out",
            d,
        ],
        vec![
            "sweep",
            sweep,
            "--param",
            "nodes=3,5",
            "--trials",
            "50001",
            "--out",
            d,
        ],
        vec![
            "compare",
            sweep,
            "--seeds",
            "1",
            "--sizes",
            "3,4000000000",
            "--out",
            d,
        ],
    ];
    for args in cases {
        let o = splitbrain_limited(2_000_000, &args);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = stderr(&o);
        if args.contains(&"--sizes") {
            assert!(err.contains("more nodes than a scenario may have"), "{err}");
            assert!(
                err.contains("  hint: give cluster sizes from 3 to 10000"),
                "{err}"
            );
            continue;
        }
        assert!(err.contains("100000 runs"), "{args:?}: {err}");
        assert!(err.contains("  hint: give at most --"), "{args:?}: {err}");
        assert!(err.contains("splitbrain hunt"), "{args:?}: {err}");
    }
    assert!(!dir.exists(), "nothing is written on bad input");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_sweep_where_nothing_is_elected_shows_no_messages_per_election_figure() {
    let out = scratch("nothing-elected");
    let dir = out.join("report");
    let args = [
        "sweep",
        "scenarios/sweep-election-timeout.ron",
        "--param",
        "loss=0,1",
        "--trials",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ];
    let text = splitbrain(args);
    assert_eq!(text.status.code(), Some(0), "{text:?}");
    let summary = stdout(&text);
    // The settings table comes first (its settings as they ran in report.md only: too wide
    // for a terminal), then the summary's row.
    let mut rows = summary.lines().filter(|l| l.starts_with("loss=1"));
    assert!(rows.next().unwrap().contains("Datagram"));
    let report = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert!(report.contains("Raft("), "{report}");
    let lost = rows.next().unwrap();
    assert!(lost.trim_end().ends_with("n/a"), "{lost}");
    let o = splitbrain([&args[..], &["--json"]].concat());
    let values = json(&o)["values"].as_array().unwrap().clone();
    assert!(values[0]["messages_per_election"].as_f64().unwrap() > 0.0);
    assert!(values[1]["messages_per_election"].is_null(), "{values:?}");
    // The tail: a median and a 99th percentile where elections were decided, none elsewhere.
    let p50 = values[0]["messages_per_election_p50"].as_u64().unwrap();
    let p99 = values[0]["messages_per_election_p99"].as_u64().unwrap();
    assert!(0 < p50 && p50 <= p99, "{p50} {p99}");
    assert!(
        values[1]["messages_per_election_p99"].is_null(),
        "{values:?}"
    );
    let files = read_folder(&dir);
    let summary = csv_rows(&files, "summary");
    assert_eq!(summary[1]["messages_per_election"], "");
    for (name, bytes) in files.iter().chain([(
        &"stdout".to_string(),
        &[text.stdout.clone(), o.stdout.clone()].concat(),
    )]) {
        if name.ends_with(".png") {
            continue;
        }
        let t = String::from_utf8_lossy(bytes);
        for bad in ["-0.0", "NaN", "inf"] {
            assert!(!t.contains(bad), "{name} contains {bad}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A stall shorter than the renew deadline is ridden through (the old leader writes again,
/// nobody is elected); one longer than the lease is a failover to a new leader. The table,
/// the JSON and summary.csv count the ridden-through ones, so that a recovery time without
/// any election behind it is not read as a failover time.
#[test]
fn a_sweep_counts_the_failovers_ridden_through() {
    let out = scratch("ridden-through");
    let dir = out.join("report");
    let args = [
        "sweep",
        "scenarios/k8s-holder-stall.ron",
        "--param",
        "stall=100ms,5s",
        "--trials",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ];
    let text = splitbrain(args);
    assert_eq!(text.status.code(), Some(0), "{text:?}");
    let table = stdout(&text);
    let header = table
        .lines()
        .find(|l| l.contains("ridden through"))
        .unwrap();
    assert!(
        header.contains("unresolved  ridden through  recovery p50"),
        "{header}"
    );
    let o = splitbrain([&args[..], &["--json"]].concat());
    let values = json(&o)["values"].as_array().unwrap().clone();
    let counts: Vec<(u64, u64, u64)> = values
        .iter()
        .map(|v| {
            let n = |k: &str| v[k].as_u64().unwrap();
            (n("failovers"), n("ridden_through"), n("elections"))
        })
        .collect();
    assert_eq!(counts, [(3, 3, 0), (3, 0, 3)]);
    let files = read_folder(&dir);
    let summary = csv_rows(&files, "summary");
    assert_eq!(summary[0]["ridden_through"], "3");
    assert_eq!(summary[1]["ridden_through"], "0");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_cluster_size_past_the_maximum_names_the_maximum() {
    let o = splitbrain([
        "sweep",
        "scenarios/sweep-election-timeout.ron",
        "--param",
        "nodes=10001",
        "--out",
        "never-written",
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("  hint: "), "{err}");
    assert!(err.contains("from 1 to 10000"), "{err}");
}

#[test]
fn a_folder_in_the_way_of_a_report_file_leaves_the_folder_as_it_was() {
    let out = scratch("unfinished");
    let dir = out.join("report");
    // The last file, report.html, cannot be moved into place: a folder has its name. An
    // earlier run's report.md is there too, and is kept (it is not replaced by half of a
    // new report).
    std::fs::create_dir_all(dir.join("report.html").join("in-the-way")).unwrap();
    std::fs::write(dir.join("report.md"), "an earlier report\n").unwrap();
    let d = dir.to_str().unwrap();
    let sweep = "scenarios/sweep-election-timeout.ron";
    for args in [
        vec!["compare", sweep, "--seeds", "2", "--sizes", "3", "--out", d],
        vec![
            "sweep", sweep, "--param", "nodes=3", "--trials", "2", "--out", d,
        ],
    ] {
        let o = splitbrain(&args);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = stderr(&o);
        assert!(err.contains("cannot write the report to"), "{err}");
        assert!(err.contains("report.html is in the way"), "{err}");
        assert!(err.contains("  hint: the folder is as it was"), "{err}");
        assert_eq!(file_names(&dir), ["report.md"], "{args:?}");
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert_eq!(md, "an earlier report\n");
        assert!(
            !dir.join(".report.partial").exists(),
            "no staging folder left"
        );
        assert!(o.stdout.is_empty(), "no summary for a report not written");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Runs the binary with every file it writes limited to 512 bytes, as a full disk would stop
/// it (root is held to the limit too, unlike to permissions).
fn splitbrain_small_files(args: &[&str]) -> std::process::Output {
    // SIGXFSZ ignored: the write fails with EFBIG instead of killing the process.
    let limited = "ulimit -f 1; trap '' XFSZ; exec \"$0\" \"$@\"";
    Command::new("sh")
        .arg("-c")
        .arg(limited)
        .arg(common::bin())
        .args(args)
        .current_dir(common::repo_root())
        .output()
        .expect("the command starts")
}

#[test]
fn a_report_rerun_that_fails_midway_keeps_the_previous_report_whole() {
    let out = scratch("rerun");
    let sweep = "scenarios/sweep-election-timeout.ron";
    for what in ["compare", "sweep", "run"] {
        let dir = out.join(what);
        let d = dir.to_str().unwrap();
        let args = match what {
            "compare" => vec!["compare", sweep, "--seeds", "2", "--sizes", "3", "--out", d],
            "sweep" => vec![
                "sweep", sweep, "--param", "nodes=3", "--trials", "2", "--out", d,
            ],
            _ => vec!["run", "-q", "scenarios/raft-leader-crash.ron", "--plot", d],
        };
        let o = splitbrain(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {o:?}");
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let before = read_folder(&dir);
        assert!(before.contains_key("report.html"), "{before:?}");
        let o = splitbrain_small_files(&args);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = stderr(&o);
        assert!(err.contains("cannot write the report to"), "{err}");
        assert!(err.contains("file too large"), "{err}");
        assert!(err.contains("  hint: the folder is as it was"), "{err}");
        assert!(
            !dir.join(".report.partial").exists(),
            "{what}: staging left"
        );
        assert!(
            read_folder(&dir) == before,
            "{what}: the earlier report changed"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_report_folder_under_a_regular_file_is_bad_input() {
    let out = scratch("under-file");
    std::fs::write(out.join("file"), "").unwrap();
    let d = out.join("file").join("sub");
    let o = splitbrain([
        "sweep",
        "scenarios/sweep-election-timeout.ron",
        "--param",
        "nodes=3",
        "--trials",
        "1",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("cannot write the report to"), "{err}");
    // Refused before the run: the nearest existing parent is a file.
    assert!(err.contains("file exists and is not a folder"), "{err}");
    // The file itself as the folder: said as such, not as "file exists".
    let o = splitbrain([
        "compare",
        "scenarios/compare-failover.ron",
        "--seeds",
        "1",
        "--sizes",
        "3",
        "--out",
        out.join("file").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("exists and is not a folder"), "{err}");
    assert!(
        err.contains("  hint: the report is a folder of files"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(out.join("file")).unwrap(),
        b"",
        "the file is left alone"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// A tiny tmpfs mounted for one test and unmounted when dropped; `None` where this process
/// may not mount (not root).
struct TinyDisk(PathBuf);

impl TinyDisk {
    fn mount(dir: &Path, size: &str) -> Option<Self> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| TinyDisk(dir.to_path_buf()))
    }
}

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
    }
}

#[test]
fn a_full_disk_fails_the_report_with_exit_2_and_leaves_nothing_behind() {
    let out = scratch("full");
    let Some(disk) = TinyDisk::mount(&out.join("disk"), "256k") else {
        // Writes that fail midway are still covered by the folder-in-the-way test above.
        eprintln!("skipped: cannot mount a tmpfs here (not root)");
        return;
    };
    let d = disk.0.join("report");
    let o = splitbrain([
        "compare",
        "scenarios/compare-failover.ron",
        "--seeds",
        "2",
        "--sizes",
        "3",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("no space left on device"), "{err}");
    assert!(err.contains("  hint: the folder is as it was"), "{err}");
    assert!(!d.exists(), "the folder this run made is removed again");
    drop(disk);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_sweep_without_a_parameter_runs_the_scenario_as_written_trial_after_trial() {
    let out = scratch("sweep-plain");
    let dir = out.join("report");
    let o = splitbrain([
        "sweep",
        "scenarios/k8s-handover.ron",
        "--trials",
        "5",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let summary = json(&o);
    assert!(summary["param"].is_null(), "{summary}");
    let values = summary["values"].as_array().unwrap();
    assert_eq!(values.len(), 1);
    assert_eq!(values[0]["label"], "as written");
    assert_eq!(
        values[0]["failovers"], 10,
        "a handover and a crash per trial"
    );
    let files = check_folder(&dir, &["failover_cdf", "messages_per_election"]);
    assert_eq!(csv_rows(&files, "trials").len(), 5);
    let md = String::from_utf8(files["report.md"].clone()).unwrap();
    assert!(
        md.contains("splitbrain sweep scenarios/k8s-handover.ron --trials 5 --out"),
        "the command has no --param: {md}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_heartbeat_fraction_keeps_each_timeouts_heartbeat_at_that_share_of_its_minimum() {
    let out = scratch("sweep-heartbeat-fraction");
    let dir = out.join("report");
    let o = splitbrain([
        "sweep",
        "scenarios/sweep-election-timeout.ron",
        "--param",
        "election_timeout=150ms..300ms,300ms..600ms",
        "--heartbeat-fraction",
        "0.1",
        "--trials",
        "8",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(json(&o)["heartbeat_fraction"], 0.1);
    // A trial's offset is floor(u * heartbeat / 2^64) with u fixed by the trial: below the
    // heartbeat, and twice as large (to within 1 ns) where the heartbeat is twice as long.
    let files = read_folder(&dir);
    let trials = csv_rows(&files, "trials");
    let offset = |value: &str, trial: &str| -> u64 {
        trials
            .iter()
            .find(|t| t["value"] == value && t["trial"] == trial)
            .unwrap()["offset_ns"]
            .parse()
            .unwrap()
    };
    for trial in 1..=8 {
        let trial = trial.to_string();
        let short = offset("election_timeout=150ms..300ms", &trial);
        let long = offset("election_timeout=300ms..600ms", &trial);
        assert!(short < 15_000_000, "heartbeat 15ms: {short}");
        assert!(long < 30_000_000, "heartbeat 30ms: {long}");
        assert!(long.abs_diff(2 * short) <= 1, "{short} and {long}");
    }
    let md = String::from_utf8(files["report.md"].clone()).unwrap();
    assert!(md.contains("--heartbeat-fraction 0.1"), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn compare_runs_the_scenarios_designs_as_written_and_every_seed_replays() {
    let out = scratch("designs");
    let dir = out.join("report");
    let o = splitbrain([
        "compare",
        "scenarios/review-controller.ron",
        "--seeds",
        "3",
        "--sizes",
        "3",
        "--fencing",
        "both",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let summary = json(&o);

    // Each design twice, with and without fencing, with the settings the scenario gives.
    let designs = summary["designs"].as_array().unwrap();
    let names: Vec<&str> = designs
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "k8s-defaults-fenced",
            "k8s-defaults-unfenced",
            "etcd-10s-fenced",
            "etcd-10s-unfenced",
            "zk-6s-fenced",
            "zk-6s-unfenced"
        ]
    );
    let fencing: Vec<bool> = designs.iter().map(|d| d["fencing"] == true).collect();
    assert_eq!(fencing, [true, false, true, false, true, false]);
    assert_eq!(designs[2]["values"]["Etcd"]["ttl"], "10s");
    assert_eq!(designs[4]["values"]["ZooKeeper"]["session_timeout"], "6s");
    assert_eq!(designs[4]["values"]["ZooKeeper"]["tick"], "2s");
    assert_eq!(designs[0]["values"]["K8sLease"]["lease_duration"], "15s");
    assert!(designs[2]["settings"]
        .as_str()
        .unwrap()
        .starts_with("Etcd(ttl: \"10s\""));
    let groups = summary["algorithms"].as_array().unwrap();
    let labels: Vec<&str> = groups
        .iter()
        .map(|g| g["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, names, "results in the same order as the designs");

    // Without fencing the 10 s pause lets stale writes through for etcd; with it, none.
    let etcd_fenced = &groups[2];
    let etcd_unfenced = &groups[3];
    assert_eq!(etcd_fenced["stale_writes_accepted"], 0);
    assert!(etcd_unfenced["stale_writes_accepted"].as_u64().unwrap() > 0);
    assert!(etcd_fenced["fenced_rejections"].as_u64().unwrap() > 0);

    // The service's lifeline is named for what it is, and the resource says how it ran.
    let files = read_folder(&dir);
    let arrows = csv_rows(&files, "sequence_etcd-10s-unfenced");
    assert!(arrows.iter().any(|a| a["to"] == "etcd"), "{arrows:?}");
    assert!(!arrows.iter().any(|a| a["to"] == "n3" || a["from"] == "n3"));
    let svg = String::from_utf8(files["sequence_etcd-10s-unfenced.svg"].clone()).unwrap();
    assert!(svg.contains("not fenced"));

    // Every seed's replay command gives that seed's numbers.
    let failovers = csv_rows(&files, "failovers");
    let seeds = csv_rows(&files, "seeds");
    assert_eq!(seeds.len(), 18);
    for row in seeds.iter().filter(|r| r["seed"] == "2") {
        let (recovered, stale) = replayed(&row["replay"]);
        let listed = listed(&failovers, "design", &row["design"], "2");
        assert_eq!(recovered, listed, "{}", row["replay"]);
        assert_eq!(stale, row["stale_writes_accepted"], "{}", row["replay"]);
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn run_names_a_design_the_scenario_lists_or_exits_2() {
    let o = splitbrain(["run", "scenarios/review-controller.ron", "--design", "nope"]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("its designs are k8s-defaults, etcd-10s, zk-6s"),
        "{}",
        stderr(&o)
    );
    let o = splitbrain(["run", "scenarios/raft-healthy.ron", "--design", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("lists no `designs`"), "{}", stderr(&o));
}

#[test]
fn a_sweep_of_a_fault_parameter_runs_every_design_and_every_trial_replays() {
    let out = scratch("fault-param");
    let dir = out.join("report");
    let o = splitbrain([
        "sweep",
        "scenarios/review-controller.ron",
        "--param",
        "stall=2s,15s",
        "--fencing",
        "off",
        "--trials",
        "12",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let summary = json(&o);
    let values = summary["values"].as_array().unwrap();
    let labels: Vec<&str> = values
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "k8s-defaults stall=2s",
            "k8s-defaults stall=15s",
            "etcd-10s stall=2s",
            "etcd-10s stall=15s",
            "zk-6s stall=2s",
            "zk-6s stall=15s"
        ]
    );
    // A 2 s pause is shorter than every lease; 15 s outlasts etcd's 10 s TTL and ZooKeeper's
    // 6 s session, and without fencing the paused leader's write gets through.
    let violated = |i: usize| values[i]["seeds_with_safety_violations"].as_u64().unwrap();
    assert_eq!((violated(2), violated(4)), (0, 0));
    assert!(
        violated(3) > 6 && violated(5) > 6,
        "{} {}",
        violated(3),
        violated(5)
    );
    assert!(values[3]["stale_writes_accepted"].as_u64().unwrap() > 0);

    // The chart reviewers paste: one line per design, a point per value.
    let files = check_folder(
        &dir,
        &[
            "failover_cdf_k8s-defaults",
            "failover_cdf_etcd-10s",
            "failover_cdf_zk-6s",
            "safety_violations",
        ],
    );
    let points = csv_rows(&files, "safety_violations");
    assert_eq!(points.len(), 6);
    let etcd_15: Vec<_> = points
        .iter()
        .filter(|p| p["series"] == "etcd-10s" && p["value"] == "15s")
        .collect();
    assert_eq!(etcd_15.len(), 1);
    assert_eq!(etcd_15[0]["hits"], violated(3).to_string());
    assert_eq!(etcd_15[0]["trials"], "12");

    // A trial's replay command reproduces its failovers.
    let trials = csv_rows(&files, "trials");
    let failovers = csv_rows(&files, "failovers");
    let row = trials
        .iter()
        .find(|t| t["value"] == "etcd-10s stall=15s" && t["trial"] == "5")
        .unwrap();
    let (recovered, stale) = replayed(&row["replay"]);
    let listed = listed(&failovers, "value", &row["value"], "5");
    assert_eq!(recovered, listed, "{}", row["replay"]);
    assert_eq!(stale, row["stale_writes_accepted"]);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_sweep_with_fencing_both_runs_each_design_fenced_and_unfenced_on_the_same_trials() {
    let out = scratch("fencing-both");
    let dir = out.join("report");
    let o = splitbrain([
        "sweep",
        "scenarios/review-controller.ron",
        "--param",
        "stall=15s",
        "--fencing",
        "both",
        "--trials",
        "10",
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let summary = json(&o);
    assert!(
        summary["command"]
            .as_str()
            .unwrap()
            .contains("--fencing both"),
        "{}",
        summary["command"]
    );
    let values = summary["values"].as_array().unwrap();
    let labels: Vec<&str> = values
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "k8s-defaults-fenced stall=15s",
            "k8s-defaults-unfenced stall=15s",
            "etcd-10s-fenced stall=15s",
            "etcd-10s-unfenced stall=15s",
            "zk-6s-fenced stall=15s",
            "zk-6s-unfenced stall=15s"
        ]
    );
    // Every group's settings as they ran, with its fencing.
    let settings = summary["settings"].as_array().unwrap();
    assert_eq!(settings.len(), 6);
    assert_eq!(settings[3]["label"], "etcd-10s-unfenced stall=15s");
    assert_eq!(settings[3]["fencing"], false);
    assert_eq!(settings[2]["fencing"], true);
    let etcd = settings[3]["settings"].as_str().unwrap();
    assert!(etcd.starts_with("Etcd(ttl: \"10s\""), "{etcd}");
    // The same trials: fencing changes what the resource accepts, not the failover. With it
    // no stale write gets through and the paused etcd leader's writes are rejected instead.
    let field = |i: usize, name: &str| values[i][name].as_u64().unwrap();
    assert_eq!(field(2, "seeds_with_safety_violations"), 0);
    assert!(field(3, "seeds_with_safety_violations") > 5);
    assert_eq!(
        field(2, "fenced_rejections"),
        field(3, "stale_writes_accepted")
    );
    assert_eq!(values[2]["recovery"], values[3]["recovery"]);

    let files = check_folder(
        &dir,
        &[
            "failover_cdf_etcd-10s",
            "failover_cdf_zk-6s",
            "safety_violations",
        ],
    );
    let series: std::collections::BTreeSet<String> = csv_rows(&files, "safety_violations")
        .iter()
        .map(|p| p["series"].clone())
        .collect();
    assert!(series.contains("zk-6s-fenced") && series.contains("zk-6s-unfenced"));

    // Each half replays with its own fencing.
    let trials = csv_rows(&files, "trials");
    for (value, flag) in [
        ("etcd-10s-fenced stall=15s", "--fencing on"),
        ("etcd-10s-unfenced stall=15s", "--fencing off"),
    ] {
        let row = trials
            .iter()
            .find(|t| t["value"] == value && t["trial"] == "3")
            .unwrap();
        assert!(row["replay"].contains(flag), "{}", row["replay"]);
        let (_, stale) = replayed(&row["replay"]);
        assert_eq!(stale, row["stale_writes_accepted"], "{}", row["replay"]);
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_fault_parameter_needs_a_fault_of_its_kind_and_run_takes_one_value() {
    let out = scratch("fault-param-bad");
    let d = out.join("never");
    let o = splitbrain([
        "sweep",
        "scenarios/raft-healthy.ron",
        "--param",
        "stall=5s",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("add one to its faults, like"),
        "{}",
        stderr(&o)
    );
    assert!(!d.exists(), "nothing written");
    for bad in ["stall=5s,10s", "stall=0s", "clock_jump=soon", "drift=1.5"] {
        let o = splitbrain(["run", "scenarios/review-controller.ron", "--param", bad]);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {o:?}");
        assert!(stderr(&o).contains("hint:"), "{bad}: {}", stderr(&o));
    }
    let o = splitbrain([
        "run",
        "scenarios/review-controller.ron",
        "--param",
        "clock_jump=-2s",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

/// Runs a report's replay command (`splitbrain run ...`) with `--json`: its failovers'
/// recovery times (as CSV cells) and the stale writes the resource accepted.
fn replayed(command: &str) -> (Vec<String>, String) {
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[..2], ["splitbrain", "run"], "{command}");
    let mut args = words[1..].to_vec();
    args.push("--json");
    let replay = splitbrain(&args);
    assert_no_panic(&replay);
    let report = &json(&replay)["report"];
    let recovered = report["failovers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["recovery_ns"].to_string())
        .collect();
    (recovered, report["writes"]["accepted_stale"].to_string())
}

/// The recovery times `failovers.csv` lists for the group `label` (column `column`) and
/// `seed`.
fn listed(
    failovers: &[BTreeMap<String, String>],
    column: &str,
    label: &str,
    seed: &str,
) -> Vec<String> {
    failovers
        .iter()
        .filter(|f| f[column] == label && f["seed"] == seed)
        .map(|f| f["recovery_ns"].clone())
        .collect()
}

#[test]
fn a_setting_the_modeled_server_adjusts_is_reported_by_every_command() {
    let path = common::scratch_path("negotiated.ron");
    std::fs::write(
        &path,
        r#"Scenario(
            algorithm: ZooKeeper(tick: "100ms", session_timeout: "6s"),
            duration: "10s",
            designs: [(name: "etcd-1s", algorithm: Etcd(ttl: "1s")), (name: "zk", algorithm: ZooKeeper())],
            faults: [(at: "5s", do: Crash(Leader))],
        )"#,
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let negotiated = "session_timeout 6s is negotiated to 2s";
    let raised = "ttl 1s is raised to the minimum TTL 2s";

    let check = splitbrain(["check", file]);
    assert_eq!(check.status.code(), Some(0));
    assert!(stdout(&check).contains(negotiated), "{}", stdout(&check));
    assert!(stdout(&check).contains(&format!("design etcd-1s: {raised}")));

    let run = splitbrain(["run", file, "--json"]);
    assert!(stderr(&run).contains(negotiated), "{}", stderr(&run));
    let adjustments = json(&run)["adjustments"].clone();
    assert!(adjustments[0].as_str().unwrap().starts_with(negotiated));
    let design = splitbrain(["run", file, "--design", "zk", "--json"]);
    assert!(
        json(&design).get("adjustments").is_none(),
        "the design runs as written"
    );

    let out = scratch("negotiated");
    let dir = out.join("report");
    let compare = splitbrain(
        [
            "compare", file, "--seeds", "2", "--sizes", "3", "--json", "--out",
        ]
        .into_iter()
        .chain([dir.to_str().unwrap()]),
    );
    assert_eq!(compare.status.code(), Some(0), "{compare:?}");
    let designs = json(&compare)["designs"].clone();
    assert!(designs[0]["adjustments"][0]
        .as_str()
        .unwrap()
        .starts_with(raised));
    assert_eq!(designs[1]["adjustments"].as_array().unwrap().len(), 0);
    let md = String::from_utf8(read_folder(&dir)["report.md"].clone()).unwrap();
    assert!(md.contains(raised), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_fault_that_found_no_target_is_reported_not_dropped() {
    // 30% loss: now and then the ZooKeeper leader has stepped down after lost pings when the
    // crash strikes, and the crash finds no leader.
    let path = common::scratch_path("no-target.ron");
    std::fs::write(
        &path,
        r#"Scenario(
            name: "no-target", seed: 1, duration: "30s", nodes: 3,
            algorithm: ZooKeeper(tick: "200ms", session_timeout: "2s"),
            network: (latency: Uniform("1ms", "5ms"), loss: 0.3),
            faults: [(at: "10s", do: Crash(Leader), heal_after: "3s")],
        )"#,
    )
    .unwrap();
    let out = scratch("no-target");
    let dir = out.join("report");
    let o = splitbrain([
        "sweep",
        path.to_str().unwrap(),
        "--trials",
        "200",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let text = stdout(&o);
    assert!(text.contains("found no target"), "{text}");
    let files = read_folder(&dir);
    let summary = &csv_rows(&files, "summary")[0];
    let skipped: usize = summary["faults_skipped"].parse().unwrap();
    let failovers: usize = summary["failovers"].parse().unwrap();
    assert!(skipped > 0, "the scenario should skip a crash now and then");
    assert_eq!(
        failovers + skipped,
        200,
        "every crash is a failover or reported skipped"
    );
    let per_trial: usize = csv_rows(&files, "trials")
        .iter()
        .map(|t| t["faults_skipped"].parse::<usize>().unwrap())
        .sum();
    assert_eq!(per_trial, skipped);
    let md = String::from_utf8(files["report.md"].clone()).unwrap();
    assert!(md.contains("found no target"), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_alias_of_the_scenarios_algorithm_keeps_the_scenarios_settings_in_compare_and_run() {
    let out = scratch("alias");
    let dir = out.join("report");
    let o = splitbrain([
        "compare",
        "scenarios/k8s-handover.ron",
        "--algorithms",
        "kubernetes",
        "--seeds",
        "1",
        "--sizes",
        "3",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let design = &json(&o)["designs"][0];
    assert_eq!(design["origin"], "scenario_algorithm");
    assert_eq!(design["values"]["K8sLease"]["lease_duration"], "1.5s");
    let run = splitbrain([
        "run",
        "scenarios/k8s-handover.ron",
        "--algorithm",
        "K8sLease",
        "--json",
    ]);
    let plain = splitbrain(["run", "scenarios/k8s-handover.ron", "--json"]);
    assert_eq!(
        json(&run)["report"],
        json(&plain)["report"],
        "the scenario's own settings"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// Each design runs on its own algorithm's default transport, and every output names it:
/// the settings table on the terminal and in the report, designs.csv and the JSON summary.
#[test]
fn compare_names_the_transport_each_design_ran_on() {
    let out = scratch("compare-transports");
    let dir = out.join("report");
    let args = [
        "compare",
        "scenarios/review-controller.ron",
        "--seeds",
        "1",
        "--sizes",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ];
    let output = splitbrain(args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    let row = |name: &str| {
        let line = text.lines().find(|l| l.trim_start().starts_with(name));
        line.unwrap_or_else(|| panic!("{name} in {text}"))
            .to_string()
    };
    assert!(text.contains("transport"), "{text}");
    assert!(row("etcd-10s").contains("Stream"), "{text}");
    assert!(row("zk-6s").contains("Stream"), "{text}");
    assert!(row("k8s-defaults").contains("Datagram"), "{text}");
    let files = read_folder(&dir);
    let transports: Vec<(String, String)> = csv_rows(&files, "designs")
        .into_iter()
        .map(|r| (r["design"].clone(), r["transport"].clone()))
        .collect();
    let expected = [
        ("k8s-defaults", "Datagram"),
        ("etcd-10s", "Stream"),
        ("zk-6s", "Stream"),
    ]
    .map(|(d, t)| (d.to_string(), t.to_string()));
    assert_eq!(transports, expected);
    let md = String::from_utf8(files["report.md"].clone()).unwrap();
    assert!(md.contains("| transport |"), "{md}");
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let summary = json(&splitbrain(json_args));
    let named: Vec<&str> = summary["designs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["transport"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["Datagram", "Stream", "Stream"]);
    let _ = std::fs::remove_dir_all(&out);
}

/// `compare` shifts each seed's faults by its phase of the heartbeat, as `sweep` does, and the
/// replay command seeds.csv gives for a seed runs exactly that seed.
#[test]
fn a_compared_seeds_replay_command_reruns_its_failovers_exactly() {
    let out = scratch("compare-replay");
    let dir = out.join("report");
    let output = splitbrain([
        "compare",
        // Its designs: etcd (on Stream), ZooKeeper and the Kubernetes Lease (on Datagram).
        "scenarios/compare-leases.ron",
        "--seeds",
        "3",
        "--sizes",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let files = read_folder(&dir);
    let seeds = csv_rows(&files, "seeds");
    let offsets: std::collections::BTreeSet<&str> = seeds
        .iter()
        .filter(|r| r["design"] == "etcd")
        .map(|r| r["offset_ns"].as_str())
        .collect();
    assert_eq!(offsets.len(), 3, "each seed its own phase: {seeds:?}");
    let failovers = csv_rows(&files, "failovers");
    for design in ["etcd", "k8s-lease"] {
        let row = seeds
            .iter()
            .find(|r| r["design"] == design && r["seed"] == "3")
            .unwrap();
        let replay = &row["replay"];
        assert!(replay.contains("--trial 3"), "{replay}");
        let words: Vec<&str> = replay.split_whitespace().skip(1).collect();
        let mut run_args = words.clone();
        run_args.push("--json");
        let ran = json(&splitbrain(run_args));
        let transport = if design == "etcd" {
            "Stream"
        } else {
            "Datagram"
        };
        assert_eq!(ran["transport"], transport, "{replay}");
        let replayed: Vec<(u64, Option<u64>)> = ran["report"]["failovers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["at_ns"].as_u64().unwrap(), f["recovery_ns"].as_u64()))
            .collect();
        let compared: Vec<(u64, Option<u64>)> = failovers
            .iter()
            .filter(|r| r["design"] == design && r["seed"] == "3")
            .map(|r| (r["at_ns"].parse().unwrap(), r["recovery_ns"].parse().ok()))
            .collect();
        assert!(!compared.is_empty());
        assert_eq!(replayed, compared, "{replay}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `sweep` runs each design on its own transport too, and names it: in "What ran", the
/// settings table and groups.csv.
#[test]
fn sweep_names_the_transport_each_design_ran_on() {
    let out = scratch("sweep-transports");
    let dir = out.join("report");
    let output = splitbrain([
        "sweep",
        "scenarios/review-controller.ron",
        "--trials",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let files = read_folder(&dir);
    let transports: Vec<(String, String)> = csv_rows(&files, "groups")
        .into_iter()
        .map(|r| (r["design"].clone(), r["transport"].clone()))
        .collect();
    let expected = [
        ("k8s-defaults", "Datagram"),
        ("etcd-10s", "Stream"),
        ("zk-6s", "Stream"),
    ]
    .map(|(d, t)| (d.to_string(), t.to_string()));
    assert_eq!(transports, expected);
    let md = String::from_utf8(files["report.md"].clone()).unwrap();
    assert!(md.contains("etcd-10s on Stream"), "{md}");
    assert!(md.contains("| transport |"), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}

/// Three designs, a crash written for good and a slow disk: short, for the fault parameters
/// and `--designs`.
const THREE_DESIGNS: &str = r#"Scenario(
    algorithm: Raft(),
    nodes: 3,
    duration: "6s",
    designs: [
        (name: "fast", algorithm: Raft(heartbeat: "50ms")),
        (name: "slow", algorithm: Raft(heartbeat: "100ms")),
        (name: "bully", algorithm: Bully()),
    ],
    faults: [
        (at: "2s", do: Crash(Leader)),
        (at: "1s", do: SlowDisk(Node(0), "20ms"), heal_after: "1s"),
    ],
)"#;

#[test]
fn sweep_designs_runs_only_the_designs_named_and_a_crash_length_is_swept() {
    let file = scenario_file("three-designs", THREE_DESIGNS);
    let out = file.parent().unwrap().join("report");
    let args = [
        "sweep",
        file.to_str().unwrap(),
        "--designs",
        "slow,fast",
        "--param",
        "crash=1s,2s",
        "--trials",
        "2",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ];
    let first = splitbrain(args);
    assert_no_panic(&first);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let summary = json(&first);
    let labels: Vec<&str> = summary["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "slow crash=1s",
            "slow crash=2s",
            "fast crash=1s",
            "fast crash=2s"
        ]
    );
    assert!(
        summary["command"]
            .as_str()
            .unwrap()
            .contains("--designs slow,fast"),
        "{summary}"
    );
    // The same folder on one thread as on two.
    let files = read_folder(&out);
    let second = splitbrain(args.iter().copied().chain(["--jobs", "1"]));
    let third = splitbrain(args.iter().copied().chain(["--jobs", "2"]));
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(second.stdout, third.stdout);
    assert_eq!(files, read_folder(&out), "the folder is byte-identical");
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

#[test]
fn an_unknown_design_or_a_fault_the_scenario_lacks_exits_2_with_a_hint() {
    let file = scenario_file("designs-bad", THREE_DESIGNS);
    let out = file.parent().unwrap().join("report");
    let (file, out) = (file.to_str().unwrap(), out.to_str().unwrap());
    let plain = "scenarios/sweep-election-timeout.ron";
    let cases: [(&[&str], &str); 4] = [
        (
            &["sweep", file, "--designs", "fats", "--out", out],
            "no design named \"fats\"\n  hint: did you mean `fast`? its designs are fast, slow, bully",
        ),
        (
            &["sweep", plain, "--designs", "fast", "--out", out],
            "lists no `designs`\n  hint: drop --designs",
        ),
        (
            &["sweep", plain, "--param", "slow_disk=1s", "--out", out],
            "slow_disk sets every SlowDisk's fsync time, and the scenario has no such fault\n  hint: add one",
        ),
        (
            &["sweep", file, "--param", "fault_duration=1s..2s", "--out", out],
            "the scenario has no nemesis\n  hint: add one",
        ),
    ];
    for (args, expected) in cases {
        let o = splitbrain(args);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
    }
    assert!(!Path::new(out).exists(), "nothing is written on bad input");
    let _ = std::fs::remove_dir_all(Path::new(file).parent().unwrap());
}

/// One file's faults serve designs on different services: `ServiceOfLeader` strikes the
/// process the holder talks to (an etcd member, a ZooKeeper server, an API server), and
/// `ServiceFollowers` every member of each service but its leader (behind the API servers,
/// the etcd members).
#[test]
fn one_service_fault_strikes_the_leaders_service_process_in_designs_on_different_services() {
    let path = common::scratch_path("leaders-service.ron");
    std::fs::write(
        &path,
        r#"Scenario(
            name: "leaders-service", seed: 1, duration: "30s", nodes: 3,
            algorithm: Etcd(ttl: "2s", members: 3),
            designs: [
                (name: "etcd", algorithm: Etcd(ttl: "2s", members: 3)),
                (name: "zk", algorithm: ZooKeeper(servers: 3)),
                (name: "k8s", algorithm: K8sLease(apiservers: 2, etcd_members: 3)),
            ],
            network: (latency: Uniform("1ms", "5ms")),
            faults: [
                (at: "15s", do: Crash(ServiceOfLeader), heal_after: "3s"),
                (at: "24s", do: Pause(ServiceFollowers, "2s")),
            ],
        )"#,
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let out = scratch("leaders-service");
    let dir = out.join("report");
    let compare = splitbrain(
        [
            "compare", file, "--seeds", "2", "--sizes", "3", "--json", "--out",
        ]
        .into_iter()
        .chain([dir.to_str().unwrap()]),
    );
    assert_eq!(compare.status.code(), Some(0), "{compare:?}");
    // Processes 0..3 elect; the service follows (k8s: API servers 3 and 4, then etcd).
    for (design, used, members) in [
        ("etcd", 3..6, 3..6),
        ("zk", 3..6, 3..6),
        ("k8s", 3..5, 5..8),
    ] {
        let run = splitbrain(["run", file, "--design", design, "--json"]);
        let faults = json(&run)["report"]["faults"].clone();
        let nodes = |i: usize| -> Vec<u64> {
            let nodes = faults[i]["nodes"].as_array().unwrap();
            nodes.iter().map(|n| n.as_u64().unwrap()).collect()
        };
        let struck = nodes(0);
        assert!(
            struck.len() == 1 && used.contains(&struck[0]),
            "{design}: {}",
            faults[0]
        );
        let followers = nodes(1);
        assert!(
            followers.len() == 2 && followers.iter().all(|n| members.contains(n)),
            "{design}: {}",
            faults[1]
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// An algorithm's own curves (the blast radius of many ranges) are drawn, one line per
/// design, each time's median over the seeds: a crash shows as ranges unavailable that come
/// back, and no line is above the ranges there are.
#[test]
fn compare_draws_the_algorithms_own_curves_a_line_per_design() {
    let out = scratch("curves");
    let dir = out.join("report");
    let scenario = scenario_file(
        "multi-raft-curves",
        r#"Scenario(
    name: "multi-raft-curves",
    duration: "20s",
    nodes: 5,
    algorithm: MultiRaft(ranges: 20),
    designs: [
        (name: "leader-lease", algorithm: MultiRaft(ranges: 20, lease: Leader)),
        (name: "epoch", algorithm: MultiRaft(ranges: 20, lease: Epoch)),
    ],
    faults: [(at: "8s", do: Crash(Node(4)))],
)"#,
    );
    let o = splitbrain([
        "compare",
        scenario.to_str().unwrap(),
        "--seeds",
        "3",
        "--sizes",
        "5",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let files = check_folder(
        &dir,
        &["curve_ranges_unavailable", "curve_ranges_leaderless"],
    );
    let rows = csv_rows(&files, "curve_ranges_unavailable");
    for design in ["leader-lease", "epoch"] {
        let values: Vec<f64> = (rows.iter())
            .filter(|r| r["series"] == design)
            .map(|r| r["value"].parse().expect("a number"))
            .collect();
        let peak = values.iter().copied().fold(0.0, f64::max);
        assert!(peak > 0.0 && peak <= 20.0, "{design}: peak {peak}");
        assert_eq!(
            values.first(),
            Some(&0.0),
            "{design}: none before the crash"
        );
        assert_eq!(values.last(), Some(&0.0), "{design}: all back by the end");
    }
    let _ = std::fs::remove_dir_all(&out);
}
