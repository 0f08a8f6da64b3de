//! Scripted faults from Rust: a scenario built with methods (crash, restart, partition, heal,
//! pause, stall, clock jumps, loss...), for regression tests of the cases you know, next to
//! the random nemesis. The builder writes the scenario text and reads it back through the same
//! loader as a file, so every rule of a scenario file holds, with the same errors.
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
    faults: Vec<String>,
    extra: Vec<String>,
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
        let mut line = format!("(at: {}, do: {what}", ns(at));
        if let Some(heal) = heal_after {
            let _ = write!(line, ", heal_after: {}", ns(heal));
        }
        line.push(')');
        self.faults.push(line);
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
        if !self.faults.is_empty() {
            let _ = writeln!(
                text,
                "    faults: [\n        {},\n    ],",
                self.faults.join(",\n        ")
            );
        }
        text.push_str(")\n");
        text
    }

    /// The scenario, checked as a scenario file is.
    pub fn build(&self) -> Result<Scenario, HarnessError> {
        scenario::parse(&self.to_ron(), &format!("{}.ron", self.name))
            .map_err(|e| HarnessError::Scenario(Box::new(e)))
    }
}
