//! etcd's messages (as the simulator counts them) and timer kinds.

use splitbrain_sim::{LocalNanos, Message, NodeId, TimerKind};

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

impl Message for EtcdMsg {
    const KINDS: &'static [&'static str] = &[
        "LeaseGrant",
        "LeaseGrantResp",
        "KeepAlive",
        "KeepAliveResp",
        "Revoke",
        "Txn",
        "TxnResp",
        "Range",
        "RangeResp",
        "Watch",
        "WatchEvent",
        "SetNx",
        "SetNxResp",
        "Extend",
        "ExtendResp",
        "Del",
    ];

    fn kind(&self) -> usize {
        match self {
            EtcdMsg::LeaseGrant { .. } => 0,
            EtcdMsg::LeaseGrantResp { .. } => 1,
            EtcdMsg::KeepAlive { .. } => 2,
            EtcdMsg::KeepAliveResp { .. } => 3,
            EtcdMsg::Revoke { .. } => 4,
            EtcdMsg::Txn { .. } => 5,
            EtcdMsg::TxnResp { .. } => 6,
            EtcdMsg::Range => 7,
            EtcdMsg::RangeResp { .. } => 8,
            EtcdMsg::Watch { .. } => 9,
            EtcdMsg::WatchEvent { .. } => 10,
            EtcdMsg::SetNx { .. } => 11,
            EtcdMsg::SetNxResp { .. } => 12,
            EtcdMsg::Extend { .. } => 13,
            EtcdMsg::ExtendResp { .. } => 14,
            EtcdMsg::Del { .. } => 15,
        }
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

/// Timer slots. Clients use the first three, the service only `Expiry`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EtcdTimer {
    /// The lease holder's keep-alive interval (TTL/3).
    KeepAlive,
    /// The client's own view of its lease deadline.
    LeaseDeadline,
    /// Retry an unanswered request; a waiter's resync; a SetNx waiter's poll.
    Retry,
    /// The service's next lease expiry, on the service's clock.
    Expiry,
}

impl TimerKind for EtcdTimer {
    const NAMES: &'static [&'static str] = &["keepalive", "leasedeadline", "retry", "expiry"];

    fn index(self) -> usize {
        match self {
            EtcdTimer::KeepAlive => 0,
            EtcdTimer::LeaseDeadline => 1,
            EtcdTimer::Retry => 2,
            EtcdTimer::Expiry => 3,
        }
    }

    fn from_index(index: usize) -> Self {
        match index {
            0 => EtcdTimer::KeepAlive,
            1 => EtcdTimer::LeaseDeadline,
            2 => EtcdTimer::Retry,
            3 => EtcdTimer::Expiry,
            _ => panic!("etcd has no timer kind {index}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_kinds_round_trip_through_their_index() {
        for (index, name) in EtcdTimer::NAMES.iter().enumerate() {
            let timer = EtcdTimer::from_index(index);
            assert_eq!(timer.index(), index);
            assert_eq!(format!("{timer:?}").to_lowercase(), *name);
        }
    }

    #[test]
    fn every_kind_names_its_variant() {
        let samples = [
            EtcdMsg::LeaseGrant {
                ttl_ns: 1,
                sent_at: 0,
                campaign: 1,
            },
            EtcdMsg::LeaseGrantResp {
                lease: 1,
                ttl_ns: 1,
                sent_at: 0,
                campaign: 1,
            },
            EtcdMsg::KeepAlive {
                lease: 1,
                sent_at: 0,
            },
            EtcdMsg::KeepAliveResp {
                lease: 1,
                ttl_ns: 1,
                sent_at: 0,
            },
            EtcdMsg::Revoke { lease: 1 },
            EtcdMsg::Txn { lease: 1 },
            EtcdMsg::TxnResp {
                lease: 1,
                create_rev: 1,
                revision: 1,
                keys: vec![],
            },
            EtcdMsg::Range,
            EtcdMsg::RangeResp {
                revision: 1,
                keys: vec![],
            },
            EtcdMsg::Watch {
                key: 1,
                start_rev: 1,
            },
            EtcdMsg::WatchEvent {
                key: 1,
                revision: 1,
            },
            EtcdMsg::SetNx { ttl_ns: 1 },
            EtcdMsg::SetNxResp {
                acquired: true,
                term: 1,
                holder: None,
            },
            EtcdMsg::Extend {
                term: 1,
                sent_at: 0,
            },
            EtcdMsg::ExtendResp {
                ok: true,
                term: 1,
                sent_at: 0,
            },
            EtcdMsg::Del { term: 1 },
        ];
        assert_eq!(samples.len(), EtcdMsg::KINDS.len());
        for (expected, msg) in samples.iter().enumerate() {
            assert_eq!(msg.kind(), expected);
            let name = EtcdMsg::KINDS[msg.kind()];
            let debug = format!("{msg:?}");
            assert!(debug.starts_with(name), "{name} vs {debug}");
        }
    }
}
