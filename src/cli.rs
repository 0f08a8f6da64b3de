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
  2  bad input or usage
  3  liveness failed (and safety matched `expect`)";

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
        after_help = "Examples:\n  splitbrain run scenarios/raft-leader-crash.ron\n  splitbrain run scenarios/raft-partition.ron --seed 42 --trace out/trace.jsonl\n  splitbrain run scenarios/raft-healthy.ron --json --check-determinism"
    )]
    Run(RunArgs),
    /// Validate scenario files without running them.
    #[command(after_help = "Example:\n  splitbrain check scenarios/*.ron")]
    Check(CheckArgs),
    /// List the scenario library and the algorithms.
    List(ListArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (RON).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
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
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files to validate.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// The scenario library folder.
    #[arg(long, value_name = "DIR", default_value = "scenarios")]
    pub dir: PathBuf,
}

/// Parses the arguments and runs the command.
pub fn main() -> ExitCode {
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
        Command::List(args) => commands::list::list(&args),
    };
    exit::code(code)
}
