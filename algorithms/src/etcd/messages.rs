//! etcd's messages (as the simulator counts them) and timer kinds.

use splitbrain_sim::{LocalNanos, NodeId};

/// One key under the election prefix, as a range returns it: create revision and owner.
pub type KeyView = (u64, NodeId);

/// A request to the modeled etcd or its answer. Requests are client -> service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdMsg {
    /// `LeaseGrant(TTL)`; `sent_at` (the client's clock) and `campaign` (the client's
    /// campaign number) are echoed back: etcd's client matches a response to its request.
    LeaseGrant {
        ttl_ns: u64,
        sent_at: LocalNanos,
        campaign: u64,
    },
    /// The granted lease id and TTL (raised to the minimum TTL).
    LeaseGrantResp {
        lease: u64,
        ttl_ns: u64,
        sent_at: LocalNanos,
        campaign: u64,
    },
    /// One keep-alive on the lease stream; `sent_at` is the client's clock, echoed back.
    KeepAlive {
        lease: u64,
        sent_at: LocalNanos,
    },
    /// The renewed TTL; 0 means the lease is gone (etcd answers TTL <= 0).
    KeepAliveResp {
        lease: u64,
        ttl_ns: u64,
        sent_at: LocalNanos,
    },
    /// `LeaseRevoke`: deletes the lease and every key attached to it (resignation).
    Revoke {
        lease: u64,
    },
    /// `Txn(If(CreateRevision(prefix/lease) == 0), Then(Put(prefix/lease, lease)),
    /// Else(Get(prefix/lease)))` followed by a range of the prefix, sorted by create revision.
    Txn {
        lease: u64,
    },
    /// The answer, for the transaction on `lease`.
    TxnResp {
        lease: u64,
        create_rev: u64,
        revision: u64,
        keys: Vec<KeyView>,
    },
    /// A range of the election prefix (after a watch fired, and as a periodic resync).
    Range,
    RangeResp {
        revision: u64,
        keys: Vec<KeyView>,
    },
    /// Watch the key created at `key` for its delete, from revision `start_rev`.
    Watch {
        key: u64,
        start_rev: u64,
    },
    /// The watched key was deleted at `revision`.
    WatchEvent {
        key: u64,
        revision: u64,
    },
    /// `SET lock me NX PX ttl` (the SetNx variant).
    SetNx {
        ttl_ns: u64,
    },
    /// Whether the lock was taken; `term` counts successful SETs; `holder` is who holds it.
    SetNxResp {
        acquired: bool,
        term: u64,
        holder: Option<NodeId>,
    },
    /// Extend the lock's TTL if `term` still holds it (a compare-and-PEXPIRE script).
    Extend {
        term: u64,
        sent_at: LocalNanos,
    },
    ExtendResp {
        ok: bool,
        term: u64,
        sent_at: LocalNanos,
    },
    /// Delete the lock if `term` still holds it (resignation).
    Del {
        term: u64,
    },
}

splitbrain_sim::message_kinds! {
    impl Message for EtcdMsg {
        kinds {
            LeaseGrant => "LeaseGrant",
            LeaseGrantResp => "LeaseGrantResp",
            KeepAlive => "KeepAlive",
            KeepAliveResp => "KeepAliveResp",
            Revoke => "Revoke",
            Txn => "Txn",
            TxnResp => "TxnResp",
            Range => "Range",
            RangeResp => "RangeResp",
            Watch => "Watch",
            WatchEvent => "WatchEvent",
            SetNx => "SetNx",
            SetNxResp => "SetNxResp",
            Extend => "Extend",
            ExtendResp => "ExtendResp",
            Del => "Del",
        }

        fn term(&self) -> u64 {
            match *self {
                EtcdMsg::TxnResp { revision, .. }
                | EtcdMsg::RangeResp { revision, .. }
                | EtcdMsg::WatchEvent { revision, .. } => revision,
                EtcdMsg::SetNxResp { term, .. }
                | EtcdMsg::Extend { term, .. }
                | EtcdMsg::ExtendResp { term, .. }
                | EtcdMsg::Del { term } => term,
                _ => 0,
            }
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// Timer slots. Clients use the first three, the service only `Expiry`.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum EtcdTimer {
        /// The lease holder's keep-alive interval (TTL/3).
        KeepAlive => "keepalive",
        /// The client's own view of its lease deadline.
        LeaseDeadline => "leasedeadline",
        /// Retry an unanswered request; a waiter's resync; a SetNx waiter's poll.
        Retry => "retry",
        /// The service's next lease expiry, on the service's clock.
        Expiry => "expiry",
    }
}
