//! Where one fault strikes, and the fault each kind makes.

use super::{NemesisKind, NemesisTargets, Rates};
use crate::fault::{FaultAction, FaultSpec, MemberChange, PartitionShape, Target};
use crate::rng::SimRng;
use crate::time::Nanos;

/// A node target: mostly the leader (the interesting case), else followers and anyone, and
/// with `strike.service` the coordination service (of a clustered one, its leader or a
/// follower, drawn alike). A member target becomes the leader or a follower when the
/// nemesis's `targets` says so; the draws stay the same.
fn node_target(strike: &Strike, rng: &mut SimRng) -> Target {
    let drawn = drawn_target(strike, rng);
    match strike.targets {
        _ if drawn.is_service() => drawn,
        NemesisTargets::Any => drawn,
        NemesisTargets::Leader => Target::Leader,
        NemesisTargets::Followers => Target::Follower,
    }
}

fn drawn_target(strike: &Strike, rng: &mut SimRng) -> Target {
    match rng.below(if strike.service { 12 } else { 10 }) {
        0..=3 => Target::Leader,
        4..=6 => Target::Follower,
        7..=8 => Target::Random,
        9 => Target::Node(rng.below(strike.members as u64) as u32),
        10 if strike.clustered_service => Target::ServiceLeader,
        _ if strike.clustered_service => Target::ServiceFollower,
        _ => Target::Service,
    }
}

impl NemesisKind {
    /// Whether the kind may strike the coordination service. Without swarm mode, only the
    /// kinds that did before swarm mode reached every fault (so those schedules stay the same
    /// seed for seed); in swarm mode, every kind that strikes one process.
    pub(super) fn strikes_service(self, swarm: bool) -> bool {
        let before = matches!(
            self,
            NemesisKind::Crash
                | NemesisKind::Pause
                | NemesisKind::Suspend
                | NemesisKind::Stall
                | NemesisKind::Isolate
                | NemesisKind::ClockJump
                | NemesisKind::ClockDrift
        );
        let since = matches!(
            self,
            NemesisKind::OneWay | NemesisKind::CutLink | NemesisKind::SlowDisk
        );
        before || (swarm && since)
    }
}

/// Where and when one fault strikes.
pub(super) struct Strike {
    pub(super) at_ns: Nanos,
    pub(super) lasts_ns: Nanos,
    pub(super) members: usize,
    /// Which members single-node faults strike.
    pub(super) targets: NemesisTargets,
    /// Whether it may strike the coordination service.
    pub(super) service: bool,
    /// Whether that service runs as several processes.
    pub(super) clustered_service: bool,
}

impl Strike {
    fn healing(&self, action: FaultAction) -> FaultSpec {
        FaultSpec {
            at_ns: self.at_ns,
            action,
            heal_after_ns: Some(self.lasts_ns),
            after: None,
        }
    }

    fn once(&self, action: FaultAction) -> FaultSpec {
        FaultSpec {
            at_ns: self.at_ns,
            action,
            heal_after_ns: None,
            after: None,
        }
    }

    fn partition(&self, shape: PartitionShape) -> FaultSpec {
        self.healing(FaultAction::Partition(shape))
    }
}

pub(super) fn fault_of(
    kind: NemesisKind,
    strike: &Strike,
    rates: &Rates,
    rng: &mut SimRng,
) -> FaultSpec {
    let target = node_target(strike, rng);
    let lasts = strike.lasts_ns;
    match kind {
        NemesisKind::Crash => strike.healing(FaultAction::Crash(target)),
        NemesisKind::CrashForGood => strike.once(FaultAction::Crash(target)),
        NemesisKind::Pause => strike.once(FaultAction::Pause(target, lasts)),
        NemesisKind::Suspend => strike.once(FaultAction::Suspend(target, lasts)),
        NemesisKind::Stall => strike.once(FaultAction::Stall(target, lasts)),
        NemesisKind::Isolate => strike.partition(PartitionShape::Isolate(target)),
        NemesisKind::MajorityMinority => strike.partition(PartitionShape::MajorityMinority(target)),
        NemesisKind::OneWay => strike.partition(PartitionShape::OneWay {
            from: target,
            to: Target::All,
        }),
        NemesisKind::CutLink => strike.partition(PartitionShape::CutLink(target, Target::Follower)),
        NemesisKind::Bridge => strike.partition(PartitionShape::Bridge(Target::Random)),
        NemesisKind::LossBurst => {
            let ppm = rng.between(1, u64::from(rates.max_loss_ppm.max(1))) as u32;
            strike.healing(FaultAction::Loss(ppm))
        }
        NemesisKind::Duplicate => {
            let ppm = rng.between(1, u64::from(rates.max_duplicate_ppm.max(1))) as u32;
            strike.healing(FaultAction::Duplicate(ppm))
        }
        NemesisKind::ClockJump => {
            let max = rates.max_clock_jump_ns.min(i64::MAX as u64) as i64;
            strike.once(FaultAction::ClockJump(
                target,
                rng.between_signed(-max, max),
            ))
        }
        NemesisKind::ClockDrift => {
            let max = i64::from(rates.max_drift_ppm.min(999_999));
            strike.healing(FaultAction::ClockDrift(
                target,
                rng.between_signed(-max, max),
            ))
        }
        NemesisKind::SlowDisk => {
            let max = rates.max_fsync_ns.max(1);
            let fsync_ns = rng.between((max / 10).max(1), max);
            strike.healing(FaultAction::SlowDisk(target, fsync_ns))
        }
        NemesisKind::Resign => strike.once(FaultAction::Resign(Target::Leader)),
        NemesisKind::ConfChange => {
            let member = rng.below(strike.members.max(1) as u64) as u32;
            let change = match rng.below(8) {
                0..=3 => MemberChange::Remove(member),
                4..=5 => MemberChange::Add(member),
                6 => MemberChange::AddLearner(member),
                _ => MemberChange::Promote(member),
            };
            strike.once(FaultAction::ConfChange(Target::Leader, change))
        }
    }
}
