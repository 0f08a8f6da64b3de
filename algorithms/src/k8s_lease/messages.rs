//! The Kubernetes Lease lock's messages (as the simulator counts them), the lease record
//! they carry, and the timer kinds.

use crate::etcd::messages::{ObjectView, Owner};
use crate::etcd::{EtcdMsg, EtcdTimer};
use serde::{Deserialize, Serialize};
use splitbrain_sim::{LocalNanos, Message, NodeId, TimerKind};

/// A holder identity: the node and its incarnation. Like the `hostname_uuid` identities of
/// Kubernetes controllers, a restarted process is someone new and waits like any candidate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// The member process.
    pub node: NodeId,
    /// How many times the process has restarted.
    pub incarnation: u32,
}

impl Identity {
    /// The owner an object store keeps for this identity.
    pub(crate) fn owner(self) -> Owner {
        (self.node, self.incarnation)
    }
}

/// The lease record as the server stores it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The identity holding the lease (client-go's `holderIdentity`), if anyone does.
    pub holder: Option<Identity>,
    /// Bumped by every successful update; the fencing token of the holder that acquired.
    pub resource_version: u64,
    /// The resource version at which the holder last changed: the current holder's term and
    /// token (after a release or expiry, the version that left the record without one).
    pub acquired_rv: u64,
    /// DbRow: the row expires when the database clock reads this.
    pub expires_at: LocalNanos,
    /// client-go's `LeaseDurationSeconds` as the last writer wrote it (whole seconds; 1 after
    /// a release): what `ClientGo` candidates wait, from their own sight of the change.
    pub lease_duration_s: u32,
}

impl Record {
    /// The Lease record an object of the store stands for (`resourceVersion` its
    /// `mod_revision`, the holder's acquisition its `owner_since`, `LeaseDurationSeconds` its
    /// value); no object: the record nobody holds, at resource version 0. A database row's
    /// expiry is not in the object (0).
    ///
    /// ```
    /// use splitbrain_algorithms::etcd::messages::ObjectView;
    /// use splitbrain_algorithms::k8s_lease::{Identity, Record};
    /// use splitbrain_sim::NodeId;
    /// assert_eq!(Record::of_object(None).resource_version, 0);
    /// let node = NodeId::from(2usize);
    /// let object = ObjectView { mod_rev: 7, owner: Some((node, 0)), owner_since: 5, value: 15 };
    /// let record = Record::of_object(Some(&object));
    /// assert_eq!(record.holder, Some(Identity { node, incarnation: 0 }));
    /// assert_eq!((record.resource_version, record.acquired_rv, record.lease_duration_s), (7, 5, 15));
    /// ```
    pub fn of_object(object: Option<&ObjectView>) -> Record {
        let Some(object) = object else {
            return Record {
                holder: None,
                resource_version: 0,
                acquired_rv: 0,
                expires_at: 0,
                lease_duration_s: 0,
            };
        };
        Record {
            holder: object
                .owner
                .map(|(node, incarnation)| Identity { node, incarnation }),
            resource_version: object.mod_rev,
            acquired_rv: object.owner_since,
            expires_at: 0,
            lease_duration_s: u32::try_from(object.value).unwrap_or(u32::MAX),
        }
    }
}

/// A request to the modeled API server or its answer. Requests are client -> server.
///
/// Its JSON form, `{"type":"<kind>", <fields>}` with the kind's name as `message_kinds!`
/// lists it, is stable (protocol version 1): `docs/protocol-services.md`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum K8sMsg {
    /// Read the lease record.
    #[serde(deserialize_with = "crate::json_form::no_fields")]
    Get,
    /// The answer to [`K8sMsg::Get`].
    GetResp {
        /// The record as stored.
        record: Record,
    },
    /// Replace the record if its resourceVersion is still `expected_rv` (Lease), or if the
    /// row is free, expired by the database's clock, or already ours (DbRow).
    Update {
        /// The resource version of the record the client last saw (0 if none).
        expected_rv: u64,
        /// The client's clock at the send: a leader's renew deadline counts from it.
        sent_at: LocalNanos,
        /// Who asks to hold the lease.
        identity: Identity,
        /// The `LeaseDurationSeconds` the client writes into the record.
        lease_duration_s: u32,
        /// The client's request number, echoed back: the newest answered request is the
        /// last renewal, whatever its client's clock did since.
        request: u64,
    },
    /// The answer to [`K8sMsg::Update`].
    UpdateResp {
        /// Whether the update was applied.
        ok: bool,
        /// The record as stored after the request.
        record: Record,
        /// The request's `sent_at`, echoed.
        sent_at: LocalNanos,
        /// The request's number, echoed.
        request: u64,
    },
    /// Release: clear the holder if still ours.
    Release {
        /// The identity giving the lease up.
        identity: Identity,
    },
    /// On an etcd cluster only, never from an election member: a message between the API
    /// servers and the etcd members, or among the members (`etcd_members` > 1).
    Etcd {
        /// The etcd message.
        msg: EtcdMsg,
    },
}

/// The Lease lock's own message kinds, before etcd's.
const OWN_KINDS: [&str; 5] = ["Get", "GetResp", "Update", "UpdateResp", "Release"];

/// The kinds of [`K8sMsg`]: its own, then every etcd kind under its own name.
const KINDS: [&str; OWN_KINDS.len() + EtcdMsg::KINDS.len()] =
    concat_names(&OWN_KINDS, EtcdMsg::KINDS);

impl K8sMsg {
    /// The requests a client sends an API server (docs/protocol-services.md); the rest are
    /// answers and the traffic between the API servers and etcd.
    pub const CLIENT_REQUESTS: &'static [&'static str] = &["Get", "Update", "Release"];
}

/// The timer kinds of the Lease lock's own processes, before etcd's.
const OWN_TIMERS: [&str; 3] = ["retry", "renewdeadline", "expiry"];

/// The timer kinds of [`K8sTimer`]: its own, then every etcd member's.
const TIMERS: [&str; OWN_TIMERS.len() + EtcdTimer::NAMES.len()] =
    concat_names(&OWN_TIMERS, EtcdTimer::NAMES);

/// `first` then `second`, as one array of `N` names (`N` is their lengths' sum).
const fn concat_names<const N: usize>(
    first: &[&'static str],
    second: &[&'static str],
) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < first.len() {
        out[i] = first[i];
        i += 1;
    }
    let mut j = 0;
    while j < second.len() {
        out[first.len() + j] = second[j];
        j += 1;
    }
    out
}

impl Message for K8sMsg {
    const KINDS: &'static [&'static str] = &KINDS;

    fn kind(&self) -> usize {
        match self {
            K8sMsg::Get => 0,
            K8sMsg::GetResp { .. } => 1,
            K8sMsg::Update { .. } => 2,
            K8sMsg::UpdateResp { .. } => 3,
            K8sMsg::Release { .. } => 4,
            K8sMsg::Etcd { msg } => OWN_KINDS.len() + msg.kind(),
        }
    }

    fn term(&self) -> u64 {
        match self {
            K8sMsg::GetResp { record } | K8sMsg::UpdateResp { record, .. } => {
                record.resource_version
            }
            K8sMsg::Etcd { msg } => msg.term(),
            _ => 0,
        }
    }
}

/// Timer slots. Clients use the first two, a database row only `Expiry`, the API server
/// none, an etcd member its own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum K8sTimer {
    /// The retry period: candidates poll and try, the leader renews.
    Retry,
    /// The leader's renew deadline.
    RenewDeadline,
    /// DbRow: the database's expiry check.
    Expiry,
    /// An etcd member's timer.
    Etcd(EtcdTimer),
}

impl TimerKind for K8sTimer {
    const NAMES: &'static [&'static str] = &TIMERS;

    fn index(self) -> usize {
        match self {
            K8sTimer::Retry => 0,
            K8sTimer::RenewDeadline => 1,
            K8sTimer::Expiry => 2,
            K8sTimer::Etcd(timer) => OWN_TIMERS.len() + timer.index(),
        }
    }

    fn from_index(index: usize) -> Self {
        match index {
            0 => K8sTimer::Retry,
            1 => K8sTimer::RenewDeadline,
            2 => K8sTimer::Expiry,
            _ => K8sTimer::Etcd(EtcdTimer::from_index(index - OWN_TIMERS.len())),
        }
    }
}
