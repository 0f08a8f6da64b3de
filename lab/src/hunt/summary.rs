//! The hunt's summary: a pure function of the per-seed records, so that merging shard
//! outputs gives exactly what one unsharded hunt over the same seeds gives.

use super::record::{Coverage, DowntimeCounts, SeedRecord, COVERAGE_KINDS};
use serde::Serialize;
use splitbrain_sim::nemesis::{Drawn, NemesisKind};
use std::collections::BTreeMap;

/// How many failing seeds a group lists by number.
const SEEDS_LISTED: usize = 20;

/// The seeds that failed for one reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailureGroup {
    /// The failure key.
    pub key: String,
    /// Seeds that failed with it.
    pub count: u64,
    /// The first of them.
    pub first_seed: u64,
    /// The first few failing seeds, in order.
    pub seeds: Vec<u64>,
    /// The first failing seed's detail.
    pub detail: String,
    /// What the nemesis drew in the failing seeds (absent when none of them had a nemesis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<FailingDraws>,
}

/// What the nemesis drew in the seeds that failed for one reason: which configurations
/// found the failure. Counts only, so a summary stays small however many seeds fail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailingDraws {
    /// The kinds enabled in every failing seed (with a nemesis), in kind order.
    pub common_kinds: Vec<NemesisKind>,
    /// For each kind enabled in some failing seed, in how many.
    pub kind_seeds: Vec<(NemesisKind, u64)>,
    /// The shortest and longest mean gap between faults of the failing seeds.
    pub mean_interval_ns: (u64, u64),
    /// The shortest and longest longest-fault of the failing seeds.
    pub longest_fault_ns: (u64, u64),
    /// What the first failing seed drew.
    pub first: Drawn,
}

impl FailingDraws {
    fn new(drew: &Drawn) -> Self {
        let kinds: Vec<NemesisKind> = drew.enabled.iter().map(|(k, _)| *k).collect();
        let rates = &drew.rates;
        Self {
            kind_seeds: kinds.iter().map(|k| (*k, 1)).collect(),
            common_kinds: kinds,
            mean_interval_ns: (rates.mean_interval_ns, rates.mean_interval_ns),
            longest_fault_ns: (rates.longest_fault_ns, rates.longest_fault_ns),
            first: drew.clone(),
        }
    }

    fn add(&mut self, drew: &Drawn) {
        let on = |kind: &NemesisKind| drew.enabled.iter().any(|(k, _)| k == kind);
        self.common_kinds.retain(on);
        for (kind, _) in &drew.enabled {
            match self.kind_seeds.iter_mut().find(|(k, _)| k == kind) {
                Some((_, seeds)) => *seeds += 1,
                None => self.kind_seeds.push((*kind, 1)),
            }
        }
        self.kind_seeds.sort();
        let widen = |(low, high): (u64, u64), value: u64| (low.min(value), high.max(value));
        self.mean_interval_ns = widen(self.mean_interval_ns, drew.rates.mean_interval_ns);
        self.longest_fault_ns = widen(self.longest_fault_ns, drew.rates.longest_fault_ns);
    }
}

/// How often each coverage situation was reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoverageLine {
    /// The situation, in words.
    pub situation: String,
    /// Occurrences over all seeds.
    pub total: u64,
    /// Seeds in which it occurred at least once.
    pub seeds: u64,
}

/// The summary of a hunt (or of merged shards).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HuntSummary {
    /// The scenario's name.
    pub scenario: String,
    /// Seeds run.
    pub seeds_run: u64,
    /// The first seed run, if any.
    pub first_seed: Option<u64>,
    /// The last seed run, if any.
    pub last_seed: Option<u64>,
    /// Seeds whose outcome differed from `expect`.
    pub failed_seeds: u64,
    /// Events over all seeds.
    pub events: u64,
    /// The failures, grouped by key.
    pub failures: Vec<FailureGroup>,
    /// How often each dangerous situation was reached.
    pub coverage: Vec<CoverageLine>,
    /// The observations the scenario's properties watch that no node made in any seed run
    /// to its end: those properties were never tested (left out when there is none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub never_tested: Vec<String>,
    /// Seeds that failed, but whose every failure the scenario's reference (the version known
    /// to be right) had too on the same schedule: not counted in `failed_seeds` (left out
    /// when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub reference_failed_seeds: u64,
    /// Downtime from any cause over every seed run to its end (docs/reports.md, "Downtime").
    pub downtime: DowntimeCounts,
    /// What the failures add up to (the CLI's exit code; not serialized here). For a guided
    /// hunt, the mutants' failures too ([`super::collect::Collector::finish`]), though
    /// `failed_seeds` and `failures` are the fresh seeds'.
    #[serde(skip)]
    pub verdict: HuntVerdict,
}

/// What a hunt's failures add up to, worst first (the order compares them: worse is less).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum HuntVerdict {
    /// Some safety outcome differed from `expect` (a panic or a missed objective counts here
    /// too).
    SafetyMismatch,
    /// No safety failure, but a run outgrew its limits: the scenario is too big as asked.
    OutgrewLimits,
    /// Only liveness failed.
    LivenessFailed,
    /// Every seed matched.
    #[default]
    Matched,
}

impl HuntVerdict {
    /// What failures with these keys add up to: safety if any safety outcome differed, else
    /// outgrown if a run outgrew its limits (the scenario is too big to run as asked), else
    /// liveness if liveness failed, else matched.
    pub fn of_keys<'k>(keys: impl IntoIterator<Item = &'k str>) -> Self {
        let keys: Vec<&str> = keys.into_iter().collect();
        let limit = super::record::LIMIT_KEY;
        if keys.iter().any(|k| *k != "liveness" && *k != limit) {
            HuntVerdict::SafetyMismatch
        } else if keys.contains(&limit) {
            HuntVerdict::OutgrewLimits
        } else if keys.is_empty() {
            HuntVerdict::Matched
        } else {
            HuntVerdict::LivenessFailed
        }
    }

    /// The worse of two verdicts (safety, then outgrown limits, then liveness).
    pub fn worse(self, other: Self) -> Self {
        self.min(other)
    }
}

impl HuntSummary {
    /// Summarises `records` (any order; a seed recorded twice counts once).
    pub fn from_records(scenario: &str, records: &[SeedRecord]) -> Self {
        let mut by_seed: BTreeMap<u64, &SeedRecord> = BTreeMap::new();
        for record in records {
            by_seed.entry(record.seed).or_insert(record);
        }
        let mut builder = SummaryBuilder::new(scenario);
        by_seed.values().for_each(|r| builder.add(r));
        builder.finish()
    }
}

/// How the seeds a hunt ran compare with the share its scenario expects to match
/// (`expect_rate`, below 1 for a scenario whose failing seeds are its point).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateCheck {
    /// The share of seeds on which the scenario expects its outcome.
    pub expected: f64,
    /// Seeds whose outcome matched.
    pub matched: u64,
    /// Seeds run.
    pub seeds_run: u64,
    /// The bottom of the 95% interval (Wilson) of the share that matched.
    pub low: f64,
    /// Its top.
    pub high: f64,
    /// Whether the expected share is within reach of the seeds: at or below the interval's
    /// top (the seeds do not show that the scenario misses its rate).
    pub consistent: bool,
}

impl RateCheck {
    /// The check of `summary` against `expect_rate_ppm`; `None` when every seed is expected
    /// to match (then any failing seed is a finding, not a rate).
    ///
    /// ```
    /// use splitbrain_lab::hunt::summary::{HuntSummary, RateCheck};
    ///
    /// let mut summary = HuntSummary::from_records("doc", &[]);
    /// summary.seeds_run = 200;
    /// summary.failed_seeds = 12; // 94% matched
    /// let check = RateCheck::of(&summary, 950_000).expect("a rate below 1");
    /// assert!(check.consistent); // 95% is inside 89.8%-96.5%
    /// assert!(RateCheck::of(&summary, 1_000_000).is_none());
    /// ```
    pub fn of(summary: &HuntSummary, expect_rate_ppm: u32) -> Option<Self> {
        if expect_rate_ppm >= splitbrain_scenario::EVERY_SEED_PPM {
            return None;
        }
        let matched = summary.seeds_run.saturating_sub(summary.failed_seeds);
        let (low, high) = splitbrain_reports::stats::wilson_interval(matched, summary.seeds_run);
        let expected = f64::from(expect_rate_ppm) / 1e6;
        Some(RateCheck {
            expected,
            matched,
            seeds_run: summary.seeds_run,
            low,
            high,
            consistent: expected <= high,
        })
    }

    /// The check in a sentence, for the terminal.
    pub fn sentence(&self) -> String {
        let percent = |share: f64| format!("{:.1}%", share * 100.0);
        let verdict = if self.consistent {
            "consistent with the rate: the failing seeds are the scenario's point"
        } else {
            "below the rate"
        };
        format!(
            "expect_rate: the scenario expects its outcome on {} of seeds; it matched on {} of {} seeds run ({}, 95% interval {}-{}): {verdict}",
            percent(self.expected),
            self.matched,
            self.seeds_run,
            percent(self.matched as f64 / self.seeds_run.max(1) as f64),
            percent(self.low),
            percent(self.high),
        )
    }
}

/// Builds a summary one record at a time, in increasing seed order, keeping only counts:
/// memory stays flat however many seeds a hunt runs.
#[derive(Clone, Debug)]
pub struct SummaryBuilder {
    scenario: String,
    seeds_run: u64,
    first_seed: Option<u64>,
    last_seed: Option<u64>,
    failed_seeds: u64,
    events: u64,
    groups: BTreeMap<String, FailureGroup>,
    coverage_total: Coverage,
    coverage_seeds: [u64; COVERAGE_KINDS],
    /// Seeds judged, and in how many of them each watched observation was not made.
    judged_seeds: u64,
    unobserved: BTreeMap<String, u64>,
    reference_failed_seeds: u64,
    downtime: DowntimeCounts,
}

impl SummaryBuilder {
    /// An empty summary of a hunt of `scenario`.
    pub fn new(scenario: &str) -> Self {
        Self {
            scenario: scenario.to_string(),
            seeds_run: 0,
            first_seed: None,
            last_seed: None,
            failed_seeds: 0,
            events: 0,
            groups: BTreeMap::new(),
            coverage_total: Coverage::default(),
            coverage_seeds: [0; COVERAGE_KINDS],
            judged_seeds: 0,
            unobserved: BTreeMap::new(),
            reference_failed_seeds: 0,
            downtime: DowntimeCounts::default(),
        }
    }

    /// Adds the next seed's record; seeds must come in increasing order.
    pub fn add(&mut self, record: &SeedRecord) {
        assert!(
            self.last_seed.is_none_or(|last| record.seed > last),
            "records come in seed order"
        );
        self.seeds_run += 1;
        self.first_seed.get_or_insert(record.seed);
        self.last_seed = Some(record.seed);
        // Saturating: a record file is input (merge reads it), so no sum may overflow.
        self.events = self.events.saturating_add(record.events);
        self.failed_seeds += u64::from(record.failed());
        self.reference_failed_seeds += u64::from(record.excused());
        for failure in &record.failures {
            let group = self
                .groups
                .entry(failure.key.clone())
                .or_insert_with(|| FailureGroup {
                    key: failure.key.clone(),
                    count: 0,
                    first_seed: record.seed,
                    seeds: Vec::new(),
                    detail: failure.detail.clone(),
                    nemesis: None,
                });
            if let Some(drew) = &record.nemesis {
                match &mut group.nemesis {
                    Some(draws) => draws.add(drew),
                    None => group.nemesis = Some(FailingDraws::new(drew)),
                }
            }
            group.count += 1;
            if group.seeds.len() < SEEDS_LISTED {
                group.seeds.push(record.seed);
            }
        }
        add_coverage(
            &mut self.coverage_total,
            &mut self.coverage_seeds,
            &record.coverage,
        );
        self.downtime.add(&record.downtime);
        if record.judged() {
            self.judged_seeds += 1;
            for name in &record.unobserved {
                *self.unobserved.entry(name.clone()).or_default() += 1;
            }
        }
    }

    /// Seeds added so far.
    pub fn seeds_run(&self) -> u64 {
        self.seeds_run
    }

    /// Failing seeds so far.
    pub fn failed_seeds(&self) -> u64 {
        self.failed_seeds
    }

    /// The summary of the records added so far.
    pub fn finish(&self) -> HuntSummary {
        let coverage = self
            .coverage_total
            .named()
            .iter()
            .zip(self.coverage_seeds)
            .map(|((name, total), seeds)| CoverageLine {
                situation: name.to_string(),
                total: *total,
                seeds,
            })
            .collect();
        let failures: Vec<FailureGroup> = self.groups.values().cloned().collect();
        HuntSummary {
            scenario: self.scenario.clone(),
            seeds_run: self.seeds_run,
            first_seed: self.first_seed,
            last_seed: self.last_seed,
            failed_seeds: self.failed_seeds,
            events: self.events,
            verdict: verdict(&failures),
            failures,
            coverage,
            never_tested: self
                .unobserved
                .iter()
                .filter(|(_, seeds)| **seeds == self.judged_seeds)
                .map(|(name, _)| name.clone())
                .collect(),
            reference_failed_seeds: self.reference_failed_seeds,
            downtime: self.downtime.clone(),
        }
    }
}

fn add_coverage(total: &mut Coverage, seeds: &mut [u64; COVERAGE_KINDS], one: &Coverage) {
    let values = one.named();
    for (slot, (_, value)) in seeds.iter_mut().zip(values) {
        *slot += u64::from(value > 0);
    }
    total.split_votes = total.split_votes.saturating_add(one.split_votes);
    total.dueling_candidates = total
        .dueling_candidates
        .saturating_add(one.dueling_candidates);
    total.stale_leader_writes = total
        .stale_leader_writes
        .saturating_add(one.stale_leader_writes);
    total.minority_elections = total
        .minority_elections
        .saturating_add(one.minority_elections);
    total.leases_expired_while_leading = total
        .leases_expired_while_leading
        .saturating_add(one.leases_expired_while_leading);
    total.locked_out_writes = total
        .locked_out_writes
        .saturating_add(one.locked_out_writes);
    total.leader_changes = total.leader_changes.saturating_add(one.leader_changes);
    total.failovers = total.failovers.saturating_add(one.failovers);
    total.faults = total.faults.saturating_add(one.faults);
}

/// [`HuntVerdict::of_keys`] of the failure groups.
fn verdict(failures: &[FailureGroup]) -> HuntVerdict {
    HuntVerdict::of_keys(failures.iter().map(|g| g.key.as_str()))
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
