//! The 95% intervals of a group's percentiles (`compare`, `sweep`): as data
//! (`percentiles.csv` / `.json`) and as a note naming the percentiles the runs do not pin
//! down, with how many samples would (docs/reports.md, "Intervals").

use crate::group::{dur, GroupSummary};
use splitbrain_reports::stats::samples_to_bound;
use splitbrain_reports::{DataTable, Distribution};

/// An interval wider than this share of its percentile's value is named in the note.
pub const WIDE_SHARE: f64 = 0.5;

/// The measures whose percentiles get intervals, by name, from a group.
fn measures(g: &GroupSummary) -> [(&'static str, Option<Distribution>); 6] {
    [
        ("recovery", g.recovery),
        ("election", g.election),
        ("detection", g.detection),
        ("followers_heard", g.followers_heard),
        ("leaderless", g.leaderless),
        ("downtime", g.downtime.per_episode),
    ]
}

/// A distribution's percentiles with their intervals: name, permille, value, interval.
fn percentiles(
    d: &Distribution,
) -> [(&'static str, u32, u64, splitbrain_reports::stats::Interval); 3] {
    [
        ("p50", 500, d.p50_ns, d.p50_interval),
        ("p90", 900, d.p90_ns, d.p90_interval),
        ("p99", 990, d.p99_ns, d.p99_interval),
    ]
}

/// One row per group, measure and percentile: its value, samples and 95% interval (an end
/// the samples do not bound is empty).
pub fn percentile_data(name: &str, first_column: &str, groups: &[GroupSummary]) -> DataTable {
    let mut t = DataTable::new(
        name,
        &[
            first_column,
            "measure",
            "percentile",
            "samples",
            "value_ns",
            "low_ns",
            "high_ns",
        ],
    );
    for g in groups {
        for (measure, d) in measures(g) {
            let Some(d) = d else { continue };
            for (percentile, _, value_ns, interval) in percentiles(&d) {
                t.push(vec![
                    g.label.as_str().into(),
                    measure.into(),
                    percentile.into(),
                    d.count.into(),
                    value_ns.into(),
                    interval
                        .low_ns
                        .map_or(splitbrain_reports::Cell::Empty, Into::into),
                    interval
                        .high_ns
                        .map_or(splitbrain_reports::Cell::Empty, Into::into),
                ]);
            }
        }
    }
    t
}

/// A note naming the p90s and p99s of recovery, election and leaderless time that the
/// samples do not bound from above (with the samples that would), or whose interval is wider
/// than [`WIDE_SHARE`] of their value; `None` when every one is pinned down.
pub fn interval_note(groups: &[GroupSummary]) -> Option<String> {
    let mut unbounded = Vec::new();
    let mut needs = std::collections::BTreeMap::new();
    let mut wide = Vec::new();
    for g in groups {
        for (measure, d) in measures(g) {
            let Some(d) = d
                .filter(|_| matches!(measure, "recovery" | "election" | "leaderless" | "downtime"))
            else {
                continue;
            };
            for (percentile, permille, value_ns, interval) in percentiles(&d).into_iter().skip(1) {
                let what = format!("{} {measure} {percentile} {}", g.label, dur(Some(value_ns)));
                match (interval.low_ns, interval.high_ns) {
                    (_, None) => {
                        unbounded.push(format!("{what} ({} samples)", d.count));
                        needs.insert(permille, (percentile, samples_to_bound(permille)));
                    }
                    (low, Some(high)) => {
                        let low = low.unwrap_or(0);
                        if (high - low) as f64 > WIDE_SHARE * value_ns as f64 {
                            wide.push(format!(
                                "{what} [{} to {}]",
                                dur(Some(low)),
                                dur(Some(high))
                            ));
                        }
                    }
                }
            }
        }
    }
    let mut parts = Vec::new();
    if !unbounded.is_empty() {
        let needs: Vec<String> = (needs.values())
            .map(|(percentile, n)| match n {
                Some(n) => format!("a {percentile} needs {n}"),
                None => format!("a {percentile} needs more than 100,000"),
            })
            .collect();
        parts.push(format!(
            "too few samples to bound these from above (each is a floor): {}; {}",
            unbounded.join(", "),
            needs.join(", ")
        ));
    }
    if !wide.is_empty() {
        parts.push(format!(
            "95% intervals wider than half their value: {}",
            wide.join(", ")
        ));
    }
    (!parts.is_empty())
        .then(|| format!("{}. percentiles.csv has every interval.", parts.join(". ")))
}
