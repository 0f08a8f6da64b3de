//! Exit codes, stable from the first release (DESIGN.md, "CLI and exit codes").

use std::process::ExitCode;

use splitbrain_scenario::verdict::Outcome;

/// The outcome matched the scenario's `expect`.
pub const MATCHED: u8 = 0;
/// A safety outcome differed from `expect` (or a determinism check failed).
pub const SAFETY_MISMATCH: u8 = 1;
/// Liveness failed (and safety matched `expect`), or a failover missed the objective.
pub const LIVENESS_FAILED: u8 = 3;

/// The exit code of a run's outcome.
pub fn of_outcome(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::Matched => MATCHED,
        Outcome::SafetyMismatch { .. } => SAFETY_MISMATCH,
        Outcome::LivenessFailed | Outcome::ObjectiveMissed { .. } => LIVENESS_FAILED,
    }
}

/// Bad input or usage.
pub const BAD_INPUT: u8 = 2;

/// The process exit code for `code`.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}
