//! Message count against cluster size, both axes logarithmic: how an algorithm scales.

use super::legend::{self, Legend, Mark};
use super::style::{color, split_parameter, text, AXIS_DESC_PX, GRID, INK, MUTED, NOTE_PX};
use super::style::{TICK_PX, TITLE_PX, WIDTH};
use super::{render, Chart, ChartError, DrawResult, Figure};
use crate::table::DataTable;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::Range;

/// One algorithm's (or parameter value's) message counts at several cluster sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingSeries {
    /// The series' name in the legend and in the data table's `series` column. A sweep's
    /// labels, `name=value` with one `name`, say `name` once, as the legend's heading.
    pub label: String,
    /// `(nodes, messages)`, in any order; points with no messages cannot sit on a log axis
    /// and are left out of the picture (not of the data).
    pub points: Vec<(u64, f64)>,
}

/// Points joined by lines on log-log axes: x = cluster size (nodes), y = messages
/// (`y_label` says which: per election, per run...). Grey dashed guides show the slopes of
/// growth proportional to n and to n², through the first series' smallest cluster. The data
/// table has one row per point: `series, nodes, messages`.
pub fn messages_vs_cluster_size(
    name: &str,
    title: &str,
    y_label: &str,
    series: &[ScalingSeries],
) -> Result<Chart, ChartError> {
    let mut data = DataTable::new(name, &["series", "nodes", "messages"]);
    let mut sorted = Vec::with_capacity(series.len());
    for s in series {
        let mut points = s.points.clone();
        points.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        for &(nodes, messages) in &points {
            data.push(vec![s.label.as_str().into(), nodes.into(), messages.into()]);
        }
        sorted.push(points);
    }
    let figure = ClusterFigure {
        title,
        y_label,
        series,
        sorted,
    };
    render(name, title, data, &figure)
}

struct ClusterFigure<'a> {
    title: &'a str,
    y_label: &'a str,
    series: &'a [ScalingSeries],
    sorted: Vec<Vec<(u64, f64)>>,
}

/// A linear axis (here over log10 values) with ticks exactly where we say.
struct TickedAxis {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let fraction = (value - self.range.start) / (self.range.end - self.range.start);
        limit.0 + (f64::from(limit.1 - limit.0) * fraction).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// Tick values 1-2-5 per decade within `[lo, hi]`; only powers of ten when that gives too
/// many.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = decade * m;
            if v >= lo && v <= hi {
                ticks.push(v);
            }
        }
        decade *= 10.0;
    }
    if ticks.len() > 12 {
        ticks.retain(|v| (v.log10() - v.log10().round()).abs() < 1e-9);
    }
    ticks
}

fn format_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{}k", v / 1e3)
    } else {
        format!("{v}")
    }
}

impl Figure for ClusterFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 675)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let canvas = root;
        canvas.fill(&WHITE)?;
        let root = canvas.titled(self.title, text(TITLE_PX, INK))?;
        let labels: Vec<&str> = self.series.iter().map(|s| s.label.as_str()).collect();
        let (parameter, labels) = split_parameter(&labels);
        let legend_px = legend::width_for(labels.iter().map(String::as_str));
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - legend_px);

        let drawable: Vec<(u64, f64)> = self
            .sorted
            .iter()
            .flatten()
            .copied()
            .filter(|&(n, m)| n > 0 && m > 0.0)
            .collect();
        let (n_lo, n_hi) = drawable
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &(n, _)| (lo.min(n), hi.max(n)));
        let (m_lo, m_hi) = drawable
            .iter()
            .fold((f64::MAX, 0.0_f64), |(lo, hi), &(_, m)| {
                (lo.min(m), hi.max(m))
            });
        let (n_lo, n_hi) = if drawable.is_empty() {
            (1.0, 10.0)
        } else {
            (n_lo as f64, n_hi as f64)
        };
        let (m_lo, m_hi) = if drawable.is_empty() {
            (1.0, 10.0)
        } else {
            (m_lo, m_hi)
        };
        // Log space, padded so points do not sit on the frame.
        let x_range = (n_lo.log10() - 0.08)..(n_hi.log10().max(n_lo.log10() + 0.3) + 0.08);
        let y_range = (m_lo.log10() - 0.15)..(m_hi.log10().max(m_lo.log10() + 0.5) + 0.15);

        let mut sizes: Vec<u64> = drawable.iter().map(|&(n, _)| n).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let x_ticks: Vec<f64> = if sizes.len() <= 12 {
            sizes.iter().map(|&n| (n as f64).log10()).collect()
        } else {
            log_ticks(10f64.powf(x_range.start), 10f64.powf(x_range.end))
                .iter()
                .map(|v| v.log10())
                .collect()
        };
        let y_ticks: Vec<f64> = log_ticks(10f64.powf(y_range.start), 10f64.powf(y_range.end))
            .iter()
            .map(|v| v.log10())
            .collect();

        let mut chart = ChartBuilder::on(&plot_area)
            .margin(16)
            .x_label_area_size(64)
            .y_label_area_size(90)
            .build_cartesian_2d(
                TickedAxis {
                    range: x_range.clone(),
                    ticks: x_ticks,
                },
                TickedAxis {
                    range: y_range.clone(),
                    ticks: y_ticks,
                },
            )?;
        chart
            .configure_mesh()
            .light_line_style(GRID.mix(0.0))
            .bold_line_style(GRID)
            .x_desc("cluster size (nodes, log scale)")
            .y_desc(format!("{} (log scale)", self.y_label))
            .axis_desc_style(text(AXIS_DESC_PX, INK))
            .label_style(text(TICK_PX, INK))
            .x_label_formatter(&|v| format!("{}", 10f64.powf(*v).round()))
            .y_label_formatter(&|v| format_count(round_sig(10f64.powf(*v))))
            .draw()?;

        // Reference slopes through the first drawable point of the first series.
        let anchor = self
            .sorted
            .iter()
            .flatten()
            .find(|&&(n, m)| n > 0 && m > 0.0)
            .copied();
        if let Some((n0, m0)) = anchor {
            let (x0, y0) = ((n0 as f64).log10(), m0.log10());
            for (slope, label) in [(1.0, "∝ n"), (2.0, "∝ n²")] {
                let x1 = x_range.end;
                let y1 = (y0 + slope * (x1 - x0)).min(y_range.end);
                let x1 = x0 + (y1 - y0) / slope;
                chart.draw_series(DashedLineSeries::new(
                    vec![(x0, y0), (x1, y1)],
                    8,
                    6,
                    MUTED.mix(0.7).stroke_width(2),
                ))?;
                let (px, py) = chart.backend_coord(&(x1, y1));
                // Above the end of the guide, clear of the line itself.
                canvas.draw(&Text::new(
                    label,
                    (px - 8, py - 8),
                    text(NOTE_PX, MUTED).pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Right,
                        plotters::style::text_anchor::VPos::Bottom,
                    )),
                ))?;
            }
        }

        let mut legend = Legend {
            heading: parameter,
            ..Legend::default()
        };
        for (i, (label, points)) in labels.iter().zip(&self.sorted).enumerate() {
            let c = color(i);
            let log_points: Vec<(f64, f64)> = points
                .iter()
                .filter(|&&(n, m)| n > 0 && m > 0.0)
                .map(|&(n, m)| ((n as f64).log10(), m.log10()))
                .collect();
            chart.draw_series(LineSeries::new(log_points.clone(), c.stroke_width(3)))?;
            chart.draw_series(log_points.iter().map(|&p| Circle::new(p, 6, c.filled())))?;
            legend.entry(label.clone(), c, Mark::Dot);
        }
        legend.notes.push("dashed: growth ∝ n and ∝ n²".to_string());
        legend.draw(&legend_area.margin(60, 0, 0, 0))?;
        Ok(())
    }
}

/// Rounds to three significant digits, so `10^log10(200)` prints as `200`.
fn round_sig(v: f64) -> f64 {
    if v <= 0.0 {
        return v;
    }
    let magnitude = 10f64.powf(v.log10().floor() - 2.0);
    (v / magnitude).round() * magnitude
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_go_one_two_five_per_decade() {
        assert_eq!(log_ticks(3.0, 120.0), vec![5.0, 10.0, 20.0, 50.0, 100.0]);
    }

    #[test]
    fn counts_print_short() {
        assert_eq!(format_count(round_sig(10f64.powf(200f64.log10()))), "200");
        assert_eq!(format_count(50_000.0), "50k");
        assert_eq!(format_count(2_000_000.0), "2M");
    }
}
