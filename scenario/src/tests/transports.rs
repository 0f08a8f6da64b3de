//! The transport each design runs on: its own, else the scenario's `network.transport` when
//! the file sets it, else its algorithm's default.

use super::*;
use splitbrain_sim::{StreamConfig, Transport};

/// `Stream` with Linux's retransmission timeouts and etcdctl's keep-alive.
const STREAM: Transport = Transport::Stream(StreamConfig {
    min_rto_ns: 200 * MS,
    max_rto_ns: 120 * S,
    timeout_ns: 8 * S,
});

/// A K8sLease scenario with an etcd, a ZooKeeper and a Raft design; `network` and `etcd`
/// (the etcd design's extra fields) as given.
fn review(network: &str, etcd: &str) -> Scenario {
    parsed(&format!(
        r#"Scenario(
    nodes: 3,
    duration: "30s",
    algorithm: K8sLease(),
    designs: [
        (name: "etcd", algorithm: Etcd(ttl: "5s"){etcd}),
        (name: "zk", algorithm: ZooKeeper()),
        (name: "raft", algorithm: Raft()),
    ],
    {network}
)"#
    ))
}

fn transport_of(scenario: &Scenario, design: &str) -> Transport {
    let found = scenario.designs.iter().find(|d| d.name == design);
    found.expect("the design is listed").transport
}

#[test]
fn each_design_runs_on_its_own_algorithms_default_transport() {
    let scenario = review("", "");
    assert_eq!(scenario.sim.network.transport, Transport::Datagram);
    assert!(!scenario.transport_explicit);
    assert_eq!(transport_of(&scenario, "etcd"), STREAM);
    assert_eq!(transport_of(&scenario, "zk"), STREAM);
    assert_eq!(transport_of(&scenario, "raft"), Transport::Datagram);
    let etcd = &scenario.designs[0];
    let ran = scenario.with_design(etcd);
    assert_eq!(ran.sim.network.transport, STREAM);
    assert_eq!(ran.algorithm.name(), "etcd");
}

#[test]
fn a_network_transport_the_file_sets_applies_to_every_design_without_its_own() {
    let scenario = review("network: (transport: Datagram),", "");
    assert!(scenario.transport_explicit);
    for design in ["etcd", "zk", "raft"] {
        assert_eq!(
            transport_of(&scenario, design),
            Transport::Datagram,
            "{design}"
        );
    }
    let etcd = AlgorithmConfig::default_named("etcd").expect("etcd");
    assert_eq!(scenario.transport_for(&etcd), Transport::Datagram);
    assert_eq!(review("", "").transport_for(&etcd), STREAM);
}

#[test]
fn a_designs_own_transport_wins() {
    let scenario = review(
        "network: (transport: Datagram),",
        r#", transport: Stream(timeout: "2s")"#,
    );
    let Transport::Stream(config) = transport_of(&scenario, "etcd") else {
        panic!("the etcd design runs on its own Stream");
    };
    assert_eq!(config.timeout_ns, 2 * S);
    assert_eq!(transport_of(&scenario, "zk"), Transport::Datagram);
    let own = review("", ", transport: Datagram");
    assert_eq!(transport_of(&own, "etcd"), Transport::Datagram);
}

#[test]
fn a_designs_transport_is_checked_at_its_place() {
    assert_error_at(
        r#"Scenario(algorithm: Raft(), designs: [(name: "a", algorithm: Raft(), transport: Stream(min_rto: @"0s"))])"#,
        "min_rto must be longer than zero",
    );
}

#[test]
fn designs_and_the_network_write_back_their_transports() {
    for (network, etcd) in [
        ("", ""),
        ("network: (transport: Datagram),", ""),
        ("", r#", transport: Stream(min_rto: "1s")"#),
    ] {
        let scenario = review(network, etcd);
        let text = to_ron(&scenario);
        assert_eq!(parsed(&text), scenario, "{text}");
        assert_eq!(
            text.contains("        transport: Datagram,\n"),
            scenario.transport_explicit,
            "{text}"
        );
        assert!(text.contains(r#""etcd", algorithm: Etcd("#), "{text}");
    }
    // A design run on its own transport writes it as the scenario's.
    let scenario = review("", "");
    let ran = scenario.with_design(&scenario.designs[0]);
    assert_eq!(parsed(&to_ron(&ran)), ran);
}

#[test]
fn transports_are_named_as_a_scenario_writes_them() {
    assert_eq!(transport_line(&Transport::Datagram), "Datagram");
    assert_eq!(transport_line(&STREAM), "Stream");
    let Transport::Stream(mut config) = STREAM else {
        unreachable!()
    };
    config.timeout_ns = 2 * S;
    assert_eq!(
        transport_line(&Transport::Stream(config)),
        r#"Stream(timeout: "2s")"#
    );
}

#[test]
fn the_review_controllers_etcd_design_runs_on_stream_as_its_model_needs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/review-controller.ron"
    );
    let scenario = load(path.as_ref()).expect("a shipped scenario");
    assert_eq!(transport_of(&scenario, "etcd-10s"), STREAM);
    assert_eq!(transport_of(&scenario, "zk-6s"), STREAM);
    assert_eq!(transport_of(&scenario, "k8s-defaults"), Transport::Datagram);
}
