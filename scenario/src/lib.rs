//! Scenario files: RON in, a validated [`Scenario`] out; and the [`verdict`] on a run of one.
//!
//! The pipeline: RON text -> raw serde structs that mirror the file and refuse unknown fields
//! (`raw`) -> validation and lowering to engine terms (`validate`) -> [`Scenario`].
//! Every error is a [`ScenarioError`] with the file, a line and column when one is known, a
//! lowercase message and an optional hint. Syntax and type errors take their position from
//! ron; validation errors name the offending value by path and `locate` finds it in the
//! text. No input makes this module panic.
//!
//! The format is documented in `docs/scenario-format.md`.
//!
//! ```
//! use splitbrain_scenario::{parse, verdict};
//!
//! let text = r#"Scenario(
//!     duration: "20s",
//!     nodes: 3,
//!     algorithm: Raft(),
//!     faults: [(at: "5s", do: Crash(Leader), heal_after: "2s")],
//! )"#;
//! let scenario = parse(text, "crash.ron").expect("a valid scenario");
//! assert_eq!(scenario.name, "crash");
//! let run = scenario.materialize(7);
//! let report = splitbrain_algorithms::run(&run.algorithm, run.sim.clone(), None)
//!     .expect("within limits");
//! assert_eq!(verdict::judge(&run.expect, &report), verdict::Outcome::Matched);
//!
//! let error = parse("Scenario(nodes: 0, algorithm: Raft())", "bad.ron").unwrap_err();
//! assert_eq!(error.location, Some((1, 17)));
//! assert_eq!(error.message(), "nodes must be between 1 and 10000, not 0");
//! ```

#![warn(missing_docs)]

mod error;
mod file;
mod locate;
mod parse;
mod raw;
mod scenario;
mod text;
mod validate;
mod write;

pub mod verdict;

#[cfg(test)]
mod tests;

pub use error::suggest;
pub use error::{
    ErrorKind, NonRegularFile, ScenarioError, MAX_BROADCAST_NODES, MAX_DRIFT_PPM, MAX_NODES,
    MIN_DRIFT_PPM,
};
pub use file::MAX_SCENARIO_BYTES;
pub(crate) use parse::EXTENSIONS;
pub use parse::{load, parse};
pub use scenario::{
    default_transport, max_members, programs_of, Design, Expect, Objective, Refused, Scenario,
    EVERY_SEED_PPM,
};
pub use splitbrain_sim::duration::{
    format_duration_ron, format_signed_duration_ron, parse_duration, parse_signed_duration,
    DurationError,
};
pub use text::CharClass;
pub use write::{algorithm_line, fault_lines, to_ron, transport_line};
