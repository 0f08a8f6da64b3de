//! Messages per election, stacked by message type, one bar per algorithm or parameter value.

use super::legend::{self, Legend, Mark};
use super::style::{
    color, is_dark, split_parameter, text, tick, wrap, AXIS_DESC_PX, GRID, INK, NOTE_PX,
};
use super::style::{TICK_PX, TITLE_PX, WIDTH};
use super::{render, Chart, ChartError, DrawResult, Figure};
use crate::table::DataTable;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The mean messages per election of one algorithm or parameter value, by message type.
#[derive(Clone, Debug, PartialEq)]
pub struct ElectionMessages {
    /// The bar's name, written under it and in the data table's `group` column. A sweep's
    /// labels, `name=value` with one `name`, are written under the bars without `name=`.
    pub label: String,
    /// `(message type, mean count per election)`, in the order to stack them (bottom first).
    pub per_kind: Vec<(String, f64)>,
}

/// Stacked bars: one bar per group (`group_axis` names what the groups are, e.g.
/// `algorithm`), one segment per message type, y = messages per election. Each type keeps
/// one colour across bars (types in order of first appearance). The data table has one row
/// per bar segment: `group, kind, messages_per_election`.
pub fn messages_per_election(
    name: &str,
    title: &str,
    group_axis: &str,
    groups: &[ElectionMessages],
) -> Result<Chart, ChartError> {
    let mut data = DataTable::new(name, &["group", "kind", "messages_per_election"]);
    let mut kinds: Vec<&str> = Vec::new();
    for g in groups {
        for (kind, mean) in &g.per_kind {
            data.push(vec![
                g.label.as_str().into(),
                kind.as_str().into(),
                (*mean).into(),
            ]);
            if !kinds.contains(&kind.as_str()) {
                kinds.push(kind);
            }
        }
    }
    let figure = StackedFigure {
        title,
        group_axis,
        groups,
        kinds,
    };
    render(name, title, data, &figure)
}

/// The height of one line of a bar's name.
const LABEL_LINE_PX: u32 = 22;

struct StackedFigure<'a> {
    title: &'a str,
    group_axis: &'a str,
    groups: &'a [ElectionMessages],
    kinds: Vec<&'a str>,
}

impl StackedFigure<'_> {
    fn kind_color(&self, kind: &str) -> RGBColor {
        color(self.kinds.iter().position(|k| *k == kind).unwrap_or(0))
    }
}

impl Figure for StackedFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 675)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let canvas = root;
        canvas.fill(&WHITE)?;
        let root = canvas.titled(self.title, text(TITLE_PX, INK))?;
        let legend_px = legend::width_for(self.kinds.iter().copied());
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - legend_px);
        let labels: Vec<&str> = self.groups.iter().map(|g| g.label.as_str()).collect();
        let (_, labels) = split_parameter(&labels);
        let n_groups = self.groups.len().max(1);
        // Each bar's name wraps to its slot (about 10 px a character at the tick size): the
        // slot is the plot's width (less margins and the y labels) over the bars.
        let slot_px = (WIDTH - legend_px).saturating_sub(2 * 16 + 80) as usize / n_groups;
        let label_chars = (slot_px.saturating_sub(8) / 10).max(4);
        let wrapped: Vec<Vec<String>> = labels.iter().map(|l| wrap(l, label_chars)).collect();
        let label_lines = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);

        let totals: Vec<f64> = self
            .groups
            .iter()
            // From +0.0: `Sum for f64` starts from -0.0.
            .map(|g| g.per_kind.iter().fold(0.0, |sum, (_, m)| sum + m.max(0.0)))
            .collect();
        let max_total = totals.iter().copied().fold(0.0, f64::max);
        let y_max = if max_total > 0.0 {
            max_total * 1.12
        } else {
            1.0
        };
        let n = self.groups.len().max(1) as f64;

        let mut chart = ChartBuilder::on(&plot_area)
            .margin(16)
            .x_label_area_size(44 + LABEL_LINE_PX * label_lines as u32)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..n - 0.5, 0.0..y_max)?;
        let y_step = y_max / 10.0;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(GRID.mix(0.0))
            .bold_line_style(GRID)
            .x_labels(0)
            .y_labels(10)
            .x_desc(self.group_axis)
            .y_desc("messages per election (mean)")
            .axis_desc_style(text(AXIS_DESC_PX, INK))
            .label_style(text(TICK_PX, INK))
            .y_label_formatter(&|v| tick(*v, y_step))
            .draw()?;

        // Narrow bars when there are few groups, so one bar does not fill the chart.
        let half_width = (0.32_f64).min(0.32 * n / 2.0).max(0.2);
        let centered = |style| text(NOTE_PX, INK).pos(Pos::new(HPos::Center, style));
        for (i, ((group, total), lines)) in
            self.groups.iter().zip(&totals).zip(&wrapped).enumerate()
        {
            let x = i as f64;
            let mut base = 0.0;
            for (kind, mean) in &group.per_kind {
                let top = base + mean.max(0.0);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x - half_width, base), (x + half_width, top)],
                    self.kind_color(kind).filled(),
                )))?;
                let (x_left, y_base) = chart.backend_coord(&(x - half_width, base));
                let (px, y_top) = chart.backend_coord(&(x, top));
                if y_base - y_top >= 22 {
                    let c = self.kind_color(kind);
                    let ink = if is_dark(c) { WHITE } else { INK };
                    canvas.draw(&Text::new(
                        segment_label(kind, *mean, 2 * (px - x_left).max(0) as usize),
                        (px, (y_base + y_top) / 2),
                        text(NOTE_PX, ink).pos(Pos::new(HPos::Center, VPos::Center)),
                    ))?;
                }
                base = top;
            }
            let (px, py) = chart.backend_coord(&(x, *total));
            // A group without messages had no decided election: no mean to show.
            let total_label = if group.per_kind.is_empty() {
                "n/a".to_string()
            } else {
                tick(*total, 0.1)
            };
            canvas.draw(&Text::new(
                total_label,
                (px, py - 6),
                text(TICK_PX, INK).pos(Pos::new(HPos::Center, VPos::Bottom)),
            ))?;
            // The bar's name, whole, on as many lines as it needs.
            let (px, py) = chart.backend_coord(&(x, 0.0));
            for (k, line) in lines.iter().enumerate() {
                canvas.draw(&Text::new(
                    line.clone(),
                    (px, py + 10 + LABEL_LINE_PX as i32 * k as i32),
                    text(TICK_PX, INK).pos(Pos::new(HPos::Center, VPos::Top)),
                ))?;
            }
        }
        if self.groups.is_empty() {
            let (px, py) = chart.backend_coord(&(0.0, y_max / 2.0));
            canvas.draw(&Text::new(
                "no elections to show",
                (px, py),
                centered(VPos::Center),
            ))?;
        }

        let mut legend = Legend {
            heading: Some("message type".to_string()),
            ..Legend::default()
        };
        // Top of the stack first, as the eye reads it.
        for kind in self.kinds.iter().rev() {
            legend.entry(*kind, self.kind_color(kind), Mark::Box);
        }
        legend.notes.push("bar total above each bar".to_string());
        legend.draw(&legend_area.margin(60, 0, 0, 0))?;
        Ok(())
    }
}

/// A segment's label: its type and mean when they fit the bar (`bar_px` wide, about 8 px a
/// character at the note size), else the mean alone. With many types the palette repeats
/// and the legend is cut short, so the big segments name themselves.
fn segment_label(kind: &str, mean: f64, bar_px: usize) -> String {
    let value = tick(mean, 0.1);
    let named = format!("{kind} {value}");
    if named.chars().count() * 8 + 8 <= bar_px {
        named
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::segment_label;

    #[test]
    fn a_segment_names_its_type_when_the_bar_is_wide_enough() {
        assert_eq!(segment_label("KeepAlive", 1.8, 200), "KeepAlive 1.8");
        assert_eq!(segment_label("KeepAlive", 1.8, 60), "1.8");
    }
}
