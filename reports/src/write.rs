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
    BadName {
        /// The name as given.
        name: String,
    },
    /// Two charts or tables would write the same files.
    #[error("two charts or tables are named {name:?}")]
    DuplicateName {
        /// The name shared by two charts or tables.
        name: String,
    },
    /// A section shows a chart that was not given.
    #[error("the report shows chart {name:?}, which was not given")]
    UnknownChart {
        /// The chart name a [`Block::Chart`] gives.
        name: String,
    },
    /// The output folder's path names something that is not a folder (a file, a device).
    #[error("{path} exists and is not a folder")]
    NotAFolder {
        /// The output folder's path.
        path: PathBuf,
    },
    /// Reading or changing a file or folder failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder the operation was on.
        path: PathBuf,
        /// What the operating system reported.
        source: io::Error,
    },
    /// A folder (or other non-file) has the name of a file the report writes.
    #[error("{path} is in the way: the report writes a file of that name")]
    InTheWay {
        /// The path in the way: a file of the report, or the staging folder when it is a
        /// symbolic link.
        path: PathBuf,
    },
    /// Another process is writing a report into the same folder.
    #[error("another run is writing a report to {path} (its {STAGING} folder is locked)")]
    Busy {
        /// The output folder.
        path: PathBuf,
    },
}

/// The folder, inside the output folder, where a report is written before it replaces the
/// previous one. Inside rather than beside it: the output folder may be `.`, a symbolic link,
/// or hold the user's own files (the scenario), and renames within one file system cannot
/// fail for want of space.
pub const STAGING: &str = ".report.partial";

/// The lock file in [`STAGING`] that its writer holds.
const LOCK: &str = ".lock";

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
/// Every file is written first into the folder [`STAGING`] inside `dir`, each write checked
/// and synced; only when all are written are they renamed into `dir`, the report last. When
/// a write fails (a full disk), the staging folder is removed and `dir` is left as it was: an
/// earlier report in it is kept whole. Should a rename into place fail, every file of this
/// report is removed instead, so the folder never holds a report of mixed files. The staging
/// folder is locked while written: a second writer of the same folder is refused
/// ([`ReportError::Busy`]); one left by a killed writer is cleared and reused.
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
    let made = !dir.exists();
    fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let result = Staging::open(dir).and_then(|staging| {
        let mut names = Vec::new();
        let written = write_files(&staging.path, &doc, charts, data, &mut names);
        let moved = written.and_then(|()| move_into_place(&staging.path, dir, &names));
        staging.remove();
        moved
    });
    match result {
        Ok(mut written) => {
            written.sort();
            Ok(written)
        }
        Err(e) => {
            if made {
                let _ = fs::remove_dir(dir); // only if empty: nothing of the user's is lost
            }
            Err(e)
        }
    }
}

/// The locked folder a report is written into before it replaces the previous one.
struct Staging {
    path: PathBuf,
    /// Held open for its lock, released when dropped.
    _lock: fs::File,
}

impl Staging {
    /// Makes (or takes over, from a killed writer) `dir`'s staging folder, empty and locked.
    fn open(dir: &Path) -> Result<Self, ReportError> {
        let path = dir.join(STAGING);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ReportError::Io { path, source }
        };
        // Emptied below: never through a link planted there, into the folder it names.
        if fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ReportError::InTheWay { path });
        }
        fs::create_dir_all(&path).map_err(io(&path))?;
        let lock_path = path.join(LOCK);
        let lock = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        let busy = || ReportError::Busy {
            path: dir.to_path_buf(),
        };
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Err(busy()),
            // A file system without locks: written unlocked, as before locks existed.
            Err(fs::TryLockError::Error(_)) => {}
        }
        // Its writer may have finished and removed it between the open and the lock.
        if !lock_path.is_file() {
            return Err(busy());
        }
        for entry in fs::read_dir(&path).map_err(io(&path))? {
            let entry = entry.map_err(io(&path))?;
            if entry.file_name() == LOCK {
                continue;
            }
            let left = entry.path();
            let removed = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                fs::remove_dir_all(&left)
            } else {
                fs::remove_file(&left)
            };
            removed.map_err(io(&left))?;
        }
        Ok(Self { path, _lock: lock })
    }

    /// Removes the folder and everything in it (the lock is held until `self` drops).
    fn remove(&self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Renames every file of `names` (the report last) from `staging` into `dir`. Names taken by
/// a folder are found before anything moves, so that `dir` is left as it was.
fn move_into_place(
    staging: &Path,
    dir: &Path,
    names: &[String],
) -> Result<Vec<PathBuf>, ReportError> {
    for name in names {
        let target = dir.join(name);
        if fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
            return Err(ReportError::InTheWay { path: target });
        }
    }
    let mut moved = Vec::new();
    for name in names {
        let target = dir.join(name);
        if let Err(source) = fs::rename(staging.join(name), &target) {
            forget_report(dir, names);
            return Err(ReportError::Io {
                path: target,
                source,
            });
        }
        moved.push(target);
    }
    Ok(moved)
}

/// Writes every file of the report into `dir`, the report last; `written` collects their
/// names in that order.
fn write_files(
    dir: &Path,
    doc: &ReportDoc,
    charts: &[Chart],
    data: &[DataTable],
    written: &mut Vec<String>,
) -> Result<(), ReportError> {
    let mut put = |file: String, bytes: &[u8]| -> Result<(), ReportError> {
        let path = dir.join(&file);
        write_synced(&path, bytes).map_err(|source| ReportError::Io { path, source })?;
        written.push(file);
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

/// After a failed move into place: removes every file of this report, those moved and older
/// ones under its names, so that the folder holds no report of mixed files. Other files are
/// left alone.
fn forget_report(dir: &Path, names: &[String]) {
    for name in names {
        let path = dir.join(name);
        if path.is_file() {
            let _ = fs::remove_file(path);
        }
    }
}

/// Creates `path` with `bytes` and waits until the system has them.
fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_data()
}
