//! Raft election settings, validated by the scenario loader.

use serde::{Deserialize, Serialize};

/// Which Raft to run: the correct one, or a deliberately broken variant that the checker
/// must catch.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "raft variant"))]
pub enum RaftVariant {
    /// Raft as the paper specifies it: `current_term` and `voted_for` survive a restart.
    #[default]
    Correct,
    /// Skips the fsync of a granted vote: the grant leaves at once and the vote lives in
    /// memory only, so a node that crashes and restarts in the same term can vote twice in it
    /// (the bug of a vote not persisted before it is granted).
    ForgetsVoteOnRestart,
    /// Skips every fsync: `current_term` and `voted_for` live in memory only, so a restarted
    /// node starts again from term 0 (its term goes backwards, and it can vote again in old
    /// terms).
    ForgetsTermOnRestart,
}

/// When a node that is not the leader restarts its election timer on stepping down to a
/// follower of a higher term. Whatever the rule, granting a vote and a heartbeat from the
/// current leader restart it, and a leader that steps down arms one (it had none).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "raft timer_reset"))]
pub enum RaftTimerReset {
    /// Raft paper figure 2 and LogCabin (`RaftConsensus::stepDown` re-arms the timer only
    /// when none is armed, that is on a leader): a higher term alone, as in a vote this node
    /// refuses, leaves the deadline where it was.
    #[default]
    OnGrantOrLeader,
    /// etcd's raft and raft-rs (`becomeFollower` calls `reset`, which draws a fresh
    /// randomized timeout): every step-down to a follower restarts the timer, a refused vote
    /// of a higher term included.
    OnAnyStepDown,
}

impl RaftTimerReset {
    /// Every rule, as a scenario names it.
    pub const NAMES: &'static [&'static str] = &["OnGrantOrLeader", "OnAnyStepDown"];

    /// The rule a scenario names `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "OnGrantOrLeader" => Some(Self::OnGrantOrLeader),
            "OnAnyStepDown" => Some(Self::OnAnyStepDown),
            _ => None,
        }
    }
}

/// When a node draws a new randomized election timeout. Whatever the rule, the countdown
/// restarts on the same events (`RaftTimerReset`); this decides whether its length is drawn
/// again each time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "raft timeout_draw"))]
pub enum RaftTimeoutDraw {
    /// Raft paper §5.2 ("election timeouts are chosen randomly" each time the timer is
    /// reset) and LogCabin (`RaftConsensus::setElectionTimer` draws
    /// `randomRange(ELECTION_TIMEOUT, 2 * ELECTION_TIMEOUT)` on every call).
    #[default]
    EveryRestart,
    /// etcd-io/raft: `resetRandomizedElectionTimeout` is called only from `reset`, that is
    /// on `becomeFollower`, `becomeCandidate` and `becomeLeader` (not `becomePreCandidate`);
    /// a heartbeat, an append or a granted vote sets `electionElapsed = 0` and keeps the
    /// length. A follower keeps one timeout for as long as it follows the same leader.
    OnRoleChange,
}

impl RaftTimeoutDraw {
    /// Every rule, as a scenario names it.
    pub const NAMES: &'static [&'static str] = &["EveryRestart", "OnRoleChange"];

    /// The rule a scenario names `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "EveryRestart" => Some(Self::EveryRestart),
            "OnRoleChange" => Some(Self::OnRoleChange),
            _ => None,
        }
    }
}

/// Raft leader-election settings (Raft paper sections 5.2 and 5.4.1; thesis 3.10, 9.6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RaftConfig {
    /// Election timeouts are drawn uniformly from `[min, max]` of local time: this is `min`.
    pub election_timeout_min_ns: u64,
    /// The upper end of the election timeout range, in local time.
    pub election_timeout_max_ns: u64,
    /// The leader's heartbeat (empty AppendEntries) interval, in local time.
    pub heartbeat_ns: u64,
    /// Thesis 9.6: probe with PreVote before incrementing the term.
    pub pre_vote: bool,
    /// The leader steps down when it has not heard from a majority for an election timeout,
    /// and followers that heard from a leader recently refuse votes.
    pub check_quorum: bool,
    /// The initial log length of each member (all entries of term 0); empty means all zero.
    /// With different lengths, the up-to-date-log rule decides who can win.
    pub log_lengths: Vec<u64>,
    /// The correct Raft, or a variant broken on purpose.
    pub variant: RaftVariant,
    /// Whether a step-down to a higher term restarts the election timer.
    pub timer_reset: RaftTimerReset,
    /// A client proposal workload: the leader appends one entry every this long, of local
    /// time, and replicates it (paper §5.3); followers write what they append to disk before
    /// answering. `None`: no workload, logs never change (elections only).
    pub propose_every_ns: Option<u64>,
    /// Whether every restart of the election timer draws a new length.
    pub timeout_draw: RaftTimeoutDraw,
}

impl Default for RaftConfig {
    fn default() -> Self {
        Self {
            election_timeout_min_ns: 150_000_000,
            election_timeout_max_ns: 300_000_000,
            heartbeat_ns: 50_000_000,
            pre_vote: false,
            check_quorum: false,
            log_lengths: Vec::new(),
            variant: RaftVariant::Correct,
            timer_reset: RaftTimerReset::OnGrantOrLeader,
            propose_every_ns: None,
            timeout_draw: RaftTimeoutDraw::EveryRestart,
        }
    }
}
