//! Leader-election algorithms for splitbrain, one module each, as pure state machines on the
//! engine's [`splitbrain_sim::Process`] API. The engine knows none of them; this crate's
//! [`run`] is the one place that maps a configuration to a concrete process type.

pub mod bully;
pub mod etcd;
pub mod k8s_lease;
pub mod raft;
pub mod ring;
#[cfg(test)]
mod testing;
pub mod zookeeper;

use serde::Serialize;
use splitbrain_sim::{AlgorithmInfo, NodeId, Process, RunReport, Sim, SimConfig, TraceSink};
use std::sync::Arc;

/// A validated algorithm choice with its settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AlgorithmConfig {
    Raft(raft::RaftConfig),
    Bully(bully::BullyConfig),
    Ring(ring::RingConfig),
    Etcd(etcd::EtcdConfig),
    ZooKeeper(zookeeper::ZkConfig),
    K8sLease(k8s_lease::K8sConfig),
}

/// One line per algorithm for `splitbrain list`: name and summary.
pub const ALGORITHMS: &[(&str, &str)] = &[
    (
        "Raft",
        "Raft leader election (paper 5.2, 5.4.1): randomized timeouts, up-to-date-log votes, \
         pre_vote, check_quorum, leadership transfer; variants ForgetsVoteOnRestart and ForgetsTermOnRestart are broken on purpose",
    ),
    (
        "Bully",
        "Bully (Garcia-Molina 1982): heartbeat failure detection, ELECTION to higher ids, OK, \
         COORDINATOR, the highest live id wins and a recovering higher id takes over; epochs, no quorum",
    ),
    (
        "Ring",
        "Ring election: Chang-Roberts (1979) or the all-ids token ring; ring order and initiators \
         configurable, acknowledged hops that skip a dead successor; epochs, no quorum",
    ),
    (
        "Etcd",
        "etcd leases (TTL, keep-alives, expiry on the service clock) and the concurrency.Election \
         recipe (lowest create revision leads, watch the predecessor, revision as fencing token); \
         variants WallClockToken and SetNx are unsafe on purpose",
    ),
    (
        "ZooKeeper",
        "ZooKeeper sessions (negotiated timeout, pings, expiry by tick on the server clock) and the \
         election recipe (ephemeral sequential znodes, lowest leads, exists-watch on the \
         predecessor, czxid as fencing token); variants Herd and KeepUntilExpired",
    ),
    (
        "K8sLease",
        "Kubernetes Lease lock (client-go leaderelection): lease duration, renew deadline, retry \
         period, resourceVersion concurrency, expiry timed by each candidate's own sight of the \
         last change; variant DbRow, a database-row lease judged by the database's clock",
    ),
];

impl AlgorithmConfig {
    /// Facts the engine's checks need, for a cluster of `members`.
    pub fn info(&self, members: usize) -> AlgorithmInfo {
        match self {
            AlgorithmConfig::Raft(c) => raft::info(c, members),
            AlgorithmConfig::Bully(c) => bully::info(c, members),
            AlgorithmConfig::Ring(c) => ring::info(c, members),
            AlgorithmConfig::Etcd(c) => etcd::info(c, members),
            AlgorithmConfig::ZooKeeper(c) => zookeeper::info(c, members),
            AlgorithmConfig::K8sLease(c) => k8s_lease::info(c, members),
        }
    }

    /// The same settings for a cluster of `members` (shrinking a failing scenario drops
    /// members); `None` if the algorithm cannot run with that many.
    pub fn for_members(&self, members: usize) -> Option<Self> {
        if members == 0 {
            return None;
        }
        match self {
            AlgorithmConfig::Raft(c) => {
                let mut c = c.clone();
                if !c.log_lengths.is_empty() {
                    c.log_lengths.truncate(members);
                }
                Some(AlgorithmConfig::Raft(c))
            }
            AlgorithmConfig::Bully(_)
            | AlgorithmConfig::Ring(_)
            | AlgorithmConfig::Etcd(_)
            | AlgorithmConfig::ZooKeeper(_)
            | AlgorithmConfig::K8sLease(_) => Some(self.clone()),
        }
    }

    /// The algorithm named `name` (`raft`, `bully`, `ring`, any case) with its defaults.
    pub fn default_named(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "raft" => Some(AlgorithmConfig::Raft(raft::RaftConfig::default())),
            "bully" => Some(AlgorithmConfig::Bully(bully::BullyConfig::default())),
            "ring" => Some(AlgorithmConfig::Ring(ring::RingConfig::default())),
            "etcd" => Some(AlgorithmConfig::Etcd(etcd::EtcdConfig::default())),
            "zookeeper" => Some(AlgorithmConfig::ZooKeeper(zookeeper::ZkConfig::default())),
            "k8slease" | "k8s-lease" | "kubernetes" => {
                Some(AlgorithmConfig::K8sLease(k8s_lease::K8sConfig::default()))
            }
            _ => None,
        }
    }

    /// Whether the algorithm runs a modeled coordination service (process id `members`).
    pub fn has_service(&self) -> bool {
        matches!(
            self,
            AlgorithmConfig::Etcd(_) | AlgorithmConfig::ZooKeeper(_) | AlgorithmConfig::K8sLease(_)
        )
    }

    /// The algorithm's short name.
    pub fn name(&self) -> &'static str {
        match self {
            AlgorithmConfig::Raft(_) => "raft",
            AlgorithmConfig::Bully(_) => "bully",
            AlgorithmConfig::Ring(_) => "ring",
            AlgorithmConfig::Etcd(_) => "etcd",
            AlgorithmConfig::ZooKeeper(_) => "zookeeper",
            AlgorithmConfig::K8sLease(_) => "k8s-lease",
        }
    }
}

/// Runs `config` with this algorithm, tracing to `trace` if given.
pub fn run(
    algorithm: &AlgorithmConfig,
    config: SimConfig,
    trace: Option<&mut dyn TraceSink>,
) -> RunReport {
    let members = config.members;
    let info = algorithm.info(members);
    match algorithm {
        AlgorithmConfig::Raft(c) => {
            let nodes = (0..members)
                .map(|i| raft::RaftNode::new(NodeId::from(i), members, c))
                .collect();
            run_processes(config, info, nodes, trace)
        }
        AlgorithmConfig::Bully(c) => {
            let nodes = (0..members)
                .map(|i| bully::BullyNode::new(NodeId::from(i), members, c))
                .collect();
            run_processes(config, info, nodes, trace)
        }
        AlgorithmConfig::Ring(c) => {
            // Drawn once, before any node starts, so that every node agrees on the ring.
            let topology = Arc::new(ring::RingTopology::new(c.order, members, config.seed));
            let nodes = (0..members)
                .map(|i| ring::RingNode::new(NodeId::from(i), c, Arc::clone(&topology)))
                .collect();
            run_processes(config, info, nodes, trace)
        }
        AlgorithmConfig::Etcd(c) => {
            // The members campaign; the service is one more process, id `members`.
            let processes = etcd::EtcdProcess::cluster(members, c);
            run_processes(config, info, processes, trace)
        }
        AlgorithmConfig::ZooKeeper(c) => {
            // The members campaign; the server is one more process, id `members`.
            let processes = zookeeper::ZkProcess::cluster(members, c);
            run_processes(config, info, processes, trace)
        }
        AlgorithmConfig::K8sLease(c) => {
            // The members campaign; the API server (or database) is process `members`.
            let processes = k8s_lease::K8sProcess::cluster(members, c);
            run_processes(config, info, processes, trace)
        }
    }
}

fn run_processes<P: Process>(
    config: SimConfig,
    info: AlgorithmInfo,
    processes: Vec<P>,
    trace: Option<&mut dyn TraceSink>,
) -> RunReport {
    let sim = Sim::new(config, info, processes);
    match trace {
        Some(sink) => sim.with_trace(sink).run(),
        None => {
            let mut sim = sim;
            sim.run()
        }
    }
}
