//! A legend drawn in its own panel beside the plot, so it never hides data.

use super::style::{ellipsize, text, INK, LEGEND_PX, MUTED, NOTE_PX};
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
const SWATCH_PX: i32 = 26;
/// Characters that fit beside a swatch in the legend panel at the legend font size.
const MAX_LABEL_CHARS: usize = 22;
/// Characters of a note line that fit in the legend panel.
pub(crate) const MAX_NOTE_CHARS: usize = 30;

impl Legend {
    pub fn entry(&mut self, label: impl Into<String>, color: RGBColor, mark: Mark) {
        self.entries.push(Entry {
            label: label.into(),
            color,
            mark,
        });
    }

    /// Draws the legend from the top-left of `area`, at most as many rows as fit.
    pub fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let (_, height) = area.dim_in_pixel();
        let height = height as i32;
        let x = 12;
        let mut y = 8;
        if let Some(heading) = &self.heading {
            area.draw(&Text::new(heading.clone(), (x, y), text(LEGEND_PX, INK)))?;
            y += ROW_PX + 4;
        }
        let rows_left = |y: i32| ((height - y - 8) / ROW_PX).max(0) as usize;
        let fits = rows_left(y);
        let shown = if self.entries.len() > fits {
            fits.saturating_sub(1)
        } else {
            self.entries.len()
        };
        for entry in &self.entries[..shown] {
            self.swatch(area, entry, (x, y))?;
            area.draw(&Text::new(
                ellipsize(&entry.label, MAX_LABEL_CHARS),
                (x + SWATCH_PX + 10, y + 2),
                text(LEGEND_PX, INK),
            ))?;
            y += ROW_PX;
        }
        if shown < self.entries.len() {
            let more = format!("… and {} more", self.entries.len() - shown);
            area.draw(&Text::new(more, (x, y + 2), text(NOTE_PX, MUTED)))?;
            y += ROW_PX;
        }
        y += 6;
        let rows = ((height - y - 8) / (ROW_PX - 4)).max(0) as usize;
        // Notes that do not all fit end in a line that says so, rather than being cut off.
        let shown = if self.notes.len() > rows {
            rows.saturating_sub(1)
        } else {
            self.notes.len()
        };
        if shown < self.notes.len() && rows > 0 {
            let left = self.notes.len() - shown;
            let lines = if left == 1 { "line" } else { "lines" };
            let more = format!("… {left} more {lines}: see the table");
            let at_y = y + (ROW_PX - 4) * shown as i32;
            area.draw(&Text::new(more, (x, at_y), text(NOTE_PX, MUTED)))?;
        }
        for note in &self.notes[..shown] {
            // Leading spaces indent (SVG would collapse them, so they become an offset).
            let body = note.trim_start_matches(' ');
            let indent = 6 * (note.len() - body.len()) as i32;
            area.draw(&Text::new(
                ellipsize(body, MAX_NOTE_CHARS),
                (x + indent, y),
                text(NOTE_PX, MUTED),
            ))?;
            y += ROW_PX - 4;
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
