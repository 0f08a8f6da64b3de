//! The validated settings of external nodes: what every part of a run reads.

use super::checks::Check;
use super::stderr::Stderr;
use serde::{Deserialize, Serialize};
use splitbrain_sim::Nanos;

/// How many live members that talk to each other the nodes need to elect a leader. The
/// liveness check judges a run only when at least that many are live and connected (fewer
/// cannot elect, so their silence is no failure), and a shrink that leaves fewer keeps no
/// failure.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Quorum {
    /// A majority of the members (Raft, ZAB, Paxos): the default.
    #[default]
    Majority,
    /// Any one member can elect itself (Bully, a lock through a service).
    Any,
    /// At least this many members, from 1 to the number of members.
    AtLeast(u32),
}

impl Quorum {
    /// The smallest group of `members` members that can elect.
    pub fn of(self, members: usize) -> usize {
        match self {
            Quorum::Majority => members / 2 + 1,
            Quorum::Any => 1,
            Quorum::AtLeast(n) => (n as usize).clamp(1, members.max(1)),
        }
    }
}

/// The validated settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExternalConfig {
    /// The program every member runs, and its arguments (relative paths: from the directory
    /// splitbrain runs in).
    pub command: Vec<String>,
    /// The shortest interval at which a node acts on its own timers: the basis of the events
    /// estimate and of `sweep`'s phases (default 100 ms).
    pub heartbeat_ns: Nanos,
    /// How long the nodes may take to notice a dead leader and elect another: liveness
    /// allows ten times this after the last fault (default ten heartbeats).
    pub failure_detection_ns: Nanos,
    /// The longest real time a node may stay silent while its answer to an event is awaited
    /// (default 10 s): a node silent that long is hung.
    pub deadline_ns: Nanos,
    /// Whether a restart starts a new process (default: the same process gets `init` again).
    pub fresh_process: bool,
    /// Where the nodes' stderr goes.
    pub stderr: Stderr,
    /// Safety properties of the user's own over the nodes' observations, checked at every
    /// event ([`Check`]).
    pub properties: Vec<Check>,
    /// How many members it takes to elect (default: a majority).
    pub quorum: Quorum,
    /// The command of a version known to be right (the fixed release of a library whose
    /// bug the hunt looks for): a `hunt` counts a failure, and its shrinker keeps a step,
    /// only if this command passes the same schedule.
    pub reference: Option<Vec<String>>,
}

/// The heartbeat when none is written.
pub const DEFAULT_HEARTBEAT_NS: Nanos = 100_000_000;
/// The deadline per event when none is written.
pub const DEFAULT_DEADLINE_NS: Nanos = 10_000_000_000;

impl Default for ExternalConfig {
    fn default() -> Self {
        Self {
            command: Vec::new(),
            heartbeat_ns: DEFAULT_HEARTBEAT_NS,
            failure_detection_ns: 10 * DEFAULT_HEARTBEAT_NS,
            deadline_ns: DEFAULT_DEADLINE_NS,
            fresh_process: false,
            stderr: Stderr::Keep,
            properties: Vec::new(),
            quorum: Quorum::Majority,
            reference: None,
        }
    }
}
