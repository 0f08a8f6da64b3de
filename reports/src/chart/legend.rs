//! A legend drawn in its own panel beside the plot, so it never hides data.

use super::style::{text, wrap, INK, LEGEND_PX, LEGEND_WIDTH, MUTED, NOTE_PX};
use super::DrawResult;
use plotters::coord::Shift;
use plotters::prelude::*;

/// How an entry's swatch looks.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mark {
    /// A thick line (a series).
    Line,
    /// A filled box (a bar segment, a span).
    Box,
    /// A translucent box (a shaded window).
    Shade,
    /// A dot on a line (points joined by lines).
    Dot,
    /// A dashed line (a threshold, a guide).
    Dashed,
}

/// One legend entry.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub label: String,
    pub color: RGBColor,
    pub mark: Mark,
}

/// A legend: an optional heading, entries, and notes in grey below them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Legend {
    pub heading: Option<String>,
    pub entries: Vec<Entry>,
    pub notes: Vec<String>,
}

const ROW_PX: i32 = 28;
/// A further line of a wrapped entry label.
const LINE_PX: i32 = 21;
const SWATCH_PX: i32 = 26;
/// The left margin of the legend panel, and the gap between a swatch and its label.
const LEFT_PX: i32 = 12;
const GAP_PX: i32 = 10;
/// About the width of a character at the legend font size, and at the note size.
const LABEL_CHAR_PX: i32 = 10;
const NOTE_CHAR_PX: i32 = 8;
/// The widest a legend panel grows for long labels; longer labels wrap.
const MAX_LEGEND_WIDTH: u32 = 440;
/// Characters of a note line that fit in the narrowest legend panel.
pub(crate) const MAX_NOTE_CHARS: usize = 30;

/// The width of a legend panel whose entries are `labels`: wide enough for the longest label
/// on one line, from [`LEGEND_WIDTH`] up to a limit past which labels wrap (never cut).
pub(crate) fn width_for<'a>(labels: impl IntoIterator<Item = &'a str>) -> u32 {
    let longest = labels
        .into_iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    let px = LEFT_PX + SWATCH_PX + GAP_PX + LABEL_CHAR_PX * longest as i32 + LEFT_PX;
    (px.max(0) as u32).clamp(LEGEND_WIDTH, MAX_LEGEND_WIDTH)
}

impl Legend {
    pub fn entry(&mut self, label: impl Into<String>, color: RGBColor, mark: Mark) {
        self.entries.push(Entry {
            label: label.into(),
            color,
            mark,
        });
    }

    /// The width of a panel for this legend's entries ([`width_for`]).
    pub fn width_px(&self) -> u32 {
        width_for(self.entries.iter().map(|e| e.label.as_str()))
    }

    /// Draws the legend from the top-left of `area`, at most as many rows as fit. Labels and
    /// notes too long for the panel wrap onto further lines; none is cut short.
    pub fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (width, height) = area.dim_in_pixel();
        let (width, height) = (width as i32, height as i32);
        let x = LEFT_PX;
        let mut y = 8;
        if let Some(heading) = &self.heading {
            let chars = ((width - 2 * x) / LABEL_CHAR_PX).max(8) as usize;
            for line in wrap(heading, chars) {
                area.draw(&Text::new(line, (x, y), text(LEGEND_PX, INK)))?;
                y += LINE_PX;
            }
            y += ROW_PX + 4 - LINE_PX;
        }
        let label_chars = ((width - x - SWATCH_PX - GAP_PX) / LABEL_CHAR_PX).max(8) as usize;
        let entries: Vec<(&Entry, Vec<String>)> = (self.entries.iter())
            .map(|e| (e, wrap(&e.label, label_chars)))
            .collect();
        let entry_px = |lines: usize| ROW_PX + LINE_PX * (lines as i32 - 1);
        // The entries that fit, keeping a row for "... and N more" when some do not.
        let mut shown = 0;
        let mut bottom = y;
        for (_, lines) in &entries {
            bottom += entry_px(lines.len());
            let room_for_more = if shown + 1 < entries.len() { ROW_PX } else { 0 };
            if bottom + room_for_more > height - 8 {
                break;
            }
            shown += 1;
        }
        for (entry, lines) in &entries[..shown] {
            self.swatch(area, entry, (x, y))?;
            for (k, line) in lines.iter().enumerate() {
                area.draw(&Text::new(
                    line.clone(),
                    (x + SWATCH_PX + GAP_PX, y + 2 + LINE_PX * k as i32),
                    text(LEGEND_PX, INK),
                ))?;
            }
            y += entry_px(lines.len());
        }
        if shown < entries.len() {
            let more = format!("… and {} more", entries.len() - shown);
            area.draw(&Text::new(more, (x, y + 2), text(NOTE_PX, MUTED)))?;
            y += ROW_PX;
        }
        y += 6;
        self.draw_notes(area, (x, y), (width, height))
    }

    /// The notes, in grey, from `(x, y)`: wrapped to the panel's width, with a last line that
    /// says how many did not fit.
    fn draw_notes<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (x, mut y): (i32, i32),
        (width, height): (i32, i32),
    ) -> DrawResult<DB> {
        let line_px = ROW_PX - 4;
        let mut lines: Vec<(i32, String, usize)> = Vec::new();
        for (n, note) in self.notes.iter().enumerate() {
            // Leading spaces indent (SVG would collapse them, so they become an offset).
            let body = note.trim_start_matches(' ');
            let indent = 6 * (note.len() - body.len()) as i32;
            let chars = ((width - x - indent - 4) / NOTE_CHAR_PX).max(8) as usize;
            for (k, line) in wrap(body, chars).into_iter().enumerate() {
                // A note's further lines indent a little more, so each note reads as one.
                lines.push((indent + if k > 0 { 12 } else { 0 }, line, n));
            }
        }
        let rows = ((height - y - 8) / line_px).max(0) as usize;
        let shown = if lines.len() > rows {
            rows.saturating_sub(1)
        } else {
            lines.len()
        };
        for (indent, line, _) in &lines[..shown] {
            area.draw(&Text::new(
                line.clone(),
                (x + indent, y),
                text(NOTE_PX, MUTED),
            ))?;
            y += line_px;
        }
        if shown < lines.len() && rows > 0 {
            let first_cut = lines[shown].2;
            let left = self.notes.len() - first_cut;
            let word = if left == 1 { "note" } else { "notes" };
            let more = format!("… {left} more {word}: see the table");
            area.draw(&Text::new(more, (x, y), text(NOTE_PX, MUTED)))?;
        }
        Ok(())
    }

    fn swatch<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        entry: &Entry,
        (x, y): (i32, i32),
    ) -> DrawResult<DB> {
        let mid = y + 11;
        match entry.mark {
            Mark::Line => {
                area.draw(&PathElement::new(
                    vec![(x, mid), (x + SWATCH_PX, mid)],
                    entry.color.stroke_width(4),
                ))?;
            }
            Mark::Dashed => {
                for x0 in [x, x + 10, x + 20] {
                    area.draw(&PathElement::new(
                        vec![(x0, mid), ((x0 + 6).min(x + SWATCH_PX), mid)],
                        entry.color.stroke_width(3),
                    ))?;
                }
            }
            Mark::Dot => {
                area.draw(&PathElement::new(
                    vec![(x, mid), (x + SWATCH_PX, mid)],
                    entry.color.stroke_width(3),
                ))?;
                area.draw(&Circle::new(
                    (x + SWATCH_PX / 2, mid),
                    5,
                    entry.color.filled(),
                ))?;
            }
            Mark::Box => {
                area.draw(&Rectangle::new(
                    [(x, mid - 8), (x + SWATCH_PX, mid + 8)],
                    entry.color.filled(),
                ))?;
            }
            Mark::Shade => {
                area.draw(&Rectangle::new(
                    [(x, mid - 9), (x + SWATCH_PX, mid + 9)],
                    entry.color.mix(0.18).filled(),
                ))?;
                area.draw(&Rectangle::new(
                    [(x, mid - 9), (x + SWATCH_PX, mid + 9)],
                    entry.color.mix(0.6).stroke_width(1),
                ))?;
            }
        }
        Ok(())
    }
}
