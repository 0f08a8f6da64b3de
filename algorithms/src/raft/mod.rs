//! Raft leader election (Ongaro & Ousterhout 2014, "In Search of an Understandable Consensus
//! Algorithm", and Ongaro's 2014 thesis): terms, votes, the up-to-date-log rule, heartbeats,
//! and the optional pre-vote, check-quorum and leadership transfer; with a proposal workload
//! (`propose_every`), log replication without commitment. `docs/algorithms/raft.md` says
//! what is modeled and what is not.
//!
//! The node is split by role: `node.rs` holds the state and the role transitions,
//! `voter.rs` the answering side, `candidate.rs` the asking side, `leader.rs` the leader,
//! `replication.rs` the proposal workload.

mod candidate;
pub mod config;
mod leader;
mod log;
mod messages;
mod node;
mod replication;
mod voter;

mod settings;
#[cfg(test)]
mod tests;

pub use settings::{Raft, RaftError, RaftSettings, MAX_LOG_LENGTH};

pub use config::{RaftConfig, RaftTimeoutDraw, RaftTimerReset, RaftVariant};
pub use messages::{RaftMsg, RaftTimer};
pub use node::{Durable, RaftNode};

use splitbrain_sim::{AlgorithmInfo, SignalSupport};

/// What the engine's checks need to know about a Raft cluster of `members`.
pub fn info(config: &RaftConfig, members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "raft".to_string(),
        // A follower notices a dead leader within one maximum election timeout.
        failure_detection_ns: config.election_timeout_max_ns,
        // Paper §5.2: winning an election takes the votes of a majority.
        min_group_for_progress: members / 2 + 1,
        // The log rule decides who can win (paper §5.4.1), and a follower knows when it
        // first hears the new leader.
        signals: SignalSupport {
            // Who could win is known only while logs do not change.
            campaign_eligibility: config.propose_every_ns.is_none(),
            leader_heard: true,
        },
        late_campaigns_lose: true,
    }
}
