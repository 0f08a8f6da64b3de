pub mod config;
pub use config::{RaftConfig, RaftVariant};
