//! `run.html`: one run you can step through, event by event, in a browser (issue 33, "A run
//! you can step through").
//!
//! One self-contained page: the styles and the script are inline (`view.css`, `view.js`,
//! included at compile time) and the run's events are embedded as JSON; nothing is fetched.
//! It draws one lane per process (role and term over time, crashed and frozen spans), the
//! messages as arrows from send to delivery, faults as bands, and a cursor that steps through
//! the events; at the cursor it shows each process's state as replayed from the events so far
//! and the invariant violations at or before it. It opens at the first violation, or at
//! `#event=N`. The same events give the same bytes.
//!
//! The events come from a [`ViewRecorder`] riding along the run (it reads the typed
//! [`TraceEvent`]s the engine hands every sink), keeping at most [`VIEW_MAX_EVENTS`].

mod encode;

use crate::html::escape;
use crate::write::ReportError;
use encode::{json_string, json_string_array, push_event, Strings, KINDS};
use splitbrain_sim::{TraceEvent, TraceSink};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file name of the page in an output folder.
pub const VIEW_FILE: &str = "run.html";

/// At most this many events are embedded in the page (the first ones of the run); the page
/// says how many the run had. 200,000 events make a page of about 8 MB (and as much memory
/// while the run goes) that a browser opens in a second or two; the page draws only what is
/// on screen, so stepping stays as fast as in a small run.
pub const VIEW_MAX_EVENTS: usize = 200_000;

const STYLE: &str = include_str!("view.css");
const SCRIPT: &str = include_str!("view.js");

/// What the page says about the run besides its events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewPage {
    /// The page's heading and `<title>`.
    pub title: String,
    /// The command that wrote the page.
    pub command: String,
    /// Short facts shown under the title: `(name, value)`.
    pub facts: Vec<(String, String)>,
    /// Lane names by process id (`n0`, ..., the service, `resource`); ids past the end are
    /// shown as `nN`.
    pub node_names: Vec<String>,
    /// The invariants the run broke, one sentence each (`election_safety: n0 and n1 both
    /// claimed leadership of term 3`); empty when none broke.
    pub violations: Vec<String>,
}

/// The events a [`ViewRecorder`] kept, already in the page's compact form (about 40 bytes
/// an event), so that keeping them costs a fraction of the typed events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewTrace {
    /// The kept events as JSON arrays, one per line.
    encoded: String,
    strings: Strings,
    kept: usize,
    total: u64,
    first_violation: Option<u64>,
}

impl ViewTrace {
    /// How many events the page holds: the first ones of the run, at most the budget.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// How many events the run had in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The position (0-based: the `--trace` file's line number minus one) of the first event
    /// at which an invariant broke, if any did, kept or not. The page opens there.
    pub fn first_violation(&self) -> Option<u64> {
        self.first_violation
    }
}

/// A [`TraceSink`] that keeps the events the page embeds: the first `budget` of the run,
/// encoded as they come.
#[derive(Clone, Debug)]
pub struct ViewRecorder {
    budget: usize,
    trace: ViewTrace,
}

impl Default for ViewRecorder {
    fn default() -> Self {
        Self::with_budget(VIEW_MAX_EVENTS)
    }
}

impl ViewRecorder {
    /// A recorder that keeps at most `budget` events.
    pub fn with_budget(budget: usize) -> Self {
        Self {
            budget,
            trace: ViewTrace::default(),
        }
    }

    /// What it kept.
    pub fn finish(self) -> ViewTrace {
        self.trace
    }
}

impl TraceSink for ViewRecorder {
    fn record(&mut self, event: &TraceEvent) {
        let trace = &mut self.trace;
        if event.broke_invariant() && trace.first_violation.is_none() {
            trace.first_violation = Some(trace.total);
        }
        if trace.kept < self.budget {
            if trace.kept > 0 {
                trace.encoded.push_str(",\n");
            }
            push_event(&mut trace.encoded, event, &mut trace.strings);
            trace.kept += 1;
        }
        trace.total += 1;
    }

    /// The encoded events and the interned texts (a node's log lines among them): what
    /// `run --plot` charges to the run's `--max-memory`.
    fn held_bytes(&self) -> u64 {
        (self.trace.encoded.len() + self.trace.strings.text_bytes()) as u64
    }
}

/// The page of one run: `page`'s words and `trace`'s events, as one HTML document.
pub fn run_view_html(page: &ViewPage, trace: &ViewTrace) -> String {
    let mut out = String::with_capacity(trace.encoded.len() + SCRIPT.len() + 4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n", escape(&page.title)));
    out.push_str(&format!("<style>\n{STYLE}</style>\n</head>\n<body>\n"));
    out.push_str("<script type=\"application/json\" id=\"run-data\">\n");
    push_data(&mut out, page, trace);
    out.push_str("\n</script>\n");
    out.push_str(&format!("<script>\n{SCRIPT}</script>\n"));
    out.push_str("</body>\n</html>\n");
    out
}

/// The embedded data: the page's words, the kind and string tables, and the events.
fn push_data(out: &mut String, page: &ViewPage, trace: &ViewTrace) {
    let facts: Vec<String> = page
        .facts
        .iter()
        .map(|(k, v)| format!("[{},{}]", json_string(k), json_string(v)))
        .collect();
    let kinds: Vec<String> = KINDS.iter().map(|k| k.to_string()).collect();
    let first_violation = trace
        .first_violation
        .map_or("null".to_string(), |v| v.to_string());
    out.push_str(&format!(
        "{{\"format\":1,\"title\":{},\"command\":{},\"facts\":[{}],\"names\":{},\
         \"violations\":{},\"total\":{},\"first_violation\":{},\"kinds\":{},\
         \"strings\":{},\n\"events\":[\n",
        json_string(&page.title),
        json_string(&page.command),
        facts.join(","),
        json_string_array(&page.node_names),
        json_string_array(&page.violations),
        trace.total,
        first_violation,
        json_string_array(&kinds),
        trace.strings.to_json(),
    ));
    out.push_str(&trace.encoded);
    out.push_str("\n]}");
}

/// Writes `html` to `dir/`[`VIEW_FILE`] (the folder must exist): first to a hidden partial
/// file, synced, then renamed into place, so a reader never sees half a page.
pub fn write_run_view(dir: &Path, html: &str) -> Result<PathBuf, ReportError> {
    let target = dir.join(VIEW_FILE);
    if fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
        return Err(ReportError::InTheWay { path: target });
    }
    let partial = dir.join(format!(".{VIEW_FILE}.partial"));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Io { path, source }
    };
    let written = fs::File::create(&partial).and_then(|mut file| {
        file.write_all(html.as_bytes())?;
        file.sync_data()
    });
    if let Err(source) = written {
        let _ = fs::remove_file(&partial);
        return Err(io(&target)(source));
    }
    fs::rename(&partial, &target).map_err(io(&target))?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::{Broken, EventKind, Invariant, NodeId};

    fn event(t_ns: u64, broken: Vec<Invariant>) -> TraceEvent {
        TraceEvent {
            t_ns,
            node: Some(NodeId(0)),
            local_ns: Some(t_ns as i64),
            kind: EventKind::Timer {
                timer: "election".into(),
            },
            term: Some(1),
            leader: false,
            broken: Broken::from(broken),
        }
    }

    #[test]
    fn the_recorder_keeps_its_budget_and_finds_a_violation_past_it() {
        let mut r = ViewRecorder::with_budget(2);
        r.record(&event(1, vec![]));
        r.record(&event(2, vec![]));
        r.record(&event(3, vec![Invariant::ElectionSafety]));
        let trace = r.finish();
        assert_eq!(trace.kept(), 2);
        assert_eq!(trace.total(), 3);
        assert_eq!(trace.first_violation(), Some(2));
    }

    #[test]
    fn the_page_embeds_its_data_as_json_that_parses() {
        let mut r = ViewRecorder::default();
        r.record(&event(1, vec![]));
        r.record(&event(2, vec![Invariant::FencingSafety]));
        let page = ViewPage {
            title: "a </script> title".to_string(),
            node_names: vec!["n0".to_string()],
            ..ViewPage::default()
        };
        let html = run_view_html(&page, &r.finish());
        let start = html.find("id=\"run-data\">").unwrap() + "id=\"run-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(data["title"], "a </script> title");
        assert_eq!(data["first_violation"], 1);
        assert_eq!(data["events"].as_array().unwrap().len(), 2);
        assert_eq!(html.matches("</script>").count(), 2, "no early end");
    }
}
