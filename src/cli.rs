//! Command-line interface: argument parsing and dispatch.

use crate::commands;
use crate::exit;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  the outcome matched the scenario's `expect`
  1  a safety outcome differed from `expect` (or --check-determinism found a difference)
  2  bad input or usage, or an output that could not be written; a run that outgrew its
     runtime guard (--max-events, --max-in-flight, --max-memory, --max-time); merge: seeds
     missing or recorded twice with different outcomes
  3  liveness failed, or a failover missed the recovery-time objective (safety matched `expect`)
  129, 130, 143  hunt: interrupted by SIGHUP, SIGINT (Ctrl-C) or SIGTERM (128 + the signal's
     number); the records so far are kept and summarised. run --trace: the same signals
     remove the unfinished trace";

/// Deterministic simulator for leader election: partitions, pauses, clock skew, message loss;
/// checks election safety and fencing at every event; measures failover.
#[derive(Parser, Debug)]
#[command(name = "splitbrain", version, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one scenario: print the seed, a summary, and exit with the verdict.
    #[command(
        after_help = concat!(
            "Examples:\n  splitbrain run scenarios/raft-leader-crash.ron\n  splitbrain run scenarios/raft-partition.ron --seed 42 --trace out/trace.jsonl\n  splitbrain run scenarios/raft-healthy.ron --json --check-determinism\n  splitbrain run scenarios/review-controller.ron --design etcd-10s --seed 7 --fencing off\n\nThe failover table's columns, times from the fault (unavailable: see below):\n",
            crate::failover_legend!()
        )
    )]
    Run(RunArgs),
    /// Validate scenario files without running them.
    #[command(after_help = "Example:\n  splitbrain check scenarios/*.ron")]
    Check(CheckArgs),
    /// Run many seeds (each with its own nemesis schedule) on every core; shrink failures.
    #[command(
        after_help = "Examples:\n  splitbrain hunt scenarios/raft-nemesis.ron --seeds 10000\n  splitbrain hunt scenarios/raft-nemesis.ron --seed-range 1..100001 --shard $JOB_COMPLETION_INDEX/8 --jsonl shard.jsonl --quiet\n  splitbrain hunt scenarios/raft-broken-nemesis.ron --keep-going --junit hunt.xml"
    )]
    Hunt(HuntArgs),
    /// Combine the --jsonl files of hunt shards into one summary.
    #[command(after_help = "Example:\n  splitbrain merge shard-*.jsonl --junit hunt.xml")]
    Merge(MergeArgs),
    /// Run the same faults (same seeds) with several algorithms; charts and a report.
    #[command(
        after_help = "Example:\n  splitbrain compare scenarios/compare-failover.ron --seeds 50 --out out/compare\n  splitbrain list    # the algorithms --algorithms takes"
    )]
    Compare(CompareArgs),
    /// Vary one parameter (or none) and measure a failover at each value over many trials.
    #[command(
        after_help = "Examples:\n  splitbrain sweep scenarios/sweep-election-timeout.ron --param nodes=3,5,7,9 --out out/nodes\n  splitbrain sweep scenarios/sweep-election-timeout.ron --param latency=1ms..5ms,5ms..20ms --trials 200 --out out/latency\n  splitbrain sweep scenarios/sweep-election-timeout.ron --param election_timeout=150ms..300ms,300ms..600ms --heartbeat-fraction 0.1 --out out/timeouts\n  splitbrain sweep scenarios/k8s-handover.ron --trials 1000 --out out/handover    # plain repeated trials\n  splitbrain sweep scenarios/review-controller.ron --param stall=5s,10s,15s --fencing both --trials 200 --out out/stall   # every design, every pause, with and without fencing\n  splitbrain list    # each algorithm's settings --param takes"
    )]
    Sweep(SweepArgs),
    /// List the scenario library and the algorithms.
    List(ListArgs),
}

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
    /// The runtime guard: how much one run may use.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// `run --fencing`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    /// The flag as a replay command writes it: `--fencing on`.
    pub fn fencing_flag(self) -> &'static str {
        match self {
            OnOff::On => "--fencing on",
            OnOff::Off => "--fencing off",
        }
    }
}

/// `compare --fencing` and `sweep --fencing`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FencingMode {
    /// The scenario's `resource.fencing`.
    Scenario,
    On,
    Off,
    Both,
}

impl FencingMode {
    /// `--fencing MODE` as a command line writes it, nothing for the default.
    pub fn flag_words(self) -> Vec<String> {
        let word = match self {
            FencingMode::Scenario => return Vec::new(),
            FencingMode::On => "on",
            FencingMode::Off => "off",
            FencingMode::Both => "both",
        };
        vec!["--fencing".to_string(), word.to_string()]
    }
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The scenario file (RON): its faults define the failover each trial measures.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The parameter and its values: a setting of the scenario's algorithm (`splitbrain list`
    /// shows each algorithm's, e.g. heartbeat=50ms,100ms), of the scenario (nodes=3,5,7,
    /// loss=0,0.05, latency=1ms..10ms), or of its faults (stall=5s,10s,15s, pause=...,
    /// suspend=..., clock_jump=2s,-2s, drift=1000, partition=5s: every fault of that kind).
    /// Without it, the scenario runs as written, --trials times. A scenario with `designs`
    /// runs every design at every value.
    #[arg(long, value_name = "NAME=V1,V2,...")]
    pub param: Option<String>,
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
    /// The runtime guard: how much one run may use.
    #[command(flatten)]
    pub limits: LimitArgs,
}

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
    /// Run trial K of a sweep: seed K, every explicit fault shifted by the trial's phase of
    /// the heartbeat interval, as `sweep` runs it (its trials.csv gives the command).
    #[arg(long, value_name = "K", conflicts_with = "seed")]
    pub trial: Option<u64>,
    /// Write one JSON line per event to this file (columns: docs/trace-format.md).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub trace: Option<PathBuf>,
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
    /// Run only slice I of N (I from 0) of the seed range, e.g. 0/4.
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
    /// ended last), for `merge`. Written as FILE.partial (locked while the hunt runs) and
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
    /// The runtime guard: how much one run may use.
    #[command(flatten)]
    pub limits: LimitArgs,
}

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

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files to validate.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// The scenario library folder [default: scenarios, when there is one here].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `--max-events`, `--max-in-flight`, `--max-memory`, `--max-time`: the runtime guard of every run a
/// command makes (docs/scenario-format.md, "Bounded runs").
#[derive(Args, Debug, Clone, Copy)]
#[command(next_help_heading = "Run limits")]
pub struct LimitArgs {
    /// End a run (exit 2; in a hunt, that seed's error) that handles more events than this.
    #[arg(
        long,
        value_name = "N",
        default_value_t = splitbrain_sim::limits::DEFAULT_MAX_EVENTS,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_events: u64,
    /// End a run that holds more events and messages queued at once than this.
    #[arg(
        long,
        value_name = "N",
        default_value_t = splitbrain_sim::limits::DEFAULT_MAX_IN_FLIGHT,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_in_flight: u64,
    /// End a run while the process's resident memory is above this (e.g. 8GiB, 512MiB).
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = parse_bytes)]
    pub max_memory: u64,
    /// End a run that has taken longer than this, by the wall clock (e.g. 30m, 2h): a large
    /// cluster can make each event slow.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_wall_ms)]
    pub max_time: u64,
}

/// `--max-time`: a duration as scenarios write them (`90s`, `10m`), in whole milliseconds.
fn parse_wall_ms(text: &str) -> Result<u64, String> {
    let ns = splitbrain_sim::duration::parse_duration(text)
        .map_err(|e| format!("{e}; write a duration such as 90s, 10m or 2h"))?;
    if ns < 1_000_000 {
        return Err("write at least 1ms".to_string());
    }
    Ok(ns / 1_000_000)
}

impl LimitArgs {
    /// The limits as the engine takes them.
    pub fn limits(&self) -> splitbrain_sim::RunLimits {
        splitbrain_sim::RunLimits {
            max_events: self.max_events,
            max_in_flight: self.max_in_flight,
            max_memory_bytes: self.max_memory,
            max_wall_ms: self.max_time,
        }
    }

    /// The flags that differ from the defaults, as a replay command writes them.
    pub fn flag_words(&self) -> Vec<String> {
        let defaults = splitbrain_sim::RunLimits::default();
        let mut words = Vec::new();
        if self.max_events != defaults.max_events {
            words.extend(["--max-events".to_string(), self.max_events.to_string()]);
        }
        if self.max_in_flight != defaults.max_in_flight {
            words.extend([
                "--max-in-flight".to_string(),
                self.max_in_flight.to_string(),
            ]);
        }
        if self.max_memory != defaults.max_memory_bytes {
            words.extend(["--max-memory".to_string(), format!("{}B", self.max_memory)]);
        }
        if self.max_time != defaults.max_wall_ms {
            words.extend(["--max-time".to_string(), format!("{}ms", self.max_time)]);
        }
        words
    }
}

/// A size in bytes: a whole number with a unit `B`, `KiB`, `MiB`, `GiB`, `TiB` (or `K`, `M`,
/// `G`, `T`, `KB`, `MB`, `GB`, `TB`, all binary).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let hint = "write a whole number and a unit, e.g. 8GiB, 512MiB";
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size; {hint}"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => return Err(format!("unknown unit `{other}`; {hint}")),
    };
    let bytes = number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is more bytes than this machine counts; {hint}"))?;
    if bytes == 0 {
        return Err(format!("write at least 1B; {hint}"));
    }
    Ok(bytes)
}

/// Parses the arguments and runs the command.
pub fn main() -> ExitCode {
    main_with(|| Ok(()))
}

/// The `splitbrain` command with your own algorithms: `register` runs first (calling
/// `splitbrain_algorithms::register::<A>()` for each of yours), then the command line is read
/// as by the stock binary, so `run`, `hunt`, `compare`, `sweep`, `merge` and `list` all know
/// them. A registration that fails (a name already taken) exits 2.
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     splitbrain::cli::main_with(|| {
///         // splitbrain_algorithms::register::<my_crate::MyLease>()?;
///         Ok(())
///     })
/// }
/// ```
pub fn main_with(
    register: impl FnOnce() -> Result<(), splitbrain_algorithms::RegistryError>,
) -> ExitCode {
    if let Err(e) = register() {
        eprintln!("error: {e}");
        return exit::code(exit::BAD_INPUT);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            let code = if e.use_stderr() {
                exit::BAD_INPUT
            } else {
                exit::MATCHED
            };
            return exit::code(code);
        }
    };
    let code = match cli.command {
        Command::Run(args) => commands::run::run(&args),
        Command::Check(args) => commands::check::check(&args),
        Command::Hunt(args) => commands::hunt::run(&args),
        Command::Compare(args) => commands::compare::run(&args),
        Command::Sweep(args) => commands::sweep::run(&args),
        Command::Merge(args) => commands::merge::run(&args),
        Command::List(args) => commands::list::list(&args),
    };
    exit::code(code)
}
