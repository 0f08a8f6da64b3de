//! etcd lease and election-recipe settings, validated by the scenario loader.

use serde::{Deserialize, Serialize};
use splitbrain_sim::LocalNanos;

/// Which fencing token the recipe writes with, and how it takes the lock.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "etcd variant"))]
pub enum EtcdVariant {
    /// The etcd `concurrency.Election` recipe: the token is the leader key's create revision.
    Revision,
    /// The same recipe, but the token is the new leader's local wall clock (in milliseconds)
    /// at its claim: tokens no longer follow the order of leaderships.
    WallClockToken,
    /// A Redis-style `SET lock me NX PX ttl`: no revision, no watch, waiters poll; every
    /// leader writes with the constant token 0, so fencing cannot tell two holders apart.
    SetNx,
}

/// How a client keeps its lease alive and when it stops believing in it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "etcd client"))]
pub enum EtcdClientKind {
    /// etcd's Go client (`clientv3/lease.go`, v3.4): keep-alives go out on a 500 ms send
    /// loop once `keepalive` has passed since the last answer; the lease deadline is the
    /// *arrival* of the last answer plus the granted TTL, checked on a 1 s loop. A cut-off
    /// holder keeps believing up to a second past a deadline that the server, which counts
    /// from the keep-alive's arrival, reached earlier: it overlaps with the next holder.
    Clientv3,
    /// A careful client (not etcd's): the deadline is the *send* time of the last answered
    /// keep-alive plus the TTL, checked at that instant, and keep-alives go out exactly every
    /// `keepalive`. With honest clocks it gives up before the server expires its lease.
    SendTime,
}

/// etcd settings. Durations are local time of whoever measures them: the TTL is enforced on
/// the service's clock, the client's belief in its lease on the client's clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EtcdConfig {
    /// The TTL a client asks for when it grants a lease.
    pub ttl_ns: u64,
    /// The service's minimum TTL: a grant below it is raised to it, silently, as etcd does.
    pub min_ttl_ns: u64,
    /// The server's raft election timeout: the minimum TTL derives from it, and a restarted
    /// server extends every lease by it on top of the TTL (`lessor.Promote`).
    pub election_timeout_ns: u64,
    /// How long after an answered keep-alive the next one is due (etcd's clients: a third of
    /// the granted TTL). Also the retry interval of an unanswered request and of a SetNx
    /// waiter's poll.
    pub keepalive_ns: u64,
    /// The recipe, or a variant unsafe on purpose.
    pub variant: EtcdVariant,
    /// etcd's Go client, or a careful one that counts its lease from the send time.
    pub client: EtcdClientKind,
    /// When the lessor's sweeps fall: this long after the service starts (or restarts) on its
    /// own clock, then every [`LESSOR_SWEEP_NS`]; below it. `None`: drawn from the service's
    /// stream per run, since a real server starts at some unknown time before its clients.
    pub lessor_phase_ns: Option<u64>,
    /// How many etcd members serve: 1 is the single modeled service process; more (odd, up
    /// to 7) run the cluster of `cluster/`, Raft inside each member.
    #[serde(skip_serializing_if = "is_single")]
    pub members: usize,
    /// The etcd release whose cluster rules apply (cluster mode only).
    #[serde(skip_serializing_if = "is_default_version")]
    pub version: EtcdVersion,
    /// Cluster mode: a steady write load of other clients' keys, one put every this often,
    /// appended by the leader (its WAL writes: what a leader stuck in `fdatasync` is stuck
    /// in). The entries change nothing the election reads. `None`: no load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_every_ns: Option<u64>,
}

/// The etcd release a cluster follows where the rules changed (docs/service-clusters.md,
/// sections 2 and 3).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum EtcdVersion {
    /// 3.4.23 (what `conformance/` runs): pre-vote off, no `ensureLeadership`.
    #[default]
    V3_4,
    /// 3.5.16 and later: pre-vote on, `ensureLeadership` (with the `isActive` shortcut)
    /// before a renew on the leader's own stream and before the lessor's revokes.
    V3_5,
}

impl EtcdVersion {
    /// The version as a scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            EtcdVersion::V3_4 => "3.4",
            EtcdVersion::V3_5 => "3.5",
        }
    }

    /// The version a scenario names `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "3.4" => Some(EtcdVersion::V3_4),
            "3.5" => Some(EtcdVersion::V3_5),
            _ => None,
        }
    }
}

fn is_single(members: &usize) -> bool {
    *members <= 1
}

fn is_default_version(version: &EtcdVersion) -> bool {
    *version == EtcdVersion::default()
}

/// etcd's default raft heartbeat interval (`--heartbeat-interval`, 100 ms).
pub const ETCD_HEARTBEAT_NS: u64 = 100_000_000;

/// The lessor's expiry sweep (`lease/lessor.go`, `runLoop`: `revokeExpiredLeases` every
/// 500 ms).
pub const LESSOR_SWEEP_NS: u64 = 500_000_000;

/// clientv3's keep-alive send loop (`clientv3/lease.go`, `sendKeepAliveLoop`: waits
/// `retryConnWait`, 500 ms, between passes).
pub const CLIENT_SEND_LOOP_NS: u64 = 500_000_000;

/// clientv3's deadline loop (`clientv3/lease.go`, `deadlineLoop`: checks every second).
pub const CLIENT_DEADLINE_LOOP_NS: u64 = 1_000_000_000;

/// etcd's request timeout with the default election timeout (`etcdserver/config.go`,
/// `ReqTimeout`: 5 s + 2 x election timeout): a follower's forwarded renew, a proposal
/// waiting for its apply, and the lessor's re-offer of an unfinished revoke
/// (`ExpiredLeasesRetryInterval: srv.Cfg.ReqTimeout()` in `NewServer`).
pub fn request_timeout_ns(election_timeout_ns: u64) -> u64 {
    5_000_000_000u64.saturating_add(election_timeout_ns.saturating_mul(2))
}

/// etcd's default election timeout (`--election-timeout`, 1 s).
pub const ETCD_ELECTION_TIMEOUT_NS: u64 = 1_000_000_000;

/// etcd's minimum lease TTL for an election timeout (`etcdserver/server.go`, `NewServer`:
/// `minTTL := time.Duration((3*cfg.ElectionTicks)/2) * heartbeat`, rounded up to whole
/// seconds by `MinLeaseTTL: int64(math.Ceil(minTTL.Seconds()))`): 2 s with the defaults.
pub fn min_ttl_for(election_timeout_ns: u64) -> u64 {
    const SECOND_NS: u64 = 1_000_000_000;
    let election_ticks = (election_timeout_ns / ETCD_HEARTBEAT_NS).max(1);
    let min_ns = (3 * election_ticks / 2).saturating_mul(ETCD_HEARTBEAT_NS);
    min_ns.div_ceil(SECOND_NS).saturating_mul(SECOND_NS)
}

impl EtcdConfig {
    /// The TTL the service grants: the one asked for, raised to the minimum.
    pub fn granted_ttl_ns(&self) -> u64 {
        self.ttl_ns.max(self.min_ttl_ns)
    }
}

/// clientv3's session TTL (`client/v3/concurrency/session.go`: `defaultSessionTTL = 60`,
/// seconds), the TTL `concurrency.NewSession` grants its lease unless told otherwise.
pub const CLIENTV3_SESSION_TTL_NS: u64 = 60_000_000_000;

/// etcd's `lease.MaxLeaseTTL`, 9,000,000,000 seconds: the longest TTL a `LeaseGrant` may ask
/// for (server/lease/lessor.go; `Grant` answers `ErrLeaseTTLTooLarge`, "too large lease
/// TTL", past it). Below 2^63 ns, so every deadline it gives fits a clock reading.
pub const MAX_LEASE_TTL_NS: u64 = 9_000_000_000 * 1_000_000_000;

/// `ns` after the local time `now`, saturating: a span of 2^63 ns or more is not a negative
/// one (`ns as i64` would wrap, and a lease would be gone as it is granted).
pub(crate) fn after(now: LocalNanos, ns: u64) -> LocalNanos {
    now.saturating_add(i64::try_from(ns).unwrap_or(i64::MAX))
}

/// etcd's own defaults: clientv3's 60 s session TTL, the server's 1 s election timeout (and
/// so a 2 s minimum TTL), keep-alives a third of the TTL after each answer (clientv3's
/// `recvKeepAlive`), the `concurrency.Election` recipe and the Go client. A scenario that
/// wants faster failovers writes its TTL.
impl Default for EtcdConfig {
    fn default() -> Self {
        let ttl_ns = CLIENTV3_SESSION_TTL_NS;
        Self {
            ttl_ns,
            min_ttl_ns: min_ttl_for(ETCD_ELECTION_TIMEOUT_NS),
            election_timeout_ns: ETCD_ELECTION_TIMEOUT_NS,
            keepalive_ns: ttl_ns / 3,
            variant: EtcdVariant::Revision,
            client: EtcdClientKind::Clientv3,
            lessor_phase_ns: None,
            members: 1,
            version: EtcdVersion::default(),
            write_every_ns: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimum_ttl_follows_etcds_formula() {
        // Defaults: 10 ticks of 100 ms, 15 ticks = 1.5 s, rounded up to 2 s.
        assert_eq!(min_ttl_for(1_000_000_000), 2_000_000_000);
        // 5 ticks: 7 ticks (integer division) = 0.7 s, rounded up to 1 s.
        assert_eq!(min_ttl_for(500_000_000), 1_000_000_000);
        // 30 ticks: 45 ticks = 4.5 s, 5 s.
        assert_eq!(min_ttl_for(3_000_000_000), 5_000_000_000);
    }

    #[test]
    fn defaults_are_the_real_systems() {
        let defaults = EtcdConfig::default();
        // clientv3 `concurrency`: `defaultSessionTTL = 60` seconds.
        assert_eq!(defaults.ttl_ns, 60_000_000_000);
        // etcd server: `--election-timeout` 1000 ms, `--heartbeat-interval` 100 ms.
        assert_eq!(defaults.election_timeout_ns, 1_000_000_000);
        assert_eq!(ETCD_HEARTBEAT_NS, 100_000_000);
        // `NewServer`: 3/2 of 10 ticks of 100 ms, rounded up to whole seconds.
        assert_eq!(defaults.min_ttl_ns, 2_000_000_000);
        assert_eq!(defaults.granted_ttl_ns(), 60_000_000_000);
        // clientv3 `recvKeepAlive`: the next keep-alive TTL/3 after the answer.
        assert_eq!(defaults.keepalive_ns, 20_000_000_000);
        assert_eq!(defaults.variant, EtcdVariant::Revision);
        assert_eq!(defaults.client, EtcdClientKind::Clientv3);
    }
}
