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
pub mod messages;
pub mod service;

mod settings;
#[cfg(test)]
mod tests;

pub(crate) use settings::SERVICE_ELECTION_TIMEOUT;
pub use settings::{Etcd, EtcdError, EtcdSettings};

pub use client::{EtcdClient, Phase};
pub use cluster::EtcdMember;
pub use config::{EtcdClientKind, EtcdConfig, EtcdVariant, EtcdVersion};
pub use messages::{EtcdMsg, EtcdTimer};
pub use service::EtcdService;

use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, NodeId, Process};

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

/// A process of an etcd run: a candidate, or the service.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum EtcdProcess {
    /// An election member (ids `0..members`).
    Client(EtcdClient),
    /// The modeled etcd server (id `members`).
    Service(EtcdService),
    /// One etcd member of a cluster (ids `members..members + config.members`).
    Member(EtcdMember),
}

impl EtcdProcess {
    /// The processes of a run: `members` clients, then the service: one process, or
    /// `config.members` etcd members when that is more than one.
    pub fn cluster(members: usize, config: &EtcdConfig) -> Vec<EtcdProcess> {
        let clients = (0..members)
            .map(|i| EtcdProcess::Client(EtcdClient::new(NodeId::from(i), members, config)));
        clients.chain(Self::service(members, config)).collect()
    }

    /// The service's processes after `members` clients: the one server, or `config.members`
    /// etcd members when that is more than one. Any of them serves a client.
    pub fn service(members: usize, config: &EtcdConfig) -> Vec<EtcdProcess> {
        if config.members <= 1 {
            return vec![EtcdProcess::Service(EtcdService::new(config))];
        }
        let size = config.members;
        (0..size)
            .map(|i| EtcdProcess::Member(EtcdMember::new(i, members, size, config)))
            .collect()
    }
}

type EtcdCtx<'a, 'b> = Ctx<'a, EtcdMsg, EtcdTimer>;

impl Process for EtcdProcess {
    type Msg = EtcdMsg;
    type Timer = EtcdTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        match self {
            EtcdProcess::Client(c) => c.on_start(ctx),
            EtcdProcess::Service(s) => s.on_start(ctx),
            EtcdProcess::Member(m) => m.on_start(ctx),
        }
    }

    fn on_message(&mut self, ctx: &mut EtcdCtx<'_, '_>, from: NodeId, msg: EtcdMsg) {
        match self {
            EtcdProcess::Client(c) => c.on_message(ctx, from, msg),
            EtcdProcess::Service(s) => s.on_message(ctx, from, msg),
            EtcdProcess::Member(m) => m.on_message(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut EtcdCtx<'_, '_>, timer: EtcdTimer) {
        match self {
            EtcdProcess::Client(c) => c.on_timer(ctx, timer),
            EtcdProcess::Service(s) => s.on_timer(ctx, timer),
            EtcdProcess::Member(m) => m.on_timer(ctx, timer),
        }
    }

    fn on_restart(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        match self {
            EtcdProcess::Client(c) => c.on_restart(ctx),
            EtcdProcess::Service(s) => s.on_restart(ctx),
            EtcdProcess::Member(m) => m.on_restart(ctx),
        }
    }

    fn on_resign(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        if let EtcdProcess::Client(c) = self {
            c.on_resign(ctx);
        }
    }

    /// The service keeps leases across connections (only keep-alives extend them).
    fn on_disconnect(&mut self, ctx: &mut EtcdCtx<'_, '_>, peer: NodeId) {
        if let EtcdProcess::Client(c) = self {
            c.on_disconnect(ctx, peer);
        }
    }

    fn term(&self) -> u64 {
        match self {
            EtcdProcess::Client(c) => c.term(),
            EtcdProcess::Service(s) => s.revision(),
            EtcdProcess::Member(m) => m.revision(),
        }
    }

    fn write_token(&self, local_now_ns: LocalNanos) -> Option<u64> {
        match self {
            EtcdProcess::Client(c) => c.write_token(local_now_ns),
            EtcdProcess::Service(_) | EtcdProcess::Member(_) => None,
        }
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            EtcdProcess::Client(c) => c.known_leader(),
            EtcdProcess::Service(_) => None,
            EtcdProcess::Member(m) => m.known_leader(),
        }
    }

    /// A client talks to the single service, or to the member it is connected to.
    fn service_member_used(&self) -> Option<NodeId> {
        match self {
            EtcdProcess::Client(c) => Some(c.service()),
            EtcdProcess::Service(_) | EtcdProcess::Member(_) => None,
        }
    }

    /// An etcd member leads its cluster while its Raft leads.
    fn leads_service(&self) -> bool {
        matches!(self, EtcdProcess::Member(m) if m.leads())
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        match self {
            EtcdProcess::Client(c) => c.inspect(),
            EtcdProcess::Service(s) => s.inspect(),
            EtcdProcess::Member(m) => m.inspect(),
        }
    }
}
