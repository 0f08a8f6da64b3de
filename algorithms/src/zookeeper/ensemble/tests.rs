//! Tests of the ensemble: FastLeaderElection's outcome and timing, sessions surviving a
//! leader's death (re-tracked with their full timeout), expiry only through a quorum
//! commit, clients moving between servers, determinism, and a sweep of server faults.

use super::super::{info, ZkConfig, ZkProcess};
use super::ZkServer;
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, NodeId, PartitionShape, RunReport, Sim, SimConfig,
    StreamConfig, Target, Transport, NANOS_PER_MILLI,
};

const S: u64 = 1_000_000_000;
const MS: u64 = NANOS_PER_MILLI;

/// tick 200 ms, sessions of 2 s (10 ticks), 3 servers, initLimit 10, syncLimit 5 (1 s).
fn ensemble(servers: u64) -> ZkConfig {
    ZkConfig {
        tick_ns: 200 * MS,
        session_timeout_ns: 2 * S,
        servers,
        ..ZkConfig::default()
    }
}

fn sim_config(seed: u64, members: usize, duration_ns: u64, faults: Vec<FaultSpec>) -> SimConfig {
    let mut sim = SimConfig::quiet(seed, members, duration_ns);
    sim.network.transport = Transport::Stream(StreamConfig::default());
    sim.write_every_ns = 100 * MS;
    sim.fencing = true;
    sim.faults = faults;
    sim
}

/// Runs `members` candidates against `zk`; returns the report and the processes at the end.
fn run(
    seed: u64,
    members: usize,
    zk: &ZkConfig,
    duration_ns: u64,
    faults: Vec<FaultSpec>,
) -> (RunReport, Vec<ZkProcess>) {
    let sim = sim_config(seed, members, duration_ns, faults);
    let mut engine = Sim::new(sim, info(zk, members), ZkProcess::cluster(members, zk));
    let report = engine.run().expect("within the default limits");
    (report, engine.processes().to_vec())
}

fn servers(processes: &[ZkProcess]) -> Vec<&ZkServer> {
    processes
        .iter()
        .filter_map(|p| match p {
            ZkProcess::Server(s) => Some(&**s),
            _ => None,
        })
        .collect()
}

fn leading(processes: &[ZkProcess]) -> Vec<usize> {
    processes
        .iter()
        .enumerate()
        .filter(|(_, p)| splitbrain_sim::Process::leads_service(*p))
        .map(|(i, _)| i)
        .collect()
}

fn at(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
    }
}

/// `FastLeaderElection.totalOrderPredicate`: with equal epochs and zxids, the highest server
/// id wins; every server serves once the sync is done.
#[test]
fn an_ensemble_elects_the_highest_id_and_serves_with_its_followers() {
    let (report, processes) = run(1, 3, &ensemble(3), 5 * S, vec![]);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(leading(&processes), vec![5], "servers are 3, 4, 5");
    for s in servers(&processes) {
        assert!(s.serving(), "{:?}", s.inspect());
        assert_eq!(
            s.db().children.len(),
            3,
            "every candidate's node, everywhere"
        );
    }
    assert_eq!(report.leaders.len(), 1);
}
