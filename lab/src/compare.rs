//! `compare`: the same faults (the same seeds) with several algorithms; the report's
//! failover-time distributions, messages per election, safety by fault kind, leadership
//! overlap, fenced rejections and the recovery-time objective per algorithm.
//!
//! Every design runs seeds 1..=N on its own transport ([`Design::transport`]), and seed `N`
//! strikes the scenario's explicit faults at the phase of the heartbeat that `sweep`'s trial
//! `N` does ([`crate::phase`]): the two commands answer the same question with the same
//! numbers. Each seed's replay command (`run --trial N`) runs that seed exactly.
//!
//! Safety violations are results to compare here, not a mismatch: they are in the report.
//! [`Comparison::objective_missed`] says whether some algorithm missed the scenario's
//! objective (the CLI then exits 3).

use crate::group::{
    self as charting, BuildError, FirstRun, GroupRuns, GroupSummary, Progress, RunFailed,
};
use crate::phase;
use crate::runner::{run_seed, RunFailure};
use crate::shell::shell_word;
use crate::Fencing;
use rayon::prelude::*;
use serde::Serialize;
use splitbrain_algorithms::{algorithms, AlgorithmConfig, DEFAULT_COMPARISON};
use splitbrain_reports::{
    failover_cdf, format_seeds, leadership_timeline, messages_per_election,
    messages_vs_cluster_size, sequence_diagram_of, sequence_window, AroundFailovers, Chart,
    DataTable, ScalingSeries, Section, SequenceLabels, Settle, Table,
};
use splitbrain_scenario::{self as scenario, Scenario};
use splitbrain_sim::Transport;
use std::collections::BTreeSet;
use thiserror::Error;

/// Seeds per algorithm and size for the message-count-versus-size chart.
const SIZE_SEEDS: u64 = 3;

/// The window of seed 1's sequence diagram: around its first failover, to recovery.
const SEED_ONE_WINDOW: AroundFailovers = AroundFailovers {
    failovers: 1,
    settle: Settle::Recovery,
    first_election: false,
};

/// What `compare` runs: which algorithms (or the scenario's designs), how many seeds, the
/// cluster sizes of the scaling chart, and fencing.
#[derive(Clone, Debug)]
pub struct ComparePlan {
    /// Algorithms named on the command line (`--algorithms`), each with its built-in
    /// defaults; `None`: the scenario's designs, else raft, bully and ring.
    pub algorithms: Option<Vec<String>>,
    /// Seeds 1..=N per design.
    pub seeds: u64,
    /// Cluster sizes for the message-count-versus-size chart.
    pub sizes: Vec<usize>,
    /// Fencing at the resource.
    pub fencing: Fencing,
    /// The scenario file as given, for the report and its replay commands.
    pub file: String,
}

/// Designs that `compare` cannot run.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CompareError {
    /// An algorithm name that names none.
    #[error("unknown algorithm {name:?}\n  hint: the algorithms are {}: --algorithms {DEFAULT_COMPARISON}", algorithm_names())]
    UnknownAlgorithm {
        /// The name as given.
        name: String,
    },
    /// An algorithm named with `--algorithms` whose defaults cannot run: it needs a setting
    /// (`External` needs its `command`).
    #[error("algorithm {name:?} cannot run with its defaults: {problem}\n  hint: write it as one of the scenario's `designs`, with its settings")]
    NeedsSettings {
        /// The name as given.
        name: String,
        /// The first rule its defaults break.
        problem: String,
    },
    /// An algorithm named twice.
    #[error("algorithm {name:?} is given twice\n  hint: name each algorithm once")]
    GivenTwice {
        /// The name as given.
        name: String,
    },
    /// Nothing to compare.
    #[error("no algorithms to compare\n  hint: --algorithms {DEFAULT_COMPARISON}")]
    NoAlgorithms,
    /// An algorithm the scenario cannot run as written (see [`Scenario::refuse_algorithm`]).
    #[error("{file}: {message}\n  hint: {hint}")]
    Refused {
        /// The scenario file.
        file: String,
        /// Why.
        message: String,
        /// What to do.
        hint: String,
    },
    /// A cluster size past [`scenario::MAX_NODES`].
    #[error("--sizes {n} is more nodes than a scenario may have\n  hint: give cluster sizes from 3 to {max} (smaller ones count as 3), like --sizes 3,5,9", max = scenario::MAX_NODES)]
    SizeTooLarge {
        /// The size.
        n: usize,
    },
    /// A cluster size past what an algorithm that sends to every member may run.
    #[error("--sizes {n} is more nodes than {algorithm} can run here\n  hint: its members send to every other member, so memory grows with the square of the cluster: give sizes up to {most}")]
    SizeTooLargeFor {
        /// The size.
        n: usize,
        /// The algorithm's name.
        algorithm: &'static str,
        /// The most it may run.
        most: u64,
    },
}

/// Every algorithm's command-line name, for hints: `raft, bully, ... and k8s-lease`.
fn algorithm_names() -> String {
    let names: Vec<&str> = algorithms().into_iter().map(|entry| entry.name).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// What `compare` runs: a name that labels its results, an algorithm with its settings, and
/// where the settings came from.
#[derive(Clone, Debug)]
pub struct Design {
    /// The label of its results.
    pub name: String,
    /// The algorithm with its settings.
    pub algorithm: AlgorithmConfig,
    /// The transport it runs on: a scenario design's own
    /// ([`splitbrain_scenario::Design::transport`]), the scenario's for its own algorithm, and
    /// for one named with `--algorithms` the scenario's `network.transport` when the file
    /// sets it, else the algorithm's default ([`Scenario::transport_for`]).
    pub transport: Transport,
    /// Where the settings came from.
    pub origin: Origin,
    /// The design's name in the scenario, or the algorithm's (before a `--fencing both`
    /// suffix): what `run --design` or `run --algorithm` takes.
    pub source: String,
    /// Fencing at the resource for this design's runs.
    pub fencing: bool,
}

/// Where a design's settings came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A design the scenario lists under `designs`.
    ScenarioDesign,
    /// The scenario's own `algorithm`, named with `--algorithms`.
    ScenarioAlgorithm,
    /// Named with `--algorithms`: the algorithm's built-in defaults.
    BuiltInDefaults,
}

impl Origin {
    /// Where the settings came from, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Origin::ScenarioDesign => "the scenario's designs",
            Origin::ScenarioAlgorithm => "the scenario's algorithm",
            Origin::BuiltInDefaults => "built-in defaults (--algorithms)",
        }
    }
}

impl Design {
    /// The command that replays `seed` of this design, as `compare` ran it: `--trial`, which
    /// sets the seed and shifts the faults by its phase ([`crate::phase`]).
    pub fn replay(&self, file: &str, seed: u64, scenario_fencing: bool) -> String {
        let base = match self.origin {
            Origin::ScenarioDesign => format!(" --design {}", self.source),
            Origin::ScenarioAlgorithm => String::new(),
            Origin::BuiltInDefaults => format!(" --algorithm {}", self.source),
        };
        let fencing = match (self.fencing, self.fencing == scenario_fencing) {
            (_, true) => "",
            (true, false) => " --fencing on",
            (false, false) => " --fencing off",
        };
        format!("splitbrain run {file}{base} --trial {seed}{fencing}")
    }
}

/// The designs to compare (see `named_designs`), each with its fencing: `--fencing both`
/// runs each twice, as `NAME-fenced` and `NAME-unfenced`.
pub fn designs(plan: &ComparePlan, scenario: &Scenario) -> Result<Vec<Design>, CompareError> {
    let named = named_designs(plan, scenario)?;
    let with = |d: &Design, fencing: bool, suffix: &str| Design {
        name: format!("{}{suffix}", d.name),
        fencing,
        ..d.clone()
    };
    Ok(match plan.fencing {
        Fencing::Scenario => named,
        Fencing::On => named.iter().map(|d| with(d, true, "")).collect(),
        Fencing::Off => named.iter().map(|d| with(d, false, "")).collect(),
        Fencing::Both => named
            .iter()
            .flat_map(|d| [with(d, true, "-fenced"), with(d, false, "-unfenced")])
            .collect(),
    })
}

/// The designs to compare: the ones `--algorithms` names, else the scenario's `designs`, else
/// raft, bully and ring. An error when a name is unknown or given twice.
fn named_designs(plan: &ComparePlan, scenario: &Scenario) -> Result<Vec<Design>, CompareError> {
    let fencing = scenario.sim.fencing;
    let names: Vec<String> = match &plan.algorithms {
        None if !scenario.designs.is_empty() => {
            return Ok(scenario
                .designs
                .iter()
                .map(|d| Design {
                    name: d.name.clone(),
                    algorithm: d.algorithm.clone(),
                    transport: d.transport,
                    origin: Origin::ScenarioDesign,
                    source: d.name.clone(),
                    fencing,
                })
                .collect())
        }
        None => DEFAULT_COMPARISON.split(',').map(str::to_string).collect(),
        Some(names) => names.clone(),
    };
    let mut designs: Vec<Design> = Vec::new();
    for name in &names {
        // An alias (`kubernetes`) or a scenario spelling (`K8sLease`) names it too.
        let own = scenario.algorithm.entry().is_named(name);
        let design = if own {
            Design {
                name: scenario.algorithm.name().to_string(),
                algorithm: scenario.algorithm.clone(),
                transport: scenario.sim.network.transport,
                origin: Origin::ScenarioAlgorithm,
                source: scenario.algorithm.name().to_string(),
                fencing,
            }
        } else {
            let Some(algorithm) = AlgorithmConfig::default_named(name) else {
                return Err(CompareError::UnknownAlgorithm { name: name.clone() });
            };
            let cluster = splitbrain_algorithms::Cluster {
                nodes: scenario.sim.members as u64,
            };
            if let Some(problem) = algorithm.settings().lower(&cluster).1.first() {
                let problem = format!("`{}`: {}", problem.field, problem.error);
                return Err(CompareError::NeedsSettings {
                    name: name.clone(),
                    problem,
                });
            }
            Design {
                name: algorithm.name().to_string(),
                source: algorithm.name().to_string(),
                transport: scenario.transport_for(&algorithm),
                algorithm,
                origin: Origin::BuiltInDefaults,
                fencing,
            }
        };
        if designs.iter().any(|d| d.name == design.name) {
            return Err(CompareError::GivenTwice { name: name.clone() });
        }
        designs.push(design);
    }
    if designs.is_empty() {
        return Err(CompareError::NoAlgorithms);
    }
    Ok(designs)
}

/// Refuses, as `check` would refuse it in the file, an algorithm named with `--algorithms`
/// (or the default three) that the scenario cannot run (the scenario's own designs were
/// checked when it was loaded).
pub fn check_designs(
    plan: &ComparePlan,
    scenario: &Scenario,
    designs: &[Design],
) -> Result<(), CompareError> {
    for design in designs {
        let refused = scenario.refuse_algorithm(&design.algorithm, "--algorithms");
        if let Err(splitbrain_scenario::Refused { message, hint }) = refused {
            let file = plan.file.clone();
            return Err(CompareError::Refused {
                file,
                message,
                hint,
            });
        }
    }
    Ok(())
}

/// Refuses cluster sizes no scenario, or some design, may run.
pub fn check_sizes(plan: &ComparePlan, designs: &[Design]) -> Result<(), CompareError> {
    if let Some(&n) = plan.sizes.iter().find(|&&n| n as u64 > scenario::MAX_NODES) {
        return Err(CompareError::SizeTooLarge { n });
    }
    for design in designs {
        let most = scenario::max_members(&design.algorithm);
        if let Some(&n) = plan.sizes.iter().find(|&&n| n as u64 > most) {
            let algorithm = design.algorithm.name();
            return Err(CompareError::SizeTooLargeFor { n, algorithm, most });
        }
    }
    Ok(())
}

/// The results of a comparison: each design's runs and summary, and the report built from
/// them.
pub struct Comparison {
    /// Each design's runs, in design order.
    pub groups: Vec<GroupRuns>,
    /// Each design's summary, in the same order.
    pub summaries: Vec<GroupSummary>,
    /// The report's sections.
    pub sections: Vec<Section>,
    /// The report's charts.
    pub charts: Vec<Chart>,
    /// The report's data tables.
    pub data: Vec<DataTable>,
}

impl Comparison {
    /// Whether some design missed the scenario's recovery-time objective.
    pub fn objective_missed(&self) -> bool {
        self.summaries
            .iter()
            .any(|g| g.objective.as_ref().is_some_and(|o| !o.met))
    }
}

/// Runs every design on every seed (each run reported to `progress` as it starts), then the
/// runs for the scaling chart and seed 1's sequence diagrams, and builds the report.
pub fn compare(
    plan: &ComparePlan,
    scenario: &Scenario,
    designs: &[Design],
    progress: &dyn Progress,
) -> Result<Comparison, BuildError> {
    let groups: Vec<GroupRuns> = designs
        .iter()
        .map(|design| {
            let with_alg = with_design(scenario, design);
            let seeds = 1..=plan.seeds;
            let window = Some(SEED_ONE_WINDOW);
            charting::run_group(&design.name, seeds, window, progress, |seed| {
                phase::trial(&with_alg, seed).materialize(seed)
            })
        })
        .collect::<Result<_, _>>()?;
    progress.runs_finished();
    let summaries: Vec<GroupSummary> = groups
        .iter()
        .map(|g| charting::summarise(g, scenario.objective.as_ref()))
        .collect();
    let mut charts: Vec<Chart> = Vec::new();
    let mut data: Vec<DataTable> = Vec::new();
    let sections = build(
        plan,
        scenario,
        designs,
        &groups,
        &summaries,
        &mut charts,
        &mut data,
    )?;
    Ok(Comparison {
        groups,
        summaries,
        sections,
        charts,
        data,
    })
}

/// The scenario as `design` runs it, before a seed's phase: its algorithm in place of the
/// scenario's, on its transport, with its fencing.
fn with_design(scenario: &Scenario, design: &Design) -> Scenario {
    let mut s = match design.origin {
        Origin::ScenarioAlgorithm => scenario.clone(),
        Origin::ScenarioDesign | Origin::BuiltInDefaults => {
            scenario.with_algorithm_on(&design.algorithm, design.transport)
        }
    };
    s.sim.fencing = design.fencing;
    s
}

/// Each design with where its settings came from, its fencing, the transport it ran on and
/// every setting as it ran.
pub fn settings_table(designs: &[Design]) -> Table {
    let mut t = Table::new(&[
        "design",
        "settings from",
        "fencing",
        "transport",
        "settings as they ran",
    ]);
    for d in designs {
        t.push(vec![
            d.name.clone(),
            d.origin.describe().to_string(),
            if d.fencing { "on" } else { "off" }.to_string(),
            scenario::transport_line(&d.transport),
            charting::SettingsAsRun::of(&d.algorithm).line(),
        ]);
    }
    t
}

/// Charts, tables and sections of the report.
fn build(
    plan: &ComparePlan,
    scenario: &Scenario,
    designs: &[Design],
    groups: &[GroupRuns],
    summaries: &[GroupSummary],
    charts: &mut Vec<Chart>,
    data: &mut Vec<DataTable>,
) -> Result<Vec<Section>, BuildError> {
    let mut sections = Vec::new();
    // As written: a range (`"20s..40s"`) is drawn per seed, the same for every design.
    let faults: Vec<String> = scenario::fault_lines(scenario);
    let mut about = Section::new("What ran")
        .text(format!(
            "{} nodes for {} each run; every design ran seeds {} with the same faults{}. Each \
         seed shifts every explicit fault by the same random point of the interval at which \
         the leader shows it is alive (the heartbeat; for leases the renewal period), drawn \
         from the seed, as sweep's trials do: seeds.csv gives each seed's offset and the \
         command that replays it. Each design's settings, as they ran, where they came from \
         (a design the scenario lists, the scenario's own algorithm, or, named with \
         --algorithms, the algorithm's built-in defaults) and the transport it ran on (a \
         design's own, else the scenario's network.transport when it sets one, else the \
         algorithm's default).",
            scenario.sim.members,
            splitbrain_sim::format_duration(scenario.sim.duration_ns),
            format_seeds(&(1..=plan.seeds).collect::<Vec<_>>()),
            if scenario.nemesis.is_some() {
                " (explicit faults plus the nemesis schedule each seed draws)"
            } else {
                ""
            }
        ))
        .table(settings_table(designs));
    if !faults.is_empty() {
        about = about.list(faults);
    }
    sections.push(about);

    // Failover times.
    let series = charting::merge_identical(summaries.iter().map(|g| g.recovery_series.clone()));
    let objective = charting::objective_line(scenario.objective.as_ref());
    charts.push(failover_cdf(
        "failover_cdf",
        &format!("Failover recovery time: {}", scenario.name),
        "recovery time (fault to the next write a leader got accepted)",
        &series,
        objective.as_ref(),
    )?);
    let leaderless =
        charting::merge_identical(summaries.iter().map(|g| g.leaderless_series.clone()));
    charts.push(failover_cdf(
        "leaderless_cdf",
        &format!("Leaderless time per failover episode: {}", scenario.name),
        "leaderless time (no recognised leader, fault until stable again)",
        &leaderless,
        None,
    )?);
    sections.push(
        Section::new("Failover time")
            .text(
                "Recovery time of each failover: from the fault to the next write a leader got \
                 accepted (the new leader's, or the same one's when it rode the fault through: \
                 the `ridden through` column counts those; they have no election). Unresolved failovers keep a curve below 1; superseded ones \
                 are left out. Designs whose failover times are all the same share one curve \
                 (`NAME (both)`: with and without fencing). failovers.csv lists every failover \
                 of every run.",
            )
            .text(charting::ELECTION_MEASURES_TEXT)
            .chart("failover_cdf")
            .chart("leaderless_cdf")
            .table(charting::summary_table("design", summaries))
            .text_if(charting::skipped_faults_note(summaries))
            .text_if(crate::intervals::interval_note(summaries)),
    );
    sections.push(charting::availability_section("design", summaries));
    sections.extend(crate::measures::measures_section(
        "design", summaries, charts,
    )?);
    if let Some(t) = charting::objective_table("design", summaries) {
        sections.push(
            Section::new("Recovery-time objective")
                .text(
                    "The budget against the p99 of recovery over the failovers a new leader \
                     resolved or none did (an unresolved one is longer than any budget), broken \
                     down into the p99 of detection and of election, the new leader's start-up \
                     delay, and recovery. compare exits 3 when an algorithm misses it.",
                )
                .table(t),
        );
    }

    // Messages per election.
    let groups_msgs: Vec<_> = summaries.iter().map(|g| g.messages.clone()).collect();
    charts.push(messages_per_election(
        "messages_per_election",
        "Messages per failover election, by type",
        "design",
        &groups_msgs,
    )?);
    let mut counts = Table::new(&["design", "decided failover elections", "messages/election"]);
    for g in summaries {
        counts.push(vec![
            g.label.clone(),
            g.elections.to_string(),
            charting::per_election(g.messages_per_election),
        ]);
    }
    sections.push(
        Section::new("Messages per election")
            .text(
                "The mean, over decided elections that started at or after the first fault of \
                 a run (the start-up election is left out), of the messages of each type sent \
                 during the election.",
            )
            .chart("messages_per_election")
            .table(counts),
    );

    // Safety by fault kind, overlap and fencing.
    let (safety, safety_data) = safety_by_kind(groups);
    data.push(safety_data);
    sections.push(
        Section::new("Safety")
            .text(charting::SAFETY_TEXT)
            .table(charting::safety_table("design", summaries))
            .text(SAFETY_BY_KIND_TEXT)
            .table(safety),
    );

    // Message count against cluster size.
    let mut scaling = Vec::new();
    let sizes: BTreeSet<usize> = plan.sizes.iter().map(|&n| n.max(3)).collect();
    for design in designs {
        let base = with_design(scenario, design);
        let jobs: Vec<(usize, Scenario)> = sizes
            .iter()
            .filter_map(|&n| Some((n, base.resized(n)?)))
            .collect();
        let points: Vec<Result<Option<(u64, f64)>, RunFailed>> = jobs
            .into_par_iter()
            .map(|(n, s)| {
                let (total, decided) =
                    messages_at_size(&s).map_err(|(seed, failure)| RunFailed {
                        label: format!("{} at {n} nodes", design.name),
                        seed,
                        failure,
                    })?;
                Ok((decided > 0).then(|| (n as u64, total as f64 / decided as f64)))
            })
            .collect();
        let points = points
            .into_iter()
            .filter_map(Result::transpose)
            .collect::<Result<Vec<_>, _>>()?;
        scaling.push(ScalingSeries {
            label: design.name.clone(),
            points,
        });
    }
    charts.push(messages_vs_cluster_size(
        "messages_vs_cluster_size",
        "Messages per election against cluster size",
        "messages per decided election",
        &scaling,
    )?);
    sections.push(
        Section::new("Cluster size")
            .text(format!(
                "For each size (at least 3), each design on the scenario with that many \
                 nodes (faults naming nodes past the last dropped), seeds 1..={SIZE_SEEDS}: \
                 the mean messages per decided election, start-up elections included."
            ))
            .chart("messages_vs_cluster_size"),
    );

    // Seed 1 of each algorithm: timeline and sequence diagram around its first failover.
    let mut seed_one = Section::new("Seed 1").text(
        "The leadership timeline of seed 1 per design, and the messages around its first \
         failover (from 50 ms before the fault to a little after the new leader's first \
         accepted write).",
    );
    for (design, group) in designs.iter().zip(groups) {
        let s = phase::trial(&with_design(scenario, design), 1).materialize(1);
        // Seed 1 ran in the group with a recorder of its first failover's window.
        let Some(FirstRun { report, windows }) = &group.first else {
            continue;
        };
        let name = format!("timeline_{}", design.name);
        charts.push(leadership_timeline(
            &name,
            &format!("Leadership timeline: {}, seed 1", design.name),
            report,
            &[],
            &report.lease_spans,
        )?);
        seed_one = seed_one.chart(name);
        let Some(f) = report.failovers.first() else {
            continue;
        };
        let window = sequence_window(f.at_ns, f.recovery_ns.map(|r| f.at_ns + r));
        let kept = windows.failovers.clone();
        let bounds: Vec<(u64, u64)> = kept.iter().map(|w| w.bounds()).collect();
        assert_eq!(
            bounds,
            [window],
            "the recorder kept the first failover's window"
        );
        let trace = crate::plot::kept_windows(&s, kept)
            .map_err(|error| RunFailed {
                label: design.name.clone(),
                seed: 1,
                failure: match error {
                    splitbrain_sim::RunError::Limit(e) => RunFailure::Outgrown(e),
                    splitbrain_sim::RunError::Refused(e) => RunFailure::Refused(Box::new(e)),
                },
            })?
            .pop()
            .expect("one window asked, one kept");
        let name = format!("sequence_{}", design.name);
        charts.push(sequence_diagram_of(
            &name,
            &format!(
                "Messages around the first failover: {}, seed 1",
                design.name
            ),
            &trace,
            &SequenceLabels {
                node_names: &s.algorithm.lifeline_names(s.sim.members),
                fenced: s.sim.fencing,
                leadership: &report.leadership_spans,
                members: Some(s.sim.members),
            },
        )?);
        seed_one = seed_one.chart(name);
    }
    sections.push(seed_one);

    data.push(charting::summary_data("summary", "design", summaries));
    data.extend(crate::measures::measures_data(
        "measures", "design", summaries,
    ));
    data.push(crate::intervals::percentile_data(
        "percentiles",
        "design",
        summaries,
    ));
    data.push(charting::failover_data("failovers", "design", groups));
    data.push(settings_data(designs));
    let file = shell_word(&plan.file);
    data.push(seed_data(&file, scenario, designs, groups));
    Ok(sections)
}

/// Messages and decided elections (start-up ones included) over seeds 1..=[`SIZE_SEEDS`]
/// of `scenario`.
fn messages_at_size(scenario: &Scenario) -> Result<(u64, u64), (u64, RunFailure)> {
    let mut sums = (0u64, 0u64);
    for seed in 1..=SIZE_SEEDS {
        let s = phase::trial(scenario, seed).materialize(seed);
        let report = run_seed(&s, None, &|| false).map_err(|e| (seed, e))?;
        for e in report.elections.iter().filter(|e| e.decided_ns.is_some()) {
            sums = (sums.0 + e.total_messages(), sums.1 + 1);
        }
    }
    Ok(sums)
}

/// Each design's settings as they ran, one row per design.
fn settings_data(designs: &[Design]) -> DataTable {
    let columns = ["design", "algorithm", "origin", "transport", "settings"];
    let mut t = DataTable::new("designs", &columns);
    for d in designs {
        let origin = serde_json::to_value(d.origin)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        t.push(vec![
            d.name.as_str().into(),
            d.algorithm.name().into(),
            origin.as_str().into(),
            scenario::transport_line(&d.transport).as_str().into(),
            scenario::algorithm_line(&d.algorithm).as_str().into(),
        ]);
    }
    t
}

/// What the safety-by-fault-kind table says, for report.md and the terminal.
const SAFETY_BY_KIND_TEXT: &str = "Per fault kind that struck in a seed (fired, not skipped): \
    the seeds with a safety violation attributed to a fault of that kind, over the seeds with \
    that kind, and in brackets those violations. A violation is attributed to the faults in \
    effect when it happened, and to the fault that healed last unless a fault in effect began \
    after that heal; one before any fault counts for no kind (docs/reports.md, \"Safety by \
    fault kind\").";

/// Fault kind x design: seeds with a safety violation attributed to that kind / seeds with
/// that kind, and the violations attributed to it.
fn safety_by_kind(groups: &[GroupRuns]) -> (Table, DataTable) {
    let kinds: BTreeSet<&str> = groups
        .iter()
        .flat_map(|g| g.fault_kinds.keys())
        .map(String::as_str)
        .collect();
    let mut header = vec!["fault kind"];
    header.extend(groups.iter().map(|g| g.label.as_str()));
    let mut table = Table::new(&header);
    let mut data = DataTable::new(
        "safety_by_fault_kind",
        &[
            "fault_kind",
            "design",
            "seeds_with_kind",
            "seeds_with_attributed_violation",
            "attributed_violations",
        ],
    );
    for kind in kinds {
        let mut row = vec![kind.to_string()];
        for g in groups {
            let seeds = g.fault_kinds.get(kind).copied().unwrap_or_default();
            row.push(format!(
                "{}/{} ({})",
                seeds.violated, seeds.with_kind, seeds.violations
            ));
            data.push(vec![
                kind.into(),
                g.label.as_str().into(),
                seeds.with_kind.into(),
                seeds.violated.into(),
                seeds.violations.into(),
            ]);
        }
        table.push(row);
    }
    (table, data)
}

/// Per design and seed: the numbers behind the safety section, and the command that
/// replays the seed.
fn seed_data(
    file: &str,
    scenario: &Scenario,
    designs: &[Design],
    groups: &[GroupRuns],
) -> DataTable {
    let mut t = DataTable::new(
        "seeds",
        &[
            "design",
            "seed",
            "offset_ns",
            "safety_violations",
            "liveness_failed",
            "overlap_ns",
            "fenced_rejections",
            "stale_writes_accepted",
            "failovers",
            "faults_skipped",
            "replay",
        ],
    );
    for (design, g) in designs.iter().zip(groups) {
        let heartbeat_ns = with_design(scenario, design).algorithm.heartbeat_ns();
        for r in &g.runs {
            let replay = design.replay(file, r.seed, scenario.sim.fencing);
            t.push(vec![
                g.label.as_str().into(),
                r.seed.into(),
                phase::offset_ns(r.seed, heartbeat_ns).into(),
                r.safety_violations.as_str().into(),
                u64::from(r.liveness_failed).into(),
                r.overlap_ns.into(),
                r.fenced_rejections.into(),
                r.stale_accepted.into(),
                r.failovers.len().into(),
                r.faults_skipped.into(),
                replay.as_str().into(),
            ]);
        }
    }
    t
}

#[cfg(test)]
mod safety_by_kind_tests {
    use super::*;
    use splitbrain_reports::Cell;

    /// Unfenced Raft with a follower suspended (harmless alone) and the leader stalled
    /// mid-write (a stale write after the stall).
    const SUSPEND_AND_STALL: &str = r#"Scenario(
        name: "suspend-and-stall",
        duration: "40s",
        nodes: 3,
        algorithm: Raft(election_timeout: ("150ms", "300ms"), heartbeat: "50ms"),
        workload: (write_every: "100ms"),
        resource: (fencing: false),
        faults: [
            (at: "5s", do: Suspend(Follower, "4s")),
            (at: "20s", do: Stall(Leader, "2s")),
        ],
    )"#;

    fn cells<'d>(data: &'d DataTable, kind: &str) -> &'d [Cell] {
        let row = data.rows.iter().find(|r| r[0] == Cell::Text(kind.into()));
        &row.unwrap_or_else(|| panic!("a row for {kind}"))[2..]
    }

    #[test]
    fn violations_count_for_the_fault_they_followed_not_every_kind_in_the_seed() {
        const SEEDS: u64 = 6;
        let scenario = scenario::parse(SUSPEND_AND_STALL, "test").expect("parses");
        let group = charting::run_group("raft", 1..=SEEDS, None, &(), |seed| {
            scenario.materialize(seed)
        })
        .expect("runs");
        let seeds_violated = group
            .runs
            .iter()
            .filter(|r| !r.safety_violations.is_empty())
            .count();
        assert_eq!(
            seeds_violated as u64, SEEDS,
            "every seed breaks fencing_safety"
        );
        let (_, data) = safety_by_kind(&[group]);
        let none = Cell::Uint(0);
        let all = Cell::Uint(SEEDS);
        let suspend = cells(&data, "suspend");
        let stall = cells(&data, "stall");
        assert_eq!(
            suspend,
            [all.clone(), none.clone(), none.clone()],
            "suspend broke nothing"
        );
        assert_eq!(
            stall[..2],
            [all.clone(), all],
            "the stall broke safety in every seed"
        );
        assert_ne!(stall[2], none);
    }
}
