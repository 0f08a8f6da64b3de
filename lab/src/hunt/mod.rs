//! Bug hunting: run a scenario over many seeds (its nemesis drawing a new fault schedule for
//! each), on every core, deterministically; summarise, and shrink what fails.
//!
//! Seeds run in fixed batches of [`BATCH_SEEDS`], each batch in parallel, results taken in
//! seed order: the records, the summary and where a hunt stops at its first failure are the
//! same whatever the number of jobs.

pub mod collect;
pub mod guided;
pub mod jsonl;
pub mod junit;
pub mod merge;
pub mod observed;
pub mod record;
pub mod reproducer;
pub mod search;
pub mod seeds;
pub mod shrink;
pub mod summary;
pub mod systematic;

use crate::panics;
use crate::runner::{run_seed as run_one, run_seed_checkpointed, RunFailure};
use rayon::prelude::*;
use record::SeedRecord;
use seeds::SeedSpan;
use serde::{Deserialize, Serialize};
use splitbrain_algorithms::Checkpoints;
use splitbrain_scenario::verdict::judge_run;
use splitbrain_scenario::Scenario;
use splitbrain_sim::{Chooser, RunReport};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

/// Seeds per batch. Fixed (not derived from the number of jobs) so that where a hunt stops
/// does not depend on the machine. It is also the most worker threads a hunt can use.
pub const BATCH_SEEDS: u64 = 64;

/// Runs one seed and judges it.
pub fn run_seed(scenario: &Scenario, seed: u64) -> SeedRecord {
    run_judged(&scenario.materialize(seed))
}

/// [`run_seed`], ended early (`None`) once `abort` says so: a hunt stopped by a signal does
/// not wait for a seed that may take minutes.
pub fn run_seed_unless(
    scenario: &Scenario,
    seed: u64,
    abort: &(dyn Fn() -> bool + Sync),
) -> Option<SeedRecord> {
    judged_unless(&scenario.materialize(seed), abort)
}

/// Runs an explicit scenario (no nemesis left to draw) and judges it. A panic in the run (a
/// bug in splitbrain) is that run's failure, under the key `panic`, not the end of the hunt;
/// the shrinker then shrinks it like any other failure. A run that outgrows its limits is
/// that run's failure under the key `limit` (see [`record::LIMIT_KEY`]).
pub fn run_judged(s: &Scenario) -> SeedRecord {
    judged_unless(s, &|| false).expect("a run nothing aborts ends with a record")
}

/// [`run_judged`], or `None` once `abort` ends the run. A failure of a scenario whose
/// algorithm names a reference (the version known to be right) counts only if the
/// reference, run on the same schedule, does not fail the same way
/// ([`SeedRecord::excused_by`]).
pub(crate) fn judged_unless(s: &Scenario, abort: &(dyn Fn() -> bool + Sync)) -> Option<SeedRecord> {
    judged_with(s, abort, &mut plain_run)
}

/// One run of `s`, as a hunt makes it.
fn plain_run(s: &Scenario, abort: &(dyn Fn() -> bool + Sync)) -> Result<RunReport, RunFailure> {
    run_one(s, None, abort)
}

/// [`judged_unless`], the run watched for what its user observations reached (guided
/// search's features: [`observed`]); the reference's run is not watched.
pub(crate) fn judged_observing(
    s: &Scenario,
    abort: &(dyn Fn() -> bool + Sync),
) -> Option<(SeedRecord, Vec<observed::ObservedFeature>)> {
    let watch = observed::Watch::default();
    let record = judged_alone(&watch.watching(s.clone()), abort, &mut plain_run)?;
    Some((
        excused_unless(s, record, abort, &mut plain_run)?,
        watch.features(),
    ))
}

/// [`run_judged`], with the run's state digests taken at `checkpoints` and its choice
/// points decided by `chooser` (the reference, if it runs, takes none of either): a
/// systematic search's run.
pub fn run_judged_checkpointed(
    s: &Scenario,
    checkpoints: Checkpoints<'_>,
    chooser: &mut dyn Chooser,
    abort: &(dyn Fn() -> bool + Sync),
) -> Option<SeedRecord> {
    let mut first = Some((checkpoints, chooser));
    judged_with(s, abort, &mut |s, abort| match first.take() {
        Some((checkpoints, chooser)) => run_seed_checkpointed(s, checkpoints, chooser, abort),
        None => run_one(s, None, abort),
    })
}

/// How [`judged_with`] runs a scenario: the run, then the reference's.
type RunOne<'a> =
    dyn FnMut(&Scenario, &(dyn Fn() -> bool + Sync)) -> Result<RunReport, RunFailure> + 'a;

/// Judges `s` run by `run`, its failures excused as [`excused_unless`] says.
fn judged_with(
    s: &Scenario,
    abort: &(dyn Fn() -> bool + Sync),
    run: &mut RunOne<'_>,
) -> Option<SeedRecord> {
    let record = judged_alone(s, abort, run)?;
    excused_unless(s, record, abort, run)
}

/// `record` of a run of `s`, its failures that the scenario's reference has too on the same
/// schedule (run by `run`) excused ([`SeedRecord::excused_by`]); `None` once `abort` ends the
/// reference's run.
fn excused_unless(
    s: &Scenario,
    record: SeedRecord,
    abort: &(dyn Fn() -> bool + Sync),
    run: &mut RunOne<'_>,
) -> Option<SeedRecord> {
    let reference = s
        .algorithm
        .reference()
        .filter(|_| record.failed() && record.judged());
    let Some(reference) = reference else {
        return Some(record);
    };
    let mut on_reference = s.clone();
    on_reference.algorithm = reference;
    Some(record.excused_by(&judged_alone(&on_reference, abort, run)?))
}

/// One run of `s` by `run`, judged, with no reference.
fn judged_alone(
    s: &Scenario,
    abort: &(dyn Fn() -> bool + Sync),
    run: &mut RunOne<'_>,
) -> Option<SeedRecord> {
    let seed = s.sim.seed;
    let record = match run(s, abort) {
        Ok(report) => SeedRecord::new(seed, &report, &judge_run(s, &report))
            .with_unobserved(&s.algorithm.unobserved(&report)),
        Err(RunFailure::Aborted) => return None,
        Err(RunFailure::Outgrown(outgrown)) => SeedRecord::outgrown(seed, &outgrown),
        Err(RunFailure::Panicked(message)) => SeedRecord::panicked(seed, message),
        Err(RunFailure::Refused(refused)) => SeedRecord::refused(seed, &refused),
    };
    Some(record.with_nemesis(s.nemesis_drew.clone()))
}

/// How a hunt ended; written in its JSON Lines trailer, so `merge` can tell a finished
/// shard from a cut one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Every seed in the range ran.
    Complete,
    /// A seed failed and the hunt was not asked to keep going.
    FirstFailure,
    /// Its own `--time-budget` ran out: a deliberate, partial outcome.
    TimeBudget,
    /// A signal (SIGINT, SIGTERM, SIGHUP) stopped it.
    Interrupted,
}

impl Ended {
    /// The name written in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Ended::Complete => "complete",
            Ended::FirstFailure => "first_failure",
            Ended::TimeBudget => "time_budget",
            Ended::Interrupted => "interrupted",
        }
    }
}

/// Runs `seeds` of `scenario` in batches on `pool`, handing each batch's records (in seed
/// order) to `on_batch`. Ends `Ok` when the hunt reached its own end (every seed ran, or the
/// first failure when not keeping going), or `Err` with what `on_batch` stopped it for.
/// `stopping` is asked before each seed starts: once it says yes (a signal, a spent time
/// budget) and some seed has finished, no further seed starts, and `on_batch` must then stop
/// the hunt. (At least one seed always finishes: a hunt never gives a verdict on nothing.)
/// `aborting` (a signal) also ends the seeds under way: they count as not started. (A
/// signal is the one way a hunt ends with no seed run: it says it was interrupted, never
/// gives a verdict.)
pub fn hunt<B>(
    scenario: &Scenario,
    seeds: SeedSpan,
    keep_going: bool,
    pool: &rayon::ThreadPool,
    stopping: &(dyn Fn() -> bool + Sync),
    aborting: &(dyn Fn() -> bool + Sync),
    on_batch: impl FnMut(&[SeedRecord]) -> ControlFlow<B>,
) -> Result<Ended, B> {
    let finished = AtomicU64::new(0);
    let abort = || aborting();
    let run = |seed| {
        if finished.load(Ordering::SeqCst) > 0 && stopping() {
            return None;
        }
        let record = run_seed_unless(scenario, seed, &abort)?;
        finished.fetch_add(1, Ordering::SeqCst);
        Some(record)
    };
    run_batches(seeds, keep_going, pool, run, on_batch)
}

/// [`hunt`] with any per-seed run (`None`: the seed was not started). A seed whose run
/// panics is recorded as that seed's failure (key `panic`) and the hunt goes on.
pub fn run_batches<B>(
    seeds: SeedSpan,
    keep_going: bool,
    pool: &rayon::ThreadPool,
    run: impl Fn(u64) -> Option<SeedRecord> + Sync,
    mut on_batch: impl FnMut(&[SeedRecord]) -> ControlFlow<B>,
) -> Result<Ended, B> {
    let mut start = seeds.first;
    loop {
        let end = start.saturating_add(BATCH_SEEDS - 1).min(seeds.last);
        let batch: Vec<u64> = (start..=end).collect();
        let records: Vec<SeedRecord> = pool.install(|| {
            batch
                .par_iter()
                .filter_map(|&seed| {
                    panics::catch(|| run(seed))
                        .unwrap_or_else(|panic| Some(SeedRecord::panicked(seed, panic.message)))
                })
                .collect()
        });
        if let ControlFlow::Break(why) = on_batch(&records) {
            return Err(why);
        }
        if end == seeds.last {
            return Ok(Ended::Complete);
        }
        if !keep_going && records.iter().any(SeedRecord::failed) {
            return Ok(Ended::FirstFailure);
        }
        start = end + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn once_stopping_no_further_seed_starts() {
        let stop = AtomicBool::new(false);
        let mut seen = 0;
        let ended = run_batches(
            SeedSpan {
                first: 1,
                last: 640,
            },
            true,
            &pool(),
            |seed| {
                if seed == 100 {
                    stop.store(true, Ordering::SeqCst);
                }
                (!stop.load(Ordering::SeqCst) || seed == 100).then(|| matched(seed))
            },
            |records| {
                seen += records.len();
                if stop.load(Ordering::SeqCst) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(ended, Err(()));
        assert!(
            seen < 128,
            "the batch holding seed 100 ran only what had started: {seen}"
        );
    }

    fn matched(seed: u64) -> SeedRecord {
        SeedRecord {
            seed,
            outcome: "matched".to_string(),
            failures: Vec::new(),
            events: 1,
            coverage: record::Coverage::default(),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: Default::default(),
        }
    }

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("threads start")
    }

    #[test]
    fn a_seed_that_panics_is_that_seeds_failure_and_the_hunt_goes_on() {
        let mut seen = Vec::new();
        let ended = run_batches(
            SeedSpan {
                first: 1,
                last: 200,
            },
            true,
            &pool(),
            |seed| {
                assert_ne!(seed, 70, "seed seventy breaks");
                Some(matched(seed))
            },
            |records| {
                seen.extend_from_slice(records);
                ControlFlow::<()>::Continue(())
            },
        );
        assert_eq!(ended, Ok(Ended::Complete));
        assert_eq!(seen.len(), 200);
        let failed: Vec<&SeedRecord> = seen.iter().filter(|r| r.failed()).collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].seed, 70);
        assert_eq!(failed[0].failures[0].key, record::PANIC_KEY);
        assert!(
            failed[0].failures[0].detail.contains("seed seventy breaks"),
            "{:?}",
            failed[0].failures
        );
    }

    #[test]
    fn without_keep_going_a_panic_stops_the_hunt_after_its_batch() {
        let ended = run_batches(
            SeedSpan {
                first: 1,
                last: 1000,
            },
            false,
            &pool(),
            |seed| {
                assert_ne!(seed, 3);
                Some(matched(seed))
            },
            |_| ControlFlow::<()>::Continue(()),
        );
        assert_eq!(ended, Ok(Ended::FirstFailure));
    }

    #[test]
    fn a_hunt_ends_complete_at_the_largest_seed() {
        let mut last = 0;
        let ended = run_batches(
            SeedSpan {
                first: u64::MAX - 99,
                last: u64::MAX,
            },
            true,
            &pool(),
            |seed| Some(matched(seed)),
            |records| {
                last = records.last().map_or(last, |r| r.seed);
                ControlFlow::<()>::Continue(())
            },
        );
        assert_eq!((ended, last), (Ok(Ended::Complete), u64::MAX));
    }
}

#[cfg(test)]
mod abort_tests {
    use super::*;

    /// A run of five Raft nodes for a thousand hours: hundreds of millions of events, minutes
    /// of work, unless it is stopped.
    fn long_scenario() -> Scenario {
        let text = r#"Scenario(duration: "1000h", nodes: 5, algorithm: Raft())"#;
        splitbrain_scenario::parse(text, "long.ron").expect("a valid scenario")
    }

    #[test]
    fn a_seed_under_way_ends_as_not_started_once_the_hunt_aborts() {
        let asked = AtomicU64::new(0);
        let abort = || asked.fetch_add(1, Ordering::SeqCst) >= 3;
        assert_eq!(run_seed_unless(&long_scenario(), 1, &abort), None);
        assert_eq!(asked.load(Ordering::SeqCst), 4, "asked every 4,096 events");
    }

    #[test]
    fn a_seed_that_is_not_aborted_runs_to_its_verdict() {
        let text = r#"Scenario(duration: "2s", nodes: 3, algorithm: Raft())"#;
        let scenario = splitbrain_scenario::parse(text, "short.ron").expect("a valid scenario");
        let record = run_seed_unless(&scenario, 1, &|| false).expect("not aborted");
        assert_eq!(record, run_seed(&scenario, 1));
    }
}
