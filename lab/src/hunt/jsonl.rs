//! The per-seed JSON Lines file of a hunt (`hunt --jsonl FILE`), the input of `merge`.
//!
//! Line 1 is `{"hunt": header}`: what the records belong to (scenario and its fingerprint,
//! the binary's version, the whole seed range and this file's shard of it). Then one
//! [`SeedRecord`] per line, in seed order. The last line is `{"end": trailer}`: how the hunt
//! ended and how many seeds it ran. A file without the trailer was cut short.
//!
//! The file is written as `FILE.partial`, flushed after every batch, and renamed to `FILE`
//! only once the trailer is written, so a file named `FILE` is always whole; a failed write
//! ends the hunt with exit 2, and dropping the unfinished writer removes the partial file.
//! An existing `FILE` (or a `FILE.partial` left by a killed hunt) is refused unless
//! `--force`; a `FILE.partial` a running hunt holds locked is refused even with `--force`.

use super::record::SeedRecord;
use super::seeds::SeedSpan;
use super::systematic::shards::SearchRecord;
use super::Ended;
use serde::{Deserialize, Serialize};
use splitbrain_reports::file::{self, io_message, FileError, OutputFile};
use splitbrain_scenario::{self as scenario, Scenario};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Why a hunt's JSON Lines file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JsonlError {
    /// The file could not be opened for reading.
    #[error("cannot read {}: {}", .path.display(), io_message(.source))]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// The file exists, and replacing it was not asked for (`--force`).
    #[error("--jsonl {}: the file exists\n  hint: pass --force to replace it, or name a new file (merge takes several)", .path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The file could not be created or moved into place.
    #[error(transparent)]
    File(#[from] FileError),
    /// Writing a line (or flushing) failed.
    #[error("cannot write to {}: {}", .path.display(), io_message(.source))]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
}

/// What a file's records belong to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct JsonlHeader {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file as given to `hunt`.
    pub file: String,
    /// A fingerprint of the validated scenario: files of one scenario agree on it.
    pub scenario_hash: String,
    /// The version of splitbrain that wrote the file.
    pub version: String,
    /// The seeds of the whole hunt (every shard together).
    pub range: SeedSpan,
    /// `I/N` when the file is one shard of `range`.
    pub shard: Option<String>,
    /// This file's seeds: `range`, or the shard's slice of it.
    pub seeds: SeedSpan,
    /// The search that ran (`plain`, `swarm`); absent from files written before it was said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}

impl JsonlHeader {
    /// The header of a hunt of `scenario` (loaded from `file`) over `seeds` of `range`.
    pub fn new(
        scenario: &Scenario,
        file: &Path,
        range: SeedSpan,
        shard: Option<String>,
        seeds: SeedSpan,
    ) -> Self {
        Self {
            scenario: scenario.name.clone(),
            file: file.display().to_string(),
            scenario_hash: fingerprint(&scenario::to_ron(scenario)),
            version: env!("CARGO_PKG_VERSION").to_string(),
            range,
            shard,
            seeds,
            search: None,
        }
    }
}

/// How the hunt that wrote a file ended.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct JsonlEnd {
    /// How it ended.
    pub ended: Ended,
    /// The signal that interrupted it (`SIGINT`, `SIGTERM`), if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Seeds it ran.
    pub seeds_run: u64,
    /// Seeds that failed.
    pub failed_seeds: u64,
    /// The last seed run, if any.
    pub last_seed: Option<u64>,
}

/// One line of a hunt's JSON Lines file.
#[derive(Debug)]
pub enum Line {
    /// The first line: what the records belong to.
    Header(JsonlHeader),
    /// One seed's record.
    Record(SeedRecord),
    /// The last line: how the hunt ended.
    End(JsonlEnd),
    /// A systematic search's one line: what it explored and found.
    Search(Box<SearchRecord>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
enum Tagged {
    #[serde(rename = "hunt")]
    Header(JsonlHeader),
    #[serde(rename = "end")]
    End(JsonlEnd),
    #[serde(rename = "systematic")]
    Search(Box<SearchRecord>),
}

/// Parses one line; the error is the JSON parser's message.
pub fn parse_line(text: &str) -> Result<Line, String> {
    if text.trim_start().starts_with("{\"seed\"") {
        return serde_json::from_str(text)
            .map(Line::Record)
            .map_err(|e| e.to_string());
    }
    match serde_json::from_str::<Tagged>(text) {
        Ok(Tagged::Header(h)) => Ok(Line::Header(h)),
        Ok(Tagged::End(e)) => Ok(Line::End(e)),
        Ok(Tagged::Search(r)) => Ok(Line::Search(r)),
        Err(_) => serde_json::from_str(text)
            .map(Line::Record)
            .map_err(|e| e.to_string()),
    }
}

/// Reads `path` line by line (streaming: memory does not grow with the file): each line's
/// number (from 1) and the line, or why it does not parse (the I/O or JSON error's message).
pub fn read_lines(
    path: &Path,
) -> Result<impl Iterator<Item = (usize, Result<Line, String>)> + use<>, JsonlError> {
    let file = std::fs::File::open(path).map_err(|source| JsonlError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = std::io::BufReader::new(file);
    Ok(reader.lines().enumerate().filter_map(|(index, line)| {
        let parsed = match line {
            Err(e) => Err(io_message(&e)),
            Ok(text) if text.trim().is_empty() => return None,
            Ok(text) => parse_line(&text),
        };
        Some((index + 1, parsed))
    }))
}

/// A hunt's JSON Lines file being written.
pub struct JsonlWriter {
    file: OutputFile,
    path: PathBuf,
}

impl JsonlWriter {
    /// Starts the file with its header. An existing regular file (or one a symbolic link
    /// leads to) is refused unless `force`; devices and pipes, such as `/dev/stdout`, are
    /// written through. Another hunt still writing the file is refused even with `force`.
    pub fn create(path: &Path, force: bool, header: &JsonlHeader) -> Result<Self, JsonlError> {
        let exists = file::existing_file(path).is_some();
        if exists && !force {
            return Err(JsonlError::Exists {
                path: path.to_path_buf(),
            });
        }
        let file = if force {
            OutputFile::create(path)
        } else {
            OutputFile::create_new(path)
        }?;
        let mut writer = Self {
            file,
            path: path.to_path_buf(),
        };
        writer.line(&serde_json::json!({ "hunt": header }))?;
        Ok(writer)
    }

    /// Appends one seed's record.
    pub fn record(&mut self, record: &SeedRecord) -> Result<(), JsonlError> {
        self.line(record)
    }

    /// Writes a systematic search's line (its one record).
    pub fn search(&mut self, record: &SearchRecord) -> Result<(), JsonlError> {
        self.line(&serde_json::json!({ "systematic": record }))
    }

    /// Pushes what is buffered to the (partial) file.
    pub fn flush(&mut self) -> Result<(), JsonlError> {
        self.file
            .writer()
            .flush()
            .map_err(|source| JsonlError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Writes the trailer, flushes, and moves the file into place.
    pub fn finish(mut self, end: &JsonlEnd) -> Result<(), JsonlError> {
        self.line(&serde_json::json!({ "end": end }))?;
        Ok(self.file.commit()?)
    }

    fn line(&mut self, value: &impl Serialize) -> Result<(), JsonlError> {
        let text = serde_json::to_string(value).expect("hunt records serialize");
        let out = self.file.writer();
        out.write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|source| JsonlError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

/// A stable 64-bit fingerprint of `text` (FNV-1a), in hex.
fn fingerprint(text: &str) -> String {
    format!("{:016x}", splitbrain_reports::file::fnv1a(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_line_parses_back() {
        let end = JsonlEnd {
            ended: Ended::TimeBudget,
            signal: None,
            seeds_run: 3,
            failed_seeds: 1,
            last_seed: Some(3),
        };
        let text = serde_json::json!({ "end": end }).to_string();
        assert!(matches!(parse_line(&text), Ok(Line::End(e)) if e == end));
        let record = r#"{"seed":4,"outcome":"matched","failures":[],"events":9,"coverage":{"split_votes":0,"dueling_candidates":0,"stale_leader_writes":0,"minority_elections":0,"leases_expired_while_leading":0,"failovers":0,"faults":0}}"#;
        assert!(matches!(parse_line(record), Ok(Line::Record(r)) if r.seed == 4));
        assert!(parse_line(r#"{"seed":4,"outc"#).is_err());
        assert!(parse_line(r#"{"other":1}"#).is_err());
    }

    #[test]
    fn fingerprints_differ_for_different_text() {
        assert_eq!(fingerprint("a"), fingerprint("a"));
        assert_ne!(fingerprint("a"), fingerprint("b"));
    }
}
