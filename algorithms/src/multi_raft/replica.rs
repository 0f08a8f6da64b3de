//! One range's replica on one store: its Raft state (term, vote, the lease log) and its
//! role. The transitions that send or report are in `election.rs` and `lease.rs`.

use super::messages::{Entry, Lease};
use splitbrain_sim::{LocalNanos, NodeId};

/// What a replica is doing in its range's Raft group (Raft paper 5.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Follows the leader of its term, or waits for one.
    Follower,
    /// Asks for pre-votes for the next term; `votes` has a bit per replica position that
    /// granted.
    PreCandidate { votes: u8 },
    /// Campaigns in its term; `votes` has a bit per replica position that granted.
    Candidate { votes: u8 },
    /// Leads its term.
    Leader,
}

/// A lease record the leader proposed and waits to see on a quorum.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    /// The log index of the proposed entry.
    pub(crate) index: u64,
    /// A bit per replica position that has the entry.
    pub(crate) acks: u8,
    /// Ticks since it was proposed; it is given up after an election timeout.
    pub(crate) ticks: u64,
    /// Whether it is a lease request of this leader (else the record of the lease found in
    /// the log, appended on election).
    pub(crate) request: bool,
}

/// One replica.
#[derive(Clone, Debug)]
pub(crate) struct Replica {
    /// The range.
    pub(crate) range: u64,
    /// Durable: the current term in this range.
    pub(crate) term: u64,
    /// Durable: whom this replica voted for in `term`.
    pub(crate) vote: Option<NodeId>,
    /// Durable: the last entry of its log (the latest lease record).
    pub(crate) entry: Entry,
    /// Volatile: its role.
    pub(crate) role: Role,
    /// Volatile: the leader of `term` it knows (itself, when it leads).
    pub(crate) leader: Option<NodeId>,
    /// Volatile: ticks since it last heard from its leader (a follower), since it granted a
    /// vote or campaigned, or since its last quorum check (a leader).
    pub(crate) elapsed_ticks: u64,
    /// Volatile: its randomized election timeout, in ticks.
    pub(crate) timeout_ticks: u64,
    /// Volatile, a leader's: a bit per replica position heard from since the last quorum
    /// check (CheckQuorum).
    pub(crate) heard: u8,
    /// Volatile, a leader's: the lease record it waits to commit.
    pub(crate) pending: Option<Pending>,
    /// Volatile: the lease this store believes it holds for the range, if any, with the
    /// wall-clock moment it stops being usable (its key among the store's lease ends).
    pub(crate) held: Option<(Lease, LocalNanos)>,
    /// Kept across a restart, with leader leases: the leader this replica fortified and the
    /// store-liveness epoch of its support then. While that support lasts, it neither
    /// campaigns nor votes (`supportingFortifiedLeader` in `pkg/raft/raft.go`).
    pub(crate) fortified: Option<(NodeId, u64)>,
    /// Volatile, a leader's: a bit per replica position that fortified it, in the epoch of
    /// the support the leader knows.
    pub(crate) fortifiers: u8,
    /// Volatile, a leader's, with leader leases: its lease record committed in its term.
    pub(crate) lease_granted: bool,
    /// Volatile, a leader's: the index of the entry it appended on election.
    pub(crate) first_index_of_term: u64,
    /// Volatile, a leader's: the index of the last entry it saw committed. An entry past it
    /// (a proposal given up after an election timeout stays in the log, as in Raft) may
    /// still be lost to a new leader.
    pub(crate) committed_index: u64,
    /// Volatile, a leader's: the store it is transferring the lease to, while the record
    /// of the transferred lease waits to commit on a quorum that includes the target.
    pub(crate) transfer_to: Option<NodeId>,
    /// Volatile: the sequence of the last lease record naming this store that it took
    /// from a leader since it started: a lease transferred to it, which it may use once it
    /// leads (a record from before a restart is never used).
    pub(crate) lease_in: Option<u64>,
    /// Volatile, with leader leases: a leader that stepped down releases its followers
    /// once its support has run out.
    pub(crate) defortify: Option<DeFortify>,
}

/// What a leader that stepped down owes its followers: a release, once its support of the
/// term it led has run out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeFortify {
    /// The term it led.
    pub(crate) term: u64,
    /// Its `LeadSupportUntil` when it stepped down, on its wall clock.
    pub(crate) after_wall_ns: LocalNanos,
}

impl Replica {
    /// A replica of `range` as the cluster starts: term 0, empty log, a follower.
    pub(crate) fn new(range: u64, timeout_ticks: u64) -> Self {
        Self {
            range,
            term: 0,
            vote: None,
            entry: Entry::EMPTY,
            role: Role::Follower,
            leader: None,
            elapsed_ticks: 0,
            timeout_ticks,
            heard: 0,
            pending: None,
            held: None,
            fortified: None,
            fortifiers: 0,
            lease_granted: false,
            first_index_of_term: 0,
            committed_index: 0,
            transfer_to: None,
            lease_in: None,
            defortify: None,
        }
    }

    /// Drops the volatile state (a store restart): the durable term, vote and log stay.
    pub(crate) fn restart(&mut self, timeout_ticks: u64) {
        *self = Self {
            term: self.term,
            vote: self.vote,
            entry: self.entry.clone(),
            fortified: self.fortified,
            ..Self::new(self.range, timeout_ticks)
        };
    }

    /// Whether it leads its term.
    pub(crate) fn leads(&self) -> bool {
        self.role == Role::Leader
    }
}

/// The position of `store` in `range`'s replica set (see `placement.rs`): a bit index
/// below the replication factor.
pub(crate) fn position(store: NodeId, range: u64, stores: usize) -> u32 {
    let stores = stores as u64;
    ((store.index() as u64 + stores - range % stores) % stores) as u32
}
