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
//! Exit code: 0, or 3 when the scenario states an objective and some value misses it.

use super::charting::{self, GroupRuns, GroupSummary};
use crate::cli::SweepArgs;
use crate::exit;
use crate::scenario::{self, Scenario};
use serde::Serialize;
use splitbrain_algorithms::AlgorithmConfig;
use splitbrain_reports::{
    failover_cdf, format_seeds, messages_per_election, messages_vs_cluster_size, Chart, DataTable,
    ReportDoc, ScalingSeries, Section,
};
use splitbrain_sim::{Latency, SimRng, StreamId};

const PARAMS: &str = "election_timeout=150ms..300ms (raft), heartbeat=50ms (raft, bully, ring), \
failure_timeout=500ms (bully, ring), ack_timeout=100ms (ring), lease=1s,2s (etcd, zookeeper, \
k8s-lease), nodes=3,5,7 (integers >= 1), \
loss=0,0.05 (0..1), latency=1ms..10ms (uniform) or latency=5ms (constant)";

/// The parameters a sweep can vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Param {
    ElectionTimeout,
    Heartbeat,
    FailureTimeout,
    AckTimeout,
    Lease,
    Nodes,
    Loss,
    Latency,
}

impl Param {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "election_timeout" => Param::ElectionTimeout,
            "heartbeat" => Param::Heartbeat,
            "failure_timeout" => Param::FailureTimeout,
            "ack_timeout" => Param::AckTimeout,
            "lease" => Param::Lease,
            "nodes" => Param::Nodes,
            "loss" => Param::Loss,
            "latency" => Param::Latency,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Param::ElectionTimeout => "election_timeout",
            Param::Heartbeat => "heartbeat",
            Param::FailureTimeout => "failure_timeout",
            Param::AckTimeout => "ack_timeout",
            Param::Lease => "lease",
            Param::Nodes => "nodes",
            Param::Loss => "loss",
            Param::Latency => "latency",
        }
    }

    /// The form of a value, for hints.
    fn form(self) -> String {
        let form = match self {
            Param::ElectionTimeout => "a range MIN..MAX of durations, like 150ms..300ms",
            Param::Heartbeat | Param::FailureTimeout | Param::AckTimeout | Param::Lease => {
                "a duration longer than zero, like 50ms"
            }
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

    /// The algorithms the parameter belongs to (`None`: every algorithm).
    fn algorithms(self) -> Option<&'static [&'static str]> {
        match self {
            Param::ElectionTimeout => Some(&["raft"]),
            Param::Heartbeat => Some(&["raft", "bully", "ring"]),
            Param::FailureTimeout => Some(&["bully", "ring"]),
            Param::AckTimeout => Some(&["ring"]),
            Param::Lease => Some(&["etcd", "zookeeper", "k8s-lease"]),
            Param::Nodes | Param::Loss | Param::Latency => None,
        }
    }
}

/// One value of the parameter.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Range(u64, u64),
    Duration(u64),
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
        Param::ElectionTimeout => parse_range(text).map(|(a, b)| Value::Range(a, b)),
        Param::Heartbeat | Param::FailureTimeout | Param::AckTimeout | Param::Lease => {
            let d = scenario::parse_duration(text).ok()?;
            (d > 0).then_some(Value::Duration(d))
        }
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
            "invalid --param {text:?}: expected NAME=V1,V2,...\n  hint: the parameters: {PARAMS}"
        ));
    };
    let name = name.trim();
    let Some(param) = Param::parse(name) else {
        return Err(format!(
            "unknown parameter {name:?}\n  hint: the parameters: {PARAMS}"
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
    match (param, value, &mut s.algorithm) {
        (Param::ElectionTimeout, Value::Range(a, b), AlgorithmConfig::Raft(c)) => {
            c.election_timeout_min_ns = *a;
            c.election_timeout_max_ns = *b;
        }
        (Param::Heartbeat, Value::Duration(d), alg) => match alg {
            AlgorithmConfig::Raft(c) => c.heartbeat_ns = *d,
            AlgorithmConfig::Bully(c) => c.heartbeat_ns = *d,
            AlgorithmConfig::Ring(c) => c.heartbeat_ns = *d,
            AlgorithmConfig::Etcd(_)
            | AlgorithmConfig::ZooKeeper(_)
            | AlgorithmConfig::K8sLease(_) => {
                unreachable!("`heartbeat` is checked to apply before it is set")
            }
        },
        (Param::FailureTimeout, Value::Duration(d), AlgorithmConfig::Bully(c)) => {
            c.failure_timeout_ns = *d
        }
        (Param::FailureTimeout, Value::Duration(d), AlgorithmConfig::Ring(c)) => {
            c.failure_timeout_ns = *d
        }
        (Param::AckTimeout, Value::Duration(d), AlgorithmConfig::Ring(c)) => c.ack_timeout_ns = *d,
        (Param::Lease, Value::Duration(d), alg) => set_lease(alg, *d)?,
        (Param::Nodes, Value::Count(n), _) => {
            s = s.resized(*n).ok_or_else(|| {
                format!(
                    "cannot resize to {n} nodes: {} runs at most {} nodes here",
                    s.algorithm.name(),
                    scenario::max_members(&s.algorithm)
                )
            })?;
        }
        (Param::Loss, Value::Fraction(p), _) => {
            s.sim.network.default.loss_ppm = (p * 1_000_000.0).round() as u32;
        }
        (Param::Latency, Value::Range(a, b), _) => {
            s.sim.network.default.latency = Latency::Uniform(*a, *b);
        }
        (Param::Latency, Value::Duration(d), _) => {
            s.sim.network.default.latency = Latency::Constant(*d);
        }
        _ => unreachable!("values are parsed for their parameter"),
    }
    Ok(s)
}

/// Sets the lease length to `lease_ns`: etcd's TTL, ZooKeeper's session timeout, the
/// Kubernetes lease duration. The timings that go with it keep their ratio to it (etcd's
/// keep-alive; the renew deadline and retry period), so one value is one design.
fn set_lease(alg: &mut AlgorithmConfig, lease_ns: u64) -> Result<(), String> {
    let scaled =
        |x: u64, old: u64| (u128::from(x) * u128::from(lease_ns) / u128::from(old.max(1))) as u64;
    match alg {
        AlgorithmConfig::Etcd(c) => {
            c.keepalive_ns = scaled(c.keepalive_ns, c.ttl_ns);
            c.min_ttl_ns = c.min_ttl_ns.min(lease_ns);
            c.ttl_ns = lease_ns;
        }
        AlgorithmConfig::ZooKeeper(c) => {
            let (low, high) = (2 * c.tick_ns, 20 * c.tick_ns);
            if !(low..=high).contains(&lease_ns) {
                return Err(format!(
                    "lease={} is outside what the ZooKeeper server grants: 2 to 20 ticks of {}\n  \
                     hint: give session timeouts from {} to {}, or change the scenario's tick",
                    scenario::format_duration_ron(lease_ns),
                    scenario::format_duration_ron(c.tick_ns),
                    scenario::format_duration_ron(low),
                    scenario::format_duration_ron(high),
                ));
            }
            c.session_timeout_ns = lease_ns;
        }
        AlgorithmConfig::K8sLease(c) => {
            c.renew_deadline_ns = scaled(c.renew_deadline_ns, c.lease_duration_ns);
            c.retry_period_ns = scaled(c.retry_period_ns, c.lease_duration_ns);
            c.lease_duration_ns = lease_ns;
        }
        AlgorithmConfig::Raft(_) | AlgorithmConfig::Bully(_) | AlgorithmConfig::Ring(_) => {
            unreachable!("`lease` is checked to apply before it is set")
        }
    }
    Ok(())
}

/// The algorithm's heartbeat interval.
fn heartbeat_ns(alg: &AlgorithmConfig) -> u64 {
    match alg {
        AlgorithmConfig::Raft(c) => c.heartbeat_ns,
        AlgorithmConfig::Bully(c) => c.heartbeat_ns,
        AlgorithmConfig::Ring(c) => c.heartbeat_ns,
        AlgorithmConfig::Etcd(c) => c.keepalive_ns,
        // Clients ping at a third of the negotiated session timeout.
        AlgorithmConfig::ZooKeeper(c) => c.negotiated_timeout_ns() / 3,
        // The leader renews, and candidates poll, every retry period.
        AlgorithmConfig::K8sLease(c) => c.retry_period_ns,
    }
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
    param: &'a str,
    trials: u64,
    values: &'a [GroupSummary],
    exit_code: u8,
}

/// Runs the command; returns the exit code.
pub fn run(args: &SweepArgs) -> u8 {
    let (param, values) = match parse_param(&args.param) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    if let Err(code) = charting::check_count("--trials", args.trials, values.len(), "per value") {
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
    for (label, value) in &values {
        let s = match apply(&scenario, param, value) {
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
            let hb = heartbeat_ns(&s.algorithm);
            charting::run_group(label, 1..=args.trials, |seed| {
                crate::hunt::materialize(&shifted(s, trial_offset(seed, hb)), seed)
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
    let command = [
        "splitbrain".to_string(),
        "sweep".to_string(),
        charting::shell_word(&args.file.display().to_string()),
        "--param".to_string(),
        charting::shell_word(&args.param),
        "--trials".to_string(),
        args.trials.to_string(),
        "--out".to_string(),
        charting::shell_word(&args.out.display().to_string()),
    ]
    .join(" ");

    let built = build(&scenario, param, &variants, &groups, &summaries);
    let (sections, charts, data) = match built {
        Ok(b) => b,
        Err(e) => return charting::chart_failed(e),
    };
    let doc = ReportDoc {
        title: format!("sweep {}: {}", param.name(), scenario.name),
        command: command.clone(),
        seeds: trials.clone(),
        facts: vec![
            ("scenario".to_string(), args.file.display().to_string()),
            (
                "algorithm".to_string(),
                scenario.algorithm.name().to_string(),
            ),
            ("parameter".to_string(), param.name().to_string()),
            ("exit code".to_string(), code.to_string()),
        ],
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
            param: param.name(),
            trials: args.trials,
            values: &summaries,
            exit_code: code,
        };
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("results serialize")
        );
    } else {
        crate::outln!(
            "sweep {} of {}: trials {} per value",
            param.name(),
            scenario.name,
            format_seeds(&trials)
        );
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
    param: Param,
    variants: &[(String, Scenario)],
    groups: &[GroupRuns],
    summaries: &[GroupSummary],
) -> Result<Built, splitbrain_reports::ChartError> {
    let mut charts = Vec::new();
    let mut data = Vec::new();
    let mut sections = Vec::new();
    let values: Vec<String> = variants.iter().map(|(l, _)| l.clone()).collect();
    sections.push(
        Section::new("What ran")
            .text(format!(
                "{} ({} nodes, {}), with {} set to each value. Each trial shifts every \
                 explicit fault by a random point of the heartbeat interval (uniform in \
                 [0, heartbeat), drawn from the trial's seed, the same phase for every value), \
                 so a leader crash strikes anywhere in the leader's heartbeat interval. \
                 trials.csv gives each trial's offset.",
                scenario.name,
                scenario.sim.members,
                scenario.algorithm.name(),
                param.name()
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
        &format!("Failover recovery time by {}", param.name()),
        "recovery time (fault to the new leader's first accepted write)",
        &series,
        objective.as_ref(),
    )?);
    let mut failover = Section::new("Failover time")
        .text(
            "Recovery time of each failover, from the fault to the new leader's first accepted \
             write, per value; election time is to the new leader's claim. The first-round \
             share is the share of failovers ending with a new leader that elected it in one \
             round.",
        )
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
        &format!("Messages per failover election by {}", param.name()),
        param.name(),
        &msgs,
    )?);
    let mut messages = Section::new("Messages per election")
        .text(
            "The mean, over decided elections that started at or after the first fault of a \
             trial (the start-up election is left out), of the messages of each type sent \
             during the election.",
        )
        .chart("messages_per_election");
    if param == Param::Nodes {
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
        let hb = heartbeat_ns(&s.algorithm);
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
