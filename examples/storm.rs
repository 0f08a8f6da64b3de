//! The engine's "message storm" benchmark workload as a program, through the engine or (with
//! `--hand`) through the minimal hand-written loop it is measured against, so the two can be
//! timed as whole processes with the release profile users run:
//!
//! ```text
//! cargo run --release --example storm -- 100 10000000
//! cargo run --release --example storm -- --hand 100 10000000
//! deliveries=10000000 checksum_sum=10000000 final_time_ns=...
//! ```

use splitbrain_sim::storm::{hand_written_storm, run_storm};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let hand = args.first().is_some_and(|a| a == "--hand");
    if hand {
        args.remove(0);
    }
    let parsed = match args.as_slice() {
        [n, e] => n.parse::<usize>().ok().zip(e.parse::<u64>().ok()),
        _ => None,
    };
    let Some((nodes, deliveries)) = parsed.filter(|(n, _)| *n >= 2) else {
        eprintln!("usage: storm [--hand] NODES DELIVERIES   (NODES >= 2), e.g. storm 100 10000000");
        return ExitCode::from(2);
    };
    let result = if hand {
        hand_written_storm(1, nodes, deliveries)
    } else {
        run_storm(1, nodes, deliveries)
    };
    println!(
        "deliveries={} checksum_sum={} final_time_ns={}",
        result.deliveries, result.counter_sum, result.final_time_ns
    );
    ExitCode::SUCCESS
}
