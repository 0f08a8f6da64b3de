//! The validated settings a multi-range run goes with, CockroachDB's defaults
//! (`pkg/base/config.go`, `RaftConfig.SetDefaults`) unless a scenario says otherwise.

use serde::{Deserialize, Serialize};

/// Which kind of range lease the stores take.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "multi-raft lease"))]
pub enum MultiRaftLease {
    /// An expiration-based range lease: valid until a wall-clock expiration
    /// (`RangeLeaseDuration`, 6 s), extended through Raft by the leaseholder when half of
    /// it is left (`RangeLeaseRenewalFraction`, 0.5).
    Expiration,
    /// An epoch-based range lease: valid while its holder's node-liveness record is live
    /// in the lease's epoch. Every store heartbeats its record (kept in the first range,
    /// which itself takes expiration-based leases, as CockroachDB's liveness range does)
    /// every `RangeLeaseDuration - renewal` (3 s), for `RangeLeaseDuration` (6 s); a new
    /// holder first raises the old holder's epoch, which the liveness range allows only
    /// once the old holder's record has expired. The holder need not be the Raft leader.
    Epoch,
    /// A leader lease, CockroachDB v25.2's default (its release notes:
    /// `kv.raft.leader_fortification.fraction_enabled` changed to 1): held by the range's
    /// Raft leader while a quorum of the range's replicas fortify it, each from a store that
    /// supports the leader's store in store liveness.
    #[default]
    Leader,
}

impl MultiRaftLease {
    /// Every kind, as a scenario names it.
    pub const NAMES: &'static [&'static str] = &["Expiration", "Epoch", "Leader"];
}

/// The correct model, or a deliberately broken one that the per-range checks must catch.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "multi-raft variant"))]
pub enum MultiRaftVariant {
    /// A new leaseholder waits until the previous lease has expired by its clock.
    #[default]
    Correct,
    /// A new Raft leader takes the lease at once, without waiting out the previous
    /// holder's lease (an expiration lease's expiration, an epoch lease's epoch raised),
    /// and a follower votes while it supports the leader it fortified (a leader lease):
    /// two stores can believe they hold the same range's lease.
    EarlyLease,
    /// A new holder's lease keeps the previous lease's sequence instead of raising it
    /// (CockroachDB raises `Lease.Sequence` on every change of holder so that a command
    /// proposed under an older lease is refused below Raft): the range's resource takes
    /// the same fencing token from two stores, even though their leases never overlap.
    ReusedSequence,
}

impl MultiRaftVariant {
    /// Every variant, as a scenario names it.
    pub const NAMES: &'static [&'static str] = &["Correct", "EarlyLease", "ReusedSequence"];
}

/// The settings of a multi-range run. Every engine member is a store; each range has
/// `replication` replicas placed by [`super::placement`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MultiRaftConfig {
    /// How many ranges (Raft groups) the cluster holds.
    pub ranges: u64,
    /// Replicas per range (CockroachDB's default zone config: 3; 5 for system ranges).
    pub replication: u64,
    /// `RaftTickInterval`: how often a store ticks every replica it holds, in local time.
    pub tick_ns: u64,
    /// `RaftHeartbeatIntervalTicks`: a leader heartbeats its followers every this many ticks.
    pub heartbeat_ticks: u64,
    /// `RaftElectionTimeoutTicks`: the smallest election timeout, in ticks; each replica
    /// draws its timeout in `[election_ticks, 2 * election_ticks)`.
    pub election_ticks: u64,
    /// Which kind of range lease the stores take.
    pub lease: MultiRaftLease,
    /// `RangeLeaseDuration`: how long an expiration-based lease lasts, in wall-clock time.
    pub lease_duration_ns: u64,
    /// The clock offset the cluster tolerates (`--max-offset`, 500 ms by default): a
    /// leaseholder stops using its lease this long before it expires (the stasis period).
    pub max_offset_ns: u64,
    /// Store liveness (`StoreLivenessHeartbeatInterval`): how often a store asks every
    /// other store for support, with leader leases.
    pub support_heartbeat_ns: u64,
    /// Store liveness (`StoreLivenessSupportDuration`): how long each support lasts, from
    /// the request, on the requester's clock.
    pub support_duration_ns: u64,
    /// Count-based lease rebalancing (CockroachDB's lease queue, on by default): a store
    /// holding more leases than the mean transfers them to replicas on stores holding fewer.
    pub lease_rebalancing: bool,
    /// `COCKROACH_SCAN_INTERVAL`: the replica scanner visits each of a store's replicas
    /// about once in this interval (each visit at least `SCAN_MIN_IDLE_NS` and at most
    /// `SCAN_MAX_IDLE_NS` after the last).
    pub scan_interval_ns: u64,
    /// `kv.allocator.min_lease_transfer_interval`: a store starts at most one rebalancing
    /// lease transfer per this interval.
    pub min_lease_transfer_interval_ns: u64,
    /// The correct model or a broken one.
    pub variant: MultiRaftVariant,
}

/// `COCKROACH_SCAN_MIN_IDLE_TIME`'s default (`pkg/base/config.go`,
/// `defaultScanMinIdleTime`): the scanner waits at least this long between two replicas.
pub const SCAN_MIN_IDLE_NS: u64 = 10_000_000;
/// `COCKROACH_SCAN_MAX_IDLE_TIME`'s default (`pkg/base/config.go`,
/// `defaultScanMaxIdleTime`): the scanner waits at most this long between two replicas.
pub const SCAN_MAX_IDLE_NS: u64 = SEC_NS;

/// One second, in nanoseconds.
const SEC_NS: u64 = 1_000_000_000;

impl Default for MultiRaftConfig {
    fn default() -> Self {
        Self {
            ranges: 700,
            replication: 3,
            tick_ns: SEC_NS / 2,
            heartbeat_ticks: 2,
            election_ticks: 4,
            lease: MultiRaftLease::Leader,
            lease_duration_ns: 6 * SEC_NS,
            max_offset_ns: SEC_NS / 2,
            support_heartbeat_ns: SEC_NS,
            support_duration_ns: 3 * SEC_NS,
            lease_rebalancing: true,
            scan_interval_ns: 600 * SEC_NS,
            min_lease_transfer_interval_ns: SEC_NS,
            variant: MultiRaftVariant::Correct,
        }
    }
}

impl MultiRaftConfig {
    /// The votes that win an election, and the acknowledgements that commit an entry.
    pub fn quorum(&self) -> usize {
        self.replication as usize / 2 + 1
    }

    /// How long before its expiration a leaseholder extends its lease:
    /// `RangeLeaseRenewalFraction` (0.5) of the lease.
    pub fn renew_before_ns(&self) -> u64 {
        self.lease_duration_ns / 2
    }

    /// Node liveness, with epoch-based leases (`RaftConfig.NodeLivenessDurations`): a
    /// record lasts `RangeLeaseDuration` from its heartbeat.
    pub fn liveness_duration_ns(&self) -> u64 {
        self.lease_duration_ns
    }

    /// Node liveness: a store heartbeats its record every `RangeLeaseDuration` minus the
    /// renewal duration (`livenessRenewalFraction`, 0.5): every 3 s by default.
    pub fn liveness_heartbeat_ns(&self) -> u64 {
        self.lease_duration_ns - self.renew_before_ns()
    }

    /// Node liveness: an unanswered heartbeat is sent again this soon (the heartbeat
    /// loop's retry backoff, at most 1 s).
    pub fn liveness_retry_ns(&self) -> u64 {
        SEC_NS
    }

    /// The scanner's wait before its next replica (`pkg/kv/kvserver/scanner.go`,
    /// `replicaScanner.paceInterval`): what is left of the scan interval `elapsed_ns` into
    /// the cycle, spread over the store's `replicas`, kept between the minimum and maximum
    /// idle times.
    pub fn scan_idle_ns(&self, elapsed_ns: u64, replicas: usize) -> u64 {
        let remaining_ns = self.scan_interval_ns.saturating_sub(elapsed_ns);
        let spread = remaining_ns / (replicas.max(1) as u64);
        spread.clamp(SCAN_MIN_IDLE_NS, SCAN_MAX_IDLE_NS)
    }

    /// The longest election timeout, in local nanoseconds: `2 * election_ticks - 1` ticks.
    pub fn election_timeout_max_ns(&self) -> u64 {
        (2 * self.election_ticks - 1).saturating_mul(self.tick_ns)
    }
}
