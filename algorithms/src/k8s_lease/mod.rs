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
pub use server::K8sServer;
pub use settings::{K8sError, K8sLease, K8sSettings};

use crate::etcd::EtcdMember;
use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, NodeId, Process};

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

/// A process of a Kubernetes Lease run: a candidate, the API server, or, on an etcd
/// cluster, an API server or an etcd member.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum K8sProcess {
    /// An election member (ids `0..members`).
    Client(K8sClient),
    /// The modeled API server holding the Lease (id `members`).
    Server(K8sServer),
    /// An API server in front of the etcd cluster (ids from `members`).
    ApiServer(ApiServer),
    /// An etcd member storing the Lease (ids after the API servers).
    Etcd(EtcdMember),
}

impl K8sProcess {
    /// The processes of a run: `members` clients, then the server, or the API servers and
    /// the etcd members.
    pub fn cluster(members: usize, config: &K8sConfig) -> Vec<K8sProcess> {
        let clients = (0..members)
            .map(|i| K8sProcess::Client(K8sClient::new(NodeId::from(i), members, config)));
        clients.chain(Self::service(members, config)).collect()
    }

    /// The service's processes after `members` clients: the one API server holding the
    /// Lease, or the API servers (the first [`K8sConfig::client_endpoints`], which clients
    /// talk to) and then the etcd members behind them.
    pub fn service(members: usize, config: &K8sConfig) -> Vec<K8sProcess> {
        let Some(etcd) = &config.etcd else {
            return vec![K8sProcess::Server(K8sServer::new(config))];
        };
        let first = members + config.apiservers;
        let endpoints: Vec<NodeId> = (first..first + etcd.members).map(NodeId::from).collect();
        let apiservers = (0..config.apiservers)
            .map(|i| K8sProcess::ApiServer(ApiServer::new(i, endpoints.clone())));
        let size = etcd.members;
        let members_of_etcd =
            (0..size).map(|i| K8sProcess::Etcd(EtcdMember::new(i, first, size, etcd)));
        apiservers.chain(members_of_etcd).collect()
    }
}

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

impl Process for K8sProcess {
    type Msg = K8sMsg;
    type Timer = K8sTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        match self {
            K8sProcess::Client(c) => c.on_start(ctx),
            K8sProcess::Etcd(m) => on_etcd::member_call(m, ctx, |m, c| m.on_start(c)),
            K8sProcess::Server(_) | K8sProcess::ApiServer(_) => {}
        }
    }

    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        match (self, msg) {
            (K8sProcess::Client(c), msg) => c.on_message(ctx, msg),
            (K8sProcess::Server(s), msg) => s.on_message(ctx, from, msg),
            (K8sProcess::ApiServer(a), msg) => a.on_message(ctx, from, msg),
            (K8sProcess::Etcd(m), K8sMsg::Etcd { msg }) => {
                on_etcd::member_call(m, ctx, |m, c| m.on_message(c, from, msg))
            }
            (K8sProcess::Etcd(_), _) => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut K8sCtx<'_, '_>, timer: K8sTimer) {
        match (self, timer) {
            (K8sProcess::Client(c), timer) => c.on_timer(ctx, timer),
            (K8sProcess::Server(s), timer) => s.on_timer(ctx, timer),
            (K8sProcess::Etcd(m), K8sTimer::Etcd(timer)) => {
                on_etcd::member_call(m, ctx, |m, c| m.on_timer(c, timer))
            }
            (K8sProcess::ApiServer(_) | K8sProcess::Etcd(_), _) => {}
        }
    }

    fn on_restart(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        match self {
            K8sProcess::Client(c) => c.on_restart(ctx),
            K8sProcess::Server(s) => s.on_restart(ctx),
            K8sProcess::ApiServer(a) => a.on_restart(),
            K8sProcess::Etcd(m) => on_etcd::member_call(m, ctx, |m, c| m.on_restart(c)),
        }
    }

    /// An API server skips an etcd member whose connection broke, an elector an API server
    /// (`Stream` only).
    fn on_disconnect(&mut self, ctx: &mut K8sCtx<'_, '_>, peer: NodeId) {
        match self {
            K8sProcess::ApiServer(a) => a.on_disconnect(ctx, peer),
            K8sProcess::Client(c) => c.on_disconnect(peer),
            K8sProcess::Server(_) | K8sProcess::Etcd(_) => {}
        }
    }

    fn on_resign(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if let K8sProcess::Client(c) = self {
            c.on_resign(ctx);
        }
    }

    fn term(&self) -> u64 {
        match self {
            K8sProcess::Client(c) => c.term(),
            K8sProcess::Server(s) => s.resource_version(),
            K8sProcess::ApiServer(_) => 0,
            K8sProcess::Etcd(m) => m.revision(),
        }
    }

    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        match self {
            K8sProcess::Client(c) => c.write_token(now),
            _ => None,
        }
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            K8sProcess::Client(c) => c.known_leader(),
            _ => None,
        }
    }

    /// An etcd member leads the cluster while its Raft leads.
    fn leads_service(&self) -> bool {
        matches!(self, K8sProcess::Etcd(m) if m.leads())
    }

    /// An elector talks to its API server (the single server, or one in front of etcd).
    fn service_member_used(&self) -> Option<NodeId> {
        match self {
            K8sProcess::Client(c) => Some(c.apiserver()),
            _ => None,
        }
    }

    /// An API server serves while it reaches a quorum of etcd members.
    fn is_service_gateway(&self) -> bool {
        matches!(self, K8sProcess::ApiServer(_))
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        match self {
            K8sProcess::Client(c) => c.inspect(),
            K8sProcess::Server(s) => s.inspect(),
            K8sProcess::ApiServer(a) => a.inspect(),
            K8sProcess::Etcd(m) => m.inspect(),
        }
    }
}
