//! Printing helpers more than one command uses: tables, the hunt's summary (for `hunt` and
//! `merge`), errors with their hint, and what a run that outgrew its limits says.

use crate::exit;
use serde::Serialize;
use splitbrain_lab::group::{self, GroupSummary, RunFailed};
use splitbrain_lab::hunt::reproducer::Reproducer;
use splitbrain_lab::hunt::summary::{HuntSummary, HuntVerdict};
use splitbrain_lab::hunt::systematic::Counterexample;
use splitbrain_lab::runner::RunFailure;
use splitbrain_reports::Table;
use splitbrain_sim::LimitExceeded;
use std::time::Duration;

/// Prints a table with aligned columns.
pub fn print_table(t: &Table) {
    for line in t.aligned_lines() {
        crate::outln!("{line}");
    }
}

/// The width terminal output keeps to.
const TERMINAL_COLUMNS: usize = 120;

/// `text` broken into lines of at most `width` characters at spaces (a word longer than
/// `width` stays whole on its own line), continuation lines indented by two spaces.
fn wrapped(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if line.trim().is_empty() {
            line.push_str(word);
        } else if line.chars().count() + 1 + word.chars().count() <= width {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(format!("  {word}"));
        }
    }
    lines
}

/// The tables `compare` and `sweep` print after their settings, one row per group (design or
/// value), each cut to the columns that fit 120 characters (report.md has every column):
/// failover times and elections, with the notes on skipped faults and intervals; then
/// downtime from any cause, safety, and the recovery objective if there is one.
pub fn print_group_tables(first_column: &str, summaries: &[GroupSummary]) {
    let view = |t: Table, keep: &[&str]| t.columns(&[&[first_column][..], keep].concat());
    print_table(&view(
        group::summary_table(first_column, summaries),
        group::SUMMARY_TERMINAL_COLUMNS,
    ));
    let notes = [
        group::skipped_faults_note(summaries),
        splitbrain_lab::intervals::interval_note(summaries),
    ];
    for note in notes.into_iter().flatten() {
        for line in wrapped(&format!("note: {note}"), TERMINAL_COLUMNS) {
            crate::outln!("{line}");
        }
    }
    crate::outln!(
        "\nDowntime from any cause (no leader that could act): episodes by cause,\n\
         one episode's p50 and p99, downtime per run"
    );
    print_table(&view(
        group::availability_table(first_column, summaries),
        group::AVAILABILITY_TERMINAL_COLUMNS,
    ));
    crate::outln!("\nSafety: seeds that broke each invariant");
    print_table(&view(
        group::safety_table(first_column, summaries),
        group::SAFETY_TERMINAL_COLUMNS,
    ));
    if let Some(t) = group::objective_table(first_column, summaries) {
        crate::outln!();
        print_table(&t);
    }
    if let Some(t) = splitbrain_lab::measures::measures_table(first_column, summaries) {
        crate::outln!(
            "\nThe algorithm's own measures, over the runs: min, mean, p50 and p99 [95% interval], max"
        );
        print_table(&t);
    }
    crate::outln!("(report.md has every column)");
}

/// Says on stderr, before a command starts them, which programs the scenario in `file`
/// starts (its external nodes' commands): a scenario that starts programs is code, and
/// running one should never be a surprise.
pub fn announce_programs(file: &std::path::Path, programs: &[Vec<String>]) {
    for program in programs {
        eprintln!(
            "note: {} starts a program for each node: {}",
            file.display(),
            splitbrain_lab::shell::command_line(program)
        );
    }
}

/// Prints `error: ERROR` (its hint, if any, on its own line) and gives exit code 2.
pub fn bad_input(error: &dyn std::fmt::Display) -> u8 {
    eprintln!("error: {error}");
    exit::BAD_INPUT
}

/// The error and its hint, for the run named by `what` (a file and seed, a design...).
pub fn limit_message(what: &str, e: &LimitExceeded) -> String {
    format!(
        "error: {what}: {e}\n  hint: {}",
        splitbrain_lab::runner::hint(e)
    )
}

/// Says on stderr that a run of `compare` or `sweep` of the scenario `file` failed, and
/// gives the exit code (2).
pub fn run_failed(file: &std::path::Path, failed: &RunFailed) -> u8 {
    let what = format!(
        "{} ({}, seed {})",
        file.display(),
        failed.label,
        failed.seed
    );
    match &failed.failure {
        RunFailure::Outgrown(e) => eprintln!("{}", limit_message(&what, e)),
        other => eprintln!("error: {what}: {other}"),
    }
    exit::BAD_INPUT
}

/// The exit code of a hunt's (or merged shards') verdict.
pub fn hunt_exit_code(verdict: HuntVerdict) -> u8 {
    match verdict {
        HuntVerdict::SafetyMismatch => exit::SAFETY_MISMATCH,
        HuntVerdict::OutgrewLimits => exit::BAD_INPUT,
        HuntVerdict::LivenessFailed => exit::LIVENESS_FAILED,
        HuntVerdict::Matched => exit::MATCHED,
    }
}

/// A hunt's summary as the JSON outputs give it: the summary's fields, then its exit code.
#[derive(Serialize)]
pub struct SummaryJson<'a> {
    #[serde(flatten)]
    summary: &'a HuntSummary,
    exit_code: u8,
}

impl<'a> SummaryJson<'a> {
    /// `summary` with the exit code of its verdict.
    pub fn new(summary: &'a HuntSummary) -> Self {
        Self {
            summary,
            exit_code: hunt_exit_code(summary.verdict),
        }
    }
}

/// Which nemesis configurations found one failure: the kinds every failing seed had on, how
/// many had each, the spread of their rates, and the first one's whole draw.
fn print_failing_draws(draws: &splitbrain_lab::hunt::summary::FailingDraws) {
    let common: Vec<String> = draws
        .common_kinds
        .iter()
        .map(|k| format!("{k:?}"))
        .collect();
    let each: Vec<String> = draws
        .kind_seeds
        .iter()
        .map(|(k, seeds)| format!("{k:?} {seeds}"))
        .collect();
    let span = |(low, high): (u64, u64)| {
        format!(
            "{}..{}",
            splitbrain_sim::format_duration(low),
            splitbrain_sim::format_duration(high)
        )
    };
    crate::outln!(
        "    kinds on in every failing seed: {}",
        if common.is_empty() {
            "none in common".to_string()
        } else {
            common.join(", ")
        }
    );
    crate::outln!("    failing seeds with each kind on: {}", each.join(", "));
    crate::outln!(
        "    mean interval {}, longest fault {}",
        span(draws.mean_interval_ns),
        span(draws.longest_fault_ns)
    );
    crate::outln!("    first seed drew ({})", draws.first.describe());
}

/// Prints a hunt's (or merged shards') summary for people; `runs_on` names the algorithm and
/// the transport it ran on (`raft on Datagram`) when known; `status` says how it ended when
/// that was not simply every seed.
pub fn print_summary(
    summary: &HuntSummary,
    runs_on: Option<&str>,
    status: Option<&str>,
    took: Duration,
    reproducers: &[Reproducer],
    quiet: bool,
) {
    let scenario = match runs_on {
        Some(on) => format!("{} ({on})", summary.scenario),
        None => summary.scenario.clone(),
    };
    if took.is_zero() {
        crate::outln!(
            "\n{} seeds of {scenario}, {} failed",
            summary.seeds_run,
            summary.failed_seeds
        );
    } else {
        let rate = summary.seeds_run as f64 / took.as_secs_f64();
        crate::outln!(
            "\n{} seeds of {scenario} in {:.1}s ({rate:.0} seeds/s), {} failed",
            summary.seeds_run,
            took.as_secs_f64(),
            summary.failed_seeds
        );
    }
    if let Some(status) = status {
        crate::outln!("{status}");
    }
    match summary.reference_failed_seeds {
        0 => {}
        1 => crate::outln!(
            "1 more seed failed, but the reference failed it the same way: not counted"
        ),
        n => crate::outln!(
            "{n} more seeds failed, but the reference failed them the same way: not counted"
        ),
    }
    for name in &summary.never_tested {
        eprintln!(
            "warning: property `{name}` was never tested: no node observed `{name}` in any \
             seed (is an `observe` effect's name spelled differently?)"
        );
    }
    if !summary.failures.is_empty() {
        crate::outln!("\nFailures");
        for group in &summary.failures {
            let seeds: Vec<String> = group.seeds.iter().map(u64::to_string).collect();
            let more = if group.count as usize > group.seeds.len() {
                " ..."
            } else {
                ""
            };
            crate::outln!(
                "  {}: {} seeds, first {}: {}",
                group.key,
                group.count,
                group.first_seed,
                group.detail
            );
            crate::outln!("    seeds: {}{more}", seeds.join(" "));
            if let Some(draws) = &group.nemesis {
                print_failing_draws(draws);
            }
        }
    }
    print_hunt_downtime(&summary.downtime);
    if !quiet {
        crate::outln!("\nCoverage (occurrences, and seeds that reached it)");
        // As wide as the longest situation, so that the counts line up.
        let width = summary.coverage.iter().map(|l| l.situation.len()).max();
        for line in &summary.coverage {
            crate::outln!(
                "  {:<width$} {:>8} in {:>6} seeds",
                line.situation,
                line.total,
                line.seeds,
                width = width.unwrap_or(0)
            );
        }
    }
    print_reproducers(reproducers);
}

/// The hunt's downtime from any cause, one line (docs/reports.md, "Downtime").
fn print_hunt_downtime(d: &splitbrain_lab::hunt::record::DowntimeCounts) {
    if d.is_zero() {
        return;
    }
    crate::outln!(
        "downtime: {} episodes with no leader that could act ({} member fault, {} service fault, \
         {} spurious; {} same holder, {} unrecovered), {} in all, the longest {}",
        d.episodes(),
        d.member_fault,
        d.service_fault,
        d.spurious,
        d.same_holder,
        d.unrecovered,
        splitbrain_sim::format_duration(d.total_ns),
        splitbrain_sim::format_duration(d.longest_ns)
    );
}

/// Prints what the hunt's reproducers are and how to replay them.
pub fn print_reproducers(reproducers: &[Reproducer]) {
    for r in reproducers {
        let run = match &r.mutant {
            Some(id) => format!("mutant {id}"),
            None => format!("seed {}", r.seed),
        };
        crate::outln!(
            "\n{run} broke {}: shrunk in {} runs from {} faults on {} nodes to {} faults on {} nodes",
            r.key, r.shrink_runs, r.faults_before, r.nodes_before, r.faults_after, r.nodes_after
        );
        crate::outln!(
            "  reproducer: {}{}",
            r.file,
            if r.replay_verified {
                ""
            } else {
                " (WARNING: its replay did not fail the same way)"
            }
        );
        crate::outln!("  replay: {}", r.replay);
    }
}

/// "no violation", or the counterexample's steps and failures (and the shard it came from).
pub fn print_counterexample(found: Option<&Counterexample>, shard: Option<&str>) {
    let Some(c) = found else {
        crate::outln!("no violation");
        return;
    };
    let keys: Vec<&str> = c.keys().collect();
    crate::outln!(
        "counterexample{} with {} steps breaks {}:",
        shard.map_or(String::new(), |s| format!(" (shard {s})")),
        c.steps.len(),
        keys.join(", ")
    );
    for step in &c.steps {
        crate::outln!("  {step}");
    }
    for f in &c.failures {
        crate::outln!("  {}: {}", f.key, f.detail.replace('\n', " "));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_note_wraps_at_spaces_within_its_width() {
        let lines = super::wrapped("note: one two three four", 12);
        assert_eq!(lines, ["note: one", "  two three", "  four"]);
        assert!(lines.iter().all(|l| l.chars().count() <= 12));
        assert_eq!(
            super::wrapped("averyveryverylongword x", 5),
            ["averyveryverylongword", "  x"]
        );
    }
}
