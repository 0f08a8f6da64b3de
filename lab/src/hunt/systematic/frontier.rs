//! The schedules a systematic search has still to run, in the order it runs them, and what
//! its runs have seen (states, situations).

use super::replay::Met;
use super::Step;
use crate::hunt::record::SeedRecord;
use crate::hunt::seeds::Shard;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// Schedules run per batch: fixed, so that where a search stops does not depend on the
/// machine.
pub const BATCH_SCHEDULES: usize = 64;

/// Where a run may branch: a grid point (each fault choice there), or a choice point it met
/// (each way but the one it took).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Branch {
    /// A fault at this grid point.
    Faults(u32),
    /// Another way at this choice point.
    Choose(Met),
}

/// The extensions of one run waiting to run: its schedule plus one step at each of its
/// branches. The frontier hands them out in this order: extensions of runs that reached
/// something new first (of the newest such run first, so that a promising run is followed to
/// the bound), then the rest fewest steps first, in the order they were made. Kept as one
/// entry per run, not one per schedule: a run may have thousands.
#[derive(Debug, PartialEq, Eq)]
struct Waiting {
    /// How many new situations the run reached (0: none).
    novelty: u32,
    /// Made in this order.
    seq: u64,
    schedule: Vec<Step>,
    branches: Vec<Branch>,
    /// The next extension: branch `branch`, its `way`-th.
    branch: usize,
    way: u32,
    /// Extensions made so far (a shard's share of the step-free run's is every N-th).
    made: u64,
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

/// Where each digest was first explored from: the steps still allowed then and its grid
/// point. A state is explored if it was seen with as many steps left, no later.
pub type Seen = BTreeMap<u64, (usize, u32)>;

/// The schedules still to run, and what the runs so far have seen.
pub struct Frontier {
    waiting: BinaryHeap<Waiting>,
    /// Schedules waiting, by number of steps.
    waiting_by_steps: Vec<u64>,
    /// Fault choices per grid point.
    choices: u32,
    made: u64,
    /// Digests of states explored from.
    pub seen: Seen,
    /// Situations reached so far: a coverage counter and the order of magnitude of its value.
    situations: BTreeSet<(usize, u32)>,
    /// The step-free run, before it ran.
    start: Option<Vec<Step>>,
    /// The slice of the search this frontier runs: every N-th one-step schedule (and all
    /// that extend it) from the I-th, in the unsharded order; `None`: all.
    shard: Option<Shard>,
}

impl Frontier {
    /// A frontier holding the step-free run, for schedules of up to `most_steps` steps, of
    /// `shard` of the search (or all of it).
    pub fn new(most_steps: usize, choices: usize, shard: Option<Shard>) -> Self {
        let mut waiting_by_steps = vec![0; most_steps + 2];
        waiting_by_steps[0] = 1;
        Self {
            waiting: BinaryHeap::new(),
            waiting_by_steps,
            choices: choices as u32,
            made: 0,
            seen: Seen::new(),
            situations: BTreeSet::new(),
            start: Some(Vec::new()),
            shard,
        }
    }

    /// Whether the `made`-th extension of `schedule` is this frontier's to run: every
    /// extension is, but a shard runs its share of the step-free run's only.
    fn ours(&self, schedule: &[Step], made: u64) -> bool {
        match self.shard {
            Some(shard) if schedule.is_empty() => made % shard.count == shard.index,
            _ => true,
        }
    }

    fn ways(&self, branch: &Branch) -> u32 {
        match branch {
            Branch::Faults(_) => self.choices,
            Branch::Choose(met) => met.options - 1,
        }
    }

    /// Adds the extensions of `schedule` at `branches`.
    pub fn push(&mut self, schedule: Vec<Step>, branches: Vec<Branch>, novelty: u32) {
        let all: u64 = branches.iter().map(|b| u64::from(self.ways(b))).sum();
        let count = match self.shard {
            Some(shard) if schedule.is_empty() => {
                (all + shard.count - 1 - shard.index) / shard.count
            }
            _ => all,
        };
        if count == 0 {
            return;
        }
        self.waiting_by_steps[schedule.len() + 1] += count;
        self.made += 1;
        self.waiting.push(Waiting {
            novelty,
            seq: self.made,
            schedule,
            branches,
            branch: 0,
            way: 0,
            made: 0,
        });
    }

    /// A run of a schedule of `steps` steps is done.
    pub fn ran(&mut self, steps: usize) {
        self.waiting_by_steps[steps] -= 1;
    }

    /// Up to [`BATCH_SCHEDULES`] schedules to run next, in order.
    pub fn pop_batch(&mut self) -> Vec<Vec<Step>> {
        let mut batch: Vec<Vec<Step>> = self.start.take().into_iter().collect();
        while batch.len() < BATCH_SCHEDULES {
            let Some(mut top) = self.waiting.pop() else {
                break;
            };
            while batch.len() < BATCH_SCHEDULES && top.branch < top.branches.len() {
                if self.ours(&top.schedule, top.made) {
                    let mut child = top.schedule.clone();
                    child.push(step_of(&top.branches[top.branch], top.way));
                    batch.push(child);
                }
                top.made += 1;
                top.way += 1;
                if top.way == self.ways(&top.branches[top.branch]) {
                    top.branch += 1;
                    top.way = 0;
                }
            }
            if top.branch < top.branches.len() {
                self.waiting.push(top);
            }
        }
        batch
    }

    /// The most steps every schedule of which has run: one less than the fewest steps still
    /// waiting.
    pub fn complete_to(&self, most: usize) -> usize {
        let fewest_waiting = self.waiting_by_steps.iter().position(|n| *n > 0);
        fewest_waiting
            .map_or(most, |f| f.saturating_sub(1))
            .min(most)
    }

    /// How many situations `record` reached that no run had before.
    pub fn novelty(&mut self, record: &SeedRecord) -> u32 {
        let mut new = 0;
        for (index, (_, value)) in record.coverage.named().iter().enumerate() {
            if *value > 0 && self.situations.insert((index, value.ilog2())) {
                new += 1;
            }
        }
        new
    }
}

/// The `way`-th extension at `branch`: fault choice `way`, or the `way`-th option but the
/// one the run took.
fn step_of(branch: &Branch, way: u32) -> Step {
    match branch {
        Branch::Faults(point) => Step::Fault {
            point: *point,
            choice: way,
        },
        Branch::Choose(met) => Step::Choose {
            index: met.index,
            option: if way < met.default { way } else { way + 1 },
            at_ns: met.at_ns,
            kind: met.kind,
        },
    }
}
