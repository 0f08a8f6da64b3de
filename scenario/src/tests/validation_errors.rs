//! Errors validation finds, at the offending value.

use super::*;

#[test]
fn validation_errors_render_with_location_and_hint() {
    let source = "Scenario(\n    nodes: 3,\n    algorithm: Raft(),\n    faults: [\n        (at: \"1s\", do: Crash(Node(3))),\n    ],\n)";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:5:30: node 3 does not exist in a cluster of 3\n  hint: nodes are numbered from 0 to 2"
    );
    let source = "Scenario(\n    algorithm: Raft(election_timeout: (\"40ms\", \"80ms\")),\n)";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:2:39: the shortest election timeout (40ms) must be longer than the heartbeat (50ms)\n  \
         hint: followers start elections when heartbeats stop; keep the heartbeat well below \
         the election timeout (a tenth to a third of it)"
    );
    let source = "(algorithm: Raft(),\n expect: Violates([election_safety, liveness]))";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:2:37: `liveness` cannot be expected to be violated\n  hint: a liveness \
         failure is reported as exit code 3, not as an expectation; `Violates` names safety \
         invariants only (election_safety, fencing_safety, term_monotonic)"
    );
}

#[test]
fn each_rule_fires_at_the_offending_value() {
    let r = "algorithm: Raft()";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("({r}, duration: @\"0s\")"),
            "the run's duration must be longer than zero",
        ),
        (
            format!("({r}, nodes: @0)"),
            "nodes must be between 1 and 10000, not 0",
        ),
        (
            format!("({r}, nodes: @10001)"),
            "nodes must be between 1 and 10000, not 10001",
        ),
        (
            "(algorithm: Raft(heartbeat: @\"0s\"))".into(),
            "the heartbeat interval must be longer than zero",
        ),
        (
            "(algorithm: Raft(election_timeout: @(\"300ms\", \"150ms\")))".into(),
            "the election timeout range is backwards: 300ms is above 150ms",
        ),
        (
            "(algorithm: Raft(election_timeout: @(\"50ms\", \"300ms\"), heartbeat: \"50ms\"))"
                .into(),
            "the shortest election timeout (50ms) must be longer than the heartbeat (50ms)",
        ),
        (
            "(algorithm: Raft(heartbeat: @\"200ms\"))".into(),
            "the shortest election timeout (150ms) must be longer than the heartbeat (200ms)",
        ),
        (
            "(nodes: 3, algorithm: Raft(log_lengths: @[1, 2]))".into(),
            "log_lengths has 2 entries for 3 nodes",
        ),
        (
            format!("({r}, faults: [(at: @\"60s\", do: Heal)])"),
            "the fault at 1m is not before the end of the run (1m)",
        ),
        (
            format!("({r}, duration: \"10s\", faults: [(at: @\"11s\", do: Heal)])"),
            "the fault at 11s is not before the end of the run (10s)",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Crash(@Node(5)))])"),
            "node 5 does not exist in a cluster of 5",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(Groups([[0, 1], [@1, 2]])))])"),
            "node 1 is in two partition groups",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(CutLink(Node(1), @Node(1))))])"),
            "`CutLink` from Node(1) to itself",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(OneWay(from: Leader, to: @Leader)))])"),
            "`OneWay` from Leader to itself",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(Groups([[0, @0]])))])"),
            "node 0 is in two partition groups",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(Groups([[0], @[]])))])"),
            "empty partition group",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(Groups([[0, @7]])))])"),
            "node 7 does not exist in a cluster of 5",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(CutLink(Node(0), @Node(9))))])"),
            "node 9 does not exist in a cluster of 5",
        ),
        (
            format!(
                "({r}, faults: [(at: \"1s\", do: Partition(OneWay(from: @Node(9), to: All)))])"
            ),
            "node 9 does not exist in a cluster of 5",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Restart(All), heal_after: @\"1s\")])"),
            "`heal_after` does not apply to `Restart`",
        ),
        (
            format!(
                "({r}, faults: [(at: \"1s\", do: Pause(Leader, \"1s\"), heal_after: @\"1s\")])"
            ),
            "`heal_after` does not apply to `Pause`",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Heal, heal_after: @\"1s\")])"),
            "`heal_after` does not apply to `Heal`",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Crash(Leader), heal_after: @\"0s\")])"),
            "`heal_after` must be longer than zero",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Pause(Leader, @\"0s\"))])"),
            "a `Pause` must last longer than zero",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Stall(Leader, @\"0ms\"))])"),
            "a `Stall` must last longer than zero",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Crash(@AllCrashed))])"),
            "target `AllCrashed` in `Crash`",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Partition(Isolate(@AllCrashed)))])"),
            "target `AllCrashed` in `Partition`",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Crash(@Service))])"),
            "target `Service` names no process: raft has no coordination service",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Crash(@ServiceLeader))])"),
            "target `ServiceLeader` names no process: raft has no coordination service",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Pause(@ServiceMember(0), \"1s\"))])"),
            "target `ServiceMember` names no process: raft has no coordination service",
        ),
        (
            "(algorithm: Etcd(), faults: [(at: \"1s\", do: Crash(@ServiceMember(1)))])"
                .to_string(),
            "service member 1 does not exist: etcd's service runs as 1 process(es)",
        ),
        (
            format!(
                "({r}, faults: [(at: \"1s\", do: Partition(OneWay(from: Leader, to: @Service)))])"
            ),
            "target `Service` names no process: raft has no coordination service",
        ),
        (
            format!("({r}, network: (loss: @1.5))"),
            "loss must be between 0 and 1, not 1.5",
        ),
        (
            format!("({r}, network: (duplicate: @-0.1))"),
            "duplicate must be between 0 and 1, not -0.1",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Loss(@NaN))])"),
            "loss must be between 0 and 1, not NaN",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: Duplicate(@2))])"),
            "duplicate must be between 0 and 1, not 2",
        ),
        (
            format!("({r}, network: (latency: @Uniform(\"10ms\", \"1ms\")))"),
            "the latency range is backwards: 10ms is above 1ms",
        ),
        (
            format!(
                "({r}, network: (links: [(from: 0, to: 1, latency: @Uniform(\"2ms\", \"1ms\"))]))"
            ),
            "the latency range is backwards: 2ms is above 1ms",
        ),
        (
            format!("({r}, network: (links: [(from: 0, to: 1, loss: @7.0)]))"),
            "loss must be between 0 and 1, not 7",
        ),
        (
            format!("({r}, network: (links: [(from: 2, to: @2)]))"),
            "a link from node 2 to itself",
        ),
        (
            format!("({r}, network: (links: [(from: @9, to: 0)]))"),
            "node 9 does not exist in a cluster of 5",
        ),
        (
            format!("({r}, network: (links: [(from: 0, to: 1), @(from: 0, to: 1)]))"),
            "the link from node 0 to node 1 is overridden twice",
        ),
        (
            format!("({r}, clocks: (drift_ppm: @1000000))"),
            "the random drift bound must be between 0 and 999999 ppm, not 1000000",
        ),
        (
            format!("({r}, clocks: (drift_ppm: @-5))"),
            "the random drift bound must be between 0 and 999999 ppm, not -5",
        ),
        (
            format!("({r}, clocks: (nodes: [(node: @7)]))"),
            "node 7 does not exist in a cluster of 5",
        ),
        (
            format!("({r}, clocks: (nodes: [(node: 1), (node: @1)]))"),
            "node 1 has two clock overrides",
        ),
        (
            format!("({r}, clocks: (nodes: [(node: 1, drift_ppm: @-1000000)]))"),
            "clock drift -1000000 ppm is out of range",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: ClockDrift(Leader, @-2000000))])"),
            "clock drift -2000000 ppm is out of range",
        ),
        (
            format!("({r}, faults: [(at: \"1s\", do: ClockDrift(Leader, @1000000001))])"),
            "clock drift 1000000001 ppm is out of range",
        ),
        (
            format!("({r}, liveness: (bound: @\"0s\"))"),
            "the liveness bound must be longer than zero",
        ),
        (
            format!("({r}, expect: @Violates([]))"),
            "`Violates` names no invariant",
        ),
        (
            format!("({r}, expect: Violates([@liveness]))"),
            "`liveness` cannot be expected to be violated",
        ),
        (
            format!("({r}, designs: [(name: @\"Etcd 10s\", algorithm: Etcd())])"),
            "design name \"Etcd 10s\" is not a word of a-z, 0-9, `-` and `_`",
        ),
        (
            format!("({r}, designs: [(name: @\"\", algorithm: Etcd())])"),
            "design name \"\" is not a word of a-z, 0-9, `-` and `_`",
        ),
        (
            format!(
                "({r}, designs: [(name: \"a\", algorithm: Etcd()), (name: @\"a\", algorithm: Raft())])"
            ),
            "design \"a\" is named twice",
        ),
        (
            format!("({r}, designs: [(name: \"e\", algorithm: Etcd(ttl: @\"0s\"))])"),
            "the lease TTL must be longer than zero",
        ),
        (
            format!("({r}, designs: [(name: \"b\", algorithm: Bully(heartbeat: @\"0s\"))])"),
            "the heartbeat interval must be longer than zero",
        ),
    ];
    for (marked, message) in &cases {
        assert_error_at(marked, message);
    }
}

#[test]
fn each_bully_and_ring_rule_fires_at_the_offending_value() {
    let cases: &[(&str, &str)] = &[
        (
            "(algorithm: Bully(heartbeat: @\"0s\"))",
            "the heartbeat interval must be longer than zero",
        ),
        (
            "(algorithm: Bully(failure_timeout: @\"50ms\"))",
            "the failure timeout (50ms) must be longer than the heartbeat (50ms)",
        ),
        (
            "(algorithm: Bully(heartbeat: @\"300ms\"))",
            "the failure timeout (200ms) must be longer than the heartbeat (300ms)",
        ),
        (
            "(algorithm: Bully(answer_timeout: @\"0s\"))",
            "the answer timeout must be longer than zero",
        ),
        (
            "(algorithm: Bully(coordinator_timeout: @\"50ms\"))",
            "the coordinator timeout (50ms) must be longer than the answer timeout (50ms)",
        ),
        (
            "(algorithm: Bully(answer_timeout: @\"200ms\"))",
            "the coordinator timeout (150ms) must be longer than the answer timeout (200ms)",
        ),
        (
            "(algorithm: Bully(answer_timeout: \"1s\", coordinator_timeout: @\"1s\"))",
            "the coordinator timeout (1s) must be longer than the answer timeout (1s)",
        ),
        (
            "(algorithm: Ring(heartbeat: @\"0ms\"))",
            "the heartbeat interval must be longer than zero",
        ),
        (
            "(algorithm: Ring(variant: AllIds, failure_timeout: @\"10ms\"))",
            "the failure timeout (10ms) must be longer than the heartbeat (50ms)",
        ),
        (
            "(algorithm: Ring(ack_timeout: @\"0s\"))",
            "the ack timeout must be longer than zero",
        ),
        (
            "(algorithm: Bully(), faults: [(at: \"1s\", do: Crash(@Service))])",
            "target `Service` names no process: bully has no coordination service",
        ),
        (
            "(algorithm: Ring(), faults: [(at: \"1s\", do: Partition(Isolate(@Service)))])",
            "target `Service` names no process: ring has no coordination service",
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(marked, message);
    }
    let source = "Scenario(\n    algorithm: Bully(failure_timeout: \"40ms\"),\n)";
    assert_eq!(
        error_of(source).to_string(),
        "scenarios/x.ron:2:39: the failure timeout (40ms) must be longer than the heartbeat (50ms)\n  \
         hint: followers suspect the coordinator when its heartbeats stop; keep the heartbeat \
         well below the failure timeout (a quarter of it, say)"
    );
}

#[test]
fn valid_edge_values_are_accepted() {
    let scenario = parsed(
        r#"(nodes: 1, duration: "1ns", algorithm: Raft(election_timeout: ("2ns", "2ns"), heartbeat: "1ns"),
           workload: (write_every: "0s"), clocks: (drift_ppm: 999999, nodes: [(node: 0, drift_ppm: -999999, offset: "-1h")]),
           faults: [(at: "0s", do: Restart(AllCrashed)), (at: "0s", do: ClockDrift(Node(0), 1000000000))])"#,
    );
    assert_eq!(scenario.sim.write_every_ns, 0);
    assert_eq!(scenario.sim.members, 1);
    let scenario = parsed("(nodes: 10000, algorithm: Ring())");
    assert_eq!(scenario.sim.members, 10_000);
    let scenario = parsed("(nodes: 4000, algorithm: Raft())");
    assert_eq!(scenario.sim.members, 4_000);
}

#[test]
fn algorithms_that_send_to_every_member_take_at_most_4000_nodes() {
    for algorithm in ["Raft()", "Bully()"] {
        let error = error_of(&format!("(nodes: 4001, algorithm: {algorithm})"));
        assert!(error.message().contains("at most 4000"), "{error}");
        assert_eq!(error.location, Some((1, 9)));
        assert!(error.hint().is_some_and(|h| h.contains("square")));
    }
}

#[test]
fn the_error_reported_is_the_first_in_the_file() {
    let source =
        "(\n  faults: [(at: \"1s\", do: Crash(Node(9)))],\n  nodes: 0,\n  algorithm: Raft(),\n)";
    assert_eq!(error_of(source).location, Some((2, 33)));
}

#[test]
fn an_error_about_a_defaulted_value_points_at_the_nearest_written_one() {
    // log_lengths is written, nodes is not: the error points at log_lengths.
    let error = error_of("(algorithm: Raft(log_lengths: [1]))");
    assert_eq!(error.location, Some((1, 31)));
}

#[test]
fn a_nemesis_with_no_time_to_act_is_an_error_with_a_hint() {
    let error = parse(
        "Scenario(\n    duration: \"10s\",\n    algorithm: Raft(),\n    nemesis: (start: \"5s\", quiet: \"6s\"),\n)",
        ORIGIN,
    )
    .unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("{ORIGIN}:4:14: the nemesis has no time to act")),
        "{text}"
    );
    assert!(text.contains("hint:"), "{text}");
}

#[test]
fn a_backwards_fault_duration_range_and_a_zero_objective_are_errors() {
    let error = parse(
        "Scenario(algorithm: Raft(), nemesis: (fault_duration: (\"2s\", \"1s\")))",
        ORIGIN,
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the fault duration range is backwards"),
        "{error}"
    );
    let error = parse(
        "Scenario(algorithm: Raft(), objective: (failover_p99: \"0s\"))",
        ORIGIN,
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the failover objective must be longer than zero"),
        "{error}"
    );
    let error = parse(
        "Scenario(algorithm: Raft(), nemesis: (kinds: [Crsh]))",
        ORIGIN,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("did you mean `Crash`"),
        "{error}"
    );
}

#[test]
fn etcd_settings_are_checked_at_the_offending_value() {
    let cases = [
        (
            "(algorithm: Etcd(ttl: @\"0s\"))",
            "the lease TTL must be longer than zero",
        ),
        (
            "(algorithm: Etcd(ttl: \"1s\", keepalive: @\"2s\"))",
            "the keep-alive interval 2s must be above zero and below the granted TTL 2s",
        ),
        (
            "(algorithm: Etcd(ttl: \"2s\", keepalive: @\"0s\"))",
            "the keep-alive interval 0s must be above zero and below the granted TTL 2s",
        ),
        (
            "(algorithm: Etcd(election_timeout: @\"50ms\"))",
            "the election timeout 50ms is shorter than etcd's heartbeat interval 100ms",
        ),
        (
            "(algorithm: Etcd(min_ttl: @\"25h\"))",
            "the timing 25h is longer than a day",
        ),
        (
            "(algorithm: Etcd(lessor_phase: @\"500ms\"))",
            "the lessor phase 500ms must be below the lessor's sweep interval 500ms",
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(marked, message);
    }
}

#[test]
fn etcd_has_a_service_that_faults_can_target_and_defaults_that_follow_the_ttl() {
    let scenario = parsed(
        r#"(nodes: 3, algorithm: Etcd(ttl: "600ms", variant: SetNx),
           faults: [(at: "1s", do: Partition(Isolate(Service)), heal_after: "1s"),
                    (at: "2s", do: ClockJump(Service, "1s"))])"#,
    );
    let Some(etcd) = scenario
        .algorithm
        .config::<splitbrain_algorithms::etcd::Etcd>()
    else {
        panic!("{:?}", scenario.algorithm);
    };
    assert_eq!(etcd.ttl_ns, 600_000_000);
    // The minimum TTL follows etcd's default election timeout (2s) and the granted TTL is
    // raised to it, as etcd does; the keep-alive is a third of the granted TTL.
    assert_eq!(etcd.min_ttl_ns, 2_000_000_000);
    assert_eq!(etcd.keepalive_ns, 666_666_666);
    assert_eq!(
        etcd.variant,
        splitbrain_algorithms::etcd::EtcdVariant::SetNx
    );
    assert_eq!(parsed(&to_ron(&scenario)), scenario);
}

#[test]
fn zookeeper_and_k8s_lease_settings_are_checked_at_the_offending_value() {
    let cases = [
        (
            "(algorithm: ZooKeeper(tick: @\"0s\"))",
            "the ZooKeeper tick must be longer than zero",
        ),
        (
            "(algorithm: K8sLease(retry_period: @\"0s\"))",
            "the retry period must be longer than zero",
        ),
        (
            "(algorithm: K8sLease(renew_deadline: \"1s\", retry_period: @\"900ms\"))",
            "the renew deadline 1s must be longer than 1.2 retry periods (900ms)",
        ),
        (
            "(algorithm: K8sLease(renew_deadline: @\"20s\"))",
            "the lease duration 15s must be longer than the renew deadline 20s",
        ),
        (
            "(algorithm: K8sLease(lease_duration: \"1s\", renew_deadline: @\"1s\"))",
            "the lease duration 1s must be longer than the renew deadline 1s",
        ),
        (
            "(algorithm: K8sLease(lease_duration: @\"2ns\"))",
            "the retry period must be longer than zero",
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(marked, message);
    }
}

#[test]
fn k8s_lease_has_a_service_and_timings_that_follow_the_lease_duration() {
    use splitbrain_algorithms::k8s_lease::K8sVariant;
    let scenario = parsed(
        r#"(nodes: 3, algorithm: K8sLease(lease_duration: "3s", variant: DbRow),
           faults: [(at: "1s", do: Partition(Isolate(Service)), heal_after: "1s"),
                    (at: "2s", do: ClockJump(Service, "1s"))])"#,
    );
    let Some(k8s) = scenario
        .algorithm
        .config::<splitbrain_algorithms::k8s_lease::K8sLease>()
    else {
        panic!("{:?}", scenario.algorithm);
    };
    // client-go's ratios: 15s, 10s, 2s.
    assert_eq!(
        (
            k8s.lease_duration_ns,
            k8s.renew_deadline_ns,
            k8s.retry_period_ns
        ),
        (3_000_000_000, 2_000_000_000, 400_000_000)
    );
    assert_eq!(k8s.variant, K8sVariant::DbRow);
    assert_eq!(parsed(&to_ron(&scenario)), scenario);
    let zk = parsed(
        r#"(nodes: 3, algorithm: ZooKeeper(tick: "200ms", session_timeout: "9s", recipe: Herd,
           on_disconnect: KeepUntilExpired), faults: [(at: "1s", do: Crash(Service), heal_after: "1s")])"#,
    );
    assert_eq!(parsed(&to_ron(&zk)), zk);
}

#[test]
fn the_service_clock_is_set_only_where_there_is_a_service() {
    assert_error_at(
        "(algorithm: Raft(), clocks: (service: @(drift_ppm: 100)))",
        "`clocks.service` sets no clock: raft has no coordination service",
    );
    assert_error_at(
        "(algorithm: Etcd(), clocks: (service: (drift_ppm: @-1000000)))",
        "clock drift -1000000 ppm is out of range",
    );
    let scenario = parsed(
        r#"(nodes: 3, algorithm: Etcd(), clocks: (service: (drift_ppm: -300000, offset: "1s", timers: Wall)))"#,
    );
    assert_eq!(
        scenario.sim.clocks.service,
        Some(splitbrain_sim::FixedClock {
            drift_ppm: -300_000,
            offset_ns: 1_000_000_000,
            timers: splitbrain_sim::TimerClock::Wall,
        })
    );
    assert_eq!(parsed(&to_ron(&scenario)), scenario);
}

#[test]
fn lease_timings_are_bounded_and_reported_where_they_were_written() {
    let cases = [
        (
            "(algorithm: K8sLease(lease_duration: @\"5000000h\"))",
            "the timing 5000000h is longer than a day",
        ),
        (
            "(algorithm: K8sLease(renew_deadline: @\"4ns\"))",
            "the retry period must be longer than zero",
        ),
        (
            "(algorithm: ZooKeeper(tick: @\"5000000h\"))",
            "the timing 5000000h is longer than a day",
        ),
        (
            "(algorithm: ZooKeeper(session_timeout: @\"25h\"))",
            "the timing 25h is longer than a day",
        ),
        (
            "(algorithm: Etcd(ttl: @\"25h\"))",
            "the timing 25h is longer than a day",
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(marked, message);
    }
}

#[test]
fn durations_beyond_a_hundred_years_are_refused_where_they_are_written() {
    let r = "algorithm: Raft()";
    let max = "18446744073709551615ns";
    let too_long = "5124095h34m33.709551615s is longer than the longest duration a scenario may hold (876600h)";
    let cases = [
        format!("({r}, faults: [(at: \"1s\", do: Crash(Leader), heal_after: @\"{max}\")])"),
        format!(
            "({r}, faults: [(at: \"1s\", do: Partition(Isolate(Leader)), heal_after: @\"{max}\")])"
        ),
        format!(
            "({r}, faults: [(at: \"1s\", do: ClockDrift(Node(0), 5), heal_after: @\"{max}\")])"
        ),
        format!("({r}, faults: [(at: \"1s\", do: Pause(Leader, @\"{max}\"))])"),
        format!("({r}, faults: [(at: \"1s\", do: Stall(Leader, @\"{max}\"))])"),
        format!("({r}, network: (latency: Constant(@\"{max}\")))"),
        format!("({r}, network: (latency: Exponential(mean: @\"{max}\")))"),
        format!("({r}, objective: (startup_delay: @\"{max}\"))"),
        format!("({r}, clocks: (offset: @\"{max}\"))"),
        format!("({r}, duration: @\"{max}\")"),
    ];
    for marked in &cases {
        assert_error_at(marked, too_long);
        let (source, _) = unmark(marked);
        assert!(error_of(&source).hint().is_some(), "{source}");
    }
    assert_error_at(
        &format!("({r}, clocks: (offset: @\"9223372036854775808ns\"))"),
        "2562047h47m16.854775808s is longer than the longest duration a scenario may hold (876600h)",
    );
    assert!(parse(
        &format!("({r}, faults: [(at: \"1s\", do: Pause(Leader, \"876600h\"))])"),
        ORIGIN
    )
    .is_ok());
}

#[test]
fn clock_offsets_and_jumps_beyond_a_hundred_years_are_refused() {
    let r = "algorithm: Raft()";
    assert_error_at(
        &format!("({r}, faults: [(at: \"1s\", do: ClockJump(Node(0), @\"+2000000h\"))])"),
        "a clock offset or jump of 2000000h is beyond the largest a scenario may hold (876600h either way)",
    );
    assert_error_at(
        &format!("({r}, clocks: (nodes: [(node: 0, offset: @\"2562047h47m16s\")]))"),
        "a clock offset or jump of 2562047h47m16s is beyond the largest a scenario may hold (876600h either way)",
    );
    assert_error_at(
        &format!("({r}, nemesis: (max_clock_jump: @\"1000000h\"))"),
        "1000000h is longer than the longest duration a scenario may hold (876600h)",
    );
}

#[test]
fn a_nemesis_expected_to_inject_absurdly_many_faults_is_refused() {
    let error = error_of("(algorithm: Raft(), nemesis: (mean_interval: \"1ns\"))");
    assert!(
        error
            .message()
            .starts_with("the nemesis would inject about 49000000000 faults per run"),
        "{error}"
    );
    assert!(error.hint().unwrap().contains("mean_interval"));
    assert!(parse(
        "(algorithm: Raft(), nemesis: (mean_interval: \"1ms\"))",
        ORIGIN
    )
    .is_ok());
}

#[test]
fn runs_expected_to_handle_absurdly_many_events_are_refused_at_the_shortest_timing() {
    let cases = [
        "(algorithm: Raft(heartbeat: @\"1ns\", election_timeout: (\"150ms\", \"300ms\")))",
        "(algorithm: Raft(), workload: (write_every: @\"1ns\"))",
        "(algorithm: Etcd(keepalive: @\"1ns\"))",
        "(algorithm: ZooKeeper(tick: @\"1ns\"))",
    ];
    for marked in cases {
        let (source, location) = unmark(marked);
        let error = error_of(&source);
        assert!(
            error.message().starts_with("the run would handle about"),
            "{error}"
        );
        assert_eq!(error.location, Some(location), "{source}");
        assert!(error.hint().is_some());
    }
    let error = error_of("(algorithm: Ring(), nodes: 10000, duration: \"876600h\")");
    assert!(
        error.message().starts_with("the run would handle about"),
        "{error}"
    );
}

/// What the estimate multiplies by (each found by a probe that ran an accepted scenario for
/// hours): fast clocks, storms of messages slower than the timing, Stream retransmissions.
/// Each case is accepted without the multiplying setting.
#[test]
fn fast_clocks_storms_and_retransmissions_count_in_the_events_estimate() {
    let drifting = |drift: &str| {
        format!("(algorithm: Raft(), duration: \"1h\", clocks: (nodes: [(node: 0, drift_ppm: {drift})]))")
    };
    let error = error_of(&drifting("1000000000"));
    assert!(error.message().contains("1001.000x fast"), "{error}");
    assert!(parse(&drifting("100"), ORIGIN).is_ok());
    let fault = "(algorithm: Raft(), duration: \"1h\", faults: [(at: \"1s\", do: ClockDrift(Node(0), 1000000000))])";
    assert!(error_of(fault).message().contains("x fast"));
    // A nemesis that may draw drifts of up to +999999 ppm doubles a 600M estimate.
    let nemesis = |kind: &str| {
        format!("(algorithm: Raft(), duration: \"1666h\", nemesis: (kinds: [{kind}], max_drift_ppm: 999999, mean_interval: \"1h\"))")
    };
    assert!(error_of(&nemesis("ClockDrift"))
        .message()
        .contains("2.000x fast"));
    assert!(parse(&nemesis("Crash"), ORIGIN).is_ok());

    let storm = |latency: &str| {
        format!("(algorithm: Raft(), nodes: 4000, duration: \"5s\", network: (latency: Uniform(\"1ms\", \"{latency}\")))")
    };
    // Raft's smallest election timeout is 150ms by default: a 200ms link storms, 100ms not.
    let error = error_of(&storm("200ms"));
    assert!(
        error.message().contains("each act up to 7999 events"),
        "{error}"
    );
    assert!(parse(&storm("100ms"), ORIGIN).is_ok());
    // Neither the workload's period nor the heartbeat makes a storm (a review's cases).
    let writes = "(algorithm: Raft(election_timeout: (\"500ms\", \"1s\")), nodes: 50, duration: \"1h\", network: (latency: Constant(\"20ms\")), workload: (write_every: \"10ms\"))";
    assert!(parse(writes, ORIGIN).is_ok());
    let slow = "(algorithm: Raft(election_timeout: (\"1s\", \"2s\")), nodes: 100, duration: \"1h\", network: (latency: Constant(\"60ms\")))";
    assert!(parse(slow, ORIGIN).is_ok());
    // Clients of a service keep a connection to it each, not one to every other client.
    let clients = "(algorithm: ZooKeeper(tick: \"100ms\", session_timeout: \"1s\"), nodes: 10000, duration: \"1h\")";
    assert!(parse(clients, ORIGIN).is_ok());

    let stream = |rto: &str| {
        format!("(algorithm: Raft(), duration: \"20s\", network: (loss: 1.0, transport: @Stream(min_rto: \"1ns\", max_rto: \"{rto}\")))")
    };
    let (source, location) = unmark(&stream("1ns"));
    let error = error_of(&source);
    assert!(
        error.message().contains("Stream retransmissions"),
        "{error}"
    );
    assert_eq!(error.location, Some(location), "reported at the transport");
    assert!(parse(&stream("200ms").replace('@', ""), ORIGIN).is_ok());
}

#[test]
fn every_count_one_past_its_maximum_is_refused_at_its_value_with_a_hint() {
    let over_log = splitbrain_algorithms::raft::MAX_LOG_LENGTH + 1;
    let over_ticks = splitbrain_algorithms::raft_rs::config::MAX_TICKS + 1;
    let cases: Vec<(String, String)> = vec![
        (
            format!("(nodes: 3, algorithm: Raft(log_lengths: [1, @{over_log}, 2]))"),
            format!("log_lengths[1] is {over_log} entries, more than 1000000000000"),
        ),
        (
            format!("(algorithm: RaftRs(election_tick: @{over_ticks}, tick: \"1ns\"))"),
            format!("election_tick is {over_ticks} ticks, more than 1000000"),
        ),
        (
            format!("(algorithm: RaftRs(heartbeat_tick: @{over_ticks}))"),
            format!("heartbeat_tick is {over_ticks} ticks, more than 1000000"),
        ),
        (
            "(algorithm: Raft(), nodes: @10001)".into(),
            "nodes must be between 1 and 10000, not 10001".into(),
        ),
        (
            "(algorithm: Raft(), clocks: (drift_ppm: @1000000))".into(),
            "the random drift bound must be between 0 and 999999 ppm, not 1000000".into(),
        ),
        (
            "(algorithm: Raft(), nemesis: (max_drift_ppm: @1000000))".into(),
            "clock drift 1000000 ppm is out of range".into(),
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(&marked, &message);
        let (source, _) = unmark(&marked);
        let error = error_of(&source);
        assert!(error.hint().is_some_and(|h| !h.is_empty()), "{error}");
    }
}

#[test]
fn swarm_ranges_are_bounded_and_refused_without_swarm() {
    let base = "algorithm: Raft(), duration: \"60s\"";
    assert_error_at(
        &format!(
            "({base}, nemesis: (swarm: false, swarm_ranges: @(longest_fault: (\"1s\", \"2s\"))))"
        ),
        "`swarm_ranges` is given but `swarm` is false: no seed would draw from it",
    );
    for setting in ["longest_fault", "max_clock_jump", "max_fsync", "latency"] {
        assert_error_at(
            &format!("({base}, nemesis: (swarm_ranges: ({setting}: (\"1s\", @\"1000000h\"))))"),
            "1000000h is longer than the longest duration a scenario may hold (876600h)",
        );
    }
    let error = error_of(&format!(
        "({base}, nemesis: (swarm: false, swarm_ranges: (longest_fault: (\"1s\", \"2s\"))))"
    ));
    assert!(
        error
            .hint()
            .is_some_and(|h| h.contains("drop `swarm: false`")),
        "{error}"
    );
    let fine = format!("({base}, nemesis: (swarm_ranges: (longest_fault: (\"1s\", \"2s\"))))");
    assert!(parse(&fine, ORIGIN).is_ok());
}

#[test]
fn a_nemesis_that_can_inject_nothing_is_refused_where_it_says_so() {
    let base = "algorithm: Raft(), duration: \"60s\"";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("({base}, nemesis: (kinds: @[]))"),
            "the nemesis has no fault kinds: it would inject nothing",
        ),
        (
            // The window is 60s - 1s - 10s = 49s: a 50s fault never fits.
            format!("({base}, nemesis: (fault_duration: (@\"50s\", \"60s\")))"),
            "the shortest nemesis fault (50s) does not fit in the 49s the nemesis may act \
             (from `start` to the quiet tail): it would inject nothing",
        ),
        (
            format!("({base}, nemesis: (mean_interval: @\"50s\"))"),
            "the nemesis waits 50s on average between faults, longer than the 49s it may act \
             (from `start` to the quiet tail): most runs would get no fault",
        ),
        (
            format!("({base}, nemesis: (kinds: [Crash, ClockJump], max_clock_jump: @\"0s\"))"),
            "nemesis kind `ClockJump` would inject nothing: `max_clock_jump` is zero",
        ),
        (
            // The default kinds include ClockDrift.
            format!("({base}, nemesis: (max_drift_ppm: @0))"),
            "nemesis kind `ClockDrift` would inject nothing: `max_drift_ppm` is zero",
        ),
        (
            format!("({base}, nemesis: (kinds: [LossBurst], max_loss: @0.0))"),
            "nemesis kind `LossBurst` would inject nothing: `max_loss` is zero",
        ),
        (
            "(algorithm: Bully(), nemesis: (kinds: @[Crash, Resign]))".to_string(),
            "nemesis kind `Resign` would inject nothing: bully has no planned handover",
        ),
        (
            format!("({base}, nodes: 1, nemesis: (kinds: @[Crash, Isolate]))"),
            "nemesis kind `Isolate` would inject nothing: with one node and no service, no \
             message is ever sent",
        ),
    ];
    for (marked, message) in cases {
        assert_error_at(&marked, message);
        let (source, _) = unmark(&marked);
        assert!(error_of(&source).hint().is_some(), "{source}");
    }
    // Each is the edge: a fault that just fits, faults once per window, a size of one.
    for fine in [
        format!("({base}, nemesis: (fault_duration: (\"48s\", \"60s\")))"),
        format!("({base}, nemesis: (mean_interval: \"49s\"))"),
        format!("({base}, nemesis: (kinds: [Crash], max_clock_jump: \"0s\", max_loss: 0.0))"),
        format!("({base}, nemesis: (kinds: [ClockJump], max_clock_jump: \"1ns\"))"),
        // The default kinds, which include both, are for any algorithm.
        "(algorithm: Bully(), nodes: 1, nemesis: ())".to_string(),
        // A design that hands over.
        "(algorithm: Ring(), designs: [(name: \"r\", algorithm: Raft())], nemesis: (kinds: [Resign]))"
            .to_string(),
        // One member, but a service to be cut off from.
        "(algorithm: Etcd(), nodes: 1, nemesis: (kinds: [Isolate]))".to_string(),
        format!("({base}, nodes: 1, nemesis: (kinds: [Crash, ClockJump]))"),
    ] {
        parsed(&fine);
    }
}

#[test]
fn a_service_a_design_does_not_have_is_refused_naming_the_design() {
    let source = "Scenario(\n    algorithm: Etcd(),\n    designs: [\n        (name: \"etcd\", algorithm: Etcd()),\n        (name: \"plain-raft\", algorithm: Raft()),\n    ],\n    faults: [(at: \"1s\", do: Stall(Service, \"2s\"))],\n)";
    let error = error_of(source);
    assert_eq!(
        error.message(),
        "target `Service` names the coordination service, but design \"plain-raft\" runs \
         raft, which has none"
    );
    assert_eq!(error.location, Some((7, 35)));
    assert!(error.hint().unwrap().contains("`Etcd`"), "{error}");
    for (what, line) in [
        ("clocks: (service: (drift_ppm: 5))", "`clocks.service`"),
        ("disk: (service: Constant(\"1ms\"))", "`disk.service`"),
    ] {
        let source = format!(
            "(algorithm: ZooKeeper(), designs: [(name: \"bully\", algorithm: Bully())], {what})"
        );
        assert!(error_of(&source).message().starts_with(line), "{source}");
    }
    // Designs that all have a service are fine.
    parsed(
        "(algorithm: Etcd(), designs: [(name: \"zk\", algorithm: ZooKeeper())], \
         faults: [(at: \"1s\", do: Crash(Service), heal_after: \"1s\")])",
    );
}

#[test]
fn what_names_the_service_is_found_for_an_algorithm_chosen_on_the_command_line() {
    let etcd = parsed("(algorithm: Etcd(), faults: [(at: \"3s\", do: Stall(Service, \"2s\"))])");
    let raft = AlgorithmConfig::default_named("raft").unwrap();
    let crate::Refused { message, hint } = etcd.refuse_algorithm(&raft, "--algorithm").unwrap_err();
    assert_eq!(
        message,
        "the fault at 3s names the coordination service, which raft does not have"
    );
    assert!(
        hint.starts_with(
            "only etcd, zookeeper and k8s-lease have a service: name those with --algorithm"
        ),
        "{hint}"
    );
    let zk = AlgorithmConfig::default_named("zookeeper").unwrap();
    assert_eq!(etcd.refuse_algorithm(&zk, "--algorithm"), Ok(()));
    let plain = parsed("(algorithm: Etcd(), faults: [(at: \"3s\", do: Stall(Leader, \"2s\"))])");
    assert_eq!(plain.refuse_algorithm(&raft, "--algorithm"), Ok(()));
}

/// Issue 47: an external client runs against a whole cluster (before, etcd's `members` and
/// ZooKeeper's `servers` above 1 were refused): its service's processes are the cluster's.
#[test]
fn an_external_client_runs_against_a_clustered_service() {
    for (service, processes) in [
        ("Etcd(members: 3)", 3),
        ("ZooKeeper(servers: 3)", 3),
        ("K8sLease(etcd_members: 3, apiservers: 2)", 5),
    ] {
        let source =
            format!("(algorithm: ExternalClient(command: [\"true\"], service: {service}))");
        let scenario = parsed(&source);
        assert_eq!(
            scenario.algorithm.service_processes(),
            processes,
            "{service}"
        );
    }
}

/// Issue 43: settings a form of a service ignores are refused, each at its own line and
/// column: the built-in client's rules under external clients, a cluster's `version` for the
/// single etcd process, an ensemble's limits for the single ZooKeeper server.
#[test]
fn settings_a_service_would_ignore_are_refused_at_their_place() {
    let cases = [
        (
            "Scenario(\n    algorithm: ExternalClient(\n        command: [\"true\"],\n        service: K8sLease(rules: @Strict),\n    ),\n)",
            "the service's `rules` is a setting of its built-in client, which the external nodes replace",
        ),
        (
            "Scenario(\n    algorithm: Etcd(ttl: \"2s\", version: @\"3.5\"),\n)",
            "`version` is a setting of an etcd cluster, and the single service process ignores it",
        ),
        (
            "Scenario(\n    algorithm: ZooKeeper(init_limit: @20),\n)",
            "`init_limit` is a setting of a ZooKeeper ensemble, and the single server ignores it",
        ),
    ];
    for (marked, message) in cases {
        let (source, location) = unmark(marked);
        let error = error_of(&source);
        assert_eq!(error.message(), message);
        assert_eq!(error.location, Some(location), "{source}");
        assert!(error.hint().is_some(), "{source}");
    }
    // Inside an external client's service, at the service (the wrapped rule names the field).
    let source =
        "(algorithm: ExternalClient(command: [\"true\"], service: Etcd(version: \"3.5\")))";
    let message = error_of(source).message();
    assert!(
        message.starts_with("the service's `version`: `version` is a setting of an etcd cluster"),
        "{message}"
    );
}
