//! `splitbrain compare`: the same faults (the same seeds) with several algorithms; a report
//! folder with the failover-time distributions, messages per election, safety by fault kind,
//! leadership overlap, fenced rejections and the recovery-time objective per algorithm.
//!
//! Exit code: 0, or 3 when the scenario states an objective and some algorithm misses it
//! (safety violations are results to compare here, not a mismatch: they are in the report).

use crate::args::{FencingMode, LimitArgs};
use crate::exit;
use crate::print::{bad_input, print_table};
use crate::report_dir::{self, RunsBar};
use clap::Args;
use serde::Serialize;
use splitbrain_lab::compare::{self, ComparePlan, Design, Origin};
use splitbrain_lab::group::{self, GroupSummary, SettingsAsRun};
use splitbrain_lab::shell::shell_word;
use splitbrain_reports::{format_seeds, ReportDoc};
use splitbrain_scenario as scenario;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The scenario file (RON): its faults (and nemesis) are run with every algorithm.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Algorithms to compare, each with its built-in defaults (the scenario's own settings for
    /// its own), instead of the scenario's `designs`. Without it and without designs:
    /// raft,bully,ring.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub algorithms: Option<Vec<String>>,
    /// Seeds 1..=N per algorithm.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub seeds: u64,
    /// Cluster sizes for the message-count-versus-size chart.
    #[arg(
        long,
        value_name = "SIZES",
        value_delimiter = ',',
        default_value = "3,5,9,17,33"
    )]
    pub sizes: Vec<usize>,
    /// Fencing at the resource: as the scenario says, on, off, or both (each design runs
    /// twice, as NAME-fenced and NAME-unfenced, to show what fencing buys).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = FencingMode::Scenario)]
    pub fencing: FencingMode,
    /// The output folder (report.md, report.html, charts, CSV and JSON).
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
    seeds: u64,
    /// Each design's settings as they ran.
    designs: Vec<DesignJson<'a>>,
    /// Each design's results, in the same order.
    algorithms: &'a [GroupSummary],
    /// The programs the designs' runs started, each a command line, each once (the
    /// external nodes' `command`; empty for the built-in algorithms).
    programs: &'a [Vec<String>],
    exit_code: u8,
}

/// A design as the JSON summary echoes it: its settings as they ran.
#[derive(Serialize)]
struct DesignJson<'a> {
    name: &'a str,
    origin: Origin,
    fencing: bool,
    /// The transport it ran on, as a scenario writes it.
    transport: String,
    #[serde(flatten)]
    settings: SettingsAsRun,
}

fn design_json(d: &Design) -> DesignJson<'_> {
    DesignJson {
        name: &d.name,
        origin: d.origin,
        fencing: d.fencing,
        transport: scenario::transport_line(&d.transport),
        settings: SettingsAsRun::of(&d.algorithm),
    }
}

/// Runs the command; returns the exit code.
pub fn run(args: &CompareArgs) -> u8 {
    let scenario = match scenario::load(&args.file) {
        Ok(mut s) => {
            s.sim.limits = args.limits.limits();
            s
        }
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    let plan = ComparePlan {
        algorithms: args.algorithms.clone(),
        seeds: args.seeds,
        sizes: args.sizes.clone(),
        fencing: args.fencing.lab(),
        file: args.file.display().to_string(),
    };
    let designs = match compare::designs(&plan, &scenario) {
        Ok(d) => d,
        Err(e) => return bad_input(&e),
    };
    if let Err(e) = compare::check_designs(&plan, &scenario, &designs) {
        return bad_input(&e);
    }
    if let Err(e) = group::check_count("--seeds", args.seeds, designs.len(), "per design") {
        return bad_input(&e);
    }
    if let Err(code) = report_dir::check_out_folder(&args.out, &args.file) {
        return code;
    }
    if let Err(e) = compare::check_sizes(&plan, &designs) {
        return bad_input(&e);
    }
    let command = command_line(args);
    let programs = splitbrain_scenario::programs_of(designs.iter().map(|d| &d.algorithm));
    crate::print::announce_programs(&args.file, &programs);
    let seeds: Vec<u64> = (1..=args.seeds).collect();
    let bar = RunsBar::new(args.seeds.saturating_mul(designs.len() as u64), args.json);
    let pool = match crate::args::worker_pool(args.jobs) {
        Ok(pool) => pool,
        Err(e) => return bad_input(&e),
    };
    let result = match pool.install(|| compare::compare(&plan, &scenario, &designs, &bar)) {
        Ok(result) => result,
        Err(e) => return report_dir::build_failed(&args.file, e),
    };
    let code = if result.objective_missed() {
        exit::LIVENESS_FAILED
    } else {
        exit::MATCHED
    };
    let names: Vec<&str> = designs.iter().map(|d| d.name.as_str()).collect();
    let doc = ReportDoc {
        title: format!("compare: {}", scenario.name),
        command: command.clone(),
        seeds: seeds.clone(),
        facts: vec![
            ("scenario".to_string(), args.file.display().to_string()),
            ("designs".to_string(), names.join(", ")),
            ("exit code".to_string(), code.to_string()),
        ],
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
            seeds: args.seeds,
            designs: designs.iter().map(design_json).collect(),
            algorithms: summaries,
            programs: &programs,
            exit_code: code,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        crate::outln!(
            "compare {}: seeds {} per design",
            scenario.name,
            format_seeds(&seeds)
        );
        // The settings as they ran are too wide for a terminal: report.md has them.
        print_table(&compare::settings_table(&designs).columns(&[
            "design",
            "settings from",
            "fencing",
            "transport",
        ]));
        crate::outln!();
        crate::print::print_group_tables("design", summaries);
        crate::outln!();
        crate::outln!("report: {}", args.out.join("report.html").display());
    }
    code
}

/// The command that produced the folder, as a user would type it again.
fn command_line(args: &CompareArgs) -> String {
    let sizes: Vec<String> = args.sizes.iter().map(|s| s.to_string()).collect();
    let algorithms = args
        .algorithms
        .iter()
        .flat_map(|names| ["--algorithms".to_string(), shell_word(&names.join(","))]);
    [
        "splitbrain".to_string(),
        "compare".to_string(),
        shell_word(&args.file.display().to_string()),
    ]
    .into_iter()
    .chain(algorithms)
    .chain([
        "--seeds".to_string(),
        args.seeds.to_string(),
        "--sizes".to_string(),
        sizes.join(","),
    ])
    .chain(args.fencing.flag_words())
    .chain([
        "--out".to_string(),
        shell_word(&args.out.display().to_string()),
    ])
    .collect::<Vec<_>>()
    .join(" ")
}
