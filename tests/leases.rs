//! Lease-based election recipes under random fault schedules. With fencing enforced the
//! resource never accepts a stale token from the etcd recipe (revision tokens), whatever
//! strikes clients or the service; the unsafe variants are caught by the checker.
//!
//! A failing case prints its scenario as RON: save it and `splitbrain run FILE` replays it.

use proptest::prelude::*;
use splitbrain::scenario::parse;
use splitbrain_sim::{Invariant, RunReport};

/// One fault as scenario text, with its time in ms.
fn fault() -> impl Strategy<Value = (u64, String)> {
    let target = prop_oneof![
        Just("Leader".to_string()),
        Just("Follower".to_string()),
        Just("Random".to_string()),
        Just("Service".to_string()),
        (0..3u32).prop_map(|i| format!("Node({i})")),
    ];
    let client = prop_oneof![
        Just("Leader".to_string()),
        Just("Follower".to_string()),
        (0..3u32).prop_map(|i| format!("Node({i})")),
    ];
    let action = prop_oneof![
        (client.clone(), 10..=800u64)
            .prop_map(|(t, h)| format!("do: Crash({t}), heal_after: \"{h}ms\"")),
        (target.clone(), 10..=3_000u64).prop_map(|(t, d)| format!("do: Pause({t}, \"{d}ms\")")),
        (target.clone(), 10..=3_000u64).prop_map(|(t, d)| format!("do: Stall({t}, \"{d}ms\")")),
        (target.clone(), 10..=3_000u64)
            .prop_map(|(t, h)| format!("do: Partition(Isolate({t})), heal_after: \"{h}ms\"")),
        (target.clone(), -2_000..=2_000i64)
            .prop_map(|(t, d)| format!("do: ClockJump({t}, \"{d}ms\")")),
        (target, -600_000..=600_000i64, 10..=3_000u64)
            .prop_map(|(t, ppm, h)| format!("do: ClockDrift({t}, {ppm}), heal_after: \"{h}ms\"")),
        Just("do: Resign(Leader)".to_string()),
    ];
    (0..5_000u64, action).prop_map(|(at, a)| (at, format!("(at: \"{at}ms\", {a})")))
}

fn scenario(seed: u64, variant: &str, fencing: bool, faults: &[String]) -> String {
    format!(
        "Scenario(\n    name: \"etcd-random\",\n    seed: {seed},\n    duration: \"7s\",\n    nodes: 3,\n    \
         algorithm: Etcd(ttl: \"600ms\", min_ttl: \"300ms\", variant: {variant}),\n    \
         network: (latency: Uniform(\"1ms\", \"10ms\"), loss: 0.02),\n    \
         workload: (write_every: \"50ms\"),\n    resource: (fencing: {fencing}),\n    \
         faults: [\n        {}\n    ],\n    expect: Safe,\n)\n",
        faults.join(",\n        ")
    )
}

fn run(text: &str) -> RunReport {
    let s = parse(text, "etcd-random.ron").expect("generated scenario is valid");
    splitbrain_algorithms::run(&s.algorithm, s.sim, None)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_revision_recipe_with_fencing_never_lets_a_stale_token_through(
        seed in 0..u64::MAX,
        faults in prop::collection::vec(fault(), 0..8),
    ) {
        // The engine expects faults in time order (a heal indexes the records of faults
        // already fired).
        let mut faults = faults;
        faults.sort_by_key(|f| f.0);
        let faults: Vec<String> = faults.into_iter().map(|f| f.1).collect();
        let text = scenario(seed, "Revision", true, &faults);
        let report = run(&text);
        prop_assert!(report.violated_safety().is_empty(), "{:?}\n{text}", report.violated_safety());
    }
}

/// A GC pause of the holder longer than its TTL, its decided write leaving after it.
fn holder_stall(seed: u64, variant: &str, fencing: bool) -> RunReport {
    run(&scenario(
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
