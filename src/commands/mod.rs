//! One module per subcommand. Each returns its exit code.

pub mod check;
pub mod hunt;
pub mod list;
pub mod merge;
pub mod run;
