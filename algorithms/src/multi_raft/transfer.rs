//! Lease transfers on a [`Step`], as CockroachDB hands a lease to another replica
//! (`Replica.AdminTransferLease`, `batcheval.TransferLease`; `docs/algorithms/multi-raft.md`
//! cites each rule):
//! 1. the leaseholder, which leads, stops using its lease at once (the transfer is under
//!    way: it serves nothing more) and proposes the target's lease with a new sequence: an
//!    expiration-based lease from now with expiration or epoch leases (CockroachDB
//!    transfers expiration-based leases first and the new holder upgrades them,
//!    `kv.transfer_expiration_leases_first.enabled`), a leader lease with leader leases;
//! 2. once that record is on a quorum that includes the target (etcd raft sends
//!    `MsgTimeoutNow` only to a transferee whose log has caught up), the leader hands the
//!    target the leadership (`MsgTimeoutNow`) and steps down at once: it "has irrevocably
//!    compromised its leadership term by giving the target permission to overthrow it"
//!    (`leadTransferee` in `pkg/raft/raft.go`);
//! 3. the target campaigns without pre-vote or in-lease checks; once the entry it appends
//!    as leader commits, it holds the transferred lease, if it took that record from a
//!    leader since it started (a record from before a restart is never used).
//!
//! A transfer whose record does not commit within an election timeout is given up, like
//! any proposal: the lease on record is then the target's, which nobody holds, and the
//! leader waits it out as another store's lease.

use super::messages::{Lease, RangeMsg};
use super::properties::LEASE_TRANSFER;
use super::replica::Replica;
use super::store::Step;
use splitbrain_sim::{LocalNanos, NodeId};

impl Step<'_, '_, '_> {
    /// Starts moving `r`'s lease, held by this store as leader, to `target`.
    pub(crate) fn transfer_lease(&mut self, r: &mut Replica, target: NodeId) {
        assert!(
            r.leads() && r.held.is_some(),
            "only a leading leaseholder transfers"
        );
        let expiration_wall_ns = if self.leader_leases() {
            LocalNanos::MAX
        } else {
            let duration = self.config.lease_duration_ns as LocalNanos;
            self.ctx.wall_now().saturating_add(duration)
        };
        let lease = Lease {
            holder: target.0,
            seq: self.next_seq(r.entry.lease.seq),
            expiration_wall_ns,
            epoch: 0,
        };
        self.ctx.observe(LEASE_TRANSFER, (r.range, lease.seq));
        self.end_lease(r);
        r.lease_granted = false;
        r.transfer_to = Some(target);
        self.propose(r, lease, true);
    }

    /// Whether the pending record may count as committed with `acks`: a transferred lease
    /// needs its target among them.
    pub(crate) fn transfer_acked(&self, r: &Replica, acks: u8) -> bool {
        r.transfer_to
            .is_none_or(|target| acks & self.bit(target, r.range) != 0)
    }

    /// The transferred lease is committed: the leader hands the target the leadership and
    /// steps down.
    pub(crate) fn hand_over(&mut self, r: &mut Replica) {
        let Some(target) = r.transfer_to.take() else {
            return;
        };
        let msg = RangeMsg::TimeoutNow {
            range: r.range,
            term: r.term,
        };
        self.send(target, msg);
        let term = r.term;
        self.become_follower(r, term, None);
    }

    /// A leader's entry of its election committed: if the lease on record was transferred
    /// to this store since it started, it holds it now.
    pub(crate) fn take_transferred_lease(&mut self, r: &mut Replica) {
        let lease = r.entry.lease;
        let mine = lease.holder == self.me.0 && r.lease_in == Some(lease.seq);
        if !mine || r.held.is_some() || lease.epoch > 0 {
            return;
        }
        if self.leader_leases() {
            r.lease_granted = true;
            self.refresh_leader_lease(r);
        } else {
            self.hold_expiration_lease(r, lease);
        }
    }
}
