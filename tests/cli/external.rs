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
    common::scenario_file(name, &text)
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
        ("bad_version", "protocol version 3"),
        (
            "bad_to",
            "`to` is 99, which is no node of this run (members are 0 to 2)",
        ),
        (
            "huge_to",
            "`to` must be a node id, an integer (members are 0 to 2), not `18446744073709551616`",
        ),
        ("bad_leader", "`leader` is 99, which is no node of this run"),
        ("bad_peer", "`peer` is 7, which is no node of this run"),
        ("no_step", "missing field `step`"),
        ("no_flush", "did not flush its stdout"),
        ("bad_name", "`pi ng` cannot be a message type"),
        ("no_hello", "not a `hello_ok` line"),
    ];
    // The runs wait on Python nodes (two of them on a 2 s deadline), not on the CPU: they
    // run six at a time, then are checked in order.
    let outputs: Vec<std::process::Output> = cases
        .chunks(6)
        .flat_map(|chunk| {
            std::thread::scope(|s| {
                let runs: Vec<_> = chunk
                    .iter()
                    .map(|(mode, _)| s.spawn(move || run(&scenario(mode, mode, ""), &[])))
                    .collect();
                runs.into_iter()
                    .map(|r| r.join().expect("the run's thread"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for ((mode, words), output) in cases.into_iter().zip(outputs) {
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
    assert!(clock.contains("in the reported run and"), "{clock}");
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
    let write = |name: &str, mode: &str| write_etcd_client(name, mode, "");
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

/// The fixture etcd client in `mode` against `Etcd(ttl: "5s"{cluster})`.
fn write_etcd_client(name: &str, mode: &str, cluster: &str) -> PathBuf {
    let path = scratch(name).join(format!("{name}.ron"));
    let text = format!(
        "Scenario(name: \"{name}\", duration: \"4s\", nodes: 3,\n    algorithm: ExternalClient(command: [\"python3\", \"tests/fixtures/external/etcd_client.py\", \"{mode}\"], service: Etcd(ttl: \"5s\"{cluster})),\n    expect: Safe)\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Issue 47: a node runs against a whole etcd cluster (it was refused); the members' own
/// traffic is counted but never a client's to send.
#[test]
fn a_node_is_a_client_of_a_three_member_etcd_cluster() {
    let output = run(
        &write_etcd_client("etcd-cluster-ok", "ok", ", members: 3"),
        &["--json"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = json(&output);
    let leaders = report["report"]["leaders"].as_array().expect("leaders");
    assert_eq!(leaders.len(), 1, "{leaders:?}");
    let kinds = report["report"]["messages"].to_string();
    assert!(kinds.contains("\"Raft\""), "the members replicate: {kinds}");
    let bad = run(
        &write_etcd_client("etcd-cluster-bad", "members_traffic", ", members: 3"),
        &[],
    );
    let err = stderr(&bad);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`Ready` is not a request a client sends"),
        "{err}"
    );
}

/// A scenario running the fixture node in `mode` with `stderr: Trace`, whose leader (node 0)
/// is asked for two membership changes.
fn conf_change_scenario(name: &str, mode: &str) -> PathBuf {
    let text = format!(
        r#"Scenario(
    name: "{name}",
    duration: "2s",
    nodes: 3,
    algorithm: External(command: ["python3", "tests/fixtures/external/node.py", "{mode}"], deadline: "2s", stderr: Trace),
    faults: [
        (at: "500ms", do: ConfChange(Leader, Remove(2))),
        (at: "700ms", do: ConfChange(Node(1), AddLearner(2))),
    ],
    expect: Safe,
)
"#
    );
    common::scenario_file(name, &text)
}

#[test]
fn a_conf_change_reaches_the_node_it_targets_with_its_operation_and_member() {
    let path = conf_change_scenario("conf-change", "logs");
    let trace = path.with_extension("jsonl");
    let output = run(
        &path,
        &["--trace", trace.to_str().unwrap(), "--check-determinism"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (node, what, logged) in [
        (0, "remove 2", "n0 type=conf_change op=remove node=2"),
        (
            1,
            "add_learner 2",
            "n1 type=conf_change op=add_learner node=2",
        ),
    ] {
        let at = lines
            .iter()
            .position(|l| l.contains(&format!("\"ev\":\"conf_change\",\"what\":\"{what}\"")))
            .unwrap_or_else(|| panic!("no conf_change {what} in the trace:\n{text}"));
        assert!(
            lines[at].contains(&format!("\"node\":{node}")),
            "{}",
            lines[at]
        );
        // The node's own log of the event it read, just before the event in the trace.
        assert!(
            lines[at - 1].contains(&format!("\"what\":\"{logged}\"")),
            "{}",
            lines[at - 1]
        );
    }
}

#[test]
fn a_version_1_node_answers_a_conf_change_with_nothing() {
    let output = run(&conf_change_scenario("conf-change-v1", "v1"), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
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

#[test]
fn a_hostile_name_gives_a_bounded_error_with_its_control_characters_escaped() {
    let output = run(&scenario("hostile", "hostile_type", ""), &[]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("was not declared in `hello_ok`"), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "no raw escape reaches the terminal: {err}"
    );
    assert!(err.contains("\\u{1b}[2J"), "it is shown escaped: {err}");
    assert!(err.len() < 4_000, "{} bytes: {err}", err.len());
}

/// The live processes whose command line contains `marker` (zombies have none).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

/// A scenario whose nodes run `command` (a JSON array of strings).
fn scenario_running(name: &str, command: &str, extra: &str) -> PathBuf {
    let text = format!(
        r#"Scenario(name: "{name}", duration: "3s", nodes: 3,
    algorithm: External(command: {command}, deadline: "2s"{extra}), expect: Safe)
"#
    );
    common::scenario_file(name, &text)
}

#[test]
#[cfg(target_os = "linux")]
fn a_node_started_through_a_shell_or_that_forks_leaves_no_process_behind() {
    let marker = format!("orphan-marker-{}", std::process::id());
    // `sh -c` without `exec`: the shell is the node's process, python its child; n1 hangs.
    let shell =
        format!(r#"["sh", "-c", "python3 tests/fixtures/external/node.py hang {marker}-sh"]"#);
    let hung = run(&scenario_running("orphan-sh", &shell, ""), &[]);
    assert!(
        stderr(&hung).contains("no answer within the deadline"),
        "{}",
        stderr(&hung)
    );
    // n1 starts a process that keeps its stdout open, then exits: said as it happened.
    let forks =
        format!(r#"["python3", "tests/fixtures/external/node.py", "fork_exit", "{marker}-fork"]"#);
    let exited = run(&scenario_running("orphan-fork", &forks, ""), &[]);
    let err = stderr(&exited);
    assert!(err.contains("it exited without answering"), "{err}");
    assert!(err.contains("exited with status 4"), "{err}");
    // A hunt of such nodes on two jobs, shrinking included: nothing left either.
    let wrapped = format!(
        r#"["sh", "-c", "python3 tests/fixtures/external/node.py fork_exit {marker}-hunt"]"#
    );
    let path = scenario_running("orphan-hunt", &wrapped, "");
    let out = path.with_file_name("out");
    let hunt = splitbrain([
        "hunt",
        path.to_str().unwrap(),
        "--seeds",
        "4",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_no_panic(&hunt);
    assert_eq!(hunt.status.code(), Some(1), "{}", stderr(&hunt));
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(processes_with(&marker), Vec::<String>::new(), "left behind");
}

#[test]
fn a_node_that_logs_much_for_one_event_is_not_blocked_by_its_stderr() {
    let path = scenario("flood", "stderr_flood", ", stderr: Trace");
    let trace = path.with_extension("jsonl");
    let output = run(&path, &["--trace", trace.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = std::fs::read_to_string(&trace).expect("the trace");
    assert!(text.contains("n1 flood 4095"), "every line is in the trace");
}

#[test]
fn a_stray_line_is_caught_at_once_and_the_same_way_on_every_run() {
    let path = scenario("stray", "stray", "");
    let errors: Vec<String> = (0..2).map(|_| stderr(&run(&path, &[]))).collect();
    assert!(
        errors[0].contains("the reply is for step "),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].contains("the node wrote a line out of turn"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[0], errors[1], "the same error on both runs");
    // A version-1 node keeps working without echoing steps.
    let v1 = run(&scenario("v1", "v1", ""), &[]);
    assert_eq!(v1.status.code(), Some(0), "{}", stderr(&v1));
}

#[test]
fn properties_compare_whole_values_accept_null_and_warn_of_a_name_never_observed() {
    let props =
        r#", properties: [Unique("vote"), AtMostOne("nothing"), NeverDecreases("never_seen")]"#;
    let output = run(&scenario("votes", "votes", props), &["--json"]);
    let err = stderr(&output);
    // [1, 0], [1, 1], [1, 2]: three values, not one observed three times.
    assert_eq!(output.status.code(), Some(0), "{err}");
    let doc = json(&output);
    assert!(
        doc["report"]["violations"].as_array().unwrap().is_empty(),
        "{doc}"
    );
    assert!(
        err.contains("warning: property `never_seen` was never tested"),
        "{err}"
    );
    assert!(!err.contains("`vote` was never tested"), "{err}");
    assert!(
        doc["warnings"].to_string().contains("never_seen"),
        "{}",
        doc["warnings"]
    );
    // A hunt says it once, over every seed, in its summary.
    let path = scenario("votes-hunt", "votes", props);
    let hunt = splitbrain(["hunt", path.to_str().unwrap(), "--seeds", "3", "--json"]);
    assert_eq!(hunt.status.code(), Some(0), "{}", stderr(&hunt));
    assert_eq!(
        json(&hunt)["summary"]["never_tested"],
        serde_json::json!(["never_seen"])
    );
    let text = splitbrain(["hunt", path.to_str().unwrap(), "--seeds", "3"]);
    assert!(
        stderr(&text).contains("warning: property `never_seen` was never tested"),
        "{}",
        stderr(&text)
    );
}

#[test]
fn check_determinism_catches_a_node_that_depends_on_its_process() {
    let path = scenario("det-hash", "hash_order", "");
    let output = from_repo_root_without_hash_seed(&path);
    let out = stdout(&output);
    assert!(out.contains("determinism: FAILED"), "{out}");
    assert!(out.contains("n2, step "), "{out}");
    assert!(out.contains("in the reported run and"), "{out}");
}

/// `run --check-determinism` with Python's string hashing randomised, as it is by default.
fn from_repo_root_without_hash_seed(path: &Path) -> std::process::Output {
    let output = std::process::Command::new(common::bin())
        .args(["run", path.to_str().unwrap(), "--check-determinism"])
        .current_dir(common::repo_root())
        .env_remove("PYTHONHASHSEED")
        .output()
        .expect("run splitbrain");
    assert_no_panic(&output);
    output
}
