//! Ring election settings, validated by the scenario loader.

use serde::{Deserialize, Serialize};

/// Which ring election runs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "ring variant"))]
pub enum RingVariant {
    /// Chang & Roberts 1979: a node forwards only ids greater than its own; the id that comes
    /// back to its owner wins; an elected lap announces it.
    #[default]
    ChangRoberts,
    /// The ring algorithm of Tanenbaum & van Steen (*Distributed Systems*, section 6.5.1): one
    /// token circulates collecting every live id; back at its initiator, the maximum is
    /// announced by a coordinator lap.
    AllIds,
}

/// How the members are placed on the ring (messages travel from a node to its successor).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "ring order"))]
pub enum RingOrder {
    /// `0 -> 1 -> ... -> n-1 -> 0`: every id's successor is higher, except the maximum's.
    #[default]
    Ascending,
    /// `n-1 -> n-2 -> ... -> 0 -> n-1`.
    Descending,
    /// A permutation drawn once from the run's set-up stream: every node agrees on it.
    Random,
}

/// Who starts an election.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "ring initiators"))]
pub enum RingInitiators {
    /// Every node: a node that suspects the coordinator, or that learns of an election from a
    /// message, puts its own candidacy in circulation (Chang & Roberts' analysis, where every
    /// process starts). At the start of the run every node initiates.
    All,
    /// Only the node that detected the failure. Failure timeouts are staggered by ring
    /// distance from the coordinator, so the coordinator's successor detects first and its
    /// election reaches the others before they would suspect on their own. At the start of
    /// the run the first node of the ring initiates.
    #[default]
    Detector,
}

/// Ring settings. Every duration is in the node's local time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RingConfig {
    /// Chang & Roberts or the all-ids token ring.
    pub variant: RingVariant,
    /// How the members are placed on the ring.
    pub order: RingOrder,
    /// Who puts an election in circulation.
    pub initiators: RingInitiators,
    /// The coordinator sends HEARTBEAT to every peer this often.
    pub heartbeat_ns: u64,
    /// A follower that has heard no heartbeat from its coordinator for this long suspects it.
    /// Must be longer than `heartbeat_ns`.
    pub failure_timeout_ns: u64,
    /// A ring message not acknowledged within this long makes its sender skip that successor
    /// and send to the next one. Must exceed one round trip between neighbours.
    pub ack_timeout_ns: u64,
}

impl Default for RingConfig {
    fn default() -> Self {
        Self {
            variant: RingVariant::ChangRoberts,
            order: RingOrder::Ascending,
            initiators: RingInitiators::Detector,
            heartbeat_ns: 50_000_000,
            failure_timeout_ns: 200_000_000,
            ack_timeout_ns: 30_000_000,
        }
    }
}
