//! Guided search (`hunt --search guided`): seeds whose runs reach rare situations (the
//! coverage counters of [`Coverage`]) are kept in a corpus, and new runs are made by mutating
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

use super::record::{Coverage, Failure, SeedRecord};
use super::seeds::SeedSpan;
use super::summary::HuntVerdict;
use super::{judged_unless, Ended, BATCH_SEEDS};
use crate::panics;
use rayon::prelude::*;
use serde::Serialize;
use splitbrain_scenario::Scenario;
use splitbrain_sim::nemesis::{self, NemesisConfig};
use splitbrain_sim::{FaultAction, FaultSpec, PartitionShape, SimRng, Target};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

/// Mutants per batch of [`BATCH_SEEDS`] runs unless asked otherwise: half of each batch
/// (docs/hunting.md, "Guided search", measures 16, 32 and 48).
pub const DEFAULT_MUTANTS_PER_BATCH: u64 = 32;

/// The most entries the corpus keeps; past it the entry of least weight goes.
pub const CORPUS_MAX: usize = 256;

/// The rare situations that guide the search: the coverage counters that are neither
/// routine (leader changes, failovers, faults) nor failures. Newer leaders locked out is
/// not one: each lock-out breaks `fencing_safety`, so a run that reaches it fails and is never
/// kept (unless the scenario expects `Violates([fencing_safety])`, which no nemesis scenario
/// does; such a hunt does not breed from lock-outs).
const RARE_KINDS: usize = 5;

/// Log-2 buckets of one counter's value (1, 2-3, 4-7, ...), the last one open.
const BUCKETS: u32 = 16;

/// Feature ids: one per (rare counter, bucket), then one per pair of rare counters reached
/// together in one run.
const PAIR_BASE: u32 = RARE_KINDS as u32 * BUCKETS;

/// How many feature ids there are.
const FEATURES: usize = PAIR_BASE as usize + RARE_KINDS * (RARE_KINDS - 1) / 2;

// Every feature is one bit of a `u128`.
const _: () = assert!(FEATURES <= 128);

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

/// One run of a guided hunt: which, its record, and the nemesis faults it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct GuidedRun {
    /// Which run.
    pub id: RunId,
    /// Its judged record (`seed` is the seed it ran with: for a mutant, its root seed).
    pub record: SeedRecord,
    /// The nemesis part of its schedule (the scenario's explicit faults come on top).
    pub faults: Vec<FaultSpec>,
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

/// A run's features: bit `f` set when it reached feature `f` (see [`FEATURES`]).
type Features = u128;

fn rare_counters(c: &Coverage) -> [u64; RARE_KINDS] {
    [
        c.split_votes,
        c.dueling_candidates,
        c.stale_leader_writes,
        c.minority_elections,
        c.leases_expired_while_leading,
    ]
}

fn features_of(c: &Coverage) -> Features {
    let counters = rare_counters(c);
    let mut features: Features = 0;
    let mut pair = PAIR_BASE;
    for (k, value) in counters.iter().enumerate() {
        if *value > 0 {
            let bucket = (u64::BITS - value.leading_zeros() - 1).min(BUCKETS - 1);
            features |= 1 << (k as u32 * BUCKETS + bucket);
        }
        for other in &counters[k + 1..] {
            if *value > 0 && *other > 0 {
                features |= 1 << pair;
            }
            pair += 1;
        }
    }
    features
}

/// A schedule kept for reaching something rare.
#[derive(Clone, Debug)]
struct Entry {
    seed: u64,
    faults: Vec<FaultSpec>,
    features: Features,
}

/// The corpus: kept schedules, and how often every feature was reached over all runs.
#[derive(Clone, Debug)]
pub struct Corpus {
    entries: Vec<Entry>,
    seen: Features,
    hits: Vec<u64>,
}

impl Default for Corpus {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            seen: 0,
            hits: vec![0; FEATURES],
        }
    }
}

impl Corpus {
    /// How many schedules it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Counts a run's features; keeps its schedule if it reached a feature no run had
    /// reached before and did not fail (a failure is reported, not bred from).
    fn observe(&mut self, run: &GuidedRun) {
        let features = features_of(&run.record.coverage);
        for (f, hits) in self.hits.iter_mut().enumerate() {
            *hits += u64::from(features >> f & 1 == 1);
        }
        let new = features & !self.seen;
        self.seen |= features;
        if new == 0 || run.record.failed() {
            return;
        }
        if self.entries.len() >= CORPUS_MAX {
            let weakest = (0..self.entries.len())
                .min_by_key(|&i| self.weight(&self.entries[i]))
                .expect("a full corpus has entries");
            self.entries.remove(weakest);
        }
        self.entries.push(Entry {
            seed: run.record.seed,
            faults: run.faults.clone(),
            features,
        });
    }

    /// An entry's weight: the rarer its features (over every run so far), the heavier.
    fn weight(&self, entry: &Entry) -> u64 {
        let mut weight = 1;
        for (f, hits) in self.hits.iter().enumerate() {
            if entry.features >> f & 1 == 1 {
                weight += (1 << 20) / hits.max(&1);
            }
        }
        weight
    }

    /// The entry mutant `index` mutates, drawn by weight from the mutant's own stream.
    fn pick(&self, index: u64) -> &Entry {
        let weights: Vec<u64> = self.entries.iter().map(|e| self.weight(e)).collect();
        let mut ticket = SimRng::stream(index, PICK_STREAM).below(weights.iter().sum());
        for (entry, weight) in self.entries.iter().zip(&weights) {
            if ticket < *weight {
                return entry;
            }
            ticket -= weight;
        }
        unreachable!("the tickets add up to the total weight")
    }
}

/// What mutating may do: the nemesis's settings and the run's shape.
struct Mutator<'a> {
    config: &'a NemesisConfig,
    members: usize,
    duration_ns: u64,
}

impl Mutator<'_> {
    /// Every mutated fault must have healed by then, as the nemesis's own do.
    fn end_ns(&self) -> u64 {
        self.duration_ns.saturating_sub(self.config.quiet_ns)
    }

    fn fits(&self, fault: &FaultSpec) -> bool {
        fault.at_ns >= self.config.start_ns
            && fault
                .healed_by_ns()
                .is_some_and(|healed| healed <= self.end_ns())
    }

    /// Mutant `index` of `parent`: one to three mutations, each drawn from the stream of
    /// (the parent's seed, `index`). A mutation that would leave a fault unhealed at the
    /// quiet tail is not made.
    fn mutate(&self, parent: &Entry, index: u64) -> Vec<FaultSpec> {
        let mut rng = SimRng::stream(parent.seed, MUTATE_STREAM_BASE | index);
        let mut faults = parent.faults.clone();
        let steps = 1 + rng.below(3);
        for _ in 0..steps {
            let op = if faults.is_empty() { 3 } else { rng.below(4) };
            if op == 3 {
                self.add(&mut faults, &mut rng);
                continue;
            }
            let i = rng.index(faults.len());
            let mutated = match op {
                0 => self.shift(&faults[i], &mut rng),
                1 => self.retarget(&faults[i], &mut rng),
                _ => self.lengthen(&faults[i], &mut rng),
            };
            if let Some(f) = mutated.filter(|f| self.fits(f)) {
                faults[i] = f;
            }
        }
        faults.sort_by_key(|f| f.at_ns);
        faults
    }

    /// Moves the fault up to one mean nemesis interval either way.
    fn shift(&self, fault: &FaultSpec, rng: &mut SimRng) -> Option<FaultSpec> {
        let span = self.config.mean_interval_ns.clamp(1, i64::MAX as u64) as i64;
        let delta = rng.between_signed(-span, span);
        let mut f = fault.clone();
        f.at_ns = fault.at_ns.saturating_add_signed(delta);
        Some(f)
    }

    /// Strikes someone else: the leader, a follower, anyone, a node by index, or the
    /// service (when the algorithm has one and the kind strikes one process).
    fn retarget(&self, fault: &FaultSpec, rng: &mut SimRng) -> Option<FaultSpec> {
        let mut f = fault.clone();
        let service = self.config.strike_service && strikes_one_process(&f.action);
        let target = match rng.below(if service { 5 } else { 4 }) {
            0 => Target::Leader,
            1 => Target::Follower,
            2 => Target::Random,
            3 => Target::Node(rng.below(self.members as u64) as u32),
            _ if self.config.clustered_service => match rng.below(2) {
                0 => Target::ServiceLeader,
                _ => Target::ServiceFollower,
            },
            _ => Target::Service,
        };
        let slot = first_target(&mut f.action)?;
        *slot = target;
        Some(f)
    }

    /// Makes a pause, stall, suspend, crash, partition or burst last 1.5 to 3 times as long.
    fn lengthen(&self, fault: &FaultSpec, rng: &mut SimRng) -> Option<FaultSpec> {
        let mut f = fault.clone();
        let factor_pct = rng.between(150, 300);
        let longer = |d: u64| d.saturating_mul(factor_pct) / 100;
        match &mut f.action {
            FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => {
                *d = longer(*d)
            }
            _ => f.heal_after_ns = Some(longer(f.heal_after_ns?)),
        }
        Some(f)
    }

    /// Adds one fault drawn as the nemesis draws one: one of the schedule the nemesis draws
    /// for a seed taken from the mutant's stream.
    fn add(&self, faults: &mut Vec<FaultSpec>, rng: &mut SimRng) {
        let draw_seed = rng.next_u64();
        let drawn = nemesis::generate(self.config, draw_seed, self.members, self.duration_ns);
        if drawn.faults.is_empty() {
            return;
        }
        let fault = drawn.faults[rng.index(drawn.faults.len())].clone();
        if self.fits(&fault) {
            faults.push(fault);
        }
    }
}

/// Whether a retarget may move the fault onto the coordination service: the faults that
/// strike one process, as swarm mode may aim them at the service.
fn strikes_one_process(action: &FaultAction) -> bool {
    matches!(
        action,
        FaultAction::Crash(_)
            | FaultAction::Pause(..)
            | FaultAction::Suspend(..)
            | FaultAction::Stall(..)
            | FaultAction::Partition(
                PartitionShape::Isolate(_)
                    | PartitionShape::OneWay { .. }
                    | PartitionShape::CutLink(..)
            )
            | FaultAction::ClockJump(..)
            | FaultAction::ClockDrift(..)
            | FaultAction::SlowDisk(..)
    )
}

/// The target a retarget replaces: the one the fault strikes (a one-way cut's senders, a
/// cut link's first end); none for faults on every link, and none for `Resign`, which only
/// the leader can do.
fn first_target(action: &mut FaultAction) -> Option<&mut Target> {
    match action {
        FaultAction::Crash(t)
        | FaultAction::Pause(t, _)
        | FaultAction::Suspend(t, _)
        | FaultAction::Stall(t, _)
        | FaultAction::ClockJump(t, _)
        | FaultAction::ClockDrift(t, _)
        | FaultAction::SlowDisk(t, _) => Some(t),
        FaultAction::Partition(shape) => match shape {
            PartitionShape::Isolate(t)
            | PartitionShape::MajorityMinority(t)
            | PartitionShape::Bridge(t)
            | PartitionShape::CutLink(t, _)
            | PartitionShape::OneWay { from: t, .. } => Some(t),
            PartitionShape::Groups(_) => None,
        },
        _ => None,
    }
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
            let runs = self.run_jobs(jobs, pool, &finished, stopping, aborting);
            if let ControlFlow::Break(why) = on_batch(&runs) {
                return Err(why);
            }
            if !keep_going && runs.iter().any(|r| r.record.failed()) {
                return Ok(Ended::FirstFailure);
            }
            runs.iter().for_each(|run| corpus.observe(run));
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
            let record = panics::catch(|| judged_unless(&scenario, aborting))
                .unwrap_or_else(|panic| Some(SeedRecord::panicked(job.seed, panic.message)))?;
            finished.fetch_add(1, Ordering::SeqCst);
            Some(GuidedRun {
                id: job.id,
                record,
                faults,
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

/// One failure key among the mutants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MutantFailures {
    /// The failure key.
    pub key: String,
    /// Mutants that failed with it.
    pub count: u64,
    /// The first of them.
    pub first: String,
    /// Its detail.
    pub detail: String,
}

/// What the mutants of a guided hunt did (the fresh seeds are in the ordinary summary).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GuidedSummary {
    /// Mutants per batch (once the corpus held a schedule).
    pub mutants_per_batch: u64,
    /// Mutants run.
    pub mutants_run: u64,
    /// Mutants whose outcome differed from `expect`.
    pub mutants_failed: u64,
    /// Runs (fresh seeds and mutants, in run order) up to and including the first that
    /// failed in any way (liveness and outgrown limits too), if any did.
    pub runs_to_first_failure: Option<u64>,
    /// Runs (fresh seeds and mutants, in run order) up to and including the first that
    /// violated a safety invariant ([`Failure::is_safety_violation`]), if any did: the
    /// figure to compare with a plain hunt's seeds to its first safety violation.
    pub runs_to_first_safety_violation: Option<u64>,
    /// The mutants' failures, by key.
    pub failures: Vec<MutantFailures>,
}

impl GuidedSummary {
    /// What the mutants' failures add up to, by the summary's rule
    /// ([`HuntVerdict::of_keys`]).
    pub fn verdict(&self) -> HuntVerdict {
        HuntVerdict::of_keys(self.failures.iter().map(|f| f.key.as_str()))
    }
}

/// Builds a [`GuidedSummary`] batch by batch.
#[derive(Clone, Debug, Default)]
pub struct GuidedSummaryBuilder {
    summary: GuidedSummary,
    runs: u64,
    groups: BTreeMap<String, MutantFailures>,
}

impl GuidedSummaryBuilder {
    /// An empty summary of a hunt with `mutants_per_batch`.
    pub fn new(mutants_per_batch: u64) -> Self {
        Self {
            summary: GuidedSummary {
                mutants_per_batch,
                ..GuidedSummary::default()
            },
            ..Self::default()
        }
    }

    /// Adds the next run (in run order).
    pub fn add(&mut self, run: &GuidedRun) {
        self.runs += 1;
        let s = &mut self.summary;
        if run.record.failed() && s.runs_to_first_failure.is_none() {
            s.runs_to_first_failure = Some(self.runs);
        }
        let safety = run.record.failures.iter().any(Failure::is_safety_violation);
        if safety && s.runs_to_first_safety_violation.is_none() {
            s.runs_to_first_safety_violation = Some(self.runs);
        }
        let RunId::Mutant(id) = run.id else {
            return;
        };
        s.mutants_run += 1;
        s.mutants_failed += u64::from(run.record.failed());
        for failure in &run.record.failures {
            let group = self
                .groups
                .entry(failure.key.clone())
                .or_insert_with(|| MutantFailures {
                    key: failure.key.clone(),
                    count: 0,
                    first: id.to_string(),
                    detail: failure.detail.clone(),
                });
            group.count += 1;
        }
    }

    /// Mutants that failed so far.
    pub fn mutants_failed(&self) -> u64 {
        self.summary.mutants_failed
    }

    /// The summary.
    pub fn finish(mut self) -> GuidedSummary {
        self.summary.failures = self.groups.into_values().collect();
        self.summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        let text = r#"Scenario(duration: "20s", nodes: 3, algorithm: Raft(),
            nemesis: (mean_interval: "1s", fault_duration: ("100ms", "2s"), quiet: "5s"))"#;
        splitbrain_scenario::parse(text, "g.ron").expect("a valid scenario")
    }

    #[test]
    fn a_seeds_own_draw_is_exactly_what_materialize_runs() {
        let s = scenario();
        let guided = Guided::new(&s, 8).unwrap();
        for seed in 1..20 {
            assert_eq!(
                scenario_of(&s, seed, &guided.drawn(seed)),
                s.materialize(seed)
            );
        }
    }

    #[test]
    fn a_mutant_is_a_function_of_its_parent_and_index_and_heals_before_the_quiet_tail() {
        let s = scenario();
        let guided = Guided::new(&s, 8).unwrap();
        let mutator = Mutator {
            config: &guided.config,
            members: 3,
            duration_ns: s.sim.duration_ns,
        };
        let mut changed = 0;
        for seed in 1..40 {
            let parent = Entry {
                seed,
                faults: guided.drawn(seed),
                features: 0,
            };
            for index in 0..10 {
                let m = mutator.mutate(&parent, index);
                assert_eq!(m, mutator.mutate(&parent, index));
                assert!(m.iter().all(|f| mutator.fits(f)), "{m:?}");
                assert!(m.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
                changed += usize::from(m != parent.faults);
            }
        }
        assert!(
            changed > 300,
            "most mutants differ from their parent: {changed}"
        );
    }

    #[test]
    fn features_bucket_each_counter_and_pair_them() {
        let c = Coverage {
            split_votes: 1,
            dueling_candidates: 5,
            ..Coverage::default()
        };
        let f = features_of(&c);
        assert_eq!(f.count_ones(), 3);
        assert_eq!(f & 1, 1, "split votes, bucket 0");
        assert_eq!(f >> (BUCKETS + 2) & 1, 1, "5 dueling candidates, bucket 2");
        assert_eq!(f >> PAIR_BASE & 1, 1, "the pair");
        assert_eq!(features_of(&Coverage::default()), 0);
    }

    #[test]
    fn a_newer_leader_locked_out_reaches_no_feature() {
        // A lock-out breaks fencing_safety: the run fails and is never bred from.
        let c = Coverage {
            locked_out_writes: 3,
            ..Coverage::default()
        };
        assert_eq!(features_of(&c), 0);
    }

    fn run(id: RunId, keys: &[&str]) -> GuidedRun {
        let failures = keys
            .iter()
            .map(|key| Failure {
                key: key.to_string(),
                at_ns: None,
                nodes: Vec::new(),
                detail: String::new(),
            })
            .collect();
        GuidedRun {
            id,
            record: SeedRecord {
                seed: 7,
                outcome: if keys.is_empty() { "matched" } else { "failed" }.to_string(),
                failures,
                events: 1,
                coverage: Coverage::default(),
                nemesis: None,
                unobserved: Vec::new(),
                reference_failed: Vec::new(),
            },
            faults: Vec::new(),
        }
    }

    #[test]
    fn the_first_safety_violation_is_counted_apart_from_a_liveness_failure() {
        let mutant = RunId::Mutant(MutantId { index: 0, seed: 7 });
        let mut b = GuidedSummaryBuilder::new(8);
        b.add(&run(RunId::Seed(1), &[]));
        b.add(&run(RunId::Seed(2), &["liveness"]));
        b.add(&run(mutant, &["missing:fencing_safety"]));
        b.add(&run(mutant, &["election_safety"]));
        let s = b.finish();
        assert_eq!(s.runs_to_first_failure, Some(2));
        assert_eq!(s.runs_to_first_safety_violation, Some(4));
        let mut b = GuidedSummaryBuilder::new(8);
        b.add(&run(RunId::Seed(1), &["liveness", "limit"]));
        assert_eq!(b.finish().runs_to_first_safety_violation, None);
    }

    #[test]
    fn a_scenario_without_a_nemesis_cannot_be_guided() {
        let text = r#"Scenario(duration: "2s", nodes: 3, algorithm: Raft())"#;
        let s = splitbrain_scenario::parse(text, "n.ron").unwrap();
        assert_eq!(Guided::new(&s, 8).err(), Some(GuidedError::NoNemesis));
        assert_eq!(
            Guided::new(&scenario(), 64).err(),
            Some(GuidedError::TooManyMutants(64))
        );
    }
}
