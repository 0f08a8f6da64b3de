//! etcd's key-value store, the one place its rules of revisions, leases and keys are written:
//! the state machine every cluster member applies committed entries to, in log order, and
//! the one-process service applies each request to (`service.rs`): the global revision,
//! leases (owner, TTL, attached key) and the keys under the election prefix. etcd's
//! `applierV3` applies `LeaseGrant`, `LeaseRevoke` and `Txn` the same way on every member.
//! Expiry is not here: it belongs to the lessor (`lessor.rs`).

use crate::etcd::messages::{KeyView, ObjectView, Owner};
use splitbrain_sim::{Ctx, Message, NodeId, Signal, TimerKind};
use std::collections::BTreeMap;

/// One lease as every member stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredLease {
    pub(crate) owner: NodeId,
    pub(crate) ttl_ns: u64,
    /// The create revision of the key attached to it, if any.
    pub(crate) key: Option<u64>,
}

/// What applying a revoke removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Removed {
    pub(crate) owner: NodeId,
    /// The create revision of the deleted key, and whether it was the lowest (the leader's).
    pub(crate) key: Option<(u64, bool)>,
}

/// The keys and leases of one member, as of its applied index.
#[derive(Clone, Debug, Default)]
pub(crate) struct KvState {
    pub(crate) revision: u64,
    next_lease: u64,
    pub(crate) leases: BTreeMap<u64, StoredLease>,
    /// Keys under the prefix by create revision: (owner, lease).
    keys: BTreeMap<u64, (NodeId, u64)>,
    /// Whether a key was ever created (the initial election has begun).
    prefix_used: bool,
    /// The one object of a client that is not the election recipe (the API server's Lease).
    pub(crate) object: Option<ObjectView>,
}

impl KvState {
    /// Revision 1, no lease, no key (as the single service starts).
    pub(crate) fn new() -> Self {
        Self {
            revision: 1,
            next_lease: 1,
            ..Self::default()
        }
    }

    /// `LeaseGrant`: a new lease id (the same on every member: ids follow the log).
    pub(crate) fn grant(&mut self, owner: NodeId, ttl_ns: u64) -> u64 {
        let lease = self.next_lease;
        self.next_lease += 1;
        let stored = StoredLease {
            owner,
            ttl_ns,
            key: None,
        };
        self.leases.insert(lease, stored);
        lease
    }

    /// The election transaction: creates `prefix/<lease>` unless it exists. Returns the
    /// key's create revision (0 if the lease is gone) and whether it is new; the second
    /// flag says whether this was the first key ever.
    pub(crate) fn txn(&mut self, owner: NodeId, lease: u64) -> (u64, bool, bool) {
        let Some(stored) = self.leases.get_mut(&lease) else {
            return (0, false, false);
        };
        if let Some(rev) = stored.key {
            return (rev, false, false);
        }
        self.revision += 1;
        stored.key = Some(self.revision);
        self.keys.insert(self.revision, (owner, lease));
        let first = !self.prefix_used;
        self.prefix_used = true;
        (self.revision, true, first)
    }

    /// `LeaseRevoke`: removes the lease and its key.
    pub(crate) fn revoke(&mut self, lease: u64) -> Option<Removed> {
        let stored = self.leases.remove(&lease)?;
        let key = stored.key.map(|key| {
            let led = self.keys.keys().next() == Some(&key);
            self.keys.remove(&key);
            self.revision += 1;
            (key, led)
        });
        Some(Removed {
            owner: stored.owner,
            key,
        })
    }

    /// The object's compare-and-put ([`object_matches`], then [`object_put`] at the next
    /// revision). Returns whether it applied, and who the value named before.
    pub(crate) fn put_object(
        &mut self,
        expected_rev: u64,
        owner: Option<Owner>,
        value: u64,
    ) -> (bool, Option<Owner>) {
        let current = self.object.as_ref();
        let before = current.and_then(|o| o.owner);
        if !object_matches(current, expected_rev) {
            return (false, before);
        }
        self.revision += 1;
        self.object = Some(object_put(current, self.revision, owner, value));
        (true, before)
    }

    /// Whether the key created at `rev` exists.
    pub(crate) fn has_key(&self, rev: u64) -> bool {
        self.keys.contains_key(&rev)
    }

    /// The prefix's keys, lowest create revision first.
    pub(crate) fn keys(&self) -> Vec<KeyView> {
        self.keys
            .iter()
            .map(|(rev, (owner, _))| (*rev, *owner))
            .collect()
    }

    /// The owner of the lowest key: whom this member would name as leader.
    pub(crate) fn first_owner(&self) -> Option<NodeId> {
        self.keys.values().next().map(|(owner, _)| *owner)
    }
}

/// The object's precondition: its `mod_revision` is `expected_rev` (0: absent). etcd's `Txn`
/// compare, which the Kubernetes API server's `GuaranteedUpdate` makes of an update's
/// `resourceVersion` (`storage/etcd3/store.go`); the one-process API server applies it to
/// its own record.
pub(crate) fn object_matches(current: Option<&ObjectView>, expected_rev: u64) -> bool {
    current.map_or(0, |o| o.mod_rev) == expected_rev
}

/// The object as a put at revision `rev` leaves it: the holder's acquisition revision
/// (`owner_since`, the Lease's fencing token) moves only when the holder changes.
pub(crate) fn object_put(
    current: Option<&ObjectView>,
    rev: u64,
    owner: Option<Owner>,
    value: u64,
) -> ObjectView {
    let owner_since = match current {
        Some(o) if o.owner == owner => o.owner_since,
        _ => rev,
    };
    ObjectView {
        mod_rev: rev,
        owner,
        owner_since,
        value,
    }
}

/// A put that changed the object's holder, as the system sees it: the previous holder's
/// lease ended, the new one's is held.
pub(crate) fn signal_holder_change<M: Message, T: TimerKind>(
    ctx: &mut Ctx<'_, M, T>,
    before: Option<Owner>,
    after: Option<Owner>,
) {
    if before == after {
        return;
    }
    if let Some((holder, _)) = before {
        ctx.signal(Signal::LeaseEnded { holder });
    }
    if let Some((holder, _)) = after {
        ctx.signal(Signal::LeaseHeld { holder });
    }
}
