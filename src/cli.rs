//! Command-line interface: argument parsing and dispatch.

use crate::commands;
use crate::exit;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  the outcome matched the scenario's `expect`
  1  a safety outcome differed from `expect` (or --check-determinism found a difference)
  2  bad input or usage, or an output that could not be written; a run that outgrew its
     runtime guard (--max-events, --max-in-flight, --max-memory, --max-node-in-flight,
     --max-time); merge: seeds
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
    Run(commands::run::RunArgs),
    /// Validate scenario files without running them.
    #[command(after_help = "Example:\n  splitbrain check scenarios/*.ron")]
    Check(commands::check::CheckArgs),
    /// Run many seeds (each with its own nemesis schedule) on every core; shrink failures.
    #[command(
        after_help = "Examples:\n  splitbrain hunt scenarios/raft-nemesis.ron --seeds 10000\n  splitbrain hunt scenarios/raft-nemesis.ron --seed-range 1..100001 --shard $JOB_COMPLETION_INDEX/8 --jsonl shard.jsonl --quiet\n  splitbrain hunt scenarios/raft-broken-nemesis.ron --keep-going --junit hunt.xml\n  splitbrain hunt scenarios/etcd-nemesis.ron --search guided --seeds 5000"
    )]
    Hunt(commands::hunt::HuntArgs),
    /// Combine the --jsonl files of hunt shards into one summary.
    #[command(after_help = "Example:\n  splitbrain merge shard-*.jsonl --junit hunt.xml")]
    Merge(commands::merge::MergeArgs),
    /// Run the same faults (same seeds) with several algorithms; charts and a report.
    #[command(
        after_help = "Example:\n  splitbrain compare scenarios/compare-failover.ron --seeds 50 --out out/compare\n  splitbrain list    # the algorithms --algorithms takes"
    )]
    Compare(commands::compare::CompareArgs),
    /// Vary one parameter (or none) and measure a failover at each value over many trials.
    #[command(
        after_help = "Examples:\n  splitbrain sweep scenarios/sweep-election-timeout.ron --param nodes=3,5,7,9 --out out/nodes\n  splitbrain sweep scenarios/sweep-election-timeout.ron --param latency=1ms..5ms,5ms..20ms --trials 200 --out out/latency\n  splitbrain sweep scenarios/sweep-election-timeout.ron --param election_timeout=150ms..300ms,300ms..600ms --heartbeat-fraction 0.1 --out out/timeouts\n  splitbrain sweep scenarios/k8s-handover.ron --trials 1000 --out out/handover    # plain repeated trials\n  splitbrain sweep scenarios/review-controller.ron --param stall=5s,10s,15s --fencing both --trials 200 --out out/stall   # every design, every pause, with and without fencing\n  splitbrain list    # each algorithm's settings --param takes"
    )]
    Sweep(commands::sweep::SweepArgs),
    /// List the scenario library and the algorithms.
    List(commands::list::ListArgs),
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
