//! Fault times and lengths as ranges drawn per seed, end to end: `run` shows the values its
//! seed drew, the seed's values written out replay the same trace byte for byte, and `hunt`
//! writes reproducers with the values drawn, which replay.

use crate::common;

use common::{assert_no_panic, json, scratch, splitbrain, stderr, stdout};
use splitbrain::scenario;
use splitbrain_sim::{format_duration, FaultAction};

/// Unfenced Raft whose leader stalls mid-write for 1-3 s, some time between 5 s and 8 s.
const RANGED: &str = r#"Scenario(
    name: "ranged-stall",
    seed: 4,
    duration: "20s",
    nodes: 3,
    algorithm: Raft(election_timeout: ("150ms", "300ms"), heartbeat: "50ms"),
    workload: (write_every: "100ms"),
    resource: (fencing: false),
    faults: [
        (at: "5s..8s", do: Stall(Leader, "1s..3s")),
    ],
    expect: Safe,
)"#;

#[test]
fn run_shows_the_drawn_values_and_the_written_seed_replays_its_trace() {
    let dir = scratch("fault-ranges");
    let ranged = dir.join("ranged.ron");
    std::fs::write(&ranged, RANGED).unwrap();
    let original = dir.join("original.jsonl");
    let o = splitbrain([
        "run",
        ranged.to_str().unwrap(),
        "--seed",
        "4",
        "--trace",
        original.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    let drawn = scenario::parse(RANGED, "ranged.ron")
        .unwrap()
        .materialize(4);
    let fault = &drawn.sim.faults[0];
    let FaultAction::Stall(_, stall_ns) = fault.action else {
        panic!("a stall")
    };
    let out = stdout(&o);
    let row = out
        .lines()
        .find(|l| l.contains("stall n"))
        .unwrap_or_else(|| panic!("the fault table lists the stall:\n{out}"));
    assert!(
        row.trim_start().starts_with(&format_duration(fault.at_ns)),
        "{row}"
    );
    assert!(
        row.contains(&format!("for {}", format_duration(stall_ns))),
        "{row}"
    );

    // The seed's values written out (as hunt's reproducers are) replay the same trace.
    let written = dir.join("seed-4.ron");
    std::fs::write(&written, scenario::to_ron(&drawn)).unwrap();
    let replayed = dir.join("replayed.jsonl");
    let o = splitbrain([
        "run",
        written.to_str().unwrap(),
        "--seed",
        "4",
        "--trace",
        replayed.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    let a = std::fs::read(&original).unwrap();
    let b = std::fs::read(&replayed).unwrap();
    assert!(!a.is_empty());
    assert!(a == b, "the written seed replays the trace byte for byte");

    // Another seed draws other values.
    let other = scenario::parse(RANGED, "ranged.ron").unwrap();
    let faults: Vec<_> = (1..=10)
        .map(|seed| other.materialize(seed).sim.faults)
        .collect();
    assert!(
        faults.iter().any(|f| *f != faults[0]),
        "seeds draw different values"
    );
}

#[test]
fn hunt_writes_reproducers_with_the_values_drawn_and_they_replay() {
    let dir = scratch("fault-ranges-hunt");
    let ranged = dir.join("ranged.ron");
    std::fs::write(&ranged, RANGED).unwrap();
    let o = splitbrain([
        "hunt",
        ranged.to_str().unwrap(),
        "--seeds",
        "3",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json(&o);
    let reproducers = doc["reproducers"].as_array().unwrap();
    assert!(!reproducers.is_empty(), "{doc}");
    for r in reproducers {
        assert_eq!(r["replay_verified"], true, "{r}");
        let text = std::fs::read_to_string(r["file"].as_str().unwrap()).unwrap();
        assert!(
            !text.contains(".."),
            "a reproducer holds the values drawn:\n{text}"
        );
    }
}
