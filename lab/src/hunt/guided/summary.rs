//! What the mutants of a guided hunt did, and what the user's observations brought: the
//! guided part of a hunt's summary, built run by run.

use super::corpus::OBSERVED_FEATURES_MAX;
use super::{GuidedRun, RunId};
use crate::hunt::observed::ObservedFeature;
use crate::hunt::record::Failure;
use crate::hunt::summary::HuntVerdict;
use serde::Serialize;
use std::collections::BTreeMap;

/// The most features of the user's observations a summary lists (it counts them all).
pub const OBSERVATIONS_LISTED: usize = 64;

/// One failure key among the mutants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MutantFailures {
    /// The failure key.
    pub key: String,
    /// Mutants that failed with it.
    pub count: u64,
    /// The first of them.
    pub first: String,
    /// Its detail.
    pub detail: String,
}

/// What the mutants of a guided hunt did (the fresh seeds are in the ordinary summary).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GuidedSummary {
    /// Mutants per batch (once the corpus held a schedule).
    pub mutants_per_batch: u64,
    /// Mutants run.
    pub mutants_run: u64,
    /// Mutants whose outcome differed from `expect`.
    pub mutants_failed: u64,
    /// Runs (fresh seeds and mutants, in run order) up to and including the first that
    /// failed in any way (liveness and outgrown limits too), if any did.
    pub runs_to_first_failure: Option<u64>,
    /// Runs (fresh seeds and mutants, in run order) up to and including the first that
    /// violated a safety invariant ([`Failure::is_safety_violation`]), if any did: the
    /// figure to compare with a plain hunt's seeds to its first safety violation.
    pub runs_to_first_safety_violation: Option<u64>,
    /// The mutants' failures, by key.
    pub failures: Vec<MutantFailures>,
    /// Runs (fresh seeds and mutants) kept in the corpus for reaching a feature first.
    pub kept: u64,
    /// Of those, the runs kept for a feature of the user's own observations (`observe`).
    pub kept_for_observations: u64,
    /// How many features of the user's observations the runs reached (a name's count, a
    /// class of its values: docs/hunting.md, "Guided search"), counted up to
    /// [`OBSERVED_FEATURES_MAX`].
    pub observation_features: u64,
    /// The first [`OBSERVATIONS_LISTED`] of them, in the order first reached.
    pub observations: Vec<ObservationReached>,
}

/// A feature of the user's observations, as the runs of a guided hunt reached it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObservationReached {
    /// The feature: `lease_acted x4-7` (a name observed 4 to 7 times in a run),
    /// `lease_acted=8..15` (a value of that class).
    pub feature: String,
    /// Runs that reached it.
    pub runs: u64,
    /// The first run that reached it (`seed 12`, `mutant m3:12`).
    pub first: String,
    /// The first run kept in the corpus for it, if any was (a failing run is not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
}

impl GuidedSummary {
    /// What the mutants' failures add up to, by the summary's rule
    /// ([`HuntVerdict::of_keys`]).
    pub fn verdict(&self) -> HuntVerdict {
        HuntVerdict::of_keys(self.failures.iter().map(|f| f.key.as_str()))
    }
}

/// Builds a [`GuidedSummary`] batch by batch.
#[derive(Clone, Debug, Default)]
pub struct GuidedSummaryBuilder {
    summary: GuidedSummary,
    runs: u64,
    groups: BTreeMap<String, MutantFailures>,
    /// Where each observation feature is in `summary.observations`, if listed.
    listed: BTreeMap<ObservedFeature, usize>,
}

impl GuidedSummaryBuilder {
    /// An empty summary of a hunt with `mutants_per_batch`.
    pub fn new(mutants_per_batch: u64) -> Self {
        Self {
            summary: GuidedSummary {
                mutants_per_batch,
                ..GuidedSummary::default()
            },
            ..Self::default()
        }
    }

    /// Adds the next run (in run order).
    pub fn add(&mut self, run: &GuidedRun) {
        self.runs += 1;
        self.add_observations(run);
        let s = &mut self.summary;
        if run.record.failed() && s.runs_to_first_failure.is_none() {
            s.runs_to_first_failure = Some(self.runs);
        }
        let safety = run.record.failures.iter().any(Failure::is_safety_violation);
        if safety && s.runs_to_first_safety_violation.is_none() {
            s.runs_to_first_safety_violation = Some(self.runs);
        }
        let RunId::Mutant(id) = run.id else {
            return;
        };
        s.mutants_run += 1;
        s.mutants_failed += u64::from(run.record.failed());
        for failure in &run.record.failures {
            let group = self
                .groups
                .entry(failure.key.clone())
                .or_insert_with(|| MutantFailures {
                    key: failure.key.clone(),
                    count: 0,
                    first: id.to_string(),
                    detail: failure.detail.clone(),
                });
            group.count += 1;
        }
    }

    /// Counts what the run observed, and what it was kept for.
    fn add_observations(&mut self, run: &GuidedRun) {
        let s = &mut self.summary;
        if let Some(kept) = &run.kept {
            s.kept += 1;
            s.kept_for_observations += u64::from(!kept.observations.is_empty());
        }
        for feature in &run.observed {
            let listed = self.listed.len();
            if listed >= OBSERVED_FEATURES_MAX && !self.listed.contains_key(feature) {
                continue;
            }
            let index = *self.listed.entry(*feature).or_insert(listed);
            if index == listed {
                s.observation_features += 1;
                if listed >= OBSERVATIONS_LISTED {
                    continue;
                }
                s.observations.push(ObservationReached {
                    feature: feature.to_string(),
                    runs: 0,
                    first: run.id.to_string(),
                    kept: None,
                });
            }
            let Some(reached) = s.observations.get_mut(index) else {
                continue;
            };
            reached.runs += 1;
            let kept_for_it = run
                .kept
                .as_ref()
                .is_some_and(|k| k.observations.contains(feature));
            if kept_for_it && reached.kept.is_none() {
                reached.kept = Some(run.id.to_string());
            }
        }
    }

    /// Mutants that failed so far.
    pub fn mutants_failed(&self) -> u64 {
        self.summary.mutants_failed
    }

    /// The summary.
    pub fn finish(mut self) -> GuidedSummary {
        self.summary.failures = self.groups.into_values().collect();
        self.summary
    }
}
