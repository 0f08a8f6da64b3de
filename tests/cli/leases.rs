//! Lease-based election recipes under random fault schedules. With fencing enforced the
//! resource never accepts a stale token from the etcd recipe (revision tokens) or the
//! Kubernetes Lease lock (resourceVersion tokens, both variants), whatever strikes clients or
//! the service; the unsafe variants are caught by the checker. The client-go Lease lock is
//! safe even without fencing as long as client clocks are honest and no client stalls.
//!
//! A failing case prints its scenario as RON: save it and `splitbrain run FILE` replays it.

use crate::common;

use common::{in_order, run_text};
use proptest::prelude::*;
use splitbrain::scenario::parse;
use splitbrain_sim::{Invariant, LivenessVerdict, RunReport};

/// The clients a fault can strike.
fn client() -> BoxedStrategy<String> {
    prop_oneof![
        Just("Leader".to_string()),
        Just("Follower".to_string()),
        (0..3u32).prop_map(|i| format!("Node({i})")),
    ]
    .boxed()
}

/// Any process: a client or the service.
fn anyone() -> BoxedStrategy<String> {
    prop_oneof![
        client(),
        Just("Random".to_string()),
        Just("Service".to_string())
    ]
    .boxed()
}

fn crash() -> BoxedStrategy<String> {
    (client(), 10..=800u64)
        .prop_map(|(t, h)| format!("do: Crash({t}), heal_after: \"{h}ms\""))
        .boxed()
}

fn pause(target: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (target, 10..=3_000u64)
        .prop_map(|(t, d)| format!("do: Pause({t}, \"{d}ms\")"))
        .boxed()
}

fn stall(target: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (target, 10..=3_000u64)
        .prop_map(|(t, d)| format!("do: Stall({t}, \"{d}ms\")"))
        .boxed()
}

fn isolate(target: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (target, 10..=3_000u64)
        .prop_map(|(t, h)| format!("do: Partition(Isolate({t})), heal_after: \"{h}ms\""))
        .boxed()
}

fn clock_jump(target: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (target, -2_000..=2_000i64)
        .prop_map(|(t, d)| format!("do: ClockJump({t}, \"{d}ms\")"))
        .boxed()
}

fn clock_drift(target: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (target, -600_000..=600_000i64, 10..=3_000u64)
        .prop_map(|(t, ppm, h)| format!("do: ClockDrift({t}, {ppm}), heal_after: \"{h}ms\""))
        .boxed()
}

/// A fault of `action` at a time in the first 5s, as scenario text with its time in ms.
fn at_some_time(action: BoxedStrategy<String>) -> impl Strategy<Value = (u64, String)> {
    (0..5_000u64, action).prop_map(|(at, a)| (at, format!("(at: \"{at}ms\", {a})")))
}

/// Any fault on anyone.
fn fault() -> impl Strategy<Value = (u64, String)> {
    at_some_time(
        prop_oneof![
            crash(),
            pause(anyone()),
            stall(anyone()),
            isolate(anyone()),
            clock_jump(anyone()),
            clock_drift(anyone()),
            Just("do: Resign(Leader)".to_string()),
        ]
        .boxed(),
    )
}

/// Faults that leave client clocks honest and never stall a client: crashes, pauses,
/// partitions of anyone, and anything on the service (a stall, clock jumps and drift).
fn honest_fault() -> impl Strategy<Value = (u64, String)> {
    let service = || Just("Service".to_string()).boxed();
    at_some_time(
        prop_oneof![
            crash(),
            pause(anyone()),
            stall(service()),
            isolate(anyone()),
            clock_jump(service()),
            clock_drift(service()),
            Just("do: Resign(Leader)".to_string()),
        ]
        .boxed(),
    )
}

fn scenario(seed: u64, variant: &str, fencing: bool, faults: &[String]) -> String {
    let etcd = format!("Etcd(ttl: \"600ms\", min_ttl: \"300ms\", variant: {variant})");
    scenario_of(seed, &etcd, fencing, faults)
}

fn k8s(seed: u64, variant: &str, fencing: bool, faults: &[String]) -> String {
    let k8s = format!(
        "K8sLease(lease_duration: \"900ms\", renew_deadline: \"600ms\", retry_period: \"120ms\", variant: {variant}, rules: Strict)"
    );
    scenario_of(seed, &k8s, fencing, faults)
}

fn scenario_of(seed: u64, algorithm: &str, fencing: bool, faults: &[String]) -> String {
    format!(
        "Scenario(\n    name: \"lease-random\",\n    seed: {seed},\n    duration: \"7s\",\n    nodes: 3,\n    \
         algorithm: {algorithm},\n    \
         network: (latency: Uniform(\"1ms\", \"10ms\"), loss: 0.02),\n    \
         workload: (write_every: \"50ms\"),\n    resource: (fencing: {fencing}),\n    \
         faults: [\n        {}\n    ],\n    expect: Safe,\n)\n",
        faults.join(",\n        ")
    )
}

/// A run that elected someone and wrote: a property over runs that did nothing would hold
/// vacuously.
fn assert_it_ran(report: &RunReport, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(!report.leaders.is_empty(), "nobody was elected\n{text}");
    prop_assert!(report.writes.accepted > 0, "no write was accepted\n{text}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_revision_recipe_with_fencing_never_lets_a_stale_token_through(
        seed in 0..u64::MAX,
        faults in prop::collection::vec(fault(), 0..8),
    ) {
        let text = scenario(seed, "Revision", true, &in_order(faults));
        let report = run_text(&text);
        assert_it_ran(&report, &text)?;
        prop_assert!(report.violated_safety().is_empty(), "{:?}\n{text}", report.violated_safety());
    }

    #[test]
    fn the_k8s_lease_with_fencing_never_lets_a_stale_token_through(
        seed in 0..u64::MAX,
        db_row in any::<bool>(),
        faults in prop::collection::vec(fault(), 0..8),
    ) {
        let variant = if db_row { "DbRow" } else { "Lease" };
        let text = k8s(seed, variant, true, &in_order(faults));
        let report = run_text(&text);
        assert_it_ran(&report, &text)?;
        prop_assert!(report.violated_safety().is_empty(), "{:?}\n{text}", report.violated_safety());
    }

    #[test]
    fn the_client_go_lease_needs_no_fencing_while_client_clocks_are_honest_and_nobody_stalls(
        seed in 0..u64::MAX,
        faults in prop::collection::vec(honest_fault(), 0..8),
    ) {
        // The model's `Strict` rules (client-go's own rules, with a 900ms lease cut to 0
        // whole seconds and a pause not checked at resume, are not safe here:
        // docs/algorithms/k8s-lease.md). The leader stops at its renew deadline, counted from
        // the send time of its last renewal; a candidate takes over only a lease duration
        // after it saw that renewal,
        // and only if no later one succeeded (optimistic concurrency). Server clocks are
        // never read.
        let text = k8s(seed, "Lease", false, &in_order(faults));
        let report = run_text(&text);
        assert_it_ran(&report, &text)?;
        // A paused leader may still believe it leads (overlap) but it acts on nothing until
        // it resumes, and then its first check is its renew deadline, by the clock.
        prop_assert!(report.violated_safety().is_empty(), "{:?}\n{text}", report.violated_safety());
    }
}

/// A GC pause of the holder longer than its TTL, its decided write leaving after it.
fn holder_stall(seed: u64, variant: &str, fencing: bool) -> RunReport {
    run_text(&scenario(
        seed,
        variant,
        fencing,
        &["(at: \"3s\", do: Stall(Leader, \"2s\"))".to_string()],
    ))
}

#[test]
fn the_revision_recipe_survives_a_holder_stall_with_fencing_and_is_caught_without() {
    for seed in 0..8 {
        assert!(holder_stall(seed, "Revision", true)
            .violated_safety()
            .is_empty());
    }
    let caught = (0..8)
        .filter(|s| {
            holder_stall(*s, "Revision", false).violated_safety() == vec![Invariant::FencingSafety]
        })
        .count();
    assert!(caught > 0, "an unfenced stall is never caught");
}

#[test]
fn setnx_has_no_token_so_fencing_cannot_save_it() {
    let caught = (0..8)
        .filter(|s| {
            holder_stall(*s, "SetNx", true).violated_safety() == vec![Invariant::FencingSafety]
        })
        .count();
    assert!(caught > 0, "SetNx under a holder stall is never caught");
}

#[test]
fn the_service_counts_the_leases_it_expired_under_a_believing_holder() {
    let report = holder_stall(1, "Revision", true);
    assert!(report.counters.leases_expired_while_leading >= 1);
    let kinds: Vec<&str> = report.messages.iter().map(|m| m.kind.as_str()).collect();
    assert!(
        kinds.contains(&"WatchEvent") && kinds.contains(&"KeepAlive"),
        "{kinds:?}"
    );
}

/// A GC pause of the Kubernetes Lease holder longer than its lease duration, striking inside
/// the handler of its write tick (10ms past one) so that the write decided before the pause
/// leaves after it.
fn k8s_holder_stall(seed: u64, variant: &str, fencing: bool) -> RunReport {
    run_text(&k8s(
        seed,
        variant,
        fencing,
        &["(at: \"3.01s\", do: Stall(Leader, \"2s\"))".to_string()],
    ))
}

#[test]
fn the_k8s_lease_survives_a_holder_stall_with_fencing_and_is_caught_without() {
    for variant in ["Lease", "DbRow"] {
        for seed in 0..8 {
            let report = k8s_holder_stall(seed, variant, true);
            assert!(report.violated_safety().is_empty(), "{variant} {seed}");
            assert!(
                report.leaders.len() >= 2,
                "{variant} {seed}: nobody took over"
            );
        }
        let caught = (0..8)
            .filter(|s| {
                k8s_holder_stall(*s, variant, false).violated_safety()
                    == vec![Invariant::FencingSafety]
            })
            .count();
        assert!(caught > 0, "{variant}: an unfenced stall is never caught");
    }
}

#[test]
fn a_database_row_lease_is_broken_by_a_jump_of_the_database_clock_and_the_client_go_lease_is_not() {
    let jump = ["(at: \"3s\", do: ClockJump(Service, \"3s\"))".to_string()];
    let caught = (0..16)
        .filter(|s| {
            run_text(&k8s(*s, "DbRow", false, &jump)).violated_safety()
                == vec![Invariant::FencingSafety]
        })
        .count();
    assert!(caught > 0, "the database clock jump is never caught");
    for seed in 0..16 {
        let report = run_text(&k8s(seed, "Lease", false, &jump));
        assert!(report.violated_safety().is_empty(), "seed {seed}");
        assert_eq!(report.leaders.len(), 1, "seed {seed}: {:?}", report.leaders);
    }
}

#[test]
fn a_wall_clock_token_stepped_back_locks_the_new_leader_out_and_the_revision_does_not() {
    let shipped = include_str!("../../scenarios/etcd-wallclock-token.ron");
    // The crash at 5s and a few ms later: a write of the old leader may still be in flight
    // when it crashes, and its term counts from when it was sent.
    for crash_ms in [5000, 5001, 5002, 5003, 5005] {
        let text = shipped.replace(
            "at: \"5s\", do: Crash(Leader)",
            &format!("at: \"{crash_ms}ms\", do: Crash(Leader)"),
        );
        let wall = run_text(&text);
        assert_eq!(
            wall.violated_safety(),
            vec![Invariant::FencingSafety],
            "{crash_ms}: fencing sides with the deposed leader"
        );
        let first = &wall.violations[0];
        assert!(
            first.detail.contains("in favour of token") && first.detail.contains("older term"),
            "{crash_ms}: {}",
            first.detail
        );
        assert!(
            wall.counters.locked_out_writes > 0,
            "{crash_ms}: {:?}",
            wall.counters
        );
        assert_eq!(wall.counters.locked_out_writes, wall.writes.rejected_stale);
        let revision = run_text(&text.replace("variant: WallClockToken", "variant: Revision"));
        assert_eq!(revision.counters.locked_out_writes, 0);
        assert!(revision.violated_safety().is_empty(), "{crash_ms}");
        assert!(revision.leaders.len() >= 2, "the crash failed over");
    }
    // A stale write rejected from the old leader is no lockout.
    let stall = run_text(include_str!("../../scenarios/k8s-holder-stall.ron"));
    assert!(stall.writes.rejected_stale > 0);
    assert_eq!(stall.counters.locked_out_writes, 0);
}

/// The service's clock can be set like a member's: `clocks: (service: (...))`.
#[test]
fn the_service_clock_takes_its_own_offset_and_drift() {
    let text = k8s(1, "DbRow", true, &[]).replace(
        "workload:",
        "clocks: (service: (drift_ppm: 500000, offset: \"-2s\")),\n    workload:",
    );
    let s = parse(&text, "service-clock.ron").expect("valid");
    let mut sink = splitbrain_sim::JsonLinesWriter::new(Vec::new());
    splitbrain_algorithms::run(&s.algorithm, s.sim, Some(&mut sink))
        .expect("within the default limits");
    let trace = String::from_utf8(sink.into_inner()).expect("utf-8");
    let (mut service_events, mut member_events) = (0, 0);
    for line in trace.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let (Some(t), Some(local), Some(node)) =
            (v["t"].as_i64(), v["local"].as_i64(), v["node"].as_u64())
        else {
            continue;
        };
        if node == 3 {
            // local = -2s + t * 1.5
            assert_eq!(local, -2_000_000_000 + t + t / 2, "{line}");
            service_events += 1;
        } else {
            assert_eq!(local, t, "members keep perfect clocks: {line}");
            member_events += 1;
        }
    }
    assert!(service_events > 0 && member_events > 0);
}

/// Found by `hunt` (etcd nemesis, seed 201): after a stall of the service, answers to
/// requests of an abandoned campaign arrived in a new one, and a client led on a key its own
/// revoke had deleted, for the rest of the run.
#[test]
fn late_answers_from_an_abandoned_campaign_do_not_make_a_leader() {
    let text = r#"Scenario(
    seed: 201,
    duration: "1m",
    nodes: 2,
    algorithm: Etcd(ttl: "1s", election_timeout: "500ms", variant: Revision),
    network: (latency: Uniform("1ms", "10ms")),
    workload: (write_every: "100ms"),
    faults: [
        (at: "27.848101515s", do: Crash(Leader), heal_after: "2.447050121s"),
        (at: "28.360950873s", do: Stall(Service, "3.716962424s")),
    ],
)"#;
    let report = run_text(text);
    assert!(report.violated_safety().is_empty());
    assert!(
        matches!(report.liveness, LivenessVerdict::Met { .. }),
        "one leader that both clients recognise: {:?}",
        report.liveness
    );
}

#[test]
fn lease_windows_show_a_stalled_holder_believing_past_its_lease() {
    let report = holder_stall(1, "Revision", true);
    let old = report.leaders[0].node;
    let lease_end = report
        .lease_spans
        .iter()
        .filter(|s| s.node == old)
        .map(|s| s.to_ns)
        .min()
        .expect("the holder's key had a lease window");
    let belief_end = report
        .leadership_spans
        .iter()
        .filter(|s| s.node == old)
        .map(|s| s.to_ns)
        .min()
        .expect("the holder led");
    assert!(
        lease_end < belief_end,
        "the service expired the lease at {lease_end}, the holder believed until {belief_end}"
    );
    // Every candidate's key has a window; the new leader's runs to the end.
    let new = report.leaders[1].node;
    assert!(report
        .lease_spans
        .iter()
        .any(|s| s.node == new && s.to_ns == report.end_ns));
    let raft = run_text("Scenario(algorithm: Raft(), duration: \"2s\")");
    assert!(raft.lease_spans.is_empty());
}

#[test]
fn lease_windows_follow_each_service_s_own_record() {
    // Kubernetes: a renewal opens no second window; the release closes it at once and the
    // next holder's opens at its acquisition.
    let handover = run_text(include_str!("../../scenarios/k8s-handover.ron"));
    let windows: Vec<(usize, u64, u64)> = handover
        .lease_spans
        .iter()
        .map(|s| (s.node.index(), s.from_ns, s.to_ns))
        .collect();
    // One window per tenure, back to back: n1 until its release at 5s, n0 from its
    // acquisition until n1 takes over after n0's crash at 12s, then n1 again.
    assert_eq!(windows.len(), 3, "{windows:?}");
    assert_eq!(windows[0].0, handover.leaders[0].node.index());
    assert!(
        (5_000_000_000..5_050_000_000).contains(&windows[0].2),
        "{windows:?}"
    );
    for (window, claim) in windows.iter().zip(&handover.leaders) {
        assert_eq!(window.0, claim.node.index());
        // The record names the holder a round trip before the holder hears it.
        assert!(claim.at_ns - window.1 < 20_000_000, "{window:?} {claim:?}");
    }
    assert_eq!(windows[1].2, windows[2].1, "taken over at one instant");
    // A database row ends when the database's clock says so: at the 5s jump.
    let jump = run_text(include_str!("../../scenarios/k8s-dbrow-clock-jump.ron"));
    let holder = jump.leaders[0].node;
    let ended = jump
        .lease_spans
        .iter()
        .find(|s| s.node == holder)
        .map(|s| s.to_ns)
        .expect("the first holder's row had a window");
    assert_eq!(ended, 5_000_000_000);
    // ZooKeeper: the cut-off leader's znode goes with its session, while it still believes.
    let zk = run_text(include_str!("../../scenarios/zk-partitioned-leader.ron"));
    let old = zk.leaders[0].node;
    let znode_gone = zk
        .lease_spans
        .iter()
        .find(|s| s.node == old)
        .map(|s| s.to_ns)
        .expect("the leader's znode had a window");
    let belief_ends = zk
        .leadership_spans
        .iter()
        .find(|s| s.node == old)
        .map(|s| s.to_ns)
        .expect("it led");
    assert!(znode_gone < belief_ends, "{znode_gone} vs {belief_ends}");
}
