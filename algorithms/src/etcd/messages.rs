//! etcd's messages (as the simulator counts them) and timer kinds.

use super::config::MAX_LEASE_TTL_NS;
use crate::raft::RaftMsg;
use serde::{Deserialize, Deserializer, Serialize};
use splitbrain_sim::{LocalNanos, NodeId};

/// One key under the election prefix, as a range returns it: create revision and owner.
/// In JSON, an array `[create_rev, node]`.
pub type KeyView = (u64, NodeId);

/// Who a stored object's value makes its holder: a node and a tag of the client's choosing
/// (the Kubernetes Lease's `holderIdentity`: the node and its incarnation). In JSON, an array
/// `[node, tag]`.
pub type Owner = (NodeId, u32);

/// The one key-value object a cluster stores for a client that is not the election recipe
/// (the Kubernetes API server's Lease object), as a read or a compare-and-put returns it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectView {
    /// The revision of the object's last change (etcd's `mod_revision`; Kubernetes'
    /// `resourceVersion`).
    pub mod_rev: u64,
    /// Who the value names as holder, if anyone.
    pub owner: Option<Owner>,
    /// The revision at which `owner` last changed: when the holder acquired.
    pub owner_since: u64,
    /// The value (the Lease's `LeaseDurationSeconds`).
    pub value: u64,
}

/// A request to the modeled etcd or its answer. Requests are client -> service.
///
/// Its JSON form, `{"type":"<kind>", <fields>}` with the kind's name as `message_kinds!`
/// lists it, is stable (protocol version 1): `docs/protocol-services.md`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum EtcdMsg {
    /// `LeaseGrant(TTL)`; `sent_at` (the client's clock) and `campaign` (the client's
    /// campaign number) are echoed back: etcd's client matches a response to its request.
    LeaseGrant {
        /// The TTL asked for ([`EtcdConfig::ttl_ns`](super::EtcdConfig::ttl_ns)); read from
        /// JSON, at most [`MAX_LEASE_TTL_NS`], as etcd takes it.
        #[serde(deserialize_with = "lease_ttl")]
        ttl_ns: u64,
        /// The client's clock when it sent the first attempt: its lease may date from then.
        sent_at: LocalNanos,
        /// The client's campaign number: a grant for an abandoned campaign is ignored.
        campaign: u64,
    },
    /// The granted lease id and TTL (raised to the minimum TTL).
    LeaseGrantResp {
        /// The new lease's id.
        lease: u64,
        /// The TTL granted: the one asked for, raised to the service's minimum.
        ttl_ns: u64,
        /// The request's `sent_at`, echoed.
        sent_at: LocalNanos,
        /// The request's `campaign`, echoed.
        campaign: u64,
    },
    /// One keep-alive on the lease stream; `sent_at` is the client's clock, echoed back.
    KeepAlive {
        /// The lease to renew.
        lease: u64,
        /// The client's clock at the send: the renewed lease counts from it.
        sent_at: LocalNanos,
    },
    /// The renewed TTL; 0 means the lease is gone (etcd answers TTL <= 0).
    KeepAliveResp {
        /// The lease the keep-alive named.
        lease: u64,
        /// The lease's TTL from now at the service, or 0 if the lease no longer exists.
        ttl_ns: u64,
        /// The keep-alive's `sent_at`, echoed.
        sent_at: LocalNanos,
    },
    /// `LeaseRevoke`: deletes the lease and every key attached to it (resignation).
    Revoke {
        /// The lease to delete.
        lease: u64,
    },
    /// `Txn(If(CreateRevision(prefix/lease) == 0), Then(Put(prefix/lease, lease)),
    /// Else(Get(prefix/lease)))` followed by a range of the prefix, sorted by create revision.
    Txn {
        /// The sender's lease: the key is `prefix/<lease>`, attached to it.
        lease: u64,
    },
    /// The answer, for the transaction on `lease`.
    TxnResp {
        /// The lease the transaction named.
        lease: u64,
        /// The create revision of `prefix/<lease>` (new or existing), or 0 if the lease was
        /// gone and the put failed.
        create_rev: u64,
        /// The service's global revision after the transaction.
        revision: u64,
        /// Every key under the prefix, lowest create revision (the leader's) first.
        keys: Vec<KeyView>,
    },
    /// A range of the election prefix (after a watch fired, and as a periodic resync).
    #[serde(deserialize_with = "crate::json_form::no_fields")]
    Range,
    /// The answer to [`EtcdMsg::Range`].
    RangeResp {
        /// The service's global revision at the range: a client ignores views older than
        /// one it acted on.
        revision: u64,
        /// Every key under the prefix, lowest create revision (the leader's) first.
        keys: Vec<KeyView>,
    },
    /// Watch the key created at `key` for its delete, from revision `start_rev`.
    Watch {
        /// The create revision of the watched key (the sender's predecessor in line).
        key: u64,
        /// The revision after the view the sender acted on: a delete since then is replayed.
        start_rev: u64,
    },
    /// The watched key was deleted at `revision`.
    WatchEvent {
        /// The create revision of the deleted key.
        key: u64,
        /// The global revision of the delete (or the current one, for a replayed delete).
        revision: u64,
    },
    /// `SET lock me NX PX ttl` (the SetNx variant).
    SetNx {
        /// The lock's TTL (`PX`), raised to the service's minimum.
        ttl_ns: u64,
    },
    /// Whether the lock was taken; `term` counts successful SETs; `holder` is who holds it.
    SetNxResp {
        /// Whether this SET took the lock.
        acquired: bool,
        /// The holder's lock term, or the number of acquisitions so far if nobody holds it.
        term: u64,
        /// Who holds the lock now, if anyone.
        holder: Option<NodeId>,
    },
    /// Extend the lock's TTL if `term` still holds it (a compare-and-PEXPIRE script).
    Extend {
        /// The lock term the sender holds.
        term: u64,
        /// The client's clock at the send: the extended lock counts from it.
        sent_at: LocalNanos,
    },
    /// The answer to [`EtcdMsg::Extend`].
    ExtendResp {
        /// Whether the lock was still the sender's and got a fresh TTL.
        ok: bool,
        /// The request's `term`, echoed.
        term: u64,
        /// The request's `sent_at`, echoed.
        sent_at: LocalNanos,
    },
    /// Delete the lock if `term` still holds it (resignation).
    Del {
        /// The lock term the sender holds.
        term: u64,
    },
    /// Cluster mode, member to member: a Raft message of the members' Raft, with the
    /// proposals of the entries an `Append` carries (by log index).
    Raft {
        /// The Raft message.
        msg: RaftMsg,
        /// `(index, proposal)` for each entry of an `Append` that is not a new leader's empty
        /// entry; empty for every other message.
        proposals: Vec<(u64, Proposal)>,
    },
    /// Cluster mode: a follower forwards a client's proposal to the leader it knows
    /// (etcd-io/raft `stepFollower`, `MsgProp`: `m.To = r.lead`).
    Propose {
        /// What to append.
        proposal: Proposal,
    },
    /// Cluster mode: a follower forwards a keep-alive to the leader (etcd `LeaseRenew`:
    /// "renewals don't go through raft; forward to leader manually", `leasehttp.RenewHTTP`).
    RenewForward {
        /// The lease to renew.
        lease: u64,
        /// The follower's number for the request, echoed.
        request: u64,
    },
    /// The leader's answer to [`EtcdMsg::RenewForward`].
    RenewForwardResp {
        /// The request's number, echoed.
        request: u64,
        /// The renewed TTL, 0 if the lease is gone; `None`: this member's lessor is not
        /// primary (`ErrNotPrimary`, HTTP 500).
        ttl_ns: Option<u64>,
    },
    /// Cluster mode, member to client: the request failed (no leader, `ErrNotPrimary`, the
    /// 7 s request timeout): the client moves to the next member.
    #[serde(deserialize_with = "crate::json_form::no_fields")]
    Unavailable,
    /// Cluster mode, a member to itself, behind its own disk writes: its Ready loop has got
    /// this far (the lessor is demoted here, `raftReadyHandler.updateLeadership`).
    #[serde(deserialize_with = "crate::json_form::no_fields")]
    Ready,
    /// Cluster mode: a linearizable read of the stored object (kube-apiserver's `Get`, a
    /// quorum read), answered with [`EtcdMsg::ObjectResp`].
    ObjectGet {
        /// The client's number for the request, echoed.
        request: u64,
    },
    /// Cluster mode: `Txn(If(ModRevision(key) == expected_rev), Then(Put(key, value)),
    /// Else(Get(key)))`, kube-apiserver's `GuaranteedUpdate` (0: create if absent).
    ObjectPut {
        /// The client's number for the request, echoed.
        request: u64,
        /// The object's `mod_revision` the put is conditional on (0: absent).
        expected_rev: u64,
        /// Who the new value names as holder.
        owner: Option<Owner>,
        /// The new value.
        value: u64,
    },
    /// The answer to [`EtcdMsg::ObjectGet`] or [`EtcdMsg::ObjectPut`].
    ObjectResp {
        /// The request's number, echoed.
        request: u64,
        /// Whether a put was applied (a read: always true).
        ok: bool,
        /// The object as stored after the request; `None` if it does not exist.
        object: Option<ObjectView>,
    },
}

/// What a cluster member proposes: a command of the replicated state machine, and who
/// answers the client once it is applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    /// The command.
    pub command: Command,
    /// The member that took the client's request (it answers at apply); `None` for the
    /// lessor's own revokes.
    pub origin: Option<NodeId>,
    /// The origin's number for the request.
    pub request: u64,
}

/// A command of the replicated state machine (etcd's `InternalRaftRequest`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    /// `LeaseGrant` for `owner`, TTL raised to the minimum at apply.
    Grant {
        /// The client that asked.
        owner: NodeId,
        /// The TTL asked for.
        ttl_ns: u64,
        /// The request's `sent_at`, echoed in the answer.
        sent_at: LocalNanos,
        /// The request's `campaign`, echoed in the answer.
        campaign: u64,
    },
    /// The election transaction on `lease` for `owner`.
    Txn {
        /// The client that asked.
        owner: NodeId,
        /// The client's lease.
        lease: u64,
    },
    /// `LeaseRevoke`: by a client, or by the lessor for an expired lease.
    Revoke {
        /// The lease.
        lease: u64,
        /// Whether the lessor's sweep asked (the lease expired).
        expired: bool,
    },
    /// A read of the stored object, through the log (see [`EtcdMsg::ObjectGet`]).
    ObjectGet {
        /// The client's number for the request.
        request: u64,
    },
    /// A compare-and-put of the stored object (see [`EtcdMsg::ObjectPut`]).
    ObjectPut {
        /// The client's number for the request.
        request: u64,
        /// The `mod_revision` the put is conditional on (0: absent).
        expected_rev: u64,
        /// Who the new value names as holder.
        owner: Option<Owner>,
        /// The new value.
        value: u64,
    },
}

impl EtcdMsg {
    /// The requests a client sends the single server (docs/protocol-services.md); the
    /// rest are answers and the members' own traffic.
    pub const CLIENT_REQUESTS: &'static [&'static str] = &[
        "LeaseGrant",
        "KeepAlive",
        "Revoke",
        "Txn",
        "Range",
        "Watch",
        "SetNx",
        "Extend",
        "Del",
    ];
    /// The requests a client sends a cluster's members: the server's but the Redis lock's
    /// (`SetNx`, `Extend`, `Del`), which only the single server models.
    pub const CLUSTER_CLIENT_REQUESTS: &'static [&'static str] =
        &["LeaseGrant", "KeepAlive", "Revoke", "Txn", "Range", "Watch"];
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
            Raft => "Raft",
            Propose => "Propose",
            RenewForward => "RenewForward",
            RenewForwardResp => "RenewForwardResp",
            Unavailable => "Unavailable",
            Ready => "Ready",
            ObjectGet => "ObjectGet",
            ObjectPut => "ObjectPut",
            ObjectResp => "ObjectResp",
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
                EtcdMsg::Raft { ref msg, .. } => splitbrain_sim::Message::term(msg),
                EtcdMsg::ObjectResp {
                    object: Some(ref object),
                    ..
                } => object.mod_rev,
                _ => 0,
            }
        }

        /// A view of the election prefix holds its keys, a Raft append its proposals.
        fn size_bytes(&self) -> usize {
            let owned = match self {
                EtcdMsg::TxnResp { keys, .. } | EtcdMsg::RangeResp { keys, .. } => {
                    keys.len() * std::mem::size_of::<KeyView>()
                }
                EtcdMsg::Raft { proposals, .. } => {
                    proposals.len() * std::mem::size_of::<(u64, Proposal)>()
                }
                _ => 0,
            };
            std::mem::size_of::<Self>() + owned
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
        /// The SetNx lock's expiry, on the service's wall clock.
        LockExpiry => "lockexpiry",
        /// Cluster member: its Raft's election timer.
        RaftElection => "raft_election",
        /// Cluster member: its Raft's heartbeat timer.
        RaftHeartbeat => "raft_heartbeat",
        /// Cluster member: its Raft's check-quorum round.
        RaftCheckQuorum => "raft_check_quorum",
        /// Cluster member: its Raft's leadership-transfer deadline.
        RaftTransfer => "raft_transfer",
        /// Cluster member: its Raft's proposal workload (never armed).
        RaftPropose => "raft_propose",
        /// Cluster member: the lessor's 500 ms expiry sweep.
        Sweep => "lessor_sweep",
        /// Cluster member: requests waiting past the 7 s request timeout fail.
        RequestTimeout => "request_timeout",
        /// Cluster member: a Ready probe is sent again while a demotion waits for it.
        ReadyProbe => "ready_probe",
    }
}

/// A `LeaseGrant`'s TTL as an external node writes it: refused past etcd's longest,
/// [`MAX_LEASE_TTL_NS`], as etcd refuses it (a request the service does not take ends the run,
/// docs/protocol-services.md).
fn lease_ttl<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let ttl_ns = u64::deserialize(deserializer)?;
    if ttl_ns > MAX_LEASE_TTL_NS {
        return Err(serde::de::Error::custom(format!(
            "ttl_ns {ttl_ns} is longer than etcd's longest lease TTL, 9000000000s \
             (lease.MaxLeaseTTL), which etcd refuses as \"too large lease TTL\""
        )));
    }
    Ok(ttl_ns)
}
