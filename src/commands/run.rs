//! `splitbrain run`: one deterministic run of one scenario.

use super::step;
use crate::args::{LimitArgs, OnOff};
use crate::exit;
use crate::output::OutputFile;
use crate::print::limit_message;
use crate::summary;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use splitbrain_algorithms::transcript;
use splitbrain_algorithms::RunOptions;
use splitbrain_algorithms::Step;
use splitbrain_lab::group::revalidate;
use splitbrain_lab::plot;
use splitbrain_lab::runner::{check_determinism, run_watched_with, Determinism, ReportedRun};
use splitbrain_lab::shell::shell_word;
use splitbrain_lab::sweep::{self, ParamError};
use splitbrain_scenario::verdict::{describe_expect, judge_run, Outcome};
use splitbrain_scenario::{self as scenario, Scenario};
use splitbrain_sim::engine::{Reached, Snapshot, StopAt};
use splitbrain_sim::{JsonLinesWriter, Nanos, RunError, RunReport, Tee, TraceSink};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (RON).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Run the scenario's design NAME (one of its `designs`) instead of its `algorithm`: what
    /// `compare` ran for that design.
    #[arg(long, value_name = "NAME")]
    pub design: Option<String>,
    /// Run the algorithm NAME with its built-in defaults instead of the scenario's algorithm
    /// (the scenario's own settings if it is the scenario's algorithm): what `compare
    /// --algorithms NAME` ran.
    #[arg(long, value_name = "NAME", conflicts_with = "design")]
    pub algorithm: Option<String>,
    /// Run the external nodes' `reference` (the version known to be right) instead of their
    /// `command`: the same schedule on the fixed version (docs/known-bugs.md).
    #[arg(long, conflicts_with_all = ["design", "algorithm"])]
    pub on_reference: bool,
    /// Override the scenario's `resource.fencing`.
    #[arg(long, value_name = "MODE", value_enum)]
    pub fencing: Option<OnOff>,
    /// Set one parameter as `sweep --param` does, to one value (e.g. stall=10s).
    #[arg(long, value_name = "NAME=V")]
    pub param: Option<String>,
    /// With --param election_timeout=...: the heartbeat as this fraction of the minimum
    /// timeout, as `sweep --heartbeat-fraction` sets it.
    #[arg(long, value_name = "F", requires = "param")]
    pub heartbeat_fraction: Option<f64>,
    /// Run trial K of a sweep or seed K of a comparison: seed K, every explicit fault shifted
    /// by the seed's phase of the heartbeat interval, as `sweep` and `compare` run it (their
    /// trials.csv and seeds.csv give the command).
    #[arg(long, value_name = "K", conflicts_with = "seed")]
    pub trial: Option<u64>,
    /// Write one JSON line per event to this file (columns: docs/trace-format.md).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub trace: Option<PathBuf>,
    /// Write to --trace only the events of these processes (indexes, comma-separated: 0,2;
    /// a service is the index after the last member). Run-wide events (faults, heals,
    /// liveness) are kept, and a write at the resource when its writer is kept.
    #[arg(
        long,
        value_name = "I,J",
        value_delimiter = ',',
        requires = "trace",
        help_heading = "Output"
    )]
    pub trace_nodes: Option<Vec<u32>>,
    /// Write to --trace only the events in this window of true time, both ends included
    /// (5s..10s; ..2s and 30s.. leave one end open).
    #[arg(long, value_name = "FROM..TO", value_parser = step::parse_window, requires = "trace", help_heading = "Output")]
    pub trace_window: Option<step::Window>,
    /// Stop the run at a true time (12.5s, the scenario's duration syntax) or after trace
    /// event number N ('#1234': the line number in an unfiltered --trace file) and print
    /// every process's state and the messages in flight there; the exit code is the
    /// verdict so far. With --json, as JSON.
    #[arg(long, value_name = "WHEN", value_parser = step::parse_stop_at, conflicts_with_all = ["check_determinism", "plot"], help_heading = "Stepping")]
    pub stop_at: Option<StopAt>,
    /// Print the results as JSON instead of tables.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// Print only the seed and the verdict.
    #[arg(long, short, help_heading = "Output", conflicts_with = "json")]
    pub quiet: bool,
    /// Run twice and compare trace hashes; exit 1 if they differ.
    #[arg(long)]
    pub check_determinism: bool,
    /// Write the single-run pictures (leadership timeline, sequence diagram around each
    /// failover) and a report to this folder.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub plot: Option<PathBuf>,
    /// The runtime guard: how much one run may use.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// A run that has taken this long shows a progress bar on a terminal (estimates can be far
/// off, so the bar follows the clock, not the estimate).
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// The `--json` document. The seed comes first, as in the human output.
#[derive(Serialize)]
struct JsonOutput<'a> {
    seed: u64,
    scenario: &'a str,
    file: String,
    expect: String,
    #[serde(flatten)]
    outcome: &'a Outcome,
    exit_code: u8,
    replay: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    determinism: Option<Determinism>,
    /// With `--stop-at`: whether the run got there, and every process's state there.
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<Stopped<'a>>,
    /// What the modeled system did to the settings as written (a negotiated session, a
    /// raised TTL); left out when they ran as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    adjustments: Vec<String>,
    /// What the run could not test, though the scenario asks (a property over a name no
    /// node observed); left out when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
    /// The transport the run's messages travelled on, as a scenario writes it (`Datagram`,
    /// `Stream`, `Stream(timeout: "2s")`).
    transport: String,
    /// The programs the run started, each a command line (the external nodes' `command`;
    /// empty for the built-in algorithms).
    programs: Vec<Vec<String>>,
    report: &'a RunReport,
}

/// `--stop-at`'s result in the `--json` document.
#[derive(Serialize)]
struct Stopped<'a> {
    reached: Reached,
    #[serde(flatten)]
    snapshot: &'a Snapshot,
}

/// Refuses, before the run, outputs that would destroy the scenario file or each other: a
/// `--trace` naming the scenario, a `--plot` folder holding either under a name it writes.
fn check_outputs(args: &RunArgs) -> Result<(), u8> {
    let scenario = ("scenario file", args.file.as_path());
    if let Some(trace) = &args.trace {
        crate::output::check_name_lengths("--trace", trace)
            .and_then(|()| {
                crate::output::distinct_outputs(&[scenario], &[("--trace", trace.as_path())])
            })
            .map_err(|message| {
                eprintln!("{message}");
                exit::BAD_INPUT
            })?;
    }
    if let Some(dir) = &args.plot {
        crate::report_dir::check_out_folder(dir, &args.file)?;
        if let Some(trace) = &args.trace {
            check_trace_beside_plots(trace, dir)?;
        }
    }
    Ok(())
}

/// Refuses a `--trace` that is the `--plot` folder or one of its parents (the run would
/// write the trace, then fail to make the folder), or a file the plots write over.
fn check_trace_beside_plots(trace: &Path, dir: &Path) -> Result<(), u8> {
    let refuse = |why: &str| {
        eprintln!(
            "error: --trace {} {why}\n  hint: give the trace and the plots separate places",
            trace.display()
        );
        exit::BAD_INPUT
    };
    if dir
        .ancestors()
        .any(|folder| crate::output::same_file(folder, trace))
    {
        return Err(refuse(&format!(
            "is the --plot folder {} or holds it",
            dir.display()
        )));
    }
    let in_folder = crate::output::same_file(crate::output::folder_of(trace), dir);
    let stem = trace.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let plotted = [
        "report",
        "run",
        "timeline",
        "messages_per_election",
        "sequence_election",
    ]
    .contains(&stem)
        || stem.starts_with("sequence_failover_");
    if in_folder && plotted {
        return Err(refuse(&format!(
            "is a file the plots write in {}",
            dir.display()
        )));
    }
    Ok(())
}

/// Runs the scenario in `args.file` and returns the exit code.
pub fn run(args: &RunArgs) -> u8 {
    if let Err(code) = check_outputs(args) {
        return code;
    }
    let mut scenario = match scenario::load(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    if let Some(seed) = args.seed {
        scenario.sim.seed = seed;
    }
    if let Some(name) = &args.design {
        match scenario.designs.iter().find(|d| &d.name == name) {
            // On the design's transport, as `compare` and `sweep` run it.
            Some(design) => scenario = scenario.with_design(design),
            None => return unknown_design(&args.file, name, &scenario),
        }
    }
    if let Some(name) = &args.algorithm {
        let own = scenario.algorithm.entry().is_named(name);
        if !own {
            let Some(alg) = splitbrain_algorithms::AlgorithmConfig::default_named(name) else {
                eprintln!(
                    "error: unknown algorithm {name:?}\n  hint: `splitbrain list` shows the algorithms"
                );
                return exit::BAD_INPUT;
            };
            if let Err(scenario::Refused { message, hint }) =
                scenario.refuse_algorithm(&alg, "--algorithm")
            {
                eprintln!("error: {}: {message}\n  hint: {hint}", args.file.display());
                return exit::BAD_INPUT;
            }
            scenario = scenario.with_algorithm(&alg);
        }
    }
    if args.on_reference {
        let Some(reference) = scenario.algorithm.reference() else {
            eprintln!(
                "error: {}: --on-reference: the algorithm names no `reference`\n  hint: add `reference: [...]`, the fixed version's command, to `External(...)` (docs/scenario-format.md)",
                args.file.display()
            );
            return exit::BAD_INPUT;
        };
        scenario.algorithm = reference;
    }
    if let Some(text) = &args.param {
        scenario = match with_param(&scenario, text, args.heartbeat_fraction) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::BAD_INPUT;
            }
        };
    }
    if let Some(mode) = args.fencing {
        scenario.sim.fencing = mode == OnOff::On;
    }
    if let Some(trial) = args.trial {
        scenario = splitbrain_lab::phase::trial(&scenario, trial);
    }
    // Last: `--param` rebuilds the scenario from its text, which holds no limits.
    scenario.sim.limits = args.limits.limits();
    let adjustments = scenario.algorithm.adjustments();
    for note in &adjustments {
        eprintln!("note: {}: {note}", args.file.display());
    }
    let expect_rate_ppm = scenario.expect_rate_ppm;
    // The nemesis (if any) draws this seed's faults, exactly as `hunt` does for this seed.
    let scenario = scenario.materialize(scenario.sim.seed);
    if let Err(message) = check_stepping(args, &scenario) {
        eprintln!("error: {}: {message}", args.file.display());
        return exit::BAD_INPUT;
    }
    let programs = scenario.algorithm.programs();
    crate::print::announce_programs(&args.file, &programs);
    if !args.json {
        crate::outln!("seed {}", scenario.sim.seed);
    }
    let bar = progress_bar(args);
    // The plots' sequence windows are kept during the run itself: no second run.
    let mut recorder = args.plot.as_ref().map(|_| plot::PlotRecorder::default());
    let plot_sink = recorder.as_mut().map(|r| r as &mut dyn TraceSink);
    let outgrown = |e: RunError| {
        let words = format!("{} (seed {})", args.file.display(), scenario.sim.seed);
        match e {
            RunError::Limit(e) => eprintln!("{}", limit_message(&words, &e)),
            RunError::Refused(e) if e.refusal == splitbrain_sim::Refusal::ProcessFailed => {
                eprintln!(
                    "error: {words}: {e}\n  hint: the node broke the step protocol or stopped \
                 (docs/protocol.md#errors); `stderr: Show` in its settings shows its log"
                )
            }
            RunError::Refused(e) => eprintln!(
                "error: {words}: {e}\n  hint: the engine refuses this effect; the algorithm's \
                 handler asked for it"
            ),
        }
        exit::BAD_INPUT
    };
    let mut stopped: Option<(Reached, Snapshot)> = None;
    let step = args.stop_at.map(|at| Step {
        at,
        snapshot: &mut stopped,
    });
    let filter = TraceFilter {
        nodes: args.trace_nodes.as_deref(),
        window: args.trace_window,
        processes: scenario.algorithm.processes(scenario.sim.members),
    };
    // The reported run's exchanges with external nodes, for the determinism check.
    let recording = args.check_determinism.then(transcript::Recording::start);
    let report = match &args.trace {
        Some(path) => match run_traced_to_file(&scenario, path, plot_sink, &filter, step, &bar) {
            Ok(report) => report,
            Err(TracedRunError::Outgrown(e)) => return outgrown(e),
            Err(TracedRunError::Output(message)) => {
                eprintln!("error: {message}");
                return exit::BAD_INPUT;
            }
        },
        None => match run_observed(&scenario, plot_sink, step, &bar) {
            Ok(report) => report,
            Err(e) => return outgrown(e),
        },
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let reported = recording.map(|recording| ReportedRun {
        report: &report,
        transcript: recording.finish(),
    });
    let determinism = match reported.map(|reported| check_determinism(&scenario, reported)) {
        Some(Err(e)) => return outgrown(e),
        Some(Ok(d)) => Some(d),
        None => None,
    };
    let outcome = judge_run(&scenario, &report);
    let deterministic = determinism.as_ref().is_none_or(|d| d.identical);
    let code = if deterministic {
        exit::of_outcome(&outcome)
    } else {
        exit::SAFETY_MISMATCH
    };
    if code != exit::MATCHED && expect_rate_ppm != scenario::EVERY_SEED_PPM {
        // A seed-specific scenario's other seeds are not a bug: say so where it shows.
        eprintln!(
            "note: {} states that it matches its expect on {}% of seeds (expect_rate), not all",
            args.file.display(),
            f64::from(expect_rate_ppm) / 10_000.0
        );
    }
    let warnings = summary::unobserved_warnings(&scenario.algorithm, &report);
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    let replay = match args.trial {
        // `--trial` sets the seed and the faults' phase; `--seed` may not come with it.
        Some(_) => format!(
            "splitbrain run {} --trace trace.jsonl{}",
            args.file.display(),
            design_flags(args)
        ),
        None => replay_command(&args.file, scenario.sim.seed) + &design_flags(args),
    };
    let plotted = match (&args.plot, recorder) {
        (Some(dir), Some(recorder)) => {
            // The command that drew these pictures: the replay's flags, not only the seed.
            let base = match args.trial {
                Some(_) => format!("splitbrain run {}", args.file.display()),
                None => format!(
                    "splitbrain run {} --seed {}",
                    args.file.display(),
                    scenario.sim.seed
                ),
            };
            let command = format!("{base}{} --plot {}", design_flags(args), dir.display());
            let (windows, view) = recorder.finish();
            let written = write_plots(&scenario, &report, windows, dir, &command);
            let html = plot::run_view(&scenario, &report, &view, &command);
            let written = written.and_then(|()| {
                splitbrain_reports::write_run_view(dir, &html)
                    .map(|_| ())
                    .map_err(|e| crate::report_dir::report_write_error(dir, &e))
            });
            if let Err(message) = written {
                eprintln!("error: {message}");
                return exit::BAD_INPUT;
            }
            Some(dir.join("report.html"))
        }
        _ => None,
    };
    if args.json {
        let doc = JsonOutput {
            seed: scenario.sim.seed,
            scenario: &scenario.name,
            file: args.file.display().to_string(),
            expect: describe_expect(&scenario.expect),
            outcome: &outcome,
            exit_code: code,
            replay,
            determinism,
            stopped: stopped.as_ref().map(|(reached, snapshot)| Stopped {
                reached: *reached,
                snapshot,
            }),
            adjustments,
            warnings,
            transport: scenario::transport_line(&scenario.sim.network.transport),
            programs,
            report: &report,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        let context = summary::Context {
            scenario: &scenario,
            file: &args.file,
            replay: &replay,
        };
        if let Some((reached, snapshot)) = &stopped {
            let names = scenario.algorithm.lifeline_names(scenario.sim.members);
            step::print_snapshot(*reached, snapshot, &names);
            summary::print_verdict(&context, &report, &outcome);
        } else if args.quiet {
            summary::print_verdict(&context, &report, &outcome);
        } else {
            summary::print(&context, &report, &outcome);
        }
        if let Some(d) = &determinism {
            summary::print_determinism(d);
        }
        if let Some(html) = &plotted {
            crate::outln!("plots: {}", html.display());
            let view = html.with_file_name(splitbrain_reports::VIEW_FILE);
            crate::outln!("step through the run: {}", view.display());
        }
    }
    code
}

/// The command that replays this run with a trace.
pub fn replay_command(file: &Path, seed: u64) -> String {
    format!(
        "splitbrain run {} --seed {seed} --trace trace.jsonl",
        file.display()
    )
}

/// The scenario with `--param NAME=V` (one value) set as `sweep` sets it, checked by the
/// scenario's rules.
fn with_param(
    scenario: &Scenario,
    text: &str,
    fraction: Option<f64>,
) -> Result<Scenario, ParamError> {
    let (param, values) = sweep::parse_param(text)?;
    let [(label, value)] = values.as_slice() else {
        return Err(ParamError::OneValueOnly {
            text: text.to_string(),
            count: values.len(),
            example: values.first().map_or("stall=10s", |(l, _)| l).to_string(),
        });
    };
    let applied = match fraction {
        Some(f) => {
            sweep::check_heartbeat_fraction(f, Some(param))?;
            sweep::apply_with_heartbeat(scenario, param, value, f)?
        }
        None => sweep::apply(scenario, param, value)?,
    };
    Ok(revalidate(&applied, label)?)
}

/// Writes the pictures of one run (`report` of `scenario`, with the `windows` its recorder
/// kept) to `dir`.
fn write_plots(
    scenario: &Scenario,
    report: &RunReport,
    windows: splitbrain_reports::CapturedWindows,
    dir: &Path,
    command: &str,
) -> Result<(), String> {
    let (doc, charts) =
        plot::plot_report(scenario, report, windows, command).map_err(|e| e.to_string())?;
    splitbrain_reports::write_report(dir, &doc, &charts, &[])
        .map(|_| ())
        .map_err(|e| crate::report_dir::report_write_error(dir, &e))
}

/// `--design NAME`, `--algorithm NAME` and `--fencing MODE` as given, for the replay command.
fn design_flags(args: &RunArgs) -> String {
    let mut flags = String::new();
    if let Some(name) = &args.design {
        flags += &format!(" --design {name}");
    }
    if let Some(name) = &args.algorithm {
        flags += &format!(" --algorithm {name}");
    }
    if let Some(text) = &args.param {
        flags += &format!(" --param {}", shell_word(text));
    }
    if let Some(f) = args.heartbeat_fraction {
        flags += &format!(" --heartbeat-fraction {f}");
    }
    if let Some(mode) = args.fencing {
        flags += &format!(" {}", mode.fencing_flag());
    }
    if let Some(trial) = args.trial {
        flags += &format!(" --trial {trial}");
    }
    flags
}

/// `--design NAME` names no design of the scenario: exit 2 with the names it has.
fn unknown_design(file: &Path, name: &str, scenario: &Scenario) -> u8 {
    let names: Vec<&str> = scenario.designs.iter().map(|d| d.name.as_str()).collect();
    let hint = if names.is_empty() {
        "this scenario lists no `designs`; drop --design to run its algorithm".to_string()
    } else {
        format!("its designs are {}", names.join(", "))
    };
    eprintln!(
        "error: {}: no design named {name:?}\n  hint: {hint}",
        file.display()
    );
    exit::BAD_INPUT
}

/// Why a traced run gave no report.
enum TracedRunError {
    /// The run outgrew its limits, or asked for an effect the engine refuses.
    Outgrown(RunError),
    /// The trace could not be written.
    Output(String),
}

/// Runs with a trace written to `path` (atomically, see [`OutputFile`]) and, if given, handed
/// to `also` too: on any error (the trace's, or the run outgrowing its limits) nothing is
/// left behind.
fn run_traced_to_file(
    scenario: &Scenario,
    path: &Path,
    also: Option<&mut dyn TraceSink>,
    filter: &TraceFilter,
    step: Option<Step<'_>>,
    bar: &Option<ProgressBar>,
) -> Result<RunReport, TracedRunError> {
    // Watching for signals before the file exists: none can strike in between.
    if let Some(partial) = crate::output::atomic_partial(path) {
        remove_on_signal(partial);
    }
    let mut file = OutputFile::create(path).map_err(|e| TracedRunError::Output(e.to_string()))?;
    let mut writer = JsonLinesWriter::new(file.writer());
    let report = {
        let mut filtered = filter.around(&mut writer);
        let to_file: &mut dyn TraceSink = match filtered.as_mut() {
            Some(f) => f,
            None => &mut writer,
        };
        match also {
            Some(other) => run_observed(scenario, Some(&mut Tee(to_file, other)), step, bar),
            None => run_observed(scenario, Some(to_file), step, bar),
        }
    };
    let finished = writer.finish();
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            file.discard();
            return Err(TracedRunError::Outgrown(e));
        }
    };
    if let Err(e) = finished {
        file.discard();
        let message = format!("cannot write to {}: {e}", path.display());
        return Err(TracedRunError::Output(message));
    }
    file.commit()
        .map_err(|e| TracedRunError::Output(e.to_string()))?;
    Ok(report)
}

/// Ctrl-C (or SIGTERM, SIGHUP) during a traced run: the unfinished trace, `partial`, is
/// removed before the process ends with 128 + the signal (130 for Ctrl-C), so a stopped run
/// leaves no half-written file behind (a long trace can be gigabytes).
fn remove_on_signal(partial: std::path::PathBuf) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return; // no handler: the signal ends the process as it would have
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let _ = std::fs::remove_file(&partial);
            std::process::exit(128 + signal);
        }
    });
}

/// Runs `scenario`, moving `bar` (if any) along in simulated time: the bar appears once the
/// run has taken [`PROGRESS_AFTER`], whatever its estimate said.
fn run_observed<'a>(
    scenario: &Scenario,
    trace: Option<&'a mut dyn TraceSink>,
    step: Option<Step<'a>>,
    bar: &Option<ProgressBar>,
) -> Result<RunReport, RunError> {
    // The wall clock only decides when the bar appears, never what the run computes.
    #[allow(clippy::disallowed_types)]
    let started = std::time::Instant::now();
    let duration_ns = scenario.sim.duration_ns;
    let mut advance = |now_ns: Nanos| {
        let Some(bar) = bar else { return };
        if bar.is_hidden() && started.elapsed() >= PROGRESS_AFTER {
            bar.set_length(duration_ns);
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.set_position(now_ns);
    };
    let options = RunOptions {
        progress: bar
            .is_some()
            .then_some(&mut advance as &mut dyn FnMut(Nanos)),
        // Shortened to as long as `advance` lives.
        ..RunOptions {
            trace,
            step,
            ..RunOptions::default()
        }
        .shorten()
    };
    let sim = scenario.sim.clone();
    run_watched_with(&scenario.algorithm, sim, options, &|| false)
}

/// A bar over the run's simulated time, drawn once the run has taken [`PROGRESS_AFTER`];
/// none when stderr is not a terminal, or with `--quiet` or `--json`.
fn progress_bar(args: &RunArgs) -> Option<ProgressBar> {
    if args.quiet || args.json || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    let style = ProgressStyle::with_template("{bar:30} {percent}% of simulated time  eta {eta}")
        .expect("a valid progress template");
    bar.set_style(style);
    Some(bar)
}

/// `--trace-nodes` and `--trace-window`, as given.
struct TraceFilter<'a> {
    nodes: Option<&'a [u32]>,
    window: Option<step::Window>,
    /// The run's processes (members and service): the ids `--trace-nodes` may name.
    processes: usize,
}

impl TraceFilter<'_> {
    /// A sink passing on to `inner` what the filters keep; `None` without filters, so that
    /// the unfiltered trace is written exactly as before.
    fn around<'s>(&self, inner: &'s mut dyn TraceSink) -> Option<step::Filtered<'s>> {
        if self.nodes.is_none() && self.window.is_none() {
            return None;
        }
        let nodes = self.nodes.map(|ids| {
            let mut kept = vec![false; self.processes];
            for id in ids {
                kept[*id as usize] = true;
            }
            kept
        });
        Some(step::Filtered {
            inner,
            nodes,
            window: self.window,
            resource: splitbrain_sim::NodeId::from(self.processes),
        })
    }
}

/// Refuses a `--stop-at` past the run's end and a `--trace-nodes` id that is no process.
fn check_stepping(args: &RunArgs, scenario: &Scenario) -> Result<(), String> {
    let duration_ns = scenario.sim.duration_ns;
    if let Some(StopAt::Time(at_ns)) = args.stop_at
        && at_ns > duration_ns
    {
        return Err(format!(
            "--stop-at {} is past the run's end ({})\n  hint: stop at {} or earlier",
            splitbrain_sim::format_duration(at_ns),
            splitbrain_sim::format_duration(duration_ns),
            splitbrain_sim::format_duration(duration_ns)
        ));
    }
    let processes = scenario.algorithm.processes(scenario.sim.members);
    if let Some(bad) = args
        .trace_nodes
        .iter()
        .flatten()
        .find(|id| **id as usize >= processes)
    {
        return Err(format!(
            "--trace-nodes {bad}: the run has processes 0 to {}\n  hint: members are 0..{}",
            processes - 1,
            scenario.sim.members
        ));
    }
    Ok(())
}
