//! splitbrain's experiments: the work behind `hunt`, `compare` and `sweep`, with typed
//! results and errors and no printing, exit codes, signals or progress bars (the CLI owns
//! those; it is told of progress through [`group::Progress`] and stops a hunt through the
//! closures it passes).
//!
//! - [`runner`]: the one seed runner every command's runs go through ([`runner::run_seed`]):
//!   watched by the runtime guard, a panic caught as that run's failure.
//! - [`hunt`]: many seeds of one scenario in deterministic batches ([`hunt::hunt`]), their
//!   records and summary, and the shrinker ([`hunt::shrink`]).
//! - [`compare`] and [`sweep`]: designs or parameter values over the same seeds, summarised
//!   ([`group`]) into a report; both strike the explicit faults at a phase of the heartbeat
//!   drawn per seed ([`phase`]).
//! - [`plot`]: the pictures of one run; [`run_summary`]: what a run's summary judges (the
//!   recovery-time objective per failover, the invariants listed).
//!
//! `compare`, `sweep`, `plot` and `group` draw charts and come with the `charts` feature (off
//! by default, on in the `splitbrain` command): a crate that only hunts, like
//! `splitbrain-harness`, builds no plotting library.
//!
//! Hunting 20 seeds of a shipped scenario:
//!
//! ```
//! use splitbrain_lab::hunt::{self, seeds::SeedSpan, summary::SummaryBuilder, Ended};
//! use std::ops::ControlFlow;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/raft-nemesis.ron");
//! let scenario = splitbrain_scenario::load(path.as_ref()).expect("a shipped scenario");
//! let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let mut summary = SummaryBuilder::new(&scenario.name);
//! let seeds = SeedSpan { first: 1, last: 20 };
//! let ended = hunt::hunt(&scenario, seeds, true, &pool, &|| false, &|| false, |records| {
//!     records.iter().for_each(|r| summary.add(r));
//!     ControlFlow::<()>::Continue(())
//! });
//! assert_eq!(ended, Ok(Ended::Complete));
//! assert_eq!(summary.finish().seeds_run, 20);
//! ```

#![warn(missing_docs)]

#[cfg(feature = "charts")]
pub mod compare;
#[cfg(feature = "charts")]
pub mod group;
pub mod hunt;
#[cfg(feature = "charts")]
pub mod intervals;
#[cfg(feature = "charts")]
pub mod measures;
pub mod panics;
pub mod phase;
#[cfg(feature = "charts")]
pub mod plot;
pub mod run_summary;
pub mod runner;
pub mod shell;
#[cfg(feature = "charts")]
pub mod sweep;

/// Fencing at the resource for the runs of `compare` and `sweep`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fencing {
    /// As the scenario says (`resource.fencing`).
    Scenario,
    /// Every run fences.
    On,
    /// No run fences.
    Off,
    /// Each design runs twice, as `NAME-fenced` and `NAME-unfenced`.
    Both,
}
