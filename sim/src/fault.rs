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
    /// The modeled coordination service's processes (empty for algorithms without one):
    /// every member of a clustered service.
    Service,
    /// One member of a clustered coordination service by index, counted from 0 (process
    /// `members + i`; an etcd member, a ZooKeeper server); none past the last.
    ServiceMember(u32),
    /// The live service member that leads its service ([`crate::Process::leads_service`]),
    /// with the highest term if several believe they do; none if no member leads. A
    /// single-process service is its own leader (so that `compare` can strike "the service's
    /// leader" of a single process and of a cluster alike).
    ServiceLeader,
    /// A live service member other than [`Target::ServiceLeader`], drawn from the fault
    /// stream; none if there is no other (always none for a single-process service).
    ServiceFollower,
    /// Every live service member other than [`Target::ServiceLeader`] (all live members
    /// while none leads); none for a single-process service. Behind API servers (Kubernetes
    /// on etcd) the etcd members: gateways are never members.
    ServiceFollowers,
    /// A majority of the service's members (`m / 2 + 1` of `m`, crashed ones included, as
    /// for [`Target::Minority`]), drawn from the fault stream: the service's leader is among
    /// them or not as the draw falls. What is left is a minority, so striking them takes
    /// the service's quorum. A single-process service is its own majority; behind API
    /// servers, a majority of the etcd members.
    ServiceQuorum,
    /// The service process the current election leader talks to
    /// ([`crate::Process::service_member_used`]): the single service process, the etcd
    /// member its client is connected to, the ZooKeeper server its session is on, the API
    /// server its Kubernetes elector uses. None if nobody leads. One fault can so strike
    /// "the leader's service" of designs on different services alike.
    ServiceOfLeader,
    /// Every member that is crashed when the fault fires (for `Restart`).
    AllCrashed,
    /// Every member.
    All,
}

impl Target {
    /// Whether it names processes of the coordination service (`Service` and the targets
    /// that name one of its members).
    pub fn is_service(&self) -> bool {
        matches!(
            self,
            Target::Service
                | Target::ServiceMember(_)
                | Target::ServiceLeader
                | Target::ServiceFollower
                | Target::ServiceFollowers
                | Target::ServiceQuorum
                | Target::ServiceOfLeader
        )
    }
}

/// A membership change a member is asked to propose (the `ConfChange` fault): which member
/// changes, and how. Members are the scenario's (`0..n`); a change names one of them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum MemberChange {
    /// Add the member as a voter.
    Add(u32),
    /// Remove the member from the configuration.
    Remove(u32),
    /// Add the member as a learner (a non-voting member that receives the log).
    AddLearner(u32),
    /// Make a learner a voter.
    Promote(u32),
}

impl MemberChange {
    /// Every operation's protocol name, in declaration order.
    pub const OPS: [&'static str; 4] = ["add", "remove", "add_learner", "promote"];

    /// The operation's name on the step protocol's `conf_change` event (`add`, `remove`,
    /// `add_learner`, `promote`).
    pub fn op(&self) -> &'static str {
        match self {
            MemberChange::Add(_) => Self::OPS[0],
            MemberChange::Remove(_) => Self::OPS[1],
            MemberChange::AddLearner(_) => Self::OPS[2],
            MemberChange::Promote(_) => Self::OPS[3],
        }
    }

    /// The member the change is about.
    pub fn member(&self) -> u32 {
        match self {
            MemberChange::Add(m)
            | MemberChange::Remove(m)
            | MemberChange::AddLearner(m)
            | MemberChange::Promote(m) => *m,
        }
    }

    /// The change of operation `op` (a name of [`MemberChange::OPS`]) about `member`.
    pub fn from_op(op: &str, member: u32) -> Option<MemberChange> {
        Some(match op {
            "add" => MemberChange::Add(member),
            "remove" => MemberChange::Remove(member),
            "add_learner" => MemberChange::AddLearner(member),
            "promote" => MemberChange::Promote(member),
            _ => return None,
        })
    }
}

/// `remove 2`: the operation's protocol name and the member (the trace's `what` column).
impl std::fmt::Display for MemberChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.op(), self.member())
    }
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
    /// A membership change: the target (the leader, as a rule) is asked to propose it. Only
    /// external nodes act on it (the `conf_change` event of the step protocol); the
    /// scenario's members stay the processes that run, and liveness is judged against them.
    ConfChange(Target, MemberChange),
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

    /// The same fault with its length (a pause's, suspend's or stall's duration, a clock
    /// step, a slow disk's fsync time) longer by `extra_ns`; a clock step moves towards the
    /// positive. Faults without a length are returned unchanged.
    pub fn lengthened(&self, extra_ns: Nanos) -> FaultAction {
        let mut action = self.clone();
        match &mut action {
            FaultAction::Pause(_, d)
            | FaultAction::Suspend(_, d)
            | FaultAction::Stall(_, d)
            | FaultAction::SlowDisk(_, d) => *d = d.saturating_add(extra_ns),
            FaultAction::ClockJump(_, d) => {
                *d = d.saturating_add(i64::try_from(extra_ns).unwrap_or(i64::MAX))
            }
            _ => {}
        }
        action
    }

    /// Whether the fault has a length [`FaultAction::lengthened`] changes.
    pub fn has_length(&self) -> bool {
        matches!(
            self,
            FaultAction::Pause(..)
                | FaultAction::Suspend(..)
                | FaultAction::Stall(..)
                | FaultAction::SlowDisk(..)
                | FaultAction::ClockJump(..)
        )
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
            | FaultAction::Resign(t)
            | FaultAction::ConfChange(t, _) => vec![t],
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
            FaultAction::ConfChange(..) => "conf_change",
            FaultAction::Loss(_) => "loss",
            FaultAction::Duplicate(_) => "duplicate",
            FaultAction::SlowDisk(..) => "slow_disk",
        }
    }
}

/// One scheduled fault.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultSpec {
    /// True time the fault fires; with a trigger (`after`), the time from which the trigger
    /// counts: the fault fires no earlier.
    pub at_ns: Nanos,
    /// What it does, and to whom.
    pub action: FaultAction,
    /// Undo the fault this long after it struck (restart, heal, restore).
    pub heal_after_ns: Option<Nanos>,
    /// Fire after something the run does instead of at `at_ns`: once, when the trigger has
    /// happened (docs/engine.md, "Faults triggered by events"). `None`: at `at_ns`. Left out
    /// of the serialized form when `None`, so that what was written before triggers is
    /// unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Trigger>,
}

/// What a triggered fault waits for: the `nth` time, counted from the fault's `at`, that a
/// process matching `by` does `event` in one handler call; the fault fires `delay_ns` after
/// that handler (0: right after it, before any other event).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Trigger {
    /// What must happen.
    pub event: TriggerEvent,
    /// Who must do it.
    pub by: Actor,
    /// Which occurrence fires the fault: 1 for the first. A handler call counts once however
    /// many times it does the event (a heartbeat round to four followers is one).
    pub nth: u32,
    /// How long after that handler the fault fires.
    pub delay_ns: Nanos,
}

/// Something a process does in a handler call, that a [`Trigger`] waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum TriggerEvent {
    /// It asked to send a message of this type (its name in the trace, [`crate::Names`]),
    /// whether the message leaves at once or waits for a disk, a processing time or a stall.
    Sent(String),
    /// It gave a signal of this kind ([`crate::Ctx::signal`]).
    Signal(crate::process::SignalKind),
    /// It claimed leadership ([`crate::Ctx::became_leader`]).
    BecameLeader,
    /// It stepped down ([`crate::Ctx::stepped_down`]).
    SteppedDown,
    /// It made a user observation of this name ([`crate::Ctx::observe`]).
    Observed(String),
}

/// Which process a [`Trigger`] watches.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Actor {
    /// Any process, the coordination service's included.
    Any,
    /// One member by index.
    Node(u32),
    /// The member the oracle sees as leader right after the handler ([`Target::Leader`]); where
    /// one step runs several handlers (a fault's restarts, the start), once they all ran.
    Leader,
    /// A member that is not the leader then.
    Follower,
}

impl Trigger {
    /// The trigger as people read it: `n1 sends RequestVoteResp`, with the occurrence
    /// (`for the 2nd time`) when it is not the first.
    pub fn describe(&self) -> String {
        let who = match self.by {
            Actor::Any => "any process".to_string(),
            Actor::Node(i) => format!("n{i}"),
            Actor::Leader => "the leader".to_string(),
            Actor::Follower => "a follower".to_string(),
        };
        let nth = match self.nth {
            1 => String::new(),
            n => format!(" for the {} time", ordinal(n)),
        };
        format!("{who} {}{nth}", self.event.describe(true))
    }
}

impl TriggerEvent {
    /// `sends RequestVoteResp` (present) or `sent RequestVoteResp` (past).
    pub fn describe(&self, present: bool) -> String {
        let verb = |now: &str, then: &str| if present { now } else { then }.to_string();
        match self {
            TriggerEvent::Sent(kind) => format!("{} {kind}", verb("sends", "sent")),
            TriggerEvent::Signal(kind) => format!("{} {kind:?}", verb("signals", "signalled")),
            TriggerEvent::BecameLeader => verb("becomes leader", "became leader"),
            TriggerEvent::SteppedDown => verb("steps down", "stepped down"),
            TriggerEvent::Observed(name) => format!("{} `{name}`", verb("observes", "observed")),
        }
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, ..., `11th`, `21st`.
pub(crate) fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl FaultSpec {
    /// The true time by which the fault has healed; `None` if it never heals by itself. For a
    /// triggered fault (`after`), counted from `at_ns`: the earliest it can have healed.
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

/// How far above its lower bound each ranged quantity of one explicit fault may land: a
/// fault written `at: "20s..40s"` has `at_ns` 20 s and a spread `at_ns` of 20 s. Each seed
/// draws where in its range every quantity lands ([`FaultSpread::draw`]), uniformly, from the
/// fault's own stream ([`StreamId::fault_draws`](crate::StreamId::fault_draws)).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultSpread {
    /// Of the time the fault fires.
    pub at_ns: Nanos,
    /// Of `heal_after`.
    pub heal_after_ns: Nanos,
    /// Of the fault's length ([`FaultAction::lengthened`]).
    pub length_ns: Nanos,
    /// Of its trigger's delay ([`Trigger::delay_ns`]).
    pub delay_ns: Nanos,
}

impl FaultSpread {
    /// No range: every quantity as written.
    pub const FIXED: FaultSpread = FaultSpread {
        at_ns: 0,
        heal_after_ns: 0,
        length_ns: 0,
        delay_ns: 0,
    };

    /// Whether every quantity is as written.
    pub fn is_fixed(&self) -> bool {
        *self == Self::FIXED
    }

    /// `fault` (its quantities at their lower bounds) as seed `seed` runs it, being explicit
    /// fault `index`: each quantity a uniform draw in its range, in nanoseconds, both ends
    /// included. Four draws from the fault's own stream, `at`, `heal_after`, length, a
    /// trigger's delay, always in that order (a fixed quantity draws too), so that one range
    /// never moves another (the delay came last: the first three are what they were before).
    pub fn draw(&self, fault: &FaultSpec, seed: u64, index: usize) -> FaultSpec {
        let mut rng = crate::rng::SimRng::stream(seed, crate::rng::StreamId::fault_draws(index));
        let at_extra = rng.between(0, self.at_ns);
        let heal_extra = rng.between(0, self.heal_after_ns);
        let length_extra = rng.between(0, self.length_ns);
        let delay_extra = rng.between(0, self.delay_ns);
        let after = fault.after.clone().map(|trigger| Trigger {
            delay_ns: trigger.delay_ns.saturating_add(delay_extra),
            ..trigger
        });
        FaultSpec {
            at_ns: fault.at_ns.saturating_add(at_extra),
            action: fault.action.lengthened(length_extra),
            heal_after_ns: fault.heal_after_ns.map(|h| h.saturating_add(heal_extra)),
            after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn pause() -> FaultSpec {
        FaultSpec {
            at_ns: 20 * S,
            action: FaultAction::Crash(Target::Leader),
            heal_after_ns: Some(3 * S),
            after: None,
        }
    }

    #[test]
    fn a_seed_draws_the_same_values_every_time_and_seeds_spread_over_the_range() {
        let spread = FaultSpread {
            at_ns: 20 * S,
            heal_after_ns: 5 * S,
            length_ns: 0,
            delay_ns: 0,
        };
        let fault = pause();
        assert_eq!(spread.draw(&fault, 7, 0), spread.draw(&fault, 7, 0));
        let ats: Vec<Nanos> = (1..=200)
            .map(|seed| spread.draw(&fault, seed, 0).at_ns)
            .collect();
        assert!(ats.iter().all(|at| (20 * S..=40 * S).contains(at)));
        let low = ats.iter().filter(|at| **at < 25 * S).count();
        let high = ats.iter().filter(|at| **at > 35 * S).count();
        assert!(low > 20 && high > 20, "{low} low, {high} high of 200");
        let heals: Vec<Nanos> = (1..=200)
            .map(|seed| spread.draw(&fault, seed, 0).heal_after_ns.unwrap())
            .collect();
        assert!(heals.iter().all(|h| (3 * S..=8 * S).contains(h)));
        assert_ne!(heals.iter().min(), heals.iter().max());
    }

    #[test]
    fn a_fixed_spread_draws_the_fault_as_written_and_lengths_lengthen() {
        let fault = pause();
        assert_eq!(FaultSpread::FIXED.draw(&fault, 3, 1), fault);
        let stall = FaultAction::Stall(Target::Leader, 3 * S);
        assert_eq!(
            stall.lengthened(S),
            FaultAction::Stall(Target::Leader, 4 * S)
        );
        let jump = FaultAction::ClockJump(Target::Leader, -3 * S as i64);
        assert_eq!(
            jump.lengthened(S),
            FaultAction::ClockJump(Target::Leader, -2 * S as i64)
        );
    }
}
