//! Writing a scenario with `to_ron` and reading it back gives the same scenario.

use super::*;

#[test]
fn the_full_example_survives_writing_and_reading_back() {
    let scenario = parsed(FULL_EXAMPLE);
    let text = to_ron(&scenario);
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
}

#[test]
fn a_scenario_of_defaults_survives_writing_and_reading_back() {
    let scenario = parsed("Scenario(algorithm: Raft())");
    let text = to_ron(&scenario);
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
}

#[test]
fn written_text_is_canonical_so_writing_twice_gives_the_same_text() {
    let text = to_ron(&parsed(FULL_EXAMPLE));
    assert_eq!(to_ron(&parsed(&text)), text);
}

#[test]
fn expectations_and_odd_names_are_written_back_exactly() {
    let source = r#"(name: "a \"quoted\"\nname é", algorithm: Raft(variant: ForgetsVoteOnRestart),
        expect: Violates([term_monotonic, election_safety, election_safety]))"#;
    let scenario = parsed(source);
    assert_eq!(parse(&to_ron(&scenario), ORIGIN), Ok(scenario));
}

#[test]
fn probabilities_keep_their_parts_per_million() {
    for ppm in [0u32, 1, 7, 100_000, 123_457, 999_999, 1_000_000] {
        let mut scenario = parsed("(algorithm: Raft())");
        scenario.sim.network.default.loss_ppm = ppm;
        scenario.sim.faults.push(FaultSpec {
            at_ns: S,
            action: FaultAction::Duplicate(ppm),
            heal_after_ns: None,
            after: None,
        });
        assert_eq!(parse(&to_ron(&scenario), ORIGIN), Ok(scenario));
    }
}

#[test]
fn bully_and_ring_settings_survive_writing_and_reading_back() {
    let sources = [
        "(algorithm: Bully())",
        r#"(algorithm: Bully(heartbeat: "20ms", failure_timeout: "1.5s", answer_timeout: "30ms",
            coordinator_timeout: "90ms"), faults: [(at: "1s", do: Crash(Node(4)), heal_after: "2s")])"#,
        "(algorithm: Ring())",
        "(algorithm: Ring(order: Descending, initiators: All))",
        r#"(algorithm: Ring(variant: AllIds, order: Random, initiators: Detector, heartbeat: "10ms",
            failure_timeout: "45ms", ack_timeout: "5ms"), expect: Violates([election_safety]))"#,
    ];
    for source in sources {
        let scenario = parsed(source);
        let text = to_ron(&scenario);
        assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
        assert_eq!(to_ron(&parsed(&text)), text, "canonical");
    }
}

#[test]
fn a_nemesis_and_an_objective_survive_the_round_trip() {
    let source = r#"Scenario(
        algorithm: Raft(),
        nemesis: (kinds: [Crash, CutLink], mean_interval: "300ms", fault_duration: ("10ms", "2s"),
                  start: "500ms", quiet: "5s", max_clock_jump: "1s", max_drift_ppm: 5000,
                  max_loss: 0.25, swarm: true),
        objective: (failover_p99: "1s", startup_delay: "200ms"),
    )"#;
    let scenario = parsed(source);
    let nemesis = scenario.nemesis.as_ref().expect("a nemesis");
    assert_eq!(nemesis.mean_interval_ns, 300_000_000);
    assert_eq!(nemesis.max_loss_ppm, 250_000);
    assert!(nemesis.swarm);
    assert_eq!(scenario.sim.startup_delay_ns, 200_000_000);
    assert_eq!(parse(&to_ron(&scenario), ORIGIN), Ok(scenario));
}

#[test]
fn crashes_for_good_and_targets_survive_the_round_trip() {
    let source = r#"Scenario(
        algorithm: Raft(),
        nemesis: (kinds: [CrashForGood, Isolate], targets: Leader, quiet: "5s"),
    )"#;
    let scenario = parsed(source);
    let nemesis = scenario.nemesis.as_ref().expect("a nemesis");
    assert_eq!(
        nemesis.targets,
        splitbrain_sim::nemesis::NemesisTargets::Leader
    );
    let text = to_ron(&scenario);
    assert!(text.contains("targets: Leader"), "{text}");
    assert_eq!(parse(&text, ORIGIN), Ok(scenario));
}

#[test]
fn swarm_ranges_and_slow_disks_survive_the_round_trip() {
    let source = r#"Scenario(
        duration: "60s",
        algorithm: Raft(),
        nemesis: (kinds: [Crash, SlowDisk], max_fsync: "800ms",
                  swarm_ranges: (mean_interval: ("1s", "10s"), longest_fault: ("200ms", "4s"),
                                 max_loss: (0.0, 0.3), max_clock_jump: ("10ms", "3s"),
                                 max_drift_ppm: (100, 20000), max_fsync: ("50ms", "2s"),
                                 latency: ("1ms", "40ms"))),
    )"#;
    let scenario = parsed(source);
    let nemesis = scenario.nemesis.as_ref().expect("a nemesis");
    assert!(nemesis.swarm, "a nemesis hunts in swarm mode by default");
    assert!(nemesis.kinds_listed);
    assert_eq!(nemesis.max_fsync_ns, 800_000_000);
    let r = &nemesis.swarm_ranges;
    assert_eq!(r.mean_interval_ns, (1_000_000_000, 10_000_000_000));
    assert_eq!(r.longest_fault_ns, (200_000_000, 4_000_000_000));
    assert_eq!(r.max_loss_ppm, (0, 300_000));
    assert_eq!(r.max_clock_jump_ns, (10_000_000, 3_000_000_000));
    assert_eq!(r.max_drift_ppm, (100, 20_000));
    assert_eq!(r.max_fsync_ns, (50_000_000, 2_000_000_000));
    assert_eq!(r.latency_ns, Some((1_000_000, 40_000_000)));
    let text = to_ron(&scenario);
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
    assert_eq!(to_ron(&parsed(&text)), text, "canonical");
}

#[test]
fn a_nemesis_without_ranges_or_kinds_round_trips_and_says_swarm_false_when_written() {
    let plain = parsed(r#"Scenario(duration: "60s", algorithm: Raft(), nemesis: (swarm: false))"#);
    let nemesis = plain.nemesis.as_ref().expect("a nemesis");
    assert!(!nemesis.swarm && !nemesis.kinds_listed);
    let text = to_ron(&plain);
    assert!(!text.contains("kinds:"), "{text}");
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(plain));
    let swarm = parsed(r#"Scenario(duration: "60s", algorithm: Raft(), nemesis: ())"#);
    assert!(swarm.nemesis.as_ref().expect("a nemesis").swarm);
    assert_eq!(parse(&to_ron(&swarm), "elsewhere.ron"), Ok(swarm));
}

#[test]
fn a_materialized_swarm_seed_carries_its_draw_and_its_latency() {
    let source = r#"Scenario(duration: "60s", algorithm: Raft(),
        nemesis: (swarm_ranges: (latency: ("2ms", "30ms"))))"#;
    let scenario = parsed(source);
    let run = scenario.materialize(5);
    let drew = run.nemesis_drew.as_ref().expect("the seed's draw");
    assert!(drew.swarm);
    let latency = drew.rates.latency_max_ns.expect("a drawn latency");
    assert!((2_000_000..=30_000_000).contains(&latency));
    assert_eq!(
        run.sim.network.default.latency,
        splitbrain_sim::Latency::Uniform(2_000_000, latency)
    );
    let text = to_ron(&run);
    assert!(text.contains("// seed 5's nemesis drew (swarm: "), "{text}");
    // The written seed runs what it ran: the drawn latency is in its network.
    let back = parse(&text, "elsewhere.ron").expect("a valid scenario");
    assert_eq!(back.sim.network, run.sim.network);
    assert_eq!(back.sim.faults, run.sim.faults);
}

#[test]
fn a_backwards_swarm_range_is_refused_with_where_it_is() {
    let source = r#"Scenario(duration: "60s", algorithm: Raft(),
        nemesis: (swarm_ranges: (max_fsync: ("2s", "1s"))))"#;
    let error = parse(source, ORIGIN).unwrap_err();
    assert_eq!(
        error.message(),
        "the swarm range of max_fsync is backwards: 2s is above 1s"
    );
    assert_eq!(error.location.map(|(line, _)| line), Some(2));
}

#[test]
fn designs_survive_the_round_trip_with_every_setting() {
    let source = r#"Scenario(
        algorithm: Raft(),
        designs: [
            (name: "etcd-10s", algorithm: Etcd(ttl: "10s")),
            (name: "zk_6s", algorithm: ZooKeeper(tick: "2s", session_timeout: "6s")),
        ],
    )"#;
    let scenario = parsed(source);
    let names: Vec<&str> = scenario.designs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["etcd-10s", "zk_6s"]);
    assert_eq!(scenario.designs[0].algorithm.name(), "etcd");
    let text = to_ron(&scenario);
    assert_eq!(
        parse(&text, "elsewhere.ron"),
        Ok(scenario.clone()),
        "\n{text}"
    );
    assert_eq!(to_ron(&parsed(&text)), text, "canonical");
    let line = algorithm_line(&scenario.designs[0].algorithm);
    assert!(line.starts_with("Etcd(ttl: \"10s\", "), "{line}");
    assert!(!line.contains('\n'), "{line}");
}

#[test]
fn a_swarm_mean_interval_range_no_seed_can_run_is_refused() {
    // 20s - 1s start - 10s quiet: a 9s window, so a 30s mean gap would leave most seeds
    // without a fault; a zero gap would never end.
    let rare = r#"Scenario(duration: "20s", algorithm: Raft(),
        nemesis: (swarm_ranges: (mean_interval: ("1s", "30s"))))"#;
    let error = parse(rare, ORIGIN).unwrap_err();
    assert!(
        matches!(*error.kind, crate::ErrorKind::NemesisTooRare { mean_interval_ns, .. }
            if mean_interval_ns == 30_000_000_000),
        "{error:?}"
    );
    let zero = r#"Scenario(duration: "20s", algorithm: Raft(),
        nemesis: (swarm_ranges: (mean_interval: ("0s", "3s"))))"#;
    let error = parse(zero, ORIGIN).unwrap_err();
    assert!(
        matches!(*error.kind, crate::ErrorKind::ZeroMeanInterval),
        "{error:?}"
    );
    // Left out, the range is derived and kept inside the window: no error.
    let derived = r#"Scenario(duration: "20s", algorithm: Raft(), nemesis: (mean_interval: "8s"))"#;
    let nemesis = parsed(derived).nemesis.expect("a nemesis");
    assert_eq!(
        nemesis.swarm_ranges.mean_interval_ns,
        (4_000_000_000, 9_000_000_000)
    );
}

#[test]
fn service_member_targets_survive_writing_and_reading_back() {
    let source = r#"(algorithm: Etcd(), faults: [
        (at: "1s", do: Crash(ServiceLeader), heal_after: "5s"),
        (at: "2s", do: Pause(ServiceFollower, "1s")),
        (at: "3s", do: SlowDisk(ServiceMember(0), "2s"), heal_after: "1s"),
        (at: "4s", do: Partition(Isolate(ServiceLeader)), heal_after: "1s")])"#;
    let scenario = parsed(source);
    let targets: Vec<Target> = scenario
        .sim
        .faults
        .iter()
        .map(|f| f.action.targets()[0].clone())
        .collect();
    assert_eq!(
        targets,
        [
            Target::ServiceLeader,
            Target::ServiceFollower,
            Target::ServiceMember(0),
            Target::ServiceLeader
        ]
    );
    let text = to_ron(&scenario);
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
}

/// The service sets and the leader's service process read, write back and read again; they
/// name the service, so an algorithm without one refuses them.
#[test]
fn service_set_targets_and_the_leaders_service_survive_writing_and_reading_back() {
    let source = r#"(algorithm: Etcd(members: 3), faults: [
        (at: "1s", do: Pause(ServiceFollowers, "1s")),
        (at: "2s", do: Crash(ServiceQuorum), heal_after: "1s"),
        (at: "3s", do: Crash(ServiceOfLeader), heal_after: "1s"),
        (at: "4s", do: Partition(Isolate(ServiceFollowers)), heal_after: "1s"),
        (at: "5s", do: Partition(CutLink(ServiceQuorum, ServiceQuorum)), heal_after: "1s"),
        (at: "6s", do: Partition(CutLink(ServiceOfLeader, ServiceLeader)), heal_after: "1s")])"#;
    let scenario = parsed(source);
    let targets: Vec<Target> = scenario
        .sim
        .faults
        .iter()
        .map(|f| f.action.targets()[0].clone())
        .collect();
    assert_eq!(
        targets,
        [
            Target::ServiceFollowers,
            Target::ServiceQuorum,
            Target::ServiceOfLeader,
            Target::ServiceFollowers,
            Target::ServiceQuorum,
            Target::ServiceOfLeader
        ]
    );
    let text = to_ron(&scenario);
    assert_eq!(parse(&text, "elsewhere.ron"), Ok(scenario), "\n{text}");
    for target in ["ServiceFollowers", "ServiceQuorum", "ServiceOfLeader"] {
        assert_error_at(
            &format!("(algorithm: Raft(), faults: [(at: \"1s\", do: Crash(@{target}))])"),
            &format!("target `{target}` names no process: raft has no coordination service"),
        );
    }
}

/// A link from the leader's service process to itself, or between the first follower of
/// the service and itself, cuts nothing and is refused; a drawn quorum twice is allowed.
#[test]
fn a_link_between_one_service_target_and_itself_is_refused() {
    let r = "algorithm: Etcd(members: 3)";
    assert_error_at(
        &format!(
            "({r}, faults: [(at: \"1s\", do: Partition(CutLink(ServiceOfLeader, @ServiceOfLeader)))])"
        ),
        "`CutLink` from ServiceOfLeader to itself",
    );
    assert_error_at(
        &format!(
            "({r}, faults: [(at: \"1s\", do: Partition(OneWay(from: ServiceOfLeader, to: @ServiceOfLeader)))])"
        ),
        "`OneWay` from ServiceOfLeader to itself",
    );
    assert_error_at(
        &format!(
            "({r}, faults: [(at: \"1s\", do: Partition(CutLink(ServiceFollowers, @ServiceFollowers)))])"
        ),
        "`CutLink` from ServiceFollowers to itself",
    );
    // Every follower cut off from every other: a set, not one process.
    parsed(&format!(
        "({r}, faults: [(at: \"1s\", do: Partition(OneWay(from: ServiceFollowers, to: ServiceFollowers)))])"
    ));
}
