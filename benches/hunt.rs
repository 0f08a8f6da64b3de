//! Hunt benchmark (`cargo bench --bench hunt`): seeds per second on the standard 5-node Raft
//! scenario with a random nemesis (scenarios/raft-nemesis.ron, 60 s of simulated time per
//! seed), with one worker thread and with every core, and the process's peak memory after a
//! first and a much longer sweep (it must stay flat). See docs/performance.md.
//!
//! Environment: `HUNT_SEEDS` (default 400 per measurement).

// A benchmark measures wall time; the determinism rule against clocks is for sim/ and algorithms/.
#![allow(clippy::disallowed_types)]

use splitbrain::hunt::{hunt, seeds::SeedSpan, summary::SummaryBuilder};
use std::ops::ControlFlow;
use std::time::Instant;

/// Peak resident memory of this process so far, in KiB (Linux; 0 elsewhere).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Runs `seeds` seeds starting at `first` on `jobs` threads; returns (seconds, failing seeds).
fn sweep(
    scenario: &splitbrain::scenario::Scenario,
    first: u64,
    seeds: u64,
    jobs: usize,
) -> (f64, u64) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .expect("threads start");
    let mut summary = SummaryBuilder::new(&scenario.name);
    let start = Instant::now();
    let span = SeedSpan {
        first,
        last: first + seeds - 1,
    };
    let ended = hunt(
        scenario,
        span,
        true,
        &pool,
        &|| false,
        &|| false,
        |records| {
            records.iter().for_each(|r| summary.add(r));
            ControlFlow::<()>::Continue(())
        },
    );
    assert!(ended.is_ok(), "nothing stops the benchmark's hunt");
    (start.elapsed().as_secs_f64(), summary.finish().failed_seeds)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let seeds: u64 = if quick {
        8
    } else {
        std::env::var("HUNT_SEEDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(400)
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/raft-nemesis.ron");
    let scenario = splitbrain::scenario::load(&path).expect("the shipped scenario loads");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "hunt: {} ({} nodes, {} s simulated per seed), {seeds} seeds per measurement",
        scenario.name,
        scenario.sim.members,
        scenario.sim.duration_ns / 1_000_000_000
    );
    let (one_s, failed_one) = sweep(&scenario, 1, seeds, 1);
    let rss_first = peak_rss_kib();
    let (all_s, failed_all) = sweep(&scenario, 1, seeds, cores);
    assert_eq!(
        failed_one, failed_all,
        "the same seeds fail whatever the number of jobs"
    );
    println!(
        "  --jobs 1: {:.1} seeds/s ({one_s:.2} s)",
        seeds as f64 / one_s
    );
    println!(
        "  --jobs {cores}: {:.1} seeds/s ({all_s:.2} s), speed-up {:.2}x",
        seeds as f64 / all_s,
        one_s / all_s
    );
    let long = seeds * 5;
    let (long_s, _) = sweep(&scenario, 1_000_000, long, cores);
    let rss_after = peak_rss_kib();
    println!("  memory: peak RSS {rss_first} KiB after {seeds} seeds, {rss_after} KiB after {} more ({:.1} seeds/s)", long, long as f64 / long_s);
    println!("  failing seeds: {failed_one} of {seeds}");
}
