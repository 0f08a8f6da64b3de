//! The share of trials with some outcome (a safety violation, say) at each value of a swept
//! parameter, one line per design: "probability of a safety violation against pause length".
//! Each point carries its 95% interval (Wilson), so 3 of 20 is not read as 15% exactly.

use super::legend::{self, Legend, Mark};
use super::style::WIDTH;
use super::style::{color, text, AXIS_DESC_PX, GRID, INK, TICK_PX, TITLE_PX};
use super::{render, Chart, ChartError, DrawResult, Figure};
pub use crate::stats::wilson_interval;
use crate::table::DataTable;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One design's counts at each value: `(with the outcome, trials)`, `None` where it did not
/// run.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareSeries {
    /// The series' name in the legend and in the data table's `series` column.
    pub label: String,
    /// One entry per category of [`share_by_value`], in the same order.
    pub counts: Vec<Option<(u64, u64)>>,
    /// Drawn dashed in the colour of the series before it: the same design under another
    /// setting (without fencing, say).
    pub dashed: bool,
}

/// Points joined by lines: x = the parameter's values (`categories`, evenly spaced in the
/// order given, or at `positions` on a numeric axis when the values are numbers), y = the
/// share of trials, 0 to 100%, with a 95% interval bar at each point. The data table has one
/// row per point: `series, value, hits, trials, share, low, high`.
pub fn share_by_value(
    name: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    positions: Option<&[f64]>,
    series: &[ShareSeries],
) -> Result<Chart, ChartError> {
    let mut data = DataTable::new(
        name,
        &[
            "series", "value", "hits", "trials", "share", "low95", "high95",
        ],
    );
    for s in series {
        for (value, count) in categories.iter().zip(&s.counts) {
            let Some((hits, trials)) = *count else {
                continue;
            };
            let (low, high) = wilson_interval(hits, trials);
            let share = if trials == 0 {
                0.0
            } else {
                hits as f64 / trials as f64
            };
            data.push(vec![
                s.label.as_str().into(),
                value.as_str().into(),
                hits.into(),
                trials.into(),
                share.into(),
                low.into(),
                high.into(),
            ]);
        }
    }
    let axis = match positions {
        Some(at) if at.len() == categories.len() && at.iter().all(|x| x.is_finite()) => {
            Axis::Numeric(at)
        }
        _ => Axis::Categories,
    };
    let figure = ShareFigure {
        title,
        x_label,
        y_label,
        categories,
        axis,
        series,
    };
    render(name, title, data, &figure)
}

struct ShareFigure<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    categories: &'a [String],
    axis: Axis<'a>,
    series: &'a [ShareSeries],
}

/// Where the values go along x.
#[derive(Clone, Copy)]
enum Axis<'a> {
    /// Evenly spaced, in the order given (ranges, choices).
    Categories,
    /// At these numbers, one per category.
    Numeric(&'a [f64]),
}

impl Axis<'_> {
    /// The x of category `index`.
    fn x(&self, index: usize) -> f64 {
        match self {
            Axis::Categories => index as f64,
            Axis::Numeric(at) => at[index],
        }
    }

    /// The x range drawn, and one category-width's worth of x (for offsets and caps).
    fn extent(&self, categories: usize) -> (std::ops::Range<f64>, f64) {
        match self {
            Axis::Categories => (-0.5..categories.saturating_sub(1) as f64 + 0.5, 1.0),
            Axis::Numeric(at) => {
                let low = at.iter().copied().fold(f64::INFINITY, f64::min);
                let high = at.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let span = if high > low {
                    high - low
                } else {
                    low.abs().max(1.0)
                };
                let unit = span / categories.max(2) as f64;
                ((low - span * 0.08)..(high + span * 0.08), unit)
            }
        }
    }
}

impl Figure for ShareFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 675)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let root = root.titled(self.title, text(TITLE_PX, INK))?;
        let legend_px = legend::width_for(self.series.iter().map(|s| s.label.as_str()));
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - legend_px);
        let (x_range, unit) = self.axis.extent(self.categories.len());
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(16)
            .x_label_area_size(64)
            .y_label_area_size(90)
            .build_cartesian_2d(x_range, -0.02..1.02)?;
        let categories = self.categories;
        let numeric = matches!(self.axis, Axis::Numeric(_));
        let x_labels = if numeric {
            8
        } else {
            categories.len().max(2) * 2 + 1
        };
        let label_x = |v: &f64| {
            if numeric {
                numeric_tick(*v)
            } else {
                category_at(categories, *v)
            }
        };
        chart
            .configure_mesh()
            .light_line_style(GRID.mix(0.0))
            .bold_line_style(GRID)
            .x_labels(x_labels)
            .y_labels(6)
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .axis_desc_style(text(AXIS_DESC_PX, INK))
            .label_style(text(TICK_PX, INK))
            .x_label_formatter(&label_x)
            .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
            .draw()?;
        let mut legend = Legend::default();
        let spread = 0.12 * unit / self.series.len().max(1) as f64;
        let cap = 0.03 * unit;
        let mut colour_index = 0;
        for (i, s) in self.series.iter().enumerate() {
            if i > 0 && !s.dashed {
                colour_index += 1;
            }
            let c = color(colour_index);
            // Designs side by side at each value, so their bars do not cover one another.
            let dx = (i as f64 - (self.series.len() as f64 - 1.0) / 2.0) * spread;
            let mut points: Vec<(f64, f64, f64, f64)> = s
                .counts
                .iter()
                .enumerate()
                .filter_map(|(index, count)| {
                    let (hits, trials) = (*count)?;
                    let (low, high) = wilson_interval(hits, trials);
                    let share = hits as f64 / trials.max(1) as f64;
                    Some((self.axis.x(index) + dx, share, low, high))
                })
                .collect();
            // Values given out of order still join left to right.
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let line = points.iter().map(|&(x, y, _, _)| (x, y));
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(line, 10, 6, c.stroke_width(3)))?;
            } else {
                chart.draw_series(LineSeries::new(line, c.stroke_width(3)))?;
            }
            for &(x, y, low, high) in &points {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, low), (x, high)],
                    c.stroke_width(2),
                )))?;
                for end in [low, high] {
                    let cap = vec![(x - cap, end), (x + cap, end)];
                    chart.draw_series(std::iter::once(PathElement::new(cap, c.stroke_width(2))))?;
                }
                chart.draw_series(std::iter::once(Circle::new((x, y), 6, c.filled())))?;
            }
            let mark = if s.dashed { Mark::Dashed } else { Mark::Dot };
            legend.entry(s.label.clone(), c, mark);
        }
        legend.notes.push("bars: 95% interval (Wilson)".to_string());
        legend.draw(&legend_area.margin(60, 0, 0, 0))?;
        Ok(())
    }
}

/// A numeric tick: as few decimals as show it (`2`, `0.5`, `0.05`).
fn numeric_tick(v: f64) -> String {
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// The category at an x position: the label when it falls on one, else nothing.
fn category_at(categories: &[String], x: f64) -> String {
    let index = x.round();
    if (x - index).abs() > 1e-6 || index < 0.0 {
        return String::new();
    }
    categories.get(index as usize).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wilson_interval_matches_published_values() {
        // Wilson (1927) as tabulated by Newcombe (1998), table I: 0 of 10 -> 0 to 0.2775;
        // 1 of 29 -> 0.0061 to 0.1718; 15 of 148 -> 0.0624 to 0.1605.
        let close =
            |(a, b): (f64, f64), (x, y): (f64, f64)| (a - x).abs() < 5e-4 && (b - y).abs() < 5e-4;
        assert!(close(wilson_interval(0, 10), (0.0, 0.2775)));
        assert!(close(wilson_interval(1, 29), (0.0061, 0.1718)));
        assert!(close(wilson_interval(15, 148), (0.0624, 0.1605)));
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
        let (low, high) = wilson_interval(20, 20);
        assert!(low > 0.8 && high == 1.0);
    }

    #[test]
    fn only_whole_positions_name_a_category() {
        let c = vec!["5s".to_string(), "10s".to_string()];
        assert_eq!(category_at(&c, 1.0), "10s");
        assert_eq!(category_at(&c, 0.5), "");
        assert_eq!(category_at(&c, 2.0), "");
    }
}
