//! Output folders: every file written, well-formed, self-contained and deterministic.

use crate::common::*;
use splitbrain_reports::*;
use std::fs;
use std::path::Path;

fn charts() -> Vec<Chart> {
    vec![
        failover_cdf(
            "failover-cdf",
            "Failover time",
            "recovery time",
            &cdf_series(),
            None,
        )
        .unwrap(),
        messages_per_election(
            "messages",
            "Messages per election",
            "algorithm",
            &election_groups(),
        )
        .unwrap(),
        leadership_timeline("timeline-raft", "Timeline: raft", &run_report(), &[], &[]).unwrap(),
    ]
}

fn doc() -> ReportDoc {
    let mut table = Table::new(&["algorithm", "p50", "verdict"]);
    table.push(vec![
        "raft".into(),
        "180ms".into(),
        "election_safety | held".into(),
    ]);
    ReportDoc {
        title: "Compare: raft vs bully".to_string(),
        command: "splitbrain compare scenarios/compare-failover.ron --algorithms raft,bully --seeds 4 --out out/".to_string(),
        seeds: vec![4, 1, 2, 3],
        facts: vec![("scenario".to_string(), "scenarios/compare-failover.ron".to_string())],
        sections: vec![
            Section::new("Failover")
                .text("Times from the fault to the new leader's first accepted write <as measured>.")
                .table(table)
                .chart("failover-cdf"),
            Section::new("Messages").chart("messages").list(vec!["a & b".into()]),
            Section::new("Timelines").code("splitbrain run x.ron --seed 3"),
        ],
    }
}

fn summary_table() -> DataTable {
    let mut t = DataTable::new("failover-summary", &["algorithm", "p50_ns"]);
    t.push(vec!["raft".into(), 180_000_000u64.into()]);
    t
}

fn write(dir: &Path) -> Vec<std::path::PathBuf> {
    write_report(dir, &doc(), &charts(), &[summary_table()]).expect("the report is written")
}

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn every_chart_gets_svg_png_csv_and_json_and_the_report_both_formats() {
    let dir = scratch_dir("every-file");
    let written = write(&dir);
    let mut expected = vec!["report.md".to_string(), "report.html".to_string()];
    for chart in ["failover-cdf", "messages", "timeline-raft"] {
        for ext in ["svg", "png", "csv", "json"] {
            expected.push(format!("{chart}.{ext}"));
        }
    }
    expected.push("failover-summary.csv".to_string());
    expected.push("failover-summary.json".to_string());
    expected.sort();
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, expected, "no temporary file is left behind");
    let mut returned: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    returned.sort();
    assert_eq!(returned, expected);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn chart_files_hold_the_charts_bytes_and_numbers() {
    let dir = scratch_dir("chart-files");
    write(&dir);
    for chart in charts() {
        assert_eq!(read(&dir, &format!("{}.svg", chart.name)), chart.svg);
        assert_eq!(
            fs::read(dir.join(format!("{}.png", chart.name))).unwrap(),
            chart.png
        );
        assert_eq!(
            read(&dir, &format!("{}.csv", chart.name)),
            chart.data.to_csv()
        );
        let json: serde_json::Value =
            serde_json::from_str(&read(&dir, &format!("{}.json", chart.name))).unwrap();
        assert_eq!(
            json["rows"].as_array().unwrap().len(),
            chart.data.rows.len()
        );
        roxmltree::Document::parse(&read(&dir, &format!("{}.svg", chart.name))).unwrap();
    }
    // The timeline's CSV numbers are the run's own.
    let csv = read(&dir, "timeline-raft.csv");
    for s in &run_report().leadership_spans {
        let row = format!(
            "leadership,{},{},{},{},\n",
            s.node, s.term, s.from_ns, s.to_ns
        );
        assert!(csv.contains(&row), "{row} in {csv}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&read(&dir, "failover-summary.json")).unwrap();
    assert_eq!(json["rows"][0]["p50_ns"], 180_000_000);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_html_report_embeds_every_chart_and_references_nothing_outside() {
    let dir = scratch_dir("html");
    write(&dir);
    let html = read(&dir, "report.html");
    for chart in charts() {
        let tag = format!("<svg role=\"img\" aria-label=\"{}\"", chart.title);
        assert!(html.contains(&tag), "{} is embedded", chart.name);
    }
    assert_eq!(html.matches("<svg ").count(), 3);
    for external in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "@import",
        "url(",
        "<script",
        "<link",
    ] {
        assert!(!html.contains(external), "report.html contains {external}");
    }
    assert!(html.contains(&doc().command), "the exact command");
    assert!(html.contains("1..=4 (4 seeds)"), "the seeds");
    assert!(html.contains("&lt;as measured&gt;"), "text is escaped");
    assert!(html.contains("<td>election_safety | held</td>"));
    assert!(html.contains("<td class=\"num\">180ms</td>"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_markdown_report_shows_every_chart_as_its_png() {
    let dir = scratch_dir("markdown");
    write(&dir);
    let md = read(&dir, "report.md");
    for chart in charts() {
        assert!(
            md.contains(&format!("]({}.png)", chart.name)),
            "{}",
            chart.name
        );
        assert!(md.contains(&format!("({}.csv)", chart.name)));
    }
    assert!(md.starts_with("# Compare: raft vs bully\n"));
    assert!(md.contains(&format!("```sh\n{}\n```", doc().command)));
    assert!(md.contains("- **seeds** (4 seeds): 1..=4\n"));
    assert!(md.contains("| raft | 180ms | election\\_safety \\| held |"));
    assert!(md.contains("[CSV](failover-summary.csv)"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_chart_no_section_shows_goes_under_other_charts() {
    let dir = scratch_dir("other-charts");
    write(&dir);
    let md = read(&dir, "report.md");
    let other = md.find("## Other charts").expect("an Other charts section");
    assert!(md[other..].contains("(timeline-raft.png)"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn writing_the_same_report_twice_gives_the_same_bytes() {
    let (a, b) = (scratch_dir("twice-a"), scratch_dir("twice-b"));
    write(&a);
    write(&b);
    for entry in fs::read_dir(&a).unwrap() {
        let name = entry.unwrap().file_name();
        let (x, y) = (
            fs::read(a.join(&name)).unwrap(),
            fs::read(b.join(&name)).unwrap(),
        );
        assert!(x == y, "{name:?} differs");
    }
    // And writing over an existing folder replaces the files in place.
    write(&a);
    fs::remove_dir_all(a).unwrap();
    fs::remove_dir_all(b).unwrap();
}

#[test]
fn a_missing_chart_or_a_clash_of_names_is_an_error() {
    let dir = scratch_dir("errors");
    let mut d = doc();
    d.sections.push(Section::new("x").chart("nowhere"));
    let err = write_report(&dir, &d, &charts(), &[]).unwrap_err();
    assert!(
        matches!(err, ReportError::UnknownChart { ref name } if name == "nowhere"),
        "{err}"
    );

    let mut clash = summary_table();
    clash.name = "messages".to_string();
    let err = write_report(&dir, &doc(), &charts(), &[clash]).unwrap_err();
    assert!(matches!(err, ReportError::DuplicateName { .. }), "{err}");

    let mut reserved = summary_table();
    reserved.name = "report".to_string();
    let err = write_report(&dir, &doc(), &charts(), &[reserved]).unwrap_err();
    assert!(matches!(err, ReportError::BadName { .. }), "{err}");
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written on error"
    );
    fs::remove_dir_all(dir).unwrap();
}

/// The regular files of `dir`, by name.
fn regular_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file of `dir` (hidden ones included) with its bytes; folders as `None`.
fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, p.is_file().then(|| fs::read(&p).unwrap()))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_report_that_cannot_be_put_in_place_leaves_the_earlier_one_as_it_was() {
    let dir = scratch_dir("failed-write");
    // A report from an earlier, complete write, and a file of the user's...
    write(&dir);
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    // ...then one of the new report's files has a folder in its place.
    fs::remove_file(dir.join("messages.png")).unwrap();
    fs::create_dir_all(dir.join("messages.png").join("x")).unwrap();
    let before = snapshot(&dir);
    let err = write_report(&dir, &doc(), &charts(), &[summary_table()]).unwrap_err();
    assert!(matches!(err, ReportError::InTheWay { .. }), "{err}");
    assert!(err.to_string().contains("messages.png"), "{err}");
    // Nothing moved: the earlier files, the user's, and no staging folder.
    assert_eq!(snapshot(&dir), before);
    assert_eq!(regular_files(&dir).len(), 16);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_folder_another_writer_holds_is_refused_and_a_killed_writers_leftovers_are_cleared() {
    let dir = scratch_dir("busy");
    let staging = dir.join(STAGING);
    fs::create_dir_all(staging.join("old-folder")).unwrap();
    fs::write(staging.join("report.html"), "half of a killed write").unwrap();
    let lock = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(staging.join(".lock"))
        .unwrap();
    lock.lock().unwrap();
    let err = write_report(&dir, &doc(), &charts(), &[summary_table()]).unwrap_err();
    assert!(matches!(err, ReportError::Busy { .. }), "{err}");
    assert!(
        staging.join("report.html").is_file(),
        "the holder's files are left alone"
    );
    // Released (its writer was killed): the leftovers are cleared and the report written.
    drop(lock);
    write(&dir);
    assert!(!staging.exists());
    assert!(read(&dir, "report.md").contains("#"));
    fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_link_planted_as_the_staging_folder_is_refused_and_what_it_names_left_alone() {
    let dir = scratch_dir("planted-link");
    let elsewhere = scratch_dir("planted-link-target");
    fs::write(elsewhere.join("precious.txt"), "keep me").unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join(STAGING)).unwrap();
    let err = write_report(&dir, &doc(), &charts(), &[summary_table()]).unwrap_err();
    assert!(matches!(err, ReportError::InTheWay { .. }), "{err}");
    assert_eq!(read(&elsewhere, "precious.txt"), "keep me");
    fs::remove_dir_all(dir).unwrap();
    fs::remove_dir_all(elsewhere).unwrap();
}
