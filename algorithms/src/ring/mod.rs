//! Ring elections, in two variants: Chang & Roberts 1979 (forward only greater ids; the
//! winner's id comes back to it; then an elected lap) and the all-ids ring of Tanenbaum &
//! van Steen (one token collects every live id, then the maximum is announced). Ring order
//! and who initiates are configurable; every ring message is acknowledged and a dead
//! successor is skipped. An epoch, collected along every lap and raised by every
//! announcement, gives `election_safety` a term to check. `docs/algorithms/ring.md` says
//! what is modeled and what was decided.
//!
//! Split by responsibility: `topology.rs` the ring order and successors, `transport.rs` the
//! acknowledged sends and skipping, `node.rs` the state, announcements and heartbeats,
//! `chang_roberts.rs` and `all_ids.rs` the two variants.

mod all_ids;
mod chang_roberts;
pub mod config;
mod messages;
mod node;
pub mod topology;
mod transport;

mod settings;
#[cfg(test)]
mod tests;

pub use settings::{Ring, RingError, RingSettings};

pub use config::{RingConfig, RingInitiators, RingOrder, RingVariant};
pub use messages::{RingMsg, RingTimer};
pub use node::RingNode;
pub use topology::RingTopology;

use splitbrain_sim::AlgorithmInfo;

/// What the engine's checks need to know about a ring of `members`.
pub fn info(config: &RingConfig, members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "ring".to_string(),
        // The failure timeout, plus up to one ack timeout per hop of detection stagger
        // (initiators: Detector), plus an election of at most two laps whose every hop is
        // acknowledged or skipped within an ack timeout.
        failure_detection_ns: config
            .failure_timeout_ns
            .saturating_add((3 * members as u64).saturating_mul(config.ack_timeout_ns)),
        // A lone node's candidacy comes straight back to it: any group of one elects.
        min_group_for_progress: 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: false,
    }
}
