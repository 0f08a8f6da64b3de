//! Mutating a corpus entry's schedule: shift a fault, change its target, lengthen it, or
//! add one drawn as the nemesis draws one.

use super::corpus::Entry;
use super::MUTATE_STREAM_BASE;
use splitbrain_sim::nemesis::{self, NemesisConfig};
use splitbrain_sim::{FaultAction, FaultSpec, PartitionShape, SimRng, Target};

/// What mutating may do: the nemesis's settings and the run's shape.
pub(super) struct Mutator<'a> {
    pub(super) config: &'a NemesisConfig,
    pub(super) members: usize,
    pub(super) duration_ns: u64,
}

impl Mutator<'_> {
    /// Every mutated fault must have healed by then, as the nemesis's own do.
    fn end_ns(&self) -> u64 {
        self.duration_ns.saturating_sub(self.config.quiet_ns)
    }

    pub(super) fn fits(&self, fault: &FaultSpec) -> bool {
        fault.at_ns >= self.config.start_ns
            && fault
                .healed_by_ns()
                .is_some_and(|healed| healed <= self.end_ns())
    }

    /// Mutant `index` of `parent`: one to three mutations, each drawn from the stream of
    /// (the parent's seed, `index`). A mutation that would leave a fault unhealed at the
    /// quiet tail is not made.
    pub(super) fn mutate(&self, parent: &Entry, index: u64) -> Vec<FaultSpec> {
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
