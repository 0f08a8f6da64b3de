//! `splitbrain merge`: combine the per-seed records of hunt shards (or the shards of one
//! systematic search, [`splitbrain_lab::hunt::systematic::shards`]) into the summary one
//! unsharded hunt over the same seeds would have printed, after proving the files are the
//! whole hunt: missing seeds, absent shards and cut files are an error (exit 2) unless
//! `--allow-partial`, and then every output says the result is partial; records that
//! disagree are an error either way. See [`splitbrain_lab::hunt::merge`].

use crate::exit;
use crate::print::{
    hunt_exit_code, print_counterexample, print_reproducers, print_summary, SummaryJson,
};
use clap::Args;
use serde::Serialize;
use splitbrain_lab::hunt::junit::{self, Completeness};
use splitbrain_lab::hunt::merge::{self as merging, Merged};
use splitbrain_lab::hunt::reproducer::Reproducer;
use splitbrain_lab::hunt::seeds::{self, SeedSpan};
use splitbrain_lab::hunt::summary::HuntVerdict;
use splitbrain_lab::hunt::systematic::shards::{self, MergedCoverage, MergedSearch};
use splitbrain_lab::hunt::systematic::{Bound, Counterexample};
use splitbrain_lab::hunt::Ended;
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
    if args
        .files
        .first()
        .is_some_and(|f| shards::is_search_file(f))
    {
        return merge_search(args);
    }
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

/// The JSON of a systematic search's merged shards.
#[derive(Serialize)]
struct SearchJson<'a> {
    exit_code: u8,
    search: &'static str,
    seed: u64,
    bound: &'a Bound,
    shards: u64,
    /// Each whole shard and how it ended.
    ended: Vec<(&'a str, &'static str)>,
    /// Whether every shard's file is here, whole.
    complete: bool,
    missing: &'a [String],
    coverage: &'a MergedCoverage,
    /// The counterexample with the fewest steps, and its shard.
    counterexample: Option<ShardCounterexample<'a>>,
    reproducers: &'a [Reproducer],
}

#[derive(Serialize)]
struct ShardCounterexample<'a> {
    shard: &'a str,
    #[serde(flatten)]
    found: &'a Counterexample,
}

/// Merges the shard files of one systematic search.
fn merge_search(args: &MergeArgs) -> Result<u8, String> {
    if let Some(junit) = &args.junit {
        check_junit(&args.files, junit)?;
    }
    let merged = shards::merge(&args.files).map_err(|e| format!("error: {e}"))?;
    if !merged.missing.is_empty() && !args.allow_partial {
        return Err(format!(
            "error: the files do not hold the whole search:\n{}\n  hint: run the missing shards (again, if cut), or pass --allow-partial to merge what is there",
            bullets(&merged.missing)
        ));
    }
    let verdict = HuntVerdict::of_keys(merged.counterexample.iter().flat_map(|(_, c)| c.keys()));
    let code = hunt_exit_code(verdict);
    if let Some(path) = &args.junit {
        crate::output::write_file(path, &search_junit(&merged))
            .map_err(|e| format!("error: {e}"))?;
    }
    if args.json {
        print_search_json(&merged, code);
    } else {
        print_search(&merged, args.files.len());
    }
    Ok(code)
}

/// The JUnit report of a merged search: its counterexample's failures, its completeness.
fn search_junit(merged: &MergedSearch) -> String {
    let completeness = match merged.missing.is_empty() {
        true => Completeness::Complete,
        false => Completeness::Partial(format!(
            "merged with --allow-partial: {}",
            merged.missing.join("; ")
        )),
    };
    let (failures, steps) = match &merged.counterexample {
        Some((_, found)) => (
            (found.failures.iter())
                .map(|f| (f.key.clone(), f.detail.clone()))
                .collect(),
            found.steps.clone(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    let replay = merged.reproducers.first().map_or_else(
        || "no reproducer was written (the shards ran with --no-shrink?)".to_string(),
        |r| r.replay.clone(),
    );
    junit::render_search(&merged.scenario, &failures, &steps, &replay, &completeness)
}

fn print_search_json(merged: &MergedSearch, exit_code: u8) {
    let doc = SearchJson {
        exit_code,
        search: shards::SEARCH,
        seed: merged.seed,
        bound: &merged.bound,
        shards: merged.count,
        ended: (merged.ended.iter())
            .map(|(shard, ended)| (shard.as_str(), ended.name()))
            .collect(),
        complete: merged.missing.is_empty(),
        missing: &merged.missing,
        coverage: &merged.coverage,
        counterexample: (merged.counterexample.as_ref())
            .map(|(shard, found)| ShardCounterexample { shard, found }),
        reproducers: &merged.reproducers,
    };
    crate::outln!(
        "{}",
        serde_json::to_string_pretty(&doc).expect("results serialize")
    );
}

fn print_search(merged: &MergedSearch, files: usize) {
    let c = &merged.coverage;
    crate::outln!(
        "merged {files} files: {} of {} shards of a systematic search of seed {}, up to {} steps",
        merged.ended.len(),
        merged.count,
        merged.seed,
        merged.bound.steps
    );
    if !merged.missing.is_empty() {
        crate::outln!("PARTIAL (--allow-partial):\n{}", bullets(&merged.missing));
    }
    let complete = match c.complete_to {
        Some(k) => format!("complete up to {k} steps"),
        None => "not complete for any number of steps".to_string(),
    };
    crate::outln!(
        "explored {} schedules (at most {} distinct states: shards do not share what they saw), {complete}",
        c.schedules,
        c.distinct_states_at_most
    );
    for (shard, ended) in merged.ended.iter().filter(|(_, e)| *e != Ended::Complete) {
        crate::outln!("  shard {shard} ended: {}", ended.name());
    }
    let found = merged.counterexample.as_ref();
    print_counterexample(found.map(|(_, c)| c), found.map(|(s, _)| s.as_str()));
    print_reproducers(&merged.reproducers);
}

/// `--junit FILE` must be none of the inputs, and creatable.
fn check_junit(files: &[PathBuf], junit: &std::path::Path) -> Result<(), String> {
    let inputs: Vec<(&str, &std::path::Path)> = files
        .iter()
        .map(|f| ("file to merge", f.as_path()))
        .collect();
    crate::output::distinct_outputs(&inputs, &[("--junit", junit)])?;
    crate::output::check_can_create("--junit", junit)
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
