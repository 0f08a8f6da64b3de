//! The splitbrain CLI library: scenario loading and the commands behind the binary.

pub mod cli;
pub mod commands;
pub mod exit;
pub mod hunt;
pub mod output;
pub mod summary;

/// Scenario loading and the verdict, re-exported under their old paths.
pub use splitbrain_scenario as scenario;
pub use splitbrain_scenario::verdict;
