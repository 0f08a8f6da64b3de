//! Leader-election algorithms for splitbrain, one module each, as pure state machines on the
//! engine's [`splitbrain_sim::Process`] API. The engine knows none of them.

pub mod raft;

use serde::Serialize;

/// A validated algorithm choice with its settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AlgorithmConfig {
    Raft(raft::RaftConfig),
}
