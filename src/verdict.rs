//! Judging a run against its scenario's `expect`, and the exit code that follows.

use crate::exit;
use crate::scenario::Expect;
use serde::Serialize;
use splitbrain_sim::{Invariant, RunReport};

/// How a run's outcome compares with what the scenario expected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Safety as expected, and liveness did not fail.
    Matched,
    /// Safety differed: invariants broken that were not expected, or expected ones that held.
    SafetyMismatch {
        unexpected: Vec<Invariant>,
        missing: Vec<Invariant>,
    },
    /// Safety as expected, but no leader appeared in time after the last fault.
    LivenessFailed,
}

impl Outcome {
    /// The exit code of this outcome.
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Matched => exit::MATCHED,
            Outcome::SafetyMismatch { .. } => exit::SAFETY_MISMATCH,
            Outcome::LivenessFailed => exit::LIVENESS_FAILED,
        }
    }
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
