//! Exit codes, stable from the first release (DESIGN.md, "CLI and exit codes").

use std::process::ExitCode;

/// The outcome matched the scenario's `expect`.
pub const MATCHED: u8 = 0;
/// A safety outcome differed from `expect` (or a determinism check failed).
pub const SAFETY_MISMATCH: u8 = 1;
/// Bad input or usage.
pub const BAD_INPUT: u8 = 2;
/// Liveness failed (and safety matched `expect`).
pub const LIVENESS_FAILED: u8 = 3;

/// The process exit code for `code`.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}
