//! The engine's "message storm" benchmark workload as a program:
//!
//! ```text
//! cargo run --release --example storm -- 100 10000000
//! deliveries=10000000 checksum_sum=10000000 final_time_ns=...
//! ```

use splitbrain_sim::storm::run_storm;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [n, e] => n.parse::<usize>().ok().zip(e.parse::<u64>().ok()),
        _ => None,
    };
    let Some((nodes, deliveries)) = parsed.filter(|(n, _)| *n >= 2) else {
        eprintln!("usage: storm NODES DELIVERIES   (NODES >= 2), e.g. storm 100 10000000");
        return ExitCode::from(2);
    };
    let result = run_storm(1, nodes, deliveries);
    println!(
        "deliveries={} checksum_sum={} final_time_ns={}",
        result.deliveries, result.counter_sum, result.final_time_ns
    );
    ExitCode::SUCCESS
}
