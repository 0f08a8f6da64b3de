//! What a systematic search explores: the scenario's seed without its nemesis, the grid of
//! instants faults may start at, and the faults the nemesis allows at each.

use super::{Bound, Step};
use serde::Serialize;
use splitbrain_scenario::Scenario;
use splitbrain_sim::choice::Chosen;
use splitbrain_sim::nemesis::{NemesisConfig, NemesisKind, NemesisTargets};
use splitbrain_sim::{FaultAction, FaultSpec, MemberChange, Nanos, NodeId, PartitionShape, Target};

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

/// What a systematic search explores: the scenario without its nemesis, the grid and the
/// choices.
#[derive(Clone, Debug)]
pub struct Space {
    base: Scenario,
    times_ns: Vec<Nanos>,
    grid_ns: Nanos,
    choices: Vec<Choice>,
    /// The members whose renamings count as one state (empty: none).
    symmetric: Vec<NodeId>,
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
        let symmetric = super::symmetry::interchangeable(&base);
        Ok(Space {
            base,
            times_ns,
            grid_ns: bound.grid_ns,
            choices,
            symmetric,
        })
    }

    /// The same space with states compared exactly, not up to a renaming of members
    /// (`--symmetry off`).
    pub fn without_symmetry(mut self) -> Space {
        self.symmetric.clear();
        self
    }

    /// The members whose renamings count as one state (docs/hunting.md, "Symmetry"), in id
    /// order; empty when states are compared exactly.
    pub fn symmetric(&self) -> &[NodeId] {
        &self.symmetric
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

    /// The explicit scenario of `schedule`: the base with its faults and its other choices
    /// (`choices: (take: [...])`) added: it replays the schedule's run by itself.
    pub fn scenario(&self, schedule: &[Step]) -> Scenario {
        let mut s = self.base.clone();
        for step in schedule {
            match step {
                Step::Fault { point, choice } => {
                    let choice = &self.choices[*choice as usize];
                    s.sim.faults.push(FaultSpec {
                        at_ns: self.times_ns[*point as usize],
                        action: choice.action.clone(),
                        heal_after_ns: choice.heal_after_ns,
                        after: None,
                    });
                }
                Step::Choose { index, option, .. } => s.sim.chosen.push(Chosen {
                    index: *index,
                    option: *option,
                }),
            }
        }
        s
    }

    /// The true time a step acts at.
    pub fn step_ns(&self, step: &Step) -> Nanos {
        match step {
            Step::Fault { point, .. } => self.times_ns[*point as usize],
            Step::Choose { at_ns, .. } => *at_ns,
        }
    }

    /// The end of the window steps are placed in: a grid step after its last instant.
    pub fn horizon_ns(&self) -> Nanos {
        self.times_ns.last().map_or(0, |t| t + self.grid_ns)
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
