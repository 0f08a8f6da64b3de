//! `sweep`: vary one parameter and measure a failover at each value over many trials; the
//! report's failover-time distribution, election rounds and messages per election per value.
//!
//! Each trial `seed` shifts every explicit fault of the scenario by the same phase of the
//! heartbeat interval, by the rule `compare` follows too ([`crate::phase`]): uniform in
//! `[0, heartbeat)`, so a leader crash lands at a random point of the leader's heartbeat
//! interval. The draw depends on the trial only, so every value sees the same trials (the
//! same phase, even when the heartbeat itself is the parameter swept).
//!
//! Each design runs on its own transport ([`splitbrain_scenario::Design::transport`]).
//!
//! Without `--param` the scenario runs as written, as one group of trials. With
//! `--heartbeat-fraction F` and `--param election_timeout=...`, each value's heartbeat is
//! `F` times its minimum election timeout.
//!
//! [`Sweep::objective_missed`] says whether some value missed the scenario's objective (the
//! CLI then exits 3).

use crate::group::{self as charting, BuildError, GroupRuns, GroupSummary, Progress};
use crate::shell::shell_word;
use crate::Fencing;
use splitbrain_reports::{
    failover_cdf, messages_per_election, messages_vs_cluster_size, share_by_value, Chart,
    DataTable, ScalingSeries, Section, ShareSeries, Table,
};
use splitbrain_scenario::{self as scenario, Scenario};

mod designs;
mod param;
pub use designs::{only_designs, DesignsError};
pub use param::{apply, parse_param, position, FaultParam, Param, ParamError, Value};

/// What `sweep` runs: the parameter and its values, the trials, fencing.
#[derive(Clone, Debug)]
pub struct SweepPlan {
    /// `--param NAME=V1,V2,...` as given; `None`: the scenario as written.
    pub param: Option<String>,
    /// Each value's heartbeat as this fraction of its minimum election timeout.
    pub heartbeat_fraction: Option<f64>,
    /// Trials (seeds 1..=N) per value.
    pub trials: u64,
    /// Fencing at the resource.
    pub fencing: Fencing,
    /// The scenario file as given, for the report's replay commands.
    pub file: String,
}

/// One group of trials: a design (or the scenario's algorithm) at one value of the parameter.
pub struct Variant {
    /// `LINE V`, `V`, `LINE` or `as written`.
    pub label: String,
    /// The design's name, when the scenario lists designs.
    pub design: Option<String>,
    /// The design (or algorithm) as charted: its name, `-fenced` or `-unfenced` added under
    /// `--fencing both`.
    pub line: String,
    /// `NAME=V` as given, when a parameter is swept.
    pub value: Option<String>,
    /// The fencing `--fencing` set (on: `true`), if it overrides the scenario's.
    pub fencing: Option<bool>,
    /// The scenario as the group's trials run it (before each trial's shift).
    pub scenario: Scenario,
}

/// A design (or the scenario's algorithm) before the parameter is applied.
struct Base {
    design: Option<String>,
    line: String,
    fencing: Option<bool>,
    scenario: Scenario,
}

/// Every design (the scenario's algorithm when it lists none), with `--fencing` applied:
/// twice under `--fencing both`.
fn bases(scenario: &Scenario, fencing: Fencing) -> Vec<Base> {
    let mut named: Vec<(Option<String>, String, Scenario)> = Vec::new();
    if scenario.designs.is_empty() {
        let name = scenario.algorithm.name().to_string();
        named.push((None, name, scenario.clone()));
    }
    for design in &scenario.designs {
        let s = scenario.with_design(design);
        named.push((Some(design.name.clone()), design.name.clone(), s));
    }
    let modes: &[(Option<bool>, &str)] = match fencing {
        Fencing::Scenario => &[(None, "")],
        Fencing::On => &[(Some(true), "")],
        Fencing::Off => &[(Some(false), "")],
        Fencing::Both => &[(Some(true), "-fenced"), (Some(false), "-unfenced")],
    };
    let mut bases = Vec::new();
    for (design, line, s) in named {
        for &(mode, suffix) in modes {
            let mut scenario = s.clone();
            if let Some(on) = mode {
                scenario.sim.fencing = on;
            }
            bases.push(Base {
                design: design.clone(),
                line: format!("{line}{suffix}"),
                fencing: mode,
                scenario,
            });
        }
    }
    bases
}

/// Every design (the scenario's algorithm when it lists none) at every value, with
/// `--heartbeat-fraction` and `--fencing` applied, each checked by the scenario's rules.
pub fn variants(
    plan: &SweepPlan,
    scenario: &Scenario,
    param: Option<Param>,
    values: &[(String, Value)],
) -> Result<Vec<Variant>, ParamError> {
    let charted_by_line = !scenario.designs.is_empty() || plan.fencing == Fencing::Both;
    let mut variants = Vec::new();
    for base in bases(scenario, plan.fencing) {
        let in_design = |e: ParamError| match &base.design {
            Some(name) => ParamError::InDesign {
                design: name.clone(),
                error: Box::new(e),
            },
            None => e,
        };
        let mut at_values: Vec<(Option<String>, Scenario)> = Vec::new();
        if param.is_none() {
            at_values.push((None, base.scenario.clone()));
        }
        for (label, value) in values {
            let param = param.expect("values come with their parameter");
            let applied = match plan.heartbeat_fraction {
                Some(fraction) => apply_with_heartbeat(&base.scenario, param, value, fraction),
                None => apply(&base.scenario, param, value),
            };
            at_values.push((Some(label.clone()), applied.map_err(in_design)?));
        }
        for (value, s) in at_values {
            let line = charted_by_line.then_some(base.line.as_str());
            let label = match (line, &value) {
                (Some(d), Some(v)) => format!("{d} {v}"),
                (Some(d), None) => d.to_string(),
                (None, Some(v)) => v.clone(),
                (None, None) => AS_WRITTEN.to_string(),
            };
            charting::revalidate(&s, &label).map_err(|e| in_design(e.into()))?;
            variants.push(Variant {
                label,
                design: base.design.clone(),
                line: base.line.clone(),
                value,
                fencing: base.fencing,
                scenario: s,
            });
        }
    }
    Ok(variants)
}

/// The label of the one group a sweep without `--param` runs.
const AS_WRITTEN: &str = "as written";

/// Checks `--heartbeat-fraction` against the parameter swept: a number strictly between 0
/// and 1, with `--param election_timeout=...`.
pub fn check_heartbeat_fraction(fraction: f64, param: Option<Param>) -> Result<(), ParamError> {
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(ParamError::FractionOutOfRange { fraction });
    }
    let is_timeout =
        matches!(param, Some(Param::Algorithm(knob)) if knob.name == "election_timeout");
    if !is_timeout {
        return Err(ParamError::FractionNeedsTimeout);
    }
    Ok(())
}

/// `scenario` with its election timeout set to `value` and its heartbeat to `fraction` of
/// the timeout's minimum.
pub fn apply_with_heartbeat(
    scenario: &Scenario,
    param: Param,
    value: &Value,
    fraction: f64,
) -> Result<Scenario, ParamError> {
    let Value::Range(min_ns, _) = *value else {
        unreachable!("an election timeout is a range")
    };
    let heartbeat_ns = (min_ns as f64 * fraction).round() as u64;
    let Some(heartbeat) = Param::parse("heartbeat").filter(|_| heartbeat_ns > 0) else {
        return Err(ParamError::NoHeartbeat { fraction, min_ns });
    };
    let heartbeat_value = Value::Duration(heartbeat_ns);
    // The heartbeat must stay below the timeout at each step: lower it first when it goes
    // down, raise it last when it goes up.
    apply(scenario, heartbeat, &heartbeat_value)
        .and_then(|s| apply(&s, param, value))
        .or_else(|_| {
            apply(scenario, param, value).and_then(|s| apply(&s, heartbeat, &heartbeat_value))
        })
}

pub use crate::phase::{offset_ns as trial_offset, trial};

/// Each group with its fencing, its transport and every setting as it ran (the modeled
/// system's adjustments noted).
pub fn settings_table(variants: &[Variant]) -> Table {
    let mut t = Table::new(&["value", "fencing", "transport", "settings as they ran"]);
    for v in variants {
        let fencing = if v.scenario.sim.fencing { "on" } else { "off" };
        let settings = charting::SettingsAsRun::of(&v.scenario.algorithm).line();
        let transport = scenario::transport_line(&v.scenario.sim.network.transport);
        t.push(vec![
            v.label.clone(),
            fencing.to_string(),
            transport,
            settings,
        ]);
    }
    t
}

/// Each group's settings as they ran, one row per group: `groups.csv` and `.json`.
fn settings_data(variants: &[Variant]) -> DataTable {
    let columns = [
        "value",
        "design",
        "algorithm",
        "fencing",
        "transport",
        "settings",
    ];
    let mut t = DataTable::new("groups", &columns);
    for v in variants {
        let s = &v.scenario;
        t.push(vec![
            v.label.as_str().into(),
            v.design.as_deref().unwrap_or_default().into(),
            s.algorithm.name().into(),
            u64::from(s.sim.fencing).into(),
            scenario::transport_line(&s.sim.network.transport)
                .as_str()
                .into(),
            scenario::algorithm_line(&s.algorithm).as_str().into(),
        ]);
    }
    t
}

/// The results of a sweep: each group's runs and summary, and the report built from them.
pub struct Sweep {
    /// Each group's runs, in variant order.
    pub groups: Vec<GroupRuns>,
    /// Each group's summary, in the same order.
    pub summaries: Vec<GroupSummary>,
    /// The report's sections.
    pub sections: Vec<Section>,
    /// The report's charts.
    pub charts: Vec<Chart>,
    /// The report's data tables.
    pub data: Vec<DataTable>,
}

impl Sweep {
    /// Whether some value missed the scenario's recovery-time objective.
    pub fn objective_missed(&self) -> bool {
        self.summaries
            .iter()
            .any(|g| g.objective.as_ref().is_some_and(|o| !o.met))
    }
}

/// Runs every variant's trials (each run reported to `progress` as it starts) and builds
/// the report.
pub fn sweep(
    plan: &SweepPlan,
    scenario: &Scenario,
    param: Option<Param>,
    variants: &[Variant],
    progress: &dyn Progress,
) -> Result<Sweep, BuildError> {
    let groups: Vec<GroupRuns> = variants
        .iter()
        .map(|v| {
            charting::run_group(&v.label, 1..=plan.trials, None, progress, |seed| {
                trial(&v.scenario, seed).materialize(seed)
            })
        })
        .collect::<Result<_, _>>()?;
    progress.runs_finished();
    let summaries: Vec<GroupSummary> = groups
        .iter()
        .zip(variants)
        .map(|(g, v)| charting::summarise(g, v.scenario.objective.as_ref()))
        .collect();
    let (sections, charts, data) = build(plan, scenario, param, variants, &groups, &summaries)?;
    Ok(Sweep {
        groups,
        summaries,
        sections,
        charts,
        data,
    })
}

type Built = (Vec<Section>, Vec<Chart>, Vec<DataTable>);

/// The command that replays trial `trial` of variant `v` as the sweep ran it.
fn replay_command(plan: &SweepPlan, v: &Variant, trial: u64) -> String {
    let mut words = vec![
        "splitbrain run".to_string(),
        shell_word(&plan.file),
        format!("--trial {trial}"),
    ];
    if let Some(design) = &v.design {
        words.push(format!("--design {design}"));
    }
    if let Some(value) = &v.value {
        words.push(format!("--param {}", shell_word(value)));
    }
    if let Some(f) = plan.heartbeat_fraction {
        words.push(format!("--heartbeat-fraction {f}"));
    }
    if let Some(on) = v.fencing {
        words.push(if on { "--fencing on" } else { "--fencing off" }.to_string());
    }
    words.join(" ")
}

/// The safety table per value, and with a parameter the chart reviewers paste: the share of
/// trials with a safety violation at each value, one line per design (under `--fencing both`
/// its unfenced line dashed, in its colour).
fn safety_section(
    param: Option<Param>,
    fencing: Fencing,
    variants: &[Variant],
    summaries: &[GroupSummary],
    charts: &mut Vec<Chart>,
) -> Result<Section, splitbrain_reports::ChartError> {
    let mut section = Section::new("Safety")
        .text(charting::SAFETY_TEXT)
        .table(charting::safety_table("value", summaries));
    let Some(param) = param else {
        return Ok(section);
    };
    let mut categories: Vec<String> = Vec::new();
    let mut lines: Vec<ShareSeries> = Vec::new();
    for (v, g) in variants.iter().zip(summaries) {
        let value = v.value.clone().unwrap_or_default();
        let at = match categories.iter().position(|c| *c == value) {
            Some(i) => i,
            None => {
                categories.push(value);
                categories.len() - 1
            }
        };
        let label = v.line.clone();
        let line = match lines.iter().position(|l| l.label == label) {
            Some(i) => &mut lines[i],
            None => {
                lines.push(ShareSeries {
                    label,
                    counts: Vec::new(),
                    dashed: fencing == Fencing::Both && v.fencing == Some(false),
                });
                lines.last_mut().expect("just pushed")
            }
        };
        line.counts.resize(at + 1, None);
        line.counts[at] = Some((g.seeds_with_safety_violations as u64, g.seeds as u64));
    }
    let prefix = format!("{}=", param.name());
    let shown: Vec<String> = categories
        .iter()
        .map(|c| c.strip_prefix(&prefix).unwrap_or(c).to_string())
        .collect();
    // Numbers go on a numeric axis, so that 8, 10, 12, 13 s are not drawn evenly spaced.
    let placed: Option<Vec<(f64, &str)>> = shown
        .iter()
        .map(|value| param::position(param, value))
        .collect();
    let (x_label, positions) = match &placed {
        Some(placed) if placed.len() >= 2 => {
            let unit = placed[0].1;
            let label = match unit {
                "" => param.axis_label(),
                unit => format!("{} ({unit})", param.axis_label()),
            };
            (
                label,
                Some(placed.iter().map(|p| p.0).collect::<Vec<f64>>()),
            )
        }
        _ => (param.axis_label(), None),
    };
    charts.push(share_by_value(
        "safety_violations",
        &format!("Trials with a safety violation by {}", param.name()),
        &x_label,
        "trials with a safety violation",
        &shown,
        positions.as_deref(),
        &lines,
    )?);
    section = section
        .text(
            "The share of trials in which any safety invariant broke, at each value, one line \
             per design; each bar is the 95% interval of that share (Wilson).",
        )
        .chart("safety_violations");
    Ok(section)
}

/// One row per trial of every group: its offset, outcome counts and replay command.
fn trials_table(plan: &SweepPlan, variants: &[Variant], groups: &[GroupRuns]) -> DataTable {
    let mut t = DataTable::new(
        "trials",
        &[
            "value",
            "trial",
            "offset_ns",
            "failovers",
            "safety_violations",
            "stale_writes_accepted",
            "faults_skipped",
            "replay",
        ],
    );
    for (group, v) in groups.iter().zip(variants) {
        let hb = v.scenario.algorithm.heartbeat_ns();
        for run in &group.runs {
            t.push(vec![
                group.label.as_str().into(),
                run.seed.into(),
                trial_offset(run.seed, hb).into(),
                run.failovers.len().into(),
                run.safety_violations.as_str().into(),
                run.stale_accepted.into(),
                run.faults_skipped.into(),
                replay_command(plan, v, run.seed).as_str().into(),
            ]);
        }
    }
    t
}

/// The "What ran" section: the scenario, its designs and fencing, the parameter, the trials.
fn what_ran(
    plan: &SweepPlan,
    scenario: &Scenario,
    param: Option<Param>,
    variants: &[Variant],
) -> Section {
    let values: Vec<String> = variants.iter().map(|v| v.label.clone()).collect();
    let setting = match (param, plan.heartbeat_fraction) {
        (None, _) => "as written (no parameter varied)".to_string(),
        (Some(p), None) => format!("with {} set to each value", p.name()),
        (Some(p), Some(f)) => format!(
            "with {} set to each value and the heartbeat to {f} of its minimum",
            p.name()
        ),
    };
    // Each design with the transport it ran on.
    let on = |name: &str, transport| format!("{name} on {}", scenario::transport_line(transport));
    let designs = if scenario.designs.is_empty() {
        on(scenario.algorithm.name(), &scenario.sim.network.transport)
    } else {
        let names: Vec<String> = scenario
            .designs
            .iter()
            .map(|d| on(&d.name, &d.transport))
            .collect();
        format!("every design: {}", names.join(", "))
    };
    let designs = match plan.fencing {
        Fencing::Both => format!("{designs}, each with fencing and without"),
        _ => designs,
    };
    Section::new("What ran")
        .text(format!(
            "{} ({} nodes, {designs}), {setting}. Each trial shifts every \
                 explicit fault by a random point of the interval at which the leader shows it \
                 is alive, as each value and design sets it (the heartbeat; for leases the \
                 renewal period, etcd's keep-alive, Kubernetes' retry period, a third of \
                 ZooKeeper's session timeout; {} for the scenario as written), at the same \
                 point of it for every value, drawn from the trial's seed; so a leader crash \
                 strikes anywhere in that interval. \
                 trials.csv gives each trial's offset and the command that replays it.",
            scenario.name,
            scenario.sim.members,
            splitbrain_sim::format_duration(scenario.algorithm.heartbeat_ns()),
        ))
        .list(values)
}

fn build(
    plan: &SweepPlan,
    scenario: &Scenario,
    param: Option<Param>,
    variants: &[Variant],
    groups: &[GroupRuns],
    summaries: &[GroupSummary],
) -> Result<Built, splitbrain_reports::ChartError> {
    let mut charts = Vec::new();
    let mut data = Vec::new();
    let mut sections = Vec::new();
    let name = param.map_or("trials", Param::name);
    sections.push(what_ran(plan, scenario, param, variants));
    sections.push(
        Section::new("Settings as they ran")
            .text(
                "Each group's fencing, the transport it ran on (each design's own, else the \
                 scenario's network.transport when it sets one, else its algorithm's default) \
                 and every setting of its algorithm as the engine ran it, with what the \
                 modeled system does to the settings as written (a negotiated session, a \
                 raised TTL) as notes. groups.csv lists them.",
            )
            .table(settings_table(variants)),
    );
    sections.push(safety_section(
        param,
        plan.fencing,
        variants,
        summaries,
        &mut charts,
    )?);

    let objective = charting::objective_line(scenario.objective.as_ref());
    let mut failover = Section::new("Failover time").text(
        "Recovery time of each failover, from the fault to the next write a leader got \
         accepted (the new leader's, or the same one's when it rode the fault through: the \
         `ridden through` column counts those; they have no election), per value; election \
         time is to the new leader's claim, over the failovers that had one. With designs, one chart per \
         design; with and without fencing share a curve, `NAME (both)`, where equal.",
    );
    // One chart per design (its values as curves), or one for the scenario's algorithm;
    // under --fencing both a value's fenced and unfenced curves are one when equal.
    let mut designs: Vec<Option<&str>> = Vec::new();
    for v in variants {
        if !designs.contains(&v.design.as_deref()) {
            designs.push(v.design.as_deref());
        }
    }
    for design in designs {
        let series = charting::merge_identical(
            variants
                .iter()
                .zip(summaries)
                .filter(|(v, _)| v.design.as_deref() == design)
                .map(|(_, g)| g.recovery_series.clone()),
        );
        let (chart, title) = match design {
            Some(d) => (
                format!("failover_cdf_{d}"),
                format!("Failover recovery time by {name}: {d}"),
            ),
            None => (
                "failover_cdf".to_string(),
                format!("Failover recovery time by {name}"),
            ),
        };
        charts.push(failover_cdf(
            &chart,
            &title,
            "recovery time (fault to the next write a leader got accepted)",
            &series,
            objective.as_ref(),
        )?);
        failover = failover.chart(chart.clone());
        let leaderless = charting::merge_identical(
            variants
                .iter()
                .zip(summaries)
                .filter(|(v, _)| v.design.as_deref() == design)
                .map(|(_, g)| g.leaderless_series.clone()),
        );
        let chart = chart.replacen("failover_cdf", "leaderless_cdf", 1);
        charts.push(failover_cdf(
            &chart,
            &title.replacen(
                "Failover recovery time",
                "Leaderless time per failover episode",
                1,
            ),
            "leaderless time (no recognised leader, fault until stable again)",
            &leaderless,
            None,
        )?);
        failover = failover.chart(chart);
    }
    let mut failover = failover
        .text(charting::ELECTION_MEASURES_TEXT)
        .table(charting::summary_table("value", summaries))
        .text_if(charting::skipped_faults_note(summaries))
        .text_if(crate::intervals::interval_note(summaries));
    if let Some(t) = charting::objective_table("value", summaries) {
        failover = failover
            .text(
                "Recovery-time objective: the budget against the p99 of recovery (an \
                 unresolved failover is longer than any budget), broken down into the p99 of \
                 detection and of election, the start-up delay, and recovery. sweep exits 3 \
                 when a value misses it.",
            )
            .table(t);
    }
    sections.push(failover);
    sections.push(charting::availability_section("value", summaries));
    sections.extend(crate::measures::measures_section(
        "value",
        summaries,
        &mut charts,
    )?);

    let msgs: Vec<_> = summaries.iter().map(|g| g.messages.clone()).collect();
    charts.push(messages_per_election(
        "messages_per_election",
        &format!("Messages per failover election by {}", name),
        name,
        &msgs,
    )?);
    let mut messages = Section::new("Messages per election")
        .text(
            "The mean, over decided elections that started at or after the first fault of a \
             trial (the start-up election is left out), of the messages of each type sent \
             during the election.",
        )
        .chart("messages_per_election");
    if param == Some(Param::Nodes) {
        // One line per design (the scenario's algorithm when it lists none).
        let mut series: Vec<ScalingSeries> = Vec::new();
        for (v, g) in variants.iter().zip(summaries) {
            let label = v.line.clone();
            let Some(messages) = g.messages_per_election else {
                continue;
            };
            let point = (v.scenario.sim.members as u64, messages);
            match series.iter_mut().find(|s| s.label == label) {
                Some(s) => s.points.push(point),
                None => series.push(ScalingSeries {
                    label,
                    points: vec![point],
                }),
            }
        }
        charts.push(messages_vs_cluster_size(
            "messages_vs_cluster_size",
            "Messages per failover election against cluster size",
            "messages per decided failover election",
            &series,
        )?);
        messages = messages.chart("messages_vs_cluster_size");
    }
    sections.push(messages);

    data.push(charting::summary_data("summary", "value", summaries));
    data.extend(crate::measures::measures_data(
        "measures", "value", summaries,
    ));
    data.push(crate::intervals::percentile_data(
        "percentiles",
        "value",
        summaries,
    ));
    data.push(charting::failover_data("failovers", "value", groups));
    let t = trials_table(plan, variants, groups);
    data.push(t);
    data.push(settings_data(variants));
    Ok((sections, charts, data))
}
