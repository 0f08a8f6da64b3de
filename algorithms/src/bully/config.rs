//! Bully election settings, validated by the scenario loader.

use serde::Serialize;

/// Bully settings (Garcia-Molina 1982; Coulouris et al., *Distributed Systems*, 5th ed.,
/// section 15.3.1). Every duration is in the node's local time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BullyConfig {
    /// The coordinator sends HEARTBEAT to every peer this often.
    pub heartbeat_ns: u64,
    /// A follower that has heard no heartbeat from its coordinator for this long suspects it
    /// and starts an election. Must be longer than `heartbeat_ns`.
    pub failure_timeout_ns: u64,
    /// Coulouris' `T`: how long a candidate waits for an OK from a higher id before it
    /// declares itself coordinator.
    pub answer_timeout_ns: u64,
    /// Coulouris' `T'`: how long a candidate that got an OK waits for the COORDINATOR message
    /// before it starts the election again. Must be longer than `answer_timeout_ns` (the
    /// higher node waits that long itself before it can announce).
    pub coordinator_timeout_ns: u64,
}

impl Default for BullyConfig {
    fn default() -> Self {
        Self {
            heartbeat_ns: 50_000_000,
            failure_timeout_ns: 200_000_000,
            answer_timeout_ns: 50_000_000,
            coordinator_timeout_ns: 150_000_000,
        }
    }
}
