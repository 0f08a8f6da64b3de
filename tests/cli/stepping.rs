//! `run --stop-at` (a run you can step through) and the `--trace` filters.

use crate::common::{json, scratch, splitbrain, stderr, stdout};
use serde_json::Value;

const SCENARIO: &str = "scenarios/raft-leader-crash.ron";

/// The whole run's trace, one parsed line per event.
fn full_trace(dir: &std::path::Path) -> (String, Vec<Value>) {
    let path = dir.join("full.jsonl");
    let out = splitbrain([
        "run",
        SCENARIO,
        "--quiet",
        "--trace",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (text, lines)
}

fn stopped_json(at: &str) -> Value {
    let out = splitbrain(["run", SCENARIO, "--stop-at", at, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)["stopped"].clone()
}

#[test]
fn the_snapshot_at_a_time_shows_the_leader_the_trace_says_leads_then() {
    let dir = scratch("leaders");
    let (_, trace) = full_trace(&dir);
    for (at, at_ns) in [("3s", 3_000_000_000u64), ("6s", 6_000_000_000)] {
        let stopped = stopped_json(at);
        assert_eq!(stopped["reached"], "stop");
        assert_eq!(stopped["at_ns"], at_ns);
        for node in stopped["nodes"].as_array().unwrap() {
            let id = node["node"].as_u64().unwrap();
            // The trace's view: the `leader` column of this node's last event by then.
            let last = trace
                .iter()
                .rfind(|e| e["node"] == id && e["t"].as_u64().unwrap() <= at_ns)
                .unwrap();
            let leads = node["role"] == "leader";
            assert_eq!(leads, last["leader"] == true, "n{id} at {at}");
            assert_eq!(node["term"], last["term"], "n{id} at {at}");
        }
    }
    // At 6 s the old leader n1 is down (crashed at 5 s) and n4 leads term 2.
    let stopped = stopped_json("6s");
    assert_eq!(stopped["nodes"][1]["status"], "crashed");
    assert_eq!(stopped["nodes"][4]["role"], "leader");
    assert_eq!(stopped["nodes"][4]["leads_term"], 2);
    let state = stopped["nodes"][4]["state"].as_array().unwrap();
    assert!(state
        .iter()
        .any(|f| f["name"] == "role" && f["value"] == "leader"));
}

#[test]
fn messages_and_timers_in_the_snapshot_come_due_in_the_trace_as_listed() {
    let dir = scratch("due");
    let (_, trace) = full_trace(&dir);
    let stopped = stopped_json("3.0042s");
    let in_flight = stopped["in_flight"].as_array().unwrap();
    assert!(
        !in_flight.is_empty(),
        "a leader's heartbeats are always under way"
    );
    for m in in_flight {
        let due = m["due_ns"].as_u64().unwrap();
        let arrives = trace.iter().any(|e| {
            e["t"] == due
                && e["node"] == m["to"]
                && e["from"] == m["from"]
                && e["sent"] == m["sent_ns"]
                && (e["what"] == m["message"] || m["message"] == "write")
        });
        assert!(arrives, "{m} never arrives in the trace");
    }
    for node in stopped["nodes"].as_array().unwrap() {
        for timer in node["timers"].as_array().unwrap() {
            let due = timer["due_ns"].as_u64().unwrap();
            let name = timer["name"].as_str().unwrap();
            // A timer fires at its due time unless re-armed first: the heartbeat and the
            // write tick, never re-armed early in a quiet run, show up exactly then.
            if name == "heartbeat" || name == "workload" {
                let fired = trace.iter().any(|e| {
                    e["t"] == due
                        && e["node"] == node["node"]
                        && (e["what"] == name || e["ev"] == "workload")
                });
                assert!(fired, "{name} of n{} due {due}", node["node"]);
            }
        }
    }
}

#[test]
fn the_trace_up_to_the_stop_is_a_prefix_of_the_whole_runs() {
    let dir = scratch("prefix");
    let (full, _) = full_trace(&dir);
    for at in ["5s", "#1234"] {
        let path = dir.join("stopped.jsonl");
        let out = splitbrain([
            "run",
            SCENARIO,
            "--stop-at",
            at,
            "--trace",
            path.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(full.starts_with(&text), "--stop-at {at}");
        assert!(text.len() < full.len());
        if at == "#1234" {
            assert!(text.lines().count() >= 1234);
            let printed = stdout(&out);
            let after = format!("after trace event #{} ", text.lines().count());
            assert!(printed.contains(&after), "{printed}");
        }
    }
}

#[test]
fn the_text_form_lists_every_node_its_timers_and_the_messages_in_flight() {
    let out = splitbrain(["run", SCENARIO, "--stop-at", "6s"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("seed 7\n"), "{text}");
    assert!(
        text.contains("stopped at 6s\nafter trace event #"),
        "{text}"
    );
    assert!(text.contains("n1: Follower, term 1, CRASHED"), "{text}");
    assert!(
        text.contains("n4: Leader, term 2, leads term 2, up"),
        "{text}"
    );
    assert!(text.contains("  timer heartbeat: due 6."), "{text}");
    assert!(text.contains("messages in flight: "), "{text}");
    assert!(text.contains("verdict: as expected"), "{text}");
}

#[test]
fn bad_stop_points_are_refused_with_exit_2() {
    for (at, says) in [
        ("soon", "invalid value 'soon' for '--stop-at"),
        ("#0", "count from #1"),
        ("#x", "not an event number"),
        ("30s", "past the run's end (20s)"),
    ] {
        let out = splitbrain(["run", SCENARIO, "--stop-at", at]);
        assert_eq!(out.status.code(), Some(2), "--stop-at {at}");
        let err = stderr(&out);
        assert!(err.contains(says), "--stop-at {at}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn trace_filters_keep_the_nodes_and_window_asked_for_and_run_wide_events() {
    let dir = scratch("filters");
    let (_, full) = full_trace(&dir);
    let path = dir.join("some.jsonl");
    let out = splitbrain([
        "run",
        SCENARIO,
        "--quiet",
        "--trace",
        path.to_str().unwrap(),
        "--trace-nodes",
        "0,2",
        "--trace-window",
        "4.9s..7s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let kept: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let in_window = |e: &Value| (4_900_000_000..=7_000_000_000).contains(&e["t"].as_u64().unwrap());
    let wanted = |e: &Value| {
        let node = &e["node"];
        in_window(e)
            && (node.is_null()
                || *node == 0
                || *node == 2
                || (*node == 5 && (e["from"] == 0 || e["from"] == 2)))
    };
    let expected: Vec<&Value> = full.iter().filter(|e| wanted(e)).collect();
    assert_eq!(kept.iter().collect::<Vec<_>>(), expected);
    assert!(
        kept.iter().any(|e| e["ev"] == "fault"),
        "run-wide events stay"
    );
    let out = splitbrain(["run", SCENARIO, "--trace", "x.jsonl", "--trace-nodes", "9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--trace-nodes 9"), "{}", stderr(&out));
    let out = splitbrain(["run", SCENARIO, "--trace-window", "1s..2s"]);
    assert_eq!(out.status.code(), Some(2), "needs --trace");
}

#[test]
fn a_coordination_service_shows_as_a_service_with_its_own_state() {
    let out = splitbrain(["run", "scenarios/etcd-holder-stall.ron", "--stop-at", "3s"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("\netcd: Service, term "), "{text}");
    assert!(text.contains("  state: revision="), "{text}");
    assert!(text.contains("  state: phase=Leading"), "{text}");
}
