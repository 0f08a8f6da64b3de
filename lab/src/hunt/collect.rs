//! What a hunt keeps while its runs come in, batch by batch in run order: the summary of the
//! fresh seeds, a guided search's summary of its mutants, and the first failing run of each
//! failure key, which is what gets shrunk ([`Collected::to_shrink`]).

use super::guided::{Guided, GuidedRun, GuidedSummary, GuidedSummaryBuilder, MutantId, RunId};
use super::record::{Failure, SeedRecord, LIMIT_KEY};
use super::summary::{HuntSummary, SummaryBuilder};
use splitbrain_scenario::Scenario;
use std::collections::BTreeMap;

/// The first failing run of a failure key: its record, and for a mutant its id and the
/// scenario it ran.
#[derive(Clone, Debug)]
pub struct Found {
    /// The run's record (for a mutant, `seed` is its root seed).
    pub record: SeedRecord,
    /// The mutant's id and schedule, when a mutant (not a fresh seed) failed first.
    pub mutant: Option<(MutantId, Scenario)>,
}

impl Found {
    /// The scenario the run ran, which shrinking starts from: the mutant's, or the
    /// seed's materialised from `hunted`.
    pub fn start(&self, hunted: &Scenario) -> Scenario {
        match &self.mutant {
            Some((_, scenario)) => scenario.clone(),
            None => hunted.materialize(self.record.seed),
        }
    }

    /// The run as messages name it: `mutant m<index>:<seed>` or `seed <seed>`.
    pub fn run_name(&self) -> String {
        match &self.mutant {
            Some((id, _)) => format!("mutant {id}"),
            None => format!("seed {}", self.record.seed),
        }
    }

    /// The mutant's id, if a mutant.
    pub fn mutant_id(&self) -> Option<MutantId> {
        self.mutant.as_ref().map(|(id, _)| *id)
    }
}

/// Collects a hunt's runs (see the module docs).
#[derive(Clone, Debug)]
pub struct Collector {
    builder: SummaryBuilder,
    first_failures: BTreeMap<String, Found>,
    guided: Option<GuidedSummaryBuilder>,
}

impl Collector {
    /// An empty collection for a hunt of the scenario named `scenario`; `mutants_per_batch`
    /// when the hunt is guided.
    pub fn new(scenario: &str, mutants_per_batch: Option<u64>) -> Self {
        Self {
            builder: SummaryBuilder::new(scenario),
            first_failures: BTreeMap::new(),
            guided: mutants_per_batch.map(GuidedSummaryBuilder::new),
        }
    }

    /// A fresh seed's record (seeds in increasing order): into the summary, and kept if it is
    /// the first failure of one of its keys.
    pub fn fresh(&mut self, record: &SeedRecord) {
        self.builder.add(record);
        for failure in &record.failures {
            self.first_failures
                .entry(failure.key.clone())
                .or_insert_with(|| Found {
                    record: record.clone(),
                    mutant: None,
                });
        }
    }

    /// A run of the guided hunt `g`, in run order: a fresh seed as in [`Collector::fresh`],
    /// or a mutant (into the guided summary, and kept if it is a key's first failure).
    pub fn guided_run(&mut self, g: &Guided<'_>, run: &GuidedRun) {
        if let Some(b) = self.guided.as_mut() {
            b.add(run);
        }
        let RunId::Mutant(id) = run.id else {
            return self.fresh(&run.record);
        };
        for failure in &run.record.failures {
            if !self.first_failures.contains_key(&failure.key) {
                let found = Found {
                    record: run.record.clone(),
                    mutant: Some((id, g.scenario_of(run))),
                };
                self.first_failures.insert(failure.key.clone(), found);
            }
        }
    }

    /// Failing runs so far (fresh seeds and mutants).
    pub fn failing(&self) -> u64 {
        let mutants = self.guided.as_ref().map_or(0, |g| g.mutants_failed());
        self.builder.failed_seeds() + mutants
    }

    /// The summaries. A failing mutant fails the hunt: the summary's verdict is the worse of
    /// the fresh seeds' and the mutants' (its seed counts and failure groups stay the fresh
    /// seeds').
    pub fn finish(self) -> Collected {
        let mut summary = self.builder.finish();
        let guided = self.guided.map(GuidedSummaryBuilder::finish);
        if let Some(g) = &guided {
            summary.verdict = summary.verdict.worse(g.verdict());
        }
        Collected {
            summary,
            guided,
            first_failures: self.first_failures,
        }
    }
}

/// What a [`Collector`] gathered.
#[derive(Clone, Debug)]
pub struct Collected {
    /// The fresh seeds' summary, with the mutants' failures in its verdict.
    pub summary: HuntSummary,
    /// What a guided hunt's mutants did.
    pub guided: Option<GuidedSummary>,
    /// The first failing run of each failure key, by key.
    pub first_failures: BTreeMap<String, Found>,
}

/// What to do about the first failure of one key.
#[derive(Clone, Debug)]
pub enum ToShrink<'a> {
    /// The run outgrew its limits: every shrinking try would run to the limit again, so the
    /// run and its replay are all there is to give (a mutant does not replay from its seed).
    Outgrown {
        /// The run that outgrew.
        found: &'a Found,
        /// What outgrew (the failure's detail).
        detail: &'a str,
    },
    /// Shrink this run's failure.
    Shrink {
        /// The failure key.
        key: &'a str,
        /// The failure to keep while shrinking.
        failure: &'a Failure,
        /// The run.
        found: &'a Found,
    },
}

impl Collected {
    /// The first failures to act on, in key order. `missing:` keys are left out: the run was
    /// safe where it was expected not to be, and there is no violation to shrink to.
    pub fn to_shrink(&self) -> Vec<ToShrink<'_>> {
        let mut todo = Vec::new();
        for (key, found) in &self.first_failures {
            if key.starts_with("missing:") {
                continue;
            }
            let failure = found
                .record
                .failures
                .iter()
                .find(|f| &f.key == key)
                .expect("kept under one of its own keys");
            todo.push(if key == LIMIT_KEY {
                ToShrink::Outgrown {
                    found,
                    detail: &failure.detail,
                }
            } else {
                ToShrink::Shrink {
                    key,
                    failure,
                    found,
                }
            });
        }
        todo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hunt::record::Coverage;
    use crate::hunt::summary::HuntVerdict;

    fn record(seed: u64, keys: &[&str]) -> SeedRecord {
        SeedRecord {
            seed,
            outcome: if keys.is_empty() { "matched" } else { "failed" }.to_string(),
            failures: keys
                .iter()
                .map(|key| Failure {
                    key: key.to_string(),
                    at_ns: None,
                    nodes: Vec::new(),
                    detail: format!("{key} at {seed}"),
                })
                .collect(),
            events: 1,
            coverage: Coverage::default(),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: Default::default(),
        }
    }

    fn scenario() -> Scenario {
        let text = r#"Scenario(duration: "20s", nodes: 3, algorithm: Raft(),
            nemesis: (mean_interval: "1s", fault_duration: ("100ms", "2s"), quiet: "5s"))"#;
        splitbrain_scenario::parse(text, "c.ron").expect("a valid scenario")
    }

    #[test]
    fn the_first_failure_of_each_key_is_kept() {
        let mut c = Collector::new("s", None);
        c.fresh(&record(1, &[]));
        c.fresh(&record(2, &["liveness"]));
        c.fresh(&record(3, &["election_safety", "liveness"]));
        assert_eq!(c.failing(), 2);
        let done = c.finish();
        let kept: Vec<(&str, u64)> = done
            .first_failures
            .iter()
            .map(|(k, f)| (k.as_str(), f.record.seed))
            .collect();
        assert_eq!(kept, [("election_safety", 3), ("liveness", 2)]);
        assert_eq!(done.summary.verdict, HuntVerdict::SafetyMismatch);
        assert!(done.guided.is_none());
    }

    #[test]
    fn a_failing_mutant_fails_the_summarys_verdict_and_is_kept_with_its_schedule() {
        let s = scenario();
        let g = Guided::new(&s, 8).unwrap();
        let mut c = Collector::new("s", Some(8));
        let fresh = GuidedRun {
            id: RunId::Seed(1),
            record: record(1, &[]),
            faults: Vec::new(),
            observed: Vec::new(),
            kept: None,
        };
        let id = MutantId { index: 0, seed: 1 };
        let mutant = GuidedRun {
            id: RunId::Mutant(id),
            record: record(1, &["election_safety"]),
            faults: Vec::new(),
            observed: Vec::new(),
            kept: None,
        };
        c.guided_run(&g, &fresh);
        c.guided_run(&g, &mutant);
        assert_eq!(c.failing(), 1);
        let done = c.finish();
        assert_eq!(done.summary.failed_seeds, 0);
        assert_eq!(done.summary.verdict, HuntVerdict::SafetyMismatch);
        assert_eq!(done.guided.as_ref().unwrap().mutants_failed, 1);
        let found = &done.first_failures["election_safety"];
        assert_eq!(found.mutant.as_ref().map(|(m, _)| *m), Some(id));
    }

    #[test]
    fn missing_keys_are_not_shrunk_and_outgrown_runs_are_only_reported() {
        let mut c = Collector::new("s", None);
        c.fresh(&record(4, &["missing:fencing_safety"]));
        c.fresh(&record(5, &[LIMIT_KEY]));
        c.fresh(&record(6, &["term_monotonic"]));
        let done = c.finish();
        let todo = done.to_shrink();
        assert_eq!(todo.len(), 2);
        assert!(matches!(
            todo[0],
            ToShrink::Outgrown {
                found: Found {
                    record: SeedRecord { seed: 5, .. },
                    mutant: None,
                },
                detail: "limit at 5",
            }
        ));
        match &todo[1] {
            ToShrink::Shrink {
                key,
                failure,
                found,
            } => {
                assert_eq!(
                    (*key, failure.key.as_str()),
                    ("term_monotonic", "term_monotonic")
                );
                assert_eq!(found.record.seed, 6);
            }
            other => panic!("{other:?}"),
        }
    }
}
