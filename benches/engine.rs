//! Engine benchmarks (`cargo bench --bench engine`). Prints, for the message storm at 5 and
//! 100 nodes, the engine's events per second through the real `Process` API next to a minimal
//! hand-written loop (std `BinaryHeap` of `(time, seq)` + ChaCha8) measured in the same run,
//! and their ratio. Timing is wall-clock and the machine is shared: compare the ratio, not
//! the absolute figures, and see docs/performance.md.
//!
//! Then a 5-node Raft scenario (scenarios/raft-leader-crash.ron stretched to 60 s of simulated
//! time, seeds 1..=RAFT_RUNS): events per second and runs per second, one core.
//!
//! Environment: `STORM_DELIVERIES` (default 10,000,000), `BENCH_REPS` (default 3, best kept),
//! `RAFT_RUNS` (default 50).

// A benchmark measures wall time; the determinism rule against clocks is for sim/ and algorithms/.
#![allow(clippy::disallowed_types)]

use splitbrain_sim::storm::{hand_written_storm, run_storm, StormResult};
use std::hint::black_box;
use std::time::Instant;

fn best_seconds(reps: usize, mut f: impl FnMut() -> StormResult) -> (f64, StormResult) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..reps {
        let start = Instant::now();
        let result = black_box(f());
        best = best.min(start.elapsed().as_secs_f64());
        last = Some(result);
    }
    (best, last.expect("at least one repetition"))
}

/// Runs the 5-node Raft scenario for `runs` seeds; returns (seconds, events).
fn raft_runs(runs: u64) -> (f64, u64) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/raft-leader-crash.ron");
    let scenario = splitbrain::scenario::load(&path).expect("the shipped scenario loads");
    let start = Instant::now();
    let mut events = 0;
    for seed in 1..=runs {
        let mut sim = scenario.sim.clone();
        sim.seed = seed;
        sim.duration_ns = 60 * 1_000_000_000;
        events += black_box(
            splitbrain_algorithms::run(&scenario.algorithm, sim, None)
                .expect("within the default limits"),
        )
        .events;
    }
    (start.elapsed().as_secs_f64(), events)
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs this with `--bench`-less args; keep that quick.
    let quick = std::env::args().any(|a| a == "--test");
    let deliveries = if quick {
        10_000
    } else {
        env_or("STORM_DELIVERIES", 10_000_000)
    };
    let reps = if quick {
        1
    } else {
        env_or("BENCH_REPS", 3) as usize
    };
    println!("message storm: {deliveries} deliveries, best of {reps}");
    for nodes in [5usize, 100] {
        let (engine_s, engine) = best_seconds(reps, || run_storm(1, nodes, deliveries));
        let (hand_s, hand) = best_seconds(reps, || hand_written_storm(1, nodes, deliveries));
        assert_eq!(engine.counter_sum, deliveries);
        assert_eq!(hand.counter_sum, deliveries);
        let engine_rate = deliveries as f64 / engine_s;
        let hand_rate = deliveries as f64 / hand_s;
        println!(
            "storm n={nodes:>3}: engine {:>6.2} M events/s ({engine_s:.3} s), hand-written {:>6.2} M events/s ({hand_s:.3} s), engine/hand = {:.2} (target >= 0.33)",
            engine_rate / 1e6,
            hand_rate / 1e6,
            engine_rate / hand_rate
        );
    }
    let runs = if quick { 2 } else { env_or("RAFT_RUNS", 50) };
    let (seconds, events) = raft_runs(runs);
    println!(
        "raft 5 nodes, 60 s simulated, {runs} seeds: {:.2} M events/s, {:.1} runs/s ({events} events in {seconds:.3} s)",
        events as f64 / seconds / 1e6,
        runs as f64 / seconds
    );
}
