//! A coordination service of several processes: its members as fault targets, its answer
//! to who leads, and its quorum for liveness.

use super::*;

/// Three members (n0 claims at 10 ms, n1 and n2 would ask the service), then three service
/// members: n3, n4 (which says it leads the service, in term 2) and n5. Each service member
/// names `answers[i]` when asked who leads.
fn cluster(answers: [Option<u32>; 3]) -> Vec<Toy> {
    let mut processes = vec![Toy::claims(10 * MS, 1), asker(), asker()];
    for (i, answer) in answers.into_iter().enumerate() {
        processes.push(Toy {
            leader: answer.map(NodeId),
            leads_service: i == 1,
            term: if i == 1 { 2 } else { 1 },
            ..Toy::default()
        });
    }
    processes
}

fn struck(target: Target) -> (RunReport, Vec<NodeId>) {
    let mut c = config(3, 2 * S);
    c.faults = vec![fault(5 * MS, FaultAction::Pause(target, MS))];
    let (report, _) = run(c, cluster([Some(0); 3]));
    let nodes = report.faults[0].nodes.clone();
    (report, nodes)
}

#[test]
fn service_targets_name_members_of_the_service_by_index_and_by_role() {
    assert_eq!(struck(Target::ServiceMember(0)).1, vec![NodeId(3)]);
    assert_eq!(struck(Target::ServiceMember(2)).1, vec![NodeId(5)]);
    assert_eq!(struck(Target::ServiceMember(3)).1, vec![], "past the last");
    assert_eq!(struck(Target::ServiceLeader).1, vec![NodeId(4)]);
    let follower = struck(Target::ServiceFollower).1;
    assert!(
        follower == vec![NodeId(3)] || follower == vec![NodeId(5)],
        "{follower:?}"
    );
    assert_eq!(
        struck(Target::Service).1,
        vec![NodeId(3), NodeId(4), NodeId(5)]
    );
}

#[test]
fn a_fault_on_a_service_member_is_described_by_its_place_and_role() {
    let (report, _) = struck(Target::ServiceLeader);
    assert_eq!(
        report.faults[0].description,
        "pause n4 (service member 1, its leader) for 1ms"
    );
    let (report, _) = struck(Target::ServiceMember(0));
    assert_eq!(
        report.faults[0].description,
        "pause n3 (service member 0) for 1ms"
    );
}

#[test]
fn a_fault_on_a_named_service_process_uses_the_name_every_output_gives_it() {
    let mut c = config(3, 2 * S);
    c.faults = vec![
        fault(5 * MS, FaultAction::Pause(Target::ServiceLeader, MS)),
        fault(6 * MS, FaultAction::Pause(Target::ServiceMember(2), MS)),
    ];
    let mut info = info(3);
    info.service_names = ["etcd-0", "etcd-1", "etcd-2"].map(String::from).to_vec();
    let mut sim = Sim::new(c, info, cluster([Some(0); 3]));
    let report = sim.run().expect("within the default limits");
    let described: Vec<&str> = report
        .faults
        .iter()
        .map(|f| f.description.as_str())
        .collect();
    assert_eq!(
        described,
        [
            "pause etcd-1 (service leader) for 1ms",
            "pause etcd-2 for 1ms"
        ]
    );
}

/// Of several believers, the one with the highest term leads (a deposed leader that has not
/// heard of its successor is not the leader a fault on "the service's leader" means).
#[test]
fn the_service_leader_is_the_believer_with_the_highest_term() {
    let mut processes = cluster([Some(0); 3]);
    processes[5].leads_service = true;
    processes[5].term = 3;
    let mut c = config(3, 2 * S);
    c.faults = vec![fault(5 * MS, FaultAction::Crash(Target::ServiceLeader))];
    let (report, _) = run(c, processes);
    assert_eq!(report.faults[0].nodes, vec![NodeId(5)]);
}

/// A single-process service is its own leader and has no follower, so that `compare` can
/// strike "the service's leader" of one process and of a cluster alike.
#[test]
fn a_single_service_process_is_its_own_leader() {
    for (target, nodes) in [
        (Target::ServiceLeader, vec![NodeId(3)]),
        (Target::ServiceFollower, vec![]),
    ] {
        let mut c = config(3, 2 * S);
        c.faults = vec![fault(5 * MS, FaultAction::Pause(target, MS))];
        let processes = vec![Toy::claims(10 * MS, 1), asker(), asker(), service_naming(0)];
        let (report, _) = run(c, processes);
        assert_eq!(report.faults[0].nodes, nodes);
    }
}

/// Members that would ask recognise the leader the service names: every service member
/// that names one must name the same, or a client could be told either.
#[test]
fn askers_recognise_a_leader_only_when_the_service_members_agree() {
    let verdict = |answers| {
        let (report, _) = run(config(3, 2 * S), cluster(answers));
        report.liveness
    };
    let met = |v: &LivenessVerdict| {
        matches!(
            v,
            LivenessVerdict::Met {
                leader: NodeId(0),
                ..
            }
        )
    };
    assert!(met(&verdict([Some(0), Some(0), None])));
    assert!(met(&verdict([None, Some(0), None])));
    let split = verdict([Some(0), Some(1), None]);
    assert!(matches!(split, LivenessVerdict::Missed { .. }), "{split:?}");
}

/// Without a quorum of its members the service cannot serve: liveness is ruled out, as for
/// a crashed single-process service; one member down of three leaves a quorum.
#[test]
fn a_service_without_a_quorum_of_members_makes_liveness_impossible() {
    let crash = |i| fault(5 * MS, FaultAction::Crash(Target::ServiceMember(i)));
    let mut c = config(3, 2 * S);
    c.faults = vec![crash(0), crash(1)];
    let verdict = run(c, cluster([Some(0); 3])).0.liveness;
    let LivenessVerdict::Impossible { reason, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert!(reason.contains("has no quorum"), "{reason}");
    let mut c = config(3, 2 * S);
    c.faults = vec![crash(0)];
    let verdict = run(c, cluster([Some(0); 3])).0.liveness;
    assert!(
        matches!(verdict, LivenessVerdict::Met { .. }),
        "{verdict:?}"
    );
}

/// A member counts in the group that must agree when it reaches a member of the serving
/// quorum; cut off from every one of them, it does not. n2, cut off from the leader n0 too,
/// keeps naming n1: in the group, it keeps liveness from being met.
#[test]
fn a_member_reaching_any_serving_service_member_is_in_the_group() {
    let cut_n2_from = |service: &[u32]| -> Vec<FaultSpec> {
        let cut = |i: u32| {
            let shape = PartitionShape::CutLink(Target::Node(2), Target::ServiceMember(i));
            fault(5 * MS, FaultAction::Partition(shape))
        };
        service.iter().map(|i| cut(*i)).collect()
    };
    for (service, in_group) in [(vec![0, 1, 2], false), (vec![0, 1], true)] {
        let mut c = config(3, 2 * S);
        c.faults = cut_n2_from(&service);
        let shape = PartitionShape::CutLink(Target::Node(2), Target::Node(0));
        c.faults.push(fault(5 * MS, FaultAction::Partition(shape)));
        let mut processes = cluster([Some(0); 3]);
        processes[2] = Toy {
            leader: Some(NodeId(1)),
            ..Toy::default()
        };
        let verdict = run(c, processes).0.liveness;
        let met = matches!(verdict, LivenessVerdict::Met { .. });
        assert_eq!(met, !in_group, "cut from {service:?}: {verdict:?}");
    }
}

/// A service member that starts or stops leading its service shows in the trace, so that a
/// reader (and the conformance suite) sees when the service changed leaders; a crash ends
/// its lead.
#[test]
fn the_trace_shows_when_a_service_member_leads_and_stops() {
    let mut c = config(3, 2 * S);
    c.faults = vec![fault(5 * MS, FaultAction::Crash(Target::ServiceLeader))];
    let (_, trace) = run_traced(c, cluster([Some(0); 3]));
    let roles: Vec<(u64, u32, String)> = parse_trace(&trace)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind.name().starts_with("service_"))
        .map(|e| (e.t_ns, e.node.unwrap().0, e.kind.name().to_string()))
        .collect();
    assert_eq!(
        roles,
        [
            (0, 4, "service_leads".to_string()),
            (5 * MS, 4, "service_follows".to_string())
        ]
    );
}

/// A gateway in front of the quorum (an API server before etcd) serves while it reaches a
/// serving quorum: cut off from every quorum member it cannot serve, although the quorum is
/// whole; one link left is enough (a follower forwards). The gateway is never the service's
/// follower: n3 is the gateway, n4, n5 (which leads) and n6 the quorum.
#[test]
fn a_gateway_serves_only_while_it_reaches_a_serving_quorum() {
    let with_gateway = || {
        let mut processes = cluster([Some(0); 3]);
        let gateway = Toy {
            gateway: true,
            ..Toy::default()
        };
        processes.insert(3, gateway);
        processes
    };
    let cut = |i| {
        let shape = PartitionShape::CutLink(Target::ServiceMember(0), Target::ServiceMember(i));
        fault(5 * MS, FaultAction::Partition(shape))
    };
    let mut c = config(3, 2 * S);
    c.faults = vec![cut(1), cut(2), cut(3)];
    let verdict = run(c, with_gateway()).0.liveness;
    let LivenessVerdict::Impossible { reason, .. } = &verdict else {
        panic!("{verdict:?}");
    };
    assert!(reason.contains("no gateway reaches"), "{reason}");
    let mut c = config(3, 2 * S);
    c.faults = vec![cut(1), cut(2)];
    let verdict = run(c, with_gateway()).0.liveness;
    assert!(
        matches!(verdict, LivenessVerdict::Met { .. }),
        "{verdict:?}"
    );
    for seed in 1..=20 {
        let mut c = config(3, 2 * S);
        c.seed = seed;
        c.faults = vec![fault(
            5 * MS,
            FaultAction::Pause(Target::ServiceFollower, MS),
        )];
        let nodes = run(c, with_gateway()).0.faults[0].nodes.clone();
        assert!(nodes == [NodeId(4)] || nodes == [NodeId(6)], "{nodes:?}");
    }
}

/// `ServiceFollowers` strikes every live service member but the service's leader at once
/// (what two `ServiceFollower` faults cannot: they may draw the same one): a crashed member
/// and a gateway are left out, and a single-process service has none.
#[test]
fn service_followers_are_every_live_member_but_the_service_leader() {
    assert_eq!(
        struck(Target::ServiceFollowers).1,
        vec![NodeId(3), NodeId(5)]
    );
    let mut c = config(3, 2 * S);
    c.faults = vec![
        fault(MS, FaultAction::Crash(Target::ServiceMember(0))),
        fault(5 * MS, FaultAction::Pause(Target::ServiceFollowers, MS)),
    ];
    let (report, _) = run(c, cluster([Some(0); 3]));
    assert_eq!(report.faults[1].nodes, vec![NodeId(5)], "n3 is down");
    let mut processes = cluster([Some(0); 3]);
    processes.insert(
        3,
        Toy {
            gateway: true,
            ..Toy::default()
        },
    );
    let mut c = config(3, 2 * S);
    c.faults = vec![fault(
        5 * MS,
        FaultAction::Pause(Target::ServiceFollowers, MS),
    )];
    let (report, _) = run(c, processes);
    assert_eq!(report.faults[0].nodes, vec![NodeId(4), NodeId(6)]);
    let mut c = config(3, 2 * S);
    c.faults = vec![fault(
        5 * MS,
        FaultAction::Pause(Target::ServiceFollowers, MS),
    )];
    let single = vec![Toy::claims(10 * MS, 1), asker(), asker(), service_naming(0)];
    assert_eq!(run(c, single).0.faults[0].nodes, vec![]);
}

/// `ServiceQuorum` is a majority of the service's members drawn per seed, the same for one
/// seed every time: seeds draw it with and without the service's leader (n4). A single
/// service process is its own majority.
#[test]
fn a_service_quorum_is_a_drawn_majority_with_or_without_the_service_leader() {
    let quorum = |seed| {
        let mut c = config(3, 2 * S);
        c.seed = seed;
        c.faults = vec![fault(5 * MS, FaultAction::Pause(Target::ServiceQuorum, MS))];
        run(c, cluster([Some(0); 3])).0.faults[0].nodes.clone()
    };
    let drawn: Vec<Vec<NodeId>> = (1..=20).map(quorum).collect();
    for nodes in &drawn {
        assert_eq!(nodes.len(), 2, "{nodes:?}");
        assert!(nodes.iter().all(|n| (3..=5).contains(&n.0)), "{nodes:?}");
    }
    assert!(drawn.iter().any(|q| q.contains(&NodeId(4))));
    assert!(drawn.iter().any(|q| !q.contains(&NodeId(4))));
    assert_eq!(quorum(7), quorum(7));
    let mut c = config(3, 2 * S);
    c.faults = vec![fault(5 * MS, FaultAction::Crash(Target::ServiceQuorum))];
    let single = vec![Toy::claims(10 * MS, 1), asker(), asker(), service_naming(0)];
    assert_eq!(run(c, single).0.faults[0].nodes, vec![NodeId(3)]);
}

/// `ServiceOfLeader` is the service process the election leader (n0, from 10 ms) says it
/// talks to, whatever the service's own leader (n4); before anyone leads it is none.
#[test]
fn the_service_of_the_leader_is_the_process_the_election_leader_talks_to() {
    let strike = |at_ns, uses: u32, service: Vec<Toy>| {
        let leader = Toy {
            uses: Some(NodeId(uses)),
            ..Toy::claims(10 * MS, 1)
        };
        let other = Toy {
            uses: Some(NodeId(3)),
            ..asker()
        };
        let mut processes = vec![leader, other, asker()];
        processes.extend(service);
        let mut c = config(3, 2 * S);
        c.faults = vec![fault(at_ns, FaultAction::Crash(Target::ServiceOfLeader))];
        run(c, processes).0.faults[0].nodes.clone()
    };
    let members = || cluster([Some(0); 3]).split_off(3);
    assert_eq!(strike(20 * MS, 5, members()), vec![NodeId(5)]);
    assert_eq!(strike(5 * MS, 5, members()), vec![], "nobody leads yet");
    let single = || vec![service_naming(0)];
    assert_eq!(strike(20 * MS, 3, single()), vec![NodeId(3)]);
}
