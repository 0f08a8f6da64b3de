//! A hunt in CI never passes by mistake: failed writes, cut or missing shards, conflicting
//! records, signals and time budgets each end in an exit code and outputs that say so.

use crate::common;

use common::{bin, json, repo_root, scratch, splitbrain, stderr, stdout};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};

const NEMESIS: &str = "scenarios/raft-nemesis.ron";
const BROKEN: &str = "scenarios/raft-broken-nemesis.ron";

/// Runs `hunt NEMESIS --seeds <seeds>` with `extra` arguments; the JSON Lines file goes to `jsonl`.
fn hunt_to(jsonl: &Path, seeds: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "hunt",
        NEMESIS,
        "--seeds",
        seeds,
        "--quiet",
        "--no-shrink",
        "--jsonl",
        jsonl.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    splitbrain(&args)
}

/// Writes shards `0..count` of `seeds` seeds (those in `which`) to `dir/s<I>.jsonl`.
fn shards(dir: &Path, seeds: &str, count: u32, which: &[u32]) -> Vec<PathBuf> {
    which
        .iter()
        .map(|i| {
            let path = dir.join(format!("s{i}.jsonl"));
            let shard = format!("{i}/{count}");
            let o = hunt_to(&path, seeds, &["--shard", &shard]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            path
        })
        .collect()
}

/// Asserts that `o` is exit 2 with `needle` in its message.
fn refused(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "{err}");
}

fn merge(files: &[PathBuf], extra: &[&str]) -> Output {
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    args.extend_from_slice(extra);
    splitbrain(&args)
}

/// Runs `script` in a private mount namespace (so a tiny filesystem can be mounted for the
/// test alone); `None` where this machine cannot make one.
fn in_mount_namespace(script: &str) -> Option<Output> {
    let can = Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !can {
        eprintln!("skipped: cannot mount a tmpfs in a private mount namespace here");
        return None;
    }
    Some(
        Command::new("unshare")
            .args(["-m", "sh", "-c", script])
            .env("SB", bin())
            .current_dir(repo_root())
            .output()
            .expect("unshare runs"),
    )
}

#[test]
fn a_per_seed_file_on_a_device_that_fails_writes_is_exit_2() {
    let o = hunt_to(Path::new("/dev/full"), "10", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no space left"), "{}", stderr(&o));
}

#[test]
fn a_per_seed_file_on_a_full_disk_is_exit_2_and_leaves_no_file() {
    // 8 KiB holds the header and some records, not 100 seeds' worth.
    let script = "d=$(mktemp -d) && mount -t tmpfs -o size=8k tmpfs \"$d\" && \
        \"$SB\" hunt scenarios/raft-nemesis.ron --seeds 100 --quiet --no-shrink --jsonl \"$d/seeds.jsonl\"; \
        code=$?; echo; echo \"files:$(ls -A \"$d\" | tr '\\n' ' ')\"; exit $code";
    let Some(o) = in_mount_namespace(script) else {
        return;
    };
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{}", stderr(&o));
    assert!(stderr(&o).contains("no space left"), "{}", stderr(&o));
    let files = out.lines().find_map(|l| l.strip_prefix("files:")).unwrap();
    assert_eq!(files.trim(), "", "nothing half-written is left: {files}");
}

#[test]
fn reproducers_and_junit_that_cannot_be_written_are_exit_2_not_a_verdict() {
    // The reproducer folder and the JUnit report live on a filesystem filled beforehand.
    let script = "d=$(mktemp -d) && mount -t tmpfs -o size=4k tmpfs \"$d\" && \
        dd if=/dev/zero of=\"$d/fill\" bs=1k count=8 2>/dev/null; \
        \"$SB\" hunt scenarios/raft-broken-nemesis.ron --seeds 100 --quiet --out \"$d/out\" --junit \"$d/hunt.xml\"; \
        code=$?; echo; echo \"files:$(ls -A \"$d\" | tr '\\n' ' ')\"; exit $code";
    let Some(o) = in_mount_namespace(script) else {
        return;
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}\n{err}", stdout(&o));
    assert!(err.contains("is lost"), "{err}");
    assert!(err.contains("hunt.xml"), "{err}");
    let files = stdout(&o);
    let files = files
        .lines()
        .find_map(|l| l.strip_prefix("files:"))
        .unwrap();
    assert!(!files.contains("hunt.xml"), "{files}");
}

#[test]
fn an_existing_per_seed_file_is_refused_unless_forced() {
    let dir = scratch("exists");
    let path = dir.join("seeds.jsonl");
    std::fs::write(&path, "keep me\n").unwrap();
    let o = hunt_to(&path, "5", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me\n");
    let o = hunt_to(&path, "5", &["--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        written.lines().count(),
        7,
        "header, 5 seeds, end: {written}"
    );
}

#[test]
fn merged_shards_that_are_all_there_pass() {
    let dir = scratch("whole");
    let files = shards(&dir, "30", 3, &[2, 0, 1]);
    let o = merge(&files, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["summary"]["seeds_run"], 30);
}

/// A record file is input: counts at the edge of a u64 (a hand-edited or foreign file) sum
/// without overflow instead of panicking (exit 101).
#[test]
fn merge_sums_counts_at_the_edge_of_a_u64_without_panicking() {
    let dir = scratch("huge-counts");
    let files = shards(&dir, "4", 1, &[0]);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let max = u64::MAX.to_string();
    let mut edited = String::new();
    for line in text.lines() {
        let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
        if value.get("seed").is_some() {
            value["events"] = serde_json::Value::from(u64::MAX);
            for (_, count) in value["coverage"].as_object_mut().unwrap() {
                *count = serde_json::Value::from(u64::MAX);
            }
        }
        edited.push_str(&serde_json::to_string(&value).unwrap());
        edited.push('\n');
    }
    assert!(edited.contains(&max));
    std::fs::write(&files[0], edited).unwrap();
    let o = merge(&files, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["summary"]["events"].as_u64(), Some(u64::MAX));
}

#[test]
fn a_missing_shard_is_exit_2_naming_it_and_its_seeds() {
    let dir = scratch("absent");
    let files = shards(&dir, "30", 3, &[0, 2]);
    let o = merge(&files, &[]);
    refused(&o, "1/3");
    let err = stderr(&o);
    assert!(err.contains("11..=20"), "{err}");
    assert!(
        o.stdout.is_empty(),
        "no summary that could pass for a result"
    );
}

#[test]
fn allow_partial_merges_what_is_there_and_says_so_everywhere() {
    let dir = scratch("partial");
    let files = shards(&dir, "30", 3, &[0, 2]);
    let junit = dir.join("hunt.xml");
    let o = merge(
        &files,
        &["--allow-partial", "--junit", junit.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("PARTIAL"), "{}", stdout(&o));
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("completeness"))
        .expect("a completeness case");
    assert!(case.children().any(|c| c.has_tag_name("skipped")), "{xml}");
    let o = merge(&files, &["--allow-partial", "--json"]);
    let doc = json(&o);
    assert_eq!(doc["complete"], false);
    assert_eq!(doc["missing"], serde_json::json!([[11, 20]]));
}

#[test]
fn a_record_deleted_from_the_middle_of_a_file_is_found() {
    let dir = scratch("deleted");
    let files = shards(&dir, "20", 1, &[0]);
    let lines: Vec<String> = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let kept: Vec<&str> = lines
        .iter()
        .filter(|l| !l.starts_with("{\"seed\":7,"))
        .map(String::as_str)
        .collect();
    assert_eq!(kept.len() + 1, lines.len());
    std::fs::write(&files[0], kept.join("\n") + "\n").unwrap();
    let o = merge(&files, &[]);
    refused(
        &o,
        "its end line says 20 seeds ran, but it holds 19 records",
    );
    // With the end line's counts edited to match, the gap is still found.
    let end = kept.len() - 1;
    let edited = kept[end].replace("\"seeds_run\":20", "\"seeds_run\":19");
    let ended_early = edited.replace("\"complete\"", "\"time_budget\"");
    let mut kept: Vec<String> = kept.iter().map(|l| l.to_string()).collect();
    kept[end] = ended_early;
    std::fs::write(&files[0], kept.join("\n") + "\n").unwrap();
    let o = merge(&files, &[]);
    refused(&o, "seed missing: 7");
}

#[test]
fn a_shard_cut_short_is_not_a_complete_one() {
    let dir = scratch("cut");
    let path = dir.join("cut.jsonl");
    // The budget ends the hunt after its first seed of a million.
    let o = hunt_to(&path, "1000000", &["--time-budget", "1ns", "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(0), "the verdict of the seeds run");
    let o = merge(std::slice::from_ref(&path), &[]);
    refused(&o, "time budget");
    let err = stderr(&o);
    assert!(err.contains("2..=1000000"), "{err}");
    // A file without its end line (a killed hunt, or a torn copy) is cut too.
    std::fs::remove_file(&path).unwrap();
    assert_eq!(hunt_to(&path, "40", &[]).status.code(), Some(0));
    let text_of = std::fs::read_to_string(&path).unwrap();
    let torn: Vec<&str> = text_of.lines().take(30).collect();
    std::fs::write(&path, torn.join("\n") + "\n{\"seed\":30,\"outc").unwrap();
    let o = merge(std::slice::from_ref(&path), &[]);
    refused(&o, "no end line");
}

#[test]
fn one_seed_recorded_twice_with_different_outcomes_is_exit_2_even_when_partial_is_allowed() {
    let dir = scratch("conflict");
    let a = dir.join("a.jsonl");
    assert_eq!(hunt_to(&a, "10", &[]).status.code(), Some(0));
    let b = dir.join("b.jsonl");
    let changed = std::fs::read_to_string(&a)
        .unwrap()
        .lines()
        .map(|l| {
            if l.starts_with("{\"seed\":4,") {
                l.replace("\"outcome\":\"matched\",\"failures\":[]", "\"outcome\":\"safety_mismatch\",\"failures\":[{\"key\":\"election_safety\",\"at_ns\":1,\"nodes\":[0,1],\"detail\":\"two leaders\"}]")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(changed.contains("safety_mismatch"));
    std::fs::write(&b, changed).unwrap();
    for extra in [&[][..], &["--allow-partial"][..]] {
        // Whichever comes first, the failure cannot vanish.
        for files in [[a.clone(), b.clone()], [b.clone(), a.clone()]] {
            let o = merge(&files, extra);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(err.contains("seed 4 is recorded twice"), "{err}");
        }
    }
    // The same file twice is the same records: merged once.
    let o = merge(&[a.clone(), a.clone()], &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["summary"]["seeds_run"], 10);
}

#[test]
fn files_of_different_scenarios_or_formats_do_not_merge() {
    let dir = scratch("mixed");
    let a = dir.join("a.jsonl");
    assert_eq!(hunt_to(&a, "3", &[]).status.code(), Some(0));
    let edited = dir.join("edited.ron");
    let source = std::fs::read_to_string(repo_root().join(NEMESIS)).unwrap();
    std::fs::write(&edited, source.replace("nodes: 5", "nodes: 7")).unwrap();
    let b = dir.join("b.jsonl");
    let o = splitbrain([
        "hunt",
        edited.to_str().unwrap(),
        "--seed-range",
        "4..=6",
        "--quiet",
        "--jsonl",
        b.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = merge(&[a.clone(), b], &[]);
    refused(&o, "different versions of the scenario file");
    let old = dir.join("old.jsonl");
    std::fs::write(
        &old,
        "{\"hunt\":{\"scenario\":\"raft-nemesis\",\"file\":\"x\",\"seeds\":[1,3],\"shard\":null}}\n",
    )
    .unwrap();
    let o = merge(&[old], &[]);
    refused(&o, "not the header");
}

#[test]
fn shards_that_stopped_at_their_first_failure_merge_to_that_failure() {
    let dir = scratch("first-failure");
    let paths: Vec<PathBuf> = (0..2)
        .map(|i| {
            let path = dir.join(format!("b{i}.jsonl"));
            let shard = format!("{i}/2");
            let o = splitbrain([
                "hunt",
                BROKEN,
                "--seeds",
                "400",
                "--shard",
                &shard,
                "--no-shrink",
                "--quiet",
                "--jsonl",
                path.to_str().unwrap(),
            ]);
            assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
            path
        })
        .collect();
    let o = merge(&paths, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("first failures"), "{}", stdout(&o));
}

#[test]
fn a_time_budget_is_stated_in_every_output() {
    let dir = scratch("budget");
    let jsonl = dir.join("b.jsonl");
    let junit = dir.join("b.xml");
    let o = splitbrain([
        "hunt",
        NEMESIS,
        "--seeds",
        "100000",
        "--time-budget",
        "1ns",
        "--jobs",
        "1",
        "--json",
        "--jsonl",
        jsonl.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let doc = json(&o);
    assert_eq!(doc["ended"], "time_budget");
    assert_eq!(doc["seeds_planned"], "100000");
    assert_eq!(doc["summary"]["seeds_run"], 1);
    let last = std::fs::read_to_string(&jsonl).unwrap();
    let last = last.lines().last().unwrap();
    assert!(last.contains("\"ended\":\"time_budget\""), "{last}");
    assert!(last.contains("\"seeds_run\":1"), "{last}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("1 of 100000 seeds ran"), "{xml}");
}

fn partial_of(jsonl: &Path) -> PathBuf {
    let mut name = jsonl.file_name().unwrap().to_os_string();
    name.push(".partial");
    jsonl.with_file_name(name)
}

/// Waits (at most a minute) until a hunt's first batch of 64 records is in `partial`;
/// returns its line count.
fn wait_for_first_batch(partial: &Path) -> usize {
    let mut lines = 0;
    for _ in 0..600 {
        lines = std::fs::read_to_string(partial).map_or(0, |t| t.lines().count());
        if lines > 64 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    lines
}

/// The arguments of a hunt of ten million seeds writing to `jsonl`, for a test to stop; its
/// time budget ends it should the test fail first.
fn endless_hunt<'a>(jsonl: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "hunt",
        NEMESIS,
        "--seeds",
        "10000000",
        "--time-budget",
        "5m",
    ];
    args.extend(["--no-shrink", "--jsonl", jsonl.to_str().unwrap()]);
    args.extend(extra);
    args
}

/// Starts a long hunt, waits until its first batch is written, sends `signal`; returns its
/// output.
fn interrupted_hunt(signal: &str, jsonl: &Path) -> (Option<i32>, String) {
    let (mut child, mut stdout) = spawn_reading(&endless_hunt(jsonl, &[]));
    let seen = read_until(&mut stdout, "seeds ");
    wait_for_first_batch(&partial_of(jsonl));
    let (code, rest) = signal_and_finish(signal, &mut child, stdout);
    (code, format!("{seen}{rest}"))
}

/// Starts the binary with `args`, its output read as it comes.
fn spawn_reading(args: &[&str]) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdout)
}

/// Reads lines up to and including the first that starts with `prefix`; returns them.
fn read_until(stdout: &mut BufReader<ChildStdout>, prefix: &str) -> String {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            panic!("ended before a line starting {prefix:?}:\n{seen}");
        }
        seen.push_str(&line);
        if line.starts_with(prefix) {
            return seen;
        }
    }
}

/// Sends `signal` (`INT`, `TERM`) to `child`; returns its exit code and the rest of its output.
fn signal_and_finish(
    signal: &str,
    child: &mut Child,
    mut stdout: BufReader<ChildStdout>,
) -> (Option<i32>, String) {
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    (child.wait().unwrap().code(), rest)
}

#[test]
fn an_interrupted_hunt_keeps_its_records_and_exits_128_plus_the_signal() {
    let dir = scratch("signals");
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let jsonl = dir.join(format!("{signal}.jsonl"));
        let (status, out) = interrupted_hunt(signal, &jsonl);
        assert_eq!(status, Some(code), "{out}");
        assert!(
            out.contains(&format!("interrupted by SIG{signal}")),
            "{out}"
        );
        let written = std::fs::read_to_string(&jsonl).unwrap();
        let last = written.lines().last().unwrap();
        assert!(last.contains("\"ended\":\"interrupted\""), "{last}");
        assert!(
            written.lines().count() > 65,
            "the first batch's records are kept"
        );
    }
}

#[test]
fn seed_ranges_reach_the_largest_seed_and_empty_ones_are_refused() {
    let o = splitbrain([
        "hunt",
        NEMESIS,
        "--seed-range",
        "18446744073709551613..=18446744073709551615",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["seeds"], serde_json::json!([u64::MAX - 2, u64::MAX]));
    assert_eq!(doc["summary"]["seeds_run"], 3);
    for args in [
        vec!["--seeds", "0"],
        vec!["--seeds", "10", "--shard", "1/18446744073709551615"],
        vec!["--seeds", "10", "--jobs", "0"],
        vec!["--seeds", "10", "--jobs", "8000"],
        vec!["--seeds", "10", "--out", "Cargo.toml"],
    ] {
        let mut all = vec!["hunt", NEMESIS];
        all.extend(args.iter());
        let o = splitbrain(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).contains("hint:"), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn a_hunt_killed_outright_leaves_its_finished_batches_in_the_partial_file() {
    let dir = scratch("killed");
    let jsonl = dir.join("k.jsonl");
    let partial = partial_of(&jsonl);
    let mut child = Command::new(bin())
        .args(endless_hunt(&jsonl, &["--quiet"]))
        .current_dir(repo_root())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Each finished batch of 64 seeds is flushed: wait for the first one.
    let lines = wait_for_first_batch(&partial);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        lines > 64,
        "a batch reached the file before the kill: {lines} lines"
    );
    assert!(!jsonl.exists(), "a cut file is never presented as whole");
    std::fs::rename(&partial, &jsonl).unwrap();
    let o = merge(&[jsonl], &[]);
    refused(&o, "no end line");
}

#[test]
fn a_signal_while_shrinking_stops_the_hunt_and_says_so() {
    let dir = scratch("shrink-signal");
    let args = [
        "hunt",
        BROKEN,
        "--seeds",
        "64",
        "--out",
        dir.to_str().unwrap(),
    ];
    let (mut child, mut stdout) = spawn_reading(&args);
    let seen = read_until(&mut stdout, "shrinking seed");
    let (code, rest) = signal_and_finish("TERM", &mut child, stdout);
    assert_eq!(code, Some(143), "{seen}{rest}");
    assert!(
        rest.contains("interrupted by SIGTERM while shrinking"),
        "{rest}"
    );
}

#[test]
fn outputs_that_would_overwrite_an_input_or_each_other_are_refused() {
    let dir = scratch("clash");
    let same = dir.join("same.out");
    let o = hunt_to(&same, "3", &["--junit", same.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--junit"), "{}", stderr(&o));
    let copy = dir.join("copy.ron");
    std::fs::copy(repo_root().join(NEMESIS), &copy).unwrap();
    let before = std::fs::read_to_string(&copy).unwrap();
    let o = splitbrain([
        "hunt",
        copy.to_str().unwrap(),
        "--seeds",
        "3",
        "--junit",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        before,
        "the scenario is untouched"
    );
    let a = dir.join("a.jsonl");
    assert_eq!(hunt_to(&a, "3", &[]).status.code(), Some(0));
    let o = merge(std::slice::from_ref(&a), &["--junit", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    // Another hunt writing the same file (its partial file is there) is not clobbered.
    let b = dir.join("b.jsonl");
    std::fs::write(dir.join("b.jsonl.partial"), "another hunt's records\n").unwrap();
    let o = hunt_to(&b, "3", &[]);
    refused(&o, "b.jsonl.partial was left by a run that was killed");
    assert_eq!(
        std::fs::read_to_string(dir.join("b.jsonl.partial")).unwrap(),
        "another hunt's records\n"
    );
}

#[test]
fn an_output_that_cannot_be_created_is_refused_before_the_hunt_runs() {
    let dir = scratch("no-folder");
    let junit = dir.join("missing/hunt.xml");
    let o = splitbrain([
        "hunt",
        NEMESIS,
        "--seeds",
        "100000",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    refused(&o, "does not exist");
    assert!(o.stdout.is_empty(), "nothing ran: {}", stdout(&o));
    let o = splitbrain([
        "hunt",
        NEMESIS,
        "--seeds",
        "3",
        "--junit",
        dir.to_str().unwrap(),
    ]);
    refused(&o, "it is a folder");
}

#[test]
fn a_cut_file_whose_seeds_other_files_hold_is_noted_not_blamed() {
    let dir = scratch("covered-cut");
    let whole = dir.join("whole.jsonl");
    assert_eq!(hunt_to(&whole, "10", &[]).status.code(), Some(0));
    let cut = dir.join("cut.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&whole)
        .unwrap()
        .lines()
        .take(5)
        .map(str::to_string)
        .collect();
    std::fs::write(&cut, lines.join("\n") + "\n").unwrap();
    let o = merge(&[cut, whole], &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["complete"], true);
    assert!(stderr(&o).contains("no end line"), "{}", stderr(&o));
    // A shard whose seeds another file holds is not named absent.
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    let run = |path: &Path, seeds: &str, shard: &str| {
        hunt_to(path, seeds, &["--shard", shard]).status.code()
    };
    assert_eq!(run(&a, "60", "0/3"), Some(0));
    assert_eq!(run(&b, "60", "2/3"), Some(0));
    let o = merge(&[a, b], &[]);
    refused(&o, "1/3");
    assert!(!stderr(&o).contains("0/3"), "{}", stderr(&o));
}

#[test]
fn the_json_summary_carries_the_exit_code_and_a_zero_budget_is_refused() {
    let o = splitbrain(["hunt", NEMESIS, "--seeds", "3", "--json"]);
    assert_eq!(json(&o)["exit_code"], 0);
    let o = splitbrain(["hunt", NEMESIS, "--seeds", "3", "--time-budget", "0s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("hint:"), "{}", stderr(&o));
}

#[test]
fn clusters_whose_memory_grows_with_their_square_are_bounded() {
    let dir = scratch("big");
    for (algorithm, nodes, code) in [
        ("Raft()", 10_000, 2),
        ("Bully()", 4_001, 2),
        ("Raft()", 4_000, 0),
        ("Ring()", 10_000, 0),
    ] {
        let file = dir.join("big.ron");
        std::fs::write(
            &file,
            format!("Scenario(duration: \"1s\", nodes: {nodes}, algorithm: {algorithm})"),
        )
        .unwrap();
        let o = splitbrain(["check", file.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{algorithm} {nodes}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn a_per_seed_file_behind_a_symbolic_link_is_refused_like_the_file_and_forced_through_it() {
    let dir = scratch("symlinked");
    let target = dir.join("kept.jsonl");
    let link = dir.join("link.jsonl");
    std::fs::write(&target, "keep me\n").unwrap();
    std::os::unix::fs::symlink("kept.jsonl", &link).unwrap();
    let o = hunt_to(&link, "5", &[]);
    refused(&o, "the file exists");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
    // Forced: the file the link names is replaced whole, and the link stays a link.
    let o = hunt_to(&link, "5", &["--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap().lines().count(), 7);
    // A link to a file not there yet: the file is made where the link points.
    let dangling = dir.join("dangling.jsonl");
    std::os::unix::fs::symlink(dir.join("made.jsonl"), &dangling).unwrap();
    assert_eq!(hunt_to(&dangling, "5", &[]).status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(dir.join("made.jsonl"))
            .unwrap()
            .lines()
            .count(),
        7
    );
    // /dev/stdout (a link to the process's open file) is still written through.
    let o = splitbrain([
        "hunt",
        NEMESIS,
        "--seeds",
        "5",
        "--quiet",
        "--no-shrink",
        "--jsonl",
        "/dev/stdout",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).lines().any(|l| l.starts_with("{\"hunt\":")),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_hunt_on_the_file_of_a_running_hunt_is_refused_even_with_force() {
    let dir = scratch("two-hunts");
    let jsonl = dir.join("h.jsonl");
    let partial = partial_of(&jsonl);
    let (mut first, stdout) = spawn_reading(&endless_hunt(&jsonl, &["--quiet"]));
    assert!(wait_for_first_batch(&partial) > 64, "the first hunt writes");
    for extra in [&[][..], &["--force"][..]] {
        let o = hunt_to(&jsonl, "5", extra);
        refused(&o, "another splitbrain run is writing it");
        assert!(
            partial.exists(),
            "{extra:?}: the first hunt's file is left alone"
        );
    }
    let (code, _) = signal_and_finish("INT", &mut first, stdout);
    assert_eq!(code, Some(130));
    // The first hunt's file is whole: its header, its records, its end line.
    let o = merge(std::slice::from_ref(&jsonl), &["--allow-partial"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Finished, it is replaced by --force as any file is.
    let o = hunt_to(&jsonl, "5", &["--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A partial file left by a killed hunt is not locked: refused without --force (it may be
    // wanted), taken over with it.
    std::fs::write(&partial, "left by a killed hunt\n").unwrap();
    std::fs::remove_file(&jsonl).unwrap();
    refused(&hunt_to(&jsonl, "5", &[]), "left by a run that was killed");
    assert_eq!(hunt_to(&jsonl, "5", &["--force"]).status.code(), Some(0));
    assert!(!partial.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lines of a whole hunt of `scenario` over `seeds` seeds written to `dir/NAME`.
fn hunted_lines(dir: &Path, name: &str, scenario: &str, seeds: &str) -> (PathBuf, Vec<String>) {
    let path = dir.join(name);
    let o = splitbrain([
        "hunt",
        scenario,
        "--seeds",
        seeds,
        "--quiet",
        "--no-shrink",
        "--jsonl",
        path.to_str().unwrap(),
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let lines = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (path, lines)
}

#[test]
fn a_damaged_line_before_the_end_fails_the_merge_naming_the_file_and_line() {
    let dir = scratch("damaged-line");
    let (path, mut lines) = hunted_lines(&dir, "d.jsonl", NEMESIS, "10");
    let (other, _) = hunted_lines(&dir, "other.jsonl", NEMESIS, "10");
    lines[4] = lines[4][..20].to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    // Even when another file holds every seed, and with --allow-partial.
    for files in [vec![path.clone()], vec![path.clone(), other]] {
        let o = merge(&files, &["--allow-partial"]);
        refused(&o, &format!("{}:5: not a record", path.display()));
        assert!(
            stderr(&o).contains("damaged, not cut off"),
            "{}",
            stderr(&o)
        );
    }
    // A line of another kind of garbage, anywhere before the end line.
    lines[4] = "not json".to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    refused(&merge(&[path], &[]), "d.jsonl:5: not a record");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_end_line_or_record_that_disagrees_with_the_records_fails_the_merge() {
    let dir = scratch("edited");
    let (path, lines) = hunted_lines(&dir, "b.jsonl", BROKEN, "64");
    let failing = lines
        .iter()
        .position(|l| l.starts_with("{\"seed\"") && !l.contains("\"failures\":[]"))
        .expect("the broken Raft fails some seed of 64 (seed 41)");
    let edit = |change: &dyn Fn(&mut Vec<String>)| {
        let mut edited = lines.clone();
        change(&mut edited);
        std::fs::write(&path, edited.join("\n") + "\n").unwrap();
        merge(std::slice::from_ref(&path), &[])
    };
    // A failing record made to pass: its end line still counts the failure.
    let o = edit(&|l| {
        let record: serde_json::Value = serde_json::from_str(&l[failing]).unwrap();
        l[failing] = serde_json::json!({
            "seed": record["seed"], "outcome": "matched", "failures": [],
            "events": record["events"], "coverage": record["coverage"],
        })
        .to_string();
    });
    refused(&o, "seeds failed, but");
    // Its failures removed, its outcome kept: the record contradicts itself.
    let o = edit(&|l| {
        let mut record: serde_json::Value = serde_json::from_str(&l[failing]).unwrap();
        record["failures"] = serde_json::json!([]);
        l[failing] = record.to_string();
    });
    refused(&o, "disagrees with its 0 failures");
    // Every count of the end line is checked.
    let end = lines.len() - 1;
    for (field, value) in [
        ("failed_seeds", serde_json::json!(0)),
        ("seeds_run", serde_json::json!(63)),
        ("last_seed", serde_json::json!(63)),
    ] {
        let o = edit(&|l| {
            let mut line: serde_json::Value = serde_json::from_str(&l[end]).unwrap();
            line["end"][field] = value.clone();
            l[end] = line.to_string();
        });
        refused(&o, "its end line says");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_without_its_end_line_is_described_as_it_is() {
    let dir = scratch("no-end");
    let (path, lines) = hunted_lines(&dir, "n.jsonl", NEMESIS, "10");
    let (other, _) = hunted_lines(&dir, "other.jsonl", NEMESIS, "10");
    // Every record, no end line: not "its seeds are all in other files".
    std::fs::write(&path, lines[..11].join("\n") + "\n").unwrap();
    let o = merge(std::slice::from_ref(&path), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("holds a record of each of its 10 seeds but no end line"),
        "{err}"
    );
    assert!(!err.contains("other files"), "{err}");
    // A last line cut off (a hunt killed while writing it), its seed in another file.
    std::fs::write(&path, lines[..6].join("\n") + "\n" + &lines[6][..15]).unwrap();
    let o = merge(&[path.clone(), other], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}:7: its last line is cut off after 5 whole records",
            path.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A signal stops the seeds under way, even before any seed has finished: a hunt of seeds
/// that would each take minutes exits 143 at once, saying no seed ran.
#[test]
fn a_signal_stops_long_seeds_under_way_even_before_one_has_finished() {
    let dir = scratch("long-seeds");
    let file = dir.join("long.ron");
    let text = r#"Scenario(duration: "100h", nodes: 5, algorithm: Raft(), nemesis: (mean_interval: "1h"))"#;
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let args = [
        "hunt",
        file,
        "--seeds",
        "4",
        "--jobs",
        "2",
        "--time-budget",
        "5m",
    ];
    let (mut child, mut stdout) = spawn_reading(&args);
    read_until(&mut stdout, "seeds");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (code, out) = signal_and_finish("TERM", &mut child, stdout);
    assert_eq!(code, Some(143), "{out}");
    assert!(out.contains("0 of 4 seeds ran"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
