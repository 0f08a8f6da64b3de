//! Modeled etcd (leases with a TTL and a minimum TTL, keep-alives, expiry on the service's
//! clock, compare-on-create-revision transactions, delete watches, a global revision) and
//! the election recipe of etcd's `clientv3/concurrency` package, with two unsafe variants:
//! a fencing token taken from the leader's wall clock, and a Redis-style `SET NX PX` lock
//! with no token at all. `docs/algorithms/etcd.md` says what is modeled and decided.
//!
//! The service is one process, id `members`; the candidates are the members.

pub mod client;
pub mod cluster;
pub mod config;
mod lessor;
pub mod messages;
pub mod service;

mod settings;
pub(crate) mod store;
#[cfg(test)]
mod tests;

pub(crate) use settings::SERVICE_ELECTION_TIMEOUT;
pub use settings::{Etcd, EtcdError, EtcdSettings};

pub use client::{EtcdClient, Phase};
pub use cluster::EtcdMember;
pub use config::{EtcdClientKind, EtcdConfig, EtcdVariant, EtcdVersion};
pub use messages::{EtcdMsg, EtcdTimer};
pub use service::EtcdService;

use crate::hosted::{host, HostedProcess};
use splitbrain_sim::{AlgorithmInfo, NodeId};

/// What the engine's checks need to know about an etcd election.
pub fn info(config: &EtcdConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "etcd".to_string(),
        // A dead leader's lease runs out within a granted TTL of its last keep-alive and is
        // revoked at the lessor's next sweep; its waiter hears the delete at once (one
        // keep-alive interval of margin for latency and retries). On `Datagram`, the resync of
        // waiters also runs once per TTL. A cluster may be electing its own leader at the
        // same time: up to the longest randomized election timeout before a new leader, whose
        // Promote then gives every lease one more election timeout.
        failure_detection_ns: config
            .granted_ttl_ns()
            .saturating_add(config::LESSOR_SWEEP_NS)
            .saturating_add(config.keepalive_ns)
            .saturating_add(service_failover_ns(config)),
        // One client and the service elect a leader.
        min_group_for_progress: 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

/// What a failover inside an etcd cluster adds to a lease's life at most, without further
/// faults: the followers' longest randomized election timeout (`[1, 1.9]` election timeouts,
/// docs/service-clusters.md section 3), one election round (a heartbeat), and `Promote`'s
/// extension (one election timeout). Zero for the single service process.
pub fn service_failover_ns(config: &EtcdConfig) -> u64 {
    if config.members <= 1 {
        return 0;
    }
    let raft = cluster::raft_config(config);
    raft.election_timeout_max_ns
        .saturating_add(raft.heartbeat_ns)
        .saturating_add(config.election_timeout_ns)
}

/// A process of an etcd run: a candidate ([`EtcdClient`]), the one-process service
/// ([`EtcdService`]), or a member of a clustered one ([`EtcdMember`]).
pub type EtcdProcess = HostedProcess<EtcdMsg, EtcdTimer>;

/// The processes of a run: `members` clients, then the service: one process, or
/// `config.members` etcd members when that is more than one.
pub fn processes(members: usize, config: &EtcdConfig) -> Vec<EtcdProcess> {
    let clients = (0..members).map(|i| host(EtcdClient::new(NodeId::from(i), members, config)));
    clients.chain(service(members, config)).collect()
}

/// The service's processes after `members` clients: the one server, or `config.members`
/// etcd members when that is more than one. Any of them serves a client.
pub fn service(members: usize, config: &EtcdConfig) -> Vec<EtcdProcess> {
    if config.members <= 1 {
        return vec![host(EtcdService::new(config))];
    }
    let size = config.members;
    (0..size)
        .map(|i| host(EtcdMember::new(i, members, size, config)))
        .collect()
}
