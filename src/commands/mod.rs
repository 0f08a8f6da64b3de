//! One module per subcommand. Each returns its exit code.

pub mod check;
pub mod list;
pub mod run;
