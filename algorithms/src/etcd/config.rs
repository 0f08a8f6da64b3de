//! etcd lease and election-recipe settings, validated by the scenario loader.

use serde::{Deserialize, Serialize};

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

/// etcd settings. Durations are local time of whoever measures them: the TTL is enforced on
/// the service's clock, the client's belief in its lease on the client's clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EtcdConfig {
    /// The TTL a client asks for when it grants a lease.
    pub ttl_ns: u64,
    /// The service's minimum TTL: a grant below it is raised to it.
    pub min_ttl_ns: u64,
    /// How often a lease holder sends a keep-alive (etcd's clients use TTL/3). Also the
    /// retry interval of an unanswered request and of a SetNx waiter's poll.
    pub keepalive_ns: u64,
    /// The recipe, or a variant unsafe on purpose.
    pub variant: EtcdVariant,
}

impl Default for EtcdConfig {
    fn default() -> Self {
        Self {
            ttl_ns: 2_000_000_000,
            min_ttl_ns: 1_000_000_000,
            keepalive_ns: 2_000_000_000 / 3,
            variant: EtcdVariant::Revision,
        }
    }
}
