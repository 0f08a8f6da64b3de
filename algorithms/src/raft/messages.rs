//! Raft's election messages and timer kinds, as the engine counts and traces them.

use serde::{Deserialize, Serialize};

/// A Raft election message. Every message carries a term (Raft paper §5.1: terms act as a
/// logical clock; a server seeing a higher term updates its own).
///
/// `AppendEntries` is always the empty heartbeat (etcd's `MsgHeartbeat`), and the log
/// position fields let voters apply the up-to-date rule (paper §5.4.1) and let a leader pick
/// a transfer target (thesis §3.10). Entries travel in [`RaftMsg::Append`] (etcd's `MsgApp`),
/// sent only under a proposal workload (`propose_every`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RaftMsg {
    /// Thesis §9.6: "would you vote for me in `term`?", sent without changing the sender's
    /// term.
    PreVote {
        /// The proposed term: the sender's current term + 1.
        term: u64,
        /// The index of the sender's last log entry (paper §5.4.1).
        last_log_index: u64,
        /// The term of the sender's last log entry (paper §5.4.1).
        last_log_term: u64,
    },
    /// Answer to [`RaftMsg::PreVote`]. A grant carries the proposed term; a refusal carries
    /// the responder's current term (so a lagging pre-candidate catches up).
    PreVoteResp {
        /// The proposed term if granted, else the responder's current term.
        term: u64,
        /// Whether the responder would vote for the sender in the proposed term.
        granted: bool,
    },
    /// Paper §5.2: a candidate asks for a vote in `term`. `transfer` marks the election a
    /// leader asked for with [`RaftMsg::TimeoutNow`] (thesis §3.10), which voters honour
    /// even if they heard from that leader recently (thesis §4.2.3).
    RequestVote {
        /// The candidate's term, which it has already entered and voted itself in.
        term: u64,
        /// The index of the sender's last log entry (paper §5.4.1).
        last_log_index: u64,
        /// The term of the sender's last log entry (paper §5.4.1).
        last_log_term: u64,
        /// Whether a leader asked for this election with [`RaftMsg::TimeoutNow`].
        transfer: bool,
    },
    /// Answer to [`RaftMsg::RequestVote`], with the voter's current term.
    RequestVoteResp {
        /// The voter's current term, after it has seen the request's.
        term: u64,
        /// Whether the voter gave the candidate its vote in `term`.
        granted: bool,
    },
    /// Paper §5.2: the leader's heartbeat (an AppendEntries with no entries).
    AppendEntries {
        /// The leader's term.
        term: u64,
        /// The leader's commit index, capped at what it knows matches on the receiver
        /// (etcd's `MsgHeartbeat` carries `min(pr.Match, raftLog.committed)`). Always 0 unless
        /// the node is embedded with commitment ([`RaftNode::embedded`](super::RaftNode::embedded)).
        commit: u64,
    },
    /// Answer to [`RaftMsg::AppendEntries`]. `success` is false when the heartbeat came from
    /// a stale term. The follower's log position lets the leader choose a transfer target.
    AppendEntriesResp {
        /// The follower's current term: above the leader's when the heartbeat was stale.
        term: u64,
        /// Whether the follower accepted the sender as leader of its term.
        success: bool,
        /// The index of the follower's last log entry.
        last_log_index: u64,
        /// The term of the follower's last log entry.
        last_log_term: u64,
    },
    /// Paper §5.3: the leader sends `entries` entries of term `entry_term` that follow the
    /// entry at `prev_log_index` of term `prev_log_term` (an AppendEntries with entries;
    /// etcd's `MsgApp`).
    Append {
        /// The leader's term.
        term: u64,
        /// The index of the entry just before the new ones.
        prev_log_index: u64,
        /// The term of that entry: the consistency check.
        prev_log_term: u64,
        /// The term of every entry sent (one run of the leader's log).
        entry_term: u64,
        /// How many entries.
        entries: u64,
        /// The leader's commit index (paper figure 2, `leaderCommit`); 0 unless embedded.
        commit: u64,
    },
    /// Answer to [`RaftMsg::Append`], after the follower's log is on disk.
    AppendResp {
        /// The follower's current term.
        term: u64,
        /// Whether the follower's log matched at the request's previous entry.
        success: bool,
        /// On success the index of the last entry now known to match the leader's; on a
        /// refusal the request's `prev_log_index`.
        index: u64,
        /// The index of the follower's last entry (where the leader may try next).
        last_log_index: u64,
    },
    /// Thesis §3.10: the leader tells the transfer target to start an election at once.
    TimeoutNow {
        /// The leader's term; the target campaigns in the next one.
        term: u64,
    },
}

splitbrain_sim::message_kinds! {
    impl Message for RaftMsg {
        kinds {
            PreVote => "PreVote",
            PreVoteResp => "PreVoteResp",
            RequestVote => "RequestVote",
            RequestVoteResp => "RequestVoteResp",
            AppendEntries => "AppendEntries",
            AppendEntriesResp => "AppendEntriesResp",
            Append => "Append",
            AppendResp => "AppendResp",
            TimeoutNow => "TimeoutNow",
        }

        fn term(&self) -> u64 {
            match *self {
                RaftMsg::PreVote { term, .. }
                | RaftMsg::PreVoteResp { term, .. }
                | RaftMsg::RequestVote { term, .. }
                | RaftMsg::RequestVoteResp { term, .. }
                | RaftMsg::AppendEntries { term, .. }
                | RaftMsg::AppendEntriesResp { term, .. }
                | RaftMsg::Append { term, .. }
                | RaftMsg::AppendResp { term, .. }
                | RaftMsg::TimeoutNow { term } => term,
            }
        }

        /// No Raft message carries a node id (the sender is the delivery's): every renaming
        /// leaves it as it is.
        fn renamed(&self, _names: &[splitbrain_sim::NodeId]) -> Option<Self> {
            Some(self.clone())
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// Raft's timer slots. Each is armed in local time, so a fast clock fires early.
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
    pub enum RaftTimer {
        /// Paper §5.2: a follower or candidate that hears nothing for a randomized timeout
        /// starts an election.
        Election => "election",
        /// The leader's heartbeat interval; a (pre-)candidate reuses it to retry unanswered
        /// vote requests (paper §5.1: servers retry RPCs that get no timely response).
        Heartbeat => "heartbeat",
        /// Thesis §6.2: the leader checks that it heard from a majority in the last round.
        CheckQuorum => "check_quorum",
        /// Thesis §3.10: a leadership transfer that has not completed by now is aborted.
        Transfer => "transfer",
        /// The proposal workload: the leader appends a client's entry (`propose_every`).
        Propose => "propose",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::Message;

    #[test]
    fn every_message_carries_its_term() {
        let samples = [
            RaftMsg::PreVote {
                term: 1,
                last_log_index: 0,
                last_log_term: 0,
            },
            RaftMsg::PreVoteResp {
                term: 2,
                granted: true,
            },
            RaftMsg::RequestVote {
                term: 3,
                last_log_index: 0,
                last_log_term: 0,
                transfer: false,
            },
            RaftMsg::RequestVoteResp {
                term: 4,
                granted: false,
            },
            RaftMsg::AppendEntries { term: 5, commit: 0 },
            RaftMsg::AppendEntriesResp {
                term: 6,
                success: true,
                last_log_index: 0,
                last_log_term: 0,
            },
            RaftMsg::TimeoutNow { term: 7 },
            RaftMsg::Append {
                term: 8,
                prev_log_index: 0,
                prev_log_term: 0,
                entry_term: 8,
                entries: 1,
                commit: 0,
            },
            RaftMsg::AppendResp {
                term: 9,
                success: true,
                index: 1,
                last_log_index: 1,
            },
        ];
        for (expected, msg) in samples.iter().enumerate() {
            assert_eq!(msg.term(), expected as u64 + 1, "{msg:?}");
        }
    }
}
