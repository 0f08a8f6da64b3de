//! Leader-election algorithms for splitbrain, one module each, as pure state machines on the
//! engine's [`splitbrain_sim::Process`] API. The engine knows none of them; this crate's
//! [`run`] is the one place that maps a configuration to a concrete process type.

pub mod raft;

use serde::Serialize;
use splitbrain_sim::{AlgorithmInfo, NodeId, Process, RunReport, Sim, SimConfig, TraceSink};

/// A validated algorithm choice with its settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AlgorithmConfig {
    Raft(raft::RaftConfig),
}

/// One line per algorithm for `splitbrain list`: name and summary.
pub const ALGORITHMS: &[(&str, &str)] = &[(
    "Raft",
    "Raft leader election (paper 5.2, 5.4.1): randomized timeouts, up-to-date-log votes, \
     pre_vote, check_quorum, leadership transfer; variant ForgetsVoteOnRestart is broken on purpose",
)];

impl AlgorithmConfig {
    /// Facts the engine's checks need, for a cluster of `members`.
    pub fn info(&self, members: usize) -> AlgorithmInfo {
        match self {
            AlgorithmConfig::Raft(c) => raft::info(c, members),
        }
    }

    /// The algorithm's short name.
    pub fn name(&self) -> &'static str {
        match self {
            AlgorithmConfig::Raft(_) => "raft",
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
