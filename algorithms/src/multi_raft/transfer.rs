//! Lease transfers on a [`Step`], as CockroachDB hands a lease to another replica
//! (`Replica.AdminTransferLease`, `batcheval.TransferLease`; `docs/algorithms/multi-raft.md`
//! cites each rule):
//! 1. the leaseholder, which leads, stops using its lease at once (the transfer is under
//!    way: it serves nothing more) and proposes the target's lease with a new sequence: an
//!    expiration-based lease from now, whatever the kind, which the new holder upgrades to
//!    an epoch or leader lease under the same sequence (`leases.leaseType` in
//!    `pkg/kv/kvserver/leases/build.go`: transfers get expiration leases when
//!    `kv.transfer_expiration_leases_first.enabled` or leader leases are on);
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
        let duration = self.config.lease_duration_ns as LocalNanos;
        let expiration_wall_ns = self.ctx.wall_now().saturating_add(duration);
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

    /// A heartbeat answer from the transfer's target that has not taken the record yet:
    /// the record goes to it again (etcd raft sends a follower what it lacks when it
    /// answers a heartbeat), so that one lost message does not stall the transfer.
    pub(crate) fn resend_to_transfer_target(&mut self, r: &Replica, from: NodeId) {
        let lacking = (r.pending).is_some_and(|p| p.acks & self.bit(from, r.range) == 0);
        if r.transfer_to == Some(from) && lacking {
            let msg = RangeMsg::Append {
                range: r.range,
                term: r.term,
                entry: r.entry.clone(),
            };
            self.send(from, msg);
        }
    }

    /// The transferred lease is committed: the leader hands the target the leadership and
    /// steps down.
    pub(crate) fn hand_over(&mut self, r: &mut Replica) {
        let Some(target) = r.transfer_to.take() else {
            return;
        };
        self.send_timeout_now(r, target);
        let term = r.term;
        self.become_follower(r, term, None);
    }

    /// Hands `r`'s leadership to `to` (etcd raft's `MsgTimeoutNow`): it campaigns at once.
    pub(crate) fn send_timeout_now(&mut self, r: &Replica, to: NodeId) {
        let msg = RangeMsg::TimeoutNow {
            range: r.range,
            term: r.term,
        };
        self.send(to, msg);
    }

    /// A leader's entry of its election committed: if the lease on record was transferred
    /// to this store since it started, it holds it now.
    pub(crate) fn take_transferred_lease(&mut self, r: &mut Replica) {
        let lease = r.entry.lease;
        let mine = lease.holder == self.me.0 && r.lease_in == Some(lease.seq);
        if mine && r.held.is_none() && lease.epoch == 0 {
            self.hold_expiration_lease(r, lease);
            // A lease taken late (the target led only after an election) may have little
            // left: it is extended, or upgraded, at once rather than at the next tick.
            self.request_lease_now(r);
        }
    }
}
