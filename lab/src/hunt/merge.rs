//! Reading hunt JSON Lines files back for `merge`, and proving they are the whole hunt.
//!
//! Every file's header must name the same scenario (name and fingerprint), the same search
//! mode (when both say it) and the same version of splitbrain. Records are streamed into the
//! summary in seed order (files sorted by their first seed), so memory does not grow with the number of seeds; only seeds that
//! two files both declare are remembered, to compare their records. What comes out says
//! which seeds the headers promised and no record holds, which shards are absent, which
//! files were cut short, and any seed recorded twice with different outcomes.

use super::jsonl::{read_lines, JsonlEnd, JsonlError, JsonlHeader, Line};
use super::record::{SeedRecord, OUTCOMES};
use super::seeds::{self, SeedSpan, Shard};
use super::summary::{HuntSummary, SummaryBuilder};
use super::Ended;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Why files cannot be merged at all (what only weakens the merge is in [`Merged`]).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No file was given.
    #[error("no files to merge")]
    NoFiles,
    /// A file cannot be read.
    #[error(transparent)]
    Read(#[from] JsonlError),
    /// A file is empty.
    #[error("{}: the file is empty\n  hint: a hunt writes its --jsonl file when it ends; was it killed before? (look for FILE.partial)", .path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A file's first line is not a header.
    #[error("{}:{line}: not the header of a hunt record file ({why})\n  hint: pass files written by `splitbrain hunt --jsonl FILE` with this version of splitbrain", .path.display())]
    NotAHeader {
        /// The file.
        path: PathBuf,
        /// Its first non-empty line's number.
        line: usize,
        /// Why that line is not a header.
        why: String,
    },
    /// Two files come from different hunts: `what` (scenarios, versions of the scenario
    /// file, versions of splitbrain) differs, `first` and `second` as the headers say.
    #[error("{} and {} come from different {what} ({first:?} and {second:?})\n  hint: merge only the shards of one hunt: one scenario file, one splitbrain version", .a.display(), .b.display())]
    Differ {
        /// One file.
        a: PathBuf,
        /// The other.
        b: PathBuf,
        /// What differs.
        what: &'static str,
        /// What the first says.
        first: String,
        /// What the second says.
        second: String,
    },
    /// Two files come from hunts of different search modes (`--search`).
    #[error("{} and {} come from hunts of different search modes ({first:?} and {second:?})\n  hint: merge only the shards of one hunt: one --search for every shard", .a.display(), .b.display())]
    SearchDiffers {
        /// One file.
        a: PathBuf,
        /// The other.
        b: PathBuf,
        /// The first's search.
        first: String,
        /// The second's.
        second: String,
    },
}

/// How many seeds or ranges a message lists before it says "and N more".
const LISTED: usize = 10;
/// How many absent shards are looked at (a hunt may be cut into billions).
const SCANNED: u64 = 10_000;

/// One input file, once its header is read.
#[derive(Debug)]
struct Input {
    path: PathBuf,
    header: JsonlHeader,
}

/// The merged summary and what stands between it and a complete hunt.
pub struct Merged {
    /// The summary of every record, as one hunt over their seeds would give it.
    pub summary: HuntSummary,
    /// The scenario file the first header names (for replay commands).
    pub scenario_file: String,
    /// Every file's shard label, in the order merged.
    pub shards: Vec<Option<String>>,
    /// The seed ranges the headers promise, together.
    pub expected: Vec<SeedSpan>,
    /// Seeds promised that no record holds.
    pub missing: Vec<SeedSpan>,
    /// Why seeds are missing: absent shards, files cut short (each a sentence).
    pub gaps_explained: Vec<String>,
    /// Whether every missing seed lies after the first failure of a file that stopped there
    /// (`hunt` without `--keep-going`): then the failure itself is the verdict.
    pub only_after_first_failures: bool,
    /// Errors that make the merge untrustworthy whatever `--allow-partial` says: records
    /// that disagree, records outside their file's seeds, files that break the format.
    pub conflicts: Vec<String>,
}

/// Reads and checks `paths`. `Err` is a file that cannot be read or whose header is not one,
/// or files of different hunts.
pub fn merge(paths: &[PathBuf]) -> Result<Merged, MergeError> {
    let mut inputs = paths
        .iter()
        .map(|p| read_header(p))
        .collect::<Result<Vec<_>, _>>()?;
    check_headers_agree(&inputs)?;
    inputs.sort_by_key(|i| (i.header.seeds.first, i.header.seeds.last));
    let mut stream = Stream::new(&inputs);
    let mut cut = Vec::new();
    let mut first_failure_tails = Vec::new();
    for input in &inputs {
        let read = stream.read_file(input);
        match describe_end(input, &read) {
            FileEnd::Whole => {}
            FileEnd::StoppedAtFailure(tail) => first_failure_tails.extend(tail),
            FileEnd::Cut(sentence) => cut.push(sentence),
        }
    }
    let expected = union(inputs.iter().map(|i| i.header.range).collect());
    let missing: Vec<SeedSpan> = expected
        .iter()
        .flat_map(|span| seeds::gaps(span, &stream.covered))
        .collect();
    let mut gaps_explained = absent_shards(&inputs, &missing);
    gaps_explained.extend(cut);
    let summary = stream.builder.finish();
    let only_after_first_failures = summary.failed_seeds > 0
        && missing.iter().all(|m| {
            first_failure_tails
                .iter()
                .any(|t: &SeedSpan| t.first <= m.first && m.last <= t.last)
        });
    Ok(Merged {
        summary,
        scenario_file: inputs[0].header.file.clone(),
        shards: inputs.iter().map(|i| i.header.shard.clone()).collect(),
        expected,
        missing,
        gaps_explained,
        only_after_first_failures,
        conflicts: stream.conflicts,
    })
}

fn read_header(path: &Path) -> Result<Input, MergeError> {
    let not_a_header = |line: usize, why: &str| MergeError::NotAHeader {
        path: path.to_path_buf(),
        line,
        why: why.to_string(),
    };
    match read_lines(path)?.next() {
        Some((_, Ok(Line::Header(header)))) => Ok(Input {
            path: path.to_path_buf(),
            header,
        }),
        Some((line, Ok(_))) => Err(not_a_header(line, "a record comes first")),
        Some((line, Err(e))) => Err(not_a_header(line, &e)),
        None => Err(MergeError::Empty {
            path: path.to_path_buf(),
        }),
    }
}

fn check_headers_agree(inputs: &[Input]) -> Result<(), MergeError> {
    let Some(first) = inputs.first() else {
        return Err(MergeError::NoFiles);
    };
    for other in &inputs[1..] {
        let (a, b) = (&first.header, &other.header);
        let differ = |what: &'static str, x: &str, y: &str| MergeError::Differ {
            a: first.path.clone(),
            b: other.path.clone(),
            what,
            first: x.to_string(),
            second: y.to_string(),
        };
        if a.scenario != b.scenario {
            return Err(differ("scenarios", &a.scenario, &b.scenario));
        }
        // Before the fingerprint: `--search plain|swarm` changes the scenario it hashes.
        if let (Some(x), Some(y)) = (&a.search, &b.search)
            && x != y
        {
            return Err(MergeError::SearchDiffers {
                a: first.path.clone(),
                b: other.path.clone(),
                first: x.clone(),
                second: y.clone(),
            });
        }
        if a.scenario_hash != b.scenario_hash {
            return Err(differ(
                "versions of the scenario file",
                &a.scenario_hash,
                &b.scenario_hash,
            ));
        }
        if a.version != b.version {
            return Err(differ("versions of splitbrain", &a.version, &b.version));
        }
    }
    Ok(())
}

/// The records of every file, fed to the summary in seed order.
struct Stream {
    builder: SummaryBuilder,
    /// The seeds fed so far, as sorted disjoint spans.
    covered: Vec<SeedSpan>,
    /// Seeds two files both declare, and the first record seen of each of them.
    shared: Vec<SeedSpan>,
    seen_shared: BTreeMap<u64, SeedRecord>,
    conflicts: Vec<String>,
}

impl Stream {
    fn new(inputs: &[Input]) -> Self {
        let mut shared = Vec::new();
        for (i, a) in inputs.iter().enumerate() {
            for b in &inputs[i + 1..] {
                shared.extend(a.header.seeds.intersection(&b.header.seeds));
            }
        }
        Self {
            builder: SummaryBuilder::new(&inputs[0].header.scenario),
            covered: Vec::new(),
            shared: union(shared),
            seen_shared: BTreeMap::new(),
            conflicts: Vec::new(),
        }
    }

    /// Streams one file's records; returns what it held. Every line must parse, except
    /// the last of a file without an end line: a hunt killed while writing it.
    fn read_file(&mut self, input: &Input) -> FileRead {
        let shown = input.path.display().to_string();
        let mut read = FileRead::default();
        let lines = match read_lines(&input.path) {
            Ok(lines) => lines,
            Err(e) => {
                self.conflicts.push(format!("error: {e}"));
                return read;
            }
        };
        let mut torn: Option<(String, String)> = None;
        for (line, parsed) in lines.skip(1) {
            let at = format!("{shown}:{line}");
            if let Some((torn_at, why)) = torn.take() {
                self.conflicts.push(damaged(&torn_at, &why));
                return read;
            }
            if read.end.is_some() {
                self.conflicts
                    .push(format!("{at}: a line after the end line"));
                return read;
            }
            match parsed {
                Ok(Line::Record(record)) => {
                    if let Err(e) = self.check_record(&input.header, read.last_seed, &record) {
                        self.conflicts.push(format!("{at}: {e}"));
                        return read;
                    }
                    read.last_seed = Some(record.seed);
                    read.records += 1;
                    read.failed += u64::from(record.failed());
                    self.add(record, &shown);
                }
                Ok(Line::End(e)) => read.end = Some(e),
                Ok(Line::Header(_)) => {
                    self.conflicts
                        .push(format!("{at}: a second header: one file holds one hunt"));
                    return read;
                }
                Ok(Line::Search(_)) => {
                    self.conflicts.push(format!(
                        "{at}: a systematic search's record in a seed hunt's file"
                    ));
                    return read;
                }
                // Damaged, or cut off if nothing follows: known once the next line is read.
                Err(why) => torn = Some((at, why)),
            }
        }
        read.torn_last = torn.map(|(at, _)| at);
        if let Some(end) = &read.end {
            self.check_end(&shown, &input.header, end, &read);
        }
        read
    }

    /// Every count of an end line must agree with the records above it: an edited file
    /// (a failing record removed, a count changed) is refused, not merged.
    fn check_end(&mut self, shown: &str, header: &JsonlHeader, end: &JsonlEnd, read: &FileRead) {
        let mut disagree = |what: String| {
            self.conflicts
                .push(format!("{shown}: its end line says {what}"));
        };
        if end.seeds_run != read.records {
            disagree(format!(
                "{} seeds ran, but it holds {} records",
                end.seeds_run, read.records
            ));
        }
        if end.failed_seeds != read.failed {
            disagree(format!(
                "{} seeds failed, but {} of its records failed",
                end.failed_seeds, read.failed
            ));
        }
        if end.last_seed != read.last_seed {
            let seed = |s: Option<u64>| s.map_or("none".to_string(), |s| s.to_string());
            disagree(format!(
                "the last seed run was {}, but its last record is seed {}",
                seed(end.last_seed),
                seed(read.last_seed)
            ));
        }
        let declared = header.seeds.count();
        if end.ended == Ended::Complete && u128::from(read.records) != declared {
            disagree(format!(
                "its hunt ran to the end, but it holds {} of its {declared} seeds",
                read.records
            ));
        }
        if end.ended == Ended::FirstFailure && read.failed == 0 {
            disagree("its hunt stopped at a failure, but no record failed".to_string());
        }
    }

    /// A record must lie in its file's seeds, after the one before it, and its outcome must
    /// agree with its failures.
    fn check_record(
        &self,
        header: &JsonlHeader,
        previous: Option<u64>,
        record: &SeedRecord,
    ) -> Result<(), String> {
        self.check_place(header, previous, record.seed)?;
        let seed = record.seed;
        if !OUTCOMES.contains(&record.outcome.as_str()) {
            return Err(format!(
                "seed {seed} has an unknown outcome {:?} (one of {})",
                record.outcome,
                OUTCOMES.join(", ")
            ));
        }
        // A run whose failures the reference had too keeps its outcome and counts none.
        let failing = record.failed() || record.excused();
        if (record.outcome == "matched") == failing {
            return Err(format!(
                "seed {seed}: its outcome {:?} disagrees with its {} failures",
                record.outcome,
                record.failures.len()
            ));
        }
        Ok(())
    }

    fn check_place(
        &self,
        header: &JsonlHeader,
        previous: Option<u64>,
        seed: u64,
    ) -> Result<(), String> {
        if !header.seeds.contains(seed) {
            return Err(format!(
                "seed {seed} is outside the file's seeds {}",
                header.seeds
            ));
        }
        if previous.is_some_and(|p| seed <= p) {
            return Err(format!("seed {seed} is out of order or recorded twice"));
        }
        Ok(())
    }

    fn add(&mut self, record: SeedRecord, file: &str) {
        let seed = record.seed;
        let fed_already = self.covered.last().is_some_and(|c| seed <= c.last);
        if fed_already {
            match self.seen_shared.get(&seed) {
                Some(earlier) if *earlier == record => {}
                Some(earlier) => self.conflicts.push(format!(
                    "seed {seed} is recorded twice with different results: {} in an earlier file, {} in {file}",
                    describe(earlier),
                    describe(&record)
                )),
                None => self.conflicts.push(format!(
                    "seed {seed} is in {file} but missing from an earlier file that declares it"
                )),
            }
            return;
        }
        self.builder.add(&record);
        match self.covered.last_mut() {
            Some(last) if last.last.checked_add(1) == Some(seed) => last.last = seed,
            _ => self.covered.push(SeedSpan {
                first: seed,
                last: seed,
            }),
        }
        if self.shared.iter().any(|s| s.contains(seed)) {
            self.seen_shared.insert(seed, record);
        }
    }
}

fn describe(record: &SeedRecord) -> String {
    let keys: Vec<&str> = record.failures.iter().map(|f| f.key.as_str()).collect();
    if keys.is_empty() {
        record.outcome.clone()
    } else {
        format!("{}: {}", record.outcome, keys.join(", "))
    }
}

/// What one file held.
#[derive(Default)]
struct FileRead {
    records: u64,
    /// Records that failed.
    failed: u64,
    last_seed: Option<u64>,
    end: Option<JsonlEnd>,
    /// `FILE:LINE` of a last line that does not parse (a hunt killed while writing it).
    torn_last: Option<String>,
}

/// A line that does not parse and is not the last one: the file is damaged.
fn damaged(at: &str, why: &str) -> String {
    format!("{at}: not a record, header or end line ({why}); lines follow it, so the file is damaged, not cut off")
}

enum FileEnd {
    /// It ran every seed it declares.
    Whole,
    /// It stopped at its first failing batch; the seeds after its last are not run.
    StoppedAtFailure(Option<SeedSpan>),
    /// It was cut short: the sentence says how.
    Cut(String),
}

fn describe_end(input: &Input, file: &FileRead) -> FileEnd {
    let shown = input.path.display();
    let read = file.records;
    let Some(end) = &file.end else {
        return FileEnd::Cut(match &file.torn_last {
            Some(at) => format!(
                "{at}: its last line is cut off after {read} whole records and it has no end line: the hunt that wrote it was killed while writing"
            ),
            None if u128::from(read) == input.header.seeds.count() => format!(
                "{shown} holds a record of each of its {read} seeds but no end line: the hunt that wrote it was killed before writing it, or the line was removed"
            ),
            None => format!(
                "{shown} has no end line after {read} records: the hunt that wrote it was killed, or the file was cut"
            ),
        });
    };
    let ran = format!("after {read} of {} seeds", input.header.seeds.count());
    match end.ended {
        Ended::Complete => FileEnd::Whole,
        Ended::FirstFailure => {
            let tail = end
                .last_seed
                .and_then(|l| l.checked_add(1))
                .filter(|first| *first <= input.header.seeds.last)
                .map(|first| SeedSpan {
                    first,
                    last: input.header.seeds.last,
                });
            FileEnd::StoppedAtFailure(tail)
        }
        Ended::TimeBudget => FileEnd::Cut(format!("{shown}: its time budget ended the hunt {ran}")),
        Ended::Interrupted => FileEnd::Cut(format!(
            "{shown}: {} interrupted the hunt {ran}",
            end.signal.as_deref().unwrap_or("a signal")
        )),
    }
}

/// For each hunt range cut into N shards: the shards no file holds whose seeds are (at least
/// partly) `missing`; a shard whose seeds another file holds is not absent.
fn absent_shards(inputs: &[Input], missing: &[SeedSpan]) -> Vec<String> {
    let mut present: BTreeMap<(SeedSpan, u64), BTreeSet<u64>> = BTreeMap::new();
    for input in inputs {
        if let Some(shard) = input
            .header
            .shard
            .as_deref()
            .and_then(|s| Shard::parse(s).ok())
        {
            present
                .entry((input.header.range, shard.count))
                .or_default()
                .insert(shard.index);
        }
    }
    present
        .into_iter()
        .filter_map(|((range, count), have)| {
            let lacking = |index: &u64| {
                let slice = Shard {
                    index: *index,
                    count,
                }
                .slice(&range);
                slice.is_some_and(|slice| missing.iter().any(|m| m.intersection(&slice).is_some()))
            };
            // Looked for among the first SCANNED absent shards only (N may be huge).
            let lacking: Vec<u64> = (0..count)
                .filter(|i| !have.contains(i))
                .take(SCANNED as usize)
                .filter(lacking)
                .collect();
            let absent: Vec<String> = lacking
                .iter()
                .take(LISTED)
                .map(|i| format!("{i}/{count}"))
                .collect();
            let more = match lacking.len().saturating_sub(LISTED) {
                0 => String::new(),
                _ if lacking.len() as u64 >= SCANNED => " and more".to_string(),
                n => format!(" and {n} more"),
            };
            (!absent.is_empty()).then(|| {
                format!(
                    "shards absent from seeds {range}: {}{more}",
                    absent.join(", ")
                )
            })
        })
        .collect()
}

/// Sorted, disjoint spans covering exactly the seeds of `spans`.
fn union(mut spans: Vec<SeedSpan>) -> Vec<SeedSpan> {
    spans.sort();
    let mut out: Vec<SeedSpan> = Vec::new();
    for span in spans {
        match out.last_mut() {
            Some(last) if span.first <= last.last.saturating_add(1) => {
                last.last = last.last.max(span.last)
            }
            _ => out.push(span),
        }
    }
    out
}

/// The missing seeds for people.
pub fn list_missing(missing: &[SeedSpan]) -> String {
    let count: u128 = missing.iter().map(SeedSpan::count).sum();
    let noun = if count == 1 { "seed" } else { "seeds" };
    format!("{count} {noun} missing: {}", seeds::list(missing, LISTED))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(first: u64, last: u64) -> SeedSpan {
        SeedSpan { first, last }
    }

    #[test]
    fn union_joins_touching_and_overlapping_spans() {
        assert_eq!(
            union(vec![
                span(5, 9),
                span(1, 3),
                span(4, 4),
                span(20, 30),
                span(25, 26)
            ]),
            vec![span(1, 9), span(20, 30)]
        );
        assert_eq!(
            union(vec![span(0, u64::MAX), span(7, 8)]),
            vec![span(0, u64::MAX)]
        );
    }
}
