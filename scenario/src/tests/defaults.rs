//! What a scenario gets for the fields it leaves out.

use super::*;

#[test]
fn a_scenario_that_names_only_its_algorithm_gets_every_default() {
    let scenario = parsed("Scenario(algorithm: Raft())");
    assert_eq!(scenario.name, "x");
    assert_eq!(scenario.sim.seed, 0);
    assert_eq!(scenario.sim.duration_ns, 60 * S);
    assert_eq!(scenario.sim.members, 5);
    assert_eq!(scenario.sim.network, NetworkConfig::default());
    assert_eq!(scenario.sim.clocks, ClockConfig::default());
    assert_eq!(scenario.sim.write_every_ns, 100 * MS);
    assert!(scenario.sim.fencing);
    assert_eq!(scenario.sim.faults, Vec::new());
    assert_eq!(scenario.sim.liveness_bound_ns, None);
    assert_eq!(
        scenario.algorithm,
        AlgorithmConfig::from(RaftConfig::default())
    );
    assert_eq!(scenario.expect, Expect::Safe);
}

#[test]
fn the_struct_name_is_optional_and_comments_are_allowed() {
    let named = parsed("Scenario(algorithm: Raft())");
    let bare = parsed("// a comment\n( /* another */ algorithm: Raft(), )");
    assert_eq!(named, bare);
    let nested = parsed("(algorithm: Raft(), network: Network(loss: 0.5), workload: Workload())");
    assert_eq!(nested.sim.network.default.loss_ppm, 500_000);
}

#[test]
fn a_scenario_without_a_name_or_a_usable_origin_is_unnamed() {
    let scenario = parse("(algorithm: Raft())", "").expect("valid");
    assert_eq!(scenario.name, "unnamed");
    let scenario = parse("(algorithm: Raft())", "dir/raft-basic.ron").expect("valid");
    assert_eq!(scenario.name, "raft-basic");
}

#[test]
fn link_overrides_take_the_network_values_they_do_not_set() {
    let scenario = parsed(
        r#"(algorithm: Raft(), network: (latency: Constant("5ms"), loss: 0.1, duplicate: 0.2,
            links: [(from: 1, to: 0, loss: 0.5)]))"#,
    );
    assert_eq!(
        scenario.sim.network.overrides,
        vec![LinkOverride {
            from: 1,
            to: 0,
            link: LinkConfig {
                latency: Latency::Constant(5 * MS),
                loss_ppm: 500_000,
                duplicate_ppm: 200_000,
            },
        }]
    );
}

#[test]
fn raft_settings_that_are_left_out_keep_the_raft_defaults() {
    let scenario = parsed("(algorithm: Raft(pre_vote: true))");
    let expected = RaftConfig {
        pre_vote: true,
        ..RaftConfig::default()
    };
    assert_eq!(scenario.algorithm, AlgorithmConfig::from(expected));
}

#[test]
fn optional_values_may_also_be_written_with_some() {
    let scenario = parsed(r#"(seed: Some(3), algorithm: Raft(), liveness: (bound: Some("2s")))"#);
    assert_eq!(scenario.sim.seed, 3);
    assert_eq!(scenario.sim.liveness_bound_ns, Some(2 * S));
}

#[test]
fn a_byte_order_mark_is_ignored_and_columns_count_as_an_editor_shows_them() {
    let error = error_of("\u{feff}(algorithm: Raft(), nodes: 0)");
    assert_eq!(error.location, Some((1, 28)));
    let without = error_of("(algorithm: Raft(), nodes: 0)");
    assert_eq!(without.location, error.location);
}

#[test]
fn bully_and_ring_settings_that_are_left_out_keep_their_defaults() {
    let scenario = parsed("(algorithm: Bully())");
    assert_eq!(
        scenario.algorithm,
        AlgorithmConfig::from(BullyConfig::default())
    );
    assert_eq!(
        BullyConfig::default(),
        BullyConfig {
            heartbeat_ns: 50 * MS,
            failure_timeout_ns: 200 * MS,
            answer_timeout_ns: 50 * MS,
            coordinator_timeout_ns: 150 * MS,
        }
    );
    let scenario = parsed(r#"(algorithm: Bully(answer_timeout: "20ms"))"#);
    let expected = BullyConfig {
        answer_timeout_ns: 20 * MS,
        ..BullyConfig::default()
    };
    assert_eq!(scenario.algorithm, AlgorithmConfig::from(expected));

    let scenario = parsed("(algorithm: Ring())");
    assert_eq!(
        scenario.algorithm,
        AlgorithmConfig::from(RingConfig::default())
    );
    assert_eq!(
        RingConfig::default(),
        RingConfig {
            variant: RingVariant::ChangRoberts,
            order: RingOrder::Ascending,
            initiators: RingInitiators::Detector,
            heartbeat_ns: 50 * MS,
            failure_timeout_ns: 200 * MS,
            ack_timeout_ns: 30 * MS,
        }
    );
    let scenario = parsed("(algorithm: Ring(variant: AllIds))");
    let expected = RingConfig {
        variant: RingVariant::AllIds,
        ..RingConfig::default()
    };
    assert_eq!(scenario.algorithm, AlgorithmConfig::from(expected));
}
