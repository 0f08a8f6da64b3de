//! The integration tests of the `splitbrain` crate, in one test binary (one link instead of one
//! per file). Each module was a file of `tests/` of its own; they now share one process, so a
//! test must not change process-wide state (environment, current directory): commands under
//! test get theirs through `Command`. Run one module with `cargo test --test cli golden::`.

mod common;

mod cli;
mod clocks;
mod compare_sweep;
mod determinism;
mod disks;
mod etcd_cluster;
mod external;
mod external_guards;
mod extreme_inputs;
mod failover_metrics;
mod fault_ranges;
mod golden;
mod golden_classic;
mod guided;
mod hunt;
mod hunt_trust;
mod known_bugs;
mod leases;
mod liveness_clock_jumps;
mod memory_limits;
mod multi_raft;
mod objective;
mod plot;
mod published_results;
mod raft_properties;
mod recipes;
mod review;
mod stepping;
mod swarm;
mod systematic;
mod time_to_bug;
mod triggers;
mod zookeeper;
