//! Modeled ZooKeeper (sessions with a negotiated timeout bounded by 2 and 20 ticks, client
//! pings, session expiry on the server's clock grouped by tick, ephemeral sequential znodes,
//! getChildren and exists with one-shot watches, a zxid) and its leader-election recipe, with
//! the herd variant and two behaviours on disconnect. `docs/algorithms/zookeeper.md` says
//! what is modeled and decided. The server is one process, id `members`; with `servers`
//! above 1 the service is an ensemble of server processes, ids `members..members + servers`
//! ([`ensemble`]: FastLeaderElection, the sync, ZAB's broadcast, sessions on the leader).

pub mod client;
pub mod config;
pub mod db;
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

use crate::hosted::{host, HostedProcess};
use splitbrain_sim::{AlgorithmInfo, NodeId};

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

/// A process of a ZooKeeper run: a candidate ([`ZkClient`]), the single server
/// ([`ZkService`]), or a server of an ensemble ([`ZkServer`]).
pub type ZkProcess = HostedProcess<ZkMsg, ZkTimer>;

/// The processes of a run: `members` clients, then the server (or, for an ensemble,
/// `config.servers` servers).
pub fn processes(members: usize, config: &ZkConfig) -> Vec<ZkProcess> {
    let clients = (0..members).map(|i| host(ZkClient::new(NodeId::from(i), members, config)));
    clients.chain(service(members, config)).collect()
}

/// The service's processes after `members` clients: the one server, or the ensemble's
/// `config.servers` servers. A client may connect to any of them.
pub fn service(members: usize, config: &ZkConfig) -> Vec<ZkProcess> {
    if !config.is_ensemble() {
        return vec![host(ZkService::new(config))];
    }
    (members..members + config.servers as usize)
        .map(|i| host(ZkServer::new(NodeId::from(i), members, config)))
        .collect()
}
