//! Shards of one systematic search, and `merge` of their files.
//!
//! `hunt --search systematic --shard I/N --jsonl FILE` runs the I-th of N slices of the search
//! ([`super::Search::shard`]: every N-th one-step schedule from the I-th, in the unsharded
//! order, and everything that extends it) and writes a JSON Lines file: the hunt's header
//! (search `systematic`, its seed as the seed range), one `{"systematic": record}` line
//! ([`SearchRecord`]: bound, coverage, how it ended, its first counterexample and reproducer)
//! and the end line. [`merge`] proves the files are every shard of one search and combines
//! them: the schedules of all shards (the step-free run, which each shard runs, counted once),
//! complete up to the fewest steps any shard completed, the counterexample with the fewest
//! steps (the lowest shard on a tie). Shards do not share the states they have seen, so
//! together they may explore a state more than once: their distinct states add up to an
//! upper bound.

use super::counterexample::Counterexample;
use super::{Bound, Coverage};
use crate::hunt::jsonl::{read_lines, JsonlHeader, Line};
use crate::hunt::merge::MergeError;
use crate::hunt::reproducer::Reproducer;
use crate::hunt::seeds::Shard;
use crate::hunt::Ended;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `search` a systematic search's file header names.
pub const SEARCH: &str = "systematic";

/// What a systematic search's file holds between its header and its end line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SearchRecord {
    /// The bound it explored to.
    pub bound: Bound,
    /// How it ended.
    pub ended: Ended,
    /// What it covered.
    pub coverage: Coverage,
    /// Its first failing schedule, if one failed.
    pub counterexample: Option<Counterexample>,
    /// The reproducers it wrote.
    pub reproducers: Vec<Reproducer>,
}

/// The shards of one search, combined.
#[derive(Debug)]
pub struct MergedSearch {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file the first header names (for replay commands).
    pub scenario_file: String,
    /// The seed searched.
    pub seed: u64,
    /// The bound every shard explored to.
    pub bound: Bound,
    /// How many shards the search was cut into.
    pub count: u64,
    /// Each whole shard's label and how it ended, by shard.
    pub ended: Vec<(String, Ended)>,
    /// Shards with no whole file (absent, or cut short), with why.
    pub missing: Vec<String>,
    /// What every whole shard covered together.
    pub coverage: MergedCoverage,
    /// The counterexample with the fewest steps, and its shard's label.
    pub counterexample: Option<(String, Counterexample)>,
    /// Every shard's reproducers.
    pub reproducers: Vec<Reproducer>,
}

/// What the whole shards of a search covered together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MergedCoverage {
    /// Schedules run (the step-free run once).
    pub schedules: u64,
    /// Distinct states each shard saw, added up: shards do not share what they have seen,
    /// so a state two shards reached counts twice.
    pub distinct_states_at_most: u64,
    /// Grid points pruned as seen, added up.
    pub pruned_points: u64,
    /// Of them, pruned as a renaming of a state explored (symmetry), added up.
    pub symmetric_prunes: u64,
    /// Schedules that failed.
    pub failing: u64,
    /// Every schedule of up to this many steps ran in some shard; `None` if a shard is
    /// missing or completed none.
    pub complete_to: Option<usize>,
}

/// One whole shard file, read.
struct ShardFile {
    path: PathBuf,
    header: JsonlHeader,
    shard: Shard,
    record: SearchRecord,
}

/// Whether `path` is a systematic search's file (its header says so). Files that cannot be
/// read are not: the seed hunts' merge reports why.
pub fn is_search_file(path: &Path) -> bool {
    let Ok(mut lines) = read_lines(path) else {
        return false;
    };
    matches!(lines.next(), Some((_, Ok(Line::Header(h)))) if h.search.as_deref() == Some(SEARCH))
}

/// Reads the shard files at `paths` and combines them. `Err`: a file that cannot be read, is
/// not a systematic search's, or belongs to another search (scenario, version, bound, shard
/// count), or a shard given twice.
pub fn merge(paths: &[PathBuf]) -> Result<MergedSearch, MergeError> {
    let mut whole: BTreeMap<u64, ShardFile> = BTreeMap::new();
    let mut cut = Vec::new();
    let mut count: Option<(u64, &Path)> = None;
    for path in paths {
        let (header, record) = read_shard(path)?;
        let shard = shard_of(path, &header)?;
        let (first_count, first_path) = *count.get_or_insert((shard.count, path));
        if first_count != shard.count {
            return Err(MergeError::Differ {
                a: first_path.to_path_buf(),
                b: path.clone(),
                what: "shard counts",
                first: first_count.to_string(),
                second: shard.count.to_string(),
            });
        }
        let Some(record) = record else {
            cut.push((shard.index, format!("{} was cut short", path.display())));
            continue;
        };
        let file = ShardFile {
            path: path.clone(),
            header,
            shard,
            record,
        };
        if let Some(first) = whole.values().next() {
            check_same_search(first, &file)?;
        }
        if let Some(other) = whole.insert(shard.index, file) {
            return Err(twice(&other.path, path, shard));
        }
    }
    let first = whole.values().next().ok_or(MergeError::NoFiles)?;
    let count = count.map_or(1, |(n, _)| n);
    let missing = missing_shards(count, &whole, cut);
    Ok(MergedSearch {
        scenario: first.header.scenario.clone(),
        scenario_file: first.header.file.clone(),
        seed: first.header.seeds.first,
        bound: first.record.bound.clone(),
        count,
        ended: whole
            .values()
            .map(|f| (f.shard.to_string(), f.record.ended))
            .collect(),
        coverage: combined(&whole, missing.is_empty()),
        counterexample: fewest_steps(&whole),
        reproducers: (whole.values())
            .flat_map(|f| f.record.reproducers.iter().cloned())
            .collect(),
        missing,
    })
}

/// The header and (for a whole file) the record of `path`.
fn read_shard(path: &Path) -> Result<(JsonlHeader, Option<SearchRecord>), MergeError> {
    let not_ours = |line: usize, why: &str| MergeError::NotAHeader {
        path: path.to_path_buf(),
        line,
        why: why.to_string(),
    };
    let mut lines = read_lines(path)?;
    let header = match lines.next() {
        Some((_, Ok(Line::Header(h)))) if h.search.as_deref() == Some(SEARCH) => h,
        Some((line, Ok(Line::Header(_)))) => {
            return Err(not_ours(
                line,
                "a seed hunt's file, not a systematic search's",
            ))
        }
        Some((line, Ok(_))) => return Err(not_ours(line, "a record comes first")),
        Some((line, Err(e))) => return Err(not_ours(line, &e)),
        None => {
            return Err(MergeError::Empty {
                path: path.to_path_buf(),
            })
        }
    };
    let record = match (lines.next(), lines.next()) {
        (Some((_, Ok(Line::Search(record)))), Some((_, Ok(Line::End(_))))) => Some(*record),
        _ => None,
    };
    Ok((header, record))
}

/// The shard `header` names (`1/1` for a whole search).
fn shard_of(path: &Path, header: &JsonlHeader) -> Result<Shard, MergeError> {
    match &header.shard {
        None => Ok(Shard { index: 0, count: 1 }),
        Some(text) => Shard::parse(text).map_err(|e| MergeError::NotAHeader {
            path: path.to_path_buf(),
            line: 1,
            why: e.to_string(),
        }),
    }
}

/// Two shard files must come from one search: scenario, its version, splitbrain's, bound.
fn check_same_search(first: &ShardFile, other: &ShardFile) -> Result<(), MergeError> {
    let differ = |what: &'static str, x: String, y: String| MergeError::Differ {
        a: first.path.clone(),
        b: other.path.clone(),
        what,
        first: x,
        second: y,
    };
    let (a, b) = (&first.header, &other.header);
    let pairs = [
        ("scenarios", &a.scenario, &b.scenario),
        (
            "versions of the scenario file",
            &a.scenario_hash,
            &b.scenario_hash,
        ),
        ("versions of splitbrain", &a.version, &b.version),
    ];
    for (what, x, y) in pairs {
        if x != y {
            return Err(differ(what, x.clone(), y.clone()));
        }
    }
    if first.record.bound != other.record.bound {
        let show = |b: &Bound| b.to_string();
        return Err(differ(
            "bounds (a shard's flags)",
            show(&first.record.bound),
            show(&other.record.bound),
        ));
    }
    Ok(())
}

fn twice(a: &Path, b: &Path, shard: Shard) -> MergeError {
    MergeError::Differ {
        a: a.to_path_buf(),
        b: b.to_path_buf(),
        what: "runs of one shard (each shard once)",
        first: shard.to_string(),
        second: shard.to_string(),
    }
}

/// The shards of `0..count` with no whole file, each with why.
fn missing_shards(
    count: u64,
    whole: &BTreeMap<u64, ShardFile>,
    cut: Vec<(u64, String)>,
) -> Vec<String> {
    let mut cut: BTreeMap<u64, String> = cut.into_iter().collect();
    (0..count)
        .filter(|i| !whole.contains_key(i))
        .map(|i| {
            let why = cut.remove(&i).unwrap_or_else(|| "no file".to_string());
            format!("shard {i}/{count}: {why}")
        })
        .collect()
}

/// The whole shards' coverage together; complete only if no shard is missing.
fn combined(whole: &BTreeMap<u64, ShardFile>, all_there: bool) -> MergedCoverage {
    let mut merged = MergedCoverage::default();
    let mut complete_to = all_there.then_some(usize::MAX);
    for file in whole.values() {
        let c = &file.record.coverage;
        // Every shard runs the step-free run; count it once.
        merged.schedules += c.schedules.saturating_sub(u64::from(merged.schedules > 0));
        merged.distinct_states_at_most += c.distinct_states;
        merged.pruned_points += c.pruned_points;
        merged.symmetric_prunes += c.symmetric_prunes;
        merged.failing += c.failing;
        complete_to = match (complete_to, c.complete_to) {
            (Some(so_far), Some(k)) => Some(so_far.min(k)),
            _ => None,
        };
    }
    merged.complete_to = complete_to;
    merged
}

/// The counterexample with the fewest steps, the lowest shard's on a tie.
fn fewest_steps(whole: &BTreeMap<u64, ShardFile>) -> Option<(String, Counterexample)> {
    (whole.values())
        .filter_map(|f| Some((f.shard, f.record.counterexample.as_ref()?)))
        .min_by_key(|(shard, c)| (c.steps.len(), shard.index))
        .map(|(shard, c)| (shard.to_string(), c.clone()))
}
