//! What stores send each other, as the engine counts and traces it: coalesced heartbeats
//! (one message per store pair and heartbeat tick, whatever the number of ranges), and
//! per-range Raft messages batched per destination store.

use serde::Serialize;
use splitbrain_sim::LocalNanos;
use std::sync::Arc;

/// A range lease: who holds it, its sequence number (raised by every change of holder,
/// kept by an extension), its wall-clock expiration (an expiration-based lease), and the
/// holder's node-liveness epoch (an epoch-based lease).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lease {
    /// The leaseholder store, as a node index; `u32::MAX` for the empty lease a range starts
    /// with.
    pub holder: u32,
    /// `roachpb.Lease.Sequence`: raised when the holder changes.
    pub seq: u64,
    /// The wall-clock reading after which the lease is no longer valid.
    pub expiration_wall_ns: LocalNanos,
    /// An epoch-based lease: the holder's node-liveness epoch it is tied to (valid while
    /// the holder's liveness record is live in that epoch); 0 for the other kinds.
    pub epoch: u64,
}

impl Lease {
    /// The lease a range starts with: nobody holds it, and it expired long ago.
    pub const NONE: Lease = Lease {
        holder: u32::MAX,
        seq: 0,
        expiration_wall_ns: LocalNanos::MIN,
        epoch: 0,
    };
}

/// One store's node-liveness record (`livenesspb.Liveness`): its epoch and the wall-clock
/// moment it stops being live unless heartbeated again.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LivenessRecord {
    /// Raised by another store (`IncrementEpoch`) once the record has expired: every
    /// epoch-based lease of the older epoch is then invalid.
    pub epoch: u64,
    /// The end of liveness, on the clocks the lease rules compare it with.
    pub expiration_wall_ns: LocalNanos,
}

impl LivenessRecord {
    /// A store's record as the cluster starts: epoch 1, not live.
    pub const INITIAL: LivenessRecord = LivenessRecord {
        epoch: 1,
        expiration_wall_ns: LocalNanos::MIN,
    };
}

/// The last entry of a range's Raft log as this model keeps it: only lease records (and,
/// in the node-liveness range, the liveness records) are logged, so the log is the latest
/// entry with its position (the vote's up-to-date rule and the leader's completeness work
/// on it, Raft paper 5.4.1), and each entry carries the whole state it leaves behind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The term of the leader that appended it.
    pub term: u64,
    /// Its index in the range's log.
    pub index: u64,
    /// The lease it records.
    pub lease: Lease,
    /// In the node-liveness range with epoch-based leases: every store's liveness record,
    /// by store (`None`: every record as the cluster starts).
    #[serde(serialize_with = "records")]
    pub liveness: Option<Arc<[LivenessRecord]>>,
}

/// Serializes the shared liveness records as a plain list.
fn records<S: serde::Serializer>(
    liveness: &Option<Arc<[LivenessRecord]>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&liveness.as_deref(), serializer)
}

impl Entry {
    /// The empty log.
    pub const EMPTY: Entry = Entry {
        term: 0,
        index: 0,
        lease: Lease::NONE,
        liveness: None,
    };

    /// Raft paper 5.4.1: the later of two logs has the higher last term, then the higher
    /// last index.
    pub fn position(&self) -> (u64, u64) {
        (self.term, self.index)
    }
}

/// A store's lease count as the stores gossip it (CockroachDB gossips each store's
/// descriptor, its `StoreCapacity.LeaseCount` included, to every node): who, as of when,
/// how many.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeaseCount {
    /// The store counted, as a node index.
    pub store: u32,
    /// When it counted: its incarnation and its heartbeat round then (a later version
    /// replaces an earlier one, restarts included).
    pub version: (u64, u64),
    /// How many leases it held.
    pub leases: u32,
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
/// `MsgAppResp`, `MsgTimeoutNow`, carrying only what elections and leases need).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum RangeMsg {
    /// A candidate asks for a vote in `term`.
    Vote {
        /// The range.
        range: u64,
        /// The candidate's term.
        term: u64,
        /// The position of the candidate's last entry.
        last: (u64, u64),
        /// A campaign the leader asked for (etcd raft's `campaignTransfer`): voters do not
        /// wait out their leader.
        transfer: bool,
        /// A pre-vote (`MsgPreVote`): `term` is the asker's next, and nobody records it.
        pre: bool,
    },
    /// The leader hands its leadership to the receiver, which campaigns at once (etcd
    /// raft's `MsgTimeoutNow`): to the range's leaseholder
    /// (`Replica.maybeTransferRaftLeadershipToLeaseholderLocked`), or to the target of a
    /// lease transfer once the transferred lease is committed.
    TimeoutNow {
        /// The range.
        range: u64,
        /// The leader's term.
        term: u64,
    },
    /// A leader of `term` that stepped down, once its support has run out, releases the
    /// followers that fortified it (`MsgDeFortifyLeader`, `pkg/raft/raft.go`,
    /// `bcastDeFortify`).
    DeFortify {
        /// The range.
        range: u64,
        /// The term it led.
        term: u64,
    },
    /// The answer to a vote request.
    VoteResp {
        /// The range.
        range: u64,
        /// The voter's term.
        term: u64,
        /// Whether the vote was given.
        granted: bool,
        /// The answer to a pre-vote (`MsgPreVoteResp`).
        pre: bool,
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
            | RangeMsg::TimeoutNow { range, .. }
            | RangeMsg::DeFortify { range, .. }
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
        /// Every store's lease count the sender knows, its own included: gossip for the
        /// allocator, riding on the heartbeats.
        counts: Vec<LeaseCount>,
    },
    /// The coalesced `MsgHeartbeatResp`: one answer per beat received.
    HeartbeatResps {
        /// One answer per range.
        resps: Vec<BeatResp>,
        /// Every store's lease count the sender knows.
        counts: Vec<LeaseCount>,
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
        /// The requester's incarnation (raised by each of its restarts).
        incarnation: u64,
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
    /// Node liveness: the sender heartbeats its record to the liveness range's
    /// leaseholder, a conditional put that extends the record if its epoch is still
    /// `epoch` (`NodeLiveness.heartbeatInternal`).
    LivenessHeartbeat {
        /// The epoch the sender believes its record has (0: not known yet, after a start).
        epoch: u64,
        /// The new end of its liveness.
        expiration_wall_ns: LocalNanos,
    },
    /// Node liveness: the answer to a heartbeat, sent once the record is committed, or at
    /// once when the epoch moved on (`ErrEpochIncremented`).
    LivenessResult {
        /// Whether the record was extended.
        extended: bool,
        /// The record as it is now.
        record: LivenessRecord,
    },
    /// Node liveness: the sender asks the liveness range's leaseholder to raise `store`'s
    /// epoch past `epoch`, which succeeds only once its record has expired
    /// (`NodeLiveness.IncrementEpoch`).
    IncrementEpoch {
        /// The store whose epoch-based lease the sender wants to take over.
        store: u32,
        /// The epoch of that lease.
        epoch: u64,
    },
    /// Node liveness: the answer to `IncrementEpoch`.
    EpochResult {
        /// The store asked about.
        store: u32,
        /// Its epoch now: above the one asked about if the increment (or an earlier one)
        /// went through.
        epoch: u64,
        /// Its record's expiration: when to ask again if it was not raised.
        expiration_wall_ns: LocalNanos,
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
            LivenessHeartbeat => "LivenessHeartbeat",
            LivenessResult => "LivenessResult",
            IncrementEpoch => "IncrementEpoch",
            EpochResult => "EpochResult",
        }

        /// A message between stores carries the terms of many ranges, none of them the
        /// store's: the trace shows 0.
        fn term(&self) -> u64 {
            0
        }

        fn size_bytes(&self) -> usize {
            let owned = match self {
                StoreMsg::Heartbeats { beats, counts } => {
                    std::mem::size_of_val(beats.as_slice())
                        + std::mem::size_of_val(counts.as_slice())
                }
                StoreMsg::HeartbeatResps { resps, counts } => {
                    std::mem::size_of_val(resps.as_slice())
                        + std::mem::size_of_val(counts.as_slice())
                }
                StoreMsg::Raft { msgs } => std::mem::size_of_val(msgs.as_slice()),
                StoreMsg::FirstRange { .. }
                | StoreMsg::SupportRequest { .. }
                | StoreMsg::SupportGrant { .. }
                | StoreMsg::LivenessHeartbeat { .. }
                | StoreMsg::LivenessResult { .. }
                | StoreMsg::IncrementEpoch { .. }
                | StoreMsg::EpochResult { .. } => 0,
            };
            std::mem::size_of::<Self>() + owned
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// A store's timer slots: one Raft tick for every replica it holds, one for the
    /// earliest end of the leases it holds, and one per background loop.
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
    pub enum StoreTimer {
        /// The store's Raft tick (`Store.raftTickLoop`, every `RaftTickInterval`).
        Tick => "tick",
        /// The wall-clock moment the earliest of its leases stops being usable.
        LeaseEnd => "lease_end",
        /// Store liveness: time to ask every other store for support.
        Support => "support",
        /// Expiration leases: the earliest moment a lease this store waits out expires.
        LeaseWait => "lease_wait",
        /// Node liveness: time to heartbeat the store's record, or to retry one unanswered.
        Liveness => "liveness",
        /// Node liveness: the moment the store's own record stops being usable (its
        /// epoch-based leases with it).
        LivenessEnd => "liveness_end",
        /// Node liveness: a record this store waits to raise the epoch of has expired.
        IncrementWait => "increment_wait",
        /// Lease rebalancing: the replica scanner's next replica (`replicaScanner`).
        Scan => "scan",
    }
}
