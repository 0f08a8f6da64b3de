//! The scale-out recipes in recipes/ are files users copy into their CI or cluster. Each is
//! parsed here, checked for consistency (the matrix lists every shard; completions,
//! parallelism and SHARDS agree; the scenario's path is where the volume is mounted), and its
//! commands are run locally as the scheduler would run them, for 2 shards over a small seed
//! range, then merged. A merge missing a shard must fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use yaml_rust2::{Yaml, YamlLoader};

const BIN: &str = env!("CARGO_BIN_EXE_splitbrain");
const SEED_RANGE: &str = "1..41";
const SHARDS: usize = 2;

fn load(path: &str) -> Vec<Yaml> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn text(y: &Yaml) -> &str {
    y.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {y:?}"))
}

/// A fresh folder holding `scenarios` (a link to the repository's), as a checkout would.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("splitbrain-recipes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    std::os::unix::fs::symlink(scenarios, dir.join("scenarios")).unwrap();
    dir
}

/// Runs `script` with `sh -c` in `dir`, `splitbrain` on the PATH, and `env` set.
fn sh(dir: &Path, script: &str, env: &[(&str, String)]) -> Output {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap()
}

fn ok(o: &Output, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The `run:` script of the step of `job` that calls `splitbrain WORD`.
fn step_running(doc: &Yaml, job: &str, word: &str) -> String {
    let steps = doc["jobs"][job]["steps"].as_vec().expect("steps");
    let wanted = format!("splitbrain {word}");
    let runs: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .filter(|r| r.contains(&wanted))
        .collect();
    assert_eq!(runs.len(), 1, "one step of {job} runs `{wanted}`");
    runs[0].to_string()
}

#[test]
fn the_github_actions_matrix_hunts_every_shard_and_merges_them() {
    let docs = load("recipes/github-actions-hunt.yml");
    let doc = &docs[0];
    let env = &doc["env"];
    let shards: usize = text(&env["SHARDS"]).parse().unwrap();
    let matrix: Vec<i64> = doc["jobs"]["hunt"]["strategy"]["matrix"]["shard"]
        .as_vec()
        .expect("a shard matrix")
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(
        matrix,
        (0..shards as i64).collect::<Vec<_>>(),
        "the matrix lists every shard"
    );
    assert_eq!(text(&doc["jobs"]["merge"]["needs"]), "hunt");
    assert_eq!(
        text(&doc["jobs"]["merge"]["if"]),
        "always()",
        "the merge judges even when a shard found a violation"
    );
    let hunt = step_running(doc, "hunt", "hunt");
    let merge = step_running(doc, "merge", "merge");

    let dir = scratch("github");
    let vars = |shards: usize| {
        vec![
            ("SCENARIO", text(&env["SCENARIO"]).to_string()),
            ("SEED_RANGE", SEED_RANGE.to_string()),
            ("SHARDS", shards.to_string()),
        ]
    };
    for shard in 0..SHARDS {
        let script = hunt.replace("${{ matrix.shard }}", &shard.to_string());
        assert!(!script.contains("${{"), "{script}");
        ok(&sh(&dir, &script, &vars(SHARDS)), "a shard");
        assert!(dir.join(format!("shard-{shard}.jsonl")).is_file());
    }
    let merged = sh(&dir, &merge, &vars(SHARDS));
    ok(&merged, "the merge");
    let summary = String::from_utf8_lossy(&merged.stdout);
    assert!(
        summary.contains("40 seeds of raft-nemesis, 0 failed"),
        "{summary}"
    );
    assert!(dir.join("hunt.xml").is_file());

    // A shard whose records never arrived fails the merge: the workflow cannot pass by mistake.
    std::fs::remove_file(dir.join("shard-1.jsonl")).unwrap();
    let short = sh(&dir, &merge, &vars(SHARDS));
    assert_eq!(short.status.code(), Some(2), "{short:?}");
    assert!(String::from_utf8_lossy(&short.stderr).contains("shards absent"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The container of the only Job named `name` in `docs`.
fn container<'a>(docs: &'a [Yaml], name: &str) -> (&'a Yaml, &'a Yaml) {
    let job = docs
        .iter()
        .find(|d| d["kind"].as_str() == Some("Job") && d["metadata"]["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("a Job named {name}"));
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_vec()
        .unwrap();
    assert_eq!(containers.len(), 1);
    (job, &containers[0])
}

/// The container's `sh -c` script, with every `$(NAME)` replaced as Kubernetes does from
/// `env` (its own values overridden by `overrides`).
fn k8s_script(container: &Yaml, overrides: &[(&str, String)]) -> String {
    let command: Vec<&str> = container["command"]
        .as_vec()
        .unwrap()
        .iter()
        .map(text)
        .collect();
    assert_eq!(command, ["sh", "-c"]);
    let mut script = text(&container["args"][0]).to_string();
    for (name, value) in overrides {
        script = script.replace(&format!("$({name})"), value);
    }
    assert!(!script.contains("$("), "every variable is set: {script}");
    script
}

fn env_of(container: &Yaml) -> Vec<(String, String)> {
    container["env"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|e| (text(&e["name"]).to_string(), text(&e["value"]).to_string()))
        .collect()
}

#[test]
fn the_kubernetes_indexed_job_hunts_every_index_and_the_merge_job_merges_them() {
    let docs = load("recipes/k8s-hunt-job.yaml");
    let (job, hunt) = container(&docs, "splitbrain-hunt");
    let spec = &job["spec"];
    assert_eq!(text(&spec["completionMode"]), "Indexed");
    let env = env_of(hunt);
    let var = |name: &str| env.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let shards: i64 = var("SHARDS").parse().unwrap();
    assert_eq!(spec["completions"].as_i64(), Some(shards));
    assert_eq!(spec["parallelism"].as_i64(), Some(shards));
    // The scenario is read where its ConfigMap is mounted.
    let mounts = hunt["volumeMounts"].as_vec().unwrap();
    let scenario_dir = mounts
        .iter()
        .find(|m| m["name"].as_str() == Some("scenario"))
        .map(|m| text(&m["mountPath"]).to_string())
        .unwrap();
    assert!(var("SCENARIO").starts_with(&format!("{scenario_dir}/")));

    let dir = scratch("k8s");
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario = repo.join("scenarios/raft-nemesis.ron");
    for index in 0..SHARDS {
        let script = k8s_script(
            hunt,
            &[
                ("SCENARIO", scenario.display().to_string()),
                ("SEED_RANGE", SEED_RANGE.to_string()),
                ("SHARDS", SHARDS.to_string()),
                ("RESULTS", results.display().to_string()),
                ("JOB_COMPLETION_INDEX", index.to_string()),
            ],
        );
        ok(&sh(&dir, &script, &[]), "an index");
        // A retried pod starts its shard afresh over the first attempt's file.
        if index == 0 {
            ok(&sh(&dir, &script, &[]), "a retried index");
        }
    }
    let merge_docs = load("recipes/k8s-hunt-merge.yaml");
    let (_, merge) = container(&merge_docs, "splitbrain-merge");
    let script = k8s_script(merge, &[("RESULTS", results.display().to_string())]);
    let merged = sh(&dir, &script, &[]);
    ok(&merged, "the merge");
    let summary = String::from_utf8_lossy(&merged.stdout);
    assert!(
        summary.contains("40 seeds of raft-nemesis, 0 failed"),
        "{summary}"
    );
    assert!(results.join("hunt.xml").is_file());
    std::fs::remove_file(results.join("shard-0.jsonl")).unwrap();
    assert_eq!(sh(&dir, &script, &[]).status.code(), Some(2));

    // A verdict ends the pod well (the merge reports it); a bad input fails it.
    let pod = |scenario: &Path, seeds: &str| {
        let script = k8s_script(
            hunt,
            &[
                ("SCENARIO", scenario.display().to_string()),
                ("SEED_RANGE", seeds.to_string()),
                ("SHARDS", "1".to_string()),
                ("RESULTS", results.display().to_string()),
                ("JOB_COMPLETION_INDEX", "0".to_string()),
            ],
        );
        sh(&dir, &script, &[]).status.code()
    };
    let broken = repo.join("scenarios/raft-broken-nemesis.ron");
    assert_eq!(
        pod(&broken, "23..=23"),
        Some(0),
        "seed 23 (swarm mode) breaks safety: exit 1, a verdict"
    );
    let records = std::fs::read_to_string(results.join("shard-0.jsonl")).unwrap();
    assert!(records.contains("\"failed_seeds\":1"), "{records}");
    assert_ne!(
        pod(&repo.join("no-such.ron"), "1..3"),
        Some(0),
        "exit 2 fails the pod"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
