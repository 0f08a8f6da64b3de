//! What stores send each other, as the engine counts and traces it: coalesced heartbeats
//! (one message per store pair and heartbeat tick, whatever the number of ranges), and
//! per-range Raft messages batched per destination store.

use serde::Serialize;
use splitbrain_sim::LocalNanos;

/// A range lease: who holds it, its sequence number (raised by every change of holder,
/// kept by an extension), and its wall-clock expiration.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lease {
    /// The leaseholder store, as a node index; `u32::MAX` for the empty lease a range starts
    /// with.
    pub holder: u32,
    /// `roachpb.Lease.Sequence`: raised when the holder changes.
    pub seq: u64,
    /// The wall-clock reading after which the lease is no longer valid.
    pub expiration_wall_ns: LocalNanos,
}

impl Lease {
    /// The lease a range starts with: nobody holds it, and it expired long ago.
    pub const NONE: Lease = Lease {
        holder: u32::MAX,
        seq: 0,
        expiration_wall_ns: LocalNanos::MIN,
    };
}

/// The last entry of a range's Raft log as this model keeps it: only lease records are
/// logged, so the log is the latest one with its position (the vote's up-to-date rule and
/// the leader's completeness work on it, Raft paper 5.4.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The term of the leader that appended it.
    pub term: u64,
    /// Its index in the range's log.
    pub index: u64,
    /// The lease it records.
    pub lease: Lease,
}

impl Entry {
    /// The empty log.
    pub const EMPTY: Entry = Entry {
        term: 0,
        index: 0,
        lease: Lease::NONE,
    };

    /// Raft paper 5.4.1: the later of two logs has the higher last term, then the higher
    /// last index.
    pub fn position(&self) -> (u64, u64) {
        (self.term, self.index)
    }
}

/// One range's heartbeat in a coalesced heartbeat message.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Beat {
    /// The range.
    pub range: u64,
    /// The sender's term in that range.
    pub term: u64,
}

/// One range's answer in a coalesced heartbeat response.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BeatResp {
    /// The range.
    pub range: u64,
    /// The responder's term in that range: above the leader's when the beat was stale.
    pub term: u64,
    /// With leader leases: the store-liveness epoch in which the responder supports the
    /// leader's store, if it does: it fortifies the leader (`MsgFortifyLeaderResp`).
    pub fortified: Option<u64>,
}

/// A Raft message of one range (etcd raft's `MsgVote`, `MsgVoteResp`, `MsgApp`,
/// `MsgAppResp`, carrying only what elections and leases need).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum RangeMsg {
    /// A candidate asks for a vote in `term`.
    Vote {
        /// The range.
        range: u64,
        /// The candidate's term.
        term: u64,
        /// The position of the candidate's last entry.
        last: (u64, u64),
    },
    /// The answer to a vote request.
    VoteResp {
        /// The range.
        range: u64,
        /// The voter's term.
        term: u64,
        /// Whether the vote was given.
        granted: bool,
    },
    /// The leader appends `entry` (a lease record).
    Append {
        /// The range.
        range: u64,
        /// The leader's term.
        term: u64,
        /// The entry.
        entry: Entry,
    },
    /// The answer to an append: `index` is the follower's last index when it accepted.
    AppendResp {
        /// The range.
        range: u64,
        /// The follower's term.
        term: u64,
        /// Whether the follower took the entry.
        accepted: bool,
        /// The index of the entry it took.
        index: u64,
    },
}

impl RangeMsg {
    /// The range the message is about.
    pub fn range(&self) -> u64 {
        match *self {
            RangeMsg::Vote { range, .. }
            | RangeMsg::VoteResp { range, .. }
            | RangeMsg::Append { range, .. }
            | RangeMsg::AppendResp { range, .. } => range,
        }
    }
}

/// A message between two stores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum StoreMsg {
    /// CockroachDB's coalesced `MsgHeartbeat` (`pkg/kv/kvserver/store_raft.go`,
    /// `Store.sendQueuedHeartbeatsToNode`): every range the sender leads with a replica on
    /// the receiver, in one message.
    Heartbeats {
        /// One beat per range.
        beats: Vec<Beat>,
    },
    /// The coalesced `MsgHeartbeatResp`: one answer per beat received.
    HeartbeatResps {
        /// One answer per range.
        resps: Vec<BeatResp>,
    },
    /// Per-range Raft messages to one store, sent together at the end of a handler (the
    /// Raft transport's `RaftMessageRequestBatch`).
    Raft {
        /// The messages, in the order they were made.
        msgs: Vec<RangeMsg>,
    },
    /// The first range's leader tells the stores without a replica of it that it leads
    /// `term` (CockroachDB gossips the first range's descriptor from its leaseholder,
    /// `Replica.maybeGossipFirstRange`): how they know whom the engine's checks ask about.
    FirstRange {
        /// The leader's term in the first range.
        term: u64,
    },
    /// Store liveness: the sender asks for support until `until_wall_ns` on its clock
    /// (`pkg/kv/kvserver/storeliveness`, `MsgHeartbeat`).
    SupportRequest {
        /// The end of the support asked for, on the requester's wall clock.
        until_wall_ns: LocalNanos,
    },
    /// Store liveness: the sender supports the receiver in `epoch` until `until_wall_ns`
    /// (`MsgHeartbeatResp`).
    SupportGrant {
        /// The supporter's epoch for the receiver: raised each time support lapsed.
        epoch: u64,
        /// The end of the support granted.
        until_wall_ns: LocalNanos,
    },
}

splitbrain_sim::message_kinds! {
    impl Message for StoreMsg {
        kinds {
            Heartbeats => "Heartbeats",
            HeartbeatResps => "HeartbeatResps",
            Raft => "Raft",
            FirstRange => "FirstRange",
            SupportRequest => "SupportRequest",
            SupportGrant => "SupportGrant",
        }

        /// A message between stores carries the terms of many ranges, none of them the
        /// store's: the trace shows 0.
        fn term(&self) -> u64 {
            0
        }

        fn size_bytes(&self) -> usize {
            let owned = match self {
                StoreMsg::Heartbeats { beats } => std::mem::size_of_val(beats.as_slice()),
                StoreMsg::HeartbeatResps { resps } => std::mem::size_of_val(resps.as_slice()),
                StoreMsg::Raft { msgs } => std::mem::size_of_val(msgs.as_slice()),
                StoreMsg::FirstRange { .. }
                | StoreMsg::SupportRequest { .. }
                | StoreMsg::SupportGrant { .. } => 0,
            };
            std::mem::size_of::<Self>() + owned
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// A store's timer slots: one Raft tick for every replica it holds, and one for the
    /// earliest end of the leases it holds.
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
    pub enum StoreTimer {
        /// The store's Raft tick (`Store.raftTickLoop`, every `RaftTickInterval`).
        Tick => "tick",
        /// The wall-clock moment the earliest of its leases stops being usable.
        LeaseEnd => "lease_end",
        /// Store liveness: time to ask every other store for support.
        Support => "support",
    }
}
