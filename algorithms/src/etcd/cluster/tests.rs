//! Whole runs of a 3-member etcd cluster on the real engine: Raft inside the members,
//! Promote and Demote, leader-only expiry, forwarding, the 3.4/3.5 difference under a
//! leader stuck in fsync, determinism, and a sweep of seeds under faults.

use super::*;
use crate::etcd::{info, EtcdProcess};
use splitbrain_sim::{
    FaultAction, FaultSpec, RunReport, Sim, SimConfig, Target, Transport, NANOS_PER_MILLI,
    NANOS_PER_SEC,
};

const S: u64 = NANOS_PER_SEC;
const MS: u64 = NANOS_PER_MILLI;
/// Election members (clients); the etcd members are processes 3, 4 and 5.
const NODES: usize = 3;

fn cluster_config(version: EtcdVersion) -> EtcdConfig {
    EtcdConfig {
        ttl_ns: 2 * S,
        keepalive_ns: 2 * S / 3,
        members: 3,
        version,
        ..EtcdConfig::default()
    }
}

fn sim_config(seed: u64, duration_ns: u64, faults: Vec<FaultSpec>) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, NODES, duration_ns);
    sim.network.transport = Transport::Stream(Default::default());
    sim.faults = faults;
    sim
}

/// Runs the cluster; returns the report and the processes at the end.
fn run(config: &EtcdConfig, sim: SimConfig) -> (RunReport, Vec<EtcdProcess>) {
    let processes = EtcdProcess::cluster(NODES, config);
    let mut engine = Sim::new(sim, info(config, NODES), processes);
    let report = engine.run().expect("within the default limits");
    (report, engine.processes().to_vec())
}

fn members(processes: &[EtcdProcess]) -> Vec<&EtcdMember> {
    processes
        .iter()
        .filter_map(|p| match p {
            EtcdProcess::Member(m) => Some(m),
            _ => None,
        })
        .collect()
}

fn fault(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
    }
}

#[test]
fn a_three_member_cluster_elects_one_raft_leader_and_serves_the_election() {
    let config = cluster_config(EtcdVersion::V3_4);
    let (report, processes) = run(&config, sim_config(1, 10 * S, Vec::new()));
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let members = members(&processes);
    assert_eq!(members.iter().filter(|m| m.leads()).count(), 1);
    assert_eq!(members.iter().filter(|m| m.primary()).count(), 1);
    assert!(report.final_leader.is_some(), "a client leads");
    for m in &members {
        assert_eq!(m.lease_count(), NODES, "every member applied the 3 grants");
        assert!(m.applied() >= 7, "an empty entry, 3 grants, 3 txns");
    }
    // The service members never claim: only clients appear as leaders.
    assert!(report.leaders.iter().all(|t| t.node.index() < NODES));
}
