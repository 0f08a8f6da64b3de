//! The splitbrain CLI library: scenario loading and the commands behind the binary.

pub mod cli;
pub mod commands;
pub mod exit;
pub mod hunt;
pub mod output;
pub mod scenario;
pub mod summary;
pub mod verdict;
