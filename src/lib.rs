//! The splitbrain command line: arguments, printing, progress bars, signals, checks of output
//! paths, and exit codes. The work (the hunt's JSON Lines and JUnit files and `merge`'s
//! checks included) is in
//! [`splitbrain_lab`] (hunt, compare, sweep) and [`splitbrain_scenario`] (scenario files and
//! the verdict); both are re-exported under their old paths.

pub mod args;
pub mod cli;
pub mod commands;
pub mod exit;
pub mod output;
pub mod print;
pub mod report_dir;
pub mod signals;
pub mod summary;

/// Scenario loading and the verdict, re-exported under their old paths.
pub use splitbrain_scenario as scenario;
pub use splitbrain_scenario::verdict;

/// The hunt: seeds, records, summary and the shrinker.
pub use splitbrain_lab::hunt;
