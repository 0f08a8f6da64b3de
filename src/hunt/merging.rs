//! Reading hunt JSON Lines files back for `merge`, and proving they are the whole hunt.
//!
//! Every file's header must name the same scenario (name and fingerprint) and the same
//! version of splitbrain. Records are streamed into the summary in seed order (files sorted
//! by their first seed), so memory does not grow with the number of seeds; only seeds that
//! two files both declare are remembered, to compare their records. What comes out says
//! which seeds the headers promised and no record holds, which shards are absent, which
//! files were cut short, and any seed recorded twice with different outcomes.

use super::jsonl::{read_lines, JsonlEnd, JsonlHeader, Line};
use super::record::SeedRecord;
use super::seeds::{self, SeedSpan, Shard};
use super::summary::{HuntSummary, SummaryBuilder};
use super::Ended;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// How many seeds or ranges a message lists before it says "and N more".
const LISTED: usize = 10;
/// How many absent shards are looked at (a hunt may be cut into billions).
const SCANNED: u64 = 10_000;

/// One input file, once its header is read.
struct Input {
    path: PathBuf,
    header: JsonlHeader,
}

/// The merged summary and what stands between it and a complete hunt.
pub struct Merged {
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

/// Reads and checks `paths`. `Err` is a file that cannot be read or whose header is not one.
pub fn merge(paths: &[PathBuf]) -> Result<Merged, String> {
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
        let end = stream.read_file(input);
        match describe_end(input, end.as_ref(), &stream) {
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

fn read_header(path: &Path) -> Result<Input, String> {
    let not_a_header = |line: usize, why: &str| {
        format!(
            "error: {}:{line}: not the header of a hunt record file ({why})\n  hint: pass files written by `splitbrain hunt --jsonl FILE` with this version of splitbrain",
            path.display()
        )
    };
    match read_lines(path)?.next() {
        Some((_, Ok(Line::Header(header)))) => Ok(Input {
            path: path.to_path_buf(),
            header,
        }),
        Some((line, Ok(_))) => Err(not_a_header(line, "a record comes first")),
        Some((line, Err(e))) => Err(not_a_header(line, &e)),
        None => Err(format!(
            "error: {}: the file is empty\n  hint: a hunt writes its --jsonl file when it ends; was it killed before? (look for FILE.partial)",
            path.display()
        )),
    }
}

fn check_headers_agree(inputs: &[Input]) -> Result<(), String> {
    let Some(first) = inputs.first() else {
        return Err("error: no files to merge".to_string());
    };
    for other in &inputs[1..] {
        let (a, b) = (&first.header, &other.header);
        let differ = |what: &str, x: &str, y: &str| {
            format!(
                "error: {} and {} come from different {what} ({x:?} and {y:?})\n  hint: merge only the shards of one hunt: one scenario file, one splitbrain version",
                first.path.display(),
                other.path.display()
            )
        };
        if a.scenario != b.scenario {
            return Err(differ("scenarios", &a.scenario, &b.scenario));
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
    /// Records read per file path (to compare with its trailer's count).
    records_in: BTreeMap<PathBuf, u64>,
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
            records_in: BTreeMap::new(),
        }
    }

    /// Streams one file's records; returns its trailer, if it has one.
    fn read_file(&mut self, input: &Input) -> Option<JsonlEnd> {
        let shown = input.path.display().to_string();
        let lines = match read_lines(&input.path) {
            Ok(lines) => lines,
            Err(e) => {
                self.conflicts.push(e);
                return None;
            }
        };
        let mut end = None;
        let mut previous: Option<u64> = None;
        let mut count = 0;
        for (line, parsed) in lines.skip(1) {
            let at = format!("{shown}:{line}");
            if end.is_some() {
                self.conflicts
                    .push(format!("{at}: a line after the end line"));
                break;
            }
            match parsed {
                Ok(Line::Record(record)) => {
                    if let Err(e) = self.check_place(&input.header, previous, record.seed) {
                        self.conflicts.push(format!("{at}: {e}"));
                        break;
                    }
                    previous = Some(record.seed);
                    count += 1;
                    self.add(record, &shown);
                }
                Ok(Line::End(e)) => end = Some(e),
                Ok(Line::Header(_)) => {
                    self.conflicts
                        .push(format!("{at}: a second header: one file holds one hunt"));
                    break;
                }
                // A torn or damaged line: the file is cut here (said by its missing trailer).
                Err(_) => break,
            }
        }
        self.records_in.insert(input.path.clone(), count);
        end
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

enum FileEnd {
    /// It ran every seed it declares.
    Whole,
    /// It stopped at its first failing batch; the seeds after its last are not run.
    StoppedAtFailure(Option<SeedSpan>),
    /// It was cut short: the sentence says how.
    Cut(String),
}

fn describe_end(input: &Input, end: Option<&JsonlEnd>, stream: &Stream) -> FileEnd {
    let shown = input.path.display();
    let read = stream.records_in.get(&input.path).copied().unwrap_or(0);
    let Some(end) = end else {
        return FileEnd::Cut(format!(
            "{shown} has no end line after {read} records: the hunt that wrote it was killed, or the file was cut"
        ));
    };
    if end.seeds_run != read {
        return FileEnd::Cut(format!(
            "{shown} says its hunt ran {} seeds but holds {read} records",
            end.seeds_run
        ));
    }
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
