//! splitbrain-reports: charts and reports from run results (issue 6).
//!
//! It reads result types only (`splitbrain_sim::report`, typed trace events) and knows no
//! algorithm: algorithm names arrive as strings. The CLI's `compare`, `sweep` and
//! `run --plot` build on these parts:
//!
//! - [`stats`]: [`Distribution`] (count, min, nearest-rank p50/p90/p99, max, mean);
//! - [`aggregate`]: run results to chart inputs (failover series, messages per election);
//! - [`chart`]: one function per chart, plain data in, a [`Chart`] (SVG, PNG and the numbers
//!   behind it) out, byte-for-byte deterministic and drawn with an embedded font;
//! - [`write_report`]: an output folder with `report.md`, a self-contained `report.html`,
//!   every chart as SVG and PNG and every table of numbers as CSV and JSON;
//! - [`view`]: `run.html`, one run to step through event by event (`run --plot`).
//! - [`file`](mod@file): output files written atomically (a partial name, then a rename), shared with
//!   the CLI and the hunt's writers.
//!
//! `docs/reports.md` describes each chart and the files of an output folder.
//!
//! Charts, report folders and run.html (`aggregate`, `chart`, `view`, `write_report`) come
//! with the `charts` feature, on by default. Without it (`default-features = false`, as
//! `splitbrain-lab` and `splitbrain-harness` have it) the crate is [`file`](mod@file),
//! [`table`], [`stats`] and [`doc`], and builds none of plotters and png.

#![warn(missing_docs)]

#[cfg(feature = "charts")]
pub mod aggregate;
#[cfg(feature = "charts")]
pub mod chart;
pub mod doc;
pub mod file;
#[cfg(feature = "charts")]
mod html;
#[cfg(feature = "charts")]
mod markdown;
pub mod stats;
pub mod table;
#[cfg(feature = "charts")]
pub mod view;
#[cfg(feature = "charts")]
mod write;

#[cfg(feature = "charts")]
pub use aggregate::{
    election_messages, eligible_first_round_share, failover_series, first_round_share,
    ElectionTally, FailoverMeasure,
};
#[cfg(feature = "charts")]
pub use chart::{
    curves_over_time, failover_cdf, leadership_timeline, messages_per_election,
    messages_vs_cluster_size, sequence_diagram, sequence_diagram_of, sequence_window,
    AroundFailovers, CapturedWindow, CapturedWindows, CdfSeries, Chart, ChartError, CurveSeries,
    ElectionMessages, FailoverRecorder, LeaseWindow, Objective, ScalingSeries, SequenceLabels,
    SequenceRecorder, SequenceTrace, Settle, OPEN_WINDOW_BUDGET_EVENTS, SEQUENCE_LOOKBACK_NS,
    SEQUENCE_MAX_ARROWS,
};
#[cfg(feature = "charts")]
pub use chart::{share_by_value, wilson_interval, ShareSeries};
pub use doc::{format_seeds, Block, ReportDoc, Section};
/// The trace's typed events, re-exported for callers that read `--trace` files.
pub use splitbrain_sim::trace::{parse_trace, parse_trace_line, TraceEvent, TraceParseError};
pub use stats::Distribution;
pub use table::{Cell, DataTable, Table};
#[cfg(feature = "charts")]
pub use view::{
    run_view_html, write_run_view, ViewPage, ViewRecorder, ViewTrace, VIEW_FILE, VIEW_MAX_EVENTS,
};
#[cfg(feature = "charts")]
pub use write::{write_report, ReportError, STAGING};
