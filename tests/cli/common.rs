//! Helpers shared by the integration tests: running the binary from the repository root,
//! reading what it printed, scratch folders and the files written to them, the scenario
//! library, and running scenario text in process.

#![allow(dead_code)] // Each test module uses a different part.

use splitbrain_sim::{JsonLinesWriter, RunReport};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root: every run starts there, as a user following the README would.
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The path of the binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_splitbrain")
}

/// Runs the binary from the repository root, with no input.
pub fn splitbrain<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    from_repo_root(Command::new(bin()).args(args))
}

/// Runs the binary with its address space limited to `limit_kb`, so that a regression that
/// allocates by the user's count fails fast instead of eating the machine.
pub fn splitbrain_limited(limit_kb: u64, args: &[&str]) -> Output {
    let limited = format!("ulimit -v {limit_kb}; exec \"$0\" \"$@\"");
    from_repo_root(
        Command::new("sh")
            .arg("-c")
            .arg(limited)
            .arg(bin())
            .args(args),
    )
}

/// Runs `command` to its end from the repository root, with no input.
fn from_repo_root(command: &mut Command) -> Output {
    command
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .expect("the command starts")
}

/// What the binary printed on standard output.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// What the binary printed on standard error.
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Standard output parsed as JSON; fails showing both streams when it is not.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Asserts that the binary did not panic, whatever its exit code.
#[track_caller]
pub fn assert_no_panic(output: &Output) {
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// A path of its own for `name` under the system temp dir, with nothing there yet. Every test
/// module runs in this one process, so the path names the calling module too: two modules
/// that pick one name do not share a folder.
#[track_caller]
pub fn scratch_path(name: &str) -> PathBuf {
    let module = Path::new(std::panic::Location::caller().file())
        .file_stem()
        .expect("a source file name")
        .to_string_lossy();
    let path = std::env::temp_dir().join(format!(
        "splitbrain-test-{}-{module}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&path);
    path
}

/// A fresh empty folder for `name` under the system temp dir, left there for inspection.
#[track_caller]
pub fn scratch(name: &str) -> PathBuf {
    let dir = scratch_path(name);
    std::fs::create_dir_all(&dir).expect("create the scratch folder");
    dir
}

/// `text` written as `name.ron` in a fresh scratch folder of `name` (see [`scratch`]).
#[track_caller]
pub fn scenario_file(name: &str, text: &str) -> PathBuf {
    let path = scratch(name).join(format!("{name}.ron"));
    std::fs::write(&path, text).expect("write the scenario");
    path
}

/// Every file of a folder, by name.
pub fn read_folder(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("read the folder")
        .map(|e| e.expect("a readable entry").path())
        .map(|p| {
            let name = p.file_name().expect("a file name").to_string_lossy();
            let bytes = std::fs::read(&p).expect("read the file");
            (name.into_owned(), bytes)
        })
        .collect()
}

/// The names of the regular files in `dir` (not folders), sorted: what a report writes, or
/// leaves half-written.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the folder")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            p.file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// Every scenario in the library, as paths relative to the repository root, sorted.
pub fn scenario_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join("scenarios"))
        .expect("the scenarios folder exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|x| x == "ron"))
        .map(|path| Path::new("scenarios").join(path.file_name().expect("a file name")))
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "the scenario library looks empty: {files:?}"
    );
    files
}

/// The text of the shipped scenario `scenarios/NAME`.
pub fn shipped_scenario(name: &str) -> String {
    std::fs::read_to_string(repo_root().join("scenarios").join(name))
        .expect("the shipped scenario exists")
}

/// The full JSON Lines trace of a scenario file, as `--trace` would write it.
pub fn trace_of(relative: &str) -> String {
    let scenario =
        splitbrain::scenario::load(&repo_root().join(relative)).unwrap_or_else(|e| panic!("{e}"));
    let mut writer = JsonLinesWriter::new(Vec::new());
    splitbrain_algorithms::run(&scenario.algorithm, scenario.sim.clone(), Some(&mut writer))
        .expect("within the default limits");
    String::from_utf8(writer.into_inner()).expect("the trace is UTF-8")
}

/// Runs generated scenario text in process.
pub fn run_text(text: &str) -> RunReport {
    let s =
        splitbrain::scenario::parse(text, "generated.ron").expect("generated scenario is valid");
    splitbrain_algorithms::run(&s.algorithm, s.sim, None).expect("within the default limits")
}

/// Faults drawn as `(at_ms, text)`, as scenario text in time order (the engine expects them
/// in order, and a heal indexes the records of faults already fired).
pub fn in_order(mut faults: Vec<(u64, String)>) -> Vec<String> {
    faults.sort_by_key(|f| f.0);
    faults.into_iter().map(|f| f.1).collect()
}

/// Rows of `NAME.csv` as `column -> cell` maps (no quoted commas in the columns read here).
pub fn csv_rows(files: &BTreeMap<String, Vec<u8>>, name: &str) -> Vec<BTreeMap<String, String>> {
    let text = String::from_utf8(files[&format!("{name}.csv")].clone()).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}
