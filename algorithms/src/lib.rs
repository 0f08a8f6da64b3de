//! Leader-election algorithms for splitbrain, one module each, on the engine's
//! [`splitbrain_sim::Process`] API: the built-in state machines (Raft, Bully, Ring, and the
//! clients of the modeled etcd, ZooKeeper and Kubernetes API server, with those services'
//! own models), and [`external`], which hosts election members written in any language as
//! OS processes speaking the step protocol (docs/protocol.md). The engine knows none of
//! them; each implements [`Algorithm`] in its own module and is registered by one line in
//! `built_in.rs`: nothing else in the workspace names an algorithm. A user's own algorithm
//! joins them at run time through [`register`] (the open [`registry`]), and then goes
//! everywhere they go. [`run()`] runs one; [`budget`] estimates what a run will cost.
//!
//! `raft_rs` (tikv's raft-rs driven as an algorithm, `algorithm: RaftRs(...)`) comes with the
//! `raft-rs` feature, off by default and on in the `splitbrain` command: it brings raft and
//! protobuf, most of a clean build, which a crate hunting its own algorithm does not need.

#![warn(missing_docs)]

pub mod algorithm;
pub mod budget;
mod built_in;
pub mod bully;
pub mod etcd;
pub mod external;
pub mod hosted;
mod json_form;
pub mod k8s_lease;
pub mod multi_raft;
pub mod raft;
#[cfg(feature = "raft-rs")]
pub mod raft_rs;
pub mod registry;
pub mod ring;
mod rules;
pub mod run;
mod seat;
pub mod simple;
#[cfg(test)]
mod testing;
mod text;
pub mod transcript;
pub mod zookeeper;

pub use algorithm::{
    Algorithm, Cluster, Knob, KnobShape, KnobValue, Problem, SettingError, MAX_TIMING_NS,
};
pub use budget::{
    events_per_act, expected_events, expected_events_with, fastest_drift_ppm, retransmissions,
};
pub use built_in::DEFAULT_COMPARISON;
pub use external::end_idle_processes;
pub use registry::{
    algorithms, register, scenario_names, AlgorithmConfig, AlgorithmEntry, AlgorithmError,
    AlgorithmSettings, RegistryError,
};
pub use rules::CommonRule;
pub use run::{run, run_with, Checkpoints, RunOptions, Step};
