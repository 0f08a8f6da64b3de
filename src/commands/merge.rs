//! `splitbrain merge`: combine the per-seed records of hunt shards into the summary one
//! unsharded hunt over the same seeds would have printed.

use crate::cli::MergeArgs;
use crate::commands::hunt::{print_summary, JsonlHeader};
use crate::exit;
use crate::hunt::junit;
use crate::hunt::record::SeedRecord;
use crate::hunt::summary::HuntSummary;
use serde::Serialize;
use std::time::Duration;

#[derive(Serialize)]
struct JsonOutput<'a> {
    seeds: [u64; 2],
    shards: Vec<Option<String>>,
    summary: &'a HuntSummary,
}

/// Merges the files in `args`; returns the exit code of the combined result.
pub fn run(args: &MergeArgs) -> u8 {
    match merge(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            exit::BAD_INPUT
        }
    }
}

fn merge(args: &MergeArgs) -> Result<u8, String> {
    let mut headers: Vec<JsonlHeader> = Vec::new();
    let mut records: Vec<SeedRecord> = Vec::new();
    for path in &args.files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
        for (index, line) in text.lines().enumerate() {
            let at = || format!("{}:{}", path.display(), index + 1);
            if line.trim().is_empty() {
                continue;
            }
            if index == 0 {
                let value: serde_json::Value =
                    serde_json::from_str(line).map_err(|e| format!("{}: {e}", at()))?;
                let header: JsonlHeader = serde_json::from_value(value.get("hunt").cloned().unwrap_or_default())
                    .map_err(|_| format!("{}: not a hunt record file\n  hint: pass files written by `splitbrain hunt --jsonl FILE`", at()))?;
                headers.push(header);
                continue;
            }
            // A hunt killed mid-write can leave a torn last line: skip it, say so.
            match serde_json::from_str::<SeedRecord>(line) {
                Ok(record) => records.push(record),
                Err(_) if index + 1 == text.lines().count() => {
                    eprintln!("warning: {}: ignoring a torn last line", at())
                }
                Err(e) => return Err(format!("error: {}: {e}", at())),
            }
        }
    }
    let first = headers.first().ok_or("error: no records to merge")?;
    if let Some(other) = headers.iter().find(|h| h.scenario != first.scenario) {
        return Err(format!(
            "error: the files come from different scenarios ({:?} and {:?})",
            first.scenario, other.scenario
        ));
    }
    let summary = HuntSummary::from_records(&first.scenario, &records);
    if let Some(path) = &args.junit {
        let replay = format!("splitbrain run {} --seed {{seed}}", first.file);
        crate::output::write_file(path, &junit::render(&summary, &replay))?;
    }
    if args.json {
        let doc = JsonOutput {
            seeds: [
                summary.first_seed.unwrap_or(0),
                summary.last_seed.unwrap_or(0),
            ],
            shards: headers.iter().map(|h| h.shard.clone()).collect(),
            summary: &summary,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        crate::outln!(
            "merged {} files: seeds {}..={}",
            args.files.len(),
            summary.first_seed.unwrap_or(0),
            summary.last_seed.unwrap_or(0)
        );
        print_summary(&summary, "complete", Duration::ZERO, &[], false);
    }
    Ok(summary.exit_code)
}
