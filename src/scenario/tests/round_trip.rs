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
