//! One module per subcommand, each owning its arguments. Each returns its exit code. No
//! command imports another: what they share is in [`crate::args`], [`crate::print`] and
//! [`crate::report_dir`].

pub mod check;
pub mod compare;
pub mod hunt;
pub mod list;
pub mod merge;
pub mod run;
pub mod step;
pub mod sweep;
