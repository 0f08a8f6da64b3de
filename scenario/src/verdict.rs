//! Judging a run against its scenario's `expect` (the CLI turns the outcome into an exit code).

use crate::{Expect, Objective, Scenario};
use serde::Serialize;
use splitbrain_sim::time::format_duration;
use splitbrain_sim::{FailoverOutcome, Invariant, RunReport};

/// How a run's outcome compares with what the scenario expected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Safety as expected, and liveness did not fail.
    Matched,
    /// Safety differed: invariants broken that were not expected, or expected ones that held.
    SafetyMismatch {
        /// Invariants broken that `expect` did not name.
        unexpected: Vec<Invariant>,
        /// Invariants `expect` named that held.
        missing: Vec<Invariant>,
    },
    /// Safety as expected, but no leader appeared in time after the last fault.
    LivenessFailed,
    /// Safety and liveness as expected, but a failover missed the recovery-time objective.
    ObjectiveMissed {
        /// The objective's `failover_p99`.
        budget_ns: u64,
        /// The failovers over the budget, in order.
        missed: Vec<MissedFailover>,
    },
}

/// A failover that did not recover within the objective.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissedFailover {
    /// When the fault that opened the failover struck.
    pub at_ns: u64,
    /// What opened it, in words.
    pub cause: String,
    /// `None` when it never recovered before the run ended.
    pub recovery_ns: Option<u64>,
}

impl MissedFailover {
    /// In words, against the objective's `budget_ns`: "the failover at 1.2s (crash of
    /// leader n3) recovered in 209.6ms, over the 50ms objective".
    pub fn describe(&self, budget_ns: u64) -> String {
        let took = self
            .recovery_ns
            .map_or("never".to_string(), format_duration);
        format!(
            "the failover at {} ({}) recovered in {took}, over the {} objective",
            format_duration(self.at_ns),
            self.cause,
            format_duration(budget_ns)
        )
    }
}

/// Judges a run of `scenario` as `run` and `hunt` both do: its `expect`, then its
/// recovery-time `objective`.
pub fn judge_run(scenario: &Scenario, report: &RunReport) -> Outcome {
    judge_objective(
        judge(&scenario.expect, report),
        scenario.objective.as_ref(),
        report,
    )
}

/// Compares `report` with `expect`.
pub fn judge(expect: &Expect, report: &RunReport) -> Outcome {
    let broken = report.violated_safety();
    let expected: Vec<Invariant> = match expect {
        Expect::Safe => Vec::new(),
        Expect::Violates(set) => set.iter().copied().collect(),
    };
    let unexpected: Vec<Invariant> = broken
        .iter()
        .copied()
        .filter(|i| !expected.contains(i))
        .collect();
    let missing: Vec<Invariant> = expected
        .iter()
        .copied()
        .filter(|i| !broken.contains(i))
        .collect();
    if !unexpected.is_empty() || !missing.is_empty() {
        return Outcome::SafetyMismatch {
            unexpected,
            missing,
        };
    }
    if report.liveness_failed() {
        return Outcome::LivenessFailed;
    }
    Outcome::Matched
}

/// Adds the recovery-time objective to a judgement: a matched outcome becomes
/// `ObjectiveMissed` when a failover that a new leader resolved, or none did, took longer
/// than the budget. Failovers ridden through or superseded are not judged.
pub fn judge_objective(
    outcome: Outcome,
    objective: Option<&Objective>,
    report: &RunReport,
) -> Outcome {
    let Some(budget_ns) = objective.and_then(|o| o.failover_p99_ns) else {
        return outcome;
    };
    if outcome != Outcome::Matched {
        return outcome;
    }
    let missed: Vec<MissedFailover> = report
        .failovers
        .iter()
        .filter(|f| {
            matches!(
                f.outcome,
                FailoverOutcome::NewLeader | FailoverOutcome::Unresolved
            )
        })
        .filter(|f| f.recovery_ns.is_none_or(|r| r > budget_ns))
        .map(|f| MissedFailover {
            at_ns: f.at_ns,
            cause: f.cause.clone(),
            recovery_ns: f.recovery_ns,
        })
        .collect();
    if missed.is_empty() {
        Outcome::Matched
    } else {
        Outcome::ObjectiveMissed { budget_ns, missed }
    }
}

/// The expectation in words: `Safe` or `Violates([fencing_safety])`.
pub fn describe_expect(expect: &Expect) -> String {
    match expect {
        Expect::Safe => "Safe".to_string(),
        Expect::Violates(set) => {
            let names: Vec<&str> = set.iter().map(|i| i.name()).collect();
            format!("Violates([{}])", names.join(", "))
        }
    }
}
