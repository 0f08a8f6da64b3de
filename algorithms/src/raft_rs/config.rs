//! Settings of the raft-rs adapter, and the rules raft-rs itself enforces on them, checked
//! here so that a bad scenario is refused with a typed error instead of reaching raft-rs.

use serde::Serialize;
use splitbrain_sim::Nanos;
use std::fmt;

/// Settings of a cluster of raft-rs nodes. Timeouts are counted in ticks, as raft-rs counts
/// them; `tick_ns` is how much local time one tick is. Every raft-rs setting not named here
/// keeps the value of `raft::Config::default()` (`docs/algorithms/raft-rs.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RaftRsConfig {
    /// raft-rs `Config::election_tick`: a follower that hears from no leader for a timeout
    /// drawn from `[election_tick, 2 * election_tick)` ticks campaigns.
    pub election_tick: usize,
    /// raft-rs `Config::heartbeat_tick`: the leader sends heartbeats every this many ticks.
    pub heartbeat_tick: usize,
    /// The local time between two calls of `RawNode::tick`.
    pub tick_ns: Nanos,
    /// raft-rs `Config::pre_vote` (Raft thesis §9.6).
    pub pre_vote: bool,
    /// raft-rs `Config::check_quorum` (Raft thesis §6.2, with §4.2.3's vote refusal).
    pub check_quorum: bool,
}

impl Default for RaftRsConfig {
    /// raft-rs 0.7's own tick counts (`src/config.rs`, `impl Default for Config`: heartbeat
    /// 2 ticks, election 20), with a 50 ms tick: that makes heartbeats every 100 ms and
    /// election timeouts of [1 s, 2 s), etcd's documented defaults (etcd.io, "Tuning":
    /// heartbeat interval 100 ms, election timeout 1000 ms; etcd's raft, which raft-rs ports,
    /// draws from the same [et, 2 et) range).
    fn default() -> Self {
        Self {
            election_tick: 20,
            heartbeat_tick: 2,
            tick_ns: 50_000_000,
            pre_vote: false,
            check_quorum: false,
        }
    }
}

/// A setting raft-rs (or the adapter) cannot run with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaftRsConfigError {
    /// raft-rs `Config::validate`: "heartbeat tick must greater than 0".
    ZeroHeartbeatTick,
    /// raft-rs `Config::validate`: "election tick must be greater than heartbeat tick".
    ElectionTickNotAboveHeartbeatTick {
        /// The election timeout's lower end, in ticks.
        election_tick: usize,
        /// The heartbeat interval, in ticks.
        heartbeat_tick: usize,
    },
    /// The adapter's tick timer would spin at one instant.
    ZeroTick,
    /// The longest election timeout, `2 * election_tick` ticks, does not fit in `u64`
    /// nanoseconds (nor, past `usize`, in raft-rs' own `max_election_tick`).
    ElectionTimeoutTooLong {
        /// The election timeout's lower end, in ticks.
        election_tick: usize,
        /// The length of one tick, in nanoseconds of local time.
        tick_ns: Nanos,
    },
    /// A tick count above [`MAX_TICKS`].
    TooManyTicks {
        /// The setting, `election_tick` or `heartbeat_tick`.
        field: &'static str,
        /// The count written.
        ticks: usize,
    },
}

/// The most ticks `election_tick` or `heartbeat_tick` may count: raft-rs counts each tick
/// down one by one, and its defaults are 20 and 2. A longer timeout is a longer `tick`.
pub const MAX_TICKS: usize = 1_000_000;

impl RaftRsConfigError {
    /// The setting at fault, by its field name.
    pub fn field(&self) -> &'static str {
        match self {
            RaftRsConfigError::ZeroHeartbeatTick => "heartbeat_tick",
            RaftRsConfigError::ElectionTickNotAboveHeartbeatTick { .. }
            | RaftRsConfigError::ElectionTimeoutTooLong { .. } => "election_tick",
            RaftRsConfigError::ZeroTick => "tick",
            RaftRsConfigError::TooManyTicks { field, .. } => field,
        }
    }
}

impl fmt::Display for RaftRsConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RaftRsConfigError::ZeroHeartbeatTick => {
                write!(f, "the heartbeat must be at least one tick")
            }
            RaftRsConfigError::ElectionTickNotAboveHeartbeatTick {
                election_tick,
                heartbeat_tick,
            } => write!(
                f,
                "the election timeout ({election_tick} ticks) must be longer than the \
                 heartbeat ({heartbeat_tick} ticks)"
            ),
            RaftRsConfigError::ZeroTick => write!(f, "the tick must be longer than zero"),
            RaftRsConfigError::TooManyTicks { field, ticks } => {
                write!(f, "{field} is {ticks} ticks, more than {MAX_TICKS}")
            }
            RaftRsConfigError::ElectionTimeoutTooLong {
                election_tick,
                tick_ns,
            } => write!(
                f,
                "election timeouts of up to twice {election_tick} ticks of {} do not fit in \
                 64-bit nanoseconds",
                splitbrain_sim::duration::format_duration_ron(*tick_ns)
            ),
        }
    }
}

impl RaftRsConfig {
    /// Every rule the settings break, in field order; empty when raft-rs can run them.
    /// The tick-count rules are those of raft-rs 0.7 `src/config.rs` `Config::validate` that
    /// these settings can reach (the others concern settings left at raft-rs' defaults).
    pub fn validate(&self) -> Vec<RaftRsConfigError> {
        let mut problems = Vec::new();
        for (field, ticks) in [
            ("election_tick", self.election_tick),
            ("heartbeat_tick", self.heartbeat_tick),
        ] {
            if ticks > MAX_TICKS {
                problems.push(RaftRsConfigError::TooManyTicks { field, ticks });
            }
        }
        if self.heartbeat_tick == 0 {
            problems.push(RaftRsConfigError::ZeroHeartbeatTick);
        }
        if self.election_tick <= self.heartbeat_tick {
            problems.push(RaftRsConfigError::ElectionTickNotAboveHeartbeatTick {
                election_tick: self.election_tick,
                heartbeat_tick: self.heartbeat_tick,
            });
        }
        if self.max_election_timeout_ns().is_none() {
            problems.push(RaftRsConfigError::ElectionTimeoutTooLong {
                election_tick: self.election_tick,
                tick_ns: self.tick_ns,
            });
        }
        if self.tick_ns == 0 {
            problems.push(RaftRsConfigError::ZeroTick);
        }
        problems
    }

    /// The end of raft-rs' election timeout range, `2 * election_tick` ticks (raft-rs
    /// `Config::max_election_tick`), in local nanoseconds; `None` if it overflows.
    pub fn max_election_timeout_ns(&self) -> Option<Nanos> {
        let ticks = u64::try_from(self.election_tick).ok()?.checked_mul(2)?;
        ticks.checked_mul(self.tick_ns)
    }

    /// raft-rs' own configuration for the member with raft id `raft_id`: these settings,
    /// and raft-rs' defaults for everything else.
    pub(crate) fn raft_config(&self, raft_id: u64) -> raft::Config {
        raft::Config {
            id: raft_id,
            election_tick: self.election_tick,
            heartbeat_tick: self.heartbeat_tick,
            pre_vote: self.pre_vote,
            check_quorum: self.check_quorum,
            ..raft::Config::default()
        }
    }
}
