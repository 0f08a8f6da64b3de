//! `splitbrain hunt --search systematic`: every fault schedule up to a bound
//! ([`splitbrain_lab::hunt::systematic`]), the first counterexample shrunk into a reproducer.

use super::{check_out_folder, reproducer_writer, HuntArgs};
use crate::exit;
use crate::signals::Interrupt;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use splitbrain_lab::hunt::jsonl::{JsonlEnd, JsonlHeader, JsonlWriter};
use splitbrain_lab::hunt::reproducer::{Reproducer, SHRINK_BUDGET_RUNS};
use splitbrain_lab::hunt::seeds::{parse_time_budget, worker_threads};
use splitbrain_lab::hunt::seeds::{SeedSpan, Shard};
use splitbrain_lab::hunt::shrink::shrink_scenario;
use splitbrain_lab::hunt::summary::HuntVerdict;
use splitbrain_lab::hunt::systematic::shards::{SearchRecord, SEARCH};
use splitbrain_lab::hunt::systematic::{
    symmetry, Bound, Counterexample, Coverage, Explored, Search, Space, SystematicError,
    BATCH_SCHEDULES, DEFAULT_STEPS,
};
use splitbrain_lab::hunt::Ended;
use splitbrain_lab::panics;
use splitbrain_scenario::{format_duration_ron, parse_duration, Scenario};
use splitbrain_sim::Nanos;
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

#[derive(Serialize)]
struct JsonOutput<'a> {
    exit_code: u8,
    search: &'static str,
    seed: u64,
    /// `I/N` when this is one shard of the search.
    shard: Option<String>,
    ended: &'static str,
    bound: &'a Bound,
    /// The instants faults may start at, as a scenario writes them.
    grid: Vec<String>,
    /// How many faults each grid point may get.
    choices: usize,
    /// How long each run lasts.
    run_duration: String,
    coverage: &'a Coverage,
    seconds: f64,
    states_per_second: f64,
    counterexample: Option<&'a Counterexample>,
    reproducers: &'a [Reproducer],
    errors: &'a [String],
}

/// Runs `args`' systematic search of `scenario`; returns the exit code.
pub fn hunt(
    args: &HuntArgs,
    scenario: &Scenario,
    interrupt: &Interrupt,
    started: Instant,
) -> Result<u8, String> {
    refuse_seed_flags(args)?;
    if scenario.nemesis.is_none() {
        return Err(format!("error: {}", SystematicError::NoNemesis));
    }
    let bound = bound_of(args, scenario)?;
    let shard = (args.shard.as_deref().map(Shard::parse))
        .transpose()
        .map_err(|e| format!("error: {e}"))?;
    let mut space =
        Space::new(scenario, scenario.sim.seed, &bound).map_err(|e| format!("error: {e}"))?;
    if args.symmetry == Some(crate::args::OnOff::Off) {
        space = space.without_symmetry();
    }
    if !args.no_shrink {
        check_out_folder(&args.out)?;
    }
    let mut jsonl = open_jsonl(args, scenario, shard)?;
    let budget = (args.time_budget.as_deref().map(parse_time_budget))
        .transpose()
        .map_err(|e| format!("error: {e}"))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = worker_threads(args.jobs, cores).map_err(|e| format!("error: {e}"))?;
    crate::print::announce_programs(&args.file, &scenario.algorithm.programs_with_reference());
    if !args.json {
        crate::outln!(
            "{}",
            announce(
                &bound,
                &space,
                scenario.sim.seed,
                scenario.sim.timeout_choices
            )
        );
        if let Some(shard) = shard {
            crate::outln!(
                "shard {shard}: one-step schedules {}, {}, {}... and what extends them (merge the shards' --jsonl files)",
                shard.index + 1,
                shard.index + 1 + shard.count,
                shard.index + 1 + 2 * shard.count
            );
        }
    }
    interrupt.keep_results();
    let pool = rayon::ThreadPoolBuilder::new()
        // A batch runs at most BATCH_SCHEDULES schedules at once.
        .num_threads(threads.min(BATCH_SCHEDULES))
        .build()
        .map_err(|e| format!("error: cannot start {threads} worker threads: {e}"))?;
    let progress = progress_bar(args);
    let search = Search {
        space: &space,
        steps: bound.steps,
        keep_going: args.keep_going,
        shard,
    };
    let out_of_time = || budget.is_some_and(|b| started.elapsed() >= b);
    let stopping = || match () {
        _ if interrupt.signal().is_some() => Some(Ended::Interrupted),
        _ if out_of_time() => Some(Ended::TimeBudget),
        _ => None,
    };
    let aborting = || interrupt.signal().is_some();
    let mut first: Option<(u64, Explored)> = None;
    let mut done = 0u64;
    let (coverage, ended) = search.run(&pool, &stopping, &aborting, |runs| {
        if first.is_none() {
            let failing = runs.iter().position(|r| r.record.failed());
            first = failing.map(|at| (done + at as u64 + 1, runs[at].clone()));
        }
        done += runs.len() as u64;
        progress.set_position(done);
        ControlFlow::Continue(())
    });
    progress.finish_and_clear();
    let took = started.elapsed();
    let counterexample = (first.as_ref()).map(|(number, f)| Counterexample::of(&space, f, *number));
    let first = first.map(|(_, f)| f);
    if !args.json {
        print_result(&bound, &coverage, ended, took, counterexample.as_ref());
    }
    let mut errors = Vec::new();
    let reproducers = match &first {
        Some(found) if !args.no_shrink && interrupt.signal().is_none() => {
            shrink_first(args, scenario, &space, found, interrupt, &mut errors)
        }
        _ => Vec::new(),
    };
    let verdict = HuntVerdict::of_keys(
        first
            .iter()
            .flat_map(|f| f.record.failures.iter().map(|x| x.key.as_str())),
    );
    if let Some(out) = jsonl.take() {
        let record = SearchRecord {
            bound: bound.clone(),
            ended,
            coverage: coverage.clone(),
            counterexample: counterexample.clone(),
            reproducers: reproducers.clone(),
        };
        finish_jsonl(out, &record, scenario.sim.seed, interrupt, &mut errors);
    }
    let mut code = crate::print::hunt_exit_code(verdict);
    if !errors.is_empty() {
        code = exit::BAD_INPUT;
    }
    let rate = coverage.distinct_states as f64 / took.as_secs_f64().max(1e-9);
    if args.json {
        let json = JsonOutput {
            exit_code: code,
            search: SEARCH,
            seed: scenario.sim.seed,
            shard: shard.map(|s| s.to_string()),
            ended: ended.name(),
            bound: &bound,
            grid: space
                .times_ns()
                .iter()
                .map(|t| format_duration_ron(*t))
                .collect(),
            choices: space.choices().len(),
            run_duration: format_duration_ron(space.duration_ns()),
            coverage: &coverage,
            seconds: took.as_secs_f64(),
            states_per_second: rate,
            counterexample: counterexample.as_ref(),
            reproducers: &reproducers,
            errors: &errors,
        };
        let text = serde_json::to_string_pretty(&json).map_err(|e| format!("error: {e}"))?;
        crate::outln!("{text}");
    } else {
        crate::print::print_reproducers(&reproducers);
    }
    for e in &errors {
        eprintln!("{e}");
    }
    Ok(code)
}

/// The `--jsonl` file, opened (refused if it exists, unless `--force`), its header written.
fn open_jsonl(
    args: &HuntArgs,
    scenario: &Scenario,
    shard: Option<Shard>,
) -> Result<Option<JsonlWriter>, String> {
    let Some(path) = &args.jsonl else {
        return Ok(None);
    };
    crate::output::distinct_outputs(
        &[("scenario file", args.file.as_path())],
        &[("--jsonl", path.as_path())],
    )?;
    crate::output::check_can_create("--jsonl", path)?;
    let seed = SeedSpan {
        first: scenario.sim.seed,
        last: scenario.sim.seed,
    };
    let label = shard.map(|s| s.to_string());
    let mut header = JsonlHeader::new(scenario, &args.file, seed, label, seed);
    header.search = Some(SEARCH.to_string());
    let writer = JsonlWriter::create(path, args.force, &header);
    Ok(Some(writer.map_err(|e| format!("error: {e}"))?))
}

/// Writes the search's record and end line, and moves the file into place.
fn finish_jsonl(
    mut out: JsonlWriter,
    record: &SearchRecord,
    seed: u64,
    interrupt: &Interrupt,
    errors: &mut Vec<String>,
) {
    let failed = u64::from(record.counterexample.is_some());
    let end = JsonlEnd {
        ended: record.ended,
        signal: interrupt.signal().map(Interrupt::name),
        seeds_run: 1,
        failed_seeds: failed,
        last_seed: Some(seed),
    };
    if let Err(e) = out.search(record).and_then(|()| out.finish(&end)) {
        errors.push(format!("error: {e}"));
    }
}

/// The bound's flags mean something only to a systematic search.
pub fn refuse_bound_flags(args: &HuntArgs) -> Result<(), String> {
    let given = [
        ("--steps", args.steps.is_some()),
        ("--grid", args.grid.is_some()),
        ("--depth", args.depth.is_some()),
        ("--fault-lengths", args.fault_lengths.is_some()),
        ("--symmetry", args.symmetry.is_some()),
    ];
    refuse_given(&given, |flag| {
        format!("{flag} bounds a systematic search\n  hint: add --search systematic, or leave {flag} out")
    })
}

/// A systematic search runs the scenario's own seed: the seed flags mean nothing to it.
fn refuse_seed_flags(args: &HuntArgs) -> Result<(), String> {
    let given = [
        ("--seeds", args.seeds.is_some()),
        ("--seed-range", args.seed_range.is_some()),
        ("--junit", args.junit.is_some()),
        ("--mutants-per-batch", args.mutants_per_batch.is_some()),
    ];
    refuse_given(&given, |flag| {
        format!("{flag} does not go with --search systematic, which explores the fault schedules of the scenario's own seed\n  hint: change the scenario's `seed` to search another, or leave {flag} out")
    })
}

/// The error `why` gives for the first flag of `given` that was given.
fn refuse_given(given: &[(&str, bool)], why: impl Fn(&str) -> String) -> Result<(), String> {
    match given.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(format!("error: {}", why(flag))),
        None => Ok(()),
    }
}

/// The bound the flags give, with the defaults ([`Bound::defaults`]) for the rest.
fn bound_of(args: &HuntArgs, scenario: &Scenario) -> Result<Bound, String> {
    let duration = |flag: &str, text: &str| {
        parse_duration(text)
            .map_err(|e| format!("error: {flag} {text}: {e}\n  hint: a duration such as 50ms"))
    };
    let mut bound = Bound::defaults(scenario, args.steps.unwrap_or(DEFAULT_STEPS));
    if let Some(text) = &args.grid {
        bound.grid_ns = duration("--grid", text)?;
    }
    if let Some(list) = &args.fault_lengths {
        bound.lengths_ns = list
            .split(',')
            .map(|t| duration("--fault-lengths", t.trim()))
            .collect::<Result<Vec<Nanos>, String>>()?;
    }
    bound.points = args.depth.unwrap_or(bound.points);
    Ok(bound)
}

/// The search's first line: what it explores.
fn announce(bound: &Bound, space: &Space, seed: u64, timeouts: u32) -> String {
    let times = space.times_ns();
    let lengths: Vec<String> = bound
        .lengths_ns
        .iter()
        .map(|l| format_duration_ron(*l))
        .collect();
    format!(
        "systematic search of seed {seed}: up to {} steps, faults at {} points {} apart from {} ({} choices each; lengths {}){}, runs of {}",
        bound.steps,
        times.len(),
        format_duration_ron(bound.grid_ns),
        format_duration_ron(times[0]),
        space.choices().len(),
        lengths.join(", "),
        if timeouts > 1 { format!(", timeouts among {timeouts} values") } else { String::new() },
        format_duration_ron(space.duration_ns()),
    ) + &symmetry::announce(space.symmetric())
}

fn progress_bar(args: &HuntArgs) -> ProgressBar {
    if args.quiet || args.json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::no_length();
    let style = ProgressStyle::with_template("{pos} schedules  {per_sec}  {elapsed}")
        .expect("a valid progress template");
    bar.set_style(style);
    bar
}

fn print_result(
    bound: &Bound,
    coverage: &Coverage,
    ended: Ended,
    took: Duration,
    counterexample: Option<&Counterexample>,
) {
    let seconds = took.as_secs_f64();
    let complete = match coverage.complete_to {
        Some(k) => format!("complete up to {k} steps"),
        None => "not complete for any number of steps".to_string(),
    };
    crate::outln!(
        "explored {} schedules ({} distinct states, {} grid points pruned as seen{}) in {seconds:.1} s ({:.0} states/s), {complete}{}",
        coverage.schedules,
        coverage.distinct_states,
        coverage.pruned_points,
        symmetry::pruned(coverage.symmetric_prunes),
        coverage.distinct_states as f64 / seconds.max(1e-9),
        match ended {
            Ended::TimeBudget => format!(" (time budget spent before {} steps)", bound.steps),
            Ended::Interrupted => " (interrupted)".to_string(),
            _ => String::new(),
        }
    );
    crate::print::print_counterexample(counterexample, None);
}

/// Shrinks the first counterexample's first failure into a reproducer file.
fn shrink_first(
    args: &HuntArgs,
    scenario: &Scenario,
    space: &Space,
    found: &Explored,
    interrupt: &Interrupt,
    errors: &mut Vec<String>,
) -> Vec<Reproducer> {
    let Some(failure) = found.record.failures.first() else {
        return Vec::new();
    };
    let limit_flags = args.limits.flag_words();
    let writer = reproducer_writer(args, scenario, &limit_flags);
    let start = space.scenario(&found.schedule);
    if !args.quiet && !args.json {
        crate::outln!(
            "shrinking the counterexample ({}, {} faults, {} nodes)...",
            failure.key,
            start.sim.faults.len(),
            start.sim.members
        );
    }
    let stop = || interrupt.signal().is_some();
    let shrunk = panics::catch(|| shrink_scenario(&start, failure, SHRINK_BUDGET_RUNS, &stop));
    let shrunk = match shrunk {
        Ok(shrunk) if !stop() => shrunk,
        Ok(_) => return Vec::new(),
        Err(e) => {
            errors.push(format!("warning: shrinking the counterexample {e}"));
            return Vec::new();
        }
    };
    match writer.write(scenario.sim.seed, None, &start, &shrunk, &failure.key) {
        Ok(r) => vec![r],
        Err(e) => {
            errors.push(format!(
                "error: {e}\n  the reproducer of the counterexample is lost"
            ));
            Vec::new()
        }
    }
}
