//! External nodes over the step protocol (`docs/protocol.md`), end to end through the binary:
//! every way a node can break the protocol is a located error (exit 2, never a hang), a
//! crash gives a node back what it persisted, `--check-determinism` names a node that is not
//! a function of its inputs, and a hunt replays identically whatever its jobs. The node is
//! `tests/fixtures/external/node.py` (Python's standard library only).

use crate::common;

use common::{assert_no_panic, json, scratch, splitbrain, stderr, stdout};
use std::path::{Path, PathBuf};

/// A scenario running the fixture node in `mode` (`extra` goes into `External(...)`), with
/// node 2 crashed for 300 ms at 1 s; written to a scratch folder of `name`.
fn scenario(name: &str, mode: &str, extra: &str) -> PathBuf {
    let text = format!(
        r#"Scenario(
    name: "{name}",
    duration: "3s",
    nodes: 3,
    algorithm: External(command: ["python3", "tests/fixtures/external/node.py", "{mode}"], deadline: "2s"{extra}),
    faults: [(at: "1s", do: Crash(Node(2)), heal_after: "300ms")],
    expect: Safe,
)
"#
    );
    let path = scratch(name).join(format!("{name}.ron"));
    std::fs::write(&path, text).expect("write the scenario");
    path
}

fn run(path: &Path, more: &[&str]) -> std::process::Output {
    let mut args = vec!["run", path.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(more);
    let output = splitbrain(args);
    assert_no_panic(&output);
    output
}

#[test]
fn a_correct_node_runs_and_its_message_types_are_counted() {
    let output = run(&scenario("ok", "ok", ""), &["--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    let text = report.to_string();
    assert!(text.contains("\"ping\""), "ping is counted by name: {text}");
    assert_eq!(report["transport"], "Datagram");
}

#[test]
fn every_way_of_breaking_the_protocol_is_a_located_error() {
    // (mode, words the error must contain). Each breaks at node 1's first tick (its second
    // step) unless it breaks at the start.
    let cases = [
        ("garbage", "the reply is not a reply object"),
        ("not_object", "the reply is not a reply object"),
        ("unknown_reply_field", "unknown field `bogus`"),
        ("unknown_effect", "unknown effect type `sned`"),
        ("missing_field", "missing field `after_ns`"),
        (
            "extra_field",
            "field `to` does not belong to this effect type",
        ),
        ("undeclared_type", "message type `pong` was not declared"),
        ("undeclared_timer", "timer `tock` was not declared"),
        ("body_not_object", "the body must be a JSON object"),
        ("bad_term", "expected u64"),
        ("exit", "exited with status 3"),
        ("close_stdout", "it closed its stdout"),
        ("hang", "no answer within the deadline of 2s"),
        ("two_lines", "more than one line"),
        ("bad_version", "protocol version 2"),
        ("bad_name", "`pi ng` cannot be a message type"),
        ("no_hello", "not a `hello_ok` line"),
    ];
    for (mode, words) in cases {
        let output = run(&scenario(mode, mode, ""), &[]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{mode}: {err}");
        assert!(err.contains(words), "{mode}: {err}");
        assert!(err.contains(" failed while handling "), "{mode}: {err}");
        let at_start = matches!(mode, "bad_version" | "bad_name" | "no_hello");
        if at_start {
            assert!(err.contains("starting its process"), "{mode}: {err}");
        } else {
            // The node, the step, the event and (where there is one) the offending line.
            assert!(err.contains("n1 failed while handling"), "{mode}: {err}");
            assert!(err.contains("step "), "{mode}: {err}");
            assert!(err.contains("the event was `{\"type\":"), "{mode}: {err}");
        }
        assert!(err.contains("docs/protocol.md"), "{mode}: the hint: {err}");
    }
}

#[test]
fn a_node_that_exits_has_its_last_stderr_lines_quoted() {
    let err = stderr(&run(&scenario("stderr", "exit", ""), &[]));
    assert!(
        err.contains("its stderr ended with:\n    giving up on purpose"),
        "{err}"
    );
}

#[test]
fn a_crash_gives_the_node_back_what_it_persisted_on_the_same_or_a_fresh_process() {
    // The node reports as its term 1 + the ticks it persisted: had the restart lost them,
    // its term would go back and `term_monotonic` would break.
    for extra in ["", ", fresh_process: true"] {
        let output = run(&scenario("durable", "ok", extra), &["--json"]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{extra}: {}",
            stderr(&output)
        );
        let report = json(&output);
        let violations = &report["report"]["violations"];
        assert_eq!(
            violations.as_array().map(Vec::len),
            Some(0),
            "{extra}: {report}"
        );
    }
    // The control: a node that ignores what `init` gives back reports a lower term after
    // its restart, and the check sees it.
    let output = run(&scenario("forgets", "ignores_durable", ""), &["--json"]);
    let violations = json(&output)["report"]["violations"].to_string();
    assert!(violations.contains("term_monotonic"), "{violations}");
}

#[test]
fn check_determinism_names_the_node_and_step_that_is_not_a_function_of_its_inputs() {
    let ok = run(&scenario("det-ok", "ok", ""), &["--check-determinism"]);
    assert!(stdout(&ok).contains("determinism: ok"), "{}", stdout(&ok));
    // Reads the OS clock at node 2's third tick.
    let clock = stdout(&run(
        &scenario("det-clock", "reads_clock", ""),
        &["--check-determinism"],
    ));
    assert!(clock.contains("determinism: FAILED"), "{clock}");
    assert!(clock.contains("n2, step "), "{clock}");
    assert!(clock.contains("in the first run and"), "{clock}");
    // Keeps a count of its `init`s across runs: the first run is on new processes, the
    // second on the same ones.
    let leaks = stdout(&run(
        &scenario("det-leak", "leaks_state", ""),
        &["--check-determinism"],
    ));
    assert!(
        leaks.contains("n0, step 1: told `{\"type\":\"init\""),
        "{leaks}"
    );
}

#[test]
fn a_program_that_cannot_be_found_is_refused_before_the_run_at_its_place() {
    let path = scratch("missing").join("missing.ron");
    std::fs::write(
        &path,
        "Scenario(duration: \"1s\", nodes: 3, algorithm: External(command: [\"no-such-program-x\"]))\n",
    )
    .unwrap();
    let output = splitbrain(["run", path.to_str().unwrap()]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("missing.ron:1:"), "located: {err}");
    assert!(
        err.contains("`no-such-program-x` is not on the PATH"),
        "{err}"
    );
}

#[test]
fn a_hunt_of_external_nodes_is_the_same_whatever_its_jobs_and_finds_a_node_that_exits() {
    let dir = scratch("hunt");
    let nemesis = r#"nemesis: (kinds: [Crash, CutLink, Pause], mean_interval: "300ms", fault_duration: ("10ms", "500ms"), start: "200ms", quiet: "1s"),"#;
    let write = |mode: &str| {
        let path = dir.join(format!("{mode}.ron"));
        let text = format!(
            "Scenario(name: \"hunt-{mode}\", duration: \"3s\", nodes: 3,\n    algorithm: External(command: [\"python3\", \"tests/fixtures/external/node.py\", \"{mode}\"]),\n    {nemesis}\n    expect: Safe)\n"
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let ok = write("ok");
    let hunt = |jobs: &str| {
        let o = splitbrain([
            "hunt",
            ok.to_str().unwrap(),
            "--seeds",
            "60",
            "--jobs",
            jobs,
            "--json",
            "--no-shrink",
        ]);
        assert_no_panic(&o);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        json(&o)["summary"].clone()
    };
    let one = hunt("1");
    assert_eq!(one, hunt("2"));
    assert_eq!(one["failed_seeds"], 0);
    // A node that exits at its first tick fails every seed under the key `refused`; the
    // hunt shrinks it and writes a reproducer that fails the same way.
    let exits = write("exit");
    let out = dir.join("out");
    let o = splitbrain([
        "hunt",
        exits.to_str().unwrap(),
        "--seeds",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("broke refused"), "{text}");
    let reproducer = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "ron"))
        .expect("a reproducer");
    let replay = splitbrain(["run", reproducer.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(2));
    assert!(
        stderr(&replay).contains("exited with status 3"),
        "{}",
        stderr(&replay)
    );
}

#[test]
fn a_node_is_a_client_of_the_modeled_etcd_in_its_json_form() {
    let write = |name: &str, mode: &str| {
        let path = scratch(name).join(format!("{name}.ron"));
        let text = format!(
            "Scenario(name: \"{name}\", duration: \"4s\", nodes: 3,\n    algorithm: ExternalClient(command: [\"python3\", \"tests/fixtures/external/etcd_client.py\", \"{mode}\"], service: Etcd(ttl: \"5s\")),\n    expect: Safe)\n"
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let output = run(&write("etcd-ok", "ok"), &["--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(
        report["transport"], "Stream",
        "a service's clients hold a connection"
    );
    // The first key created leads, with its create revision as term and token.
    let leaders = report["report"]["leaders"]
        .as_array()
        .expect("leaders")
        .clone();
    assert_eq!(leaders.len(), 1, "{leaders:?}");
    assert!(leaders[0]["term"].as_u64().unwrap() >= 2, "{leaders:?}");
    let kinds = report["report"]["messages"].to_string();
    for kind in [
        "\"LeaseGrant\"",
        "\"LeaseGrantResp\"",
        "\"Txn\"",
        "\"TxnResp\"",
        "\"KeepAlive\"",
    ] {
        assert!(kinds.contains(kind), "{kind} counted: {kinds}");
    }
    let bad = run(&write("etcd-bad", "bad_request"), &[]);
    let err = stderr(&bad);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("not a request the service knows"), "{err}");
    assert!(err.contains("protocol-services.md"), "{err}");
}

#[test]
fn a_nodes_stderr_goes_into_the_trace_at_its_step_when_asked() {
    let path = scenario("logs", "logs", ", stderr: Trace");
    let trace = path.with_extension("jsonl");
    let output = run(
        &path,
        &["--trace", trace.to_str().unwrap(), "--check-determinism"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("determinism: ok"),
        "{}",
        stdout(&output)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Each tick's line, at that node and the tick's time, just before the tick itself.
    let at = lines
        .iter()
        .position(|l| l.contains("\"ev\":\"log\",\"what\":\"n1 tick 1\""))
        .expect("n1's first tick logged");
    assert!(
        lines[at].contains("\"t\":100000000,\"node\":1"),
        "{}",
        lines[at]
    );
    assert!(lines[at + 1].contains("\"node\":1") && lines[at + 1].contains("\"ev\":\"timer\""));
    let logged = lines
        .iter()
        .filter(|l| l.contains("\"ev\":\"log\""))
        .count();
    assert!(logged > 50, "{logged} log lines");
}

#[test]
fn compare_refuses_an_external_algorithm_by_name_for_it_needs_its_command() {
    let out = scratch("compare-by-name").join("out");
    let o = splitbrain([
        "compare",
        "scenarios/raft-partition.ron",
        "--algorithms",
        "raft,external",
        "--seeds",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("\"external\" cannot run with its defaults: `command`"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
    let list = stdout(&splitbrain(["list"]));
    assert!(!list.contains("compare --algorithms external"), "{list}");
}

#[test]
fn properties_declared_in_the_scenario_check_the_nodes_observations() {
    let props = r#", properties: [AtMostOne("lock_held"), NeverDecreases("ticks")]"#;
    // One holder, ticks that only grow (a restart gives them back from disk): quiet.
    let ok = run(&scenario("props-ok", "ok", props), &["--json"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    // Two holders: the property named after the observation breaks.
    let two = run(&scenario("props-two", "double_holder", props), &["--json"]);
    let violations = json(&two)["report"]["violations"].to_string();
    assert!(violations.contains("lock_held"), "{violations}");
    assert!(
        violations.contains("n0 and n1 both hold lock_held"),
        "{violations}"
    );
    // A node that forgets its ticks at a restart: its `ticks` go back.
    let back = run(
        &scenario("props-back", "ignores_durable", props),
        &["--json"],
    );
    let violations = json(&back)["report"]["violations"].to_string();
    assert!(violations.contains("n2's ticks went from"), "{violations}");
    // A name no property can have is refused at its place in the file.
    let bad = splitbrain([
        "run",
        scenario("props-bad", "ok", r#", properties: [Unique("Grant")]"#)
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("`Grant` cannot name a property"),
        "{}",
        stderr(&bad)
    );
}
