//! `splitbrain hunt`: many seeds of one scenario, on every core; shrink what fails.

// The CLI may read the wall clock (time budget, progress); the engine never does.
#![allow(clippy::disallowed_types)]

use crate::cli::HuntArgs;
use crate::exit;
use crate::hunt::record::{Failure, SeedRecord};
use crate::hunt::shrink::{shrink, Shrunk};
use crate::hunt::summary::{HuntSummary, SummaryBuilder};
use crate::hunt::{self, junit, Ended};
use crate::scenario::{self, Scenario};
use crate::verdict::judge;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::ops::{ControlFlow, Range};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many runs shrinking one failure may spend.
const SHRINK_BUDGET_RUNS: u32 = 600;

/// A written, replay-checked reproducer.
#[derive(Clone, Debug, Serialize)]
pub struct Reproducer {
    pub key: String,
    pub seed: u64,
    pub file: String,
    pub replay: String,
    pub faults_before: usize,
    pub faults_after: usize,
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub shrink_runs: u32,
    /// Replaying the written file failed the same way.
    pub replay_verified: bool,
}

#[derive(Serialize)]
struct JsonOutput<'a> {
    seeds: [u64; 2],
    shard: Option<String>,
    ended: &'a str,
    summary: &'a HuntSummary,
    reproducers: &'a [Reproducer],
}

/// The first line of a per-seed JSON Lines file: what the records belong to.
#[derive(Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct JsonlHeader {
    pub scenario: String,
    pub file: String,
    pub seeds: [u64; 2],
    pub shard: Option<String>,
}

/// Runs the hunt described by `args`; returns the exit code.
pub fn run(args: &HuntArgs) -> u8 {
    match hunt_command(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            exit::BAD_INPUT
        }
    }
}

fn hunt_command(args: &HuntArgs) -> Result<u8, String> {
    let scenario = scenario::load(&args.file).map_err(|e| e.to_string())?;
    let all_seeds = seed_range(args)?;
    let seeds = match &args.shard {
        Some(shard) => shard_range(&all_seeds, shard)?,
        None => all_seeds.clone(),
    };
    let time_budget = match &args.time_budget {
        Some(text) => Some(Duration::from_nanos(
            scenario::parse_duration(text)
                .map_err(|e| format!("error: --time-budget {text:?}: {e}"))?,
        )),
        None => None,
    };
    let shard_label = args.shard.clone();
    if !args.json {
        let last = seeds.end.saturating_sub(1);
        match &shard_label {
            Some(s) => crate::outln!(
                "seeds {}..={last} (shard {s} of {}..={})",
                seeds.start,
                all_seeds.start,
                all_seeds.end - 1
            ),
            None => crate::outln!("seeds {}..={last}", seeds.start),
        }
    }
    let mut jsonl = open_jsonl(args, &scenario, &seeds, shard_label.clone())?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| format!("error: cannot start {jobs} worker threads: {e}"))?;
    let stop = interrupt_flag();
    let progress = progress_bar(args, seeds.end - seeds.start);
    let started = Instant::now();
    let mut builder = SummaryBuilder::new(&scenario.name);
    // The first failing record of each key, for shrinking.
    let mut first_failures: BTreeMap<String, SeedRecord> = BTreeMap::new();
    let mut write_error: Option<String> = None;
    let ended = hunt::hunt(
        &scenario,
        seeds.clone(),
        args.keep_going,
        &pool,
        |records| {
            for record in records {
                builder.add(record);
                for failure in &record.failures {
                    first_failures
                        .entry(failure.key.clone())
                        .or_insert_with(|| record.clone());
                }
                if let Some(out) = jsonl.as_mut() {
                    if let Err(e) = writeln!(
                        out,
                        "{}",
                        serde_json::to_string(record).expect("records serialize")
                    ) {
                        write_error.get_or_insert(e.to_string());
                    }
                }
            }
            if let Some(out) = jsonl.as_mut() {
                let _ = out.flush();
            }
            progress.inc(records.len() as u64);
            progress.set_message(format!("{} failing", builder.failed_seeds()));
            let out_of_time = time_budget.is_some_and(|b| started.elapsed() >= b);
            if stop.load(Ordering::SeqCst) || out_of_time || write_error.is_some() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    progress.finish_and_clear();
    if let Some(e) = write_error {
        return Err(format!("error: cannot write the per-seed records: {e}"));
    }
    let summary = builder.finish();
    let reproducers = if args.no_shrink {
        Vec::new()
    } else {
        shrink_failures(args, &scenario, &first_failures)
    };
    let ended_name = match ended {
        Ended::Complete => "complete",
        Ended::FirstFailure => "first_failure",
        Ended::Stopped if stop.load(Ordering::SeqCst) => "interrupted",
        Ended::Stopped => "time_budget",
    };
    if let Some(path) = &args.junit {
        let replay = format!("splitbrain run {} --seed {{seed}}", args.file.display());
        crate::output::write_file(path, &junit::render(&summary, &replay))?;
    }
    if args.json {
        let doc = JsonOutput {
            seeds: [seeds.start, seeds.end.saturating_sub(1)],
            shard: shard_label,
            ended: ended_name,
            summary: &summary,
            reproducers: &reproducers,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        print_summary(
            &summary,
            ended_name,
            started.elapsed(),
            &reproducers,
            args.quiet,
        );
    }
    Ok(summary.exit_code)
}

fn seed_range(args: &HuntArgs) -> Result<Range<u64>, String> {
    match (&args.seeds, &args.seed_range) {
        (Some(n), None) => Ok(1..n.saturating_add(1)),
        (None, Some(text)) => parse_seed_range(text),
        (None, None) => Ok(1..1001),
        (Some(_), Some(_)) => {
            Err("error: give either --seeds or --seed-range, not both".to_string())
        }
    }
}

/// Parses `A..B` (B excluded) or `A..=B`.
pub fn parse_seed_range(text: &str) -> Result<Range<u64>, String> {
    let bad = || {
        format!("error: invalid seed range {text:?}\n  hint: write A..B (B excluded) or A..=B, like 1..1001")
    };
    let (a, b, inclusive) = if let Some((a, b)) = text.split_once("..=") {
        (a, b, true)
    } else if let Some((a, b)) = text.split_once("..") {
        (a, b, false)
    } else {
        return Err(bad());
    };
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    let end = if inclusive {
        b.checked_add(1).ok_or_else(bad)?
    } else {
        b
    };
    if end <= a {
        return Err(format!("error: the seed range {text:?} is empty"));
    }
    Ok(a..end)
}

/// The contiguous slice of `seeds` that shard `I/N` (I from 0) runs.
pub fn shard_range(seeds: &Range<u64>, shard: &str) -> Result<Range<u64>, String> {
    let bad = || {
        format!("error: invalid shard {shard:?}\n  hint: write I/N with 0 <= I < N, like 0/4 (Kubernetes: $JOB_COMPLETION_INDEX/N)")
    };
    let (i, n) = shard.split_once('/').ok_or_else(bad)?;
    let i: u64 = i.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i >= n {
        return Err(bad());
    }
    let len = u128::from(seeds.end - seeds.start);
    let cut = |k: u64| seeds.start + (len * u128::from(k) / u128::from(n)) as u64;
    Ok(cut(i)..cut(i + 1))
}

fn open_jsonl(
    args: &HuntArgs,
    scenario: &Scenario,
    seeds: &Range<u64>,
    shard: Option<String>,
) -> Result<Option<BufWriter<File>>, String> {
    let Some(path) = &args.jsonl else {
        return Ok(None);
    };
    let file =
        File::create(path).map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
    let mut out = BufWriter::new(file);
    let header = JsonlHeader {
        scenario: scenario.name.clone(),
        file: args.file.display().to_string(),
        seeds: [seeds.start, seeds.end.saturating_sub(1)],
        shard,
    };
    let line = serde_json::json!({ "hunt": header });
    writeln!(out, "{line}").map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
    Ok(Some(out))
}

/// Set by Ctrl-C (or SIGTERM): the hunt finishes its batch, then reports what it has.
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let handler_flag = Arc::clone(&flag);
    // Fails only if a handler is already installed (a second hunt in one process).
    let _ = ctrlc::set_handler(move || handler_flag.store(true, Ordering::SeqCst));
    flag
}

fn progress_bar(args: &HuntArgs, total: u64) -> ProgressBar {
    if args.quiet || args.json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let style =
        ProgressStyle::with_template("{bar:30} {pos}/{len} seeds  {per_sec}  {msg}  eta {eta}")
            .expect("a valid progress template");
    bar.set_style(style);
    bar
}

fn shrink_failures(
    args: &HuntArgs,
    scenario: &Scenario,
    first: &BTreeMap<String, SeedRecord>,
) -> Vec<Reproducer> {
    let mut reproducers = Vec::new();
    for (key, record) in first {
        if key.starts_with("missing:") {
            continue; // nothing to shrink: the run was safe where it was expected not to be
        }
        let failure = record
            .failures
            .iter()
            .find(|f| &f.key == key)
            .expect("grouped by this key");
        let start = hunt::materialize(scenario, record.seed);
        if !args.quiet && !args.json {
            crate::outln!(
                "shrinking seed {} ({key}, {} faults, {} nodes)...",
                record.seed,
                start.sim.faults.len(),
                start.sim.members
            );
        }
        let shrunk = shrink(&start, failure, SHRINK_BUDGET_RUNS);
        match write_reproducer(args, scenario, record.seed, &start, &shrunk, key) {
            Ok(r) => reproducers.push(r),
            Err(e) => eprintln!("{e}"),
        }
    }
    reproducers
}

fn write_reproducer(
    args: &HuntArgs,
    original: &Scenario,
    seed: u64,
    start: &Scenario,
    shrunk: &Shrunk,
    key: &str,
) -> Result<Reproducer, String> {
    let mut s = shrunk.scenario.clone();
    s.name = format!("{}-seed{seed}-{}", original.name, key.replace(':', "-"));
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("error: cannot create {}: {e}", args.out.display()))?;
    let path = args.out.join(format!("{}.ron", s.name));
    let header = format!(
        "// Shrunk by `splitbrain hunt {}` from seed {seed}: {} faults on {} nodes -> {} faults on {} nodes.\n// It breaks {key}: {}\n",
        args.file.display(),
        start.sim.faults.len(),
        start.sim.members,
        s.sim.faults.len(),
        s.sim.members,
        shrunk.failure.detail
    );
    crate::output::write_file(&path, &format!("{header}{}", scenario::to_ron(&s)))?;
    Ok(Reproducer {
        key: key.to_string(),
        seed,
        file: path.display().to_string(),
        replay: format!("splitbrain run {}", path.display()),
        faults_before: start.sim.faults.len(),
        faults_after: s.sim.faults.len(),
        nodes_before: start.sim.members,
        nodes_after: s.sim.members,
        shrink_runs: shrunk.runs,
        replay_verified: replays(&path, key),
    })
}

/// Loads the written file and runs it: does it fail with `key` again?
fn replays(path: &Path, key: &str) -> bool {
    let Ok(s) = scenario::load(path) else {
        return false;
    };
    let report = splitbrain_algorithms::run(&s.algorithm, s.sim.clone(), None);
    let record = SeedRecord::new(s.sim.seed, &report, &judge(&s.expect, &report));
    record.failures.iter().any(|f: &Failure| f.key == key)
}

/// Prints a hunt's (or merged shards') summary for people.
pub fn print_summary(
    summary: &HuntSummary,
    ended: &str,
    took: Duration,
    reproducers: &[Reproducer],
    quiet: bool,
) {
    if took.is_zero() {
        crate::outln!(
            "\n{} seeds of {}, {} failed",
            summary.seeds_run,
            summary.scenario,
            summary.failed_seeds
        );
    } else {
        let rate = summary.seeds_run as f64 / took.as_secs_f64();
        crate::outln!(
            "\n{} seeds of {} in {:.1}s ({rate:.0} seeds/s), {} failed",
            summary.seeds_run,
            summary.scenario,
            took.as_secs_f64(),
            summary.failed_seeds
        );
    }
    match ended {
        "interrupted" => crate::outln!("interrupted: partial results"),
        "time_budget" => crate::outln!("time budget spent: partial results"),
        "first_failure" => {
            crate::outln!("stopped at the first failing batch (--keep-going runs on)")
        }
        _ => {}
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
        }
    }
    if !quiet {
        crate::outln!("\nCoverage (occurrences, and seeds that reached it)");
        for line in &summary.coverage {
            crate::outln!(
                "  {:<48} {:>8} in {:>6} seeds",
                line.situation,
                line.total,
                line.seeds
            );
        }
    }
    for r in reproducers {
        crate::outln!(
            "\nseed {} broke {}: shrunk in {} runs from {} faults on {} nodes to {} faults on {} nodes",
            r.seed, r.key, r.shrink_runs, r.faults_before, r.nodes_before, r.faults_after, r.nodes_after
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
