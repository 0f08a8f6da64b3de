//! The design review of `scenarios/review-scheduler.ron` gives the numbers the same question
//! gives asked another way: per design (a scenario of that design's algorithm alone, on its
//! own transport), and per fault (a scenario with that fault alone).

use crate::common::{csv_rows, json, read_folder, scratch, shipped_scenario, splitbrain};
use std::collections::BTreeMap;
use std::path::Path;

const FILE: &str = "scenarios/review-scheduler.ron";
const SEEDS: u64 = 4;

/// `compare FILE --seeds SEEDS --fencing off` into `dir`: its files by name.
fn compared(file: &Path, dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let seeds = SEEDS.to_string();
    let output = splitbrain([
        "compare",
        file.to_str().unwrap(),
        "--seeds",
        seeds.as_str(),
        "--fencing",
        "off",
        "--sizes",
        "3",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    read_folder(dir)
}

/// The scenario's text with its `designs: [...]` list removed and `algorithm` set to `line`.
fn alone(text: &str, algorithm_line: &str) -> String {
    let start = text.find("    designs: [").expect("a designs list");
    let end = start + text[start..].find("    ],\n").expect("its end") + "    ],\n".len();
    let without = format!("{}{}", &text[..start], &text[end..]);
    let line_start = without.find("    algorithm: ").unwrap();
    let line_end = line_start + without[line_start..].find('\n').unwrap();
    format!(
        "{}    algorithm: {algorithm_line},{}",
        &without[..line_start],
        &without[line_end..]
    )
}

/// The scenario's text with only its `keep`-th explicit fault.
fn with_fault_alone(text: &str, keep: usize) -> String {
    let mut index = 0;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("(at: \"") {
            index += 1;
            if index - 1 != keep {
                continue;
            }
        }
        lines.push(line);
    }
    assert!(index >= 3, "the scenario has its three faults");
    lines.join("\n") + "\n"
}

/// Each design's failovers and stale writes in `compare` are those of a scenario that runs
/// that design's algorithm alone, replayed seed by seed: the design ran on its algorithm's
/// own transport (etcd on Stream, Raft and the Kubernetes Lease on Datagram), with the same
/// fault phase and drawn fault lengths, as a scenario of that algorithm would.
#[test]
fn each_design_agrees_with_a_scenario_of_its_algorithm_alone() {
    let out = scratch("review-per-design");
    let files = compared(Path::new(FILE), &out.join("report"));
    let designs = csv_rows(&files, "designs");
    let failovers = csv_rows(&files, "failovers");
    let seeds = csv_rows(&files, "seeds");
    let text = shipped_scenario("review-scheduler.ron");
    assert_eq!(designs.len(), 3, "{designs:?}");
    for design in &designs {
        let name = &design["design"];
        let algorithm_line = text
            .lines()
            .find(|l| {
                l.contains(&format!(
                    "(name: \"{}\"",
                    name.trim_end_matches("-unfenced")
                ))
            })
            .and_then(|l| l.split("algorithm: ").nth(1))
            .and_then(|rest| rest.trim_end().strip_suffix("),"))
            .unwrap();
        let single = out.join(format!("{name}.ron"));
        std::fs::write(&single, alone(&text, algorithm_line)).unwrap();
        for seed in 1..=SEEDS {
            let trial = seed.to_string();
            let ran = json(&splitbrain([
                "run",
                single.to_str().unwrap(),
                "--trial",
                trial.as_str(),
                "--fencing",
                "off",
                "--json",
            ]));
            assert_eq!(ran["transport"], design["transport"].as_str(), "{name}");
            let alone: Vec<(u64, Option<u64>)> = ran["report"]["failovers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| (f["at_ns"].as_u64().unwrap(), f["recovery_ns"].as_u64()))
                .collect();
            let in_compare: Vec<(u64, Option<u64>)> = failovers
                .iter()
                .filter(|r| &r["design"] == name && r["seed"] == trial)
                .map(|r| (r["at_ns"].parse().unwrap(), r["recovery_ns"].parse().ok()))
                .collect();
            assert!(!in_compare.is_empty(), "{name} seed {seed}");
            assert_eq!(alone, in_compare, "{name} seed {seed}");
            let row = seeds
                .iter()
                .find(|r| &r["design"] == name && r["seed"] == trial)
                .unwrap();
            let stale = ran["report"]["writes"]["accepted_stale"].as_u64().unwrap();
            assert_eq!(
                row["stale_writes_accepted"],
                stale.to_string(),
                "{name} {seed}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Safety by fault kind agrees with the faults one at a time: a kind whose fault alone breaks
/// no design's safety reads 0 for it in the whole scenario, and one that does is credited
/// there too. (Before attribution a suspend read every seed that also had a stall.)
#[test]
fn safety_by_fault_kind_agrees_with_each_fault_alone() {
    let out = scratch("review-per-fault");
    let whole = compared(Path::new(FILE), &out.join("whole"));
    let by_kind = csv_rows(&whole, "safety_by_fault_kind");
    let text = shipped_scenario("review-scheduler.ron");
    let mut zero_somewhere = false;
    for (keep, kind) in ["partition", "stall", "suspend"].into_iter().enumerate() {
        let file = out.join(format!("only-{kind}.ron"));
        std::fs::write(&file, with_fault_alone(&text, keep)).unwrap();
        let single = csv_rows(&compared(&file, &out.join(kind)), "safety_by_fault_kind");
        for row in single.iter().filter(|r| r["fault_kind"] == kind) {
            let design = &row["design"];
            let in_whole = by_kind
                .iter()
                .find(|r| r["fault_kind"] == kind && &r["design"] == design)
                .unwrap();
            let alone_broke = row["seeds_with_attributed_violation"] != "0";
            let whole_broke = in_whole["seeds_with_attributed_violation"] != "0";
            assert_eq!(
                alone_broke, whole_broke,
                "{kind} on {design}: {row:?} {in_whole:?}"
            );
            zero_somewhere |= !alone_broke;
        }
    }
    assert!(
        zero_somewhere,
        "some fault alone is harmless to some design"
    );
    let _ = std::fs::remove_dir_all(&out);
}
