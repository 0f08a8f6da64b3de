//! Hunt your own leader-election code from your own tests.
//!
//! In a `#[test]`, a few lines hunt a scenario over many seeds on every core, shrink the first
//! failure to a minimal reproducer, and panic with the seed, the invariant, the reproducer's
//! path and the exact command that replays it; the results are also returned as values.
//!
//! - `SPLITBRAIN_SEEDS=N` sets how many seeds every hunt runs (a nightly CI job raises it),
//!   over the count the test gives ([`Hunt::seeds`]), over [`DEFAULT_SEEDS`];
//! - `SPLITBRAIN_SEED=S` replays seed `S` alone (what the printed replay line sets);
//! - `SPLITBRAIN_OUT=DIR` is where reproducers go (default `target/splitbrain/`).
//!
//! A user's algorithm is registered first ([`register`]), and then a scenario file names it
//! like a built-in one:
//!
//! ```
//! use splitbrain_harness::Hunt;
//!
//! let result = Hunt::text(
//!     "Scenario(algorithm: Raft(), nodes: 3, duration: \"20s\",
//!               nemesis: (kinds: [Crash, Isolate], mean_interval: \"1s\", quiet: \"5s\"))",
//! )
//! .unwrap()
//! .seeds(20)
//! .run();
//! assert_eq!(result.seeds_run, 20);
//! result.assert_safe();
//! ```
//!
//! A hunt that must find a bug (a deliberately broken variant, a regression test):
//!
//! ```
//! use splitbrain_harness::Hunt;
//!
//! let result = Hunt::text(
//!     "Scenario(name: \"forgets-term\", nodes: 3, duration: \"20s\",
//!               algorithm: Raft(variant: ForgetsTermOnRestart),
//!               nemesis: (kinds: [Crash], mean_interval: \"500ms\", quiet: \"5s\"))",
//! )
//! .unwrap()
//! .seeds(200)
//! .out_dir(std::env::temp_dir().join("splitbrain-harness-doc"))
//! .run();
//! let found = result.assert_found("election_safety");
//! assert!(found.reproducer.exists());
//! assert!(found.replay.contains(&format!("SPLITBRAIN_SEED={}", found.seed)));
//! ```

//! A systematic search instead of seeds ([`Hunt::systematic`]): every fault schedule of the
//! scenario's own seed up to a number of steps, on a time grid, each state explored once;
//! the result says how far it is complete:
//!
//! ```
//! use splitbrain_harness::{Bound, Hunt};
//!
//! let result = Hunt::text(
//!     "Scenario(algorithm: Raft(), nodes: 3, duration: \"5s\",
//!               nemesis: (kinds: [Crash], mean_interval: \"1s\", start: \"1s\", quiet: \"2s\"))",
//! )
//! .unwrap()
//! .systematic_within(Bound { steps: 1, grid_ns: 50_000_000, points: 3, lengths_ns: vec![100_000_000] })
//! .run();
//! result.assert_safe();
//! let coverage = result.coverage.expect("a systematic search's coverage");
//! assert_eq!(coverage.complete_to, Some(1));
//! assert_eq!(coverage.schedules, 1 + 3 * 3); // the fault-free run; each node at each point
//! ```

#![warn(missing_docs)]

mod hunt;
#[cfg(test)]
mod misbehaving;
pub mod scripted;

pub use hunt::{Found, HarnessError, Hunt, HuntResult, DEFAULT_SEEDS};
pub use scripted::Scripted;
pub use splitbrain_algorithms::{register, Algorithm, AlgorithmConfig, RegistryError};
pub use splitbrain_lab::hunt::reproducer::SHRINK_BUDGET_RUNS;
pub use splitbrain_lab::hunt::systematic::{Bound, Coverage};
pub use splitbrain_sim::{Breach, Observation, Properties, Value};
