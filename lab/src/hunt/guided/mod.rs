//! Guided search (`hunt --search guided`): seeds whose runs reach rare situations (the
//! coverage counters of [`Coverage`](super::record::Coverage), and the user's own
//! observations: [`super::observed`]) are kept in a corpus, and new runs are made by mutating
//! a corpus entry's materialised fault schedule: shift a fault in time, change its target,
//! lengthen it, or add a fault drawn as the nemesis draws one.
//!
//! Runs go in batches of [`BATCH_SEEDS`]: fresh seeds first, in seed order, then mutants
//! (once the corpus holds anything). The corpus changes only between batches, in run order,
//! and every mutant's randomness comes from its index and its parent's seed, so the runs,
//! their records and the verdict are the same whatever the number of jobs.
//!
//! A mutant runs with its root seed (the fresh seed its lineage started from): the network,
//! the nodes and the clocks draw exactly what that seed drew; only the fault schedule differs.
//! Its failure is shrunk and written out like a seed's, as an explicit-fault scenario.

mod corpus;
mod mutate;
mod summary;
#[cfg(test)]
mod tests;

pub use corpus::{Corpus, Kept, CORPUS_MAX, OBSERVED_FEATURES_MAX};
pub use summary::{
    GuidedSummary, GuidedSummaryBuilder, MutantFailures, ObservationReached, OBSERVATIONS_LISTED,
};

use super::observed::ObservedFeature;
use super::record::SeedRecord;
use super::seeds::SeedSpan;
use super::{judged_observing, Ended, BATCH_SEEDS};
use crate::panics;
use mutate::Mutator;
use rayon::prelude::*;
use serde::Serialize;
use splitbrain_scenario::Scenario;
use splitbrain_sim::nemesis::{self, NemesisConfig};
use splitbrain_sim::FaultSpec;
use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

/// Mutants per batch of [`BATCH_SEEDS`] runs unless asked otherwise: half of each batch
/// (docs/hunting.md, "Guided search", measures 16, 32 and 48).
pub const DEFAULT_MUTANTS_PER_BATCH: u64 = 32;

/// The stream id (under the parent's seed) of mutant `index`'s mutation draws.
const MUTATE_STREAM_BASE: u64 = 1 << 45;

/// The stream id (under the mutant's index) of the draw of its parent.
const PICK_STREAM: u64 = 1 << 44;

/// A mutant's id: its index in the hunt (from 0) and its root seed, printed `m<index>:<seed>`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct MutantId {
    /// Its place among the hunt's mutants, from 0.
    pub index: u64,
    /// The fresh seed its lineage started from: the seed it runs with.
    pub seed: u64,
}

impl fmt::Display for MutantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}:{}", self.index, self.seed)
    }
}

/// What one run of a guided hunt was: a fresh seed or a mutant.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum RunId {
    /// A fresh seed of the range, run as an ordinary hunt runs it.
    Seed(u64),
    /// A mutated schedule.
    Mutant(MutantId),
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunId::Seed(seed) => write!(f, "seed {seed}"),
            RunId::Mutant(id) => write!(f, "mutant {id}"),
        }
    }
}

/// One run of a guided hunt: which, its record, the nemesis faults it ran, what its user
/// observations reached, and whether the corpus kept it.
#[derive(Clone, Debug, PartialEq)]
pub struct GuidedRun {
    /// Which run.
    pub id: RunId,
    /// Its judged record (`seed` is the seed it ran with: for a mutant, its root seed).
    pub record: SeedRecord,
    /// The nemesis part of its schedule (the scenario's explicit faults come on top).
    pub faults: Vec<FaultSpec>,
    /// The features its processes' own observations reached ([`super::observed`]).
    pub observed: Vec<ObservedFeature>,
    /// Why the corpus kept it, if it did (it reached a feature first and did not fail).
    pub kept: Option<Kept>,
}

/// The scenario one run of a guided hunt runs: `seed`'s explicit faults (their ranges drawn
/// as for that seed) with `nemesis_faults` in place of what the nemesis would draw. With
/// the seed's own draw, this is exactly [`Scenario::materialize`].
pub fn scenario_of(scenario: &Scenario, seed: u64, nemesis_faults: &[FaultSpec]) -> Scenario {
    scenario.materialize_with(seed, Some(nemesis_faults))
}

/// The nemesis of `scenario` as its runs draw it (the service struck if it has one).
fn nemesis_of(scenario: &Scenario) -> Option<NemesisConfig> {
    let mut config = scenario.nemesis.clone()?;
    config.strike_service = scenario.algorithm.has_service();
    config.clustered_service = scenario.algorithm.service_processes() > 1;
    Some(config)
}

/// One run to make: a fresh seed, or a mutant with its schedule.
struct Job {
    id: RunId,
    seed: u64,
    faults: Option<Vec<FaultSpec>>,
}

/// Why a guided hunt cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GuidedError {
    /// The scenario draws no faults: there is no schedule to mutate.
    #[error("guided search mutates the nemesis's fault schedules, and the scenario has no `nemesis`\n  hint: add a `nemesis: (...)` to the scenario, or hunt without --search guided")]
    NoNemesis,
    /// As many mutants as runs in a batch: no fresh seed would ever run.
    #[error("--mutants-per-batch {0}: must be 0 to {max}\n  hint: a batch is {BATCH_SEEDS} runs, and at least one of them is a fresh seed", max = BATCH_SEEDS - 1)]
    TooManyMutants(u64),
}

/// How a guided hunt runs: the scenario, its nemesis, and the mutants per batch.
pub struct Guided<'a> {
    scenario: &'a Scenario,
    config: NemesisConfig,
    mutants_per_batch: u64,
}

impl<'a> Guided<'a> {
    /// A guided hunt of `scenario` (which must have a nemesis) with `mutants_per_batch` of
    /// each batch's [`BATCH_SEEDS`] runs mutants (once the corpus holds a schedule).
    pub fn new(scenario: &'a Scenario, mutants_per_batch: u64) -> Result<Self, GuidedError> {
        let config = nemesis_of(scenario).ok_or(GuidedError::NoNemesis)?;
        if mutants_per_batch >= BATCH_SEEDS {
            return Err(GuidedError::TooManyMutants(mutants_per_batch));
        }
        Ok(Self {
            scenario,
            config,
            mutants_per_batch,
        })
    }

    /// Mutants per batch of [`BATCH_SEEDS`] runs.
    pub fn mutants_per_batch(&self) -> u64 {
        self.mutants_per_batch
    }

    /// The scenario mutant `id` ran, given the nemesis faults of its [`GuidedRun`].
    pub fn scenario_of(&self, run: &GuidedRun) -> Scenario {
        scenario_of(self.scenario, run.record.seed, &run.faults)
    }

    /// Runs every seed of `seeds`, with mutants between them, in batches on `pool`,
    /// handing each batch's runs (fresh seeds in seed order, then mutants by index) to
    /// `on_batch`. Ends as [`super::hunt`] does: every fresh seed ran, or the batch holding
    /// the first failure (fresh or mutant) unless `keep_going`; `stopping` and `aborting` as
    /// there.
    pub fn hunt<B>(
        &self,
        seeds: SeedSpan,
        keep_going: bool,
        pool: &rayon::ThreadPool,
        stopping: &(dyn Fn() -> bool + Sync),
        aborting: &(dyn Fn() -> bool + Sync),
        mut on_batch: impl FnMut(&[GuidedRun]) -> ControlFlow<B>,
    ) -> Result<Ended, B> {
        let mut corpus = Corpus::default();
        let mut next_seed = Some(seeds.first);
        let mut next_mutant = 0;
        let finished = AtomicU64::new(0);
        while let Some(first) = next_seed {
            let jobs = self.batch(&corpus, first, seeds.last, &mut next_mutant);
            let fresh = jobs
                .iter()
                .filter(|j| matches!(j.id, RunId::Seed(_)))
                .count();
            let last_fresh = first + fresh as u64 - 1;
            next_seed = last_fresh
                .checked_add(1)
                .filter(|_| last_fresh < seeds.last);
            let mut runs = self.run_jobs(jobs, pool, &finished, stopping, aborting);
            // In run order, between batches: a failing run is never kept, so a hunt that
            // stops at its first failure kept exactly what it would have kept going on.
            runs.iter_mut()
                .for_each(|run| run.kept = corpus.observe(run));
            if let ControlFlow::Break(why) = on_batch(&runs) {
                return Err(why);
            }
            if !keep_going && runs.iter().any(|r| r.record.failed()) {
                return Ok(Ended::FirstFailure);
            }
        }
        Ok(Ended::Complete)
    }

    /// The next batch: fresh seeds from `first` (at most to `last`), then mutants.
    fn batch(&self, corpus: &Corpus, first: u64, last: u64, next_mutant: &mut u64) -> Vec<Job> {
        let mutants = if corpus.is_empty() {
            0
        } else {
            self.mutants_per_batch
        };
        let fresh_last = first.saturating_add(BATCH_SEEDS - mutants - 1).min(last);
        let mut jobs: Vec<Job> = (first..=fresh_last)
            .map(|seed| Job {
                id: RunId::Seed(seed),
                seed,
                faults: None,
            })
            .collect();
        let mutator = Mutator {
            config: &self.config,
            members: self.scenario.sim.members,
            duration_ns: self.scenario.sim.duration_ns,
        };
        for _ in 0..mutants {
            let index = *next_mutant;
            *next_mutant += 1;
            let parent = corpus.pick(index);
            jobs.push(Job {
                id: RunId::Mutant(MutantId {
                    index,
                    seed: parent.seed,
                }),
                seed: parent.seed,
                faults: Some(mutator.mutate(parent, index)),
            });
        }
        jobs
    }

    /// Runs a batch's jobs in parallel; results in job order, those not started left out.
    fn run_jobs(
        &self,
        jobs: Vec<Job>,
        pool: &rayon::ThreadPool,
        finished: &AtomicU64,
        stopping: &(dyn Fn() -> bool + Sync),
        aborting: &(dyn Fn() -> bool + Sync),
    ) -> Vec<GuidedRun> {
        let run = |job: Job| -> Option<GuidedRun> {
            if finished.load(Ordering::SeqCst) > 0 && stopping() {
                return None;
            }
            let faults = match job.faults {
                Some(faults) => faults,
                None => self.drawn(job.seed),
            };
            let scenario = scenario_of(self.scenario, job.seed, &faults);
            let (record, observed) = panics::catch(|| judged_observing(&scenario, aborting))
                .unwrap_or_else(|panic| {
                    Some((SeedRecord::panicked(job.seed, panic.message), Vec::new()))
                })?;
            finished.fetch_add(1, Ordering::SeqCst);
            Some(GuidedRun {
                id: job.id,
                record,
                faults,
                observed,
                kept: None,
            })
        };
        pool.install(|| jobs.into_par_iter().filter_map(run).collect())
    }

    /// The nemesis faults seed `seed` draws.
    fn drawn(&self, seed: u64) -> Vec<FaultSpec> {
        let sim = &self.scenario.sim;
        nemesis::generate(&self.config, seed, sim.members, sim.duration_ns).faults
    }
}
