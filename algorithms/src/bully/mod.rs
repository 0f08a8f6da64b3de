//! The Bully algorithm (Garcia-Molina 1982, "Elections in a Distributed Computing System",
//! IEEE Trans. Computers C-31(1); as taught in Coulouris, Dollimore, Kindberg and Blair,
//! *Distributed Systems: Concepts and Design*, 5th ed., section 15.3.1): the highest live id
//! becomes coordinator. Failure detection by heartbeats; ELECTION to higher ids, OK answers,
//! COORDINATOR to lower ids; the two timeouts; the takeover by a recovering higher id. An
//! epoch, kept durably and raised by every announcement, gives `election_safety` a term to
//! check. `docs/algorithms/bully.md` says what is modeled and what was decided.
//!
//! The node is split by responsibility: `node.rs` holds the state and the role transitions,
//! `election.rs` the election messages and timeouts, `coordinator.rs` heartbeats and
//! announcements.

pub mod config;
mod coordinator;
mod election;
mod messages;
mod node;

mod settings;
#[cfg(test)]
mod tests;

pub use settings::{Bully, BullyError, BullySettings};

pub use config::BullyConfig;
pub use messages::{BullyMsg, BullyTimer};
pub use node::BullyNode;

use splitbrain_sim::AlgorithmInfo;

/// What the engine's checks need to know about a Bully cluster.
pub fn info(config: &BullyConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "bully".to_string(),
        // A dead coordinator is suspected within the failure timeout; the election that
        // follows ends within one wait for an OK and one for the COORDINATOR message.
        failure_detection_ns: config
            .failure_timeout_ns
            .saturating_add(config.answer_timeout_ns)
            .saturating_add(config.coordinator_timeout_ns),
        // The highest live id elects itself alone: any group of one makes progress.
        min_group_for_progress: 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: false,
    }
}
