//! What a hunt's reproducer is called, and how much shrinking it may cost: the same for the
//! `splitbrain hunt` command and for the harness. And writing one ([`Writer`]): the shrunk
//! scenario with a header saying where it came from, written atomically, then replayed to
//! check that it fails the same way.

use super::guided::MutantId;
use super::record::Failure;
use super::shrink::Shrunk;
use crate::shell::shell_word;
use serde::{Deserialize, Serialize};
use splitbrain_reports::file::{self, io_message, FileError};
use splitbrain_scenario::Scenario;
use splitbrain_sim::RunLimits;
use std::path::{Path, PathBuf};

/// A written, replay-checked reproducer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Reproducer {
    /// The failure key it breaks.
    pub key: String,
    /// The seed it was shrunk from (a mutant's root seed).
    pub seed: u64,
    /// The guided search's mutant (`m<index>:<seed>`) it was shrunk from, if not a seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutant: Option<String>,
    /// The file written.
    pub file: String,
    /// The command that replays it.
    pub replay: String,
    /// Faults before shrinking.
    pub faults_before: usize,
    /// Faults after.
    pub faults_after: usize,
    /// Nodes before shrinking.
    pub nodes_before: usize,
    /// Nodes after.
    pub nodes_after: usize,
    /// Runs shrinking spent.
    pub shrink_runs: u32,
    /// Replaying the written file failed the same way.
    pub replay_verified: bool,
}

/// Why a reproducer could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReproducerError {
    /// The folder could not be made.
    #[error("cannot create {}: {}", .path.display(), io_message(.source))]
    CreateFolder {
        /// The folder.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// The file could not be written.
    #[error(transparent)]
    Write(#[from] FileError),
}

/// Where and for which hunt reproducers are written.
pub struct Writer<'a> {
    /// The folder they go to (`--out`), made if missing.
    pub out: &'a Path,
    /// The hunted scenario file: named in each header, and never overwritten.
    pub hunted: &'a Path,
    /// The hunted scenario (its name starts each file's).
    pub original: &'a Scenario,
    /// The runtime limits the hunt's runs had: the replay check runs with them.
    pub limits: RunLimits,
    /// The command-line flags that give those limits, for replay commands.
    pub limit_flags: &'a [String],
}

impl Writer<'_> {
    /// Writes the reproducer of `key`, shrunk from `start` (seed `seed`'s scenario, or
    /// `mutant`'s) to `shrunk`, as `<scenario>[-m<index>]-seed<seed>-<key>.ron` (with
    /// `-shrunk` added if that is the hunted file itself), and replays it.
    pub fn write(
        &self,
        seed: u64,
        mutant: Option<MutantId>,
        start: &Scenario,
        shrunk: &Shrunk<Scenario, Failure>,
        key: &str,
    ) -> Result<Reproducer, ReproducerError> {
        let mut s = shrunk.candidate.clone();
        // A mutant's reproducer is named after it: `<scenario>-m<index>-seed<seed>-<key>`.
        let base = match mutant {
            Some(id) => format!("{}-m{}", self.original.name, id.index),
            None => self.original.name.clone(),
        };
        s.name = name(&base, seed, key);
        std::fs::create_dir_all(self.out).map_err(|source| ReproducerError::CreateFolder {
            path: self.out.to_path_buf(),
            source,
        })?;
        // The name is cut, never the seed and invariant: two reproducers never share a file.
        let stem = stem(&base, seed, key);
        let mut path = self.out.join(format!("{stem}.ron"));
        if file::same_file(&path, self.hunted) {
            // The hunted scenario itself carries that name: keep it, write beside it.
            path = self.out.join(format!("{stem}-shrunk.ron"));
        }
        let notes = super::shrink::fault_notes(&s);
        let text = format!(
            "{}{}",
            self.header(seed, mutant, start, shrunk, key),
            with_fault_notes(&splitbrain_scenario::to_ron(&s), &notes)
        );
        file::write_file(&path, &text)?;
        let mut replay = vec!["splitbrain".to_string(), "run".to_string()];
        replay.push(shell_word(&path.display().to_string()));
        replay.extend(self.limit_flags.iter().cloned());
        Ok(Reproducer {
            key: key.to_string(),
            seed,
            mutant: mutant.map(|id| id.to_string()),
            file: path.display().to_string(),
            replay: replay.join(" "),
            faults_before: start.sim.faults.len(),
            faults_after: s.sim.faults.len(),
            nodes_before: start.sim.members,
            nodes_after: s.sim.members,
            shrink_runs: shrunk.runs,
            replay_verified: replays(&path, key, self.limits),
        })
    }

    /// The comment lines a reproducer starts with: which hunt and run it came from, how much
    /// shrinking took off, what it breaks, and the programs it starts, if any (a reproducer
    /// attached to a bug report is then code, and its reader should know before running it).
    pub fn header(
        &self,
        seed: u64,
        mutant: Option<MutantId>,
        start: &Scenario,
        shrunk: &Shrunk<Scenario, Failure>,
        key: &str,
    ) -> String {
        let (search, run) = match mutant {
            Some(id) => (" --search guided", format!("mutant {id}")),
            None => ("", format!("seed {seed}")),
        };
        let mut header = format!(
            "// Shrunk by `splitbrain hunt {}{search}` from {run}: {} faults on {} nodes -> {} faults on {} nodes.\n// It breaks {key}: {}\n",
            self.hunted.display(),
            start.sim.faults.len(),
            start.sim.members,
            shrunk.candidate.sim.faults.len(),
            shrunk.candidate.sim.members,
            shrunk.outcome.detail.replace('\n', " ")
        );
        for program in shrunk.candidate.algorithm.programs_with_reference() {
            header += &format!(
                "// It starts this program for each node: {}. Run it only if you trust where it came from.\n",
                crate::shell::command_line(&program)
            );
        }
        header
    }

    /// The command that replays seed `seed` of the hunt with the same limits.
    pub fn seed_replay(&self, seed: u64) -> String {
        let mut words = vec![
            "splitbrain".to_string(),
            "run".to_string(),
            shell_word(&self.hunted.display().to_string()),
            "--seed".to_string(),
            seed.to_string(),
        ];
        words.extend(self.limit_flags.iter().cloned());
        words.join(" ")
    }

    /// How to replay a failing run whose reproducer could not be made: a seed by its number;
    /// a guided hunt's mutant only by running the same hunt again (its schedule comes from the
    /// corpus that hunt built, which the seed alone does not give).
    pub fn replay_hint(&self, seed: u64, mutant: bool) -> String {
        if mutant {
            "replay it by running the same hunt again (guided hunts are deterministic)".to_string()
        } else {
            format!(
                "replay it with `splitbrain run {} --seed {seed}`",
                self.hunted.display()
            )
        }
    }
}

/// `ron` (a scenario as [`splitbrain_scenario::to_ron`] writes it, one fault per line) with
/// `notes[i]` as a comment at the end of fault `i`'s line: the event each fault follows
/// ([`super::shrink::fault_notes`]). Unchanged unless it has exactly one line per note.
///
/// ```
/// use splitbrain_lab::hunt::reproducer::with_fault_notes;
/// let ron = "Scenario(\n    faults: [\n        (at: \"1s\", do: Crash(Leader)),\n    ],\n)\n";
/// let noted = with_fault_notes(ron, &[Some("1us after n2 handled Ping from n0".into())]);
/// assert!(noted.contains("Crash(Leader)), // 1us after n2 handled Ping from n0\n"));
/// ```
pub fn with_fault_notes(ron: &str, notes: &[Option<String>]) -> String {
    let Some(start) = ron
        .find("\n    faults: [\n")
        .map(|i| i + "\n    faults: [\n".len())
    else {
        return ron.to_string();
    };
    let lines: Vec<&str> = ron[start..]
        .split_inclusive('\n')
        .take(notes.len())
        .collect();
    let one_per_fault = lines.len() == notes.len()
        && lines
            .iter()
            .all(|l| l.starts_with("        (") && l.ends_with("),\n"));
    if !one_per_fault || notes.is_empty() {
        return ron.to_string();
    }
    let mut out = ron[..start].to_string();
    for (line, note) in lines.iter().zip(notes) {
        match note {
            // A note is one line: nothing in it may end the comment early.
            Some(note) => out += &format!("{} // {}\n", line.trim_end(), note.replace('\n', " ")),
            None => out += line,
        }
    }
    let rest = start + lines.iter().map(|l| l.len()).sum::<usize>();
    out + &ron[rest..]
}

/// Loads the written file and runs it with `limits`: does it fail with `key` again?
pub fn replays(path: &Path, key: &str, limits: RunLimits) -> bool {
    let Ok(mut s) = splitbrain_scenario::load(path) else {
        return false;
    };
    s.sim.limits = limits;
    let record = super::run_judged(&s);
    record.failures.iter().any(|f| f.key == key)
}

/// How many runs shrinking one failure may spend.
pub const SHRINK_BUDGET_RUNS: u32 = 600;

/// The name of the reproducer of `seed` of `scenario` failing under `key`:
/// `<scenario>-seed<seed>-<key>`, with the `:` of `missing:<invariant>` written `-`.
///
/// ```
/// use splitbrain_lab::hunt::reproducer::name;
/// assert_eq!(name("raft-nemesis", 42, "missing:fencing_safety"),
///            "raft-nemesis-seed42-missing-fencing_safety");
/// ```
pub fn name(scenario: &str, seed: u64, key: &str) -> String {
    format!("{scenario}-seed{seed}-{}", key.replace(':', "-"))
}

/// The file stem of that reproducer: the same, with the scenario's name and the key each cut
/// to what a file name holds ([`file_stem`]); the seed and the key are never cut, so two
/// reproducers never share a file.
pub fn stem(scenario: &str, seed: u64, key: &str) -> String {
    format!(
        "{}-seed{seed}-{}",
        file_stem(scenario),
        file_stem(&key.replace(':', "-"))
    )
}

/// A file name made of `name` (a scenario's name, which may hold anything): letters, digits,
/// `-`, `_` and inner `.` kept, every other character `_`, at most [`MAX_STEM_CHARS`], so
/// that a reproducer stays in its folder (no `/`, no `..`) and its name can be created.
pub fn file_stem(name: &str) -> String {
    let kept = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let stem: String = name
        .chars()
        .map(|c| if kept(c) { c } else { '_' })
        .take(MAX_STEM_CHARS)
        .collect();
    let stem = stem.trim_start_matches('.');
    if stem.is_empty() {
        "scenario".to_string()
    } else {
        stem.to_string()
    }
}

/// The most of a scenario's name a reproducer's file name keeps (file systems take 255 bytes:
/// the seed, the invariant and `-shrunk.ron` must fit after it).
pub const MAX_STEM_CHARS: usize = 150;

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        let text = r#"Scenario(name: "g", duration: "3s", nodes: 3, algorithm: Raft(),
            nemesis: (mean_interval: "1s", fault_duration: ("100ms", "500ms"), quiet: "1s"))"#;
        splitbrain_scenario::parse(text, "g.ron").expect("a valid scenario")
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("splitbrain-repro-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn shrunk(s: &Scenario) -> Shrunk<Scenario, Failure> {
        Shrunk {
            candidate: s.clone(),
            outcome: Failure {
                key: "election_safety".to_string(),
                at_ns: None,
                nodes: Vec::new(),
                detail: "two\nleaders".to_string(),
            },
            runs: 3,
        }
    }

    #[test]
    fn a_reproducer_is_named_after_its_run_and_says_where_it_came_from() {
        let original = scenario();
        let start = original.materialize(1);
        let out = scratch("named");
        let hunted = Path::new("g.ron");
        let writer = Writer {
            out: &out,
            hunted,
            original: &original,
            limits: RunLimits::default(),
            limit_flags: &["--max-events".to_string(), "9".to_string()],
        };
        let mutant = MutantId { index: 5, seed: 1 };
        let r = writer
            .write(1, Some(mutant), &start, &shrunk(&start), "election_safety")
            .expect("written");
        let path = out.join("g-m5-seed1-election_safety.ron");
        assert_eq!(r.file, path.display().to_string());
        assert_eq!(r.mutant.as_deref(), Some("m5:1"));
        assert_eq!(
            r.replay,
            format!("splitbrain run {} --max-events 9", path.display())
        );
        assert!(
            !r.replay_verified,
            "a correct Raft does not break election safety"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(
                "// Shrunk by `splitbrain hunt g.ron --search guided` from mutant m5:1: "
            ),
            "{text}"
        );
        assert!(
            text.contains("// It breaks election_safety: two leaders\n"),
            "{text}"
        );
        let back = splitbrain_scenario::load(&path).expect("it loads");
        assert_eq!(back.name, "g-m5-seed1-election_safety");
        assert_eq!(
            writer.seed_replay(7),
            "splitbrain run g.ron --seed 7 --max-events 9"
        );
    }

    #[test]
    fn a_reproducer_never_overwrites_the_hunted_file() {
        let original = scenario();
        let start = original.materialize(2);
        let out = scratch("beside");
        std::fs::create_dir_all(&out).unwrap();
        let hunted = out.join("g-seed2-election_safety.ron");
        std::fs::write(&hunted, "the hunted file").unwrap();
        let writer = Writer {
            out: &out,
            hunted: &hunted,
            original: &original,
            limits: RunLimits::default(),
            limit_flags: &[],
        };
        let r = writer
            .write(2, None, &start, &shrunk(&start), "election_safety")
            .expect("written");
        assert!(
            r.file.ends_with("g-seed2-election_safety-shrunk.ron"),
            "{}",
            r.file
        );
        assert_eq!(std::fs::read_to_string(&hunted).unwrap(), "the hunted file");
    }

    #[test]
    fn a_folder_that_cannot_be_made_is_an_error_naming_it() {
        let original = scenario();
        let start = original.materialize(1);
        let dir = scratch("blocked");
        std::fs::create_dir_all(&dir).unwrap();
        let blocker = dir.join("file");
        std::fs::write(&blocker, "").unwrap();
        let out = blocker.join("out");
        let writer = Writer {
            out: &out,
            hunted: Path::new("g.ron"),
            original: &original,
            limits: RunLimits::default(),
            limit_flags: &[],
        };
        let e = writer
            .write(1, None, &start, &shrunk(&start), "election_safety")
            .expect_err("refused");
        assert!(
            e.to_string()
                .starts_with(&format!("cannot create {}: ", out.display())),
            "{e}"
        );
    }
}
