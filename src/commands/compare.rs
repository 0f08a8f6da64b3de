//! `splitbrain compare`: the same faults (the same seeds) with several algorithms; a report
//! folder with the failover-time distributions, messages per election, safety by fault kind,
//! leadership overlap, fenced rejections and the recovery-time objective per algorithm.
//!
//! Exit code: 0, or 3 when the scenario states an objective and some algorithm misses it
//! (safety violations are results to compare here, not a mismatch: they are in the report).

use super::charting::{self, FirstRun, GroupRuns, GroupSummary};
use crate::cli::CompareArgs;
use crate::exit;
use crate::scenario::{self, Scenario};
use rayon::prelude::*;
use serde::Serialize;
use splitbrain_algorithms::{AlgorithmConfig, ALGORITHMS, DEFAULT_COMPARISON};
use splitbrain_reports::{
    failover_cdf, format_seeds, leadership_timeline, messages_per_election,
    messages_vs_cluster_size, sequence_diagram_of, sequence_window, AroundFailovers, Chart,
    DataTable, ReportDoc, ScalingSeries, Section, Settle, Table,
};
use std::collections::BTreeSet;

/// Seeds per algorithm and size for the message-count-versus-size chart.
const SIZE_SEEDS: u64 = 3;

#[derive(Serialize)]
struct JsonSummary<'a> {
    scenario: &'a str,
    command: &'a str,
    out: String,
    seeds: u64,
    algorithms: &'a [GroupSummary],
    exit_code: u8,
}

/// The window of seed 1's sequence diagram: around its first failover, to recovery.
const SEED_ONE_WINDOW: AroundFailovers = AroundFailovers {
    failovers: 1,
    settle: Settle::Recovery,
    first_election: false,
};

/// Every algorithm's command-line name, for hints: `raft, bully, ... and k8s-lease`.
fn algorithm_names() -> String {
    let names: Vec<&str> = ALGORITHMS.iter().map(|entry| entry.name).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Runs the command; returns the exit code.
pub fn run(args: &CompareArgs) -> u8 {
    let scenario = match scenario::load(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    let mut algorithms: Vec<AlgorithmConfig> = Vec::new();
    for name in &args.algorithms {
        let config = if scenario.algorithm.name() == name.to_ascii_lowercase() {
            scenario.algorithm.clone()
        } else {
            match AlgorithmConfig::default_named(name) {
                Some(c) => c,
                None => {
                    return charting::bad_input(
                        &format!("unknown algorithm {name:?}"),
                        &format!(
                            "the algorithms are {}: --algorithms {DEFAULT_COMPARISON}",
                            algorithm_names()
                        ),
                    )
                }
            }
        };
        if algorithms.iter().any(|a| a.name() == config.name()) {
            return charting::bad_input(
                &format!("algorithm {name:?} is given twice"),
                "name each algorithm once",
            );
        }
        algorithms.push(config);
    }
    if algorithms.is_empty() {
        let hint = format!("--algorithms {DEFAULT_COMPARISON}");
        return charting::bad_input("no algorithms to compare", &hint);
    }
    let counted = charting::check_count("--seeds", args.seeds, algorithms.len(), "per algorithm");
    if let Err(code) = counted {
        return code;
    }
    if let Err(code) = charting::check_out_folder(&args.out) {
        return code;
    }
    if let Some(&n) = args
        .sizes
        .iter()
        .find(|&&n| n as u64 > crate::scenario::MAX_NODES)
    {
        return charting::bad_input(
            &format!("--sizes {n} is more nodes than a scenario may have"),
            &format!(
                "give cluster sizes from 3 to {} (smaller ones count as 3), like --sizes 3,5,9",
                crate::scenario::MAX_NODES
            ),
        );
    }
    for alg in &algorithms {
        let most = crate::scenario::max_members(alg);
        if let Some(&n) = args.sizes.iter().find(|&&n| n as u64 > most) {
            return charting::bad_input(
                &format!("--sizes {n} is more nodes than {} can run here", alg.name()),
                &format!(
                    "its members send to every other member, so memory grows with the square of the cluster: give sizes up to {most}"
                ),
            );
        }
    }
    let command = command_line(args);
    let seeds: Vec<u64> = (1..=args.seeds).collect();

    // The runs: every algorithm on every seed, each folded in as it completes.
    let groups: Vec<GroupRuns> = algorithms
        .iter()
        .map(|alg| {
            let with_alg = with_algorithm(&scenario, alg);
            charting::run_group(alg.name(), 1..=args.seeds, Some(SEED_ONE_WINDOW), |seed| {
                with_alg.materialize(seed)
            })
        })
        .collect();
    let summaries: Vec<GroupSummary> = groups
        .iter()
        .map(|g| charting::summarise(g, scenario.objective.as_ref()))
        .collect();

    let mut charts: Vec<Chart> = Vec::new();
    let mut data: Vec<DataTable> = Vec::new();
    let result = build(
        args,
        &scenario,
        &algorithms,
        &groups,
        &summaries,
        &mut charts,
        &mut data,
    );
    let sections = match result {
        Ok(sections) => sections,
        Err(e) => return charting::chart_failed(e),
    };

    let missed = summaries
        .iter()
        .any(|g| g.objective.as_ref().is_some_and(|o| !o.met));
    let code = if missed {
        exit::LIVENESS_FAILED
    } else {
        exit::MATCHED
    };
    let doc = ReportDoc {
        title: format!("compare: {}", scenario.name),
        command: command.clone(),
        seeds: seeds.clone(),
        facts: vec![
            ("scenario".to_string(), args.file.display().to_string()),
            (
                "algorithms".to_string(),
                algorithms
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("exit code".to_string(), code.to_string()),
        ],
        sections,
    };
    if let Err(code) = charting::write(&args.out, &doc, &charts, &data) {
        return code;
    }

    if args.json {
        let doc = JsonSummary {
            scenario: &scenario.name,
            command: &command,
            out: args.out.display().to_string(),
            seeds: args.seeds,
            algorithms: &summaries,
            exit_code: code,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        crate::outln!(
            "compare {}: seeds {} per algorithm",
            scenario.name,
            format_seeds(&seeds)
        );
        print_table(&charting::summary_table("algorithm", &summaries));
        if let Some(t) = charting::objective_table("algorithm", &summaries) {
            crate::outln!();
            print_table(&t);
        }
        crate::outln!();
        crate::outln!("report: {}", args.out.join("report.html").display());
    }
    code
}

/// The scenario with `alg` in place of its own algorithm.
fn with_algorithm(scenario: &Scenario, alg: &AlgorithmConfig) -> Scenario {
    let mut s = scenario.clone();
    s.algorithm = alg
        .for_members(s.sim.members)
        .unwrap_or_else(|| alg.clone());
    s
}

/// The command that produced the folder, as a user would type it again.
fn command_line(args: &CompareArgs) -> String {
    let sizes: Vec<String> = args.sizes.iter().map(|s| s.to_string()).collect();
    [
        "splitbrain".to_string(),
        "compare".to_string(),
        charting::shell_word(&args.file.display().to_string()),
        "--algorithms".to_string(),
        charting::shell_word(&args.algorithms.join(",")),
        "--seeds".to_string(),
        args.seeds.to_string(),
        "--sizes".to_string(),
        sizes.join(","),
        "--out".to_string(),
        charting::shell_word(&args.out.display().to_string()),
    ]
    .join(" ")
}

/// Prints a table with aligned columns.
pub fn print_table(t: &Table) {
    for line in t.aligned_lines() {
        crate::outln!("{line}");
    }
}

/// Charts, tables and sections of the report.
fn build(
    args: &CompareArgs,
    scenario: &Scenario,
    algorithms: &[AlgorithmConfig],
    groups: &[GroupRuns],
    summaries: &[GroupSummary],
    charts: &mut Vec<Chart>,
    data: &mut Vec<DataTable>,
) -> Result<Vec<Section>, splitbrain_reports::ChartError> {
    let mut sections = Vec::new();
    let faults: Vec<String> = scenario
        .sim
        .faults
        .iter()
        .map(|f| {
            format!(
                "at {}: {}{}",
                splitbrain_sim::format_duration(f.at_ns),
                f.action.kind_name(),
                f.heal_after_ns.map_or(String::new(), |h| format!(
                    ", healed after {}",
                    splitbrain_sim::format_duration(h)
                ))
            )
        })
        .collect();
    let mut about = Section::new("What ran").text(format!(
        "{} nodes for {} each run; every algorithm ran seeds {} with the same faults{}. Each \
         algorithm runs with its defaults, except the scenario's own algorithm, which keeps \
         the scenario's settings.",
        scenario.sim.members,
        splitbrain_sim::format_duration(scenario.sim.duration_ns),
        format_seeds(&(1..=args.seeds).collect::<Vec<_>>()),
        if scenario.nemesis.is_some() {
            " (explicit faults plus the nemesis schedule each seed draws)"
        } else {
            ""
        }
    ));
    if !faults.is_empty() {
        about = about.list(faults);
    }
    sections.push(about);

    // Failover times.
    let series: Vec<_> = summaries
        .iter()
        .map(|g| g.recovery_series.clone())
        .collect();
    let objective = charting::objective_line(scenario.objective.as_ref());
    charts.push(failover_cdf(
        "failover_cdf",
        &format!("Failover recovery time: {}", scenario.name),
        "recovery time (fault to the new leader's first accepted write)",
        &series,
        objective.as_ref(),
    )?);
    sections.push(
        Section::new("Failover time")
            .text(
                "Recovery time of each failover: from the fault to the new leader's first \
                 accepted write. Unresolved failovers keep a curve below 1; superseded ones \
                 are left out. failovers.csv lists every failover of every run.",
            )
            .text(charting::ELECTION_MEASURES_TEXT)
            .chart("failover_cdf")
            .table(charting::summary_table("algorithm", summaries)),
    );
    if let Some(t) = charting::objective_table("algorithm", summaries) {
        sections.push(
            Section::new("Recovery-time objective")
                .text(
                    "The budget against the p99 of recovery over the failovers a new leader \
                     resolved or none did (an unresolved one is longer than any budget), broken \
                     down into the p99 of detection and of election, the new leader's start-up \
                     delay, and recovery. compare exits 3 when an algorithm misses it.",
                )
                .table(t),
        );
    }

    // Messages per election.
    let groups_msgs: Vec<_> = summaries.iter().map(|g| g.messages.clone()).collect();
    charts.push(messages_per_election(
        "messages_per_election",
        "Messages per failover election, by type",
        "algorithm",
        &groups_msgs,
    )?);
    let mut counts = Table::new(&[
        "algorithm",
        "decided failover elections",
        "messages/election",
    ]);
    for g in summaries {
        counts.push(vec![
            g.label.clone(),
            g.elections.to_string(),
            charting::per_election(g.messages_per_election),
        ]);
    }
    sections.push(
        Section::new("Messages per election")
            .text(
                "The mean, over decided elections that started at or after the first fault of \
                 a run (the start-up election is left out), of the messages of each type sent \
                 during the election.",
            )
            .chart("messages_per_election")
            .table(counts),
    );

    // Safety by fault kind, overlap and fencing.
    let (safety, safety_data) = safety_by_kind(groups);
    data.push(safety_data);
    let mut overlap = Table::new(&[
        "algorithm",
        "seeds with a safety violation",
        "mean leadership overlap",
        "fenced rejections",
    ]);
    for g in summaries {
        overlap.push(vec![
            g.label.clone(),
            format!("{}/{}", g.seeds_with_safety_violations, g.seeds),
            charting::dur(Some(g.mean_overlap_ns.round() as u64)),
            g.fenced_rejections.to_string(),
        ]);
    }
    sections.push(
        Section::new("Safety")
            .text(
                "Per fault kind that struck in a seed: the seeds with any safety violation, \
                 over the seeds with that kind of fault. Leadership overlap is the time two or \
                 more nodes believed they led, a mean over seeds; fenced rejections are stale \
                 writes the resource refused, summed over seeds.",
            )
            .table(safety)
            .table(overlap),
    );

    // Message count against cluster size.
    let mut scaling = Vec::new();
    let sizes: BTreeSet<usize> = args.sizes.iter().map(|&n| n.max(3)).collect();
    for alg in algorithms {
        let base = with_algorithm(scenario, alg);
        let jobs: Vec<(usize, Scenario)> = sizes
            .iter()
            .filter_map(|&n| Some((n, base.resized(n)?)))
            .collect();
        let points = jobs
            .into_par_iter()
            .filter_map(|(n, s)| {
                let (total, decided) = messages_at_size(&s);
                (decided > 0).then(|| (n as u64, total as f64 / decided as f64))
            })
            .collect();
        scaling.push(ScalingSeries {
            label: alg.name().to_string(),
            points,
        });
    }
    charts.push(messages_vs_cluster_size(
        "messages_vs_cluster_size",
        "Messages per election against cluster size",
        "messages per decided election",
        &scaling,
    )?);
    sections.push(
        Section::new("Cluster size")
            .text(format!(
                "For each size (at least 3), each algorithm on the scenario with that many \
                 nodes (faults naming nodes past the last dropped), seeds 1..={SIZE_SEEDS}: \
                 the mean messages per decided election, start-up elections included."
            ))
            .chart("messages_vs_cluster_size"),
    );

    // Seed 1 of each algorithm: timeline and sequence diagram around its first failover.
    let mut seed_one = Section::new("Seed 1").text(
        "The leadership timeline of seed 1 per algorithm, and the messages around its first \
         failover (from 50 ms before the fault to a little after the new leader's first \
         accepted write).",
    );
    for (alg, group) in algorithms.iter().zip(groups) {
        let s = with_algorithm(scenario, alg).materialize(1);
        // Seed 1 ran in the group with a recorder of its first failover's window.
        let Some(FirstRun { report, windows }) = &group.first else {
            continue;
        };
        let name = format!("timeline_{}", alg.name());
        charts.push(leadership_timeline(
            &name,
            &format!("Leadership timeline: {}, seed 1", alg.name()),
            report,
            &[],
            &report.lease_spans,
        )?);
        seed_one = seed_one.chart(name);
        let Some(f) = report.failovers.first() else {
            continue;
        };
        let window = sequence_window(f.at_ns, f.recovery_ns.map(|r| f.at_ns + r));
        let kept = windows.failovers.clone();
        let bounds: Vec<(u64, u64)> = kept.iter().map(|w| w.bounds()).collect();
        assert_eq!(
            bounds,
            [window],
            "the recorder kept the first failover's window"
        );
        let trace = super::plot::kept_windows(&s, kept)
            .pop()
            .expect("one window asked, one kept");
        let name = format!("sequence_{}", alg.name());
        charts.push(sequence_diagram_of(
            &name,
            &format!("Messages around the first failover: {}, seed 1", alg.name()),
            &trace,
            &[],
        )?);
        seed_one = seed_one.chart(name);
    }
    sections.push(seed_one);

    data.push(charting::summary_data("summary", "algorithm", summaries));
    data.push(charting::failover_data("failovers", "algorithm", groups));
    data.push(seed_data(groups));
    Ok(sections)
}

/// Messages and decided elections (start-up ones included) over seeds 1..=[`SIZE_SEEDS`]
/// of `scenario`.
fn messages_at_size(scenario: &Scenario) -> (u64, u64) {
    let mut sums = (0u64, 0u64);
    for seed in 1..=SIZE_SEEDS {
        let s = scenario.materialize(seed);
        let report = splitbrain_algorithms::run(&s.algorithm, s.sim, None);
        for e in report.elections.iter().filter(|e| e.decided_ns.is_some()) {
            sums = (sums.0 + e.total_messages(), sums.1 + 1);
        }
    }
    sums
}

/// Fault kind x algorithm: seeds with any safety violation / seeds with that kind.
fn safety_by_kind(groups: &[GroupRuns]) -> (Table, DataTable) {
    let kinds: BTreeSet<&str> = groups
        .iter()
        .flat_map(|g| g.fault_kinds.keys())
        .map(String::as_str)
        .collect();
    let mut header = vec!["fault kind"];
    header.extend(groups.iter().map(|g| g.label.as_str()));
    let mut table = Table::new(&header);
    let mut data = DataTable::new(
        "safety_by_fault_kind",
        &[
            "fault_kind",
            "algorithm",
            "seeds_with_kind",
            "seeds_with_violation",
        ],
    );
    for kind in kinds {
        let mut row = vec![kind.to_string()];
        for g in groups {
            let seeds = g.fault_kinds.get(kind).copied().unwrap_or_default();
            row.push(format!("{}/{}", seeds.violated, seeds.with_kind));
            data.push(vec![
                kind.into(),
                g.label.as_str().into(),
                seeds.with_kind.into(),
                seeds.violated.into(),
            ]);
        }
        table.push(row);
    }
    (table, data)
}

/// Per algorithm and seed: the numbers behind the safety section.
fn seed_data(groups: &[GroupRuns]) -> DataTable {
    let mut t = DataTable::new(
        "seeds",
        &[
            "algorithm",
            "seed",
            "safety_violations",
            "liveness_failed",
            "overlap_ns",
            "fenced_rejections",
            "failovers",
        ],
    );
    for g in groups {
        for r in &g.runs {
            t.push(vec![
                g.label.as_str().into(),
                r.seed.into(),
                r.safety_violations.as_str().into(),
                u64::from(r.liveness_failed).into(),
                r.overlap_ns.into(),
                r.fenced_rejections.into(),
                r.failovers.len().into(),
            ]);
        }
    }
    t
}
