//! Tests of the raft-rs adapter. Whole clusters run through the real engine ([`Sim`]) with
//! the faults of a [`SimConfig`]; `adapter.rs` drives single nodes by hand.

mod adapter;
mod determinism;
mod elections;
mod faults;
mod nemesis;

use crate::raft_rs::{info, RaftRsConfig, RaftRsNode};
use raft::StateRole;
use splitbrain_sim::{
    FaultAction, FaultSpec, NodeId, Process, RunReport, Sim, SimConfig, TraceSink, NANOS_PER_MILLI,
    NANOS_PER_SEC,
};

const MS: u64 = NANOS_PER_MILLI;
const SEC: u64 = NANOS_PER_SEC;

/// What a member looked like when the run ended.
#[derive(Clone, Debug)]
struct Final {
    state: StateRole,
    term: u64,
    known_leader: Option<NodeId>,
    /// The hard state in the member's storage (what a restart comes back with).
    stored_term: u64,
}

/// A run's report and its members' final states.
struct Outcome {
    report: RunReport,
    nodes: Vec<Final>,
}

/// Runs `members` raft-rs nodes under `sim` (its `members` is used), tracing to `trace`.
fn run_traced(sim: SimConfig, config: &RaftRsConfig, trace: Option<&mut dyn TraceSink>) -> Outcome {
    let members = sim.members;
    let nodes = (0..members)
        .map(|i| RaftRsNode::new(NodeId::from(i), members, config))
        .collect();
    let mut engine = Sim::new(sim, info(config, members), nodes);
    if let Some(sink) = trace {
        engine = engine.with_trace(sink);
    }
    let report = engine.run().expect("within the default limits");
    let nodes = engine
        .processes()
        .iter()
        .map(|node| Final {
            state: node.state(),
            term: node.term(),
            known_leader: node.known_leader(),
            stored_term: node.storage.rl().hard_state().term,
        })
        .collect();
    Outcome { report, nodes }
}

fn run(sim: SimConfig, config: &RaftRsConfig) -> Outcome {
    run_traced(sim, config, None)
}

/// The default settings with `pre_vote` and `check_quorum` as given.
fn settings(pre_vote: bool, check_quorum: bool) -> RaftRsConfig {
    RaftRsConfig {
        pre_vote,
        check_quorum,
        ..RaftRsConfig::default()
    }
}

/// A fault at `at_ns` that never heals by itself.
fn fault(at_ns: u64, action: FaultAction) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns: None,
        after: None,
    }
}

/// The nodes a fault struck, by its index in the run's fault records.
fn struck(report: &RunReport, fault: usize) -> Vec<NodeId> {
    report.faults[fault].nodes.clone()
}

#[test]
fn info_names_raft_rs_and_asks_for_a_majority_within_twice_the_election_ticks() {
    let config = RaftRsConfig {
        election_tick: 7,
        tick_ns: 3 * MS,
        ..RaftRsConfig::default()
    };
    for (members, majority) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (7, 4)] {
        let about = info(&config, members);
        assert_eq!(about.name, "raft-rs");
        assert_eq!(about.failure_detection_ns, 2 * 7 * 3 * MS);
        assert_eq!(about.min_group_for_progress, majority, "{members} members");
    }
}
