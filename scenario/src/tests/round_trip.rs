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
