//! Charts: each is a pure function from plain data to a [`Chart`] (SVG text, PNG bytes and the
//! numbers it plots). Drawing goes through plotters twice, once per backend, from the same
//! code; text is laid out with an embedded font, so no system font is needed and the same
//! inputs always give the same bytes.

mod cdf;
mod cluster;
mod curve;
mod legend;
mod sequence;
mod share;
mod stacked;
mod style;
mod timeline;

pub use cdf::{failover_cdf, CdfSeries, Objective};
pub use cluster::{messages_vs_cluster_size, ScalingSeries};
pub use curve::{curves_over_time, CurveSeries};
pub use sequence::{
    sequence_diagram, sequence_diagram_of, sequence_window, AroundFailovers, CapturedWindow,
    CapturedWindows, FailoverRecorder, SequenceLabels, SequenceRecorder, SequenceTrace, Settle,
    OPEN_WINDOW_BUDGET_EVENTS, SEQUENCE_LOOKBACK_NS, SEQUENCE_MAX_ARROWS,
};
pub use share::{share_by_value, wilson_interval, ShareSeries};
pub use stacked::{messages_per_election, ElectionMessages};
pub use timeline::{leadership_timeline, LeaseWindow};

use crate::table::DataTable;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::sync::Once;

/// One rendered chart and the numbers behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The file stem in an output folder: `[a-z0-9_-]+`.
    pub name: String,
    /// The chart's title, also used as its caption in reports.
    pub title: String,
    /// A standalone SVG document (text as SVG text, no external references).
    pub svg: String,
    /// The same picture as a PNG (8-bit RGB), text rasterised from the embedded font.
    pub png: Vec<u8>,
    /// Exactly the numbers the chart plots; written as `NAME.csv` and `NAME.json`.
    pub data: DataTable,
}

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// Not a file stem of `[a-z0-9_-]+`.
    #[error("chart name {name:?} is not a file stem of [a-z0-9_-]+")]
    BadName {
        /// The name as given.
        name: String,
    },
    /// The drawing library failed (a bug, or a coordinate it could not map).
    #[error("chart {chart}: drawing the {backend} failed: {message}")]
    Draw {
        /// The chart's name.
        chart: String,
        /// The backend that failed: `"svg"` or `"png"`.
        backend: &'static str,
        /// The drawing library's error, as text.
        message: String,
    },
    /// The PNG encoder failed.
    #[error("chart {chart}: encoding the png failed: {message}")]
    PngEncode {
        /// The chart's name.
        chart: String,
        /// The encoder's error, as text.
        message: String,
    },
}

/// Whether `name` can be used as a file stem in an output folder.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// The result of drawing on one backend.
pub(crate) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A picture that can be drawn on any plotters backend.
pub(crate) trait Figure {
    /// Width and height in pixels (the SVG's user units).
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
}

/// The font family every chart uses; registered once from the embedded DejaVu Sans. The name
/// doubles as the SVG `font-family`, so a viewer with DejaVu Sans shows the text with the
/// metrics it was laid out with, and one without falls back to Verdana (nearly the same
/// metrics: DejaVu descends from Bitstream Vera) or any sans-serif.
pub(crate) const FONT: &str = "DejaVu Sans, Verdana, sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let ok = plotters::style::register_font(FONT, FontStyle::Normal, DEJAVU_SANS).is_ok();
        assert!(ok, "the embedded DejaVu Sans font parses");
    });
}

/// Draws `figure` as SVG and as PNG.
pub(crate) fn render(
    name: &str,
    title: &str,
    data: DataTable,
    figure: &impl Figure,
) -> Result<Chart, ChartError> {
    if !is_valid_name(name) {
        return Err(ChartError::BadName {
            name: name.to_string(),
        });
    }
    register_fonts();
    let (width, height) = figure.size();
    let draw_error = |backend: &'static str, message: String| ChartError::Draw {
        chart: name.to_string(),
        backend,
        message,
    };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        figure
            .draw(&root)
            .map_err(|e| draw_error("svg", e.to_string()))?;
        root.present()
            .map_err(|e| draw_error("svg", e.to_string()))?;
    }

    let mut pixels = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        figure
            .draw(&root)
            .map_err(|e| draw_error("png", e.to_string()))?;
        root.present()
            .map_err(|e| draw_error("png", e.to_string()))?;
    }
    let png = encode_png(width, height, &pixels).map_err(|e| ChartError::PngEncode {
        chart: name.to_string(),
        message: e.to_string(),
    })?;

    Ok(Chart {
        name: name.to_string(),
        title: title.to_string(),
        svg,
        png,
        data,
    })
}

fn encode_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Balanced);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()?;
    }
    Ok(out)
}
