//! Election members in any language: each member is an OS process that speaks the step
//! protocol (`docs/protocol.md`), one JSON object per line on its stdin and stdout. The
//! simulator owns time, randomness and the network, so a run of such nodes replays from its
//! seed, and a hunt finds, shrinks and replays their violations like the built-in
//! algorithms'.
//!
//! A scenario names it `External(command: ["python3", "my_node.py"])`. Processes are
//! started once per member and thread, and reused across the runs of a hunt (`init` resets
//! a node); a node that exits, hangs past its deadline or writes a line the protocol does
//! not allow ends the run with an error naming the node, the step and the line.

mod checks;
mod client;
mod config;
mod host;
mod names;
mod node;
mod os;
mod pipe;
mod process;
mod settings;
mod stderr;
mod wire;

pub use checks::Check;
pub use client::{
    ExternalClient, ExternalClientConfig, ExternalClientSettings, ServiceConfig, ServiceSettings,
};
pub use config::{ExternalConfig, Quorum, DEFAULT_DEADLINE_NS, DEFAULT_HEARTBEAT_NS};
pub use node::{DurableText, ExternalNode, ExternalTimer};
pub use pipe::{end_idle_processes, PROTOCOL_VERSION};
pub use process::{ExternalProcess, NodeHost, ServiceHost};
pub use settings::{External, ExternalError, ExternalSettings, Unused};
pub use stderr::Stderr;
pub use wire::{NoService, NodeMsg, Wire};
