//! Faults are data: what happens, to whom, when, and for how long. Verbs come in pairs
//! (crash/restart, partition/heal, pause/resume); `heal_after` undoes a fault by itself.

use crate::time::Nanos;
use serde::Serialize;

/// Who a fault strikes. Resolved when the fault fires, not when the scenario is read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Target {
    /// The live member that believes it leads, with the highest term; none if nobody leads.
    Leader,
    /// A live member that is not the leader, drawn from the fault stream.
    Follower,
    /// One member by index.
    Node(u32),
    /// A live member drawn from the fault stream.
    Random,
    /// A minority of the members (`(n - 1) / 2` of them), drawn from the fault stream.
    Minority,
    /// The modeled coordination service's processes (empty for algorithms without one).
    Service,
    /// Every member that is crashed when the fault fires (for `Restart`).
    AllCrashed,
    /// Every member.
    All,
}

/// The shape of a network partition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum PartitionShape {
    /// Explicit groups of member indices; members not listed form one more group together.
    Groups(Vec<Vec<u32>>),
    /// The target (all of it, if several nodes) on one side, everyone else on the other.
    Isolate(Target),
    /// The target plus enough others for a minority of `(n - 1) / 2`, against the majority.
    MajorityMinority(Target),
    /// Messages from `from` to `to` are lost; the other direction still works (asymmetric).
    OneWay {
        /// The senders whose messages are lost.
        from: Target,
        /// The receivers those messages were for.
        to: Target,
    },
    /// The single link between two nodes is cut both ways; every other link works.
    CutLink(Target, Target),
    /// The others split into two halves that cannot talk; the target talks to both.
    Bridge(Target),
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum FaultAction {
    /// The process stops: its timers die and messages to it are dropped.
    Crash(Target),
    /// A crashed process comes back: volatile state lost, durable state kept.
    Restart(Target),
    /// The process handles nothing for the duration; what comes due is handled at resume.
    Pause(Target, Nanos),
    /// VM suspend or live migration: a pause during which the monotonic clock stands still;
    /// at resume the wall clock has counted the suspend and the monotonic clock has not
    /// (`CLOCK_MONOTONIC` excludes suspend), so the process believes less time passed.
    Suspend(Target, Nanos),
    /// The pause strikes inside the next handler: its decision is taken on time, its effects
    /// leave at the end of the pause (the check-then-act race of a GC pause).
    Stall(Target, Nanos),
    /// Cut the network into the given shape.
    Partition(PartitionShape),
    /// Remove every partition and restore loss and duplication to the configured rates.
    Heal,
    /// Step the target's wall clock by a signed amount of nanoseconds (its monotonic clock,
    /// and with it its timers, does not move).
    ClockJump(Target, i64),
    /// Set the drift of the target's clocks (both), in parts per million.
    ClockDrift(Target, i64),
    /// Planned handover: the leader hands leadership on (transfer, revoke, release).
    Resign(Target),
    /// Set the loss probability of every link, in parts per million.
    Loss(u32),
    /// Set the duplication probability of every link, in parts per million.
    Duplicate(u32),
    /// Every fsync of the target's disk takes this long (a failing or saturated disk, a noisy
    /// neighbour), until the fault heals (`heal_after`) or for the rest of the run.
    SlowDisk(Target, Nanos),
}

impl FaultAction {
    /// Whether `heal_after` means something for this fault.
    pub fn can_heal(&self) -> bool {
        matches!(
            self,
            FaultAction::Crash(_)
                | FaultAction::Partition(_)
                | FaultAction::ClockDrift(..)
                | FaultAction::Loss(_)
                | FaultAction::Duplicate(_)
                | FaultAction::SlowDisk(..)
        )
    }

    /// How long the fault lasts by itself, if it has a built-in duration.
    pub fn built_in_duration(&self) -> Option<Nanos> {
        match self {
            FaultAction::Pause(_, d) | FaultAction::Suspend(_, d) | FaultAction::Stall(_, d) => {
                Some(*d)
            }
            _ => None,
        }
    }

    /// How long a wall clock stepped back takes to read again what it read before the step:
    /// until then whatever the node times by the time of day lags behind (true time, at the
    /// clock's nominal rate). `None` for anything but a backward `ClockJump`.
    pub fn clock_catch_up_ns(&self) -> Option<Nanos> {
        match self {
            FaultAction::ClockJump(_, delta) if *delta < 0 => Some(delta.unsigned_abs()),
            _ => None,
        }
    }

    /// Every target the fault names, partition shapes included (`Groups` names indices, not
    /// targets, and so has none).
    pub fn targets(&self) -> Vec<&Target> {
        match self {
            FaultAction::Crash(t)
            | FaultAction::Restart(t)
            | FaultAction::Pause(t, _)
            | FaultAction::Suspend(t, _)
            | FaultAction::Stall(t, _)
            | FaultAction::ClockJump(t, _)
            | FaultAction::ClockDrift(t, _)
            | FaultAction::SlowDisk(t, _)
            | FaultAction::Resign(t) => vec![t],
            FaultAction::Partition(shape) => match shape {
                PartitionShape::Groups(_) => Vec::new(),
                PartitionShape::Isolate(t)
                | PartitionShape::MajorityMinority(t)
                | PartitionShape::Bridge(t) => vec![t],
                PartitionShape::OneWay { from, to } => vec![from, to],
                PartitionShape::CutLink(a, b) => vec![a, b],
            },
            FaultAction::Heal | FaultAction::Loss(_) | FaultAction::Duplicate(_) => Vec::new(),
        }
    }

    /// A short lowercase name of the kind of fault (`crash`, `partition`, ...).
    pub fn kind_name(&self) -> &'static str {
        match self {
            FaultAction::Crash(_) => "crash",
            FaultAction::Restart(_) => "restart",
            FaultAction::Pause(..) => "pause",
            FaultAction::Suspend(..) => "suspend",
            FaultAction::Stall(..) => "stall",
            FaultAction::Partition(_) => "partition",
            FaultAction::Heal => "heal",
            FaultAction::ClockJump(..) => "clock_jump",
            FaultAction::ClockDrift(..) => "clock_drift",
            FaultAction::Resign(_) => "resign",
            FaultAction::Loss(_) => "loss",
            FaultAction::Duplicate(_) => "duplicate",
            FaultAction::SlowDisk(..) => "slow_disk",
        }
    }
}

/// One scheduled fault.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultSpec {
    /// True time the fault fires.
    pub at_ns: Nanos,
    /// What it does, and to whom.
    pub action: FaultAction,
    /// Undo the fault this long after it struck (restart, heal, restore).
    pub heal_after_ns: Option<Nanos>,
}

impl FaultSpec {
    /// The true time by which the fault has healed; `None` if it never heals by itself.
    pub fn healed_by_ns(&self) -> Option<Nanos> {
        match (
            &self.action,
            self.heal_after_ns,
            self.action.built_in_duration(),
        ) {
            (_, _, Some(d)) => Some(self.at_ns.saturating_add(d)),
            (FaultAction::ClockJump(..), _, None) => Some(
                self.at_ns
                    .saturating_add(self.action.clock_catch_up_ns().unwrap_or(0)),
            ),
            (_, Some(h), None) => Some(self.at_ns.saturating_add(h)),
            (FaultAction::Crash(_), None, None) | (FaultAction::Partition(_), None, None) => None,
            (
                FaultAction::Loss(_) | FaultAction::Duplicate(_) | FaultAction::SlowDisk(..),
                None,
                None,
            ) => None,
            _ => Some(self.at_ns),
        }
    }
}
