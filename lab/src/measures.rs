//! What an algorithm's own properties measured in each run (`RunReport::measures`: the blast
//! radius of a fault over many ranges, a balance, whatever the algorithm reports), summed up
//! over a group's runs: each measure's minimum, mean, p50, p99 and maximum across runs, the
//! percentiles with 95% order-statistic intervals as every percentile of a group has them
//! (`splitbrain_reports::stats`). The lab knows no measure: names and values come from the
//! runs.

use crate::group::{GroupSummary, SeedRun};
use splitbrain_reports::stats::{interval_ranks, permille_sorted};
use splitbrain_reports::{
    curves_over_time, Cell, Chart, ChartError, CurveSeries, DataTable, Section, Table,
};

/// One measure over a group's runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MeasureSummary {
    /// The measure's name, as the algorithm gives it (its unit at its end).
    pub name: String,
    /// Runs that gave it a value (NaN values, "nothing to measure", left out).
    pub runs: usize,
    /// The smallest value.
    pub min: f64,
    /// The mean over those runs.
    pub mean: f64,
    /// The median run's value, with its 95% interval.
    pub p50: Quantile,
    /// The 99th percentile run's value, with its 95% interval.
    pub p99: Quantile,
    /// The largest value.
    pub max: f64,
}

/// A percentile of a measure across runs and its 95% interval (an end is `None` when the
/// runs are too few to bound it).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Quantile {
    /// The value (nearest rank).
    pub value: f64,
    /// The interval's lower end.
    pub low: Option<f64>,
    /// The interval's upper end.
    pub high: Option<f64>,
}

impl Quantile {
    fn of(sorted: &[f64], permille: u32) -> Self {
        let (low, high) = interval_ranks(sorted.len(), permille);
        Self {
            value: permille_sorted(sorted, permille),
            low: low.map(|r| sorted[r - 1]),
            high: high.map(|r| sorted[r - 1]),
        }
    }
}

/// The distinct names, in the order first met.
fn first_met<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut distinct: Vec<&str> = Vec::new();
    for name in names {
        if !distinct.contains(&name) {
            distinct.push(name);
        }
    }
    distinct
}

/// Every measure the runs gave, in the order first met.
pub fn summarise(runs: &[SeedRun]) -> Vec<MeasureSummary> {
    let names = first_met(runs.iter().flat_map(|r| r.measures.iter().map(|m| m.name)));
    names
        .into_iter()
        .filter_map(|name| summary_of(name, runs))
        .collect()
}

fn summary_of(name: &'static str, runs: &[SeedRun]) -> Option<MeasureSummary> {
    let mut values: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.measures.iter().filter(|m| m.name == name))
        .map(|m| m.value)
        .filter(|v| !v.is_nan())
        .collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(MeasureSummary {
        name: name.to_string(),
        runs: values.len(),
        min: values[0],
        mean: values.iter().sum::<f64>() / values.len() as f64,
        p50: Quantile::of(&values, 500),
        p99: Quantile::of(&values, 990),
        max: values[values.len() - 1],
    })
}

/// One curve of the algorithm's own properties over a group's runs: at `CURVE_POINTS + 1`
/// evenly spaced times from 0 to the longest run's end, the median of the runs' values
/// then (nearest rank).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MedianCurve {
    /// The curve's name, as the algorithm gives it.
    pub name: String,
    /// Runs that followed it.
    pub runs: usize,
    /// `(time, median value)`.
    pub points: Vec<(u64, f64)>,
}

/// How many intervals a median curve's times split the run into (it is taken at one time
/// more).
pub const CURVE_POINTS: u64 = 400;

/// Every curve the runs followed, in the order first met.
pub fn median_curves(runs: &[SeedRun]) -> Vec<MedianCurve> {
    let names = first_met(runs.iter().flat_map(|r| r.curves.iter().map(|c| c.name)));
    names
        .into_iter()
        .map(|name| median_curve(name, runs))
        .collect()
}

fn median_curve(name: &'static str, runs: &[SeedRun]) -> MedianCurve {
    let curves: Vec<&splitbrain_sim::property::Curve> = runs
        .iter()
        .flat_map(|r| r.curves.iter().filter(|c| c.name == name))
        .collect();
    let end_ns = (curves.iter())
        .filter_map(|c| c.points.last().map(|&(at, _)| at))
        .max()
        .unwrap_or(0);
    let points = (0..=CURVE_POINTS)
        .map(|i| {
            let at = (u128::from(end_ns) * u128::from(i) / u128::from(CURVE_POINTS)) as u64;
            let mut values: Vec<f64> = curves.iter().map(|c| c.at(at)).collect();
            values.sort_by(f64::total_cmp);
            (at, permille_sorted(&values, 500))
        })
        .collect();
    MedianCurve {
        name: name.to_string(),
        runs: curves.len(),
        points,
    }
}

/// What the measures table's columns mean, for the reports.
pub const MEASURES_TEXT: &str = "What the algorithm's own properties measured in each run \
     (its docs say what each is), over the group's runs: the smallest, the mean, the median run \
     and the 99th percentile run with their 95% intervals (an end is open when the runs are too \
     few to bound it), and the largest. A name ends in its unit: _s seconds, _range_s range-seconds.";

/// One row per group and measure; `None` when no group measured anything.
pub fn measures_table(first_column: &str, groups: &[GroupSummary]) -> Option<Table> {
    if groups.iter().all(|g| g.measures.is_empty()) {
        return None;
    }
    let mut t = Table::new(&[
        first_column,
        "measure",
        "runs",
        "min",
        "mean",
        "p50",
        "p99",
        "max",
    ]);
    for g in groups {
        for m in &g.measures {
            t.push(vec![
                g.label.clone(),
                m.name.clone(),
                m.runs.to_string(),
                number(m.min),
                number(m.mean),
                quantile(m.p50),
                quantile(m.p99),
                number(m.max),
            ]);
        }
    }
    Some(t)
}

/// What the curve charts show, for the reports.
pub const CURVES_TEXT: &str = "What the algorithm's own properties followed over each run \
     (its docs say what each is): one line per group, at each time the median over the \
     group's runs.";

/// The report's section on the algorithm's own measures and curves, if any was taken; the
/// curves' charts, one per curve with a line per group, go to `charts`.
pub fn measures_section(
    first_column: &str,
    groups: &[GroupSummary],
    charts: &mut Vec<Chart>,
) -> Result<Option<Section>, ChartError> {
    let table = measures_table(first_column, groups);
    let curves = groups.iter().flat_map(|g| g.curves.iter());
    let names = first_met(curves.map(|c| c.name.as_str()));
    if table.is_none() && names.is_empty() {
        return Ok(None);
    }
    let mut section = Section::new("The algorithm's own measures");
    if let Some(table) = table {
        section = section.text(MEASURES_TEXT).table(table);
    }
    if !names.is_empty() {
        section = section.text(CURVES_TEXT);
    }
    for name in names {
        let series: Vec<CurveSeries> = (groups.iter())
            .filter_map(|g| {
                let curve = g.curves.iter().find(|c| c.name == name)?;
                Some(CurveSeries {
                    label: g.label.clone(),
                    points: curve.points.clone(),
                })
            })
            .collect();
        let chart_name = format!("curve_{name}");
        let title = format!("{name} over time, median over the seeds");
        charts.push(curves_over_time(&chart_name, &title, name, &series)?);
        section = section.chart(chart_name);
    }
    Ok(Some(section))
}

/// `measures.csv`/`.json`: every group's measures with their intervals; `None` when no
/// group measured anything.
pub fn measures_data(name: &str, first_column: &str, groups: &[GroupSummary]) -> Option<DataTable> {
    if groups.iter().all(|g| g.measures.is_empty()) {
        return None;
    }
    let mut data = DataTable::new(
        name,
        &[
            first_column,
            "measure",
            "runs",
            "min",
            "mean",
            "p50",
            "p50_low",
            "p50_high",
            "p99",
            "p99_low",
            "p99_high",
            "max",
        ],
    );
    let end = |v: Option<f64>| v.map_or(Cell::Empty, Cell::from);
    for g in groups {
        for m in &g.measures {
            data.push(vec![
                g.label.as_str().into(),
                m.name.as_str().into(),
                m.runs.into(),
                m.min.into(),
                m.mean.into(),
                m.p50.value.into(),
                end(m.p50.low),
                end(m.p50.high),
                m.p99.value.into(),
                end(m.p99.low),
                end(m.p99.high),
                m.max.into(),
            ]);
        }
    }
    Some(data)
}

/// A measure's value as the tables show it: at most 3 decimals, `-` for NaN.
pub fn number(v: f64) -> String {
    if v.is_nan() {
        return "-".to_string();
    }
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `1.2 [1.1, 1.4]`; an open end `..`.
fn quantile(q: Quantile) -> String {
    let end = |v: Option<f64>| v.map_or("..".to_string(), number);
    format!("{} [{}, {}]", number(q.value), end(q.low), end(q.high))
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::property::{Curve, Measured};

    fn run(seed: u64, measures: &[(&'static str, f64)]) -> SeedRun {
        SeedRun {
            seed,
            measures: measures.iter().map(|&(n, v)| Measured::new(n, v)).collect(),
            ..SeedRun::default()
        }
    }

    #[test]
    fn a_median_curve_takes_each_time_s_median_over_the_runs() {
        let runs: Vec<SeedRun> = (1..=3)
            .map(|s| SeedRun {
                seed: s,
                curves: vec![Curve::new("down", vec![(100 * s, s as f64)], 400)],
                ..SeedRun::default()
            })
            .collect();
        let median = &median_curves(&runs)[0];
        assert_eq!((median.name.as_str(), median.runs), ("down", 3));
        assert_eq!(median.points.len() as u64, CURVE_POINTS + 1);
        let at = |t: u64| median.points.iter().find(|p| p.0 == t).unwrap().1;
        // At 100 only run 1 is up (1, 0, 0); at 200 runs 1 and 2 (1, 2, 0); at 400 all.
        assert_eq!((at(0), at(100), at(200), at(400)), (0.0, 0.0, 1.0, 2.0));
    }

    #[test]
    fn each_measure_is_summed_up_over_the_runs_that_took_it() {
        let mut runs: Vec<SeedRun> = (1..=100)
            .map(|s| run(s, &[("ranges_lost", s as f64), ("idle_s", f64::NAN)]))
            .collect();
        runs.push(run(101, &[]));
        let summary = summarise(&runs);
        assert_eq!(summary.len(), 1, "a measure with no value is left out");
        let lost = &summary[0];
        assert_eq!((lost.name.as_str(), lost.runs), ("ranges_lost", 100));
        assert_eq!((lost.min, lost.mean, lost.max), (1.0, 50.5, 100.0));
        assert_eq!(lost.p50.value, 50.0);
        assert_eq!(lost.p99.value, 99.0);
        assert!(lost.p50.low.unwrap() < 50.0 && lost.p50.high.unwrap() > 50.0);
        assert_eq!(
            lost.p99.high, None,
            "100 runs cannot bound a p99 from above"
        );
        assert_eq!(
            quantile(lost.p99),
            format!("99 [{}, ..]", number(lost.p99.low.unwrap()))
        );
    }
}
