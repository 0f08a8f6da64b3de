//! Many Raft groups on one set of stores, as CockroachDB runs them: every engine member is
//! a store, each of `ranges` ranges has `replication` replicas placed by a deterministic
//! allocator (`placement.rs`), and each range elects its own leader with its own term and
//! vote, on the store's Raft tick, with heartbeats coalesced per store pair; the leader
//! takes a range lease through the range's log: a leader lease on store-liveness support
//! (`liveness.rs`), an epoch-based lease on node liveness (`epoch.rs`) or an
//! expiration-based lease. The per-range safety
//! properties (`range_election_safety`, `lease_disjointness`) are the algorithm's own
//! (`properties.rs`); the engine's single-leader checks watch the first range.
//! `docs/algorithms/multi-raft.md` says what is modeled, each timing's source, and what is
//! simplified.
//!
//! Split by responsibility: `store.rs` holds the process and its handlers, `election.rs`
//! the per-range Raft election, `lease.rs` the leases, `transfer.rs` lease transfers,
//! `rebalance.rs` count-based lease rebalancing, `liveness.rs` store liveness and
//! fortification, `epoch.rs` node liveness and epoch leases, `fencing.rs` the ranges'
//! fenced resources, `blast.rs` the blast-radius measures, `replica.rs` a replica's state.

mod blast;
pub mod config;
mod election;
mod epoch;
mod fencing;
mod lease;
mod liveness;
mod messages;
pub mod placement;
pub mod properties;
mod rebalance;
mod replica;
mod store;
mod transfer;

mod settings;
#[cfg(test)]
mod tests;

pub use blast::{BlastRadius, MEASURES};
pub use config::{MultiRaftConfig, MultiRaftLease, MultiRaftVariant};
pub use fencing::RangeResources;
pub use messages::{
    Beat, BeatResp, Entry, Lease, LeaseCount, LivenessRecord, RangeMsg, StoreMsg, StoreTimer,
};
pub use settings::{
    MultiRaft, MultiRaftError, MultiRaftSettings, MAX_RANGES, MAX_REPLICATION, MAX_TICKS,
};
pub use store::{Store, FIRST_RANGE};

use splitbrain_sim::{AlgorithmInfo, SignalSupport};

/// What the engine's checks need to know about a multi-range cluster of `members` stores.
pub fn info(config: &MultiRaftConfig, members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "multi-raft".to_string(),
        // A follower of the first range notices a dead leader within its longest election
        // timeout.
        failure_detection_ns: config.election_timeout_max_ns(),
        // The engine watches the first range, which elects with a quorum of its replicas.
        min_group_for_progress: (config.replication as usize / 2 + 1).min(members),
        signals: SignalSupport::NONE,
        late_campaigns_lose: false,
    }
}
