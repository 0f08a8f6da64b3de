//! The failover-time CDF: one empirical distribution per algorithm or parameter value.

use super::legend::{self, Legend, Mark, MAX_NOTE_CHARS};
use super::style::{
    color, short_duration, split_parameter, text, tick, TimeUnit, AXIS_DESC_PX, GRID, INK,
};
use super::style::{NOTE_PX, TICK_PX, TITLE_PX, WIDTH};
use super::{render, Chart, ChartError, DrawResult, Figure};
use crate::stats::Distribution;
use crate::table::{Cell, DataTable};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The failover times of one algorithm or parameter value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdfSeries {
    /// The series' name in the legend and in the data table's `series` column. A sweep's
    /// labels, `name=value` with one `name`, say `name` once, as the legend's heading.
    pub label: String,
    /// Failover times in nanoseconds, in any order.
    pub samples_ns: Vec<u64>,
    /// Failovers that never completed (the run ended first). They count in the denominator,
    /// so the curve tops out below 1 when there are any.
    pub unresolved: usize,
}

/// A recovery-time objective to draw as a vertical line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Objective {
    /// What the line means, e.g. `objective: p99 ≤ 2s`.
    pub label: String,
    /// Where the line is drawn: a failover time in nanoseconds.
    pub at_ns: u64,
}

/// The empirical CDF of failover times, one step curve per series: x is the failover time
/// (`x_label`, with a unit chosen from the data), y the fraction of failovers that took at
/// most that long. The data table has one row per sample (`series, failover_ns,
/// cumulative_fraction`), sorted, then one row per unresolved failover with empty values.
pub fn failover_cdf(
    name: &str,
    title: &str,
    x_label: &str,
    series: &[CdfSeries],
    objective: Option<&Objective>,
) -> Result<Chart, ChartError> {
    let mut data = DataTable::new(name, &["series", "failover_ns", "cumulative_fraction"]);
    let mut curves = Vec::with_capacity(series.len());
    for s in series {
        let mut sorted = s.samples_ns.clone();
        sorted.sort_unstable();
        let total = sorted.len() + s.unresolved;
        let steps: Vec<(u64, f64)> = sorted
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, (i + 1) as f64 / total as f64))
            .collect();
        for &(x, fraction) in &steps {
            data.push(vec![s.label.as_str().into(), x.into(), fraction.into()]);
        }
        for _ in 0..s.unresolved {
            data.push(vec![s.label.as_str().into(), Cell::Empty, Cell::Empty]);
        }
        curves.push(steps);
    }
    let figure = CdfFigure {
        title,
        x_label,
        series,
        curves,
        objective,
    };
    render(name, title, data, &figure)
}

struct CdfFigure<'a> {
    title: &'a str,
    x_label: &'a str,
    series: &'a [CdfSeries],
    /// Per series: sorted `(failover_ns, cumulative fraction)`.
    curves: Vec<Vec<(u64, f64)>>,
    objective: Option<&'a Objective>,
}

impl Figure for CdfFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 675)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let canvas = root;
        canvas.fill(&WHITE)?;
        let root = canvas.titled(self.title, text(TITLE_PX, INK))?;
        let labels: Vec<&str> = self.series.iter().map(|s| s.label.as_str()).collect();
        let (parameter, labels) = split_parameter(&labels);
        let objective_label = self.objective.map(|o| o.label.as_str());
        let legend_px = legend::width_for(labels.iter().map(String::as_str).chain(objective_label));
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - legend_px);

        let max_ns = self
            .curves
            .iter()
            .flat_map(|c| c.last().map(|&(x, _)| x))
            .chain(self.objective.map(|o| o.at_ns))
            .max()
            .unwrap_or(0);
        let unit = TimeUnit::for_max(max_ns.max(1));
        let x_max = if max_ns == 0 {
            1.0
        } else {
            unit.of(max_ns) * 1.05
        };

        let mut chart = ChartBuilder::on(&plot_area)
            .margin(16)
            .x_label_area_size(64)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..x_max, 0.0..1.02)?;
        let x_step = x_max / 10.0;
        chart
            .configure_mesh()
            .light_line_style(GRID.mix(0.0))
            .bold_line_style(GRID)
            .x_labels(10)
            .y_labels(11)
            .x_desc(format!("{} ({})", self.x_label, unit.symbol))
            .y_desc("fraction of failovers ≤ x")
            .axis_desc_style(text(AXIS_DESC_PX, INK))
            .label_style(text(TICK_PX, INK))
            .x_label_formatter(&|v| tick(*v, x_step))
            .y_label_formatter(&|v| tick(*v, 0.1))
            .draw()?;

        let mut legend = Legend {
            heading: parameter,
            ..Legend::default()
        };
        for (i, (label, curve)) in labels.iter().zip(&self.curves).enumerate() {
            let c = color(i);
            let mut points = Vec::with_capacity(curve.len() * 2 + 1);
            let mut previous = 0.0;
            for &(x, fraction) in curve {
                points.push((unit.of(x), previous));
                points.push((unit.of(x), fraction));
                previous = fraction;
            }
            if let Some(&(x, fraction)) = curve.last() {
                // Carry the final level to the right edge: where the curve plateaus matters.
                if unit.of(x) < x_max {
                    points.push((x_max, fraction));
                }
            }
            chart.draw_series(LineSeries::new(points, c.stroke_width(3)))?;
            legend.entry(label.clone(), c, Mark::Line);
        }

        if let Some(objective) = self.objective {
            let x = unit.of(objective.at_ns);
            chart.draw_series(DashedLineSeries::new(
                vec![(x, 0.0), (x, 1.02)],
                10,
                6,
                INK.stroke_width(2),
            ))?;
            // Low on the right of the line: where CDF curves have already climbed away.
            let (px, py) = chart.backend_coord(&(x, 0.04));
            canvas.draw(&Text::new(
                objective.label.clone(),
                (px + 8, py),
                text(NOTE_PX, INK).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Bottom,
                )),
            ))?;
            legend.entry(objective.label.clone(), INK, Mark::Dashed);
        }

        let stats: Vec<String> = self
            .series
            .iter()
            .map(|s| match Distribution::from_nanos(&s.samples_ns) {
                Some(d) => format!(
                    "n={} p50 {} p99 {}",
                    d.count,
                    short_duration(d.p50_ns),
                    short_duration(d.p99_ns)
                ),
                None => "no completed failover".to_string(),
            })
            .collect();
        // Short labels (swept values) share the line with their numbers, so that nine values
        // still fit; then every label does, so the lines read alike.
        let one_line = labels.iter().zip(&stats).all(|(label, stats)| {
            label.chars().count() + 1 + stats.chars().count() <= MAX_NOTE_CHARS
        });
        for ((s, label), stats) in self.series.iter().zip(&labels).zip(&stats) {
            if one_line {
                legend.notes.push(format!("{label} {stats}"));
            } else {
                legend.notes.push(label.clone());
                legend.notes.push(format!("  {stats}"));
            }
            if s.unresolved > 0 {
                legend.notes.push(format!("  {} unresolved", s.unresolved));
            }
        }
        if self.series.iter().all(|s| s.samples_ns.is_empty()) {
            let (px, py) = chart.backend_coord(&(x_max / 2.0, 0.5));
            canvas.draw(&Text::new(
                "no completed failover to show",
                (px, py),
                text(AXIS_DESC_PX, INK).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                )),
            ))?;
        }
        legend.draw(&legend_area.margin(60, 0, 0, 0))?;
        Ok(())
    }
}
