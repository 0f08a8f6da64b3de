//! `splitbrain hunt --search systematic`: every fault schedule up to a bound
//! ([`splitbrain_lab::hunt::systematic`]), the first counterexample shrunk into a reproducer.

use super::{check_out_folder, reproducer_writer, HuntArgs};
use crate::exit;
use crate::signals::Interrupt;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use splitbrain_lab::hunt::reproducer::{Reproducer, SHRINK_BUDGET_RUNS};
use splitbrain_lab::hunt::seeds::{parse_time_budget, worker_threads};
use splitbrain_lab::hunt::shrink::shrink_scenario;
use splitbrain_lab::hunt::summary::HuntVerdict;
use splitbrain_lab::hunt::systematic::{
    symmetry, Bound, Coverage, Explored, Search, Space, Step, SystematicError, BATCH_SCHEDULES,
};
use splitbrain_lab::hunt::Ended;
use splitbrain_lab::panics;
use splitbrain_scenario::{format_duration_ron, parse_duration, Scenario};
use splitbrain_sim::ChoiceKind;
use splitbrain_sim::Nanos;
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

/// Grid points when `--depth` is not given.
pub const DEFAULT_DEPTH: usize = 20;
/// Steps per schedule when `--steps` is not given.
pub const DEFAULT_STEPS: usize = 2;

/// The first failing schedule.
#[derive(Serialize)]
struct Counterexample {
    /// Its place in the search (1 = the fault-free run).
    schedule: u64,
    /// Its steps: faults as a scenario writes them, then the other choices.
    steps: Vec<String>,
    /// How it failed: the failure keys, with details.
    failures: Vec<splitbrain_lab::hunt::record::Failure>,
}

#[derive(Serialize)]
struct JsonOutput<'a> {
    exit_code: u8,
    search: &'static str,
    seed: u64,
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
    let mut space =
        Space::new(scenario, scenario.sim.seed, &bound).map_err(|e| format!("error: {e}"))?;
    if args.symmetry == Some(crate::args::OnOff::Off) {
        space = space.without_symmetry();
    }
    if !args.no_shrink {
        check_out_folder(&args.out)?;
    }
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
    let counterexample = first
        .as_ref()
        .map(|(number, f)| counterexample_of(&space, f, *number));
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
    let mut code = crate::print::hunt_exit_code(verdict);
    if !errors.is_empty() {
        code = exit::BAD_INPUT;
    }
    let rate = coverage.distinct_states as f64 / took.as_secs_f64().max(1e-9);
    if args.json {
        let json = JsonOutput {
            exit_code: code,
            search: "systematic",
            seed: scenario.sim.seed,
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
        print_reproducers(&reproducers);
    }
    for e in &errors {
        eprintln!("{e}");
    }
    Ok(code)
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
        ("--shard", args.shard.is_some()),
        ("--jsonl", args.jsonl.is_some()),
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

/// The bound the flags give, with the defaults: 2 steps, 20 points a heartbeat apart, the
/// nemesis's shortest and longest fault.
fn bound_of(args: &HuntArgs, scenario: &Scenario) -> Result<Bound, String> {
    let duration = |flag: &str, text: &str| {
        parse_duration(text)
            .map_err(|e| format!("error: {flag} {text}: {e}\n  hint: a duration such as 50ms"))
    };
    let grid_ns = match &args.grid {
        Some(text) => duration("--grid", text)?,
        None => scenario.algorithm.heartbeat_ns(),
    };
    let lengths_ns = match &args.fault_lengths {
        Some(list) => list
            .split(',')
            .map(|t| duration("--fault-lengths", t.trim()))
            .collect::<Result<Vec<Nanos>, String>>()?,
        None => {
            let (shortest, longest) = scenario
                .nemesis
                .as_ref()
                .map_or((0, 0), |n| n.fault_duration_ns);
            let mut both = vec![shortest, longest];
            both.dedup();
            both
        }
    };
    Ok(Bound {
        steps: args.steps.unwrap_or(DEFAULT_STEPS),
        grid_ns,
        points: args.depth.unwrap_or(DEFAULT_DEPTH),
        lengths_ns,
    })
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

/// The first failing run, numbered by its place in the search (1: the step-free run).
fn counterexample_of(space: &Space, found: &Explored, number: u64) -> Counterexample {
    let lines = splitbrain_scenario::fault_lines(&space.scenario(&found.schedule));
    let faults = found
        .schedule
        .iter()
        .filter(|s| matches!(s, Step::Fault { .. }))
        .count();
    let choices = found.schedule.iter().filter_map(|step| match step {
        Step::Choose {
            index,
            option,
            at_ns,
            kind,
        } => Some(format!(
            "choice point {index} ({}, at {}) takes way {option}",
            match kind {
                ChoiceKind::Timeout => "a timeout",
                ChoiceKind::Order => "the order of events at one instant",
            },
            format_duration_ron(*at_ns)
        )),
        Step::Fault { .. } => None,
    });
    Counterexample {
        schedule: number,
        steps: lines[lines.len() - faults..]
            .iter()
            .cloned()
            .chain(choices)
            .collect(),
        failures: found.record.failures.clone(),
    }
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
    let Some(c) = counterexample else {
        crate::outln!("no violation");
        return;
    };
    let keys: Vec<&str> = c.failures.iter().map(|f| f.key.as_str()).collect();
    crate::outln!(
        "counterexample with {} steps breaks {}:",
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

/// Where each reproducer went, and how to replay it.
fn print_reproducers(reproducers: &[Reproducer]) {
    for r in reproducers {
        crate::outln!(
            "reproducer: {} ({} faults -> {}, {} shrink runs{})\n  replay: {}",
            r.file,
            r.faults_before,
            r.faults_after,
            r.shrink_runs,
            if r.replay_verified {
                ""
            } else {
                "; its replay did NOT fail the same way"
            },
            r.replay
        );
    }
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
