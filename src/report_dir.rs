//! The report folder of `compare`, `sweep` and `run --plot`: refusing a folder that cannot be
//! one before anything runs, writing it, and what a failure to write says; and the progress
//! bar over the runs of `compare` and `sweep`.

/// A progress bar over the runs of `compare` or `sweep`, on a terminal only, drawn once the
/// runs have taken two seconds (most comparisons are done before then).
pub struct RunsBar {
    bar: Option<indicatif::ProgressBar>,
    #[allow(clippy::disallowed_types)]
    started: std::time::Instant,
}

impl RunsBar {
    /// A bar over `runs` runs; none with `--json` or when stderr is not a terminal.
    pub fn new(runs: u64, json: bool) -> Self {
        use std::io::IsTerminal;
        let bar = (!json && std::io::stderr().is_terminal()).then(|| {
            let hidden = indicatif::ProgressDrawTarget::hidden();
            let bar = indicatif::ProgressBar::with_draw_target(Some(runs), hidden);
            let template = "{bar:30} {pos}/{len} runs  eta {eta}";
            let style = indicatif::ProgressStyle::with_template(template)
                .expect("a valid progress template");
            bar.set_style(style);
            bar
        });
        #[allow(clippy::disallowed_types)]
        let started = std::time::Instant::now();
        Self { bar, started }
    }
}

impl splitbrain_lab::group::Progress for RunsBar {
    fn run_started(&self) {
        let Some(bar) = &self.bar else { return };
        if bar.is_hidden() && self.started.elapsed() >= std::time::Duration::from_secs(2) {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        bar.inc(1);
    }

    fn runs_finished(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Writes the report folder; on error prints it and returns exit 2.
pub fn write(
    dir: &std::path::Path,
    doc: &splitbrain_reports::ReportDoc,
    charts: &[splitbrain_reports::Chart],
    data: &[splitbrain_reports::DataTable],
) -> Result<(), u8> {
    splitbrain_reports::write_report(dir, doc, charts, data).map_err(|e| {
        eprintln!("error: {}", report_write_error(dir, &e));
        crate::exit::BAD_INPUT
    })?;
    Ok(())
}

/// Refuses, before any run, an output path that exists and is not a folder, and a folder
/// that holds the scenario file under a name the report may write over.
pub fn check_out_folder(dir: &std::path::Path, scenario: &std::path::Path) -> Result<(), u8> {
    if let Err(message) = crate::output::check_name_lengths("the report folder", dir) {
        eprintln!("{message}");
        return Err(crate::exit::BAD_INPUT);
    }
    // The folder, or (if it is to be made) the nearest of its parents that exists.
    let existing = dir
        .ancestors()
        .find(|p| p.as_os_str().is_empty() || p.symlink_metadata().is_ok())
        .unwrap_or(dir);
    if !existing.as_os_str().is_empty() && !existing.is_dir() {
        let e = splitbrain_reports::ReportError::NotAFolder {
            path: existing.to_path_buf(),
        };
        eprintln!("error: {}", report_write_error(dir, &e));
        return Err(crate::exit::BAD_INPUT);
    }
    if report_may_replace(dir, scenario) {
        eprintln!(
            "error: the scenario file {} is in the report folder {} under a name the report writes \
             (report.md, report.html, NAME.csv, .json, .svg, .png): writing the report would \
             destroy it\n  hint: choose another folder for the report",
            scenario.display(),
            dir.display()
        );
        return Err(crate::exit::BAD_INPUT);
    }
    Ok(())
}

/// Whether `path` lies in the report folder `dir` under a name of the kind a report writes.
fn report_may_replace(dir: &std::path::Path, path: &std::path::Path) -> bool {
    let written_kind = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["md", "html", "csv", "json", "svg", "png"].contains(&e));
    written_kind && crate::output::same_file(crate::output::folder_of(path), dir)
}

/// The message for a report folder that could not be written, with its hint line.
pub fn report_write_error(dir: &std::path::Path, e: &splitbrain_reports::ReportError) -> String {
    use splitbrain_reports::ReportError;
    let (what, hint) = match e {
        ReportError::Io { path, source } => (
            format!("{}: {}", path.display(), crate::output::io_message(source)),
            if crate::output::is_name_too_long(source) {
                "a name in the path is longer than the file system allows (255 bytes): choose a shorter --out path"
            } else {
                "the folder is as it was (an earlier report in it is kept whole): free some \
                 space or choose another folder, and run the command again"
            },
        ),
        ReportError::NotAFolder { .. } => (
            e.to_string(),
            "the report is a folder of files: give a new or existing folder",
        ),
        ReportError::InTheWay { .. } => (
            e.to_string(),
            "the folder is as it was: move that folder away, or choose another folder for the report",
        ),
        ReportError::Busy { .. } => (
            e.to_string(),
            "wait for that run to end, or choose another folder for the report",
        ),
        _ => (
            e.to_string(),
            "this is a bug in splitbrain; please report it with the command",
        ),
    };
    format!(
        "cannot write the report to {}: {what}\n  hint: {hint}",
        dir.display()
    )
}

/// A chart error is a bug: report it as such.
pub fn chart_failed(e: splitbrain_reports::ChartError) -> u8 {
    eprintln!("error: {e}");
    crate::exit::BAD_INPUT
}

/// Says why a report could not be built (of the scenario `file`) and gives exit code 2.
pub fn build_failed(file: &std::path::Path, e: splitbrain_lab::group::BuildError) -> u8 {
    match e {
        splitbrain_lab::group::BuildError::Chart(e) => chart_failed(e),
        splitbrain_lab::group::BuildError::Run(failed) => crate::print::run_failed(file, &failed),
    }
}
