//! A quantity over a run's time: one step line per design or parameter value (the number
//! of ranges unavailable after a fault, say).

use super::legend::{self, Legend, Mark};
use super::style::{color, split_parameter, text, tick, TimeUnit, AXIS_DESC_PX, GRID, INK};
use super::style::{TICK_PX, TITLE_PX, WIDTH};
use super::{render, Chart, ChartError, DrawResult, Figure};
use crate::table::DataTable;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One line of a curve chart.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveSeries {
    /// The line's name in the legend and in the data table's `series` column.
    pub label: String,
    /// `(time in nanoseconds, value)`, sorted by time; each value holds until the next.
    pub points: Vec<(u64, f64)>,
}

/// A step line per series: x is the time (a unit chosen from the data), y the value
/// (`y_label`). The data table has one row per point (`series, t_ns, value`).
///
/// ```
/// use splitbrain_reports::chart::{curves_over_time, CurveSeries};
///
/// let down = CurveSeries {
///     label: "epoch".to_string(),
///     points: vec![(0, 0.0), (10_000_000_000, 90.0), (16_000_000_000, 0.0)],
/// };
/// let chart = curves_over_time("down", "Ranges unavailable", "ranges", &[down]).unwrap();
/// assert!(chart.png.starts_with(b"\x89PNG"));
/// assert_eq!(chart.data.rows.len(), 3);
/// ```
pub fn curves_over_time(
    name: &str,
    title: &str,
    y_label: &str,
    series: &[CurveSeries],
) -> Result<Chart, ChartError> {
    let mut data = DataTable::new(name, &["series", "t_ns", "value"]);
    for s in series {
        for &(at, value) in &s.points {
            data.push(vec![s.label.as_str().into(), at.into(), value.into()]);
        }
    }
    let figure = CurveFigure {
        title,
        y_label,
        series,
    };
    render(name, title, data, &figure)
}

struct CurveFigure<'a> {
    title: &'a str,
    y_label: &'a str,
    series: &'a [CurveSeries],
}

impl Figure for CurveFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let root = root.titled(self.title, text(TITLE_PX, INK))?;
        let labels: Vec<&str> = self.series.iter().map(|s| s.label.as_str()).collect();
        let (parameter, labels) = split_parameter(&labels);
        let legend_px = legend::width_for(labels.iter().map(String::as_str));
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - legend_px);

        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let max_ns = points().map(|&(at, _)| at).max().unwrap_or(0).max(1);
        let max_value = points().map(|&(_, v)| v).fold(0.0f64, f64::max);
        let unit = TimeUnit::for_max(max_ns);
        let x_max = unit.of(max_ns);
        let y_max = if max_value > 0.0 {
            max_value * 1.08
        } else {
            1.0
        };
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(16)
            .x_label_area_size(64)
            .y_label_area_size(90)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
        let (x_step, y_step) = (x_max / 10.0, y_max / 10.0);
        chart
            .configure_mesh()
            .light_line_style(GRID.mix(0.0))
            .bold_line_style(GRID)
            .x_labels(10)
            .y_labels(10)
            .x_desc(format!("time since the run's start ({})", unit.symbol))
            .y_desc(self.y_label)
            .axis_desc_style(text(AXIS_DESC_PX, INK))
            .label_style(text(TICK_PX, INK))
            .x_label_formatter(&|v| tick(*v, x_step))
            .y_label_formatter(&|v| tick(*v, y_step))
            .draw()?;
        let mut legend = Legend {
            heading: parameter,
            ..Legend::default()
        };
        for (i, (label, s)) in labels.iter().zip(self.series).enumerate() {
            let c = color(i);
            let mut steps = Vec::with_capacity(s.points.len() * 2);
            let mut previous: Option<f64> = None;
            for &(at, value) in &s.points {
                let x = unit.of(at);
                if let Some(previous) = previous {
                    steps.push((x, previous));
                }
                steps.push((x, value));
                previous = Some(value);
            }
            chart.draw_series(LineSeries::new(steps, c.stroke_width(3)))?;
            legend.entry(label.clone(), c, Mark::Line);
        }
        legend.draw(&legend_area.margin(60, 0, 0, 0))?;
        Ok(())
    }
}
