//! Modeled ZooKeeper (sessions with a negotiated timeout bounded by 2 and 20 ticks, client
//! pings, session expiry on the server's clock grouped by tick, ephemeral sequential znodes,
//! getChildren and exists with one-shot watches, a zxid) and its leader-election recipe, with
//! the herd variant and two behaviours on disconnect. `docs/algorithms/zookeeper.md` says
//! what is modeled and decided. The server is one process, id `members`.

pub mod client;
pub mod config;
pub mod messages;
pub mod service;
pub mod tracker;

mod settings;
#[cfg(test)]
mod tests;

pub use settings::{ZkError, ZkSettings, ZooKeeper};

pub use client::{ZkClient, ZkPhase};
pub use config::{ZkConfig, ZkOnDisconnect, ZkRecipe};
pub use messages::{ZkMsg, ZkTimer};
pub use service::ZkService;

use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, NodeId, Process};

/// What the engine's checks need to know about a ZooKeeper election.
pub fn info(config: &ZkConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        name: "zookeeper".to_string(),
        // A dead leader's session expires within the timeout plus one tick (the bucket);
        // its successor hears the delete at once; one third of the timeout of margin.
        failure_detection_ns: config.negotiated_timeout_ns()
            + config.tick_ns
            + config.negotiated_timeout_ns() / 3,
        min_group_for_progress: 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

/// A process of a ZooKeeper run: a candidate, or the server.
#[derive(Clone, Debug)]
pub enum ZkProcess {
    /// An election member (ids `0..members`).
    Client(ZkClient),
    /// The modeled ZooKeeper server (id `members`).
    Service(ZkService),
}

impl ZkProcess {
    /// The processes of a run: `members` clients, then the server.
    pub fn cluster(members: usize, config: &ZkConfig) -> Vec<ZkProcess> {
        (0..members)
            .map(|i| ZkProcess::Client(ZkClient::new(NodeId::from(i), members, config)))
            .chain(std::iter::once(ZkProcess::Service(ZkService::new(config))))
            .collect()
    }
}

type ZkCtx<'a, 'b> = Ctx<'a, ZkMsg, ZkTimer>;

impl Process for ZkProcess {
    type Msg = ZkMsg;
    type Timer = ZkTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if let ZkProcess::Client(c) = self {
            c.on_start(ctx);
        }
    }

    fn on_message(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, msg: ZkMsg) {
        match self {
            ZkProcess::Client(c) => c.on_message(ctx, from, msg),
            ZkProcess::Service(s) => s.on_message(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut ZkCtx<'_, '_>, timer: ZkTimer) {
        match self {
            ZkProcess::Client(c) => c.on_timer(ctx, timer),
            ZkProcess::Service(s) => s.on_timer(ctx, timer),
        }
    }

    fn on_restart(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        match self {
            ZkProcess::Client(c) => c.on_restart(ctx),
            ZkProcess::Service(s) => s.on_restart(ctx),
        }
    }

    fn on_resign(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if let ZkProcess::Client(c) = self {
            c.on_resign(ctx);
        }
    }

    /// The server keeps sessions across connections (only their timeout ends them).
    fn on_disconnect(&mut self, ctx: &mut ZkCtx<'_, '_>, peer: NodeId) {
        if let ZkProcess::Client(c) = self {
            c.on_disconnect(ctx, peer);
        }
    }

    fn term(&self) -> u64 {
        match self {
            ZkProcess::Client(c) => c.term(),
            ZkProcess::Service(s) => s.zxid(),
        }
    }

    fn write_token(&self, local_now_ns: LocalNanos) -> Option<u64> {
        match self {
            ZkProcess::Client(c) => c.write_token(local_now_ns),
            ZkProcess::Service(_) => None,
        }
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            ZkProcess::Client(c) => c.known_leader(),
            ZkProcess::Service(s) => s.leader(),
        }
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        match self {
            ZkProcess::Client(c) => c.inspect(),
            ZkProcess::Service(s) => s.inspect(),
        }
    }

    fn learns_leader_on_demand(&self) -> bool {
        match self {
            ZkProcess::Client(c) => c.learns_leader_on_demand(),
            ZkProcess::Service(_) => false,
        }
    }
}
