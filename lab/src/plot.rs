//! `run FILE --plot DIR`: the single-run pictures and their report.

use crate::runner::run_watched;
use splitbrain_reports::{
    election_messages, leadership_timeline, messages_per_election, sequence_diagram_of,
    sequence_window, AroundFailovers, Block, CapturedWindow, CapturedWindows, Chart,
    FailoverRecorder, ReportDoc, Section, SequenceLabels, SequenceRecorder, SequenceTrace, Settle,
    Table, ViewPage, ViewRecorder, ViewTrace, VIEW_FILE,
};
use splitbrain_scenario::Scenario;
use splitbrain_sim::{
    format_duration, LimitExceeded, Milestone, Nanos, RunError, RunReport, TraceEvent, TraceSink,
};
use thiserror::Error;

/// Why the pictures of a run could not be made.
#[derive(Debug, Error)]
pub enum PlotError {
    /// A chart failed to draw.
    #[error("cannot draw a chart: {0}")]
    Chart(#[from] splitbrain_reports::ChartError),
    /// The second run that keeps a long window outgrew its limits.
    #[error("{0}")]
    Outgrown(#[from] LimitExceeded),
    /// A process of the second run asked for an effect the engine refuses.
    #[error("{0}")]
    Refused(#[from] splitbrain_sim::RefusedEffect),
}

impl From<RunError> for PlotError {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Limit(e) => PlotError::Outgrown(e),
            RunError::Refused(e) => PlotError::Refused(e),
        }
    }
}

/// How many failovers get a sequence diagram.
const SEQUENCES_SHOWN: usize = 3;

/// The sink that rides along the run to keep what its sequence diagrams draw: the windows
/// around its first failovers or, without one, its first election (see `sequence_plans`).
pub fn recorder() -> FailoverRecorder {
    FailoverRecorder::new(AroundFailovers {
        failovers: SEQUENCES_SHOWN,
        settle: Settle::RecoveryOrElection,
        first_election: true,
    })
}

/// The sink that rides along `run --plot`: the sequence diagrams' windows ([`recorder`]) and
/// the events of the page that steps through the run ([`ViewRecorder`], `run.html`).
#[derive(Debug)]
pub struct PlotRecorder {
    windows: FailoverRecorder,
    view: ViewRecorder,
}

impl Default for PlotRecorder {
    fn default() -> Self {
        Self {
            windows: recorder(),
            view: ViewRecorder::default(),
        }
    }
}

impl PlotRecorder {
    /// The sequence diagrams' windows and the page's events.
    pub fn finish(self) -> (CapturedWindows, ViewTrace) {
        (self.windows.finish_windows(), self.view.finish())
    }
}

impl TraceSink for PlotRecorder {
    fn record(&mut self, event: &TraceEvent) {
        self.windows.record(event);
        self.view.record(event);
    }

    fn milestone(&mut self, now_ns: Nanos, milestone: Milestone<'_>) {
        self.windows.milestone(now_ns, milestone);
    }

    /// The page's events (the windows keep a bounded number of events).
    fn held_bytes(&self) -> u64 {
        self.view.held_bytes()
    }
}

/// The page that steps through one run (`report` of `scenario`, its events as `trace` kept),
/// `command` being the command that wrote it: the HTML of `run.html`, for
/// [`splitbrain_reports::write_run_view`].
pub fn run_view(
    scenario: &Scenario,
    report: &RunReport,
    trace: &ViewTrace,
    command: &str,
) -> String {
    let page = ViewPage {
        title: format!(
            "splitbrain run: {}, seed {}",
            scenario.name, scenario.sim.seed
        ),
        command: command.to_string(),
        facts: vec![
            ("algorithm".to_string(), report.algorithm.clone()),
            ("nodes".to_string(), report.members.to_string()),
            ("simulated".to_string(), format_duration(report.end_ns)),
        ],
        node_names: scenario.algorithm.lifeline_names(scenario.sim.members),
        violations: report
            .violations
            .iter()
            .map(|v| format!("{}: {}", v.invariant, v.detail))
            .collect(),
    };
    splitbrain_reports::run_view_html(&page, trace)
}

/// The report of one run's pictures (`report` of `scenario`, with the `windows` its
/// [`recorder`] kept), `command` being the command that drew them: the document and its
/// charts, for [`splitbrain_reports::write_report`].
pub fn plot_report(
    scenario: &Scenario,
    report: &RunReport,
    windows: CapturedWindows,
    command: &str,
) -> Result<(ReportDoc, Vec<Chart>), PlotError> {
    let title = format!("{}, seed {}", scenario.name, scenario.sim.seed);
    let mut charts: Vec<Chart> = Vec::new();
    charts.push(leadership_timeline(
        "timeline",
        &format!("Leadership timeline: {title}"),
        report,
        &[],
        &report.lease_spans,
    )?);
    let sequences = sequence_plans(report);
    let windows: Vec<CapturedWindow> = windows
        .failovers
        .into_iter()
        .chain(windows.first_election)
        .collect();
    let planned: Vec<(u64, u64)> = sequences.iter().map(|p| p.window).collect();
    let kept: Vec<(u64, u64)> = windows.iter().map(CapturedWindow::bounds).collect();
    assert_eq!(
        kept, planned,
        "the recorder kept the windows the report asks for"
    );
    // A second run of what just ran within its limits: only memory (the whole process's)
    // can differ, and then the plots are not drawn.
    let traces = kept_windows(scenario, windows)?;
    for (plan, trace) in sequences.iter().zip(&traces) {
        let names = scenario.algorithm.lifeline_names(scenario.sim.members);
        let labels = SequenceLabels {
            node_names: &names,
            fenced: scenario.sim.fencing,
            leadership: &report.leadership_spans,
            members: Some(scenario.sim.members),
        };
        let chart = sequence_diagram_of(&plan.name, &plan.caption, trace, &labels);
        charts.push(chart?);
    }
    let (per_election, decided) = election_messages(&report.algorithm, &report.elections);
    if decided > 0 {
        let caption = format!("Messages per election ({decided} decided elections)");
        charts.push(messages_per_election(
            "messages_per_election",
            &caption,
            "algorithm",
            &[per_election],
        )?);
    }
    let doc = ReportDoc {
        title: format!("splitbrain run: {title}"),
        command: command.to_string(),
        seeds: vec![scenario.sim.seed],
        facts: vec![
            ("algorithm".to_string(), report.algorithm.clone()),
            ("nodes".to_string(), report.members.to_string()),
            ("simulated".to_string(), format_duration(report.end_ns)),
            ("events".to_string(), report.events.to_string()),
        ],
        sections: sections(report, &charts),
    };
    Ok((doc, charts))
}

/// A sequence diagram to draw: its file stem, caption and window of true time.
struct SequencePlan {
    name: String,
    caption: String,
    window: (u64, u64),
}

/// The sequence diagrams of a run: around each of its first failovers or, without one,
/// its first election.
fn sequence_plans(report: &RunReport) -> Vec<SequencePlan> {
    let mut plans: Vec<SequencePlan> = report
        .failovers
        .iter()
        .take(SEQUENCES_SHOWN)
        .enumerate()
        .map(|(i, f)| {
            let settled = f.recovery_ns.or(f.election_ns).map(|d| f.at_ns + d);
            SequencePlan {
                name: format!("sequence_failover_{}", i + 1),
                caption: format!(
                    "Messages around the failover at {} ({})",
                    format_duration(f.at_ns),
                    f.cause
                ),
                window: sequence_window(f.at_ns, settled),
            }
        })
        .collect();
    if report.failovers.is_empty()
        && let Some(e) = report.elections.first()
    {
        plans.push(SequencePlan {
            name: "sequence_election".to_string(),
            caption: format!(
                "Messages of the first election, from {}",
                format_duration(e.started_ns)
            ),
            window: sequence_window(e.started_ns, e.decided_ns),
        });
    }
    plans
}

/// The traces of `windows`, kept by a [`FailoverRecorder`] during the run of `scenario`.
/// A window too long for the recorder's budget ([`CapturedWindow::TooLong`]) comes from a
/// second run that keeps only it, now that its bounds are known: memory stays flat in the
/// length of the run either way.
pub fn kept_windows(
    scenario: &Scenario,
    windows: Vec<CapturedWindow>,
) -> Result<Vec<SequenceTrace>, RunError> {
    let too_long: Vec<(u64, u64)> = windows
        .iter()
        .filter(|w| matches!(w, CapturedWindow::TooLong { .. }))
        .map(CapturedWindow::bounds)
        .collect();
    let mut again = if too_long.is_empty() {
        Vec::new()
    } else {
        let mut recorder = SequenceRecorder::new(&too_long);
        let sim = scenario.sim.clone();
        run_watched(&scenario.algorithm, sim, Some(&mut recorder), &|| false)?;
        recorder.finish_windows()
    }
    .into_iter();
    let traces = windows
        .into_iter()
        .map(|w| match w {
            CapturedWindow::Kept(trace) => trace,
            CapturedWindow::TooLong { .. } => again.next().expect("one trace per long window"),
        })
        .collect::<Vec<_>>();
    Ok(traces)
}

fn opt(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), format_duration)
}

fn sections(report: &RunReport, charts: &[Chart]) -> Vec<Section> {
    let mut leaders = Table::new(&["term", "leader", "claimed at"]);
    for c in report.leaders.iter().take(50) {
        leaders.push(vec![
            c.term.to_string(),
            c.node.to_string(),
            format_duration(c.at_ns),
        ]);
    }
    let mut failovers = Table::new(&[
        "at",
        "cause",
        "detection",
        "election",
        "recovery",
        "unavailable",
        "all heard",
        "rounds",
        "eligible rounds",
        "outcome",
    ]);
    let na = |reports: bool, shown: String| if reports { shown } else { "n/a".to_string() };
    for f in &report.failovers {
        failovers.push(vec![
            format_duration(f.at_ns),
            f.cause.clone(),
            opt(f.detection_ns),
            opt(f.election_ns),
            opt(f.recovery_ns),
            opt(f.unavailable_ns),
            na(report.signals.leader_heard, opt(f.followers_heard_ns)),
            f.rounds.to_string(),
            na(
                report.signals.campaign_eligibility,
                f.eligible_rounds.map_or("-".to_string(), |r| r.to_string()),
            ),
            format!("{:?}", f.outcome),
        ]);
    }
    let mut messages = Table::new(&[
        "type",
        "sent",
        "delivered",
        "dropped",
        "duplicated",
        "in flight",
    ]);
    for m in report.messages.iter().filter(|m| m.sent > 0) {
        messages.push(vec![
            m.kind.clone(),
            m.sent.to_string(),
            m.delivered.to_string(),
            m.dropped.to_string(),
            m.duplicated.to_string(),
            m.in_flight.to_string(),
        ]);
    }
    let verdicts: Vec<String> = if report.violations.is_empty() {
        vec!["no safety invariant broke".to_string()]
    } else {
        report
            .violations
            .iter()
            .map(|v| format!("{}: {}", v.invariant, v.detail))
            .collect()
    };
    let chart_blocks = |prefix: &str| -> Vec<Block> {
        charts
            .iter()
            .filter(|c| c.name.starts_with(prefix))
            .map(|c| Block::Chart(c.name.clone()))
            .collect()
    };
    let step = format!(
        "{VIEW_FILE}, beside this report, steps through the run event by event: each \
         process's role, term and state at any event, the messages and faults, and the first \
         violation (open it in a browser; add #event=N to its address to open at event N)."
    );
    let mut out = vec![
        Section {
            heading: "Verdicts".to_string(),
            blocks: vec![Block::List(verdicts), Block::Text(step)],
        },
        Section {
            heading: "Leadership".to_string(),
            blocks: [chart_blocks("timeline"), vec![Block::Table(leaders)]].concat(),
        },
    ];
    out.push(Section {
        heading: "Failovers".to_string(),
        blocks: [vec![Block::Table(failovers)], chart_blocks("sequence")].concat(),
    });
    out.push(Section {
        heading: "Messages".to_string(),
        blocks: [vec![Block::Table(messages)], chart_blocks("messages")].concat(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run of `scenario` with `recorder` riding along.
    fn captured(scenario: &Scenario, mut recorder: FailoverRecorder) -> CapturedWindows {
        let sim = scenario.sim.clone();
        splitbrain_algorithms::run(&scenario.algorithm, sim, Some(&mut recorder))
            .expect("within limits");
        recorder.finish_windows()
    }

    #[test]
    fn a_window_too_long_for_the_recorder_comes_identical_from_a_second_run() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/raft-leader-crash.ron");
        let scenario = splitbrain_scenario::load(&file).expect("a shipped scenario");
        let one_pass = captured(&scenario, recorder()).failovers;
        let too_long = captured(&scenario, recorder().with_budget(1)).failovers;
        assert!(!one_pass.is_empty(), "the leader crash is a failover");
        assert!(one_pass
            .iter()
            .all(|w| matches!(w, CapturedWindow::Kept(_))));
        assert!(too_long
            .iter()
            .all(|w| matches!(w, CapturedWindow::TooLong { .. })));
        assert_eq!(
            kept_windows(&scenario, too_long).expect("within limits"),
            kept_windows(&scenario, one_pass).expect("within limits")
        );
    }
}
