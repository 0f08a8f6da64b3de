//! The Kubernetes `Lease` lock of client-go's `leaderelection` package, on a modeled API
//! server: optimistic concurrency on `resourceVersion`; candidates time the holder's expiry by
//! their own observation of the last change to the record (`observedTime`), never by the
//! record's timestamps; the leader renews in rounds and stops leading when a round reaches the
//! renew deadline without a renewal. Rules `Strict`: the model's stricter timing (the renew
//! deadline from the last renewal's send, the lease duration to the nanosecond). Variant `DbRow`: a database-row lease whose expiry the
//! database judges by its own clock (`UPDATE .. WHERE holder IS NULL OR expires < now()`).
//! The server is one process, id `members`.

pub mod client;
pub mod config;
pub mod messages;
pub mod server;

mod settings;
#[cfg(test)]
mod tests;

pub use client::{looks_free, K8sClient};
pub use config::{K8sConfig, K8sRules, K8sVariant};
pub use messages::{Identity, K8sMsg, K8sTimer, Record};
pub use server::K8sServer;
pub use settings::{K8sError, K8sLease, K8sSettings};

use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, NodeId, Process};

/// What the engine's checks need to know about a Kubernetes Lease election.
pub fn info(config: &K8sConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        name: "k8s-lease".to_string(),
        failure_detection_ns: config
            .lease_duration_ns
            .saturating_add(config.retry_period_ns.saturating_mul(2)),
        min_group_for_progress: 1,
        signals: splitbrain_sim::SignalSupport::NONE,
        late_campaigns_lose: true,
    }
}

/// A process of a Kubernetes Lease run: a candidate, or the API server.
#[derive(Clone, Debug)]
pub enum K8sProcess {
    /// An election member (ids `0..members`).
    Client(K8sClient),
    /// The modeled API server holding the Lease (id `members`).
    Server(K8sServer),
}

impl K8sProcess {
    /// The processes of a run: `members` clients, then the server.
    pub fn cluster(members: usize, config: &K8sConfig) -> Vec<K8sProcess> {
        (0..members)
            .map(|i| K8sProcess::Client(K8sClient::new(NodeId::from(i), members, config)))
            .chain(std::iter::once(K8sProcess::Server(K8sServer::new(config))))
            .collect()
    }
}

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

impl Process for K8sProcess {
    type Msg = K8sMsg;
    type Timer = K8sTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if let K8sProcess::Client(c) = self {
            c.on_start(ctx);
        }
    }

    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        match self {
            K8sProcess::Client(c) => c.on_message(ctx, msg),
            K8sProcess::Server(s) => s.on_message(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut K8sCtx<'_, '_>, timer: K8sTimer) {
        match self {
            K8sProcess::Client(c) => c.on_timer(ctx, timer),
            K8sProcess::Server(s) => s.on_timer(ctx, timer),
        }
    }

    fn on_restart(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        match self {
            K8sProcess::Client(c) => c.on_restart(ctx),
            K8sProcess::Server(s) => s.on_restart(ctx),
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
        }
    }

    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        match self {
            K8sProcess::Client(c) => c.write_token(now),
            K8sProcess::Server(_) => None,
        }
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            K8sProcess::Client(c) => c.known_leader(),
            K8sProcess::Server(_) => None,
        }
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        match self {
            K8sProcess::Client(c) => c.inspect(),
            K8sProcess::Server(s) => s.inspect(),
        }
    }
}
