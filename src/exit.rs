//! Exit codes, stable from the first release (DESIGN.md, "CLI and exit codes").

use std::process::ExitCode;

pub use splitbrain_scenario::verdict::codes::{LIVENESS_FAILED, MATCHED, SAFETY_MISMATCH};

/// Bad input or usage.
pub const BAD_INPUT: u8 = 2;

/// The process exit code for `code`.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}
