//! End-to-end tests of the scenario loader: text in, `Scenario` or a located error out.

use super::*;
use splitbrain_algorithms::bully::BullyConfig;
use splitbrain_algorithms::raft::{RaftConfig, RaftTimeoutDraw, RaftTimerReset, RaftVariant};
use splitbrain_algorithms::ring::{RingConfig, RingInitiators, RingOrder, RingVariant};
use splitbrain_algorithms::AlgorithmConfig;
use splitbrain_sim::{
    ClockConfig, FaultAction, FaultSpec, Latency, LinkConfig, LinkOverride, NetworkConfig,
    NodeClock, PartitionShape, Target,
};
use splitbrain_sim::{Invariant, SimConfig};
use std::collections::BTreeSet;
use std::path::Path;

const ORIGIN: &str = "scenarios/x.ron";

/// The example from the format reference, with every feature in it.
const FULL_EXAMPLE: &str = r#"Scenario(
    name: "raft-leader-pause",
    seed: 7,
    duration: "60s",
    nodes: 5,
    algorithm: Raft(election_timeout: ("150ms", "300ms"), heartbeat: "50ms",
                    pre_vote: true, check_quorum: true, log_lengths: [3,3,2,2,1], variant: Correct,
                    timer_reset: OnAnyStepDown),
    network: (latency: Uniform("1ms", "10ms"), loss: 0.0, duplicate: 0.0,
              links: [(from: 0, to: 1, latency: Constant("50ms"), loss: 0.2, duplicate: 0.0)]),
    clocks: (drift_ppm: 100, offset: "0ms", nodes: [(node: 2, drift_ppm: 5000, offset: "1s")]),
    workload: (write_every: "100ms"),
    resource: (fencing: true),
    liveness: (bound: "5s"),
    faults: [
        (at: "10s", do: Crash(Leader), heal_after: "2s"),
        (at: "12s", do: Restart(AllCrashed)),
        (at: "20s", do: Stall(Leader, "20s")),
        (at: "25s", do: Pause(Node(1), "3s")),
        (at: "30s", do: Partition(Isolate(Leader)), heal_after: "5s"),
        (at: "31s", do: Partition(Groups([[0, 1], [2, 3, 4]]))),
        (at: "32s", do: Partition(MajorityMinority(Leader))),
        (at: "33s", do: Partition(OneWay(from: Leader, to: All))),
        (at: "34s", do: Partition(CutLink(Node(0), Node(1)))),
        (at: "35s", do: Partition(Bridge(Node(2)))),
        (at: "36s", do: Heal),
        (at: "40s", do: ClockJump(Node(2), "-3s")),
        (at: "41s", do: ClockDrift(Node(2), 50000)),    // ppm, signed
        (at: "45s", do: Loss(0.3), heal_after: "2s"),
        (at: "46s", do: Duplicate(0.1)),
        (at: "50s", do: Resign(Leader)),
        (at: "55s", after: (event: Sent("AppendEntries"), by: Leader, nth: 3, delay: "10ms"),
         do: Pause(Leader, "1s")),
    ],
    expect: Safe,
)
"#;

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

fn parsed(source: &str) -> Scenario {
    match parse(source, ORIGIN) {
        Ok(scenario) => scenario,
        Err(error) => panic!("expected a valid scenario, got:\n{error}\n--- source:\n{source}"),
    }
}

fn error_of(source: &str) -> ScenarioError {
    match parse(source, ORIGIN) {
        Ok(scenario) => panic!("expected an error, got {scenario:#?}\n--- source:\n{source}"),
        Err(error) => error,
    }
}

/// Removes the `@` marker from `marked` and returns the text and the marker's line:column.
fn unmark(marked: &str) -> (String, (usize, usize)) {
    let index = marked.find('@').expect("the source marks the error with @");
    let before = &marked[..index];
    let line = 1 + before.matches('\n').count();
    let column = 1 + before.rsplit('\n').next().unwrap_or("").chars().count();
    (marked.replacen('@', "", 1), (line, column))
}

/// Asserts that `marked` (with `@` before the offending text) fails with `message` right there.
fn assert_error_at(marked: &str, message: &str) {
    let (source, location) = unmark(marked);
    let error = error_of(&source);
    assert_eq!(error.message(), message, "\n--- source:\n{source}");
    assert_eq!(
        error.location,
        Some(location),
        "for `{message}`\n--- source:\n{source}"
    );
}

mod defaults;
mod docs;
mod fault_ranges;
mod fuzz;
mod generated;
mod library;
mod loading;
mod lowering;
mod membership;
mod round_trip;
mod syntax_errors;
mod transports;
mod triggers;
mod validation_errors;
