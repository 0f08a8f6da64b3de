//! Drawing the sequence diagram: lifelines, arrows, markers, the time axis and the legend.

use super::time_axis::TimeAxis;
use super::SEQUENCE_MAX_ARROWS;
use super::{
    Arrow, Fate, Folded, Lane, MarkKind, Marker, Rule, ARROW_LABEL_PX, HEAL, HEIGHT, WRITE,
};
use crate::chart::legend::{Legend, Mark};
use crate::chart::style::{color, ellipsize, short_duration, term_color, text, LabelPlacer};
use crate::chart::style::{AXIS_DESC_PX, FAULT, GRID, INK};
use crate::chart::style::{LEGEND_WIDTH, MUTED, NOTE_PX, TICK_PX, TITLE_PX, WIDTH};
use crate::chart::{DrawResult, Figure};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use splitbrain_sim::{format_duration, Nanos};

pub(super) struct SequenceFigure<'a> {
    pub title: &'a str,
    pub from_ns: Nanos,
    pub to_ns: Nanos,
    pub lanes: Vec<Lane>,
    pub arrows: Vec<Arrow<'a>>,
    pub markers: Vec<Marker>,
    pub rules: Vec<Rule<'a>>,
    pub kinds: Vec<&'a str>,
    /// The service's internal messages, not in `arrows`.
    pub folded: Folded<'a>,
}

/// Pixel bounds of the diagram inside the canvas.
const TOP_PX: i32 = 130;
const BOTTOM_PX: i32 = HEIGHT as i32 - 24;
const AXIS_X_PX: i32 = 110;
const RIGHT_PX: i32 = (WIDTH - LEGEND_WIDTH) as i32 - 24;
/// A frozen (paused or stalled) stretch of a lifeline, and its marks' ink.
const FROZEN: RGBColor = RGBColor(255, 213, 128);
const FROZEN_INK: RGBColor = RGBColor(178, 106, 0);
impl SequenceFigure<'_> {
    fn kind_color(&self, kind: &str) -> RGBColor {
        if kind == "write" {
            return WRITE;
        }
        color(self.kinds.iter().position(|k| *k == kind).unwrap_or(0))
    }

    fn note(&self) -> String {
        let span = format!(
            "{} to {}",
            format_duration(self.from_ns),
            format_duration(self.to_ns)
        );
        let total = self.arrows.len();
        let shown = if total > SEQUENCE_MAX_ARROWS {
            format!("showing the first {SEQUENCE_MAX_ARROWS} of {total} messages")
        } else {
            format!("{total} messages")
        };
        match self.folded.count {
            0 if total > SEQUENCE_MAX_ARROWS => format!("{span}: {shown} in the window"),
            0 => format!("{span}: {shown}; long quiet stretches are shortened"),
            n => format!(
                "{span}: {shown}; {n} among service processes ({}) not drawn",
                self.folded.kinds.join(", ")
            ),
        }
    }

    fn drawn_arrows(&self) -> &[Arrow<'_>] {
        &self.arrows[..self.arrows.len().min(SEQUENCE_MAX_ARROWS)]
    }

    /// The time axis over everything drawn. When arrows were left out, it ends at the last
    /// drawn arrow, so the picture is not stretched over a part it does not show.
    fn time_axis(&self) -> TimeAxis {
        let drawn = self.drawn_arrows();
        let end = if drawn.len() < self.arrows.len() {
            drawn.iter().map(|a| a.at).max().unwrap_or(self.to_ns)
        } else {
            self.to_ns
        };
        let times: Vec<Nanos> = [self.from_ns, end]
            .into_iter()
            .chain(drawn.iter().flat_map(|a| [a.sent, a.at]))
            .chain(self.markers.iter().map(|m| m.at).filter(|&t| t <= end))
            .chain(self.rules.iter().map(|r| r.at).filter(|&t| t <= end))
            .collect();
        TimeAxis::new(times, f64::from(TOP_PX), f64::from(BOTTOM_PX))
    }

    fn lane_x(&self, lane: usize) -> i32 {
        let n = self.lanes.len().max(1) as i32;
        let (left, right) = (AXIS_X_PX + 70, RIGHT_PX - 50);
        if n == 1 {
            (left + right) / 2
        } else {
            left + (right - left) * lane as i32 / (n - 1)
        }
    }
}

impl Figure for SequenceFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, canvas: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        canvas.fill(&WHITE)?;
        let body = canvas.titled(self.title, text(TITLE_PX, INK))?;
        let capped = self.arrows.len() > SEQUENCE_MAX_ARROWS;
        body.draw(&Text::new(
            self.note(),
            (AXIS_X_PX, 0),
            text(NOTE_PX, if capped { FAULT } else { MUTED }),
        ))?;
        let axis = self.time_axis();
        let last_y = axis
            .knots
            .last()
            .map_or(BOTTOM_PX, |&(_, y)| y.round() as i32);

        // Breaks: quiet stretches drawn shorter than they were.
        for &(from, to) in &axis.breaks {
            let (y0, y1) = (axis.y(from) + 6, axis.y(to) - 6);
            canvas.draw(&Rectangle::new(
                [(AXIS_X_PX, y0), (RIGHT_PX, y1)],
                RGBColor(242, 242, 242).filled(),
            ))?;
            canvas.draw(&Text::new(
                format!("⋯ {} ⋯", short_duration(to - from)),
                (RIGHT_PX - 8, (y0 + y1) / 2),
                text(NOTE_PX, MUTED).pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }

        // The time axis: a label wherever there is room, always after a break.
        canvas.draw(&PathElement::new(
            vec![(AXIS_X_PX, TOP_PX), (AXIS_X_PX, last_y)],
            INK.stroke_width(1),
        ))?;
        let mut last_label = i32::MIN / 2;
        for &(t, y) in &axis.knots {
            let y = y.round() as i32;
            let after_break = axis.breaks.iter().any(|&(_, to)| to == t);
            if y - last_label >= 36 || (after_break && y - last_label >= 20) {
                canvas.draw(&PathElement::new(
                    vec![(AXIS_X_PX - 6, y), (AXIS_X_PX, y)],
                    INK.stroke_width(1),
                ))?;
                canvas.draw(&PathElement::new(
                    vec![(AXIS_X_PX, y), (RIGHT_PX, y)],
                    GRID.stroke_width(1),
                ))?;
                canvas.draw(&Text::new(
                    format!("{:.3}", t as f64 / 1e9),
                    (AXIS_X_PX - 10, y),
                    text(TICK_PX, INK).pos(Pos::new(HPos::Right, VPos::Center)),
                ))?;
                last_label = y;
            }
        }
        let desc = text(AXIS_DESC_PX, INK)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Center, VPos::Top));
        canvas.draw(&Text::new(
            "true time (s)",
            (8, (TOP_PX + last_y) / 2),
            desc,
        ))?;

        // Lifelines: solid while up, red dashes while down; names and starting state on top.
        let mut labels = LabelPlacer::default();
        for (i, lane) in self.lanes.iter().enumerate() {
            let x = self.lane_x(i);
            canvas.draw(&PathElement::new(
                vec![(x, TOP_PX), (x, last_y)],
                INK.mix(0.55).stroke_width(2),
            ))?;
            for &(from, to) in &lane.frozen {
                let (a, b) = (axis.y(from), axis.y(to).min(last_y));
                canvas.draw(&Rectangle::new([(x - 6, a), (x + 6, b)], FROZEN.filled()))?;
            }
            for &(from, to) in &lane.down {
                let (a, b) = (axis.y(from), axis.y(to).min(last_y));
                canvas.draw(&Rectangle::new([(x - 3, a), (x + 3, b)], WHITE.filled()))?;
                for y in (a..b).step_by(12) {
                    canvas.draw(&PathElement::new(
                        vec![(x, y), (x, (y + 6).min(b))],
                        FAULT.stroke_width(2),
                    ))?;
                }
            }
            let header = text(TICK_PX, INK).pos(Pos::new(HPos::Center, VPos::Bottom));
            canvas.draw(&Text::new(
                ellipsize(&lane.name, 12),
                (x, TOP_PX - 34),
                header,
            ))?;
            let state = text(NOTE_PX, MUTED).pos(Pos::new(HPos::Center, VPos::Bottom));
            canvas.draw(&Text::new(lane.state.clone(), (x, TOP_PX - 12), state))?;
        }

        // Faults and heals across all lifelines, their text above the line at the left.
        let (first_x, last_x) = (
            self.lane_x(0),
            self.lane_x(self.lanes.len().saturating_sub(1)),
        );
        for rule in self.rules.iter().filter(|r| axis.y(r.at) <= last_y) {
            let c = if rule.heal { HEAL } else { FAULT };
            let y = axis.y(rule.at);
            for x in (first_x - 40..last_x + 40).step_by(16) {
                canvas.draw(&PathElement::new(
                    vec![(x, y), ((x + 10).min(last_x + 40), y)],
                    c.stroke_width(2),
                ))?;
            }
            let label = ellipsize(
                &format!(
                    "{}: {}",
                    if rule.heal { "heal" } else { "fault" },
                    rule.text
                ),
                60,
            );
            let width = 9 * label.chars().count() as i32;
            if labels.try_take(first_x - 40, y - 21, first_x - 40 + width, y - 3) {
                canvas.draw(&Text::new(label, (first_x - 40, y - 20), text(NOTE_PX, c)))?;
            }
        }

        // Marker labels take their places before the arrows' labels: they matter more.
        let marker_labels: Vec<Option<(i32, i32)>> = self
            .markers
            .iter()
            .map(|m| {
                let (x, y) = (self.lane_x(m.lane), axis.y(m.at));
                let w = 9 * marker_label(m).0.chars().count() as i32 + 4;
                [0, 18, -18, 36].into_iter().find_map(|shift| {
                    let (lx, ly) = (x + 14, y - 9 + shift);
                    labels.try_take(lx, ly, lx + w, ly + 18).then_some((lx, ly))
                })
            })
            .collect();
        for a in self.drawn_arrows() {
            let start = (self.lane_x(a.from), axis.y(a.sent));
            let end = (self.lane_x(a.to), axis.y(a.at));
            self.draw_arrow(canvas, &mut labels, start, end, a)?;
        }
        for (m, label_at) in self.markers.iter().zip(marker_labels) {
            if axis.y(m.at) <= last_y {
                self.draw_marker(canvas, (self.lane_x(m.lane), axis.y(m.at)), m, label_at)?;
            }
        }

        let mut legend = Legend {
            heading: Some("message type".to_string()),
            ..Legend::default()
        };
        for kind in &self.kinds {
            legend.entry(*kind, self.kind_color(kind), Mark::Line);
        }
        if self.arrows.iter().any(|a| a.kind == "write") {
            legend.entry("write to resource", WRITE, Mark::Line);
        }
        legend.notes.push("× dropped on arrival".to_string());
        legend.notes.push("□ held while paused".to_string());
        legend.notes.push("red dashes: process down".to_string());
        if self.lanes.iter().any(|l| !l.frozen.is_empty()) {
            legend
                .notes
                .push("amber band: paused or stalled".to_string());
        }
        legend.notes.push("grey band: time cut short".to_string());
        legend.draw(&canvas.margin(TOP_PX as u32, 0, WIDTH - LEGEND_WIDTH, 0))?;
        Ok(())
    }
}

/// A marker's label and its colour.
fn marker_label(m: &Marker) -> (String, RGBColor) {
    match &m.kind {
        MarkKind::Crash => ("crash".to_string(), FAULT),
        MarkKind::Restart => ("restart".to_string(), HEAL),
        MarkKind::Freeze => ("frozen".to_string(), FROZEN_INK),
        MarkKind::Resume => ("resumes".to_string(), FROZEN_INK),
        MarkKind::Leads(term) => (format!("leads t{term}"), INK),
        MarkKind::StepsDown => ("steps down".to_string(), INK),
        MarkKind::Term(term) => (format!("t{term}"), MUTED),
        MarkKind::Broke(check) => (check.replace(',', ", "), FAULT),
    }
}

impl SequenceFigure<'_> {
    fn draw_arrow<DB: DrawingBackend>(
        &self,
        canvas: &DrawingArea<DB, Shift>,
        labels: &mut LabelPlacer,
        (x0, y0): (i32, i32),
        (x1, y1): (i32, i32),
        a: &Arrow<'_>,
    ) -> DrawResult<DB> {
        let c = match a.fate {
            Fate::WriteRejected => FAULT,
            _ => self.kind_color(a.kind),
        };
        let style = c.stroke_width(if a.kind == "write" { 1 } else { 2 });
        canvas.draw(&PathElement::new(vec![(x0, y0), (x1, y1)], style))?;
        // The arrowhead: a triangle pointing along the arrow.
        let (dx, dy) = (f64::from(x1 - x0), f64::from(y1 - y0));
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        let (ux, uy) = (dx / len, dy / len);
        let at = |along: f64, across: f64| {
            (
                x1 + (-ux * along - uy * across).round() as i32,
                y1 + (-uy * along + ux * across).round() as i32,
            )
        };
        let head = vec![at(0.0, 0.0), at(11.0, 5.0), at(11.0, -5.0)];
        match a.fate {
            Fate::Dropped => {
                for (p, q) in [((-6, -6), (6, 6)), ((-6, 6), (6, -6))] {
                    canvas.draw(&PathElement::new(
                        vec![(x1 + p.0, y1 + p.1), (x1 + q.0, y1 + q.1)],
                        c.stroke_width(3),
                    ))?;
                }
            }
            Fate::Held => {
                canvas.draw(&Polygon::new(head, c))?;
                canvas.draw(&Rectangle::new(
                    [(x1 - 6, y1 - 6), (x1 + 6, y1 + 6)],
                    c.stroke_width(2),
                ))?;
            }
            _ => canvas.draw(&Polygon::new(head, c))?,
        }
        if a.kind != "write" || a.fate == Fate::WriteRejected {
            let label = if a.fate == Fate::WriteRejected {
                "rejected".to_string()
            } else {
                ellipsize(a.kind, 20)
            };
            let w = 8 * label.chars().count() as i32 + 6;
            // The middle of the arrow if free, else a little before or after it.
            for along in [0.5, 0.35, 0.65, 0.25, 0.75] {
                let mx = x0 + (dx * along).round() as i32;
                let my = y0 + (dy * along).round() as i32;
                let (bx0, by0) = (mx - w / 2, my - 9);
                if labels.try_take(bx0, by0, bx0 + w, by0 + 18) {
                    canvas.draw(&Rectangle::new(
                        [(bx0, by0), (bx0 + w, by0 + 17)],
                        WHITE.mix(0.85).filled(),
                    ))?;
                    canvas.draw(&Text::new(
                        label,
                        (mx, my),
                        text(ARROW_LABEL_PX, c).pos(Pos::new(HPos::Center, VPos::Center)),
                    ))?;
                    break;
                }
            }
        }
        Ok(())
    }

    fn draw_marker<DB: DrawingBackend>(
        &self,
        canvas: &DrawingArea<DB, Shift>,
        (x, y): (i32, i32),
        m: &Marker,
        label_at: Option<(i32, i32)>,
    ) -> DrawResult<DB> {
        match &m.kind {
            MarkKind::Crash => {
                for (p, q) in [((-10, -10), (10, 10)), ((-10, 10), (10, -10))] {
                    canvas.draw(&PathElement::new(
                        vec![(x + p.0, y + p.1), (x + q.0, y + q.1)],
                        FAULT.stroke_width(4),
                    ))?;
                }
            }
            MarkKind::Restart => canvas.draw(&Circle::new((x, y), 8, HEAL.filled()))?,
            MarkKind::Freeze | MarkKind::Resume => canvas.draw(&PathElement::new(
                vec![(x - 9, y), (x + 9, y)],
                FROZEN_INK.stroke_width(3),
            ))?,
            MarkKind::Leads(term) => {
                let square = [(x - 8, y - 8), (x + 8, y + 8)];
                canvas.draw(&Rectangle::new(square, term_color(*term).filled()))?;
                canvas.draw(&Rectangle::new(square, INK.stroke_width(2)))?;
            }
            MarkKind::StepsDown => {
                canvas.draw(&Rectangle::new(
                    [(x - 7, y - 7), (x + 7, y + 7)],
                    INK.stroke_width(2),
                ))?;
            }
            MarkKind::Term(_) => canvas.draw(&Circle::new((x, y), 4, MUTED.filled()))?,
            MarkKind::Broke(_) => canvas.draw(&Circle::new((x, y), 13, FAULT.stroke_width(3)))?,
        }
        if let Some((lx, ly)) = label_at {
            let (label, c) = marker_label(m);
            let w = 9 * label.chars().count() as i32 + 4;
            canvas.draw(&Rectangle::new(
                [(lx, ly), (lx + w, ly + 17)],
                WHITE.mix(0.85).filled(),
            ))?;
            canvas.draw(&Text::new(label, (lx + 2, ly + 1), text(NOTE_PX, c)))?;
        }
        Ok(())
    }
}
