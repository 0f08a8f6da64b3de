//! `splitbrain hunt`: many seeds of one scenario, on every core; shrink what fails.

// The CLI may read the wall clock (time budget, progress); the engine never does.
#![allow(clippy::disallowed_types)]

use crate::args::LimitArgs;
use crate::exit;
use crate::print::{hunt_exit_code, print_reproducers, print_summary, SummaryJson};
use crate::signals::Interrupt;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use serde::Serialize;
use splitbrain_lab::hunt::collect::{Collected, Collector, ToShrink};
use splitbrain_lab::hunt::guided::{Guided, GuidedSummary, RunId, DEFAULT_MUTANTS_PER_BATCH};
use splitbrain_lab::hunt::jsonl::{JsonlEnd, JsonlHeader, JsonlWriter};
use splitbrain_lab::hunt::junit::{self, Completeness};
use splitbrain_lab::hunt::reproducer::{self, Reproducer, SHRINK_BUDGET_RUNS};
use splitbrain_lab::hunt::search::Search;
use splitbrain_lab::hunt::seeds::{HuntPlan, SeedSpan};
use splitbrain_lab::hunt::shrink::shrink_scenario;
use splitbrain_lab::hunt::summary::{HuntSummary, RateCheck};
use splitbrain_lab::hunt::{self, Ended};
use splitbrain_lab::panics;
use splitbrain_scenario::{self as scenario, Scenario};
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod systematic;

#[derive(Args, Debug)]
pub struct HuntArgs {
    /// The scenario file (RON); its `nemesis` draws a fault schedule per seed.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Run seeds 1..=N [default: 1000 seeds].
    #[arg(long, value_name = "N", help_heading = "Seeds")]
    pub seeds: Option<u64>,
    /// Run the seeds A..B (B excluded) or A..=B.
    #[arg(long, value_name = "A..B", help_heading = "Seeds")]
    pub seed_range: Option<String>,
    /// Run only slice I of N (I from 0) of the seed range, e.g. 0/4 (of a systematic search:
    /// every N-th one-step schedule from the I-th, and what extends it).
    #[arg(long, value_name = "I/N", help_heading = "Seeds")]
    pub shard: Option<String>,
    /// Start no new seed after this long (e.g. 10m; seeds under way finish, and at least one
    /// seed always runs); report what ran, with the verdict of the seeds run (every output
    /// says the budget ended it).
    #[arg(long, value_name = "DURATION", help_heading = "Seeds")]
    pub time_budget: Option<String>,
    /// Worker threads, 1 to 1024 (at most 64 are used: a batch is 64 seeds) [default: every
    /// core]. Results are the same whatever this is.
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Run every seed instead of stopping after the first failing batch.
    #[arg(long)]
    pub keep_going: bool,
    /// Do not shrink failures into reproducer files.
    #[arg(long)]
    pub no_shrink: bool,
    /// Where to write the shrunk reproducer scenarios.
    #[arg(
        long,
        value_name = "DIR",
        default_value = "out",
        help_heading = "Output"
    )]
    pub out: PathBuf,
    /// Write one JSON line per seed to this file (a header first, a line saying how the hunt
    /// ended last; a systematic search writes one line of what it covered and found), for
    /// `merge`. Written as FILE.partial (locked while the hunt runs) and
    /// renamed when whole; an existing FILE is refused unless --force. A symbolic link is
    /// followed to the file it names.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub jsonl: Option<PathBuf>,
    /// Replace an existing, finished --jsonl file (never one a running hunt is writing).
    #[arg(long, help_heading = "Output")]
    pub force: bool,
    /// Write a JUnit XML report (one test case per invariant).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub junit: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// No progress bar, no coverage table.
    #[arg(long, short, help_heading = "Output")]
    pub quiet: bool,
    /// How seeds draw their faults: plain (the nemesis's mix as written, for every seed),
    /// swarm (each seed turns fault kinds on and off), guided (the scenario's nemesis, plus
    /// mutants of the schedules that reached rare situations) [default: the scenario's
    /// `nemesis.swarm`].
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Search")]
    pub search: Option<SearchMode>,
    /// With --search guided: how many of each batch's 64 runs are mutants (0 to 63), once
    /// some seed reached a rare situation [default: 32].
    #[arg(long, value_name = "N", help_heading = "Search")]
    pub mutants_per_batch: Option<u64>,
    /// With --search systematic: the most steps in one schedule: faults, and other ways
    /// at the run's choice points (timeouts the scenario makes a choice, the order of
    /// events due at one instant) [default: 2].
    #[arg(long, value_name = "K", help_heading = "Search")]
    pub steps: Option<usize>,
    /// With --search systematic: the spacing of the instants a fault may start at, from the
    /// nemesis's `start` [default: the algorithm's heartbeat].
    #[arg(long, value_name = "DURATION", help_heading = "Search")]
    pub grid: Option<String>,
    /// With --search systematic: how many grid instants faults may start at [default: 20].
    #[arg(long, value_name = "N", help_heading = "Search")]
    pub depth: Option<usize>,
    /// With --search systematic: the lengths a fault that lasts may last, comma-separated
    /// [default: the nemesis's shortest and longest `fault_duration`].
    #[arg(long, value_name = "L1,L2", help_heading = "Search")]
    pub fault_lengths: Option<String>,
    /// With --search systematic: whether two states that differ only by the names of
    /// interchangeable members (set alike, named by no explicit fault) count as one
    /// (docs/hunting.md, "Symmetry") [default: on].
    #[arg(long, value_enum, value_name = "ON|OFF", help_heading = "Search")]
    pub symmetry: Option<crate::args::OnOff>,
    /// The runtime guard: how much one run may use.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// How a hunt searches (`--search`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SearchMode {
    /// Every seed draws from the nemesis's whole mix (`nemesis.swarm` off).
    Plain,
    /// Each seed first draws which fault kinds are on, and their weights (`nemesis.swarm` on).
    Swarm,
    /// Fresh seeds as the scenario says, and mutants of the schedules of seeds that reached
    /// rare situations (docs/hunting.md, "Guided search").
    Guided,
    /// Every schedule of the scenario's seed up to a bound (--steps, --grid, --depth,
    /// --fault-lengths): runs that reached new situations extended first, then fewest steps
    /// first; states already explored are not explored again (docs/hunting.md, "Systematic
    /// search").
    Systematic,
}

impl SearchMode {
    /// How seeds draw their faults in this mode; `None` for a systematic search, which draws
    /// no seeds (`hunt_command` hands it to [`systematic`] before).
    fn seeded(self) -> Option<Search> {
        match self {
            SearchMode::Plain => Some(Search::Plain),
            SearchMode::Swarm => Some(Search::Swarm),
            SearchMode::Guided => Some(Search::Guided),
            SearchMode::Systematic => None,
        }
    }
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
    /// The algorithm the hunt ran.
    algorithm: &'a str,
    /// The search that ran: `plain`, `swarm` or `guided`.
    search: &'a str,
    /// What a guided search's mutants did (absent for the other searches).
    #[serde(skip_serializing_if = "Option::is_none")]
    guided: Option<&'a GuidedSummary>,
    /// The transport its messages travelled on, as a scenario writes it.
    transport: String,
    /// The programs its runs started, each a command line (the external nodes' `command`;
    /// empty for the built-in algorithms).
    programs: &'a [Vec<String>],
    summary: SummaryJson<'a>,
    /// The seeds against the scenario's `expect_rate` (absent when it expects every seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    expect_rate: Option<RateCheck>,
    reproducers: &'a [Reproducer],
    /// How to replay each failure left unshrunk (`--no-shrink`): its first seed, run alone.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    replays: &'a [Replay],
    /// Outputs that could not be written (the exit code is then 2).
    errors: &'a [String],
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
    // First: until the outputs are open (`keep_results` below) a signal ends the process at
    // once, whatever it is waiting for; from there on it is a clean, reported stop.
    let interrupt = Interrupt::install();
    let mut scenario = scenario::load(&args.file).map_err(|e| e.to_string())?;
    scenario.sim.limits = args.limits.limits();
    if args.search == Some(SearchMode::Systematic) {
        return systematic::hunt(args, &scenario, &interrupt, started);
    }
    systematic::refuse_bound_flags(args)?;
    let search = Search::apply(args.search.and_then(SearchMode::seeded), &mut scenario)
        .map_err(|e| format!("error: {e}"))?
        .name();
    let guided = guided_search(args, &scenario)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = HuntPlan::new(
        args.seeds,
        args.seed_range.as_deref(),
        args.shard.as_deref(),
        args.time_budget.as_deref(),
        args.jobs,
        cores,
    )
    .map_err(|e| format!("error: {e}"))?;
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
    let programs = scenario.algorithm.programs_with_reference();
    crate::print::announce_programs(&args.file, &programs);
    if !args.json {
        match &shard_label {
            Some(s) => crate::outln!(
                "seeds {} (shard {s} of {}), {search} search",
                plan.seeds,
                plan.range
            ),
            None => crate::outln!("seeds {}, {search} search", plan.seeds),
        }
    }
    let mut jsonl = match &args.jsonl {
        Some(path) => {
            let mut header = JsonlHeader::new(
                &scenario,
                &args.file,
                plan.range,
                shard_label.clone(),
                plan.seeds,
            );
            header.search = Some(search.to_string());
            let writer = JsonlWriter::create(path, args.force, &header);
            Some(writer.map_err(|e| format!("error: {e}"))?)
        }
        None => None,
    };
    // The outputs are open: from here on a signal keeps what they hold.
    interrupt.keep_results();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .map_err(|e| format!("error: cannot start {} worker threads: {e}", plan.threads))?;
    let progress = progress_bar(args, plan.seeds.count(), plan.time_budget);
    let mut found = Collector::new(
        &scenario.name,
        guided.as_ref().map(Guided::mutants_per_batch),
    );
    let out_of_time = || plan.time_budget.is_some_and(|b| started.elapsed() >= b);
    let stopping = || interrupt.signal().is_some() || out_of_time();
    let aborting = || interrupt.signal().is_some();
    let batch_done = |runs: usize, failing: u64| {
        progress.inc(runs as u64);
        progress.set_message(format!("{failing} failing"));
        if interrupt.signal().is_some() {
            ControlFlow::Break(Stop::Signal)
        } else if out_of_time() {
            ControlFlow::Break(Stop::TimeBudget)
        } else {
            ControlFlow::Continue(())
        }
    };
    let natural_end = match &guided {
        // Asked to stop since the outputs opened: no seed starts (none of its programs).
        _ if interrupt.signal().is_some() => Err(Stop::Signal),
        None => hunt::hunt(
            &scenario,
            plan.seeds,
            args.keep_going,
            &pool,
            &stopping,
            &aborting,
            |records| {
                for record in records {
                    found.fresh(record);
                    if let Some(Err(e)) = jsonl.as_mut().map(|out| out.record(record)) {
                        return ControlFlow::Break(Stop::WriteFailed(format!("error: {e}")));
                    }
                }
                flush(&mut jsonl)?;
                batch_done(records.len(), found.failing())
            },
        ),
        Some(g) => g.hunt(
            plan.seeds,
            args.keep_going,
            &pool,
            &stopping,
            &aborting,
            |runs| {
                for run in runs {
                    found.guided_run(g, run);
                }
                let fresh = runs.iter().filter(|r| matches!(r.id, RunId::Seed(_)));
                batch_done(fresh.count(), found.failing())
            },
        ),
    };
    let collected = found.finish();
    progress.finish_and_clear();
    let seeds_took = started.elapsed();
    let ended = match natural_end {
        Ok(ended) => ended,
        // Dropping the unfinished writer removes its partial file.
        Err(Stop::WriteFailed(e)) => return Err(e),
        Err(Stop::TimeBudget) => Ended::TimeBudget,
        Err(Stop::Signal) => Ended::Interrupted,
    };
    let summary = &collected.summary;
    let guided_summary = collected.guided.as_ref();
    let mut errors = Vec::new();
    let reproducers = if args.no_shrink || interrupt.signal().is_some() {
        Vec::new()
    } else {
        shrink_failures(args, &scenario, &collected, &interrupt, &mut errors)
    };
    let replays = if args.no_shrink && guided_summary.is_none() {
        unshrunk_replays(args, &scenario, summary)
    } else {
        Vec::new()
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
            errors.push(format!("error: {e}"));
        }
    }
    if let Some(path) = &args.junit {
        let replay = format!("splitbrain run {} --seed {{seed}}", args.file.display());
        let xml = junit::render(summary, &replay, &status.completeness());
        if let Err(e) = crate::output::write_file(path, &xml) {
            errors.push(format!("error: {e}"));
        }
    }
    let exit_code = if let Some(signal) = signal {
        Interrupt::exit_code(signal)
    } else if !errors.is_empty() {
        exit::BAD_INPUT
    } else {
        hunt_exit_code(summary.verdict)
    };
    let rate = RateCheck::of(summary, scenario.expect_rate_ppm);
    if args.json {
        let doc = JsonOutput {
            exit_code,
            seeds: plan.seeds,
            shard: shard_label,
            ended: ended.name(),
            signal: signal.map(Interrupt::name),
            seeds_planned: plan.seeds.count().to_string(),
            algorithm: scenario.algorithm.name(),
            search,
            guided: guided_summary,
            transport: splitbrain_scenario::transport_line(&scenario.sim.network.transport),
            programs: &programs,
            summary: SummaryJson::new(summary),
            expect_rate: rate,
            reproducers: &reproducers,
            replays: &replays,
            errors: &errors,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        let runs_on = format!(
            "{} on {}",
            scenario.algorithm.name(),
            splitbrain_scenario::transport_line(&scenario.sim.network.transport)
        );
        print_summary(
            summary,
            Some(&runs_on),
            status.line().as_deref(),
            seeds_took,
            &[],
            args.quiet,
        );
        if let Some(g) = guided_summary {
            print_guided(g);
        }
        if let Some(rate) = &rate {
            crate::outln!("\n{}", rate.sentence());
        }
        print_reproducers(&reproducers);
        for r in &replays {
            crate::outln!("\n{} first failed on seed {}", r.key, r.seed);
            crate::outln!("  replay: {}", r.command);
        }
    }
    for e in &errors {
        eprintln!("{e}");
    }
    Ok(exit_code)
}

/// The guided search `--search guided` asks for; `--mutants-per-batch` only with it, and no
/// `--jsonl` or `--junit` with it (its mutants are no seed's record: `merge` could not rebuild the
/// verdict from the file).
fn guided_search<'a>(
    args: &HuntArgs,
    scenario: &'a Scenario,
) -> Result<Option<Guided<'a>>, String> {
    if args.search != Some(SearchMode::Guided) {
        if args.mutants_per_batch.is_some() {
            return Err("error: --mutants-per-batch is for --search guided\n  hint: add --search guided, or leave --mutants-per-batch out".to_string());
        }
        return Ok(None);
    }
    let flag = match (&args.jsonl, &args.junit) {
        (Some(_), _) => Some("--jsonl"),
        (None, Some(_)) => Some("--junit"),
        (None, None) => None,
    };
    if let Some(flag) = flag {
        return Err(format!("error: {flag} cannot record a guided search: its mutants are not seeds, and the file (and `merge`) would judge the seeds alone\n  hint: hunt with --search plain or swarm for --jsonl and --junit, or leave {flag} out"));
    }
    let mutants = args.mutants_per_batch.unwrap_or(DEFAULT_MUTANTS_PER_BATCH);
    Guided::new(scenario, mutants)
        .map(Some)
        .map_err(|e| format!("error: {e}"))
}

/// Each batch reaches the file: a hunt killed outright leaves its records in FILE.partial
/// (without an end line, so merge knows it was cut).
fn flush(jsonl: &mut Option<JsonlWriter>) -> ControlFlow<Stop> {
    match jsonl.as_mut().map(JsonlWriter::flush) {
        Some(Err(e)) => ControlFlow::Break(Stop::WriteFailed(format!("error: {e}"))),
        _ => ControlFlow::Continue(()),
    }
}

/// The guided search's part of the summary: what its mutants did.
fn print_guided(g: &GuidedSummary) {
    crate::outln!(
        "\nGuided search: {} mutants ({} of each batch of 64 runs), {} failed",
        g.mutants_run,
        g.mutants_per_batch,
        g.mutants_failed
    );
    if let Some(runs) = g.runs_to_first_failure {
        crate::outln!("  first failing run: run {runs} (fresh seeds and mutants, in run order)");
    }
    match (g.runs_to_first_safety_violation, g.runs_to_first_failure) {
        (Some(safety), Some(any)) if safety != any => {
            crate::outln!("  first safety violation: run {safety}")
        }
        _ => {}
    }
    for f in &g.failures {
        crate::outln!(
            "  {}: {} mutants, first {}: {}",
            f.key,
            f.count,
            f.first,
            f.detail
        );
    }
    print_observations(g);
}

/// The features of the nodes' own observations that guided the search, if any was reached.
fn print_observations(g: &GuidedSummary) {
    if g.observation_features == 0 {
        return;
    }
    crate::outln!(
        "  observations (`observe`): {} features reached; {} of the {} runs kept were kept for one",
        g.observation_features,
        g.kept_for_observations,
        g.kept
    );
    const SHOWN: usize = 8;
    for o in g.observations.iter().take(SHOWN) {
        let kept = o
            .kept
            .as_deref()
            .map_or(String::new(), |k| format!(", kept {k}"));
        crate::outln!(
            "    {}: {} runs, first {}{kept}",
            o.feature,
            o.runs,
            o.first
        );
    }
    if g.observation_features > SHOWN as u64 {
        crate::outln!("    ... (--json lists {})", g.observations.len());
    }
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

/// A failure left unshrunk, and the command that replays its first seed.
#[derive(Serialize)]
struct Replay {
    key: String,
    seed: u64,
    command: String,
}

/// Where `args`' hunt of `scenario` writes its reproducers, and how it names their replays.
fn reproducer_writer<'a>(
    args: &'a HuntArgs,
    scenario: &'a Scenario,
    limit_flags: &'a [String],
) -> reproducer::Writer<'a> {
    reproducer::Writer {
        out: &args.out,
        hunted: &args.file,
        original: scenario,
        limits: args.limits.limits(),
        limit_flags,
    }
}

/// How to replay the first seed of each failure, for a hunt that did not shrink them.
fn unshrunk_replays(args: &HuntArgs, scenario: &Scenario, summary: &HuntSummary) -> Vec<Replay> {
    let limit_flags = args.limits.flag_words();
    let writer = reproducer_writer(args, scenario, &limit_flags);
    summary
        .failures
        .iter()
        .map(|group| Replay {
            key: group.key.clone(),
            seed: group.first_seed,
            command: writer.seed_replay(group.first_seed),
        })
        .collect()
}

/// Shrinks the first failure of each key into a reproducer file; stops early on a signal.
/// A reproducer that cannot be written is an error (the hunt then exits 2).
fn shrink_failures(
    args: &HuntArgs,
    scenario: &Scenario,
    collected: &Collected,
    interrupt: &Interrupt,
    errors: &mut Vec<String>,
) -> Vec<Reproducer> {
    let limit_flags = args.limits.flag_words();
    let writer = reproducer_writer(args, scenario, &limit_flags);
    let mut reproducers = Vec::new();
    for todo in collected.to_shrink() {
        let (key, failure, found) = match todo {
            ToShrink::Outgrown { found, detail } => {
                let seed = found.record.seed;
                let replay = match found.mutant {
                    Some(_) => writer.replay_hint(seed, true),
                    None => writer.seed_replay(seed),
                };
                let run = found.run_name();
                eprintln!("error: {run} outgrew its limits: {detail}\n  replay: {replay}");
                continue;
            }
            ToShrink::Shrink {
                key,
                failure,
                found,
            } => (key, failure, found),
        };
        let seed = found.record.seed;
        if interrupt.signal().is_some() {
            break;
        }
        let start = found.start(scenario);
        let run = found.run_name();
        if !args.quiet && !args.json {
            crate::outln!(
                "shrinking {run} ({key}, {} faults, {} nodes)...",
                start.sim.faults.len(),
                start.sim.members
            );
        }
        let stop = || interrupt.signal().is_some();
        let shrunk = panics::catch(|| shrink_scenario(&start, failure, SHRINK_BUDGET_RUNS, &stop));
        let replay = writer.replay_hint(seed, found.mutant.is_some());
        let shrunk = match shrunk {
            Ok(shrunk) => shrunk,
            Err(e) => {
                eprintln!("warning: shrinking {run} {e}; {replay}");
                continue;
            }
        };
        if stop() {
            break; // cut short: the hunt reports the signal and exits
        }
        match writer.write(seed, found.mutant_id(), &start, &shrunk, key) {
            Ok(r) => reproducers.push(r),
            Err(e) => errors.push(format!(
                "error: {e}\n  the reproducer of {run} ({key}) is lost; {replay}"
            )),
        }
    }
    reproducers
}
