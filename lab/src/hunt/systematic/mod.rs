//! Systematic search (`hunt --search systematic`): every schedule up to a bound, in a fixed
//! order, instead of random draws; each explored state is explored once.
//!
//! A schedule is a list of steps, each after the one before: a fault at a point of a time
//! grid (`points` instants `grid_ns` apart from the nemesis's `start`), one of the
//! [`Space::choices`] the scenario's nemesis allows (its kinds, on each target, for each of a
//! few lengths); or another way at one of the run's choice points ([`splitbrain_sim::choice`]:
//! a randomized timeout the scenario makes a choice among a few values, the order of events
//! due at one instant for one process). The bound is the number of steps.
//!
//! Stateless: a schedule runs from the start, whole (so every algorithm can be searched,
//! external nodes in other languages too), its choices replayed by index ([`replay`]). A
//! run takes a digest of its state ([`splitbrain_sim::Sim::digest`]) just before each grid
//! point after its last step; a state already seen there with as many steps left to add (and
//! no later in the grid) was explored already, and the schedules that would add steps from
//! it are not run again. Times enter digests relative to now, so a state seen again one
//! heartbeat later counts as seen.
//!
//! Order (`frontier.rs`): extensions of runs that reached a situation no run had (a coverage
//! counter's new order of magnitude) first, newest first; then the rest fewest steps first.
//! The order is fixed, so the count and the first counterexample are the same whatever the
//! number of jobs.

mod counterexample;
mod frontier;
pub mod replay;
pub mod shards;
mod space;
pub mod symmetry;
#[cfg(test)]
mod tests;

pub use counterexample::Counterexample;
pub use frontier::BATCH_SCHEDULES;
pub use space::{Choice, Space, SystematicError};

use super::record::SeedRecord;
use super::seeds::Shard;
use super::Ended;
use frontier::{Branch, Frontier};
use rayon::prelude::*;
use replay::Replay;
use serde::{Deserialize, Serialize};
use splitbrain_algorithms::Checkpoints;
use splitbrain_scenario::{format_duration_ron, Scenario};
use splitbrain_sim::{ChoiceKind, Nanos};
use std::ops::ControlFlow;

/// Per symmetric digest, the fingerprint of the renaming its state was explored under
/// ([`splitbrain_sim::Sim::digest_symmetric_renamed`]).
type Renamings = std::collections::BTreeMap<u64, u64>;

/// How far a systematic search goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bound {
    /// The most steps (faults and other choices) in one schedule (k).
    pub steps: usize,
    /// The spacing of the instants a fault may start at.
    pub grid_ns: Nanos,
    /// How many instants (the depth, D): faults start at `start + i * grid_ns`, `i < points`.
    pub points: usize,
    /// The lengths each fault that lasts may last.
    pub lengths_ns: Vec<Nanos>,
}

/// Grid points when a bound does not say (`--depth`).
pub const DEFAULT_DEPTH: usize = 20;
/// Steps per schedule when a bound does not say (`--steps`).
pub const DEFAULT_STEPS: usize = 2;

impl Bound {
    /// The bound of `steps` steps for `scenario` with the defaults: [`DEFAULT_DEPTH`] points
    /// a heartbeat of its algorithm apart, each fault lasting the nemesis's shortest or its
    /// longest `fault_duration`.
    ///
    /// ```
    /// use splitbrain_lab::hunt::systematic::Bound;
    ///
    /// let scenario = splitbrain_scenario::parse(
    ///     r#"Scenario(algorithm: Raft(heartbeat: "50ms"), nodes: 3,
    ///                 nemesis: (kinds: [Crash], fault_duration: ("100ms", "2s")))"#,
    ///     "doc.ron",
    /// )
    /// .unwrap();
    /// let bound = Bound::defaults(&scenario, 2);
    /// assert_eq!((bound.grid_ns, bound.points), (50_000_000, 20));
    /// assert_eq!(bound.lengths_ns, [100_000_000, 2_000_000_000]);
    /// ```
    pub fn defaults(scenario: &Scenario, steps: usize) -> Bound {
        let (shortest_ns, longest_ns) = scenario
            .nemesis
            .as_ref()
            .map_or((0, 0), |n| n.fault_duration_ns);
        let mut lengths_ns = vec![shortest_ns, longest_ns];
        lengths_ns.dedup();
        Bound {
            steps,
            grid_ns: scenario.algorithm.heartbeat_ns(),
            points: DEFAULT_DEPTH,
            lengths_ns,
        }
    }
}

impl std::fmt::Display for Bound {
    /// The bound as the hunt's flags give it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lengths: Vec<String> = self
            .lengths_ns
            .iter()
            .map(|l| format_duration_ron(*l))
            .collect();
        write!(
            f,
            "--steps {} --grid {} --depth {} --fault-lengths {}",
            self.steps,
            format_duration_ron(self.grid_ns),
            self.points,
            lengths.join(",")
        )
    }
}

/// One step of a schedule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// A fault: [`Space::choices`]`[choice]` at grid point `point`.
    Fault {
        /// The grid point, from 0.
        point: u32,
        /// The choice, an index into [`Space::choices`].
        choice: u32,
    },
    /// The run's `index`-th choice point (from 0) takes `option` instead of its default.
    Choose {
        /// Its place among the run's choice points.
        index: u32,
        /// The way it takes.
        option: u32,
        /// When it comes (true time).
        at_ns: Nanos,
        /// What it chooses.
        kind: ChoiceKind,
    },
}

/// What one schedule's run showed.
#[derive(Clone, Debug)]
pub struct Explored {
    /// The schedule.
    pub schedule: Vec<Step>,
    /// Its run, judged.
    pub record: SeedRecord,
    /// The state digests just before the grid points after its last step, in order.
    pub digests: Vec<u64>,
    /// With symmetry ([`Space::symmetric`]): `digests` are up to a renaming of members, and
    /// these fingerprint the renaming of each ([`splitbrain_sim::Sim::digest_symmetric_renamed`]);
    /// empty without.
    pub renamings: Vec<u64>,
    /// The first grid point those digests are of.
    pub first_point: u32,
    /// The choice points it met after its last step, inside the window.
    pub met: Vec<replay::Met>,
}

/// What a systematic search covered.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Coverage {
    /// Schedules run (the step-free run included).
    pub schedules: u64,
    /// Schedules run with each number of steps, from 0.
    pub schedules_by_steps: Vec<u64>,
    /// Distinct states seen at grid points.
    pub distinct_states: u64,
    /// Grid points not branched from because their state had been explored from.
    pub pruned_points: u64,
    /// Of those, the points whose own state had not been explored from, but a renaming of
    /// it had (docs/hunting.md, "Symmetry"); 0 without symmetry.
    pub symmetric_prunes: u64,
    /// Choice points met inside the window, by kind (`timeout`, `order`), that schedules
    /// branched at.
    pub choice_points: ChoicePoints,
    /// Runs that reached a situation (a coverage counter's order of magnitude) no run had
    /// reached before: their schedules were extended first.
    pub novel_runs: u64,
    /// Schedules that failed.
    pub failing: u64,
    /// Every schedule of up to this many steps ran (or was covered by an explored state);
    /// `None` if not even the step-free run finished.
    pub complete_to: Option<usize>,
}

/// Choice points branched at, by kind.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ChoicePoints {
    /// Randomized timeouts.
    pub timeout: u64,
    /// Orders of events due at one instant.
    pub order: u64,
}

/// A systematic search of one [`Space`] to a bound.
pub struct Search<'a> {
    /// What is explored.
    pub space: &'a Space,
    /// The most steps in one schedule.
    pub steps: usize,
    /// Go on after the first failing schedule.
    pub keep_going: bool,
    /// Run only this slice of the search (every N-th one-step schedule from the I-th, and
    /// everything that extends it), or all of it. The shards of one search together run
    /// every schedule it would; each also runs the step-free run.
    pub shard: Option<Shard>,
}

impl Search<'_> {
    /// Explores on `pool` in batches, handing each batch's runs (in order) to `on_batch`,
    /// which may end the search (with how it ended); `stopping` is asked before each batch
    /// (a spent time budget, a signal), `aborting` inside runs (a signal). Ends with what
    /// was covered and how the search ended. The order is fixed, whatever the pool's size.
    pub fn run(
        &self,
        pool: &rayon::ThreadPool,
        stopping: &(dyn Fn() -> Option<Ended> + Sync),
        aborting: &(dyn Fn() -> bool + Sync),
        mut on_batch: impl FnMut(&[Explored]) -> ControlFlow<Ended>,
    ) -> (Coverage, Ended) {
        let mut coverage = Coverage {
            schedules_by_steps: vec![0; self.steps + 1],
            ..Coverage::default()
        };
        let mut frontier = Frontier::new(self.steps, self.space.choices().len(), self.shard);
        let mut renamed = Renamings::new();
        loop {
            let batch = frontier.pop_batch();
            if batch.is_empty() {
                coverage.complete_to = Some(self.steps);
                return (coverage, Ended::Complete);
            }
            if let Some(ended) = stopping() {
                return (coverage, ended);
            }
            let runs: Option<Vec<Explored>> = pool.install(|| {
                batch
                    .par_iter()
                    .map(|s| self.explore(s, aborting))
                    .collect()
            });
            let Some(runs) = runs else {
                return (coverage, Ended::Interrupted);
            };
            let seen = (&mut frontier, &mut renamed);
            let failed = self.take_batch(&runs, seen, &mut coverage);
            coverage.complete_to = Some(frontier.complete_to(self.steps));
            if let ControlFlow::Break(ended) = on_batch(&runs) {
                return (coverage, ended);
            }
            if failed && !self.keep_going {
                return (coverage, Ended::FirstFailure);
            }
        }
    }

    /// Counts a batch's runs and adds the schedules they branch to; returns whether one
    /// failed. `renamed` is the renaming each state was explored under, with symmetry.
    fn take_batch(
        &self,
        runs: &[Explored],
        (frontier, renamed): (&mut Frontier, &mut Renamings),
        coverage: &mut Coverage,
    ) -> bool {
        let mut failed = false;
        for run in runs {
            let steps = run.schedule.len();
            frontier.ran(steps);
            coverage.schedules += 1;
            coverage.schedules_by_steps[steps] += 1;
            if run.record.failed() {
                coverage.failing += 1;
                failed = true;
                continue;
            }
            let novelty = frontier.novelty(&run.record);
            coverage.novel_runs += u64::from(novelty > 0);
            let branches = self.branches(run, (frontier, renamed), coverage);
            frontier.push(run.schedule.clone(), branches, novelty);
        }
        failed
    }

    /// Where `run` branches: the grid points whose state is new (up to the first that was
    /// explored already: everything after it was too), and the choice points it met before
    /// that point.
    fn branches(
        &self,
        run: &Explored,
        (frontier, renamed): (&mut Frontier, &mut Renamings),
        coverage: &mut Coverage,
    ) -> Vec<Branch> {
        let left = self.steps - run.schedule.len();
        let mut points = Vec::new();
        let mut explored_from_ns = Nanos::MAX;
        for (offset, digest) in run.digests.iter().enumerate() {
            let point = run.first_point + offset as u32;
            let renaming = run.renamings.get(offset);
            let explored = frontier.seen.get(digest);
            if matches!(explored, Some(&(had, at)) if had >= left && at <= point) {
                coverage.pruned_points += 1;
                let other = renaming.is_some_and(|r| renamed.get(digest) != Some(r));
                coverage.symmetric_prunes += u64::from(other);
                explored_from_ns = self.space.times_ns()[point as usize] - 1;
                break;
            }
            coverage.distinct_states += u64::from(explored.is_none());
            frontier.seen.insert(*digest, (left, point));
            if let Some(renaming) = renaming {
                renamed.insert(*digest, *renaming);
            }
            points.push(point);
        }
        if left == 0 {
            return Vec::new();
        }
        let mut branches: Vec<(Nanos, Branch)> = points
            .into_iter()
            .map(|p| (self.space.times_ns()[p as usize], Branch::Faults(p)))
            .collect();
        for met in run.met.iter().filter(|m| m.at_ns < explored_from_ns) {
            match met.kind {
                ChoiceKind::Timeout => coverage.choice_points.timeout += 1,
                ChoiceKind::Order => coverage.choice_points.order += 1,
            }
            branches.push((met.at_ns, Branch::Choose(*met)));
        }
        // In time order (a stable sort: a choice point at a grid instant comes after it).
        branches.sort_by_key(|(at_ns, _)| *at_ns);
        branches.into_iter().map(|(_, b)| b).collect()
    }

    /// Runs `schedule` with digests just before the grid points after its last step, its
    /// choices replayed.
    fn explore(&self, schedule: &[Step], aborting: &(dyn Fn() -> bool + Sync)) -> Option<Explored> {
        let last_ns = schedule.last().map(|s| self.space.step_ns(s));
        let times = self.space.times_ns();
        let first = times.partition_point(|t| last_ns.is_some_and(|last| *t <= last));
        // Just before each point: the state every fault placed at it starts from.
        let at_ns: Vec<Nanos> = times[first..].iter().map(|t| t - 1).collect();
        let (mut digests, mut renamings) = (Vec::new(), Vec::new());
        let scenario = self.space.scenario(schedule);
        let (from_ns, until_ns) = (last_ns.unwrap_or(0), self.space.horizon_ns());
        let mut replay = Replay::new(&scenario.sim.chosen, from_ns, until_ns);
        let checkpoints = Checkpoints {
            at_ns: &at_ns,
            digests: &mut digests,
            symmetric: self.space.symmetric(),
            renamings: &mut renamings,
        };
        let record = super::run_judged_checkpointed(&scenario, checkpoints, &mut replay, aborting)?;
        Some(Explored {
            schedule: schedule.to_vec(),
            record,
            digests,
            renamings,
            first_point: first as u32,
            met: replay.met,
        })
    }
}
