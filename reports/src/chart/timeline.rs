//! The leadership timeline of one run: who believed it led when, in which term, under which
//! lease, and what faults struck meanwhile.

use super::legend::{Legend, Mark};
use super::style::{ellipsize, is_dark, term_color, text, tick, LabelPlacer, TimeUnit};
use super::style::{AXIS_DESC_PX, FAULT};
use super::style::{GRID, INK, LEASE, MUTED, NOTE_PX, TICK_PX, TITLE_PX, WIDTH};
use super::{render, Chart, ChartError, DrawResult, Figure};
use crate::table::{Cell, DataTable};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use splitbrain_sim::report::{FaultRecord, LeadershipSpan, RunReport};
use splitbrain_sim::{format_duration, Nanos, NodeId};

/// A lease the service held for a node, in true time: a run report's `lease_spans`. Raft
/// has none: pass an empty slice.
pub type LeaseWindow = splitbrain_sim::report::LeaseSpan;

/// Fault kinds that last until healed (or the end of the run); the others are instants.
const LASTING_FAULTS: [&str; 6] = ["crash", "partition", "pause", "stall", "loss", "duplicate"];
const ROW_PX: f64 = 56.0;
/// Faults listed under the chart; more are counted, not listed.
const MAX_KEY_LINES: usize = 10;
const KEY_LINE_PX: u32 = 24;
/// A generous width of one character of the key's text (`NOTE_PX` sans-serif), in pixels.
const KEY_CHAR_PX: i32 = 9;

/// One row per member (top to bottom `n0, n1, ...`, or `node_names`; also any modeled service
/// a fault struck, by its id): a bar for each
/// leadership span coloured and labelled by term, a thinner bar for each lease window, and
/// the fault windows shaded across every row (more strongly on the rows they struck), each
/// numbered and described in a key under the chart. When two nodes believed they led at
/// once, a red `≥2 leaders` row at the bottom shows when. x is true time in seconds.
///
/// The data table has one row per drawn item: `item` (`leadership`, `lease`, `fault`,
/// `overlap`), `node`, `term`, `from_ns`, `to_ns` (empty for a fault that never healed) and
/// `description`.
pub fn leadership_timeline(
    name: &str,
    title: &str,
    report: &RunReport,
    node_names: &[String],
    lease_windows: &[LeaseWindow],
) -> Result<Chart, ChartError> {
    let max_node = report
        .leadership_spans
        .iter()
        .map(|s| s.node.index() + 1)
        .chain(lease_windows.iter().map(|l| l.node.index() + 1))
        // A fault on a modeled service (an id past the members) gets a row too.
        .chain(
            report
                .faults
                .iter()
                .flat_map(|f| f.nodes.iter().map(|n| n.index() + 1)),
        )
        .max()
        .unwrap_or(0);
    let rows = report.members.max(max_node).max(1);
    let names: Vec<String> = (0..rows)
        .map(|i| {
            node_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| NodeId::from(i).to_string())
        })
        .collect();
    let overlaps = overlaps(&report.leadership_spans);

    let columns = ["item", "node", "term", "from_ns", "to_ns", "description"];
    let mut data = DataTable::new(name, &columns);
    for s in &report.leadership_spans {
        data.push(vec![
            "leadership".into(),
            names[s.node.index()].as_str().into(),
            s.term.into(),
            s.from_ns.into(),
            s.to_ns.into(),
            Cell::Empty,
        ]);
    }
    for l in lease_windows {
        let node = names[l.node.index()].as_str();
        let row = vec!["lease".into(), node.into(), Cell::Empty, l.from_ns.into()];
        data.push([row, vec![l.to_ns.into(), Cell::Empty]].concat());
    }
    for f in &report.faults {
        let nodes: Vec<&str> = f.nodes.iter().map(|n| names[n.index()].as_str()).collect();
        data.push(vec![
            "fault".into(),
            nodes.join(" ").into(),
            Cell::Empty,
            f.at_ns.into(),
            f.healed_at_ns.into(),
            f.description.as_str().into(),
        ]);
    }
    for &(from, to) in &overlaps {
        data.push(vec![
            "overlap".into(),
            Cell::Empty,
            Cell::Empty,
            from.into(),
            to.into(),
            Cell::Empty,
        ]);
    }

    let figure = TimelineFigure {
        title,
        report,
        names,
        lease_windows,
        overlaps,
    };
    render(name, title, data, &figure)
}

/// The intervals during which two or more spans overlap, merged and in order.
fn overlaps(spans: &[LeadershipSpan]) -> Vec<(Nanos, Nanos)> {
    let mut edges: Vec<(Nanos, i32)> = spans
        .iter()
        .filter(|s| s.to_ns > s.from_ns)
        .flat_map(|s| [(s.from_ns, 1), (s.to_ns, -1)])
        .collect();
    // At equal times, ends before starts: a hand-over at one instant is no overlap.
    edges.sort();
    let mut result: Vec<(Nanos, Nanos)> = Vec::new();
    let (mut active, mut since) = (0, 0);
    for (t, delta) in edges {
        let before = active;
        active += delta;
        if before < 2 && active >= 2 {
            since = t;
        } else if before >= 2 && active < 2 && t > since {
            match result.last_mut() {
                Some(last) if last.1 == since => last.1 = t,
                _ => result.push((since, t)),
            }
        }
    }
    result
}

struct TimelineFigure<'a> {
    title: &'a str,
    report: &'a RunReport,
    names: Vec<String>,
    lease_windows: &'a [LeaseWindow],
    overlaps: Vec<(Nanos, Nanos)>,
}

impl TimelineFigure<'_> {
    /// Rows of the plot: the nodes, plus the overlap row when there is overlap.
    fn lanes(&self) -> usize {
        self.names.len() + usize::from(!self.overlaps.is_empty())
    }

    /// The y coordinate of the bottom of node row `i` (row 0 at the top).
    fn row_bottom(&self, i: usize) -> f64 {
        (self.lanes() - 1 - i) as f64
    }

    fn key_lines(&self) -> usize {
        let n = self.report.faults.len();
        if n > MAX_KEY_LINES {
            MAX_KEY_LINES + 1
        } else {
            n
        }
    }

    fn plot_height(&self) -> u32 {
        // Title, the fault tag lane, the rows, the x axis.
        (50.0 + 32.0 + (self.lanes() as f64 + 0.7) * ROW_PX + 70.0) as u32
    }

    fn fault_end(&self, f: &FaultRecord) -> Option<Nanos> {
        match f.healed_at_ns {
            Some(t) => Some(t),
            None if LASTING_FAULTS.contains(&f.kind.as_str()) => Some(self.report.end_ns),
            None => None,
        }
    }
}

impl Figure for TimelineFigure<'_> {
    fn size(&self) -> (u32, u32) {
        let key = if self.key_lines() == 0 {
            0
        } else {
            16 + self.key_lines() as u32 * KEY_LINE_PX
        };
        (WIDTH, self.plot_height() + key + 12)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let canvas = root;
        canvas.fill(&WHITE)?;
        let (top, key_area) = canvas.split_vertically(self.plot_height());
        let top = top.titled(self.title, text(TITLE_PX, INK))?;
        let (plot_area, legend_area) = top.split_horizontally(WIDTH - self.legend().width_px());

        let unit = TimeUnit::SECONDS;
        let end_ns = self.report.end_ns.max(1);
        let end_s = unit.of(end_ns);
        // A time on the x axis: what lasts past the run's end (a fault healed after it, a lease
        // still granted) is drawn to the end, so that no coordinate overflows the backend.
        let x_of = |ns: Nanos| unit.of(ns.min(end_ns));
        let lanes = self.lanes() as f64;
        let y_top = lanes + 0.7;
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(16)
            .x_label_area_size(64)
            .y_label_area_size(110)
            .build_cartesian_2d(0.0..end_s, 0.0..y_top)?;
        let x_step = end_s / 10.0;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(GRID.mix(0.0))
            .bold_line_style(GRID)
            .x_labels(12)
            .y_labels(0)
            .x_desc("true time (s)")
            .axis_desc_style(text(AXIS_DESC_PX, INK))
            .label_style(text(TICK_PX, INK))
            .x_label_formatter(&|v| tick(*v, x_step))
            .draw()?;

        // Row separators and names.
        for (i, name) in self.names.iter().enumerate() {
            let y = self.row_bottom(i);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y), (end_s, y)],
                GRID.stroke_width(1),
            )))?;
            let (px, py) = chart.backend_coord(&(0.0, y + 0.5));
            canvas.draw(&Text::new(
                ellipsize(name, 10),
                (px - 12, py),
                text(TICK_PX, INK).pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }

        // Fault windows first, so everything else is drawn over them.
        let mut tags = LabelPlacer::default();
        for (k, f) in self.report.faults.iter().enumerate() {
            let from = x_of(f.at_ns);
            match self.fault_end(f) {
                Some(end) => {
                    let to = x_of(end).max(from + end_s / 2000.0);
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(from, 0.0), (to, lanes)],
                        FAULT.mix(0.10).filled(),
                    )))?;
                    for n in &f.nodes {
                        if n.index() < self.names.len() {
                            let y = self.row_bottom(n.index());
                            chart.draw_series(std::iter::once(Rectangle::new(
                                [(from, y), (to, y + 1.0)],
                                FAULT.mix(0.16).filled(),
                            )))?;
                        }
                    }
                }
                None => {
                    chart.draw_series(DashedLineSeries::new(
                        vec![(from, 0.0), (from, lanes)],
                        6,
                        4,
                        FAULT.mix(0.8).stroke_width(2),
                    ))?;
                }
            }
            let (px, py) = chart.backend_coord(&(from, y_top));
            let label = format!("{}", k + 1);
            let w = 10 * label.len() as i32 + 4;
            for slot in 0..2 {
                let y = py + 2 + slot * 18;
                if tags.try_take(px, y, px + w, y + 17) {
                    canvas.draw(&Text::new(label, (px + 2, y), text(NOTE_PX, FAULT)))?;
                    break;
                }
            }
        }

        // Leadership spans, coloured by term.
        let has_leases = !self.lease_windows.is_empty();
        let (bar_lo, bar_hi) = if has_leases {
            (0.42, 0.86)
        } else {
            (0.18, 0.82)
        };
        for s in &self.report.leadership_spans {
            let y = self.row_bottom(s.node.index());
            let (from, to) = (x_of(s.from_ns), x_of(s.to_ns));
            let to = to.max(from + end_s / 1500.0);
            let c = term_color(s.term);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(from, y + bar_lo), (to, y + bar_hi)],
                c.filled(),
            )))?;
            let (x0, py) = chart.backend_coord(&(from, y + (bar_lo + bar_hi) / 2.0));
            let (x1, _) = chart.backend_coord(&(to, y));
            let label = format!("t{}", s.term);
            if x1 - x0 >= 9 * label.len() as i32 + 6 {
                let ink = if is_dark(c) { WHITE } else { INK };
                canvas.draw(&Text::new(
                    label,
                    ((x0 + x1) / 2, py),
                    text(NOTE_PX, ink).pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        }
        for l in self.lease_windows {
            let y = self.row_bottom(l.node.index());
            let (from, to) = (x_of(l.from_ns), x_of(l.to_ns));
            chart.draw_series(std::iter::once(Rectangle::new(
                [(from, y + 0.14), (to.max(from), y + 0.32)],
                LEASE.mix(0.85).filled(),
            )))?;
        }
        if !self.overlaps.is_empty() {
            for &(from, to) in &self.overlaps {
                let to = x_of(to).max(x_of(from) + end_s / 800.0);
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x_of(from), 0.2), (to, 0.8)],
                    FAULT.filled(),
                )))?;
            }
            let (px, py) = chart.backend_coord(&(0.0, 0.5));
            canvas.draw(&Text::new(
                "≥2 leaders",
                (px - 12, py),
                text(TICK_PX, FAULT).pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }

        self.draw_legend(&legend_area.margin(60, 0, 0, 0))?;
        self.draw_key(&key_area)?;
        Ok(())
    }
}

impl TimelineFigure<'_> {
    fn draw_legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        self.legend().draw(area)
    }

    /// The legend: leases, faults, overlap, and each term's colour.
    fn legend(&self) -> Legend {
        let mut terms: Vec<u64> = self
            .report
            .leadership_spans
            .iter()
            .map(|s| s.term)
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let mut legend = Legend::default();
        if !self.lease_windows.is_empty() {
            legend.entry("lease valid", LEASE, Mark::Box);
        }
        if !self.report.faults.is_empty() {
            legend.entry("fault window", FAULT, Mark::Shade);
        }
        if !self.overlaps.is_empty() {
            legend.entry("≥2 believe they lead", FAULT, Mark::Box);
        }
        for t in terms {
            legend.entry(format!("leader, term {t}"), term_color(t), Mark::Box);
        }
        if self.report.leadership_spans.is_empty() {
            legend.notes.push("no node ever led".to_string());
        }
        legend
    }

    /// When fault `f` was in effect, as the key under the chart shows it.
    fn fault_when(&self, f: &FaultRecord) -> String {
        match self.fault_end(f) {
            Some(end) if f.healed_at_ns.is_some() => {
                format!("{} – {}", format_duration(f.at_ns), format_duration(end))
            }
            Some(_) => format!("{} – end", format_duration(f.at_ns)),
            None => format_duration(f.at_ns),
        }
    }

    /// The numbered list of faults under the chart.
    fn draw_key<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let faults = &self.report.faults;
        let whens: Vec<String> = faults.iter().map(|f| self.fault_when(f)).collect();
        // The descriptions start past the longest time span, so none runs into its text.
        let widest = whens.iter().map(|w| w.chars().count()).max().unwrap_or(0);
        let description_x = 160 + (widest as i32) * KEY_CHAR_PX + 16;
        let mut y = 4;
        for (k, (f, when)) in faults.iter().zip(whens).enumerate().take(MAX_KEY_LINES) {
            area.draw(&Text::new(
                format!("{}", k + 1),
                (130, y),
                text(NOTE_PX, FAULT),
            ))?;
            area.draw(&Text::new(when, (160, y), text(NOTE_PX, INK)))?;
            area.draw(&Text::new(
                ellipsize(&f.description, 80),
                (description_x, y),
                text(NOTE_PX, INK),
            ))?;
            y += KEY_LINE_PX as i32;
        }
        if faults.len() > MAX_KEY_LINES {
            area.draw(&Text::new(
                format!(
                    "… and {} more faults (all are in the data table)",
                    faults.len() - MAX_KEY_LINES
                ),
                (160, y),
                text(NOTE_PX, MUTED),
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(node: u32, from_ns: Nanos, to_ns: Nanos) -> LeadershipSpan {
        LeadershipSpan {
            node: NodeId(node),
            term: 1,
            from_ns,
            to_ns,
        }
    }

    #[test]
    fn a_handover_at_one_instant_is_no_overlap() {
        assert_eq!(overlaps(&[span(0, 0, 10), span(1, 10, 20)]), vec![]);
    }

    #[test]
    fn overlaps_are_the_times_two_nodes_led_at_once() {
        let spans = [
            span(0, 0, 10),
            span(1, 5, 20),
            span(2, 8, 12),
            span(0, 30, 40),
        ];
        assert_eq!(overlaps(&spans), vec![(5, 12)]);
    }
}
