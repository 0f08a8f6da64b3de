//! The runtime guard: every run is bounded in events, queued messages and memory, whatever
//! the estimate at validation said.
//!
//! Validation refuses a scenario whose estimated work is absurd, but an estimate can be far
//! off (a storm it did not foresee, a model that loops at one instant). The guard is checked
//! while the run goes: a run that outgrows any limit ends with [`LimitExceeded`], which names
//! what grew, how far, and where, instead of running for hours or exhausting memory.
//!
//! ```
//! use splitbrain_sim::limits::RunLimits;
//!
//! let limits = RunLimits::default();
//! assert_eq!(limits.max_events, 1_000_000_000);
//! let raised = RunLimits { max_events: 5_000_000_000, ..RunLimits::default() };
//! assert!(raised.max_events > limits.max_events);
//! ```

use crate::time::{format_duration, Nanos};
use serde::Serialize;

/// Events one run may handle by default: what validation's estimate lets through
/// (`MAX_EXPECTED_EVENTS` of the CLI), two to three minutes of the release binary at the
/// engine's usual 5-10 M events per second.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

/// Events and messages one run may hold queued at once by default (in flight on the network,
/// timers aside): at about 70 bytes each, under a gigabyte.
pub const DEFAULT_MAX_IN_FLIGHT: u64 = 10_000_000;

/// The bytes one run may hold by default (1 GiB): its messages in flight with their
/// bodies, its durable state and the trace it keeps in memory, counted as they grow
/// ([`RunLimits::max_memory_bytes`]). Each run of a hunt has its own, so `--jobs N` may hold
/// N times this.
pub const DEFAULT_MAX_MEMORY_BYTES: u64 = 1 << 30;

/// The bytes of messages one process may have in flight by default (256 MiB): sixteen of
/// the largest message an external node can write (a reply line is at most 16 MiB), far
/// above what any built-in model sends ([`RunLimits::max_node_in_flight_bytes`]).
pub const DEFAULT_MAX_NODE_IN_FLIGHT_BYTES: u64 = 256 << 20;

/// The wall-clock time one run may take by default, in milliseconds (10 minutes). The engine
/// reads no clock: the caller enforces it through `Sim::with_stop`.
pub const DEFAULT_MAX_WALL_MS: u64 = 600_000;

/// How many events pass between two questions to a run's stop callback (the caller's wall
/// clock, a hunt's signal): a clock reading costs tens of nanoseconds, so a stop is heard
/// within a millisecond or so of an ordinary run.
pub const STOP_CHECK_EVERY_EVENTS: u64 = 1 << 12;

/// What one run may use before the guard ends it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunLimits {
    /// Events handled (messages delivered, timers fired, faults, ...).
    pub max_events: u64,
    /// Events and messages queued at once, timers aside.
    pub max_in_flight: u64,
    /// Bytes the run holds at once: every message from the end of the handler that sent it
    /// until its receiver's handler takes it or it is lost (its engine slot plus
    /// [`Message::size_bytes`](crate::Message::size_bytes)), every durable write from the
    /// handler that asked for it until a later one replaces it on the disk
    /// ([`DurableState::size_bytes`](crate::DurableState::size_bytes)), and what the trace
    /// sink keeps in memory ([`TraceSink::held_bytes`](crate::TraceSink::held_bytes)).
    /// Counted as the run goes and checked each time the count grows, so the same run
    /// outgrows it at the same event on every machine, whatever runs beside it.
    pub max_memory_bytes: u64,
    /// Bytes of the messages one process has in flight at once (counted as for
    /// `max_memory_bytes`, charged to the sender): a node that sends faster than its peers
    /// take (to a paused peer, over a slow disk) ends the run naming itself, the message type
    /// and its size, before the run's memory does.
    pub max_node_in_flight_bytes: u64,
    /// Wall-clock time of one run, in milliseconds: a model whose events cost more as the
    /// cluster grows (a Raft follower of a 4,000-node cluster clears its 4,000-entry
    /// vote and peer tables whenever it becomes a follower again) can take
    /// hours within its event limit. Enforced by the caller, which reads the clock, through
    /// `Sim::with_stop` ([`Stop::WallTime`]); the engine itself never reads a clock.
    pub max_wall_ms: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_events: DEFAULT_MAX_EVENTS,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES,
            max_node_in_flight_bytes: DEFAULT_MAX_NODE_IN_FLIGHT_BYTES,
            max_wall_ms: DEFAULT_MAX_WALL_MS,
        }
    }
}

/// Why a caller's stop callback (`Sim::with_stop`) ends a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The caller no longer wants the run (a hunt stopping on a signal).
    Interrupted,
    /// The run has taken more wall-clock time than [`RunLimits::max_wall_ms`].
    WallTime {
        /// The run's elapsed wall-clock time, in milliseconds.
        elapsed_ms: u64,
    },
}

impl RunLimits {
    /// No limit at all (benchmarks and tests that bound their runs otherwise).
    pub fn unlimited() -> Self {
        Self {
            max_events: u64::MAX,
            max_in_flight: u64::MAX,
            max_memory_bytes: u64::MAX,
            max_node_in_flight_bytes: u64::MAX,
            max_wall_ms: u64::MAX,
        }
    }
}

/// Which limit a run outgrew.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// [`RunLimits::max_events`].
    Events,
    /// [`RunLimits::max_in_flight`].
    InFlight,
    /// [`RunLimits::max_memory_bytes`].
    Memory,
    /// [`RunLimits::max_node_in_flight_bytes`].
    NodeInFlight,
    /// [`RunLimits::max_wall_ms`].
    WallTime,
    /// Not a limit: the caller asked the run to stop (a hunt's signal; see
    /// `Sim::with_stop`).
    Interrupted,
}

impl Limit {
    /// The command-line flag that raises this limit.
    pub fn flag(self) -> &'static str {
        match self {
            Limit::Events => "--max-events",
            Limit::InFlight => "--max-in-flight",
            Limit::Memory => "--max-memory",
            Limit::NodeInFlight => "--max-node-in-flight",
            Limit::WallTime => "--max-time",
            Limit::Interrupted => "",
        }
    }

    /// What the limit counts, for messages.
    pub fn what(self) -> &'static str {
        match self {
            Limit::Events => "events handled",
            Limit::InFlight => "events and messages queued at once",
            Limit::Memory => "held by the run",
            Limit::NodeInFlight => "of messages in flight from one process",
            Limit::WallTime => "wall-clock time",
            Limit::Interrupted => "the caller's patience",
        }
    }
}

/// A run ended by the guard: what grew past its limit, and where the run was then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}", self.describe())]
pub struct LimitExceeded {
    /// The limit passed.
    pub limit: Limit,
    /// Its value.
    pub allowed: u64,
    /// What the run had reached.
    pub reached: u64,
    /// The true time of the run then.
    pub at_ns: Nanos,
    /// The run's planned length.
    pub duration_ns: Nanos,
    /// Events handled by then.
    pub events: u64,
    /// The process whose messages passed the limit ([`Limit::NodeInFlight`]), or that sent
    /// or wrote what passed [`Limit::Memory`]; none for the other limits.
    pub node: Option<crate::NodeId>,
    /// Where the growth was: the message type sent most and its count, and for queued
    /// messages the link holding most of them.
    pub where_: String,
}

impl LimitExceeded {
    fn describe(&self) -> String {
        if self.limit == Limit::Interrupted {
            return format!(
                "the run was stopped from outside at {} of {} simulated, after {} events",
                format_duration(self.at_ns),
                format_duration(self.duration_ns),
                group_thousands(self.events),
            );
        }
        let amount = |n: u64| match self.limit {
            Limit::Memory | Limit::NodeInFlight => format_bytes(n),
            Limit::WallTime => format_duration(n.saturating_mul(1_000_000)),
            _ => group_thousands(n),
        };
        let reached = match self.limit {
            Limit::Events => String::new(),
            // Exact: a count just past a whole unit would read as the limit itself.
            Limit::Memory | Limit::NodeInFlight => {
                format!(" (reached {} bytes)", group_thousands(self.reached))
            }
            _ => format!(" (reached {})", amount(self.reached)),
        };
        format!(
            "the run outgrew its limit of {} {}{reached} at {} of {} simulated, after {} events; {}",
            amount(self.allowed),
            self.limit.what(),
            format_duration(self.at_ns),
            format_duration(self.duration_ns),
            group_thousands(self.events),
            self.where_,
        )
    }
}

/// `1234567` as `1,234,567`.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count in the largest binary unit that keeps it at least 1 (`4 GiB`, `512 MiB`).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("B", 1),
    ];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    "0 B".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped_from_the_right() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(500_000_000), "500,000,000");
    }

    #[test]
    fn byte_counts_read_in_binary_units() {
        assert_eq!(format_bytes(4 << 30), "4 GiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes(512 << 20), "512 MiB");
        assert_eq!(format_bytes(0), "0 B");
    }
}
