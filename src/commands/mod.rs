//! One module per subcommand. Each returns its exit code.

pub mod charting;
pub mod check;
pub mod compare;
pub mod hunt;
pub mod limits;
pub mod list;
pub mod merge;
pub mod plot;
pub mod run;
pub mod sweep;
