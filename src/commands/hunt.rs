//! `splitbrain hunt`: many seeds of one scenario, on every core; shrink what fails.

// The CLI may read the wall clock (time budget, progress); the engine never does.
#![allow(clippy::disallowed_types)]

use crate::cli::HuntArgs;
use crate::exit;
use crate::hunt::jsonl::{JsonlEnd, JsonlHeader, JsonlWriter};
use crate::hunt::junit::{self, Completeness};
use crate::hunt::record::{Failure, SeedRecord};
use crate::hunt::seeds::{self, SeedSpan, Shard};
use crate::hunt::shrink::{shrink, Shrunk};
use crate::hunt::signals::Interrupt;
use crate::hunt::summary::{HuntSummary, SummaryBuilder};
use crate::hunt::{self, panics, Ended};
use crate::scenario::{self, Scenario};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::Path;
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
    /// The process's exit code (the summary's, unless a signal or a failed output changed it).
    exit_code: u8,
    seeds: SeedSpan,
    shard: Option<String>,
    ended: &'a str,
    /// The signal that interrupted the hunt, if one did.
    signal: Option<String>,
    /// Seeds the hunt was asked to run (a string: it may exceed 2^53).
    seeds_planned: String,
    summary: &'a HuntSummary,
    reproducers: &'a [Reproducer],
    /// Outputs that could not be written (the exit code is then 2).
    errors: &'a [String],
}

/// The most worker threads `--jobs` may ask for.
pub const MAX_JOBS: usize = 1024;

/// Which seeds, on how many threads, for how long.
struct Plan {
    /// The whole hunt's seeds (every shard together).
    range: SeedSpan,
    shard: Option<Shard>,
    /// The seeds this process runs.
    seeds: SeedSpan,
    time_budget: Option<Duration>,
    threads: usize,
}

/// Why the hunt stopped before its natural end.
enum Stop {
    TimeBudget,
    Signal,
    WriteFailed(String),
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
    let started = Instant::now();
    // First, so that a signal at any point from here is a clean, reported stop.
    let interrupt = Interrupt::install();
    let mut scenario = scenario::load(&args.file).map_err(|e| e.to_string())?;
    scenario.sim.limits = args.limits.limits();
    let plan = plan(args)?;
    let mut outputs = Vec::new();
    if let Some(path) = &args.jsonl {
        outputs.push(("--jsonl", path.as_path()));
    }
    if let Some(path) = &args.junit {
        outputs.push(("--junit", path.as_path()));
    }
    crate::output::distinct_outputs(&[("scenario file", args.file.as_path())], &outputs)?;
    for (what, path) in &outputs {
        crate::output::check_can_create(what, path)?;
    }
    if !args.no_shrink {
        check_out_folder(&args.out)?;
    }
    let shard_label = plan.shard.map(|s| s.to_string());
    let mut jsonl = match &args.jsonl {
        Some(path) => {
            let header = JsonlHeader::new(
                &scenario,
                &args.file,
                plan.range,
                shard_label.clone(),
                plan.seeds,
            );
            Some(JsonlWriter::create(path, args.force, &header)?)
        }
        None => None,
    };
    if !args.json {
        match &shard_label {
            Some(s) => crate::outln!("seeds {} (shard {s} of {})", plan.seeds, plan.range),
            None => crate::outln!("seeds {}", plan.seeds),
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .map_err(|e| format!("error: cannot start {} worker threads: {e}", plan.threads))?;
    let progress = progress_bar(args, plan.seeds.count(), plan.time_budget);
    let mut builder = SummaryBuilder::new(&scenario.name);
    // The first failing record of each key, for shrinking.
    let mut first_failures: BTreeMap<String, SeedRecord> = BTreeMap::new();
    let out_of_time = || plan.time_budget.is_some_and(|b| started.elapsed() >= b);
    let stopping = || interrupt.signal().is_some() || out_of_time();
    let natural_end = hunt::hunt(
        &scenario,
        plan.seeds,
        args.keep_going,
        &pool,
        &stopping,
        &|| interrupt.signal().is_some(),
        |records| {
            for record in records {
                builder.add(record);
                for failure in &record.failures {
                    first_failures
                        .entry(failure.key.clone())
                        .or_insert_with(|| record.clone());
                }
                if let Some(Err(e)) = jsonl.as_mut().map(|out| out.record(record)) {
                    return ControlFlow::Break(Stop::WriteFailed(e));
                }
            }
            // Each batch reaches the file: a hunt killed outright leaves its records in
            // FILE.partial (without an end line, so merge knows it was cut).
            if let Some(Err(e)) = jsonl.as_mut().map(JsonlWriter::flush) {
                return ControlFlow::Break(Stop::WriteFailed(e));
            }
            progress.inc(records.len() as u64);
            progress.set_message(format!("{} failing", builder.failed_seeds()));
            if interrupt.signal().is_some() {
                ControlFlow::Break(Stop::Signal)
            } else if out_of_time() {
                ControlFlow::Break(Stop::TimeBudget)
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    progress.finish_and_clear();
    let seeds_took = started.elapsed();
    let ended = match natural_end {
        Ok(ended) => ended,
        // Dropping the unfinished writer removes its partial file.
        Err(Stop::WriteFailed(e)) => return Err(e),
        Err(Stop::TimeBudget) => Ended::TimeBudget,
        Err(Stop::Signal) => Ended::Interrupted,
    };
    let summary = builder.finish();
    let mut errors = Vec::new();
    let reproducers = if args.no_shrink || interrupt.signal().is_some() {
        Vec::new()
    } else {
        shrink_failures(args, &scenario, &first_failures, &interrupt, &mut errors)
    };
    // Asked now: a signal while shrinking stops the hunt too, and says so.
    let signal = interrupt.signal();
    let status = Status {
        ended,
        signal,
        seeds_run: summary.seeds_run,
        seeds_planned: plan.seeds.count(),
        time_budget: args.time_budget.clone(),
    };
    if let Some(out) = jsonl {
        let end = JsonlEnd {
            ended,
            signal: signal.map(Interrupt::name),
            seeds_run: summary.seeds_run,
            failed_seeds: summary.failed_seeds,
            last_seed: summary.last_seed,
        };
        if let Err(e) = out.finish(&end) {
            errors.push(e);
        }
    }
    if let Some(path) = &args.junit {
        let replay = format!("splitbrain run {} --seed {{seed}}", args.file.display());
        let xml = junit::render(&summary, &replay, &status.completeness());
        if let Err(e) = crate::output::write_file(path, &xml) {
            errors.push(format!("error: {e}"));
        }
    }
    let exit_code = if let Some(signal) = signal {
        Interrupt::exit_code(signal)
    } else if !errors.is_empty() {
        exit::BAD_INPUT
    } else {
        summary.exit_code
    };
    if args.json {
        let doc = JsonOutput {
            exit_code,
            seeds: plan.seeds,
            shard: shard_label,
            ended: ended.name(),
            signal: signal.map(Interrupt::name),
            seeds_planned: plan.seeds.count().to_string(),
            summary: &summary,
            reproducers: &reproducers,
            errors: &errors,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        print_summary(
            &summary,
            status.line().as_deref(),
            seeds_took,
            &reproducers,
            args.quiet,
        );
    }
    for e in &errors {
        eprintln!("{e}");
    }
    Ok(exit_code)
}

/// How the seed phase ended, for the summary and the JUnit report.
struct Status {
    ended: Ended,
    signal: Option<i32>,
    seeds_run: u64,
    seeds_planned: u128,
    time_budget: Option<String>,
}

impl Status {
    /// The line the summary prints about how the hunt ended (none when it simply finished).
    fn line(&self) -> Option<String> {
        let ran = format!("{} of {} seeds ran", self.seeds_run, self.seeds_planned);
        match self.ended {
            Ended::Complete => None,
            Ended::FirstFailure => Some(format!(
                "stopped at the first failing batch: {ran} (--keep-going runs on)"
            )),
            Ended::TimeBudget => Some(format!(
                "the time budget ({}) ended the hunt: {ran}; the verdict is theirs",
                self.time_budget.as_deref().unwrap_or("?")
            )),
            Ended::Interrupted => Some(format!(
                "interrupted by {}: partial results, {ran}",
                self.signal.map_or("a signal".to_string(), Interrupt::name)
            )),
        }
        .or_else(|| {
            self.signal.map(|signal| {
                format!(
                    "interrupted by {} while shrinking: every seed ran, reproducers are missing",
                    Interrupt::name(signal)
                )
            })
        })
    }

    fn completeness(&self) -> Completeness {
        match (self.ended, self.line()) {
            (_, Some(line)) if self.signal.is_some() => Completeness::Cut(line),
            (Ended::TimeBudget | Ended::FirstFailure, Some(line)) => Completeness::Partial(line),
            _ => Completeness::Complete,
        }
    }
}

fn plan(args: &HuntArgs) -> Result<Plan, String> {
    let range = match (&args.seeds, &args.seed_range) {
        (Some(n), None) => seeds::first_n(*n)?,
        (None, Some(text)) => seeds::parse_range(text)?,
        (None, None) => seeds::first_n(1000)?,
        (Some(_), Some(_)) => {
            return Err("error: give either --seeds or --seed-range, not both".to_string())
        }
    };
    let shard = args.shard.as_deref().map(Shard::parse).transpose()?;
    let seeds = match shard {
        Some(s) => s.slice(&range).ok_or_else(|| {
            format!(
                "error: shard {s} of seeds {range} has no seeds: there are more shards than seeds\n  hint: use at most {} shards for {} seeds",
                range.count(),
                range.count()
            )
        })?,
        None => range,
    };
    let time_budget = match &args.time_budget {
        Some(text) => match scenario::parse_duration(text) {
            Ok(0) => {
                return Err(format!(
                    "error: --time-budget {text:?} allows no time\n  hint: give a duration longer than zero, like 10m, or leave it out"
                ))
            }
            Ok(ns) => Some(Duration::from_nanos(ns)),
            Err(e) => return Err(format!("error: --time-budget {text:?}: {e}")),
        },
        None => None,
    };
    let jobs = match args.jobs {
        Some(0) | None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(n) => n,
    };
    if args.jobs == Some(0) || jobs > MAX_JOBS {
        return Err(format!(
            "error: --jobs {}: must be 1 to {MAX_JOBS}\n  hint: leave it out to use every core",
            args.jobs.unwrap_or(jobs)
        ));
    }
    // A batch runs at most BATCH_SEEDS seeds at once: more threads would only sit idle.
    let threads = jobs.min(hunt::BATCH_SEEDS as usize);
    Ok(Plan {
        range,
        shard,
        seeds,
        time_budget,
        threads,
    })
}

/// Refuses, before any seed runs, a reproducer folder that cannot be one.
fn check_out_folder(out: &Path) -> Result<(), String> {
    crate::output::check_name_lengths("--out", out)?;
    match std::fs::metadata(out) {
        Ok(m) if !m.is_dir() => Err(format!(
            "error: --out {}: exists and is not a folder\n  hint: name a folder for the reproducers (it is made if missing), or pass --no-shrink",
            out.display()
        )),
        _ => Ok(()),
    }
}

/// The progress bar on a terminal: seeds done, seeds per second as a whole number, and the
/// time left, which a `--time-budget` caps (the hunt stops there, whatever the seed count).
fn progress_bar(args: &HuntArgs, total: u128, budget: Option<Duration>) -> ProgressBar {
    if args.quiet || args.json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(u64::try_from(total).unwrap_or(u64::MAX));
    let style =
        ProgressStyle::with_template("{bar:30} {pos}/{len} seeds  {rate}  {msg}  eta {left}")
            .expect("a valid progress template")
            .with_key(
                "rate",
                |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0}/s", state.per_sec());
                },
            )
            .with_key(
                "left",
                move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let mut left = state.eta();
                    if let Some(budget) = budget {
                        left = left.min(budget.saturating_sub(state.elapsed()));
                    }
                    let _ = write!(w, "{}", indicatif::HumanDuration(left));
                },
            );
    bar.set_style(style);
    bar
}

/// Shrinks the first failure of each key into a reproducer file; stops early on a signal.
/// A reproducer that cannot be written is an error (the hunt then exits 2).
fn shrink_failures(
    args: &HuntArgs,
    scenario: &Scenario,
    first: &BTreeMap<String, SeedRecord>,
    interrupt: &Interrupt,
    errors: &mut Vec<String>,
) -> Vec<Reproducer> {
    let mut reproducers = Vec::new();
    for (key, record) in first {
        if key.starts_with("missing:") {
            continue; // nothing to shrink: the run was safe where it was expected not to be
        }
        if key == crate::hunt::record::LIMIT_KEY {
            // Every try would run to the limit again: the seed and its replay say it all.
            let replay = limit_replay(args, record.seed);
            let detail = record.failures.iter().find(|f| &f.key == key);
            let detail = detail.map_or("", |f| f.detail.as_str());
            eprintln!(
                "error: seed {} outgrew its limits: {detail}\n  replay: {replay}",
                record.seed
            );
            continue;
        }
        if interrupt.signal().is_some() {
            break;
        }
        let failure = record
            .failures
            .iter()
            .find(|f| &f.key == key)
            .expect("grouped by this key");
        let start = scenario.materialize(record.seed);
        if !args.quiet && !args.json {
            crate::outln!(
                "shrinking seed {} ({key}, {} faults, {} nodes)...",
                record.seed,
                start.sim.faults.len(),
                start.sim.members
            );
        }
        let stop = || interrupt.signal().is_some();
        let shrunk = match panics::catch(|| shrink(&start, failure, SHRINK_BUDGET_RUNS, &stop)) {
            Ok(shrunk) => shrunk,
            Err(e) => {
                eprintln!(
                    "warning: shrinking seed {} {e}; replay it with `splitbrain run {} --seed {}`",
                    record.seed,
                    args.file.display(),
                    record.seed
                );
                continue;
            }
        };
        if stop() {
            break; // cut short: the hunt reports the signal and exits
        }
        match write_reproducer(args, scenario, record.seed, &start, &shrunk, key) {
            Ok(r) => reproducers.push(r),
            Err(e) => errors.push(format!(
                "{e}\n  the reproducer of seed {} ({key}) is lost; replay the seed with `splitbrain run {} --seed {}`",
                record.seed,
                args.file.display(),
                record.seed
            )),
        }
    }
    reproducers
}

/// The command that replays seed `seed` of the hunt with the same limits.
fn limit_replay(args: &HuntArgs, seed: u64) -> String {
    let mut words = vec![
        "splitbrain".to_string(),
        "run".to_string(),
        super::charting::shell_word(&args.file.display().to_string()),
        "--seed".to_string(),
        seed.to_string(),
    ];
    words.extend(args.limits.flag_words());
    words.join(" ")
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
    std::fs::create_dir_all(&args.out).map_err(|e| {
        format!(
            "error: cannot create {}: {}",
            args.out.display(),
            crate::output::io_message(&e)
        )
    })?;
    // The name is cut, never the seed and invariant: two reproducers never share a file.
    let stem = format!(
        "{}-seed{seed}-{}",
        file_stem(&original.name),
        file_stem(&key.replace(':', "-"))
    );
    let mut path = args.out.join(format!("{stem}.ron"));
    if crate::output::same_file(&path, &args.file) {
        // The hunted scenario itself carries that name: keep it, write beside it.
        path = args.out.join(format!("{stem}-shrunk.ron"));
    }
    let header = format!(
        "// Shrunk by `splitbrain hunt {}` from seed {seed}: {} faults on {} nodes -> {} faults on {} nodes.\n// It breaks {key}: {}\n",
        args.file.display(),
        start.sim.faults.len(),
        start.sim.members,
        s.sim.faults.len(),
        s.sim.members,
        shrunk.failure.detail.replace('\n', " ")
    );
    crate::output::write_file(&path, &format!("{header}{}", scenario::to_ron(&s)))
        .map_err(|e| format!("error: {e}"))?;
    Ok(Reproducer {
        key: key.to_string(),
        seed,
        file: path.display().to_string(),
        replay: {
            let mut words = vec!["splitbrain".to_string(), "run".to_string()];
            words.push(super::charting::shell_word(&path.display().to_string()));
            words.extend(args.limits.flag_words());
            words.join(" ")
        },
        faults_before: start.sim.faults.len(),
        faults_after: s.sim.faults.len(),
        nodes_before: start.sim.members,
        nodes_after: s.sim.members,
        shrink_runs: shrunk.runs,
        replay_verified: replays(&path, key, args.limits.limits()),
    })
}

/// A file name made of `name` (a scenario's name, which may hold anything): letters, digits,
/// `-`, `_` and inner `.` kept, every other character `_`, at most [`MAX_STEM_CHARS`], so
/// that a reproducer stays in `--out` (no `/`, no `..`) and its name can be created.
fn file_stem(name: &str) -> String {
    let kept = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let stem: String = name
        .chars()
        .map(|c| if kept(c) { c } else { '_' })
        .take(MAX_STEM_CHARS)
        .collect();
    let stem = stem.trim_start_matches('.');
    if stem.is_empty() {
        "scenario".to_string()
    } else {
        stem.to_string()
    }
}

/// The most of a scenario's name a reproducer's file name keeps (file systems take 255 bytes:
/// the seed, the invariant and `-shrunk.ron` must fit after it).
const MAX_STEM_CHARS: usize = 150;

/// Loads the written file and runs it: does it fail with `key` again?
fn replays(path: &Path, key: &str, limits: splitbrain_sim::RunLimits) -> bool {
    let Ok(mut s) = scenario::load(path) else {
        return false;
    };
    s.sim.limits = limits;
    let record = hunt::run_judged(&s);
    record.failures.iter().any(|f: &Failure| f.key == key)
}

/// Prints a hunt's (or merged shards') summary for people; `status` says how it ended when
/// that was not simply every seed.
pub fn print_summary(
    summary: &HuntSummary,
    status: Option<&str>,
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
    if let Some(status) = status {
        crate::outln!("{status}");
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
