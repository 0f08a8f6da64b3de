//! `--max-memory` and `--max-node-in-flight` (issue 43, points 4 and 5): the bytes a run
//! holds are counted as they grow, per run, so a hunt's verdicts do not depend on `--jobs`,
//! the printed replay fails the same way, and a node that floods a paused peer is stopped
//! at the byte that passes the limit, with its name, the message type and its size. The node
//! is `tests/fixtures/external/big_sender.py`.

use crate::common;

use common::{assert_no_panic, splitbrain, splitbrain_limited, stderr};
use std::path::{Path, PathBuf};

/// A scenario where node 0 of two sends node 1, paused for the whole run, a `big` message
/// every 10 ms (`args` go to the node after its path); written to a scratch folder.
fn flood(name: &str, duration: &str, args: &str) -> PathBuf {
    let text = format!(
        r#"Scenario(
    name: "{name}",
    duration: "{duration}",
    nodes: 2,
    algorithm: External(command: ["python3", "tests/fixtures/external/big_sender.py", {args}]),
    faults: [(at: "0s", do: Pause(Node(1), "10s"))],
    expect: Safe,
)
"#
    );
    common::scenario_file(name, &text)
}

/// The seeds' records of a hunt's JSON Lines (the header and the end line left out), by seed.
fn seed_records(jsonl: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(jsonl).expect("the hunt's records");
    let mut records: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .filter(|record: &serde_json::Value| record.get("seed").is_some())
        .collect();
    records.sort_by_key(|record| record["seed"].as_u64());
    records
}

#[test]
fn a_hunt_under_max_memory_gives_the_same_records_for_any_jobs_and_its_replay_agrees() {
    // 64 KiB to 256 KiB a message (drawn from the seed), 20 messages: some seeds hold more
    // than 3 MiB, some less.
    let file = flood("hunt", "200ms", r#""65536", "seeded""#);
    let dir = file.parent().expect("a scratch folder").to_path_buf();
    let hunt = |jobs: &str| {
        let jsonl = dir.join(format!("jobs{jobs}.jsonl"));
        let output = splitbrain([
            "hunt",
            file.to_str().expect("a UTF-8 path"),
            "--seeds",
            "8",
            "--jobs",
            jobs,
            "--max-memory",
            "3MiB",
            "--jsonl",
            jsonl.to_str().expect("a UTF-8 path"),
            "--quiet",
        ]);
        assert_no_panic(&output);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        (seed_records(&jsonl), stderr(&output))
    };
    let (one, _) = hunt("1");
    let (two, err) = hunt("2");
    assert_eq!(one.len(), 8);
    assert_eq!(one, two, "the same records with --jobs 1 and --jobs 2");
    let outgrew: Vec<&serde_json::Value> = one
        .iter()
        .filter(|r| r["outcome"] == "outgrew_limits")
        .collect();
    assert!(
        !outgrew.is_empty() && outgrew.len() < one.len(),
        "some seeds hold more than 3 MiB, some less: {one:?}"
    );
    for record in &outgrew {
        let failure = &record["failures"][0];
        assert_eq!(failure["key"], "limit");
        assert_eq!(failure["nodes"], serde_json::json!([0]), "{failure}");
        let detail = failure["detail"].as_str().expect("a detail");
        assert!(
            detail.contains("outgrew its limit of 3 MiB held by the run"),
            "{detail}"
        );
        assert!(
            detail.contains("a message of type `big`") && detail.contains("from n0 to n1"),
            "{detail}"
        );
    }
    // The printed replay of the first seed that outgrew fails the same way, alone.
    let seed = outgrew[0]["seed"].as_u64().expect("a seed").to_string();
    let replay = format!("replay: splitbrain run {} --seed {seed} ", file.display());
    let replay_line = err
        .lines()
        .find(|line| line.trim_start().starts_with(&replay))
        .unwrap_or_else(|| panic!("a replay command for seed {seed}: {err}"));
    let words: Vec<&str> = replay_line.trim_start()["replay: splitbrain ".len()..]
        .split(' ')
        .collect();
    let output = splitbrain(&words);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let first_line = outgrew[0]["failures"][0]["detail"]
        .as_str()
        .and_then(|d| d.lines().next())
        .expect("a detail");
    assert!(
        stderr(&output).contains(first_line),
        "the replay says what the hunt said: {}",
        stderr(&output)
    );
}

#[test]
fn a_node_flooding_a_paused_peer_is_stopped_by_its_cap_with_a_clear_error() {
    // A MiB every 10 ms for 3 s: 300 MiB if nothing stopped it. The address space is capped
    // well below what the process would reach, so that a guard that does not hold fails
    // here by running out of memory rather than by eating the machine's.
    let file = flood("cap", "3s", r#""1048576""#);
    let path = file.to_str().expect("a UTF-8 path");
    let output = splitbrain_limited(
        1 << 20,
        &["run", path, "--max-node-in-flight", "16MiB", "--quiet"],
    );
    assert_no_panic(&output);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    for words in [
        "outgrew its limit of 16 MiB of messages in flight from one process",
        "at 160ms of 3s simulated",
        "n0 has 16.0 MiB of messages in flight",
        "the last: a message of type `big`, 1.0 MiB, to n1",
        "hint: if the run is meant to be this big, raise the limit (e.g. --max-node-in-flight 32MiB)",
        "messages to a paused node wait for it",
    ] {
        assert!(err.contains(words), "{words}: {err}");
    }
    // The whole run's limit names the sender too.
    let output = splitbrain_limited(1 << 20, &["run", path, "--max-memory", "8MiB", "--quiet"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("outgrew its limit of 8 MiB held by the run"),
        "{err}"
    );
    assert!(
        err.contains("what passed it: a message of type `big`, 1.0 MiB, from n0 to n1"),
        "{err}"
    );
}
