//! What `compare` and `sweep` share: running a group of seeds, summarising a group's results
//! (failover distributions, rounds, messages per election, the recovery-time objective), and
//! the charts and tables built from the summaries.

use crate::hunt::record::DowntimeCounts;
use crate::runner::{run_seed, RunFailure};
use rayon::prelude::*;
use serde::Serialize;
use splitbrain_reports::{
    eligible_first_round_share, failover_series, first_round_share, AroundFailovers,
    CapturedWindows, CdfSeries, DataTable, Distribution, ElectionMessages, ElectionTally,
    FailoverMeasure, FailoverRecorder, Section, Table,
};
use splitbrain_scenario::{Objective, Scenario, ScenarioError};
use splitbrain_sim::downtime::{Downtime, DowntimeCause};
use splitbrain_sim::report::Failover;
use splitbrain_sim::{format_duration, FailoverOutcome, Invariant, RunReport, SignalSupport};
use std::collections::BTreeMap;
use thiserror::Error;

/// The most runs a `compare` (seeds x algorithms) or `sweep` (trials x values) makes. Each
/// run is kept as rows of the report's per-seed tables (about 3 KB each: ~330 MB at the
/// most); past this the work and the tables would be absurd for a report, and `hunt` is the
/// tool for a search over many seeds.
pub const MAX_RUNS: u64 = 100_000;

/// Seeds run on every core at a time before their results are folded in: bounds the
/// run reports held at once, whatever the count asked for.
const CHUNK_SEEDS: u64 = 1024;

/// What a group keeps of one run: its seed and the numbers the per-seed tables list. The
/// run's report itself is folded into its [`GroupRuns`] and dropped.
#[derive(Default)]
pub struct SeedRun {
    /// The seed.
    pub seed: u64,
    /// Its failovers.
    pub failovers: Vec<Failover>,
    /// The safety invariants broken, by name, space-separated (empty: none).
    pub safety_violations: String,
    /// Whether liveness failed.
    pub liveness_failed: bool,
    /// How long two or more nodes believed they led.
    pub overlap_ns: u64,
    /// How long two or more nodes that could act believed they led.
    pub acting_overlap_ns: u64,
    /// The stretches with no leader that could act.
    pub downtime: Vec<Downtime>,
    /// Stale writes fencing refused.
    pub fenced_rejections: u64,
    /// Stale writes the resource accepted (fencing off).
    pub stale_accepted: u64,
    /// Faults whose target matched nobody when they fired (no leader to crash, say).
    pub faults_skipped: usize,
    /// What the algorithm's own properties measured ([`crate::measures`]).
    pub measures: Vec<splitbrain_sim::property::Measured>,
    /// What the algorithm's own properties followed over time ([`crate::measures`]).
    pub curves: Vec<splitbrain_sim::property::Curve>,
}

/// Per fault kind: the seeds it struck, and of them the seeds with a safety violation
/// attributed to a fault of that kind ([`FaultRecord::safety_violations`]).
///
/// [`FaultRecord::safety_violations`]: splitbrain_sim::report::FaultRecord::safety_violations
#[derive(Clone, Copy, Debug, Default)]
pub struct KindSeeds {
    /// Seeds in which a fault of the kind fired and was not skipped.
    pub with_kind: usize,
    /// Of them, seeds with a safety violation attributed to a fault of the kind.
    pub violated: usize,
    /// The safety violations attributed to faults of the kind, over every seed.
    pub violations: u64,
}

/// The runs of one group (an algorithm of a comparison, a value of a sweep), folded in one
/// at a time, in seed order.
pub struct GroupRuns {
    /// The group's label (a design, a value).
    pub label: String,
    /// Its runs, in seed order.
    pub runs: Vec<SeedRun>,
    /// Messages of the decided failover elections (see [`failover_elections`]).
    pub elections: ElectionTally,
    /// Per fault kind, the seeds it struck and those with a violation.
    pub fault_kinds: BTreeMap<String, KindSeeds>,
    /// The group's first seed, kept whole when [`run_group`] was asked to.
    pub first: Option<FirstRun>,
    /// The optional signals the group's algorithm emits (none until a run is folded in).
    pub signals: SignalSupport,
    /// Whether the resource fenced (the scenario's `resource.fencing`, as the group ran).
    pub fencing: bool,
    /// The steady state of every run, summed.
    pub steady: SteadyTally,
    /// Futile campaigns (by members that could not win), summed over runs.
    pub futile_campaigns: u64,
    /// Their messages, summed over runs.
    pub futile_campaign_messages: u64,
}

/// The steady states of a group's runs, summed: steady time and messages by type, members'
/// and the coordination service's.
#[derive(Clone, Debug, Default)]
pub struct SteadyTally {
    /// Steady time over every run.
    pub duration_ns: u64,
    /// Members' messages sent while steady, by type, in the order first met.
    pub members: Vec<(String, u64)>,
    /// The service's messages sent while steady, by type.
    pub service: Vec<(String, u64)>,
}

impl SteadyTally {
    fn add(&mut self, steady: &splitbrain_sim::report::SteadyState) {
        self.duration_ns += steady.duration_ns;
        for (tally, kinds) in [
            (&mut self.members, &steady.messages),
            (&mut self.service, &steady.service_messages),
        ] {
            for k in kinds {
                match tally.iter_mut().find(|(kind, _)| *kind == k.kind) {
                    Some((_, n)) => *n += k.count,
                    None => tally.push((k.kind.clone(), k.count)),
                }
            }
        }
    }

    /// Messages per second of steady time, by type; `None` without steady time.
    fn rates(&self, tally: &[(String, u64)]) -> Option<Vec<(String, f64)>> {
        (self.duration_ns > 0).then(|| {
            let seconds = self.duration_ns as f64 / 1e9;
            tally
                .iter()
                .map(|(k, n)| (k.clone(), *n as f64 / seconds))
                .collect()
        })
    }
}

/// A group's first seed as `compare` draws it: the whole report, and the sequence windows
/// its recorder kept during that same run (no second run, no re-parse).
pub struct FirstRun {
    /// The run's report.
    pub report: RunReport,
    /// The sequence windows its recorder kept.
    pub windows: CapturedWindows,
}

impl GroupRuns {
    fn new(label: &str) -> Self {
        Self {
            label: label.to_string(),
            runs: Vec::new(),
            elections: ElectionTally::default(),
            fault_kinds: BTreeMap::new(),
            first: None,
            signals: SignalSupport::NONE,
            fencing: true,
            steady: SteadyTally::default(),
            futile_campaigns: 0,
            futile_campaign_messages: 0,
        }
    }

    /// Folds in the report of `seed`, keeping only what the summary and tables need.
    fn add(&mut self, seed: u64, report: RunReport) {
        self.signals = report.signals;
        self.steady.add(&report.steady_state);
        self.futile_campaigns += report.counters.futile_campaigns;
        self.futile_campaign_messages += report
            .futile_campaign_messages
            .iter()
            .map(|k| k.count)
            .sum::<u64>();
        for e in failover_elections(&report) {
            self.elections.add(e);
        }
        let broken: Vec<&str> = report.violated_safety().iter().map(|i| i.name()).collect();
        let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
        for f in report.faults.iter().filter(|f| !f.skipped) {
            *kinds.entry(f.kind.as_str()).or_default() += f.safety_violations;
        }
        for (kind, violations) in kinds {
            let seeds = self.fault_kinds.entry(kind.to_string()).or_default();
            seeds.with_kind += 1;
            seeds.violated += usize::from(violations > 0);
            seeds.violations += violations;
        }
        self.runs.push(SeedRun {
            seed,
            safety_violations: broken.join(" "),
            liveness_failed: report.liveness_failed(),
            overlap_ns: report.overlap_ns,
            acting_overlap_ns: report.acting_overlap_ns,
            downtime: report.downtime,
            fenced_rejections: report.writes.rejected_stale,
            stale_accepted: report.writes.accepted_stale,
            faults_skipped: report.faults.iter().filter(|f| f.skipped).count(),
            failovers: report.failovers,
            measures: report.measures,
            curves: report.curves,
        });
    }
}

/// Runs `seeds` of the scenario `scenario_of(seed)` (already materialised) on every core, a
/// chunk at a time, and folds each report into the group in seed order as it comes.
/// With `keep_first`, the first seed runs with a recorder of those windows and is kept whole
/// in [`GroupRuns::first`].
pub fn run_group(
    label: &str,
    seeds: std::ops::RangeInclusive<u64>,
    keep_first: Option<AroundFailovers>,
    progress: &dyn Progress,
    scenario_of: impl Fn(u64) -> Scenario + Sync,
) -> Result<GroupRuns, RunFailed> {
    let first_seed = *seeds.start();
    let mut group = GroupRuns::new(label);
    for chunk in seed_chunks(seeds, CHUNK_SEEDS) {
        let reports: Vec<Result<GroupSeed, RunFailed>> = chunk
            .into_par_iter()
            .map(|seed| {
                let s = scenario_of(seed);
                let fencing = s.sim.fencing;
                progress.run_started();
                let failed = |failure| RunFailed {
                    label: label.to_string(),
                    seed,
                    failure,
                };
                match keep_first.filter(|_| seed == first_seed) {
                    Some(around) => {
                        let mut recorder = FailoverRecorder::new(around);
                        let trace = Some(&mut recorder as &mut dyn splitbrain_sim::TraceSink);
                        let report = run_seed(&s, trace, &|| false).map_err(failed)?;
                        let windows = recorder.finish_windows();
                        let first = FirstRun {
                            report: report.clone(),
                            windows,
                        };
                        Ok((seed, report, Some(first), fencing))
                    }
                    None => {
                        let report = run_seed(&s, None, &|| false).map_err(failed)?;
                        Ok((seed, report, None, fencing))
                    }
                }
            })
            .collect();
        // The first seed that failed, in seed order: the same whatever the jobs.
        for run in reports {
            let (seed, report, first, fencing) = run?;
            group.fencing = fencing;
            group.add(seed, report);
            group.first = group.first.take().or(first);
        }
    }
    Ok(group)
}

/// One seed's run in [`run_group`]: the seed, its report, the first run's windows (seed one
/// only) and whether the resource fenced.
type GroupSeed = (u64, RunReport, Option<FirstRun>, bool);

/// A run of `compare` or `sweep` that gave no report: which design or value, which seed,
/// and why (it outgrew its runtime guard, or panicked).
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{label}, seed {seed}: {failure}")]
pub struct RunFailed {
    /// The design or value (a group's label).
    pub label: String,
    /// The seed whose run failed.
    pub seed: u64,
    /// Why it gave no report.
    pub failure: RunFailure,
}

/// Told of the runs of `compare` and `sweep` as they start (a progress bar); called from
/// every worker thread.
pub trait Progress: Sync {
    /// One more run started.
    fn run_started(&self);

    /// Every run counted so far has finished (the report's own runs may follow).
    fn runs_finished(&self) {}
}

/// Why a report could not be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// A chart failed to draw (a bug).
    #[error("{0}")]
    Chart(#[from] splitbrain_reports::ChartError),
    /// A run failed: it outgrew its limits, or panicked.
    #[error("{0}")]
    Run(#[from] RunFailed),
}

/// No progress shown.
impl Progress for () {
    fn run_started(&self) {}
}

/// `seeds` cut into consecutive ranges of at most `size` (at least 1) seeds, in order.
fn seed_chunks(
    seeds: std::ops::RangeInclusive<u64>,
    size: u64,
) -> impl Iterator<Item = std::ops::RangeInclusive<u64>> {
    let (first, last) = (*seeds.start(), *seeds.end());
    let step = size.max(1) - 1;
    let mut next = (first <= last).then_some(first);
    std::iter::from_fn(move || {
        let start = next?;
        let end = start.saturating_add(step).min(last);
        next = end.checked_add(1).filter(|&n| n <= last);
        Some(start..=end)
    })
}

/// The elections a failover chart counts: those that started at or after the first fault of
/// the run (the start-up election of a run with faults is left out; a run without faults
/// keeps them all).
pub fn failover_elections(
    report: &RunReport,
) -> impl Iterator<Item = &splitbrain_sim::report::ElectionRecord> {
    let first_fault = report.faults.first().map_or(0, |f| f.at_ns);
    report
        .elections
        .iter()
        .filter(move |e| e.started_ns >= first_fault)
}

/// Checks a count of seeds or trials (`flag`, like `--seeds`) for `groups` groups (`per`,
/// like `per algorithm`): at least 1, and at most [`MAX_RUNS`] runs in all.
pub fn check_count(
    flag: &'static str,
    count: u64,
    groups: usize,
    per: &'static str,
) -> Result<(), CountError> {
    if count == 0 {
        return Err(CountError::Zero { flag, per });
    }
    let groups = groups.max(1) as u64;
    if count.saturating_mul(groups) > MAX_RUNS {
        return Err(CountError::TooMany {
            flag,
            count,
            per,
            groups,
        });
    }
    Ok(())
}

/// A count of seeds or trials that a report cannot be made of.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CountError {
    /// Nothing to run.
    #[error("{flag} must be at least 1\n  hint: give how many to run {per}, like {flag} 100")]
    Zero {
        /// The flag, like `--seeds`.
        flag: &'static str,
        /// What it counts per, like `per design`.
        per: &'static str,
    },
    /// More than [`MAX_RUNS`] runs in all.
    #[error(
        "{flag} {count} {per} ({groups} of them) is more than the {MAX_RUNS} runs a report \
         makes\n  hint: give at most {flag} {most} here; to search more seeds for a violation, \
         use `splitbrain hunt FILE --seeds N`",
        most = MAX_RUNS / groups
    )]
    TooMany {
        /// The flag, like `--seeds`.
        flag: &'static str,
        /// The count asked for.
        count: u64,
        /// What it counts per, like `per design`.
        per: &'static str,
        /// How many groups.
        groups: u64,
    },
}

/// The recovery-time objective check of one group.
#[derive(Clone, Debug, Serialize)]
pub struct ObjectiveCheck {
    /// The objective's budget for the p99 of recovery.
    pub budget_ns: u64,
    /// p99 of recovery over the judged failovers (new leader or unresolved; an unresolved
    /// one counts as longer than any budget); `None` when there were none.
    pub recovery_p99_ns: Option<u64>,
    /// p99 of detection.
    pub detection_p99_ns: Option<u64>,
    /// p99 of election.
    pub election_p99_ns: Option<u64>,
    /// A new leader's start-up delay.
    pub startup_delay_ns: u64,
    /// Failovers judged, and how many of them recovered within the budget.
    pub judged: usize,
    /// Of them, those within the budget.
    pub within_budget: usize,
    /// Whether the p99 of recovery is within the budget.
    pub met: bool,
}

/// A group's results in numbers (one algorithm of a comparison, one value of a sweep).
#[derive(Clone, Debug, Serialize)]
pub struct GroupSummary {
    /// The group's label.
    pub label: String,
    /// Seeds run.
    pub seeds: usize,
    /// Failovers in the CDF (samples + unresolved; superseded ones are left out).
    pub failovers: usize,
    /// Failovers no leader resolved before the run ended.
    pub unresolved: usize,
    /// Of `failovers`, those the old leader rode through (it wrote again in its own term
    /// with nobody elected): their recovery is its write, and they have no election.
    pub ridden_through: usize,
    /// Fault to the next accepted write.
    pub recovery: Option<Distribution>,
    /// Fault to the new leader's claim.
    pub election: Option<Distribution>,
    /// Fault to the first member noticing.
    pub detection: Option<Distribution>,
    /// Of the failovers that ended with a new leader, the share elected in one round.
    pub first_round_share: Option<f64>,
    /// Mean rounds to a new leader.
    pub mean_rounds: Option<f64>,
    /// The same counting only rounds in which a candidate that could win campaigned;
    /// `None` for an algorithm that does not say who could win.
    pub eligible_first_round_share: Option<f64>,
    /// Mean eligible rounds to a new leader.
    pub mean_eligible_rounds: Option<f64>,
    /// Fault to every follower that can hear the new leader (up, not cut off from it) having
    /// heard it, over the failovers where
    /// that happened; `None` when none did or the algorithm does not report it.
    pub followers_heard: Option<Distribution>,
    /// Time without a recognised leader over each failover's whole episode, until the
    /// cluster was stable again (docs/reports.md, "Leaderless time"), superseded failovers
    /// included (their episode ends at the next strike).
    pub leaderless: Option<Distribution>,
    /// Mean leadership claims per failover episode (the first new leader and every
    /// re-election after it).
    pub mean_leader_claims: Option<f64>,
    /// Failover episodes that ended stable (the rest were cut short by the next strike or
    /// the end of the run).
    pub episodes_stable: usize,
    /// Steady time over every run (docs/reports.md, "Steady-state cost").
    pub steady_ns: u64,
    /// Futile campaigns over every run: by members that could not win, in no election.
    pub futile_campaigns: u64,
    /// Messages of those campaigns over every run (not in `messages_per_election`).
    pub futile_campaign_messages: u64,
    /// Members' messages per second of steady time; `None` without steady time.
    pub steady_messages_per_s: Option<f64>,
    /// The coordination service's own messages per second of steady time; `None` without
    /// steady time or without service traffic (algorithms without a modelled service).
    pub steady_service_messages_per_s: Option<f64>,
    /// Members' steady messages per second, by type.
    pub steady_by_type: Vec<(String, f64)>,
    /// The service's steady messages per second, by type.
    pub steady_service_by_type: Vec<(String, f64)>,
    /// The optional signals the algorithm emits: a measure built on one it lacks is `n/a`.
    pub signals: SignalSupport,
    /// Decided failover elections behind `messages_per_election`.
    pub elections: usize,
    /// The mean messages per decided failover election; `None` (JSON `null`, an empty CSV
    /// cell, `n/a` in tables) when no election was decided: there is nothing to average.
    pub messages_per_election: Option<f64>,
    /// The median and 99th percentile of one decided election's messages (`None` when none
    /// was decided): split votes make a long tail the mean hides.
    pub messages_per_election_p50: Option<u64>,
    /// The 99th percentile of one decided election's messages.
    pub messages_per_election_p99: Option<u64>,
    /// Mean messages per decided failover election, by type.
    pub messages_by_type: Vec<(String, f64)>,
    /// Mean time two or more nodes believed they led.
    pub mean_overlap_ns: f64,
    /// Mean time two or more nodes that could act (not frozen) believed they led.
    pub mean_acting_overlap_ns: f64,
    /// Downtime from any cause (docs/reports.md, "Downtime"): every stretch with no leader
    /// that could act, over every run.
    pub downtime: DowntimeSummary,
    /// What the algorithm's own properties measured, over every run ([`crate::measures`]).
    pub measures: Vec<crate::measures::MeasureSummary>,
    /// What they followed over time, each time's median over the runs ([`crate::measures`]).
    pub curves: Vec<crate::measures::MedianCurve>,
    /// Runs whose liveness failed (no leader in time after the last fault, or a quorum
    /// without one while faults were under way).
    pub liveness_failures: usize,
    /// Stale writes fencing refused, summed over seeds.
    pub fenced_rejections: u64,
    /// Seeds with any safety violation.
    pub seeds_with_safety_violations: usize,
    /// Per safety invariant, in `Invariant::SAFETY` order, then per user property that broke
    /// (in the order they first broke): the seeds that broke it.
    pub seeds_by_invariant: Vec<(String, usize)>,
    /// Stale writes the resource accepted (possible only without fencing), summed over
    /// seeds, and the seeds with any.
    pub stale_writes_accepted: u64,
    /// Seeds with any stale write accepted.
    pub seeds_with_stale_writes: usize,
    /// Whether the resource fenced in this group's runs.
    pub fencing: bool,
    /// Faults that found no target (no leader when a crash of the leader struck), summed
    /// over seeds, and the seeds with any: those seeds have no failover for that fault.
    pub faults_skipped: usize,
    /// Seeds with any fault that found no target.
    pub seeds_with_skipped_faults: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The recovery-time objective check, if the scenario states one.
    pub objective: Option<ObjectiveCheck>,
    #[serde(skip)]
    /// The recovery times as a CDF's series.
    pub recovery_series: CdfSeries,
    #[serde(skip)]
    /// The leaderless times per episode as a CDF's series.
    pub leaderless_series: CdfSeries,
    #[serde(skip)]
    /// Messages per election by type, for the chart.
    pub messages: ElectionMessages,
}

/// A group's downtime episodes, from any cause: how many, why, and how long.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DowntimeSummary {
    /// Episodes over every run.
    pub episodes: usize,
    /// Of them, by cause, in [`DowntimeCause::ALL`] order: `(name, episodes)`.
    pub by_cause: Vec<(&'static str, usize)>,
    /// Of them, those its leader before took back (no leader change).
    pub same_holder: usize,
    /// Of them, those still open when their run ended (measured to the end).
    pub unrecovered: usize,
    /// How long one episode lasted, unrecovered ones to their run's end.
    pub per_episode: Option<Distribution>,
    /// Mean downtime per run, every episode summed.
    pub mean_per_run_ns: f64,
}

impl DowntimeSummary {
    fn of(runs: &[SeedRun]) -> Self {
        // Counted as a hunt counts them (one rule), then their lengths' distribution.
        let mut counts = DowntimeCounts::default();
        for run in runs {
            counts.add(&DowntimeCounts::of(&run.downtime));
        }
        let lengths: Vec<u64> = runs
            .iter()
            .flat_map(|r| r.downtime.iter().map(Downtime::duration_ns))
            .collect();
        let as_count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Self {
            episodes: lengths.len(),
            by_cause: DowntimeCause::ALL
                .iter()
                .map(|&c| (c.name(), as_count(counts.caused_by(c))))
                .collect(),
            same_holder: as_count(counts.same_holder),
            unrecovered: as_count(counts.unrecovered),
            per_episode: Distribution::from_nanos(&lengths),
            mean_per_run_ns: counts.total_ns as f64 / runs.len().max(1) as f64,
        }
    }

    /// The episodes put down to `cause`.
    pub fn caused_by(&self, cause: DowntimeCause) -> usize {
        self.by_cause
            .iter()
            .find(|(name, _)| *name == cause.name())
            .map_or(0, |(_, n)| *n)
    }
}

/// The columns of [`summary_table`] a terminal shows (report.md has every one): its first
/// column and these fit 120 columns with durations of a few seconds.
pub const SUMMARY_TERMINAL_COLUMNS: &[&str] = &[
    "failovers",
    "unresolved",
    "ridden through",
    "recovery p50",
    "recovery p99",
    "leaderless p99",
    "messages/election",
];

/// The columns of [`safety_table`] a terminal shows: the seeds that broke each built-in
/// invariant, stale writes, and the overlap of leaders that could act.
pub const SAFETY_TERMINAL_COLUMNS: &[&str] = &[
    "fencing",
    "election_safety",
    "fencing_safety",
    "term_monotonic",
    "stale writes accepted",
    "acting overlap",
];

/// The columns of [`availability_table`] a terminal shows.
pub const AVAILABILITY_TERMINAL_COLUMNS: &[&str] = &[
    "episodes",
    "member",
    "service",
    "spurious",
    "same holder",
    "unrecovered",
    "p50",
    "p99",
    "per run",
    "liveness failed",
];

/// What the availability table's columns mean, for the reports.
pub const AVAILABILITY_TEXT: &str = "Downtime from the user's side, whatever the cause: an \
     episode opens when no member that believes it leads can act (none leads, or the one that \
     does is crashed, paused, suspended or stalled) and closes when one can, the member that \
     led before included (same holder: a lease renewed late, a leader that resumed). Its cause \
     is the latest fault to strike since the group last recovered (or still in effect): on a \
     service process (service), on a member or the network (member), none (spurious). Unrecovered episodes \
     last to the end of their run. Per run: the downtime of a run, summed. Liveness failed: \
     runs with no leader in time after the last fault, or a quorum without one while faults \
     were under way.";

/// The availability table: one row per group, downtime from any cause.
pub fn availability_table(first_column: &str, groups: &[GroupSummary]) -> Table {
    let mut t = Table::new(&[
        first_column,
        "episodes",
        "member",
        "service",
        "spurious",
        "same holder",
        "unrecovered",
        "p50",
        "p99",
        "max",
        "per run",
        "liveness failed",
    ]);
    for g in groups {
        let d = &g.downtime;
        t.push(vec![
            g.label.clone(),
            d.episodes.to_string(),
            d.caused_by(DowntimeCause::MemberFault).to_string(),
            d.caused_by(DowntimeCause::ServiceFault).to_string(),
            d.caused_by(DowntimeCause::Spurious).to_string(),
            d.same_holder.to_string(),
            d.unrecovered.to_string(),
            dur(d.per_episode.map(|p| p.p50_ns)),
            dur(d.per_episode.map(|p| p.p99_ns)),
            dur(d.per_episode.map(|p| p.max_ns)),
            dur(Some(d.mean_per_run_ns.round() as u64)),
            format!("{}/{}", g.liveness_failures, g.seeds),
        ]);
    }
    t
}

/// The report's section on downtime from any cause (`compare`'s and `sweep`'s alike).
pub fn availability_section(first_column: &str, groups: &[GroupSummary]) -> Section {
    Section::new("Downtime from any cause")
        .text(AVAILABILITY_TEXT)
        .table(availability_table(first_column, groups))
}

/// Summarises the runs of one group.
pub fn summarise(group: &GroupRuns, objective: Option<&Objective>) -> GroupSummary {
    let label = group.label.as_str();
    let runs = group.runs.as_slice();
    let failovers = || runs.iter().flat_map(|r| &r.failovers);
    let recovery_series = failover_series(label, failovers(), FailoverMeasure::Recovery);
    let election_series = failover_series(label, failovers(), FailoverMeasure::Election);
    let detection_series = failover_series(label, failovers(), FailoverMeasure::Detection);
    let (messages, elections) = group.elections.finish(label);
    let new_leader: Vec<u32> = failovers()
        .filter(|f| f.outcome == FailoverOutcome::NewLeader)
        .map(|f| f.rounds)
        .collect();
    let mean_rounds = (!new_leader.is_empty())
        .then(|| new_leader.iter().map(|&r| f64::from(r)).sum::<f64>() / new_leader.len() as f64);
    let eligible: Vec<u32> = failovers()
        .filter(|f| f.outcome == FailoverOutcome::NewLeader)
        .filter_map(|f| f.eligible_rounds)
        .collect();
    let mean_eligible_rounds = (!eligible.is_empty())
        .then(|| eligible.iter().map(|&r| f64::from(r)).sum::<f64>() / eligible.len() as f64);
    let heard: Vec<u64> = failovers().filter_map(|f| f.followers_heard_ns).collect();
    let leaderless: Vec<u64> = failovers().map(|f| f.leaderless_ns).collect();
    let claims: Vec<u32> = failovers().map(|f| f.leader_claims).collect();
    let mean_leader_claims = (!claims.is_empty())
        .then(|| claims.iter().map(|&c| f64::from(c)).sum::<f64>() / claims.len() as f64);
    let n = runs.len().max(1) as f64;
    let objective = objective.and_then(|o| {
        let budget_ns = o.failover_p99_ns?;
        let judged: Vec<u64> = failovers()
            .filter(|f| {
                matches!(
                    f.outcome,
                    FailoverOutcome::NewLeader | FailoverOutcome::Unresolved
                )
            })
            .map(|f| f.recovery_ns.unwrap_or(u64::MAX))
            .collect();
        let p99 = Distribution::from_nanos(&judged).map(|d| d.p99_ns);
        let within_budget = judged.iter().filter(|&&r| r <= budget_ns).count();
        Some(ObjectiveCheck {
            budget_ns,
            recovery_p99_ns: p99,
            detection_p99_ns: Distribution::from_nanos(&detection_series.samples_ns)
                .map(|d| d.p99_ns),
            election_p99_ns: Distribution::from_nanos(&election_series.samples_ns)
                .map(|d| d.p99_ns),
            startup_delay_ns: o.startup_delay_ns,
            judged: judged.len(),
            within_budget,
            met: p99.is_none_or(|p| p <= budget_ns),
        })
    });
    GroupSummary {
        label: label.to_string(),
        seeds: runs.len(),
        failovers: recovery_series.samples_ns.len() + recovery_series.unresolved,
        unresolved: recovery_series.unresolved,
        ridden_through: failovers()
            .filter(|f| f.outcome == FailoverOutcome::RiddenThrough)
            .count(),
        recovery: Distribution::from_nanos(&recovery_series.samples_ns),
        election: Distribution::from_nanos(&election_series.samples_ns),
        detection: Distribution::from_nanos(&detection_series.samples_ns),
        first_round_share: first_round_share(failovers()),
        mean_rounds,
        eligible_first_round_share: eligible_first_round_share(failovers()),
        mean_eligible_rounds,
        followers_heard: Distribution::from_nanos(&heard),
        steady_ns: group.steady.duration_ns,
        futile_campaigns: group.futile_campaigns,
        futile_campaign_messages: group.futile_campaign_messages,
        // Folds from +0.0: `Sum for f64` starts from -0.0.
        steady_messages_per_s: group
            .steady
            .rates(&group.steady.members)
            .map(|r| r.iter().fold(0.0, |sum, (_, v)| sum + v)),
        steady_service_messages_per_s: group
            .steady
            .rates(&group.steady.service)
            .filter(|r| !r.is_empty())
            .map(|r| r.iter().fold(0.0, |sum, (_, v)| sum + v)),
        steady_by_type: group
            .steady
            .rates(&group.steady.members)
            .unwrap_or_default(),
        steady_service_by_type: group
            .steady
            .rates(&group.steady.service)
            .unwrap_or_default(),
        leaderless: Distribution::from_nanos(&leaderless),
        mean_leader_claims,
        episodes_stable: failovers().filter(|f| f.episode_stable).count(),
        leaderless_series: CdfSeries {
            label: label.to_string(),
            samples_ns: leaderless,
            unresolved: 0,
        },
        signals: group.signals,
        elections,
        messages_per_election: per_election_total(elections, &messages),
        messages_per_election_p50: group.elections.percentiles().map(|(p50, _)| p50),
        messages_per_election_p99: group.elections.percentiles().map(|(_, p99)| p99),
        messages_by_type: messages.per_kind.clone(),
        // A fold from +0.0: `Sum for f64` starts from -0.0.
        mean_overlap_ns: runs.iter().fold(0.0, |sum, r| sum + r.overlap_ns as f64) / n,
        mean_acting_overlap_ns: runs
            .iter()
            .fold(0.0, |sum, r| sum + r.acting_overlap_ns as f64)
            / n,
        downtime: DowntimeSummary::of(runs),
        measures: crate::measures::summarise(runs),
        curves: crate::measures::median_curves(runs),
        liveness_failures: runs.iter().filter(|r| r.liveness_failed).count(),
        fenced_rejections: runs.iter().map(|r| r.fenced_rejections).sum(),
        seeds_with_safety_violations: runs
            .iter()
            .filter(|r| !r.safety_violations.is_empty())
            .count(),
        seeds_by_invariant: broken_names(runs)
            .into_iter()
            .map(|name| {
                let broke = |r: &&SeedRun| r.safety_violations.split(' ').any(|v| v == name);
                let seeds = runs.iter().filter(broke).count();
                (name, seeds)
            })
            .collect(),
        stale_writes_accepted: runs.iter().map(|r| r.stale_accepted).sum(),
        seeds_with_stale_writes: runs.iter().filter(|r| r.stale_accepted > 0).count(),
        fencing: group.fencing,
        faults_skipped: runs.iter().map(|r| r.faults_skipped).sum(),
        seeds_with_skipped_faults: runs.iter().filter(|r| r.faults_skipped > 0).count(),
        objective,
        recovery_series,
        messages,
    }
}

/// The mean messages per decided election (the sum of the per-type means), `None` when no
/// election was decided. Summed from +0.0: `Sum for f64` starts from -0.0, which printed as
/// `-0.0` messages per election when nothing was elected.
fn per_election_total(decided: usize, messages: &ElectionMessages) -> Option<f64> {
    (decided > 0).then(|| messages.per_kind.iter().fold(0.0, |sum, (_, v)| sum + v))
}

/// A number of messages per election for people: one decimal, `n/a` when there is none.
pub fn per_election(v: Option<f64>) -> String {
    v.map_or("n/a".to_string(), |v| format!("{v:.1}"))
}

/// A duration for people, `-` when there is none; `never` for an unresolved maximum.
pub fn dur(ns: Option<u64>) -> String {
    match ns {
        None => "-".to_string(),
        Some(u64::MAX) => "never".to_string(),
        Some(ns) => format_duration(ns),
    }
}

fn share(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

/// A measure the algorithm may not report: `n/a` when it does not, else `shown`.
fn reported(reports: bool, shown: String) -> String {
    if reports {
        shown
    } else {
        "n/a".to_string()
    }
}

/// What the election columns of [`summary_table`] mean, for the reports.
pub const ELECTION_MEASURES_TEXT: &str = "Rounds are the terms campaigned in from the fault to \
     the new leader, whoever campaigned; eligible rounds count only those in which a candidate \
     that could win campaigned (Raft: a log at least as up-to-date as a majority's, paper \
     §5.4.1). The first-round shares are the failovers ending with a new leader that needed one \
     round of each kind. All heard: from the fault until every member that can hear the new \
     leader (up, not cut off from it by a partition) had heard it (accepted its first \
     heartbeat). Leaderless: the time without a recognised leader over the failover's \
     whole episode, from the fault until one leader held for twice the failure-detection \
     time with the fault over (or the next strike, or the end of the run); claims/episode: \
     leadership claims in it, re-elections included. Steady msgs/s: messages per second \
     while steady (no fault under way, no election, the leader held for twice the \
     failure-detection time), members' and the coordination service's own (service msgs/s); \
     writes left out; message sizes are not modelled. n/a: the algorithm does not report \
     what the measure needs, or there was no steady time.";

/// The table of failover times and election measures, one row per group.
pub fn summary_table(first_column: &str, groups: &[GroupSummary]) -> Table {
    let mut t = Table::new(&[
        first_column,
        "failovers",
        "unresolved",
        "ridden through",
        "recovery p50",
        "recovery p99",
        "election p50",
        "election p99",
        "first-round share",
        "mean rounds",
        "eligible first-round",
        "eligible rounds",
        "all heard p50",
        "all heard p99",
        "leaderless p50",
        "leaderless p99",
        "claims/episode",
        "steady msgs/s",
        "service msgs/s",
        "messages/election",
        "messages p99",
    ]);
    for g in groups {
        let eligibility = g.signals.campaign_eligibility;
        let heard = g.signals.leader_heard;
        t.push(vec![
            g.label.clone(),
            g.failovers.to_string(),
            g.unresolved.to_string(),
            g.ridden_through.to_string(),
            dur(g.recovery.map(|d| d.p50_ns)),
            dur(g.recovery.map(|d| d.p99_ns)),
            dur(g.election.map(|d| d.p50_ns)),
            dur(g.election.map(|d| d.p99_ns)),
            share(g.first_round_share),
            g.mean_rounds.map_or("-".to_string(), |r| format!("{r:.2}")),
            reported(eligibility, share(g.eligible_first_round_share)),
            reported(
                eligibility,
                g.mean_eligible_rounds
                    .map_or("-".to_string(), |r| format!("{r:.2}")),
            ),
            reported(heard, dur(g.followers_heard.map(|d| d.p50_ns))),
            reported(heard, dur(g.followers_heard.map(|d| d.p99_ns))),
            dur(g.leaderless.map(|d| d.p50_ns)),
            dur(g.leaderless.map(|d| d.p99_ns)),
            g.mean_leader_claims
                .map_or("-".to_string(), |c| format!("{c:.2}")),
            g.steady_messages_per_s
                .map_or("n/a".to_string(), |r| format!("{r:.1}")),
            g.steady_service_messages_per_s
                .map_or("-".to_string(), |r| format!("{r:.1}")),
            per_election(g.messages_per_election),
            g.messages_per_election_p99
                .map_or("n/a".to_string(), |p| p.to_string()),
        ]);
    }
    t
}

/// A note for every group in which some fault found no target, or `None`: those seeds have
/// no failover for that fault, so the failover count is short of the faults written.
pub fn skipped_faults_note(groups: &[GroupSummary]) -> Option<String> {
    let parts: Vec<String> = groups
        .iter()
        .filter(|g| g.faults_skipped > 0)
        .map(|g| {
            format!(
                "{}: {} in {} of {} seeds",
                g.label, g.faults_skipped, g.seeds_with_skipped_faults, g.seeds
            )
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Faults that found no target when they struck (a crash of the leader when nobody \
             led), so did nothing and opened no failover: {}. seeds.csv (compare) or \
             trials.csv (sweep) says which.",
            parts.join("; ")
        )
    })
}

/// The safety invariants to count: the built-in ones, then every user property that broke in
/// one of `runs`, in the order they first broke.
fn broken_names(runs: &[SeedRun]) -> Vec<String> {
    let mut names: Vec<String> = Invariant::SAFETY
        .iter()
        .map(|i| i.name().to_string())
        .collect();
    for run in runs {
        for name in run.safety_violations.split(' ').filter(|v| !v.is_empty()) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// What the safety table's columns mean, for the reports.
pub const SAFETY_TEXT: &str = "Per design (or value): whether the resource fenced, the seeds \
     that broke each safety invariant, of the seeds run (election_safety: two leaders in one term; \
     fencing_safety: the resource accepted a stale or duplicate token; term_monotonic: a term \
     went back), the stale writes that reached the resource (accepted with a token below one \
     it had accepted: possible only without fencing) and the seeds with any, the stale writes \
     fencing refused, the mean time two or more nodes believed they led, and of it the time \
     they could all act (none crashed, paused, suspended or stalled: a frozen leader that \
     still believes it leads cannot act on it until it resumes).";

/// The safety table: one row per group, the numbers behind "which is safe without fencing,
/// and what does fencing buy".
pub fn safety_table(first_column: &str, groups: &[GroupSummary]) -> Table {
    let mut header = vec![first_column, "fencing"];
    // The built-in invariants, then any user property that broke in some group.
    let mut invariants: Vec<&str> = Vec::new();
    for (name, _) in groups.iter().flat_map(|g| &g.seeds_by_invariant) {
        if !invariants.contains(&name.as_str()) {
            invariants.push(name);
        }
    }
    let names: Vec<String> = invariants.iter().map(|n| n.to_string()).collect();
    header.extend(names.iter().map(String::as_str));
    header.extend([
        "stale writes accepted",
        "seeds with stale writes",
        "fenced rejections",
        "mean overlap",
        "acting overlap",
    ]);
    let mut t = Table::new(&header);
    for g in groups {
        let mut row = vec![
            g.label.clone(),
            if g.fencing { "on" } else { "off" }.to_string(),
        ];
        row.extend(invariants.iter().map(|name| {
            let seeds = g
                .seeds_by_invariant
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, seeds)| *seeds);
            format!("{seeds}/{}", g.seeds)
        }));
        row.extend([
            g.stale_writes_accepted.to_string(),
            format!("{}/{}", g.seeds_with_stale_writes, g.seeds),
            g.fenced_rejections.to_string(),
            dur(Some(g.mean_overlap_ns.round() as u64)),
            dur(Some(g.mean_acting_overlap_ns.round() as u64)),
        ]);
        t.push(row);
    }
    t
}

/// The objective table: per group, the budget broken down and whether it is met.
pub fn objective_table(first_column: &str, groups: &[GroupSummary]) -> Option<Table> {
    if groups.iter().all(|g| g.objective.is_none()) {
        return None;
    }
    let mut t = Table::new(&[
        first_column,
        "budget (p99)",
        "detection p99",
        "election p99",
        "start-up",
        "recovery p99",
        "within budget",
        "met",
    ]);
    for g in groups {
        let Some(o) = &g.objective else { continue };
        t.push(vec![
            g.label.clone(),
            format_duration(o.budget_ns),
            dur(o.detection_p99_ns),
            dur(o.election_p99_ns),
            format_duration(o.startup_delay_ns),
            dur(o.recovery_p99_ns),
            format!("{}/{}", o.within_budget, o.judged),
            if o.met { "yes" } else { "NO" }.to_string(),
        ]);
    }
    Some(t)
}

/// The summary as numbers: one row per group.
pub fn summary_data(name: &str, first_column: &str, groups: &[GroupSummary]) -> DataTable {
    let mut t = DataTable::new(
        name,
        &[
            first_column,
            "seeds",
            "failovers",
            "unresolved",
            "ridden_through",
            "recovery_p50_ns",
            "recovery_p90_ns",
            "recovery_p99_ns",
            "recovery_max_ns",
            "recovery_mean_ns",
            "election_p50_ns",
            "election_p99_ns",
            "election_p999_ns",
            "election_mean_ns",
            "detection_p50_ns",
            "detection_p99_ns",
            "first_round_share",
            "mean_rounds",
            "eligible_first_round_share",
            "mean_eligible_rounds",
            "followers_heard_count",
            "followers_heard_p50_ns",
            "followers_heard_p99_ns",
            "leaderless_p50_ns",
            "leaderless_p99_ns",
            "leaderless_max_ns",
            "leaderless_mean_ns",
            "mean_leader_claims",
            "episodes_stable",
            "steady_ns",
            "steady_messages_per_s",
            "steady_service_messages_per_s",
            "futile_campaigns",
            "futile_campaign_messages",
            "elections",
            "messages_per_election",
            "messages_per_election_p50",
            "messages_per_election_p99",
            "mean_overlap_ns",
            "fenced_rejections",
            "seeds_with_safety_violations",
            "fencing",
            "seeds_election_safety",
            "seeds_fencing_safety",
            "seeds_term_monotonic",
            "stale_writes_accepted",
            "seeds_with_stale_writes",
            "faults_skipped",
            "seeds_with_skipped_faults",
            "objective_budget_ns",
            "objective_recovery_p99_ns",
            "objective_met",
            "mean_acting_overlap_ns",
            "downtime_episodes",
            "downtime_member_fault",
            "downtime_service_fault",
            "downtime_spurious",
            "downtime_same_holder",
            "downtime_unrecovered",
            "downtime_p50_ns",
            "downtime_p99_ns",
            "downtime_max_ns",
            "downtime_per_run_mean_ns",
            "liveness_failures",
        ],
    );
    for g in groups {
        let o = g.objective.as_ref();
        t.push(vec![
            g.label.as_str().into(),
            g.seeds.into(),
            g.failovers.into(),
            g.unresolved.into(),
            g.ridden_through.into(),
            g.recovery.map(|d| d.p50_ns).into(),
            g.recovery.map(|d| d.p90_ns).into(),
            g.recovery.map(|d| d.p99_ns).into(),
            g.recovery.map(|d| d.max_ns).into(),
            g.recovery.map(|d| d.mean_ns).into(),
            g.election.map(|d| d.p50_ns).into(),
            g.election.map(|d| d.p99_ns).into(),
            g.election.map(|d| d.p999_ns).into(),
            g.election.map(|d| d.mean_ns).into(),
            g.detection.map(|d| d.p50_ns).into(),
            g.detection.map(|d| d.p99_ns).into(),
            g.first_round_share.into(),
            g.mean_rounds.into(),
            g.eligible_first_round_share.into(),
            g.mean_eligible_rounds.into(),
            g.signals
                .leader_heard
                .then(|| g.followers_heard.map_or(0, |d| d.count))
                .into(),
            g.followers_heard.map(|d| d.p50_ns).into(),
            g.followers_heard.map(|d| d.p99_ns).into(),
            g.leaderless.map(|d| d.p50_ns).into(),
            g.leaderless.map(|d| d.p99_ns).into(),
            g.leaderless.map(|d| d.max_ns).into(),
            g.leaderless.map(|d| d.mean_ns).into(),
            g.mean_leader_claims.into(),
            g.episodes_stable.into(),
            g.steady_ns.into(),
            g.steady_messages_per_s.into(),
            g.steady_service_messages_per_s.into(),
            g.futile_campaigns.into(),
            g.futile_campaign_messages.into(),
            g.elections.into(),
            g.messages_per_election.into(),
            g.messages_per_election_p50.into(),
            g.messages_per_election_p99.into(),
            g.mean_overlap_ns.into(),
            g.fenced_rejections.into(),
            g.seeds_with_safety_violations.into(),
            if g.fencing { "on" } else { "off" }.into(),
            g.seeds_by_invariant[0].1.into(),
            g.seeds_by_invariant[1].1.into(),
            g.seeds_by_invariant[2].1.into(),
            g.stale_writes_accepted.into(),
            g.seeds_with_stale_writes.into(),
            g.faults_skipped.into(),
            g.seeds_with_skipped_faults.into(),
            o.map(|o| o.budget_ns).into(),
            o.and_then(|o| o.recovery_p99_ns).into(),
            o.map(|o| if o.met { "yes" } else { "no" }).into(),
            g.mean_acting_overlap_ns.into(),
            g.downtime.episodes.into(),
            g.downtime.caused_by(DowntimeCause::MemberFault).into(),
            g.downtime.caused_by(DowntimeCause::ServiceFault).into(),
            g.downtime.caused_by(DowntimeCause::Spurious).into(),
            g.downtime.same_holder.into(),
            g.downtime.unrecovered.into(),
            g.downtime.per_episode.map(|d| d.p50_ns).into(),
            g.downtime.per_episode.map(|d| d.p99_ns).into(),
            g.downtime.per_episode.map(|d| d.max_ns).into(),
            g.downtime.mean_per_run_ns.into(),
            g.liveness_failures.into(),
        ]);
    }
    t
}

/// Every failover of every run, one row each.
pub fn failover_data(name: &str, first_column: &str, groups: &[GroupRuns]) -> DataTable {
    let mut t = DataTable::new(
        name,
        &[
            first_column,
            "seed",
            "at_ns",
            "cause",
            "fault_kind",
            "outcome",
            "detection_ns",
            "election_ns",
            "recovery_ns",
            "followers_heard_ns",
            "rounds",
            "eligible_rounds",
            "leaderless_ns",
            "leader_claims",
            "episode_ns",
            "episode_stable",
        ],
    );
    for group in groups {
        for r in &group.runs {
            for f in &r.failovers {
                let outcome = serde_json::to_value(f.outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| format!("{:?}", f.outcome));
                t.push(vec![
                    group.label.as_str().into(),
                    r.seed.into(),
                    f.at_ns.into(),
                    f.cause.as_str().into(),
                    f.fault_kind.as_str().into(),
                    outcome.into(),
                    f.detection_ns.into(),
                    f.election_ns.into(),
                    f.recovery_ns.into(),
                    f.followers_heard_ns.into(),
                    f.rounds.into(),
                    f.eligible_rounds.into(),
                    f.leaderless_ns.into(),
                    f.leader_claims.into(),
                    f.episode_ns.into(),
                    if f.episode_stable { "yes" } else { "no" }.into(),
                ]);
            }
        }
    }
    t
}

/// The objective line of a CDF chart.
pub fn objective_line(objective: Option<&Objective>) -> Option<splitbrain_reports::Objective> {
    let budget = objective?.failover_p99_ns?;
    Some(splitbrain_reports::Objective {
        label: format!("objective: p99 ≤ {}", format_duration(budget)),
        at_ns: budget,
    })
}

/// An algorithm's settings as they ran, as the JSON summaries of compare and sweep echo them.
#[derive(Serialize)]
pub struct SettingsAsRun {
    /// The algorithm's name.
    pub algorithm: &'static str,
    /// Every setting written out as a scenario would (`Etcd(ttl: "10s", ...)`).
    pub settings: String,
    /// The same settings as data.
    pub values: splitbrain_algorithms::AlgorithmSettings,
    /// What the modeled system does to them (a negotiated session, a raised TTL).
    pub adjustments: Vec<String>,
}

impl SettingsAsRun {
    /// The settings of `algorithm` as it runs.
    pub fn of(algorithm: &splitbrain_algorithms::AlgorithmConfig) -> Self {
        Self {
            algorithm: algorithm.name(),
            settings: splitbrain_scenario::algorithm_line(algorithm),
            values: algorithm.settings(),
            adjustments: algorithm.adjustments(),
        }
    }

    /// The settings line with the adjustments as notes, for a table.
    pub fn line(&self) -> String {
        let mut line = self.settings.clone();
        for note in &self.adjustments {
            line.push_str(&format!("; note: {note}"));
        }
        line
    }
}

/// The series with identical failover times drawn once (`--fencing both` runs each design
/// twice, and fencing seldom changes a failover's timing: two equal curves would hide one
/// another): `NAME-fenced REST` and `NAME-unfenced REST` become `NAME (both) REST`, other
/// labels are joined by ` = `.
pub fn merge_identical(series: impl Iterator<Item = CdfSeries>) -> Vec<CdfSeries> {
    let mut merged: Vec<CdfSeries> = Vec::new();
    for s in series {
        let same =
            |m: &&mut CdfSeries| m.samples_ns == s.samples_ns && m.unresolved == s.unresolved;
        match merged.iter_mut().find(same) {
            Some(m) => m.label = merged_label(&m.label, &s.label),
            None => merged.push(s),
        }
    }
    merged
}

fn merged_label(first: &str, second: &str) -> String {
    // `NAME-fenced REST` and `NAME-unfenced REST`: the design's name is up to the first space.
    let split = |label: &str| match label.split_once(' ') {
        Some((name, rest)) => (name.to_string(), format!(" {rest}")),
        None => (label.to_string(), String::new()),
    };
    let ((name_a, rest_a), (name_b, rest_b)) = (split(first), split(second));
    match (
        name_a.strip_suffix("-fenced"),
        name_b.strip_suffix("-unfenced"),
    ) {
        (Some(a), Some(b)) if a == b && rest_a == rest_b => format!("{a} (both){rest_a}"),
        _ => format!("{first} = {second}"),
    }
}

/// Checks a modified scenario as if it had been written to a file: writes it as RON and
/// parses it again. The error names `what` (the value that made it invalid).
pub fn revalidate(scenario: &Scenario, what: &str) -> Result<Scenario, Invalidated> {
    let text = splitbrain_scenario::to_ron(scenario);
    splitbrain_scenario::parse(&text, what).map_err(|error| Invalidated {
        what: what.to_string(),
        error,
    })
}

/// A change (`--param`, a design) that made the scenario invalid.
#[derive(Clone, Debug, PartialEq, Error)]
pub struct Invalidated {
    /// The change, like `stall=5s`.
    pub what: String,
    /// What the scenario's rules say about the result.
    pub error: ScenarioError,
}

impl std::fmt::Display for Invalidated {
    /// `WHAT makes the scenario invalid: MESSAGE`, and the hint on its own line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let message = self.error.message();
        write!(f, "{} makes the scenario invalid: {message}", self.what)?;
        if let Some(hint) = self.error.hint() {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_design_with_and_without_fencing_merges_to_both() {
        assert_eq!(merged_label("etcd-fenced", "etcd-unfenced"), "etcd (both)");
        assert_eq!(
            merged_label("etcd-fenced stall=5s", "etcd-unfenced stall=5s"),
            "etcd (both) stall=5s"
        );
        assert_eq!(
            merged_label("x-fenced-10s-fenced", "x-fenced-10s-unfenced"),
            "x-fenced-10s (both)"
        );
        assert_eq!(
            merged_label("etcd-fenced stall=5s", "etcd-unfenced stall=8s"),
            "etcd-fenced stall=5s = etcd-unfenced stall=8s"
        );
        assert_eq!(merged_label("raft", "bully"), "raft = bully");
    }

    #[test]
    fn seeds_are_cut_into_chunks_that_cover_the_range_once_in_order() {
        let chunks: Vec<_> = seed_chunks(1..=10, 4).collect();
        assert_eq!(chunks, [1..=4, 5..=8, 9..=10]);
        assert_eq!(seed_chunks(3..=3, 4).collect::<Vec<_>>(), [3..=3]);
        let (first, last) = (5, 4);
        assert_eq!(seed_chunks(first..=last, 4).count(), 0);
        let top: Vec<_> = seed_chunks(u64::MAX - 4..=u64::MAX, 3).collect();
        assert_eq!(top, [u64::MAX - 4..=u64::MAX - 2, u64::MAX - 1..=u64::MAX]);
    }

    #[test]
    fn counts_from_1_to_the_most_runs_are_accepted() {
        assert!(check_count("--seeds", 1, 3, "per algorithm").is_ok());
        assert!(check_count("--seeds", MAX_RUNS / 4, 4, "per algorithm").is_ok());
        assert!(check_count("--trials", MAX_RUNS, 1, "per value").is_ok());
    }

    #[test]
    fn zero_and_counts_past_the_most_runs_are_bad_input() {
        assert!(check_count("--seeds", 0, 3, "per algorithm").is_err());
        assert!(check_count("--trials", MAX_RUNS + 1, 1, "per value").is_err());
        assert!(check_count("--seeds", MAX_RUNS / 2 + 1, 2, "per algorithm").is_err());
        assert!(check_count("--seeds", u64::MAX, 6, "per algorithm").is_err());
    }
}
