//! `splitbrain sweep`: vary one parameter and measure a failover at each value over many
//! trials; a report folder with the failover-time distribution, election rounds and messages
//! per election per value (see [`splitbrain_lab::sweep`]).
//!
//! Exit code: 0, or 3 when the scenario states an objective and some value misses it.

use crate::args::{FencingMode, LimitArgs};
use crate::exit;
use crate::print::{bad_input, print_table};
use crate::report_dir::{self, RunsBar};
use clap::Args;
use serde::Serialize;
use splitbrain_lab::group::{self, GroupSummary, SettingsAsRun};
use splitbrain_lab::shell::shell_word;
use splitbrain_lab::sweep::{self, parse_param, Param, SweepPlan, Variant};
use splitbrain_reports::{format_seeds, ReportDoc};
use splitbrain_scenario::{self as scenario, Scenario};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The scenario file (RON): its faults define the failover each trial measures.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The parameter and its values: a setting of the scenario's algorithm (`splitbrain list`
    /// shows each algorithm's, e.g. heartbeat=50ms,100ms), of the scenario (nodes=3,5,7,
    /// loss=0,0.05, latency=1ms..10ms, fault_duration=100ms..5s: its nemesis' fault lengths),
    /// or of its faults, every fault of that kind: a length (pause=1s,5s, stall=..., suspend=...,
    /// slow_disk=100ms,1s for the fsync time, slow_disk_for=5s,30s, crash=5s,30s and
    /// partition=5s for heal_after, given to a fault without one), clock_jump=2s,-2s,
    /// drift=1000, or a probability (loss_burst=0.1,0.5 for Loss, duplicate_burst=0.1 for
    /// Duplicate). Without it, the scenario runs as written, --trials times. A scenario with
    /// `designs` runs every design at every value.
    #[arg(long, value_name = "NAME=V1,V2,...")]
    pub param: Option<String>,
    /// Run only these of the scenario's `designs`, in this order (e.g. etcd-10s,zk-6s);
    /// without it, every design.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub designs: Option<Vec<String>>,
    /// With --param election_timeout=...: set each value's heartbeat to this fraction of its
    /// minimum election timeout, a number between 0 and 1 (e.g. 0.1), so that the ratio stays
    /// fixed as the timeouts scale.
    #[arg(long, value_name = "F")]
    pub heartbeat_fraction: Option<f64>,
    /// Trials (seeds 1..=N) per value (in all, without --param), for every design.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub trials: u64,
    /// Fencing at the resource: as the scenario says, on, off, or both (each design runs
    /// twice, as NAME-fenced and NAME-unfenced, with the same trials: what fencing buys).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = FencingMode::Scenario)]
    pub fencing: FencingMode,
    /// The output folder.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Worker threads, 1 to 1024 [default: every core]. The results are the same whatever
    /// this is.
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// The runtime guard: how much one run may use.
    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Serialize)]
struct JsonSummary<'a> {
    scenario: &'a str,
    command: &'a str,
    out: String,
    /// The parameter swept; `null` for plain repeated trials.
    param: Option<&'a str>,
    /// `--heartbeat-fraction`, if given.
    heartbeat_fraction: Option<f64>,
    trials: u64,
    /// Each group's settings as they ran.
    settings: Vec<SettingsJson<'a>>,
    values: &'a [GroupSummary],
    /// The programs the trials started, each a command line, each once (the external
    /// nodes' `command`; empty for the built-in algorithms).
    programs: &'a [Vec<String>],
    exit_code: u8,
}

/// One group's settings as they ran: what the JSON echoes.
#[derive(Serialize)]
struct SettingsJson<'a> {
    label: &'a str,
    fencing: bool,
    #[serde(flatten)]
    settings: SettingsAsRun,
}

fn settings_json(v: &Variant) -> SettingsJson<'_> {
    SettingsJson {
        label: &v.label,
        fencing: v.scenario.sim.fencing,
        settings: SettingsAsRun::of(&v.scenario.algorithm),
    }
}

/// Runs the command; returns the exit code.
pub fn run(args: &SweepArgs) -> u8 {
    let (param, values) = match args.param.as_deref().map(parse_param).transpose() {
        Ok(Some((param, values))) => (Some(param), values),
        Ok(None) => (None, Vec::new()),
        Err(e) => return bad_input(&e),
    };
    if let Some(fraction) = args.heartbeat_fraction
        && let Err(e) = sweep::check_heartbeat_fraction(fraction, param)
    {
        return bad_input(&e);
    }
    let groups_asked = values.len().max(1);
    if let Err(e) = group::check_count("--trials", args.trials, groups_asked, "per value") {
        return bad_input(&e);
    }
    if let Err(code) = report_dir::check_out_folder(&args.out, &args.file) {
        return code;
    }
    let mut scenario = match scenario::load(&args.file) {
        Ok(mut s) => {
            s.sim.limits = args.limits.limits();
            s
        }
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    if let Some(names) = &args.designs {
        match sweep::only_designs(&scenario, names) {
            Ok(s) => scenario = s,
            Err(e) => return bad_input(&format!("{}: {e}", args.file.display())),
        }
    }
    let plan = SweepPlan {
        param: args.param.clone(),
        heartbeat_fraction: args.heartbeat_fraction,
        trials: args.trials,
        fencing: args.fencing.lab(),
        file: args.file.display().to_string(),
    };
    let variants = match sweep::variants(&plan, &scenario, param, &values) {
        Ok(v) => v,
        Err(e) => return bad_input(&e),
    };
    let programs = splitbrain_scenario::programs_of(variants.iter().map(|v| &v.scenario.algorithm));
    crate::print::announce_programs(&args.file, &programs);
    let trials: Vec<u64> = (1..=args.trials).collect();
    let runs = args.trials.saturating_mul(variants.len() as u64);
    let bar = RunsBar::new(runs, args.json);
    let pool = match crate::args::worker_pool(args.jobs) {
        Ok(pool) => pool,
        Err(e) => return bad_input(&e),
    };
    let result = match pool.install(|| sweep::sweep(&plan, &scenario, param, &variants, &bar)) {
        Ok(result) => result,
        Err(e) => return report_dir::build_failed(&args.file, e),
    };
    let code = if result.objective_missed() {
        exit::LIVENESS_FAILED
    } else {
        exit::MATCHED
    };
    let command = command_line(args);
    let param_name = param.map_or("trials", Param::name);
    let facts = report_facts(args, &scenario, param, code);
    let doc = ReportDoc {
        title: format!("sweep {param_name}: {}", scenario.name),
        command: command.clone(),
        seeds: trials.clone(),
        facts,
        sections: result.sections,
    };
    if let Err(code) = report_dir::write(&args.out, &doc, &result.charts, &result.data) {
        return code;
    }
    let summaries = &result.summaries;
    if args.json {
        let doc = JsonSummary {
            scenario: &scenario.name,
            command: &command,
            out: args.out.display().to_string(),
            param: param.map(Param::name),
            heartbeat_fraction: args.heartbeat_fraction,
            trials: args.trials,
            settings: variants.iter().map(settings_json).collect(),
            values: summaries,
            programs: &programs,
            exit_code: code,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        print_summary(args, &scenario.name, param, &variants, summaries);
    }
    code
}

/// The command that reproduces the whole sweep.
fn command_line(args: &SweepArgs) -> String {
    let mut words = vec![
        "splitbrain".to_string(),
        "sweep".to_string(),
        shell_word(&args.file.display().to_string()),
    ];
    if let Some(p) = &args.param {
        words.extend(["--param".to_string(), shell_word(p)]);
    }
    if let Some(f) = args.heartbeat_fraction {
        words.extend(["--heartbeat-fraction".to_string(), f.to_string()]);
    }
    if let Some(names) = &args.designs {
        words.extend(["--designs".to_string(), shell_word(&names.join(","))]);
    }
    words.extend(args.fencing.flag_words());
    words.extend([
        "--trials".to_string(),
        args.trials.to_string(),
        "--out".to_string(),
        shell_word(&args.out.display().to_string()),
    ]);
    words.join(" ")
}

/// The report's facts: the scenario, its designs, the parameter, the exit code.
fn report_facts(
    args: &SweepArgs,
    scenario: &Scenario,
    param: Option<Param>,
    code: u8,
) -> Vec<(String, String)> {
    let mut facts = vec![
        ("scenario".to_string(), args.file.display().to_string()),
        if scenario.designs.is_empty() {
            (
                "algorithm".to_string(),
                scenario.algorithm.name().to_string(),
            )
        } else {
            let names: Vec<&str> = scenario.designs.iter().map(|d| d.name.as_str()).collect();
            ("designs".to_string(), names.join(", "))
        },
        (
            "parameter".to_string(),
            param
                .map_or("none (the scenario as written)", Param::name)
                .to_string(),
        ),
    ];
    if let Some(f) = args.heartbeat_fraction {
        facts.push((
            "heartbeat".to_string(),
            format!("{f} x the minimum election timeout"),
        ));
    }
    facts.push(("exit code".to_string(), code.to_string()));
    facts
}

/// The terminal's summary: what ran, the settings, failover, safety and objective tables.
fn print_summary(
    args: &SweepArgs,
    scenario_name: &str,
    param: Option<Param>,
    variants: &[Variant],
    summaries: &[GroupSummary],
) {
    let trials: Vec<u64> = (1..=args.trials).collect();
    match param {
        Some(param) => crate::outln!(
            "sweep {} of {}: trials {} per value",
            param.name(),
            scenario_name,
            format_seeds(&trials)
        ),
        None => crate::outln!(
            "sweep of {} as written: trials {}",
            scenario_name,
            format_seeds(&trials)
        ),
    }
    // The settings as they ran are too wide for a terminal: report.md has them.
    print_table(&sweep::settings_table(variants).columns(&["value", "fencing", "transport"]));
    crate::outln!();
    crate::print::print_group_tables("value", summaries);
    crate::outln!();
    crate::outln!("report: {}", args.out.join("report.html").display());
}
