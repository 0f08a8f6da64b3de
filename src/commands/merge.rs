//! `splitbrain merge`: combine the per-seed records of hunt shards into the summary one
//! unsharded hunt over the same seeds would have printed, after proving the files are the
//! whole hunt: missing seeds, absent shards and cut files are an error (exit 2) unless
//! `--allow-partial`, and then every output says the result is partial; records that
//! disagree are an error either way. See [`splitbrain_lab::hunt::merge`].

use crate::exit;
use crate::print::{hunt_exit_code, print_summary, SummaryJson};
use clap::Args;
use serde::Serialize;
use splitbrain_lab::hunt::junit::{self, Completeness};
use splitbrain_lab::hunt::merge::{self as merging, Merged};
use splitbrain_lab::hunt::seeds::{self, SeedSpan};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Files written by `hunt --jsonl`.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Merge what is there even if seeds are missing (absent shards, hunts cut short or
    /// stopped by a time budget); every output then says it is partial. Without it, missing
    /// seeds are an error (exit 2). Conflicting records are an error either way.
    #[arg(long)]
    pub allow_partial: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write a JUnit XML report.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

#[derive(Serialize)]
struct JsonOutput<'a> {
    /// The seeds the files' headers promise.
    seeds: &'a [SeedSpan],
    shards: &'a [Option<String>],
    /// Whether every promised seed has a record.
    complete: bool,
    /// Promised seeds with no record (merged only with --allow-partial).
    missing: &'a [SeedSpan],
    /// Why seeds are missing, and how the partial result was allowed.
    notes: &'a [String],
    summary: SummaryJson<'a>,
}

/// Merges the files in `args`; returns the exit code of the combined result.
pub fn run(args: &MergeArgs) -> u8 {
    match merge(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            exit::BAD_INPUT
        }
    }
}

fn merge(args: &MergeArgs) -> Result<u8, String> {
    if let Some(junit) = &args.junit {
        let inputs: Vec<(&str, &std::path::Path)> = args
            .files
            .iter()
            .map(|f| ("file to merge", f.as_path()))
            .collect();
        crate::output::distinct_outputs(&inputs, &[("--junit", junit.as_path())])?;
        crate::output::check_can_create("--junit", junit)?;
    }
    let merged = merging::merge(&args.files).map_err(|e| format!("error: {e}"))?;
    if !merged.conflicts.is_empty() {
        return Err(format!(
            "error: the files disagree or are damaged; nothing merged:\n{}\n  hint: merge the files of one hunt, written by one binary, unedited",
            bullets(&merged.conflicts)
        ));
    }
    if merged.missing.is_empty() {
        // Files cut short (or without their end line) whose seeds all have records, in
        // them or in other files: the merge is whole, but say so.
        for note in &merged.gaps_explained {
            eprintln!("note: {note}; every seed it declares has a record, so the merge is whole");
        }
    }
    let notes = completeness_notes(&merged);
    let unexplained = !merged.missing.is_empty() && !merged.only_after_first_failures;
    if unexplained && !args.allow_partial {
        return Err(format!(
            "error: the files do not hold the whole hunt:\n{}\n  hint: run the missing seeds (the absent shards, or the cut ones again), or pass --allow-partial to merge what is there",
            bullets(&notes)
        ));
    }
    let completeness = match (merged.missing.is_empty(), unexplained) {
        (true, _) => Completeness::Complete,
        (false, true) => {
            Completeness::Partial(format!("merged with --allow-partial: {}", notes.join("; ")))
        }
        (false, false) => Completeness::Partial(notes.join("; ")),
    };
    let summary = &merged.summary;
    if let Some(path) = &args.junit {
        let replay = format!("splitbrain run {} --seed {{seed}}", merged.scenario_file);
        crate::output::write_file(path, &junit::render(summary, &replay, &completeness))
            .map_err(|e| format!("error: {e}"))?;
    }
    if args.json {
        let doc = JsonOutput {
            seeds: &merged.expected,
            shards: &merged.shards,
            complete: merged.missing.is_empty(),
            missing: &merged.missing,
            notes: &notes,
            summary: SummaryJson::new(summary),
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        crate::outln!(
            "merged {} files: seeds {}",
            args.files.len(),
            seeds::list(&merged.expected, 10)
        );
        let status = match &completeness {
            Completeness::Partial(note) => Some(format!("PARTIAL: {note}")),
            _ => None,
        };
        print_summary(summary, None, status.as_deref(), Duration::ZERO, &[], false);
    }
    Ok(hunt_exit_code(summary.verdict))
}

/// Sentences saying which seeds are missing and why.
fn completeness_notes(merged: &Merged) -> Vec<String> {
    if merged.missing.is_empty() {
        return Vec::new();
    }
    let mut notes = vec![merging::list_missing(&merged.missing)];
    notes.extend(merged.gaps_explained.iter().cloned());
    if merged.only_after_first_failures {
        notes.push(
            "the missing seeds come after shards' first failures (hunt without --keep-going)"
                .to_string(),
        );
    }
    notes
}

fn bullets(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("  - {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
