//! Leader-election algorithms for splitbrain, one module each, as pure state machines on the
//! engine's [`splitbrain_sim::Process`] API. The engine knows none of them; this crate's
//! [`run`] is the one place that maps a configuration to a concrete process type.

pub mod bully;
pub mod etcd;
pub mod k8s_lease;
pub mod raft;
pub mod raft_rs;
pub mod ring;
#[cfg(test)]
mod testing;
pub mod zookeeper;

use serde::Serialize;
use splitbrain_sim::{AlgorithmInfo, Nanos, NodeId, Process, RunReport, Sim, SimConfig, TraceSink};
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

    /// Whether members send to every other member (Raft's votes and heartbeats, Bully's
    /// coordinator announcements): the messages in flight then grow with the square of the
    /// cluster, and so does the memory of a run.
    pub fn sends_to_every_member(&self) -> bool {
        matches!(self, AlgorithmConfig::Raft(_) | AlgorithmConfig::Bully(_))
    }

    /// Whether the algorithm runs a modeled coordination service (process id `members`).
    pub fn has_service(&self) -> bool {
        matches!(
            self,
            AlgorithmConfig::Etcd(_) | AlgorithmConfig::ZooKeeper(_) | AlgorithmConfig::K8sLease(_)
        )
    }

    /// Every timing in the settings, each with its field name in a scenario file (a range's
    /// ends as `name[0]` and `name[1]`).
    pub fn timings(&self) -> Vec<(&'static str, Nanos)> {
        match self {
            AlgorithmConfig::Raft(c) => vec![
                ("heartbeat", c.heartbeat_ns),
                ("election_timeout[0]", c.election_timeout_min_ns),
                ("election_timeout[1]", c.election_timeout_max_ns),
            ],
            AlgorithmConfig::Bully(c) => vec![
                ("heartbeat", c.heartbeat_ns),
                ("failure_timeout", c.failure_timeout_ns),
                ("answer_timeout", c.answer_timeout_ns),
                ("coordinator_timeout", c.coordinator_timeout_ns),
            ],
            AlgorithmConfig::Ring(c) => vec![
                ("heartbeat", c.heartbeat_ns),
                ("failure_timeout", c.failure_timeout_ns),
                ("ack_timeout", c.ack_timeout_ns),
            ],
            AlgorithmConfig::Etcd(c) => vec![
                ("keepalive", c.keepalive_ns),
                ("ttl", c.ttl_ns),
                ("min_ttl", c.min_ttl_ns),
            ],
            AlgorithmConfig::ZooKeeper(c) => vec![
                ("tick", c.tick_ns),
                ("session_timeout", c.session_timeout_ns),
            ],
            AlgorithmConfig::K8sLease(c) => vec![
                ("retry_period", c.retry_period_ns),
                ("renew_deadline", c.renew_deadline_ns),
                ("lease_duration", c.lease_duration_ns),
            ],
        }
    }

    /// The shortest timing in the settings, with its field name, at least 1 ns: no process
    /// of the algorithm acts on its own timers more often (the basis of [`expected_events`]).
    pub fn shortest_timing(&self) -> (&'static str, Nanos) {
        let mut timings = self.timings();
        if let AlgorithmConfig::ZooKeeper(c) = self {
            // Clients ping every third of the negotiated session timeout.
            timings.push(("session_timeout", c.negotiated_timeout_ns() / 3));
        }
        let (name, ns) = timings
            .into_iter()
            .min_by_key(|(_, ns)| *ns)
            .unwrap_or(("", 1));
        (name, ns.max(1))
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
    run_with(
        algorithm,
        config,
        RunOptions {
            trace,
            ..RunOptions::default()
        },
    )
}

/// An upper estimate of the events a run of `config` handles in the steady state: every
/// process (members and the service) acting once per the shortest timing of the algorithm
/// and the workload. Validation refuses runs whose estimate is absurd, and `run` shows a
/// progress bar for long ones.
pub fn expected_events(algorithm: &AlgorithmConfig, config: &SimConfig) -> u128 {
    let mut period_ns = algorithm.shortest_timing().1;
    if config.write_every_ns > 0 {
        period_ns = period_ns.min(config.write_every_ns);
    }
    let processes = config.members as u128 + u128::from(algorithm.has_service());
    u128::from(config.duration_ns / period_ns) * processes
}

/// What a caller may attach to a run besides its configuration.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Receives one JSON line per event.
    pub trace: Option<&'a mut dyn TraceSink>,
    /// Told the true time every [`splitbrain_sim::engine::PROGRESS_EVERY_EVENTS`] events.
    pub progress: Option<&'a mut dyn FnMut(Nanos)>,
    /// Stops the run after this many events even if simulated time remains (bounded runs in
    /// tests); the report then ends at the last event handled.
    pub max_events: Option<u64>,
}

/// Runs `config` with this algorithm and the given options.
pub fn run_with(algorithm: &AlgorithmConfig, config: SimConfig, options: RunOptions) -> RunReport {
    let members = config.members;
    let info = algorithm.info(members);
    match algorithm {
        AlgorithmConfig::Raft(c) => {
            let nodes = (0..members)
                .map(|i| raft::RaftNode::new(NodeId::from(i), members, c))
                .collect();
            run_processes(config, info, nodes, options)
        }
        AlgorithmConfig::Bully(c) => {
            let nodes = (0..members)
                .map(|i| bully::BullyNode::new(NodeId::from(i), members, c))
                .collect();
            run_processes(config, info, nodes, options)
        }
        AlgorithmConfig::Ring(c) => {
            // Drawn once, before any node starts, so that every node agrees on the ring.
            let topology = Arc::new(ring::RingTopology::new(c.order, members, config.seed));
            let nodes = (0..members)
                .map(|i| ring::RingNode::new(NodeId::from(i), c, Arc::clone(&topology)))
                .collect();
            run_processes(config, info, nodes, options)
        }
        AlgorithmConfig::Etcd(c) => {
            // The members campaign; the service is one more process, id `members`.
            let processes = etcd::EtcdProcess::cluster(members, c);
            run_processes(config, info, processes, options)
        }
        AlgorithmConfig::ZooKeeper(c) => {
            // The members campaign; the server is one more process, id `members`.
            let processes = zookeeper::ZkProcess::cluster(members, c);
            run_processes(config, info, processes, options)
        }
        AlgorithmConfig::K8sLease(c) => {
            // The members campaign; the API server (or database) is process `members`.
            let processes = k8s_lease::K8sProcess::cluster(members, c);
            run_processes(config, info, processes, options)
        }
    }
}

fn run_processes<P: Process>(
    config: SimConfig,
    info: AlgorithmInfo,
    processes: Vec<P>,
    options: RunOptions,
) -> RunReport {
    let mut sim = Sim::new(config, info, processes);
    if let Some(sink) = options.trace {
        sim = sim.with_trace(sink);
    }
    if let Some(progress) = options.progress {
        sim = sim.with_progress(progress);
    }
    if let Some(limit) = options.max_events {
        sim = sim.with_event_limit(limit);
    }
    sim.run()
}
