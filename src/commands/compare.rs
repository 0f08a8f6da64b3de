//! `splitbrain compare`: the same faults (the same seeds) with several algorithms; a report
//! folder with the failover-time distributions, messages per election, safety by fault kind,
//! leadership overlap, fenced rejections and the recovery-time objective per algorithm.
//!
//! Exit code: 0, or 3 when the scenario states an objective and some algorithm misses it
//! (safety violations are results to compare here, not a mismatch: they are in the report).

use super::charting::{self, GroupSummary, SeedRun};
use crate::cli::CompareArgs;
use crate::exit;
use crate::scenario::{self, Scenario};
use serde::Serialize;
use splitbrain_algorithms::AlgorithmConfig;
use splitbrain_reports::{
    failover_cdf, format_seeds, leadership_timeline, messages_per_election,
    messages_vs_cluster_size, parse_trace, sequence_diagram, sequence_window, Chart, DataTable,
    ReportDoc, ScalingSeries, Section, Table,
};
use splitbrain_sim::JsonLinesWriter;
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

/// Runs the command; returns the exit code.
pub fn run(args: &CompareArgs) -> u8 {
    let scenario = match scenario::load(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    if args.seeds == 0 {
        return charting::bad_input(
            "--seeds must be at least 1",
            "compare 1..=N seeds, like --seeds 20",
        );
    }
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
                        "the algorithms are raft, bully, ring, etcd, zookeeper and k8s-lease: --algorithms raft,etcd,k8s-lease",
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
        return charting::bad_input("no algorithms to compare", "--algorithms raft,bully,ring");
    }
    let command = command_line(args);
    let seeds: Vec<u64> = (1..=args.seeds).collect();

    // The runs: every algorithm on every seed.
    let mut groups: Vec<(String, Vec<SeedRun>)> = Vec::new();
    for alg in &algorithms {
        let with_alg = with_algorithm(&scenario, alg);
        let jobs = seeds
            .iter()
            .map(|&seed| (seed, crate::hunt::materialize(&with_alg, seed)))
            .collect();
        groups.push((alg.name().to_string(), charting::run_all(jobs)));
    }
    let summaries: Vec<GroupSummary> = groups
        .iter()
        .map(|(label, runs)| charting::summarise(label, runs, scenario.objective.as_ref()))
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
    let mut widths: Vec<usize> = t.header.iter().map(|h| h.chars().count()).collect();
    for row in &t.rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        crate::outln!("{}", parts.join("  ").trim_end());
    };
    line(&t.header);
    for row in &t.rows {
        line(row);
    }
}

/// Charts, tables and sections of the report.
fn build(
    args: &CompareArgs,
    scenario: &Scenario,
    algorithms: &[AlgorithmConfig],
    groups: &[(String, Vec<SeedRun>)],
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
            format!("{:.1}", g.messages_per_election),
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
        let mut jobs = Vec::new();
        for &n in &sizes {
            if let Some(s) = base.resized(n) {
                for seed in 1..=SIZE_SEEDS {
                    jobs.push((
                        n as u64 * 1_000_000 + seed,
                        crate::hunt::materialize(&s, seed),
                    ));
                }
            }
        }
        let runs = charting::run_all(jobs);
        let mut points = Vec::new();
        for &n in &sizes {
            let of_size: Vec<&SeedRun> = runs
                .iter()
                .filter(|r| r.seed / 1_000_000 == n as u64)
                .collect();
            let (total, decided) = of_size
                .iter()
                .flat_map(|r| &r.report.elections)
                .filter(|e| e.decided_ns.is_some())
                .fold((0u64, 0u64), |(t, d), e| (t + e.total_messages(), d + 1));
            if decided > 0 {
                points.push((n as u64, total as f64 / decided as f64));
            }
        }
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
    for alg in algorithms {
        let s = crate::hunt::materialize(&with_algorithm(scenario, alg), 1);
        let mut writer = JsonLinesWriter::new(Vec::<u8>::new());
        let report = splitbrain_algorithms::run(&s.algorithm, s.sim.clone(), Some(&mut writer));
        let name = format!("timeline_{}", alg.name());
        charts.push(leadership_timeline(
            &name,
            &format!("Leadership timeline: {}, seed 1", alg.name()),
            &report,
            &[],
            &report.lease_spans,
        )?);
        seed_one = seed_one.chart(name);
        let text = String::from_utf8_lossy(&writer.into_inner()).into_owned();
        let Some(f) = report.failovers.first() else {
            continue;
        };
        let Ok(events) = parse_trace(&text) else {
            continue;
        };
        let (from, to) = sequence_window(f.at_ns, f.recovery_ns.map(|r| f.at_ns + r));
        let name = format!("sequence_{}", alg.name());
        charts.push(sequence_diagram(
            &name,
            &format!("Messages around the first failover: {}, seed 1", alg.name()),
            &events,
            from,
            to,
            &[],
        )?);
        seed_one = seed_one.chart(name);
    }
    sections.push(seed_one);

    data.push(charting::summary_data("summary", "algorithm", summaries));
    let borrowed: Vec<(String, &[SeedRun])> = groups
        .iter()
        .map(|(l, r)| (l.clone(), r.as_slice()))
        .collect();
    data.push(charting::failover_data("failovers", "algorithm", &borrowed));
    data.push(seed_data(groups));
    Ok(sections)
}

/// Fault kind x algorithm: seeds with any safety violation / seeds with that kind.
fn safety_by_kind(groups: &[(String, Vec<SeedRun>)]) -> (Table, DataTable) {
    let kinds: BTreeSet<&str> = groups
        .iter()
        .flat_map(|(_, runs)| runs)
        .flat_map(|r| &r.report.faults)
        .map(|f| f.kind.as_str())
        .collect();
    let mut header = vec!["fault kind"];
    header.extend(groups.iter().map(|(l, _)| l.as_str()));
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
        for (label, runs) in groups {
            let with: Vec<&SeedRun> = runs
                .iter()
                .filter(|r| r.report.faults.iter().any(|f| f.kind == kind))
                .collect();
            let bad = with
                .iter()
                .filter(|r| !r.report.violated_safety().is_empty())
                .count();
            row.push(format!("{bad}/{}", with.len()));
            data.push(vec![
                kind.into(),
                label.as_str().into(),
                with.len().into(),
                bad.into(),
            ]);
        }
        table.push(row);
    }
    (table, data)
}

/// Per algorithm and seed: the numbers behind the safety section.
fn seed_data(groups: &[(String, Vec<SeedRun>)]) -> DataTable {
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
    for (label, runs) in groups {
        for r in runs {
            let broken: Vec<&str> = r
                .report
                .violated_safety()
                .iter()
                .map(|i| i.name())
                .collect();
            t.push(vec![
                label.as_str().into(),
                r.seed.into(),
                broken.join(" ").into(),
                u64::from(r.report.liveness_failed()).into(),
                r.report.overlap_ns.into(),
                r.report.writes.rejected_stale.into(),
                r.report.failovers.len().into(),
            ]);
        }
    }
    t
}
