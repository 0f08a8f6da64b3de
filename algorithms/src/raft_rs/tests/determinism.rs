//! Same settings and seed, same trace, byte for byte: raft-rs draws its election timeouts
//! from `thread_rng`, and the adapter must replace every one of them with a draw from the
//! node's seeded stream for this to hold.

use super::{fault, run_traced, settings, MS, SEC};
use splitbrain_sim::{FaultAction, FaultSpec, PartitionShape, SimConfig, Target, TraceHasher};

/// A 5-member run with a crash, a restart, a healed partition and writes, traced into a
/// hasher: (hash, lines).
fn trace_of(seed: u64) -> (u64, u64) {
    let mut sim = SimConfig::quiet(seed, 5, 30 * SEC);
    sim.write_every_ns = 100 * MS;
    sim.faults
        .push(fault(8 * SEC, FaultAction::Crash(Target::Leader)));
    sim.faults
        .push(fault(12 * SEC, FaultAction::Restart(Target::AllCrashed)));
    sim.faults.push(FaultSpec {
        at_ns: 15 * SEC,
        action: FaultAction::Partition(PartitionShape::Isolate(Target::Follower)),
        heal_after_ns: Some(3 * SEC),
        after: None,
    });
    let mut hasher = TraceHasher::default();
    run_traced(sim, &settings(true, true), Some(&mut hasher));
    (hasher.hash(), hasher.lines())
}

#[test]
fn the_same_seed_gives_the_same_trace_even_on_another_thread() {
    for seed in [1, 7] {
        let here = trace_of(seed);
        assert!(here.1 > 1_000, "a trace of {} lines", here.1);
        assert_eq!(trace_of(seed), here, "seed {seed}, same thread");
        // thread_rng is per thread: raft-rs' own draws differ there, the trace must not.
        let there = std::thread::spawn(move || trace_of(seed)).join().unwrap();
        assert_eq!(there, here, "seed {seed}, another thread");
    }
}

#[test]
fn different_seeds_give_different_traces() {
    let hashes: Vec<u64> = (0..4).map(|seed| trace_of(seed).0).collect();
    for (i, a) in hashes.iter().enumerate() {
        for b in &hashes[i + 1..] {
            assert_ne!(a, b, "{hashes:?}");
        }
    }
}
