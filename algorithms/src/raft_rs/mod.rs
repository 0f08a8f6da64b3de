//! tikv's raft-rs (crates.io `raft` 0.7), the Raft library TiKV runs in production, driven
//! unchanged through the engine as an algorithm process: a user's own sans-IO
//! implementation hunted the same way as splitbrain's models. The adapter calls
//! `RawNode::tick` on a timer, `RawNode::step` for each message, and handles every `Ready`
//! as raft-rs documents; the only thing it changes is where raft-rs' randomized election
//! timeouts come from (the node's seeded stream instead of `thread_rng`).
//! `docs/algorithms/raft-rs.md` says what is driven how and where each rule comes from.
//!
//! `config.rs` holds the settings and their validation, `messages.rs` the wire messages and
//! the tick timer, `node.rs` the adapter, `ready.rs` the `Ready` handling.

pub mod config;
pub mod messages;
mod node;
mod ready;
mod settings;

#[cfg(test)]
mod tests;

pub use config::{RaftRsConfig, RaftRsConfigError};
pub use messages::{RaftRsMsg, RaftRsTimer};
pub use node::RaftRsNode;
pub use settings::{RaftRs, RaftRsError, RaftRsSettings};

use splitbrain_sim::AlgorithmInfo;

/// What the engine's checks need to know about a raft-rs cluster of `members`.
pub fn info(config: &RaftRsConfig, members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "raft-rs".to_string(),
        // raft-rs draws election timeouts from [election_tick, 2 * election_tick) ticks
        // (`Config::max_election_tick`): a follower notices a dead leader within the end of
        // that range.
        failure_detection_ns: config.max_election_timeout_ns().unwrap_or(u64::MAX),
        // Raft paper §5.2: winning an election takes the votes of a majority.
        min_group_for_progress: members / 2 + 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}
