//! Scripted faults from Rust: a scenario built with methods (crash, restart, partition, heal,
//! pause, stall, clock jumps, loss...), for regression tests of the cases you know, next to
//! the random nemesis. The builder writes the scenario text and reads it back through the same
//! loader as a file, so every rule of a scenario file holds, with the same errors.
//!
//! A fault fires at its time, or, followed by [`Scripted::after`], after something the run does
//! ([`After`]: a node sends a message type, gives a signal, becomes leader...), its time then
//! the earliest it may fire (docs/engine.md, "Faults triggered by events").
//!
//! ```
//! use splitbrain_harness::scripted::{Scripted, Target};
//! use splitbrain_harness::AlgorithmConfig;
//! use std::time::Duration;
//!
//! let s = |secs| Duration::from_secs(secs);
//! let scenario = Scripted::new(AlgorithmConfig::default_named("raft").unwrap())
//!     .nodes(5)
//!     .duration(s(30))
//!     .crash(s(5), Target::Leader, Some(s(2)))
//!     .isolate(s(10), Target::Leader, Some(s(3)))
//!     .stall(s(15), Target::Leader, s(4))
//!     .clock_jump(s(20), Target::Node(2), -3_000_000_000)
//!     .build()
//!     .unwrap();
//! assert_eq!(scenario.sim.faults.len(), 4);
//! let result = splitbrain_harness::Hunt::scenario(scenario).seeds(4).run();
//! result.assert_safe();
//! ```

use crate::HarnessError;
use splitbrain_algorithms::AlgorithmConfig;
use splitbrain_scenario::{self as scenario, Scenario};
use std::fmt::Write as _;
use std::time::Duration;

/// Which process a fault strikes, resolved when it fires (the engine's own type: `Leader`,
/// `Follower`, `Node(i)`, `Random`, `Minority`, `Service`, `AllCrashed`, `All`).
pub use splitbrain_sim::Target;

/// Which process a trigger watches: `Any`, `Node(i)`, `Leader`, `Follower`.
pub use splitbrain_sim::{Actor, SignalKind};

/// What a triggered fault waits for ([`Scripted::after`]): the event, and optionally who does
/// it ([`After::by`], any process by default), which occurrence ([`After::nth`], the first by
/// default) and how long after it the fault fires ([`After::delay`], right after the handler
/// by default). `After::sent("AppendEntries").by(Actor::Leader).nth(3)`: after the leader's
/// third heartbeat round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct After {
    /// The event as a scenario writes it (`Sent("RequestVote")`).
    event: String,
    by: Actor,
    nth: u32,
    delay: Duration,
}

impl After {
    fn on(event: String) -> Self {
        After {
            event,
            by: Actor::Any,
            nth: 1,
            delay: Duration::ZERO,
        }
    }

    /// After a handler that asks to send a message of type `kind` (its name in the trace).
    pub fn sent(kind: &str) -> Self {
        Self::on(format!("Sent({kind:?})"))
    }

    /// After a handler that gives a signal of this kind.
    pub fn signal(kind: SignalKind) -> Self {
        Self::on(format!("Signal({kind:?})"))
    }

    /// After a handler that claims leadership.
    pub fn became_leader() -> Self {
        Self::on("BecameLeader".into())
    }

    /// After a handler that steps down.
    pub fn stepped_down() -> Self {
        Self::on("SteppedDown".into())
    }

    /// After a handler that makes a user observation of this name (`Ctx::observe`).
    pub fn observed(name: &str) -> Self {
        Self::on(format!("Observed({name:?})"))
    }

    /// Only handlers of `actor` count.
    pub fn by(mut self, actor: Actor) -> Self {
        self.by = actor;
        self
    }

    /// The fault fires after the `nth` occurrence (from 1), not the first.
    pub fn nth(mut self, nth: u32) -> Self {
        self.nth = nth;
        self
    }

    /// The fault fires this long after the occurrence.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// As a scenario writes it: `(event: Sent("RequestVote"), by: Node(0), nth: 1, delay: ...)`.
    fn ron(&self) -> String {
        let by = match self.by {
            Actor::Any => "Any".to_string(),
            Actor::Node(i) => format!("Node({i})"),
            Actor::Leader => "Leader".to_string(),
            Actor::Follower => "Follower".to_string(),
        };
        format!(
            "(event: {}, by: {by}, nth: {}, delay: {})",
            self.event,
            self.nth,
            ns(self.delay)
        )
    }
}

/// `target` as a scenario writes it (`Node(2)`).
fn ron(target: &Target) -> String {
    // Plain enum data: nothing fails to serialize.
    ron::to_string(target).unwrap_or_default()
}

/// A scenario under construction: the algorithm, the cluster, and faults at given times.
#[derive(Clone, Debug)]
pub struct Scripted {
    name: String,
    algorithm: String,
    nodes: u64,
    duration: Duration,
    seed: u64,
    faults: Vec<FaultLine>,
    extra: Vec<String>,
    /// A trigger given before any fault ([`Scripted::after`]): `build` refuses it.
    stray_after: bool,
}

/// One fault as a scenario writes it, in parts: its trigger goes between `at` and `do`.
#[derive(Clone, Debug)]
struct FaultLine {
    at: Duration,
    what: String,
    heal_after: Option<Duration>,
    after: Option<After>,
}

impl FaultLine {
    fn ron(&self) -> String {
        let mut line = format!("(at: {}", ns(self.at));
        if let Some(after) = &self.after {
            let _ = write!(line, ", after: {}", after.ron());
        }
        let _ = write!(line, ", do: {}", self.what);
        if let Some(heal) = self.heal_after {
            let _ = write!(line, ", heal_after: {}", ns(heal));
        }
        line.push(')');
        line
    }
}

fn ns(d: Duration) -> String {
    format!("\"{}ns\"", d.as_nanos())
}

impl Scripted {
    /// A scenario of `algorithm` (any registered one): 3 nodes, 60 s, seed 1, no faults.
    pub fn new(algorithm: AlgorithmConfig) -> Self {
        Scripted {
            name: "scripted".into(),
            algorithm: scenario::algorithm_line(&algorithm),
            nodes: 3,
            duration: Duration::from_secs(60),
            seed: 1,
            faults: Vec::new(),
            extra: Vec::new(),
            stray_after: false,
        }
    }

    /// The scenario's name (it names reproducers).
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }

    /// The number of election members.
    pub fn nodes(mut self, nodes: u64) -> Self {
        self.nodes = nodes;
        self
    }

    /// How long the run lasts, in simulated time.
    pub fn duration(mut self, duration: Duration) -> Self {
        self.duration = duration;
        self
    }

    /// The seed of a single run (a hunt sets its own).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Any other top-level field, as a scenario file writes it: `network: (loss: 0.01)`.
    pub fn field(mut self, ron: &str) -> Self {
        self.extra.push(ron.into());
        self
    }

    fn fault(mut self, at: Duration, what: String, heal_after: Option<Duration>) -> Self {
        self.faults.push(FaultLine {
            at,
            what,
            heal_after,
            after: None,
        });
        self
    }

    /// Makes the fault added last wait for `trigger`: it fires once, after the trigger's
    /// occurrence (and its delay), and no earlier than its own time; `heal_after` then counts
    /// from when it fired, and its targets resolve then. Given before any fault,
    /// [`Scripted::build`] refuses the scenario ([`HarnessError::AfterWithoutFault`]).
    ///
    /// ```
    /// use splitbrain_algorithms::raft::{RaftConfig, RaftVariant};
    /// use splitbrain_harness::scripted::{Actor, After, Scripted, Target};
    /// use splitbrain_harness::{AlgorithmConfig, Hunt};
    /// use std::time::Duration;
    ///
    /// let ms = Duration::from_millis;
    /// // Raft whose nodes forget their vote on a restart. Node 0's clock runs four times fast,
    /// // so that it campaigns first; its link to node 2 is cut as it asks for votes, so that
    /// // node 2 later campaigns for the same term. Node 1 is crashed right after it grants its
    /// // vote, and restarted 20 ms later: it has forgotten, and votes again.
    /// let raft = AlgorithmConfig::from(RaftConfig {
    ///     variant: RaftVariant::ForgetsVoteOnRestart,
    ///     ..RaftConfig::default()
    /// });
    /// let scenario = Scripted::new(raft)
    ///     .nodes(3)
    ///     .duration(Duration::from_secs(1))
    ///     .field("clocks: (nodes: [(node: 0, drift_ppm: 3000000)])")
    ///     .cut_link(ms(0), Target::Node(0), Target::Node(2), None)
    ///     .after(After::sent("RequestVote").by(Actor::Node(0)))
    ///     .crash(ms(0), Target::Node(1), Some(ms(20)))
    ///     .after(After::sent("RequestVoteResp").by(Actor::Node(1)))
    ///     .build()
    ///     .unwrap();
    /// assert!(scenario.sim.faults.iter().all(|f| f.after.is_some()));
    /// let found = Hunt::scenario(scenario)
    ///     .seeds(1)
    ///     .shrink(false)
    ///     .out_dir(std::env::temp_dir().join("splitbrain-scripted-after-doc"))
    ///     .run();
    /// found.assert_found("election_safety");
    /// ```
    pub fn after(mut self, trigger: After) -> Self {
        match self.faults.last_mut() {
            Some(fault) => fault.after = Some(trigger),
            None => self.stray_after = true,
        }
        self
    }

    /// Crashes `target` at `at`; restarts it `heal_after` later if given.
    pub fn crash(self, at: Duration, target: Target, heal_after: Option<Duration>) -> Self {
        self.fault(at, format!("Crash({})", ron(&target)), heal_after)
    }

    /// Restarts a crashed `target` at `at` with only its durable state.
    pub fn restart(self, at: Duration, target: Target) -> Self {
        self.fault(at, format!("Restart({})", ron(&target)), None)
    }

    /// Freezes `target` between two handlers for `pause`.
    pub fn pause(self, at: Duration, target: Target, pause: Duration) -> Self {
        self.fault(at, format!("Pause({}, {})", ron(&target), ns(pause)), None)
    }

    /// Freezes `target` for `pause` with its monotonic clock standing still (a VM suspend).
    pub fn suspend(self, at: Duration, target: Target, pause: Duration) -> Self {
        self.fault(
            at,
            format!("Suspend({}, {})", ron(&target), ns(pause)),
            None,
        )
    }

    /// Freezes `target` inside its next handler for `pause`: the decision is taken on time,
    /// its effects leave late (the check-then-act race of a GC pause).
    pub fn stall(self, at: Duration, target: Target, pause: Duration) -> Self {
        self.fault(at, format!("Stall({}, {})", ron(&target), ns(pause)), None)
    }

    /// Cuts `target` off from everyone else; heals the cut `heal_after` later if given.
    pub fn isolate(self, at: Duration, target: Target, heal_after: Option<Duration>) -> Self {
        self.fault(
            at,
            format!("Partition(Isolate({}))", ron(&target)),
            heal_after,
        )
    }

    /// Splits the members into `groups` (member indices) that talk only within themselves.
    pub fn partition(self, at: Duration, groups: &[&[u32]], heal_after: Option<Duration>) -> Self {
        let groups: Vec<String> = groups.iter().map(|g| format!("{g:?}")).collect();
        self.fault(
            at,
            format!("Partition(Groups([{}]))", groups.join(", ")),
            heal_after,
        )
    }

    /// Cuts the one link between `a` and `b`, both ways.
    pub fn cut_link(
        self,
        at: Duration,
        a: Target,
        b: Target,
        heal_after: Option<Duration>,
    ) -> Self {
        self.fault(
            at,
            format!("Partition(CutLink({}, {}))", ron(&a), ron(&b)),
            heal_after,
        )
    }

    /// Loses messages from `from` to `to` (one way).
    pub fn one_way(
        self,
        at: Duration,
        from: Target,
        to: Target,
        heal_after: Option<Duration>,
    ) -> Self {
        let shape = format!("Partition(OneWay(from: {}, to: {}))", ron(&from), ron(&to));
        self.fault(at, shape, heal_after)
    }

    /// Removes every partition and restores loss and duplication.
    pub fn heal(self, at: Duration) -> Self {
        self.fault(at, "Heal".into(), None)
    }

    /// Steps `target`'s wall clock by `step_ns` (negative: back).
    pub fn clock_jump(self, at: Duration, target: Target, step_ns: i64) -> Self {
        self.fault(
            at,
            format!("ClockJump({}, \"{step_ns}ns\")", ron(&target)),
            None,
        )
    }

    /// Sets the drift of `target`'s clocks, in parts per million.
    pub fn clock_drift(
        self,
        at: Duration,
        target: Target,
        ppm: i64,
        heal_after: Option<Duration>,
    ) -> Self {
        self.fault(
            at,
            format!("ClockDrift({}, {ppm})", ron(&target)),
            heal_after,
        )
    }

    /// Loses each message with probability `p` on every link.
    pub fn loss(self, at: Duration, p: f64, heal_after: Option<Duration>) -> Self {
        self.fault(at, format!("Loss({p:?})"), heal_after)
    }

    /// Delivers each message twice with probability `p`.
    pub fn duplicate(self, at: Duration, p: f64, heal_after: Option<Duration>) -> Self {
        self.fault(at, format!("Duplicate({p:?})"), heal_after)
    }

    /// Makes every fsync of `target`'s disk take `fsync`.
    pub fn slow_disk(
        self,
        at: Duration,
        target: Target,
        fsync: Duration,
        heal_after: Option<Duration>,
    ) -> Self {
        self.fault(
            at,
            format!("SlowDisk({}, {})", ron(&target), ns(fsync)),
            heal_after,
        )
    }

    /// The leader hands leadership on (planned handover).
    pub fn resign(self, at: Duration, target: Target) -> Self {
        self.fault(at, format!("Resign({})", ron(&target)), None)
    }

    /// The scenario as a scenario file writes it.
    pub fn to_ron(&self) -> String {
        let mut text = format!(
            "Scenario(\n    name: {:?},\n    seed: {},\n    duration: {},\n    nodes: {},\n    algorithm: {},\n",
            self.name,
            self.seed,
            ns(self.duration),
            self.nodes,
            self.algorithm
        );
        for extra in &self.extra {
            let _ = writeln!(text, "    {extra},");
        }
        let lines: Vec<String> = self.faults.iter().map(FaultLine::ron).collect();
        if !lines.is_empty() {
            let _ = writeln!(
                text,
                "    faults: [\n        {},\n    ],",
                lines.join(",\n        ")
            );
        }
        text.push_str(")\n");
        text
    }

    /// The scenario, checked as a scenario file is.
    pub fn build(&self) -> Result<Scenario, HarnessError> {
        if self.stray_after {
            return Err(HarnessError::AfterWithoutFault);
        }
        scenario::parse(&self.to_ron(), &format!("{}.ron", self.name))
            .map_err(|e| HarnessError::Scenario(Box::new(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raft() -> Scripted {
        Scripted::new(AlgorithmConfig::default_named("raft").unwrap())
    }

    #[test]
    fn a_trigger_is_written_between_the_time_and_the_fault() {
        let s = Duration::from_secs;
        let text = raft()
            .pause(s(2), Target::Leader, s(1))
            .after(
                After::sent("AppendEntries")
                    .by(Actor::Leader)
                    .nth(3)
                    .delay(Duration::from_millis(10)),
            )
            .to_ron();
        assert!(
            text.contains(
                r#"(at: "2000000000ns", after: (event: Sent("AppendEntries"), by: Leader, nth: 3, delay: "10000000ns"), do: Pause(Leader, "1000000000ns"))"#
            ),
            "{text}"
        );
        let scenario = raft()
            .crash(s(1), Target::Leader, None)
            .after(After::signal(SignalKind::ElectionStarted).by(Actor::Node(2)))
            .build()
            .unwrap();
        assert_eq!(
            scenario.sim.faults[0].after.as_ref().map(|t| t.by),
            Some(Actor::Node(2))
        );
    }

    #[test]
    fn a_trigger_before_any_fault_is_refused() {
        let refused = raft().after(After::became_leader()).build();
        assert!(matches!(refused, Err(HarnessError::AfterWithoutFault)));
    }
}
