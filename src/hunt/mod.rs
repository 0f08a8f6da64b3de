//! Bug hunting: run a scenario over many seeds (its nemesis drawing a new fault schedule for
//! each), on every core, deterministically; summarise, and shrink what fails.
//!
//! Seeds run in fixed batches of [`BATCH_SEEDS`], each batch in parallel, results taken in
//! seed order: the records, the summary and where a hunt stops at its first failure are the
//! same whatever the number of jobs.

pub mod junit;
pub mod record;
pub mod shrink;
pub mod summary;

use crate::scenario::Scenario;
use crate::verdict::judge;
use rayon::prelude::*;
use record::SeedRecord;
use splitbrain_sim::nemesis;
use std::ops::{ControlFlow, Range};

/// Seeds per batch. Fixed (not derived from the number of jobs) so that where a hunt stops
/// does not depend on the machine.
pub const BATCH_SEEDS: u64 = 64;

/// The scenario as one seed runs it: that seed, its nemesis drawn into explicit faults.
pub fn materialize(scenario: &Scenario, seed: u64) -> Scenario {
    let mut s = scenario.clone();
    s.sim.seed = seed;
    if let Some(mut config) = s.nemesis.take() {
        // Derived here, the one place every run's schedule is drawn: whatever algorithm the
        // scenario runs now (compare swaps it), a service is struck only if it has one.
        config.strike_service = s.algorithm.has_service();
        let schedule = nemesis::generate(&config, seed, s.sim.members, s.sim.duration_ns);
        s.sim.faults.extend(schedule.faults);
        // Stable: faults at the same time keep their order, so the run is unchanged.
        s.sim.faults.sort_by_key(|f| f.at_ns);
    }
    s
}

/// Runs one seed and judges it.
pub fn run_seed(scenario: &Scenario, seed: u64) -> SeedRecord {
    let s = materialize(scenario, seed);
    let report = splitbrain_algorithms::run(&s.algorithm, s.sim.clone(), None);
    SeedRecord::new(seed, &report, &judge(&s.expect, &report))
}

/// Why a hunt ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every seed in the range ran.
    Complete,
    /// A seed failed and the hunt was not asked to keep going.
    FirstFailure,
    /// The caller stopped it (interrupt, time budget).
    Stopped,
}

/// Runs `seeds` in batches on `pool`, handing each batch's records (in seed order) to
/// `on_batch`, which may stop the hunt.
pub fn hunt(
    scenario: &Scenario,
    seeds: Range<u64>,
    keep_going: bool,
    pool: &rayon::ThreadPool,
    mut on_batch: impl FnMut(&[SeedRecord]) -> ControlFlow<()>,
) -> Ended {
    let mut start = seeds.start;
    while start < seeds.end {
        let end = start.saturating_add(BATCH_SEEDS).min(seeds.end);
        let batch: Vec<u64> = (start..end).collect();
        let records: Vec<SeedRecord> = pool.install(|| {
            batch
                .par_iter()
                .map(|seed| run_seed(scenario, *seed))
                .collect()
        });
        if on_batch(&records).is_break() {
            return Ended::Stopped;
        }
        if !keep_going && records.iter().any(SeedRecord::failed) {
            return Ended::FirstFailure;
        }
        start = end;
    }
    Ended::Complete
}

#[cfg(test)]
mod tests {
    use crate::commands::hunt::{parse_seed_range, shard_range};

    #[test]
    fn seed_ranges_read_exclusive_and_inclusive_ends() {
        assert_eq!(parse_seed_range("1..1001").unwrap(), 1..1001);
        assert_eq!(parse_seed_range("5..=7").unwrap(), 5..8);
        assert!(parse_seed_range("7..7").is_err());
        assert!(parse_seed_range("a..b").is_err());
    }

    #[test]
    fn shards_cover_the_range_exactly_once_in_order() {
        let seeds = 1..1001;
        let mut next = seeds.start;
        for i in 0..7 {
            let shard = shard_range(&seeds, &format!("{i}/7")).unwrap();
            assert_eq!(shard.start, next);
            next = shard.end;
        }
        assert_eq!(next, seeds.end);
        assert!(shard_range(&seeds, "7/7").is_err());
        assert!(shard_range(&seeds, "0/0").is_err());
    }
}
