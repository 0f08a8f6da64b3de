//! The Kubernetes `Lease` lock of client-go's `leaderelection` package, on a modeled API
//! server: optimistic concurrency on `resourceVersion`; candidates time the holder's expiry by
//! their own observation of the last change to the record (`observedTime`), never by the
//! record's timestamps; the leader renews in rounds and stops leading when a round reaches the
//! renew deadline without a renewal. Rules `Strict`: the model's stricter timing (the renew
//! deadline from the last renewal's send, the lease duration to the nanosecond). Variant `DbRow`: a database-row lease whose expiry the
//! database judges by its own clock (`UPDATE .. WHERE holder IS NULL OR expires < now()`).
//! The server is one process, id `members`; or, with `etcd_members` > 1, API servers (ids
//! `members..members + apiservers`) in front of an etcd cluster (the ids after them), the
//! record stored in etcd (`apiserver.rs`).

pub mod apiserver;
pub mod client;
pub mod config;
pub mod messages;
pub mod server;

mod on_etcd;
mod settings;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_on_etcd;

pub use apiserver::ApiServer;
pub use client::{looks_free, K8sClient};
pub use config::{K8sConfig, K8sRules, K8sVariant};
pub use messages::{Identity, K8sMsg, K8sTimer, Record};
pub use on_etcd::EtcdOnK8s;
pub use server::K8sServer;
pub use settings::{K8sError, K8sLease, K8sSettings};

use crate::etcd::EtcdMember;
use crate::hosted::{host, HostedProcess};
use splitbrain_sim::{AlgorithmInfo, NodeId};

/// What the engine's checks need to know about a Kubernetes Lease election.
pub fn info(config: &K8sConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "k8s-lease".to_string(),
        // An etcd cluster behind the API servers may be electing its own leader at the same
        // time: what that adds (`crate::etcd::service_failover_ns`).
        failure_detection_ns: config
            .lease_duration_ns
            .saturating_add(config.retry_period_ns.saturating_mul(2))
            .saturating_add(
                config
                    .etcd
                    .as_ref()
                    .map_or(0, crate::etcd::service_failover_ns),
            ),
        min_group_for_progress: 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

/// A process of a Kubernetes Lease run: a candidate ([`K8sClient`]), the API server
/// ([`K8sServer`]), or, on an etcd cluster, an API server ([`ApiServer`]) or an etcd member
/// ([`EtcdOnK8s`]).
pub type K8sProcess = HostedProcess<K8sMsg, K8sTimer>;

/// The processes of a run: `members` clients, then the server, or the API servers and the
/// etcd members.
pub fn processes(members: usize, config: &K8sConfig) -> Vec<K8sProcess> {
    let clients = (0..members).map(|i| host(K8sClient::new(NodeId::from(i), members, config)));
    clients.chain(service(members, config)).collect()
}

/// The service's processes after `members` clients: the one API server holding the Lease,
/// or the API servers (the first [`K8sConfig::client_endpoints`], which clients talk to)
/// and then the etcd members behind them.
pub fn service(members: usize, config: &K8sConfig) -> Vec<K8sProcess> {
    let Some(etcd) = &config.etcd else {
        return vec![host(K8sServer::new(config))];
    };
    let first = members + config.apiservers;
    let endpoints: Vec<NodeId> = (first..first + etcd.members).map(NodeId::from).collect();
    let apiservers = (0..config.apiservers).map(|i| host(ApiServer::new(i, endpoints.clone())));
    let size = etcd.members;
    let members_of_etcd = (0..size).map(|i| {
        let member = EtcdMember::new(i, first, size, etcd);
        host(EtcdOnK8s { member })
    });
    apiservers.chain(members_of_etcd).collect()
}
