//! `splitbrain sweep`: vary one parameter and measure a failover at each value over many
//! trials; a report folder with the failover-time distribution, election rounds and messages
//! per election per value.
//!
//! Each trial `seed` shifts every explicit fault of the scenario by the same phase of the
//! heartbeat interval, `offset = floor(u * heartbeat / 2^64)` with `u` the first draw of
//! `SimRng::stream(seed, StreamId::SETUP ^ 0x5eed)`: uniform in `[0, heartbeat)`, so a leader
//! crash lands at a random point of the leader's heartbeat interval. The draw depends on the
//! trial only, so every value sees the same trials (the same phase, even when the heartbeat
//! itself is the parameter swept).
//!
//! Without `--param` the scenario runs as written, as one group of trials. With
//! `--heartbeat-fraction F` and `--param election_timeout=...`, each value's heartbeat is
//! `F` times its minimum election timeout.
//!
//! Exit code: 0, or 3 when the scenario states an objective and some value misses it.

use super::charting::{self, GroupRuns, GroupSummary};
use crate::cli::SweepArgs;
use crate::exit;
use crate::scenario::{self, Scenario};
use serde::Serialize;
use splitbrain_algorithms::{
    AlgorithmEntry, AlgorithmError, Cluster, Knob, KnobShape, KnobValue, ALGORITHMS,
};
use splitbrain_reports::{
    failover_cdf, format_seeds, messages_per_election, messages_vs_cluster_size, Chart, DataTable,
    ReportDoc, ScalingSeries, Section,
};
use splitbrain_sim::{Latency, SimRng, StreamId};

/// The parameters of the scenario itself (the algorithms' own come from their knobs), with an
/// example value and what they take.
const SCENARIO_PARAMS: &[(&str, &str, &str)] = &[
    ("nodes", "3,5,7", "integers >= 1"),
    ("loss", "0,0.05", "0..1"),
    ("latency", "1ms..10ms", "uniform) or latency=5ms (constant"),
];

/// Every parameter with an example and who takes it, for hints.
fn params_help() -> String {
    let mut knobs: Vec<(Knob, Vec<&str>)> = Vec::new();
    for entry in ALGORITHMS {
        for knob in entry.knobs {
            match knobs.iter_mut().find(|(k, _)| k.name == knob.name) {
                Some((_, algorithms)) => algorithms.push(entry.name),
                None => knobs.push((*knob, vec![entry.name])),
            }
        }
    }
    let algorithm_params = knobs
        .iter()
        .map(|(k, algorithms)| format!("{}={} ({})", k.name, k.example, algorithms.join(", ")));
    let scenario_params = SCENARIO_PARAMS
        .iter()
        .map(|(name, example, takes)| format!("{name}={example} ({takes})"));
    algorithm_params
        .chain(scenario_params)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The parameters a sweep can vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Param {
    /// A setting of the scenario's algorithm (one of its knobs).
    Algorithm(Knob),
    Nodes,
    Loss,
    Latency,
}

impl Param {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "nodes" => Param::Nodes,
            "loss" => Param::Loss,
            "latency" => Param::Latency,
            _ => Param::Algorithm(
                *ALGORITHMS
                    .iter()
                    .flat_map(|entry| entry.knobs)
                    .find(|knob| knob.name == name)?,
            ),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Param::Algorithm(knob) => knob.name,
            Param::Nodes => "nodes",
            Param::Loss => "loss",
            Param::Latency => "latency",
        }
    }

    /// The form of a value, for hints.
    fn form(self) -> String {
        let form = match self {
            Param::Algorithm(Knob {
                shape: KnobShape::DurationRange,
                ..
            }) => "a range MIN..MAX of durations, like 150ms..300ms",
            Param::Algorithm(Knob {
                shape: KnobShape::Duration,
                ..
            }) => "a duration longer than zero, like 50ms",
            Param::Algorithm(Knob {
                shape: KnobShape::Choice(names),
                ..
            }) => return format!("one of {}", names.join(", ")),
            Param::Nodes => {
                return format!(
                    "an integer from 1 to {} (the largest cluster a scenario may ask for), like 5",
                    scenario::MAX_NODES
                )
            }
            Param::Loss => "a probability from 0 to 1, like 0.05",
            Param::Latency => "a range MIN..MAX of durations (uniform), like 1ms..10ms, or one duration (constant), like 5ms",
        };
        form.to_string()
    }

    /// The algorithms that have the parameter (`None`: every algorithm).
    fn algorithms(self) -> Option<Vec<&'static str>> {
        let Param::Algorithm(knob) = self else {
            return None;
        };
        let has_knob = |entry: &&AlgorithmEntry| entry.knobs.iter().any(|k| k.name == knob.name);
        Some(ALGORITHMS.iter().filter(has_knob).map(|e| e.name).collect())
    }
}

/// One value of the parameter.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Range(u64, u64),
    Duration(u64),
    Choice(&'static str),
    Count(usize),
    Fraction(f64),
}

fn parse_range(text: &str) -> Option<(u64, u64)> {
    let (a, b) = text.split_once("..")?;
    let a = scenario::parse_duration(a.trim()).ok()?;
    let b = scenario::parse_duration(b.trim()).ok()?;
    (a <= b).then_some((a, b))
}

fn parse_value(param: Param, text: &str) -> Option<Value> {
    match param {
        Param::Algorithm(Knob {
            shape: KnobShape::DurationRange,
            ..
        }) => parse_range(text).map(|(a, b)| Value::Range(a, b)),
        Param::Algorithm(Knob {
            shape: KnobShape::Duration,
            ..
        }) => {
            let d = scenario::parse_duration(text).ok()?;
            (d > 0).then_some(Value::Duration(d))
        }
        Param::Algorithm(Knob {
            shape: KnobShape::Choice(names),
            ..
        }) => names
            .iter()
            .find(|name| **name == text)
            .map(|name| Value::Choice(name)),
        Param::Nodes => {
            let n: usize = text.parse().ok()?;
            (n >= 1 && n as u64 <= scenario::MAX_NODES).then_some(Value::Count(n))
        }
        Param::Loss => {
            let p: f64 = text.parse().ok()?;
            (0.0..=1.0).contains(&p).then_some(Value::Fraction(p))
        }
        Param::Latency => {
            if text.contains("..") {
                parse_range(text).map(|(a, b)| Value::Range(a, b))
            } else {
                scenario::parse_duration(text).ok().map(Value::Duration)
            }
        }
    }
}

/// Parses `NAME=V1,V2,...`: the parameter and its values with their labels.
fn parse_param(text: &str) -> Result<(Param, Vec<(String, Value)>), String> {
    let Some((name, values)) = text.split_once('=') else {
        return Err(format!(
            "invalid --param {text:?}: expected NAME=V1,V2,...\n  hint: the parameters: {}",
            params_help()
        ));
    };
    let name = name.trim();
    let Some(param) = Param::parse(name) else {
        return Err(format!(
            "unknown parameter {name:?}\n  hint: the parameters: {}",
            params_help()
        ));
    };
    let mut parsed: Vec<(String, Value)> = Vec::new();
    for raw in values.split(',') {
        let raw = raw.trim();
        let Some(value) = parse_value(param, raw) else {
            return Err(format!(
                "invalid value {raw:?} for {name}\n  hint: a value of {name} is {}",
                param.form()
            ));
        };
        let label = format!("{name}={raw}");
        if parsed.iter().any(|(l, _)| *l == label) {
            return Err(format!(
                "{label} is given twice\n  hint: give each value once"
            ));
        }
        parsed.push((label, value));
    }
    Ok((param, parsed))
}

/// The scenario with the parameter set to `value`; an error when it does not apply.
fn apply(scenario: &Scenario, param: Param, value: &Value) -> Result<Scenario, String> {
    let mut s = scenario.clone();
    let alg_name = s.algorithm.name();
    if let Some(algs) = param.algorithms() {
        if !algs.contains(&alg_name) {
            return Err(format!(
                "{} does not apply to the scenario's algorithm, {alg_name}\n  hint: {} is a parameter of {}",
                param.name(),
                param.name(),
                algs.join(", ")
            ));
        }
    }
    match (param, value) {
        (Param::Algorithm(knob), value) => {
            let value = match *value {
                Value::Range(a, b) => KnobValue::Range(a, b),
                Value::Duration(d) => KnobValue::Duration(d),
                Value::Choice(name) => KnobValue::Choice(name),
                Value::Count(_) | Value::Fraction(_) => {
                    unreachable!("knob values are parsed as durations or names")
                }
            };
            let cluster = Cluster {
                nodes: s.sim.members as u64,
            };
            s.algorithm = s
                .algorithm
                .vary(&cluster, knob.name, value)
                .map_err(|problem| setting_error(knob.name, value, &problem.error))?;
        }
        (Param::Nodes, Value::Count(n)) => {
            s = s.resized(*n).ok_or_else(|| {
                format!(
                    "cannot resize to {n} nodes: {} runs at most {} nodes here",
                    s.algorithm.name(),
                    scenario::max_members(&s.algorithm)
                )
            })?;
        }
        (Param::Loss, Value::Fraction(p)) => {
            s.sim.network.default.loss_ppm = (p * 1_000_000.0).round() as u32;
        }
        (Param::Latency, Value::Range(a, b)) => {
            s.sim.network.default.latency = Latency::Uniform(*a, *b);
        }
        (Param::Latency, Value::Duration(d)) => {
            s.sim.network.default.latency = Latency::Constant(*d);
        }
        _ => unreachable!("values are parsed for their parameter"),
    }
    Ok(s)
}

/// A knob value the algorithm's rules refuse: which value, what rule, and the rule's hint.
fn setting_error(knob: &str, value: KnobValue, error: &AlgorithmError) -> String {
    let value = match value {
        KnobValue::Duration(ns) => scenario::format_duration_ron(ns),
        KnobValue::Range(a, b) => format!(
            "{}..{}",
            scenario::format_duration_ron(a),
            scenario::format_duration_ron(b)
        ),
        KnobValue::Choice(name) => name.to_string(),
    };
    let mut message = format!("{knob}={value}: {error}");
    if let Some(hint) = error.hint() {
        message.push_str(&format!("\n  hint: {hint}"));
    }
    message
}

/// The label of the one group a sweep without `--param` runs.
const AS_WRITTEN: &str = "as written";

/// Checks `--heartbeat-fraction` against the parameter swept: a number strictly between 0
/// and 1, with `--param election_timeout=...`.
fn check_heartbeat_fraction(fraction: f64, param: Option<Param>) -> Result<(), String> {
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(format!(
            "invalid --heartbeat-fraction {fraction}: it must be between 0 and 1\n  hint: the \
             heartbeat as a fraction of the minimum election timeout, like --heartbeat-fraction 0.1"
        ));
    }
    let is_timeout =
        matches!(param, Some(Param::Algorithm(knob)) if knob.name == "election_timeout");
    if !is_timeout {
        return Err(
            "--heartbeat-fraction needs --param election_timeout=...\n  hint: it sets each \
             value's heartbeat from its minimum election timeout, like --param \
             election_timeout=150ms..300ms,300ms..600ms --heartbeat-fraction 0.1"
                .to_string(),
        );
    }
    Ok(())
}

/// `scenario` with its election timeout set to `value` and its heartbeat to `fraction` of
/// the timeout's minimum.
fn apply_with_heartbeat(
    scenario: &Scenario,
    param: Param,
    value: &Value,
    fraction: f64,
) -> Result<Scenario, String> {
    let Value::Range(min_ns, _) = *value else {
        unreachable!("an election timeout is a range")
    };
    let heartbeat_ns = (min_ns as f64 * fraction).round() as u64;
    let Some(heartbeat) = Param::parse("heartbeat").filter(|_| heartbeat_ns > 0) else {
        return Err(format!(
            "--heartbeat-fraction {fraction} of {} is no heartbeat\n  hint: give a larger \
             fraction or longer timeouts",
            scenario::format_duration_ron(min_ns)
        ));
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

/// The scenario with every explicit fault shifted by `offset_ns`.
fn shifted(scenario: &Scenario, offset_ns: u64) -> Scenario {
    let mut s = scenario.clone();
    for f in &mut s.sim.faults {
        f.at_ns = f.at_ns.saturating_add(offset_ns);
    }
    s
}

/// The offset of trial `seed`: uniform in `[0, heartbeat)`, the same phase for every value.
pub fn trial_offset(seed: u64, heartbeat_ns: u64) -> u64 {
    let u = SimRng::stream(seed, StreamId::SETUP ^ 0x5eed).next_u64();
    ((u128::from(u) * u128::from(heartbeat_ns)) >> 64) as u64
}

#[derive(Serialize)]
struct JsonSummary<'a> {
    scenario: &'a str,
    command: &'a str,
    out: String,
    /// The parameter swept; `null` for plain repeated trials.
    param: Option<&'a str>,
    /// `--heartbeat-fraction`, if given.
    heartbeat_fraction: Option<f64>,
    trials: u64,
    values: &'a [GroupSummary],
    exit_code: u8,
}

/// Runs the command; returns the exit code.
pub fn run(args: &SweepArgs) -> u8 {
    let (param, values) = match args.param.as_deref().map(parse_param).transpose() {
        Ok(Some((param, values))) => (Some(param), values),
        Ok(None) => (None, Vec::new()),
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    if let Some(fraction) = args.heartbeat_fraction {
        if let Err(e) = check_heartbeat_fraction(fraction, param) {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    }
    let groups_asked = values.len().max(1);
    if let Err(code) = charting::check_count("--trials", args.trials, groups_asked, "per value") {
        return code;
    }
    if let Err(code) = charting::check_out_folder(&args.out) {
        return code;
    }
    let scenario = match scenario::load(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return exit::BAD_INPUT;
        }
    };
    let mut variants: Vec<(String, Scenario)> = Vec::new();
    if param.is_none() {
        variants.push((AS_WRITTEN.to_string(), scenario.clone()));
    }
    for (label, value) in &values {
        let param = param.expect("values come with their parameter");
        let applied = match args.heartbeat_fraction {
            Some(fraction) => apply_with_heartbeat(&scenario, param, value, fraction),
            None => apply(&scenario, param, value),
        };
        let s = match applied {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::BAD_INPUT;
            }
        };
        if let Err(e) = charting::revalidate(&s, label) {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
        variants.push((label.clone(), s));
    }
    let trials: Vec<u64> = (1..=args.trials).collect();
    let groups: Vec<GroupRuns> = variants
        .iter()
        .map(|(label, s)| {
            let hb = s.algorithm.heartbeat_ns();
            charting::run_group(label, 1..=args.trials, None, |seed| {
                shifted(s, trial_offset(seed, hb)).materialize(seed)
            })
        })
        .collect();
    let summaries: Vec<GroupSummary> = groups
        .iter()
        .zip(&variants)
        .map(|(g, (_, s))| charting::summarise(g, s.objective.as_ref()))
        .collect();
    let missed = summaries
        .iter()
        .any(|g| g.objective.as_ref().is_some_and(|o| !o.met));
    let code = if missed {
        exit::LIVENESS_FAILED
    } else {
        exit::MATCHED
    };
    let mut words = vec![
        "splitbrain".to_string(),
        "sweep".to_string(),
        charting::shell_word(&args.file.display().to_string()),
    ];
    if let Some(p) = &args.param {
        words.extend(["--param".to_string(), charting::shell_word(p)]);
    }
    if let Some(f) = args.heartbeat_fraction {
        words.extend(["--heartbeat-fraction".to_string(), f.to_string()]);
    }
    words.extend([
        "--trials".to_string(),
        args.trials.to_string(),
        "--out".to_string(),
        charting::shell_word(&args.out.display().to_string()),
    ]);
    let command = words.join(" ");
    let param_name = param.map_or("trials", Param::name);

    let built = build(
        &scenario,
        param,
        args.heartbeat_fraction,
        &variants,
        &groups,
        &summaries,
    );
    let (sections, charts, data) = match built {
        Ok(b) => b,
        Err(e) => return charting::chart_failed(e),
    };
    let mut facts = vec![
        ("scenario".to_string(), args.file.display().to_string()),
        (
            "algorithm".to_string(),
            scenario.algorithm.name().to_string(),
        ),
        (
            "parameter".to_string(),
            param
                .map_or("none (the scenario as written)", Param::name)
                .to_string(),
        ),
    ];
    if let Some(f) = args.heartbeat_fraction {
        facts.push((
            "heartbeat".to_string(),
            format!("{f} x the minimum election timeout"),
        ));
    }
    facts.push(("exit code".to_string(), code.to_string()));
    let doc = ReportDoc {
        title: format!("sweep {param_name}: {}", scenario.name),
        command: command.clone(),
        seeds: trials.clone(),
        facts,
        sections,
    };
    if let Err(code) = charting::write(&args.out, &doc, &charts, &data) {
        return code;
    }
    if args.json {
        let doc = JsonSummary {
            scenario: &scenario.name,
            command: &command,
            out: args.out.display().to_string(),
            param: param.map(Param::name),
            heartbeat_fraction: args.heartbeat_fraction,
            trials: args.trials,
            values: &summaries,
            exit_code: code,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        match param {
            Some(param) => crate::outln!(
                "sweep {} of {}: trials {} per value",
                param.name(),
                scenario.name,
                format_seeds(&trials)
            ),
            None => crate::outln!(
                "sweep of {} as written: trials {}",
                scenario.name,
                format_seeds(&trials)
            ),
        }
        super::compare::print_table(&charting::summary_table("value", &summaries));
        if let Some(t) = charting::objective_table("value", &summaries) {
            crate::outln!();
            super::compare::print_table(&t);
        }
        crate::outln!();
        crate::outln!("report: {}", args.out.join("report.html").display());
    }
    code
}

type Built = (Vec<Section>, Vec<Chart>, Vec<DataTable>);

fn build(
    scenario: &Scenario,
    param: Option<Param>,
    heartbeat_fraction: Option<f64>,
    variants: &[(String, Scenario)],
    groups: &[GroupRuns],
    summaries: &[GroupSummary],
) -> Result<Built, splitbrain_reports::ChartError> {
    let mut charts = Vec::new();
    let mut data = Vec::new();
    let mut sections = Vec::new();
    let values: Vec<String> = variants.iter().map(|(l, _)| l.clone()).collect();
    let name = param.map_or("trials", Param::name);
    let setting = match (param, heartbeat_fraction) {
        (None, _) => "as written (no parameter varied)".to_string(),
        (Some(p), None) => format!("with {} set to each value", p.name()),
        (Some(p), Some(f)) => format!(
            "with {} set to each value and the heartbeat to {f} of its minimum",
            p.name()
        ),
    };
    sections.push(
        Section::new("What ran")
            .text(format!(
                "{} ({} nodes, {}), {setting}. Each trial shifts every \
                 explicit fault by a random point of the heartbeat interval (uniform in \
                 [0, heartbeat), drawn from the trial's seed, the same phase for every value), \
                 so a leader crash strikes anywhere in the leader's heartbeat interval. \
                 trials.csv gives each trial's offset.",
                scenario.name,
                scenario.sim.members,
                scenario.algorithm.name(),
            ))
            .list(values),
    );

    let series: Vec<_> = summaries
        .iter()
        .map(|g| g.recovery_series.clone())
        .collect();
    let objective = charting::objective_line(scenario.objective.as_ref());
    charts.push(failover_cdf(
        "failover_cdf",
        &format!("Failover recovery time by {}", name),
        "recovery time (fault to the new leader's first accepted write)",
        &series,
        objective.as_ref(),
    )?);
    let mut failover = Section::new("Failover time")
        .text(
            "Recovery time of each failover, from the fault to the new leader's first accepted \
             write, per value; election time is to the new leader's claim.",
        )
        .text(charting::ELECTION_MEASURES_TEXT)
        .chart("failover_cdf")
        .table(charting::summary_table("value", summaries));
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
        let points: Vec<(u64, f64)> = variants
            .iter()
            .zip(summaries)
            .filter_map(|((_, s), g)| Some((s.sim.members as u64, g.messages_per_election?)))
            .collect();
        charts.push(messages_vs_cluster_size(
            "messages_vs_cluster_size",
            "Messages per failover election against cluster size",
            "messages per decided failover election",
            &[ScalingSeries {
                label: scenario.algorithm.name().to_string(),
                points,
            }],
        )?);
        messages = messages.chart("messages_vs_cluster_size");
    }
    sections.push(messages);

    data.push(charting::summary_data("summary", "value", summaries));
    data.push(charting::failover_data("failovers", "value", groups));
    let mut t = DataTable::new(
        "trials",
        &[
            "value",
            "trial",
            "offset_ns",
            "failovers",
            "safety_violations",
        ],
    );
    for (group, (_, s)) in groups.iter().zip(variants) {
        let hb = s.algorithm.heartbeat_ns();
        for run in &group.runs {
            t.push(vec![
                group.label.as_str().into(),
                run.seed.into(),
                trial_offset(run.seed, hb).into(),
                run.failovers.len().into(),
                run.safety_violations.as_str().into(),
            ]);
        }
    }
    data.push(t);
    Ok((sections, charts, data))
}
