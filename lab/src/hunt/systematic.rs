//! Systematic search (`hunt --search systematic`): every fault schedule up to a bound, in
//! order, instead of random draws; each explored state is explored once.
//!
//! The bound: at most `faults` faults per run, each starting at a point of a time grid
//! (`points` instants `grid_ns` apart from the nemesis's `start`), each one of the
//! [`Space::choices`] the scenario's nemesis allows (its kinds, on each target, for each of a
//! few lengths). Schedules are explored by level (no fault, then every one-fault schedule,
//! then every two-fault one...), each level in a fixed order, so a counterexample found is
//! one with the fewest faults, and the first one is the same whatever the number of jobs.
//!
//! Stateless: a schedule is run from the start, whole (so every algorithm can be searched,
//! external nodes in other languages too). A run takes a digest of its state
//! ([`splitbrain_sim::Sim::digest`]) at each grid point after its last fault, just before
//! the point; a state already seen there with as many faults left to add (and no later in
//! the grid) was explored already, and the schedules that would add faults from it are not
//! run again. Times enter digests relative to now, so a state seen again one heartbeat later
//! counts as seen.

use super::record::SeedRecord;
use super::Ended;
use rayon::prelude::*;
use serde::Serialize;
use splitbrain_scenario::Scenario;
use splitbrain_sim::nemesis::{NemesisConfig, NemesisKind, NemesisTargets};
use splitbrain_sim::{FaultAction, FaultSpec, MemberChange, Nanos, PartitionShape, Target};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::ops::ControlFlow;

/// Schedules run per batch: fixed, so that where a search stops does not depend on the
/// machine.
pub const BATCH_SCHEDULES: usize = 64;

/// How far a systematic search goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bound {
    /// The most faults in one run (k).
    pub faults: usize,
    /// The spacing of the instants a fault may start at.
    pub grid_ns: Nanos,
    /// How many instants (the depth, D): faults start at `start + i * grid_ns`, `i < points`.
    pub points: usize,
    /// The lengths each fault that lasts may last.
    pub lengths_ns: Vec<Nanos>,
}

/// Why a systematic search cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SystematicError {
    /// There is no nemesis to take fault kinds from.
    #[error("--search systematic: the scenario has no `nemesis`, so there are no fault kinds to explore\n  hint: add a `nemesis: (kinds: [...])` to the scenario (docs/hunting.md)")]
    NoNemesis,
    /// No grid point is left before the nemesis's quiet tail.
    #[error("--search systematic: no fault fits between the nemesis's `start` and its quiet tail\n  hint: lengthen the scenario's `duration`, or shorten `nemesis.start`, `nemesis.quiet` or --fault-lengths")]
    NoRoom,
    /// The bound is empty.
    #[error("--search systematic: {0}\n  hint: see `splitbrain hunt --help`, \"Search\"")]
    Bound(&'static str),
}

/// One fault the search may place at a grid point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// The nemesis kind it stands for.
    pub kind: NemesisKind,
    /// What it does.
    pub action: FaultAction,
    /// How long until it heals by itself, if it does.
    pub heal_after_ns: Option<Nanos>,
}

/// One fault of a schedule: a grid point and a choice, by index.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Step {
    /// The grid point, from 0.
    pub point: u32,
    /// The choice, an index into [`Space::choices`].
    pub choice: u32,
}

/// What a systematic search explores: the scenario without its nemesis, the grid and the
/// choices.
#[derive(Clone, Debug)]
pub struct Space {
    base: Scenario,
    times_ns: Vec<Nanos>,
    choices: Vec<Choice>,
}

impl Space {
    /// The space of `scenario`'s seed `seed` under `bound`: its explicit faults stay, its
    /// nemesis gives the choices, and its run ends `quiet` after the last fault can heal.
    pub fn new(scenario: &Scenario, seed: u64, bound: &Bound) -> Result<Space, SystematicError> {
        if bound.grid_ns == 0 || bound.points == 0 {
            return Err(SystematicError::Bound("the grid needs a step and a point"));
        }
        if bound.lengths_ns.is_empty() || bound.lengths_ns.contains(&0) {
            return Err(SystematicError::Bound(
                "every fault length must be longer than 0",
            ));
        }
        let mut without = scenario.clone();
        let nemesis = without.nemesis.take().ok_or(SystematicError::NoNemesis)?;
        let mut base = without.materialize(seed);
        let longest = bound.lengths_ns.iter().copied().max().unwrap_or(0);
        let last_start = base
            .sim
            .duration_ns
            .saturating_sub(nemesis.quiet_ns)
            .saturating_sub(longest);
        let times_ns: Vec<Nanos> = (0..bound.points as u64)
            .map(|i| nemesis.start_ns.max(1) + i * bound.grid_ns)
            .take_while(|at| *at <= last_start)
            .collect();
        let last = *times_ns.last().ok_or(SystematicError::NoRoom)?;
        base.sim.duration_ns = base.sim.duration_ns.min(last + longest + nemesis.quiet_ns);
        let service = service_targets(scenario);
        let choices = choices_of(&nemesis, base.sim.members, &bound.lengths_ns, &service);
        Ok(Space {
            base,
            times_ns,
            choices,
        })
    }

    /// The faults a grid point may get.
    pub fn choices(&self) -> &[Choice] {
        &self.choices
    }

    /// The grid's instants (true time, ns).
    pub fn times_ns(&self) -> &[Nanos] {
        &self.times_ns
    }

    /// How long each run lasts.
    pub fn duration_ns(&self) -> Nanos {
        self.base.sim.duration_ns
    }

    /// The explicit scenario of `schedule`: the base with its faults added.
    pub fn scenario(&self, schedule: &[Step]) -> Scenario {
        let mut s = self.base.clone();
        for step in schedule {
            let choice = &self.choices[step.choice as usize];
            s.sim.faults.push(FaultSpec {
                at_ns: self.times_ns[step.point as usize],
                action: choice.action.clone(),
                heal_after_ns: choice.heal_after_ns,
            });
        }
        s
    }
}

/// The service targets single-process faults strike besides the members, if the algorithm
/// runs a coordination service.
fn service_targets(scenario: &Scenario) -> Vec<Target> {
    match scenario.algorithm.service_processes() {
        0 => Vec::new(),
        1 => vec![Target::Service],
        _ => vec![Target::ServiceLeader, Target::ServiceFollower],
    }
}

/// Every fault `nemesis`'s kinds allow at one point, in a fixed order.
fn choices_of(
    nemesis: &NemesisConfig,
    members: usize,
    lengths_ns: &[Nanos],
    service: &[Target],
) -> Vec<Choice> {
    let mut kinds = nemesis.kinds.clone();
    kinds.sort();
    kinds.dedup();
    let nodes: Vec<Target> = (0..members as u32).map(Target::Node).collect();
    let targets = match nemesis.targets {
        NemesisTargets::Any => nodes.clone(),
        NemesisTargets::Leader => vec![Target::Leader],
        NemesisTargets::Followers => vec![Target::Follower],
    };
    let mut out = Vec::new();
    for kind in kinds {
        let struck: Vec<Target> = match kind {
            NemesisKind::Crash | NemesisKind::Pause | NemesisKind::Stall | NemesisKind::Isolate => {
                targets.iter().chain(service).cloned().collect()
            }
            _ => targets.clone(),
        };
        for action in actions_of(kind, nemesis, &struck, &nodes) {
            let lasts = action.can_heal() && kind != NemesisKind::CrashForGood;
            let lasting = action.built_in_duration().is_some();
            match (lasts, lasting) {
                (true, _) => out.extend(lengths_ns.iter().map(|len| Choice {
                    kind,
                    action: action.clone(),
                    heal_after_ns: Some(*len),
                })),
                (false, true) => out.extend(lengths_ns.iter().map(|len| Choice {
                    kind,
                    action: with_duration(&action, *len),
                    heal_after_ns: None,
                })),
                (false, false) => out.push(Choice {
                    kind,
                    action,
                    heal_after_ns: None,
                }),
            }
        }
    }
    out
}

/// `action` (a pause, suspend or stall) lasting `length_ns`.
fn with_duration(action: &FaultAction, length_ns: Nanos) -> FaultAction {
    match action {
        FaultAction::Pause(t, _) => FaultAction::Pause(t.clone(), length_ns),
        FaultAction::Suspend(t, _) => FaultAction::Suspend(t.clone(), length_ns),
        FaultAction::Stall(t, _) => FaultAction::Stall(t.clone(), length_ns),
        other => other.clone(),
    }
}

/// The actions of `kind` on `targets` (lengths filled in later); `nodes` are every member.
fn actions_of(
    kind: NemesisKind,
    n: &NemesisConfig,
    targets: &[Target],
    nodes: &[Target],
) -> Vec<FaultAction> {
    let each = |make: &dyn Fn(Target) -> FaultAction| targets.iter().cloned().map(make).collect();
    let jump = n.max_clock_jump_ns.min(i64::MAX as u64) as i64;
    let drift = i64::from(n.max_drift_ppm.min(999_999));
    match kind {
        NemesisKind::Crash | NemesisKind::CrashForGood => each(&FaultAction::Crash),
        NemesisKind::Pause => each(&|t| FaultAction::Pause(t, 0)),
        NemesisKind::Suspend => each(&|t| FaultAction::Suspend(t, 0)),
        NemesisKind::Stall => each(&|t| FaultAction::Stall(t, 0)),
        NemesisKind::Isolate => each(&|t| FaultAction::Partition(PartitionShape::Isolate(t))),
        NemesisKind::MajorityMinority => {
            each(&|t| FaultAction::Partition(PartitionShape::MajorityMinority(t)))
        }
        NemesisKind::OneWay => each(&|t| {
            FaultAction::Partition(PartitionShape::OneWay {
                from: t,
                to: Target::All,
            })
        }),
        NemesisKind::CutLink => pairs(nodes)
            .map(|(a, b)| FaultAction::Partition(PartitionShape::CutLink(a, b)))
            .collect(),
        NemesisKind::Bridge => nodes
            .iter()
            .map(|t| FaultAction::Partition(PartitionShape::Bridge(t.clone())))
            .collect(),
        NemesisKind::LossBurst => vec![FaultAction::Loss(n.max_loss_ppm)],
        NemesisKind::Duplicate => vec![FaultAction::Duplicate(n.max_loss_ppm)],
        NemesisKind::ClockJump => both_ways(targets, jump, &FaultAction::ClockJump),
        NemesisKind::ClockDrift => both_ways(targets, drift, &FaultAction::ClockDrift),
        NemesisKind::Resign => vec![FaultAction::Resign(Target::Leader)],
        NemesisKind::SlowDisk => each(&|t| FaultAction::SlowDisk(t, n.max_fsync_ns.max(1))),
        NemesisKind::ConfChange => (0..nodes.len() as u32)
            .flat_map(|m| [MemberChange::Remove(m), MemberChange::Add(m)])
            .map(|change| FaultAction::ConfChange(Target::Leader, change))
            .collect(),
    }
}

/// Every unordered pair of distinct `nodes`.
fn pairs(nodes: &[Target]) -> impl Iterator<Item = (Target, Target)> + '_ {
    nodes
        .iter()
        .enumerate()
        .flat_map(move |(i, a)| nodes[i + 1..].iter().map(move |b| (a.clone(), b.clone())))
}

/// `make(target, amount)` and `make(target, -amount)` for every target.
fn both_ways(
    targets: &[Target],
    amount: i64,
    make: &dyn Fn(Target, i64) -> FaultAction,
) -> Vec<FaultAction> {
    targets
        .iter()
        .flat_map(|t| [make(t.clone(), amount), make(t.clone(), -amount)])
        .collect()
}

/// What one schedule's run showed.
#[derive(Clone, Debug)]
pub struct Explored {
    /// The schedule, in its level's order.
    pub schedule: Vec<Step>,
    /// Its run, judged.
    pub record: SeedRecord,
    /// The state digests at the grid points after its last fault, in order.
    pub digests: Vec<u64>,
}

/// What a systematic search covered.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    /// Schedules run (the fault-free run included).
    pub schedules: u64,
    /// Schedules run with each number of faults, from 0.
    pub schedules_by_faults: Vec<u64>,
    /// Distinct states seen at grid points.
    pub distinct_states: u64,
    /// Grid points not branched from because their state had been explored from.
    pub pruned_points: u64,
    /// Runs that reached a situation (a coverage counter's order of magnitude) no run had
    /// reached before: their schedules were extended first.
    pub novel_runs: u64,
    /// Schedules that failed.
    pub failing: u64,
    /// Every schedule of up to this many faults ran (or was covered by an explored state);
    /// `None` if not even the fault-free run finished.
    pub complete_to: Option<usize>,
}

/// A systematic search of one [`Space`] to a [`Bound`].
pub struct Search<'a> {
    /// What is explored.
    pub space: &'a Space,
    /// The most faults in one run.
    pub faults: usize,
    /// Go on after the first failing schedule.
    pub keep_going: bool,
}

/// Where each digest was first explored from: the faults still allowed then and its grid
/// point. A state is explored if it was seen with as many faults left, no later.
type Seen = BTreeMap<u64, (usize, u32)>;

/// The extensions of one run waiting to run: its schedule plus one fault at each of
/// `points`, with each choice. The frontier hands them out in this order: extensions of runs
/// that reached something new first (of the newest such run first, so that a promising run
/// is followed to the bound), then the rest fewest faults first, in the order they were made.
/// Kept as one entry per run, not one per schedule: a run may have thousands.
#[derive(Debug, PartialEq, Eq)]
struct Waiting {
    /// How many new situations the run reached (0: none).
    novelty: u32,
    /// Made in this order.
    seq: u64,
    schedule: Vec<Step>,
    /// The grid points it branches at.
    points: Vec<u32>,
    /// The next extension to hand out: `points[next / choices]` with choice `next % choices`.
    next: u64,
}

impl Waiting {
    fn key(&self) -> (u32, i128) {
        let order = if self.novelty > 0 {
            i128::from(self.seq)
        } else {
            -((self.schedule.len() as i128) << 64 | i128::from(self.seq))
        };
        (self.novelty, order)
    }
}

impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The schedules still to run, and what the runs so far have seen.
struct Frontier {
    waiting: BinaryHeap<Waiting>,
    /// Schedules waiting, by number of faults.
    waiting_by_faults: Vec<u64>,
    choices: u64,
    made: u64,
    seen: Seen,
    /// Situations reached so far: a coverage counter and the order of magnitude of its value.
    situations: BTreeSet<(usize, u32)>,
    /// The fault-free run, before it ran.
    start: Option<Vec<Step>>,
}

impl Frontier {
    fn new(most_faults: usize, choices: usize) -> Self {
        let mut waiting_by_faults = vec![0; most_faults + 2];
        waiting_by_faults[0] = 1;
        Self {
            waiting: BinaryHeap::new(),
            waiting_by_faults,
            choices: choices as u64,
            made: 0,
            seen: Seen::new(),
            situations: BTreeSet::new(),
            start: Some(Vec::new()),
        }
    }

    /// Adds the extensions of `schedule` at `points`.
    fn push(&mut self, schedule: Vec<Step>, points: Vec<u32>, novelty: u32) {
        let count = points.len() as u64 * self.choices;
        if count == 0 {
            return;
        }
        self.waiting_by_faults[schedule.len() + 1] += count;
        self.made += 1;
        self.waiting.push(Waiting {
            novelty,
            seq: self.made,
            schedule,
            points,
            next: 0,
        });
    }

    fn pop_batch(&mut self) -> Vec<Vec<Step>> {
        let mut batch: Vec<Vec<Step>> = self.start.take().into_iter().collect();
        while batch.len() < BATCH_SCHEDULES {
            let Some(mut top) = self.waiting.pop() else {
                break;
            };
            let total = top.points.len() as u64 * self.choices;
            while batch.len() < BATCH_SCHEDULES && top.next < total {
                let point = top.points[(top.next / self.choices) as usize];
                let choice = (top.next % self.choices) as u32;
                let mut child = top.schedule.clone();
                child.push(Step { point, choice });
                batch.push(child);
                top.next += 1;
            }
            if top.next < total {
                self.waiting.push(top);
            }
        }
        batch
    }

    /// The most faults every schedule of which has run: one less than the fewest faults
    /// still waiting.
    fn complete_to(&self, most: usize) -> usize {
        let fewest_waiting = self.waiting_by_faults.iter().position(|n| *n > 0);
        fewest_waiting
            .map_or(most, |f| f.saturating_sub(1))
            .min(most)
    }

    /// How many situations `record` reached that no run had before.
    fn novelty(&mut self, record: &SeedRecord) -> u32 {
        let mut new = 0;
        for (index, (_, value)) in record.coverage.named().iter().enumerate() {
            if *value > 0 && self.situations.insert((index, value.ilog2())) {
                new += 1;
            }
        }
        new
    }
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
            schedules_by_faults: vec![0; self.faults + 1],
            ..Coverage::default()
        };
        let mut frontier = Frontier::new(self.faults, self.space.choices.len());
        loop {
            let batch = frontier.pop_batch();
            if batch.is_empty() {
                coverage.complete_to = Some(self.faults);
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
            let failed = self.take_batch(&runs, &mut frontier, &mut coverage);
            coverage.complete_to = Some(frontier.complete_to(self.faults));
            if let ControlFlow::Break(ended) = on_batch(&runs) {
                return (coverage, ended);
            }
            if failed && !self.keep_going {
                return (coverage, Ended::FirstFailure);
            }
        }
    }

    /// Counts a batch's runs and adds the schedules they branch to; returns whether one
    /// failed.
    fn take_batch(
        &self,
        runs: &[Explored],
        frontier: &mut Frontier,
        coverage: &mut Coverage,
    ) -> bool {
        let mut failed = false;
        for run in runs {
            let faults = run.schedule.len();
            frontier.waiting_by_faults[faults] -= 1;
            coverage.schedules += 1;
            coverage.schedules_by_faults[faults] += 1;
            if run.record.failed() {
                coverage.failing += 1;
                failed = true;
                continue;
            }
            let novelty = frontier.novelty(&run.record);
            coverage.novel_runs += u64::from(novelty > 0);
            let left = self.faults - faults;
            let first = first_point_after(&run.schedule);
            let mut points = Vec::new();
            for (offset, digest) in run.digests.iter().enumerate() {
                let point = first + offset as u32;
                match frontier.seen.get(digest) {
                    Some(&(had, at)) if had >= left && at <= point => {
                        coverage.pruned_points += 1;
                        break;
                    }
                    None => coverage.distinct_states += 1,
                    Some(_) => {}
                }
                frontier.seen.insert(*digest, (left, point));
                if left > 0 {
                    points.push(point);
                }
            }
            frontier.push(run.schedule.clone(), points, novelty);
        }
        failed
    }
    /// Runs `schedule` with digests at the grid points after its last fault.
    fn explore(&self, schedule: &[Step], aborting: &(dyn Fn() -> bool + Sync)) -> Option<Explored> {
        let first = first_point_after(schedule) as usize;
        // Just before each point: the state every fault placed at it starts from.
        let at_ns: Vec<Nanos> = self.space.times_ns[first.min(self.space.times_ns.len())..]
            .iter()
            .map(|t| t - 1)
            .collect();
        let mut digests = Vec::with_capacity(at_ns.len());
        let scenario = self.space.scenario(schedule);
        let record = super::run_judged_checkpointed(&scenario, &at_ns, &mut digests, aborting)?;
        Some(Explored {
            schedule: schedule.to_vec(),
            record,
            digests,
        })
    }
}

/// The first grid point a fault after `schedule`'s last may take.
fn first_point_after(schedule: &[Step]) -> u32 {
    schedule.last().map_or(0, |s| s.point + 1)
}
