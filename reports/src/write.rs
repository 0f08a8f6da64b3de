//! Writing an output folder: the report in two formats, every chart, every table of numbers.

use crate::chart::{is_valid_name, Chart};
use crate::doc::{Block, ReportDoc, Section};
use crate::table::DataTable;
use crate::{html, markdown};
use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why an output folder could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A chart or table name that is not a file stem of `[a-z0-9_-]+`.
    #[error("{name:?} is not a file stem of [a-z0-9_-]+")]
    BadName { name: String },
    /// Two charts or tables would write the same files.
    #[error("two charts or tables are named {name:?}")]
    DuplicateName { name: String },
    /// A section shows a chart that was not given.
    #[error("the report shows chart {name:?}, which was not given")]
    UnknownChart { name: String },
    /// The output folder's path names something that is not a folder (a file, a device).
    #[error("{path} exists and is not a folder")]
    NotAFolder { path: PathBuf },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// The stems the report itself uses.
const RESERVED: [&str; 1] = ["report"];

/// Writes the output folder `dir` (created if missing):
///
/// - `report.md` and a self-contained `report.html` from `doc`;
/// - for each chart `NAME.svg`, `NAME.png`, and the numbers it plots as `NAME.csv` and
///   `NAME.json`;
/// - for each extra table in `data`, `NAME.csv` and `NAME.json`.
///
/// Charts that no section shows are appended in a last section, "Other charts". Every file is
/// written to a temporary name and renamed into place, so a reader never sees half a file;
/// nothing depends on the clock, so the same inputs give the same bytes. Files already in
/// `dir` under other names are left alone. Returns the paths written, sorted.
///
/// Every write is checked, and synced before the rename. When one fails, every file of this
/// report (written by this call, or left under its names by an earlier one) is removed
/// before the error is returned: the folder then holds no report, rather than one that
/// describes missing, stale or half-written files.
pub fn write_report(
    dir: &Path,
    doc: &ReportDoc,
    charts: &[Chart],
    data: &[DataTable],
) -> Result<Vec<PathBuf>, ReportError> {
    let mut names = BTreeSet::new();
    for name in charts
        .iter()
        .map(|c| &c.name)
        .chain(data.iter().map(|d| &d.name))
    {
        if !is_valid_name(name) || RESERVED.contains(&name.as_str()) {
            return Err(ReportError::BadName { name: name.clone() });
        }
        if !names.insert(name.as_str()) {
            return Err(ReportError::DuplicateName { name: name.clone() });
        }
    }
    let shown: BTreeSet<&str> = doc
        .sections
        .iter()
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            Block::Chart(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    if let Some(missing) = shown.iter().find(|n| !charts.iter().any(|c| c.name == **n)) {
        return Err(ReportError::UnknownChart {
            name: missing.to_string(),
        });
    }
    let mut doc = doc.clone();
    let unshown: Vec<&Chart> = charts
        .iter()
        .filter(|c| !shown.contains(c.name.as_str()))
        .collect();
    if !unshown.is_empty() {
        let mut section = Section::new("Other charts");
        for chart in unshown {
            section = section.chart(chart.name.clone());
        }
        doc.sections.push(section);
    }

    if dir.exists() && !dir.is_dir() {
        return Err(ReportError::NotAFolder {
            path: dir.to_path_buf(),
        });
    }
    fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    let result = write_files(dir, &doc, charts, data, &mut written);
    if result.is_err() {
        forget_report(dir, charts, data);
    }
    result?;
    written.sort();
    Ok(written)
}

/// Writes every file of the folder, the report last; `written` collects the paths written.
fn write_files(
    dir: &Path,
    doc: &ReportDoc,
    charts: &[Chart],
    data: &[DataTable],
    written: &mut Vec<PathBuf>,
) -> Result<(), ReportError> {
    let mut put = |file: String, bytes: &[u8]| -> Result<(), ReportError> {
        let path = dir.join(file);
        write_atomically(&path, bytes).map_err(|source| ReportError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
        Ok(())
    };
    for chart in charts {
        put(format!("{}.svg", chart.name), chart.svg.as_bytes())?;
        put(format!("{}.png", chart.name), &chart.png)?;
        put(
            format!("{}.csv", chart.name),
            chart.data.to_csv().as_bytes(),
        )?;
        put(
            format!("{}.json", chart.name),
            chart.data.to_json().as_bytes(),
        )?;
    }
    for table in data {
        put(format!("{}.csv", table.name), table.to_csv().as_bytes())?;
        put(format!("{}.json", table.name), table.to_json().as_bytes())?;
    }
    let chart_refs: Vec<&Chart> = charts.iter().collect();
    put(
        "report.md".to_string(),
        markdown::render(doc, &chart_refs, data).as_bytes(),
    )?;
    put(
        "report.html".to_string(),
        html::render(doc, &chart_refs, data).as_bytes(),
    )
}

/// After a failed write: removes every file of this report, those it wrote and older ones
/// under its names, so that the folder holds no report of mixed or missing files and no
/// file that looks like part of this one. Other files are left alone.
fn forget_report(dir: &Path, charts: &[Chart], data: &[DataTable]) {
    let chart_files = charts
        .iter()
        .flat_map(|c| ["svg", "png", "csv", "json"].map(|ext| format!("{}.{ext}", c.name)));
    let table_files = data
        .iter()
        .flat_map(|t| ["csv", "json"].map(|ext| format!("{}.{ext}", t.name)));
    let report_files = RESERVED
        .iter()
        .flat_map(|stem| ["md", "html"].map(|ext| format!("{stem}.{ext}")));
    for name in chart_files.chain(table_files).chain(report_files) {
        let path = dir.join(name);
        if path.is_file() {
            let _ = fs::remove_file(path);
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it (so that an error a delayed
/// write or the close would report surfaces here), then renames it into place. On any error
/// the temporary file is removed and `path` is left as it was.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .expect("output file names are ours and valid");
    let temporary = path.with_file_name(format!(".{file_name}.partial"));
    let done = write_synced(&temporary, bytes).and_then(|()| fs::rename(&temporary, path));
    if done.is_err() && temporary.is_file() {
        let _ = fs::remove_file(&temporary);
    }
    done
}

/// Creates `path` with `bytes` and waits until the system has them.
fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_data()
}
