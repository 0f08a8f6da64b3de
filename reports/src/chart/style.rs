//! The look shared by every chart: sizes, colours, units and label placement.

use super::FONT;
use plotters::style::{FontDesc, RGBColor, TextStyle};

/// Width of every chart, in pixels.
pub(crate) const WIDTH: u32 = 1200;
/// Width of the legend panel on the right of a chart.
pub(crate) const LEGEND_WIDTH: u32 = 270;

pub(crate) const TITLE_PX: u32 = 30;
pub(crate) const AXIS_DESC_PX: u32 = 22;
pub(crate) const TICK_PX: u32 = 18;
pub(crate) const LEGEND_PX: u32 = 18;
pub(crate) const NOTE_PX: u32 = 16;

pub(crate) const INK: RGBColor = RGBColor(33, 33, 33);
pub(crate) const MUTED: RGBColor = RGBColor(110, 110, 110);
pub(crate) const GRID: RGBColor = RGBColor(225, 225, 225);
pub(crate) const FAULT: RGBColor = RGBColor(214, 39, 40);
pub(crate) const LEASE: RGBColor = RGBColor(0, 150, 136);

/// Tableau 10, then ten darker companions, so that up to twenty series (message types of
/// an algorithm and its service) never share a colour.
pub(crate) const PALETTE: [RGBColor; 20] = [
    RGBColor(78, 121, 167),
    RGBColor(242, 142, 43),
    RGBColor(89, 161, 79),
    RGBColor(225, 87, 89),
    RGBColor(176, 122, 161),
    RGBColor(118, 183, 178),
    RGBColor(237, 201, 72),
    RGBColor(156, 117, 95),
    RGBColor(255, 157, 167),
    RGBColor(186, 176, 172),
    RGBColor(38, 70, 110),
    RGBColor(166, 86, 20),
    RGBColor(44, 105, 50),
    RGBColor(140, 30, 40),
    RGBColor(100, 60, 125),
    RGBColor(30, 115, 115),
    RGBColor(150, 120, 15),
    RGBColor(90, 60, 40),
    RGBColor(200, 70, 150),
    RGBColor(80, 80, 80),
];

/// The `i`-th series colour (cycling after twenty).
pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The colour of term `term`: hues a golden angle apart, so that neighbouring terms and terms
/// far apart (1 and 8, 3 and 24) differ, in three lightness steps; reds (faults, overlap)
/// and teal (leases) are left out, so a term never reads as a warning or a lease. Every span
/// wide enough is also labelled with its term (`t8`).
pub(crate) fn term_color(term: u64) -> RGBColor {
    // The allowed hues, in degrees: from orange to green, and from blue to purple.
    const ALLOWED: [(f64, f64); 2] = [(28.0, 150.0), (195.0, 330.0)];
    let total: f64 = ALLOWED.iter().map(|(a, b)| b - a).sum();
    let golden = 0.618_033_988_749_895;
    let mut along = ((term as f64) * golden).fract() * total;
    let mut hue = ALLOWED[0].0;
    for (a, b) in ALLOWED {
        if along <= b - a {
            hue = a + along;
            break;
        }
        along -= b - a;
    }
    let lightness = [0.46, 0.60, 0.36][(term % 3) as usize];
    hsl(hue, 0.62, lightness)
}

/// An HSL colour (hue in degrees, saturation and lightness in 0..=1) as RGB.
fn hsl(hue: f64, saturation: f64, lightness: f64) -> RGBColor {
    let c = (1.0 - (2.0 * lightness - 1.0).abs()) * saturation;
    let h = hue / 60.0;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = lightness - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

/// Whether white text reads on `c` (else use dark text).
pub(crate) fn is_dark(c: RGBColor) -> bool {
    let RGBColor(r, g, b) = c;
    0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b) < 160.0
}

/// A duration in three significant digits at most: `242ms`, `1.25s`, `38.4µs`, `2m30s`.
pub(crate) fn short_duration(ns: u64) -> String {
    let three = |v: f64, unit: &str| {
        let decimals = if v >= 100.0 {
            0
        } else if v >= 10.0 {
            1
        } else {
            2
        };
        let text = format!("{v:.decimals$}");
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        };
        format!("{text}{unit}")
    };
    match ns {
        0..=999 => format!("{ns}ns"),
        1_000..=999_999 => three(ns as f64 / 1e3, "µs"),
        1_000_000..=999_999_999 => three(ns as f64 / 1e6, "ms"),
        1_000_000_000..=59_999_999_999 => three(ns as f64 / 1e9, "s"),
        _ => splitbrain_sim::format_duration(ns - ns % 1_000_000_000),
    }
}

/// A text style of the chart font.
pub(crate) fn text(px: u32, color: RGBColor) -> TextStyle<'static> {
    FontDesc::new(
        FONT.into(),
        f64::from(px),
        plotters::style::FontStyle::Normal,
    )
    .color(&color)
}

/// A time unit for an axis, chosen so the numbers stay short.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TimeUnit {
    pub ns_per_unit: f64,
    pub symbol: &'static str,
}

impl TimeUnit {
    pub const MICROS: Self = Self {
        ns_per_unit: 1e3,
        symbol: "µs",
    };
    pub const MILLIS: Self = Self {
        ns_per_unit: 1e6,
        symbol: "ms",
    };
    pub const SECONDS: Self = Self {
        ns_per_unit: 1e9,
        symbol: "s",
    };

    /// Microseconds below 2 ms, milliseconds below 10 s, seconds from there on.
    pub fn for_max(max_ns: u64) -> Self {
        if max_ns < 2_000_000 {
            Self::MICROS
        } else if max_ns < 10_000_000_000 {
            Self::MILLIS
        } else {
            Self::SECONDS
        }
    }

    pub fn of(self, ns: u64) -> f64 {
        ns as f64 / self.ns_per_unit
    }
}

/// Formats an axis tick so that neighbouring ticks `step` apart stay distinct, with no
/// trailing noise (`0.30000000000000004` becomes `0.3`).
pub(crate) fn tick(value: f64, step: f64) -> String {
    let decimals = if step >= 1.0 || step <= 0.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    };
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        // Rounded to zero: no sign.
        Some(digits) if digits.chars().all(|c| c == '0' || c == '.') => digits.to_string(),
        _ => text,
    }
}

/// Places labels without overlap: remembers the boxes already taken.
#[derive(Default)]
pub(crate) struct LabelPlacer {
    taken: Vec<(i32, i32, i32, i32)>,
}

impl LabelPlacer {
    /// Takes the box `(x0, y0)..(x1, y1)` if it overlaps none taken before.
    pub fn try_take(&mut self, x0: i32, y0: i32, x1: i32, y1: i32) -> bool {
        let free = self
            .taken
            .iter()
            .all(|&(a0, b0, a1, b1)| x1 <= a0 || a1 <= x0 || y1 <= b0 || b1 <= y0);
        if free {
            self.taken.push((x0, y0, x1, y1));
        }
        free
    }
}

/// Splits `s` into lines of at most `max_chars` characters: after a `-`, `_`, `/`, `.` or
/// `,`, or before a space or `(`. A word is never cut: one longer than a line (a message
/// type, `RenewForwardResp`) has a line of its own, a little wider than the rest.
pub(crate) fn wrap(s: &str, max_chars: usize) -> Vec<String> {
    let max = max_chars.max(1);
    let mut rest: Vec<char> = s.trim().chars().collect();
    let mut lines = Vec::new();
    while rest.len() > max {
        let breaks_at = |i: usize| {
            matches!(rest[i - 1], '-' | '_' | '/' | '.' | ',') || matches!(rest[i], ' ' | '(')
        };
        let first_break = || (max + 1..rest.len()).find(|&i| breaks_at(i));
        let Some(cut) = (1..=max).rev().find(|&i| breaks_at(i)).or_else(first_break) else {
            break;
        };
        let line: String = rest[..cut].iter().collect();
        lines.push(line.trim_end().to_string());
        rest.drain(..cut);
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    if !rest.is_empty() || lines.is_empty() {
        lines.push(rest.iter().collect());
    }
    lines
}

/// Shortens `s` to at most `max_chars` characters, ending with an ellipsis when cut.
pub(crate) fn ellipsize(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        s.to_string()
    } else {
        let kept: String = s.chars().take(max_chars.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

/// Series labels of a sweep, `name=value` with one `name`, as the name and the values:
/// `["timeout=1s", "timeout=2s"]` gives `(Some("timeout"), ["1s", "2s"])`, so legends can
/// say the name once. A design before the parameter (`etcd (both) ttl=1s`) goes into the name
/// when every label has the same, and stays in each label when they differ. Other labels
/// come back unchanged with no name.
pub(crate) fn split_parameter(labels: &[&str]) -> (Option<String>, Vec<String>) {
    let unchanged = || (None, labels.iter().map(|l| l.to_string()).collect());
    // Each label: an optional design, a space, then `name=value`.
    let parts: Option<Vec<(&str, &str, &str)>> = labels
        .iter()
        .map(|label| {
            let (head, value) = label.split_once('=')?;
            let (design, name) = head.rsplit_once(' ').unwrap_or(("", head));
            (!value.is_empty() && !name.is_empty()).then_some((design, name, value))
        })
        .collect();
    let Some(parts) = parts.filter(|p| p.len() >= 2) else {
        return unchanged();
    };
    let (design, name, _) = parts[0];
    if parts.iter().any(|p| p.1 != name) {
        return unchanged();
    }
    if parts.iter().all(|p| p.0 == design) {
        let heading = if design.is_empty() {
            name.to_string()
        } else {
            format!("{design} {name}")
        };
        return (
            Some(heading),
            parts.iter().map(|p| p.2.to_string()).collect(),
        );
    }
    // Designs differ (with and without fencing, where their curves differ): keep each design,
    // say the parameter once.
    let labels = parts
        .iter()
        .map(|(design, _, value)| format!("{design} {value}").trim_start().to_string())
        .collect();
    (Some(name.to_string()), labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_unit_keeps_numbers_short() {
        assert_eq!(TimeUnit::for_max(900_000).symbol, "µs");
        assert_eq!(TimeUnit::for_max(450_000_000).symbol, "ms");
        assert_eq!(TimeUnit::for_max(9_999_999_999).symbol, "ms");
        assert_eq!(TimeUnit::for_max(30_000_000_000).symbol, "s");
    }

    #[test]
    fn ticks_show_just_enough_decimals() {
        assert_eq!(tick(0.30000000000000004, 0.1), "0.3");
        assert_eq!(tick(250.0, 50.0), "250");
        assert_eq!(tick(10.05, 0.05), "10.05");
        assert_eq!(tick(-0.0, 0.5), "0.0");
    }

    #[test]
    fn short_durations_keep_three_digits() {
        assert_eq!(short_duration(242_430_000), "242ms");
        assert_eq!(short_duration(1_250_000_000), "1.25s");
        assert_eq!(short_duration(38_420), "38.4µs");
        assert_eq!(short_duration(2_000_000_000), "2s");
        assert_eq!(short_duration(150_000_000_000), "2m30s");
        assert_eq!(short_duration(999_999_999), "1000ms");
    }

    #[test]
    fn a_sweeps_parameter_name_is_said_once() {
        let (name, values) = split_parameter(&["timeout=1s", "timeout=2s"]);
        assert_eq!(name.as_deref(), Some("timeout"));
        assert_eq!(values, ["1s", "2s"]);
        assert_eq!(split_parameter(&["raft", "bully"]).0, None);
        assert_eq!(split_parameter(&["a=1", "b=2"]).0, None);
        assert_eq!(split_parameter(&["a=1"]).0, None);
        let (name, values) = split_parameter(&["etcd (both) ttl=1s", "etcd (both) ttl=2s"]);
        assert_eq!(name.as_deref(), Some("etcd (both) ttl"));
        assert_eq!(values, ["1s", "2s"]);
        let (name, values) = split_parameter(&["etcd (both) ttl=1s", "etcd-fenced ttl=2s"]);
        assert_eq!(name.as_deref(), Some("ttl"));
        assert_eq!(values, ["etcd (both) 1s", "etcd-fenced 2s"]);
    }

    #[test]
    fn long_labels_wrap_at_their_separators_and_never_cut_a_word() {
        assert_eq!(
            wrap("raft-prevote-checkquorum-fenced", 15),
            ["raft-prevote-", "checkquorum-", "fenced"]
        );
        assert_eq!(wrap("etcd-5s (both)", 10), ["etcd-5s", "(both)"]);
        assert_eq!(wrap("short", 10), ["short"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcdefghij"], "a word is never cut");
        assert_eq!(
            wrap("RenewForwardResp 1.0", 8),
            ["RenewForwardResp", "1.0"],
            "a word longer than a line has its own"
        );
    }

    #[test]
    fn terms_far_apart_get_colours_far_apart() {
        let distance = |a: RGBColor, b: RGBColor| {
            let d = |x: u8, y: u8| (f64::from(x) - f64::from(y)).powi(2);
            (d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)).sqrt()
        };
        // Terms 1 and 8 were one orange with seven colours.
        assert!(distance(term_color(1), term_color(8)) > 60.0);
        for a in 1..=12 {
            for b in a + 1..=12 {
                let apart = distance(term_color(a), term_color(b));
                assert!(apart > 40.0, "terms {a} and {b}: {apart}");
            }
            let RGBColor(r, g, b) = term_color(a);
            assert!(!(r > 150 && g < 90 && b < 90), "term {a} is no red");
        }
    }

    #[test]
    fn labels_that_overlap_are_refused() {
        let mut p = LabelPlacer::default();
        assert!(p.try_take(0, 0, 10, 10));
        assert!(!p.try_take(5, 5, 15, 15));
        assert!(p.try_take(10, 0, 20, 10));
    }
}
