//! The Kubernetes Lease through an API server backed by the etcd cluster model: the record
//! lives in etcd, its resource version is etcd's revision, an etcd outage is an API-server
//! outage, and the checker's invariants fire on a broken variant as on the single server.

use super::*;
use crate::algorithm::{Algorithm, Cluster};
use crate::etcd::EtcdVersion;
use splitbrain_sim::{Ctx, Effect, Process as _, SimRng, StreamId};
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, LivenessVerdict, PartitionShape, RunReport, Sim, SimConfig,
    Target, NANOS_PER_MILLI,
};

const S: u64 = 1_000_000_000;
const MS: u64 = NANOS_PER_MILLI;

/// client-go's defaults ten times shorter under the `Strict` rules, in front of a 3-member
/// etcd cluster (the API server is process 3, the etcd members 4 to 6).
fn on_etcd(version: &str) -> K8sConfig {
    let settings = K8sSettings {
        lease_duration: Some(splitbrain_sim::duration::DurationText(1_500 * MS)),
        rules: Some(K8sRules::Strict),
        etcd_members: Some(3),
        etcd_version: Some(version.to_string()),
        ..K8sSettings::default()
    };
    let (config, problems) = K8sLease::lower(settings, &Cluster { nodes: 3 });
    assert!(problems.is_empty(), "{problems:?}");
    config
}

fn fault(at_ns: u64, action: FaultAction, heal_after_ns: Option<u64>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action,
        heal_after_ns,
        after: None,
    }
}

/// Runs `config` for `duration_ns`; the report and the processes at the end.
fn run(
    config: &K8sConfig,
    seed: u64,
    duration_ns: u64,
    fencing: bool,
    faults: Vec<FaultSpec>,
) -> (RunReport, Vec<K8sProcess>) {
    let mut sim = SimConfig::quiet(seed, 3, duration_ns);
    sim.write_every_ns = 100 * MS;
    sim.fencing = fencing;
    sim.faults = faults;
    let mut engine = Sim::new(sim, info(config, 3), crate::k8s_lease::processes(3, config));
    let report = engine.run().expect("within the default limits");
    (report, engine.processes().to_vec())
}

/// The API server's link to each etcd member cut at `at_ns` for `for_ns`.
fn api_server_loses_etcd(at_ns: u64, for_ns: u64) -> Vec<FaultSpec> {
    (1..=3)
        .map(|i| {
            let shape = PartitionShape::CutLink(Target::ServiceMember(0), Target::ServiceMember(i));
            fault(at_ns, FaultAction::Partition(shape), Some(for_ns))
        })
        .collect()
}

#[test]
fn the_service_runs_as_api_servers_then_etcd_members_and_names_them() {
    let config = on_etcd("3.4");
    let processes = crate::k8s_lease::processes(3, &config);
    assert_eq!(processes.len(), 7);
    assert!(processes[3].get::<ApiServer>().is_some());
    assert!(processes[4..]
        .iter()
        .all(|p| p.get::<EtcdOnK8s>().is_some()));
    assert_eq!(K8sLease::service_processes(&config), 4);
    assert_eq!(
        K8sLease::service_names(&config),
        ["apiserver-0", "etcd-0", "etcd-1", "etcd-2"]
    );
    let single = K8sConfig::default();
    assert_eq!(K8sLease::service_processes(&single), 1);
    assert_eq!(K8sLease::service_names(&single), ["API server"]);
    let two = K8sConfig {
        apiservers: 2,
        ..config
    };
    let processes = crate::k8s_lease::processes(3, &two);
    // Member i's first connection lands on API server i % 2.
    let servers: Vec<usize> = processes[..3]
        .iter()
        .map(|p| client(p).apiserver().index())
        .collect();
    assert_eq!(servers, [3, 4, 3]);
}

/// The default settings ten times shorter (`Strict`) on 3 API servers in front of a 3-member
/// etcd (electors 0-2, API servers 3-5, etcd 6-8).
fn three_apiservers() -> K8sConfig {
    K8sConfig {
        apiservers: 3,
        ..on_etcd("3.4")
    }
}

/// The leader of a fault-free run at `at_ns` and the API server (0-2) each elector's
/// connection reaches then (the runs with a fault at `at_ns` are the same until then).
fn leader_at(config: &K8sConfig, seed: u64, at_ns: u64) -> (usize, Vec<usize>) {
    let (report, processes) = run(config, seed, at_ns, true, vec![]);
    assert_eq!(report.leaders.len(), 1, "seed {seed}: {:?}", report.leaders);
    let apiservers = (0..3)
        .map(|i| client_of(&processes, i).apiserver().index() - 3)
        .collect();
    (report.leaders[0].node.index(), apiservers)
}

fn client_of(processes: &[K8sProcess], i: usize) -> &K8sClient {
    client(&processes[i])
}

fn client(process: &K8sProcess) -> &K8sClient {
    process.get().expect("the electors come first")
}

fn etcd_member(process: &K8sProcess) -> &EtcdMember {
    let on_k8s: &EtcdOnK8s = process.get().expect("etcd members last");
    &on_k8s.member
}

/// The API server the leader's connection reached crashes for good: the renewal sent to it
/// fails, the next one, a retry period (200 ms) later, goes to the next API server, well
/// inside the 1 s renew deadline, and the holder keeps the Lease: no failover. client-go's
/// leader-election client reaches the API servers through a load balancer; a refused or
/// timed-out request is retried at the next retry period on a new connection
/// (`resourcelock/interface.go`, `NewFromKubeconfig`; `leaderelection.go`, `renew`).
#[test]
fn a_crash_of_the_leaders_api_server_moves_its_renewals_to_another_and_it_keeps_the_lease() {
    let config = three_apiservers();
    for seed in 1..=5 {
        let (leader, apiservers) = leader_at(&config, seed, 3 * S);
        let crashed = apiservers[leader];
        let crash = fault(
            3 * S,
            FaultAction::Crash(Target::ServiceMember(crashed as u32)),
            None,
        );
        let (report, processes) = run(&config, seed, 8 * S, true, vec![crash]);
        assert!(report.violations.is_empty(), "{:?}", report.violations);
        assert_eq!(report.faults[0].nodes[0].index(), 3 + crashed);
        assert_eq!(
            report.leaders.len(),
            1,
            "seed {seed}: the leader lost the Lease: {:?}",
            report.leaders
        );
        assert_eq!(report.final_leader.map(|n| n.index()), Some(leader));
        let moved = client_of(&processes, leader).apiserver().index();
        assert_ne!(moved, 3 + crashed, "seed {seed}");
    }
}

/// One of three API servers crashes for good while it serves no leader: nothing happens to
/// the Lease, and the electors it served move to another API server and go on reading the
/// record (their resource version keeps up with the leader's renewals).
#[test]
fn a_crash_of_an_api_server_serving_no_leader_changes_nothing_and_its_electors_move_on() {
    let config = three_apiservers();
    for seed in 1..=5 {
        let (leader, apiservers) = leader_at(&config, seed, 3 * S);
        // An API server the leader does not use, one that serves another elector if any.
        let crashed = (1..3)
            .map(|k| (apiservers[leader] + k) % 3)
            .max_by_key(|a| apiservers.iter().filter(|b| *b == a).count())
            .expect("two others");
        let crash = fault(
            3 * S,
            FaultAction::Crash(Target::ServiceMember(crashed as u32)),
            None,
        );
        let (report, processes) = run(&config, seed, 8 * S, true, vec![crash]);
        assert!(report.violations.is_empty(), "{:?}", report.violations);
        assert_eq!(report.leaders.len(), 1, "seed {seed}: {:?}", report.leaders);
        assert_eq!(report.final_leader.map(|n| n.index()), Some(leader));
        let moved: Vec<usize> = (0..3).filter(|i| apiservers[*i] == crashed).collect();
        for i in moved {
            let served = client_of(&processes, i);
            assert_ne!(served.apiserver().index(), 3 + crashed, "seed {seed}");
            // The leader renews every 200 ms; a reader within a few polls of it is not stuck.
            let behind = client_of(&processes, leader).term() - served.term();
            assert!(
                behind <= 10,
                "seed {seed}: elector {i} {behind} versions behind"
            );
        }
    }
}

/// On `Stream` connections a crash breaks the elector's connection at once and it moves to
/// the next API server then, before its next try.
#[test]
fn a_broken_connection_moves_an_elector_to_the_next_api_server_at_once() {
    let config = three_apiservers();
    let mut c = K8sClient::new(NodeId::from(1), 3, &config);
    let mut rng = SimRng::stream(1, StreamId::node(1));
    let mut out: Vec<Effect<K8sMsg, K8sTimer>> = Vec::new();
    let mut ctx = Ctx::new(NodeId::from(1), 3, 0, &mut rng, &mut out);
    assert_eq!(c.apiserver(), NodeId::from(4));
    c.on_disconnect(&mut ctx, NodeId::from(5));
    assert_eq!(
        c.apiserver(),
        NodeId::from(4),
        "another API server's connection"
    );
    c.on_disconnect(&mut ctx, NodeId::from(4));
    assert_eq!(c.apiserver(), NodeId::from(5));
    c.on_disconnect(&mut ctx, NodeId::from(5));
    assert_eq!(c.apiserver(), NodeId::from(3), "round robin wraps");
}

/// The Lease is stored in etcd: every member holds the same object, its holder is the
/// leader, and the leader's token is the revision at which etcd applied its acquisition
/// (the record's `resourceVersion` is etcd's `mod_revision`).
#[test]
fn the_lease_lives_in_etcd_and_the_token_is_the_revision_of_its_acquisition() {
    let (report, processes) = run(&on_etcd("3.4"), 1, 10 * S, true, Vec::new());
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(report.leaders.len(), 1, "{:?}", report.leaders);
    let leader = &report.leaders[0];
    let objects: Vec<_> = processes[4..]
        .iter()
        .map(|p| etcd_member(p).object().cloned().expect("the Lease exists"))
        .collect();
    assert!(objects.iter().all(|o| o.owner == objects[0].owner));
    let object = &objects[0];
    assert_eq!(object.owner.map(|(node, _)| node), Some(leader.node));
    assert_eq!(
        object.owner_since, leader.term,
        "the token is etcd's revision"
    );
    assert!(
        object.mod_rev > object.owner_since,
        "renewals bump the revision"
    );
    assert_eq!(
        object.value, 1,
        "LeaseDurationSeconds as client-go writes it"
    );
}

/// etcd's leader killed for 3 s: the remaining members elect another within about 2 s and
/// the API server's requests reach them; the holder renews through it and never loses the
/// Lease (3.4 and 3.5 alike).
#[test]
fn the_holder_keeps_the_lease_through_a_crash_of_the_etcd_leader() {
    for version in ["3.4", "3.5"] {
        for seed in 1..=5 {
            let crash = fault(
                5 * S,
                FaultAction::Crash(Target::ServiceLeader),
                Some(3 * S),
            );
            let config = K8sConfig {
                // A renew deadline longer than etcd's failover (up to 1.9 s and a round).
                renew_deadline_ns: 3 * S,
                lease_duration_ns: 4 * S,
                ..on_etcd(version)
            };
            let (report, _) = run(&config, seed, 15 * S, true, vec![crash]);
            assert!(report.violations.is_empty(), "{:?}", report.violations);
            assert_eq!(report.faults[0].nodes.len(), 1);
            assert!(report.faults[0].nodes[0].index() >= 4, "an etcd member");
            assert_eq!(
                report.leaders.len(),
                1,
                "{version} seed {seed}: {:?}",
                report.leaders
            );
        }
    }
}

/// An API server cut off from etcd answers nothing: the leader cannot renew and stops
/// leading at its renew deadline, nobody can take the Lease while the cut lasts, and after
/// the heal someone leads again. Safe, with a leaderless gap of about the cut.
#[test]
fn an_api_server_that_loses_etcd_stops_the_election_until_it_is_back() {
    for seed in 1..=5 {
        let faults = api_server_loses_etcd(5 * S, 4 * S);
        let (report, _) = run(&on_etcd("3.4"), seed, 15 * S, true, faults);
        assert!(report.violations.is_empty(), "{:?}", report.violations);
        let first = report.leaders[0].at_ns;
        assert!(first < 5 * S, "seed {seed}: {:?}", report.leaders);
        assert!(
            report.leaders[1..].iter().all(|l| l.at_ns >= 9 * S),
            "seed {seed}: nobody takes the Lease without etcd: {:?}",
            report.leaders
        );
        assert!(report.final_leader.is_some(), "seed {seed}");
        assert!(
            matches!(report.liveness, LivenessVerdict::Met { .. }),
            "seed {seed}: {:?}",
            report.liveness
        );
    }
}

/// Two of three etcd members down: no quorum, so no API server can serve, and the liveness
/// check says so rather than blaming the electors.
#[test]
fn an_etcd_without_quorum_is_an_api_server_outage() {
    let crash = |i| fault(5 * S, FaultAction::Crash(Target::ServiceMember(i)), None);
    let (report, _) = run(&on_etcd("3.4"), 1, 12 * S, true, vec![crash(2), crash(3)]);
    assert!(
        report.violated_safety().is_empty(),
        "{:?}",
        report.violations
    );
    assert!(
        report.leaders.iter().all(|l| l.at_ns < 5 * S),
        "{:?}",
        report.leaders
    );
    let LivenessVerdict::Impossible { reason, .. } = &report.liveness else {
        panic!("{:?}", report.liveness);
    };
    assert!(reason.contains("no quorum"), "{reason}");
}

/// The checker knows no internals: a holder stalled past its lease writes after another
/// has taken over, and without fencing the resource takes it (violated, as with the single
/// API server); with fencing the stale write is refused. Quiet on the correct setup over a
/// sweep (the nemesis sweep in tests/cli covers more).
#[test]
fn fencing_safety_fires_on_an_unfenced_stalled_holder_and_holds_with_fencing() {
    let stall = || {
        vec![fault(
            5_100 * MS,
            FaultAction::Stall(Target::Leader, 3 * S),
            None,
        )]
    };
    let fired = (1..=20)
        .filter(|seed| {
            let (report, _) = run(&on_etcd("3.4"), *seed, 15 * S, false, stall());
            report
                .violations
                .iter()
                .any(|v| v.invariant == Invariant::FencingSafety)
        })
        .count();
    assert!(fired >= 10, "fired in {fired} of 20 seeds");
    for seed in 1..=20 {
        let (report, _) = run(&on_etcd("3.4"), seed, 15 * S, true, stall());
        assert!(
            report.violated_safety().is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
    }
}

/// client-go's release through etcd: the API server reads the record and clears it if it
/// still names the resigner; the next candidate takes it within a few retry periods.
#[test]
fn a_release_through_etcd_hands_the_lease_over() {
    let config = on_etcd("3.5");
    let resign = fault(5 * S, FaultAction::Resign(Target::Leader), None);
    let (report, processes) = run(&config, 2, 10 * S, true, vec![resign]);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(report.leaders.len(), 2, "{:?}", report.leaders);
    let handover_ns = report.leaders[1].at_ns - 5 * S;
    assert!(handover_ns < 3 * config.retry_period_ns, "{handover_ns}");
    let member = etcd_member(&processes[4]);
    let object = member.object().expect("the Lease exists");
    assert_eq!(object.owner.map(|(n, _)| n), Some(report.leaders[1].node));
}

#[test]
fn etcd_settings_are_checked_and_written_back() {
    let lower = |settings: K8sSettings| K8sLease::lower(settings, &Cluster { nodes: 3 });
    let first = |settings| {
        let (_, problems) = lower(settings);
        problems.into_iter().next().map(|p| (p.field, p.error))
    };
    assert_eq!(
        first(K8sSettings {
            apiservers: Some(2),
            ..K8sSettings::default()
        }),
        Some((
            "apiservers",
            K8sError::EtcdOnly {
                field: "apiservers"
            }
        ))
    );
    let even = first(K8sSettings {
        etcd_members: Some(4),
        ..K8sSettings::default()
    });
    assert!(
        matches!(even, Some(("etcd_members", K8sError::Etcd(_)))),
        "{even:?}"
    );
    let version = first(K8sSettings {
        etcd_members: Some(3),
        etcd_version: Some("3.3".into()),
        ..K8sSettings::default()
    });
    assert!(
        matches!(version, Some(("etcd_version", K8sError::Etcd(_)))),
        "{version:?}"
    );
    assert_eq!(
        first(K8sSettings {
            etcd_members: Some(3),
            apiservers: Some(0),
            ..K8sSettings::default()
        }),
        Some((
            "apiservers",
            K8sError::ApiServersOutOfRange { apiservers: 0 }
        ))
    );
    assert_eq!(
        first(K8sSettings {
            etcd_members: Some(3),
            variant: Some(K8sVariant::DbRow),
            ..K8sSettings::default()
        }),
        Some(("variant", K8sError::DbRowOnEtcd))
    );
    let config = on_etcd("3.5");
    let etcd = config.etcd.as_ref().expect("on etcd");
    assert_eq!((etcd.members, etcd.version), (3, EtcdVersion::V3_5));
    let (again, problems) = lower(K8sLease::settings(&config));
    assert!(problems.is_empty());
    assert_eq!(again, config, "written back, read again: the same");
    let (single, _) = lower(K8sLease::settings(&K8sConfig::default()));
    assert_eq!(single.etcd, None);
}

/// `service_election_timeout` varies the etcd cluster's election timeout (and the minimum
/// TTL etcd derives from it), only where there is a cluster.
#[test]
fn the_service_election_timeout_knob_reaches_the_etcd_cluster() {
    use crate::algorithm::KnobValue;
    let cluster = Cluster { nodes: 3 };
    let knob = KnobValue::Duration(2 * S);
    let varied = K8sLease::vary(&on_etcd("3.4"), &cluster, "service_election_timeout", knob)
        .expect("a cluster has an election timeout");
    assert_eq!(varied.etcd.expect("on etcd").election_timeout_ns, 2 * S);
    let single = K8sLease::vary(
        &K8sConfig::default(),
        &cluster,
        "service_election_timeout",
        KnobValue::Duration(2 * S),
    );
    assert!(single.is_err(), "the single API server has no election");
}
