//! Fuzz-style: scenarios with extreme values (durations near `u64::MAX` and `i64::MAX`, zero,
//! 1 ns, clock offsets and jumps of any size, extreme nemesis settings and latencies) go
//! through what `check` does, and the accepted ones through a bounded run. Whatever the input:
//! no panic, a rejection carries a location, a message and a hint, and a run ends with an exit code in
//! {0, 1, 2, 3} without livelocking (it reaches its end within a budget derived from the work
//! the scenario asks for).

use proptest::prelude::*;
use splitbrain::scenario::{parse, Scenario};
use splitbrain::verdict::judge;
use splitbrain_algorithms::{expected_events, run_with, RunOptions};

const ORIGIN: &str = "extreme.ron";
/// Runs are cut to this much simulated time: the point is what the engine does with the
/// values, not how long it simulates.
const RUN_CAP_NS: u64 = 2_000_000_000;
/// A run whose estimated work fits this many events must reach its end within them.
const LIVELOCK_BUDGET_EVENTS: u64 = 200_000;
/// Any other run stops after this many events (it is still checked for panics).
const BOUNDED_RUN_EVENTS: u64 = 50_000;

/// The largest duration a scenario may hold (100 years), and just beyond it.
const LIMIT_NS: u64 = 3_155_760_000_000_000_000;

/// Durations at the edges: zero, 1 ns, the limit and just past it, near `i64::MAX` and
/// `u64::MAX`, anything.
fn extreme_ns() -> BoxedStrategy<u64> {
    prop_oneof![
        Just(0u64),
        Just(1u64),
        1u64..10_000,
        Just(LIMIT_NS),
        Just(LIMIT_NS + 1),
        Just(7_200_000_000_000_000_000u64), // 2,000,000h
        Just(i64::MAX as u64),
        Just(i64::MAX as u64 + 1),
        (0u64..1_000).prop_map(|k| u64::MAX - k),
        any::<u64>(),
    ]
    .boxed()
}

/// Mostly an ordinary duration, sometimes an extreme one: most scenarios then pass
/// validation with one or two extreme values in them, and get run.
fn duration_ns() -> BoxedStrategy<u64> {
    prop_oneof![
        14 => 1_000_000u64..5_000_000_000,
        1 => extreme_ns(),
    ]
    .boxed()
}

/// Signed durations, mostly ordinary, with a sign always written.
fn signed_text() -> BoxedStrategy<String> {
    (duration_ns(), any::<bool>())
        .prop_map(|(ns, negative)| {
            let ns = ns.min(i64::MAX as u64);
            if negative {
                format!("\"-{ns}ns\"")
            } else {
                format!("\"+{ns}ns\"")
            }
        })
        .boxed()
}

fn text(ns: u64) -> String {
    format!("\"{ns}ns\"")
}

fn dur() -> BoxedStrategy<String> {
    duration_ns().prop_map(text).boxed()
}

/// A short timing (a heartbeat, a keep-alive, a latency), sometimes an extreme one.
fn short_ns() -> BoxedStrategy<u64> {
    prop_oneof![
        14 => 1_000u64..40_000_000,
        1 => extreme_ns(),
    ]
    .boxed()
}

fn short() -> BoxedStrategy<String> {
    short_ns().prop_map(text).boxed()
}

fn algorithm() -> BoxedStrategy<String> {
    prop_oneof![
        Just("Raft()".to_string()),
        short().prop_map(|h| format!("Raft(heartbeat: {h})")),
        (
            short(),
            40_000_000u64..300_000_000,
            0u64..300_000_000,
            extreme_ns()
        )
            .prop_map(|(h, low, extra, wild)| {
                let high = if extra % 7 == 0 { wild } else { low + extra };
                format!(
                    "Raft(heartbeat: {h}, election_timeout: ({}, {}))",
                    text(low),
                    text(high)
                )
            }),
        short().prop_map(|h| format!("Bully(heartbeat: {h})")),
        short().prop_map(|a| format!("Ring(ack_timeout: {a})")),
        short().prop_map(|k| format!("Etcd(keepalive: {k})")),
        short().prop_map(|t| format!("ZooKeeper(tick: {t})")),
        short().prop_map(|r| format!("K8sLease(retry_period: {r})")),
    ]
    .boxed()
}

fn latency() -> BoxedStrategy<String> {
    prop_oneof![
        short().prop_map(|d| format!("Constant({d})")),
        (short_ns(), 0u64..50_000_000).prop_map(|(low, spread)| format!(
            "Uniform({}, {})",
            text(low),
            text(low.saturating_add(spread))
        )),
        (short(), short()).prop_map(|(m, n)| format!("Exponential(mean: {m}, min: {n})")),
    ]
    .boxed()
}

fn target() -> BoxedStrategy<&'static str> {
    prop_oneof![
        Just("Leader"),
        Just("Node(0)"),
        Just("Random"),
        Just("Follower")
    ]
    .boxed()
}

fn fault() -> BoxedStrategy<String> {
    let at = prop_oneof![
        Just(0u64),
        1u64..RUN_CAP_NS,
        1u64..RUN_CAP_NS,
        duration_ns()
    ]
    .prop_map(text);
    let action = prop_oneof![
        (target(), dur()).prop_map(|(t, h)| format!("do: Crash({t}), heal_after: {h}")),
        (target(), dur())
            .prop_map(|(t, h)| format!("do: Partition(Isolate({t})), heal_after: {h}")),
        (target(), -999_999i64..1_000_000, dur())
            .prop_map(|(t, p, h)| format!("do: ClockDrift({t}, {p}), heal_after: {h}")),
        (target(), dur()).prop_map(|(t, d)| format!("do: Pause({t}, {d})")),
        (target(), dur()).prop_map(|(t, d)| format!("do: Stall({t}, {d})")),
        (target(), signed_text()).prop_map(|(t, d)| format!("do: ClockJump({t}, {d})")),
        // Allowed one by one, three of these take a clock past its largest reading.
        Just(format!("do: ClockJump(Node(0), \"+{LIMIT_NS}ns\")")),
        Just("do: Restart(AllCrashed)".to_string()),
    ];
    (at, action)
        .prop_map(|(at, action)| format!("(at: {at}, {action})"))
        .boxed()
}

fn nemesis() -> BoxedStrategy<String> {
    let mean = prop_oneof![3 => short(), 1 => dur()];
    (mean, short_ns(), short_ns(), dur(), short(), any::<bool>())
        .prop_map(|(mean, low, high, jump, quiet, swarm)| {
            let (low, high) = (text(low.min(high)), text(low.max(high)));
            format!(
                "nemesis: (mean_interval: {mean}, fault_duration: ({low}, {high}), \
                 max_clock_jump: {jump}, start: \"0s\", quiet: {quiet}, swarm: {swarm}),"
            )
        })
        .boxed()
}

/// The parts of one generated scenario.
#[derive(Clone, Debug)]
struct Parts {
    seed: u64,
    duration: String,
    nodes: u64,
    algorithm: String,
    latency: String,
    offset: String,
    node_offset: String,
    write_every: String,
    startup_delay: String,
    faults: Vec<String>,
    nemesis: Option<String>,
}

fn parts() -> BoxedStrategy<Parts> {
    let nodes = prop_oneof![12 => 1u64..8, 1 => Just(10_000u64), 1 => Just(10_001u64)];
    (
        (
            any::<u64>(),
            prop_oneof![1 => dur(), 3 => (RUN_CAP_NS..2 * RUN_CAP_NS).prop_map(text)],
            nodes,
        ),
        (algorithm(), latency(), dur(), signed_text()),
        (
            prop_oneof![1 => dur(), 1 => short(), 2 => Just(text(100_000_000))],
            dur(),
            proptest::collection::vec(fault(), 0..5),
            proptest::option::weighted(0.3, nemesis()),
        ),
    )
        .prop_map(
            |(
                (seed, duration, nodes),
                (algorithm, latency, offset, node_offset),
                (write_every, startup_delay, faults, nemesis),
            )| Parts {
                seed,
                duration,
                nodes,
                algorithm,
                latency,
                offset,
                node_offset,
                write_every,
                startup_delay,
                faults,
                nemesis,
            },
        )
        .boxed()
}

fn source(p: &Parts) -> String {
    format!(
        "Scenario(\n    seed: {},\n    duration: {},\n    nodes: {},\n    algorithm: {},\n    \
         network: (latency: {}),\n    clocks: (offset: {}, nodes: [(node: 0, offset: {})]),\n    \
         workload: (write_every: {}),\n    objective: (startup_delay: {}),\n    faults: [\n        {}\n    ],\n    {}\n)\n",
        p.seed,
        p.duration,
        p.nodes,
        p.algorithm,
        p.latency,
        p.offset,
        p.node_offset,
        p.write_every,
        p.startup_delay,
        p.faults.join(",\n        "),
        p.nemesis.as_deref().unwrap_or(""),
    )
}

/// What `check` does, then (for an accepted scenario) a run bounded in events.
fn check_and_run(source: &str) -> Result<(), TestCaseError> {
    let scenario = match parse(source, ORIGIN) {
        Ok(scenario) => scenario,
        Err(error) => {
            prop_assert!(
                error.location.is_some(),
                "a rejection without a location: {}\n{}",
                error,
                source
            );
            prop_assert!(
                error.hint().is_some_and(|hint| !hint.trim().is_empty()),
                "a rejection without a hint: {}\n{}",
                error,
                source
            );
            return Ok(());
        }
    };
    if scenario.sim.members > 7 {
        return Ok(()); // validated only: a big cluster's run costs too much for a unit test
    }
    bounded_run(&scenario, source)
}

/// Runs `scenario` cut to [`RUN_CAP_NS`]; a run whose estimated work is small must reach its
/// end (a livelock at one instant would not).
fn bounded_run(scenario: &Scenario, source: &str) -> Result<(), TestCaseError> {
    let mut s = scenario.materialize(scenario.sim.seed);
    s.sim.duration_ns = s.sim.duration_ns.min(RUN_CAP_NS);
    let members = s.sim.members as u128;
    let work = expected_events(&s.algorithm, &s.sim) + s.sim.faults.len() as u128 * members * 8;
    let needed = work.saturating_mul(8).saturating_add(20_000);
    let must_finish = needed <= u128::from(LIVELOCK_BUDGET_EVENTS);
    let limit = if must_finish {
        LIVELOCK_BUDGET_EVENTS
    } else {
        BOUNDED_RUN_EVENTS
    };
    let options = RunOptions {
        max_events: Some(limit),
        ..RunOptions::default()
    };
    let report = run_with(&s.algorithm, s.sim.clone(), options).expect("within the default limits");
    let code = splitbrain::exit::of_outcome(&judge(&s.expect, &report));
    prop_assert!(code <= 3, "exit code {}", code);
    if must_finish {
        prop_assert!(
            report.events < limit,
            "{} events by {} ns of a {} ns run (estimated work {}): a livelock\n{}",
            report.events,
            report.end_ns,
            s.sim.duration_ns,
            work,
            source
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn extreme_scenarios_are_rejected_with_a_location_or_run_to_their_end(p in parts()) {
        check_and_run(&source(&p))?;
    }
}
