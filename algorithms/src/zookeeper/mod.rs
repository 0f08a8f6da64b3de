//! Modeled ZooKeeper (sessions with a negotiated timeout bounded by 2 and 20 ticks, client
//! pings, session expiry on the server's clock grouped by tick, ephemeral sequential znodes,
//! getChildren and exists with one-shot watches, a zxid) and its leader-election recipe, with
//! the herd variant and two behaviours on disconnect. `docs/algorithms/zookeeper.md` says
//! what is modeled and decided. The server is one process, id `members`; with `servers`
//! above 1 the service is an ensemble of server processes, ids `members..members + servers`
//! ([`ensemble`]: FastLeaderElection, the sync, ZAB's broadcast, sessions on the leader).

pub mod client;
pub mod config;
pub mod ensemble;
pub mod messages;
pub mod service;
pub mod tracker;

mod settings;
#[cfg(test)]
mod tests;

pub use settings::{ZkError, ZkSettings, ZooKeeper};

pub use client::{ZkClient, ZkPhase};
pub use config::{ZkConfig, ZkOnDisconnect, ZkRecipe};
pub use ensemble::ZkServer;
pub use messages::{ZkMsg, ZkTimer};
pub use service::ZkService;

use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, NodeId, Process};

/// What the engine's checks need to know about a ZooKeeper election.
pub fn info(config: &ZkConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "zookeeper".to_string(),
        // A dead leader's session expires within the timeout plus one tick (the bucket);
        // its successor hears the delete at once; one third of the timeout of margin.
        failure_detection_ns: config.negotiated_timeout_ns()
            + config.tick_ns
            + config.negotiated_timeout_ns() / 3
            + ensemble_failover_ns(config),
        min_group_for_progress: 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

/// An ensemble's failover on top of the single server's detection (0 for the single
/// server): a silent leader is dropped after `syncLimit` ticks, the election takes its
/// `finalizeWait` and a few notification rounds, the sync a tick or so (bounded by
/// `initLimit`, which a healthy quorum does not approach), and a client waits up to a second
/// before trying the next server, T/n per server tried. A new leader then gives every
/// session its full timeout, which the single server's part already counts.
pub fn ensemble_failover_ns(config: &ZkConfig) -> u64 {
    if !config.is_ensemble() {
        return 0;
    }
    config.sync_limit_ns() + 2 * config.tick_ns + 2_000_000_000 + config.negotiated_timeout_ns()
}

/// A process of a ZooKeeper run: a candidate, or the server.
#[derive(Clone, Debug)]
pub enum ZkProcess {
    /// An election member (ids `0..members`).
    Client(ZkClient),
    /// The modeled ZooKeeper server (id `members`).
    Service(ZkService),
    /// A server of an ensemble (ids `members..members + servers`).
    Server(Box<ZkServer>),
}

impl ZkProcess {
    /// The processes of a run: `members` clients, then the server (or, for an ensemble,
    /// `config.servers` servers).
    pub fn cluster(members: usize, config: &ZkConfig) -> Vec<ZkProcess> {
        let clients = (0..members)
            .map(|i| ZkProcess::Client(ZkClient::new(NodeId::from(i), members, config)));
        clients.chain(Self::service(members, config)).collect()
    }

    /// The service's processes after `members` clients: the one server, or the ensemble's
    /// `config.servers` servers. A client may connect to any of them.
    pub fn service(members: usize, config: &ZkConfig) -> Vec<ZkProcess> {
        if !config.is_ensemble() {
            return vec![ZkProcess::Service(ZkService::new(config))];
        }
        (members..members + config.servers as usize)
            .map(|i| ZkProcess::Server(Box::new(ZkServer::new(NodeId::from(i), members, config))))
            .collect()
    }
}

type ZkCtx<'a, 'b> = Ctx<'a, ZkMsg, ZkTimer>;

impl Process for ZkProcess {
    type Msg = ZkMsg;
    type Timer = ZkTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        match self {
            ZkProcess::Client(c) => c.on_start(ctx),
            ZkProcess::Server(s) => s.on_start(ctx),
            ZkProcess::Service(_) => {}
        }
    }

    fn on_message(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, msg: ZkMsg) {
        match self {
            ZkProcess::Client(c) => c.on_message(ctx, from, msg),
            ZkProcess::Service(s) => s.on_message(ctx, from, msg),
            ZkProcess::Server(s) => s.on_message(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut ZkCtx<'_, '_>, timer: ZkTimer) {
        match self {
            ZkProcess::Client(c) => c.on_timer(ctx, timer),
            ZkProcess::Service(s) => s.on_timer(ctx, timer),
            ZkProcess::Server(s) => s.on_timer(ctx, timer),
        }
    }

    fn on_restart(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        match self {
            ZkProcess::Client(c) => c.on_restart(ctx),
            ZkProcess::Service(s) => s.on_restart(ctx),
            ZkProcess::Server(s) => s.on_restart(ctx),
        }
    }

    fn on_resign(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if let ZkProcess::Client(c) = self {
            c.on_resign(ctx);
        }
    }

    /// The server keeps sessions across connections (only their timeout ends them); an
    /// ensemble server drops a client's watches, or a silent leader or follower.
    fn on_disconnect(&mut self, ctx: &mut ZkCtx<'_, '_>, peer: NodeId) {
        match self {
            ZkProcess::Client(c) => c.on_disconnect(ctx, peer),
            ZkProcess::Server(s) => s.on_disconnect(ctx, peer),
            ZkProcess::Service(_) => {}
        }
    }

    fn term(&self) -> u64 {
        match self {
            ZkProcess::Client(c) => c.term(),
            ZkProcess::Service(s) => s.zxid(),
            ZkProcess::Server(s) => s.zxid(),
        }
    }

    fn write_token(&self, local_now_ns: LocalNanos) -> Option<u64> {
        match self {
            ZkProcess::Client(c) => c.write_token(local_now_ns),
            ZkProcess::Service(_) | ZkProcess::Server(_) => None,
        }
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            ZkProcess::Client(c) => c.known_leader(),
            ZkProcess::Service(s) => s.leader(),
            ZkProcess::Server(s) => s.known_leader(),
        }
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        match self {
            ZkProcess::Client(c) => c.inspect(),
            ZkProcess::Service(s) => s.inspect(),
            ZkProcess::Server(s) => s.inspect(),
        }
    }

    fn learns_leader_on_demand(&self) -> bool {
        match self {
            ZkProcess::Client(c) => c.learns_leader_on_demand(),
            ZkProcess::Service(_) | ZkProcess::Server(_) => false,
        }
    }

    /// A client's session is on the single server, or on its current ensemble server.
    fn service_member_used(&self) -> Option<NodeId> {
        match self {
            ZkProcess::Client(c) => Some(c.server()),
            ZkProcess::Service(_) | ZkProcess::Server(_) => None,
        }
    }

    fn leads_service(&self) -> bool {
        match self {
            ZkProcess::Server(s) => s.leads_service(),
            ZkProcess::Client(_) | ZkProcess::Service(_) => false,
        }
    }
}
