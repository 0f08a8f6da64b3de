//! Expiration-based range leases on a [`Step`]: acquisition and extension as lease records
//! appended through the range's Raft log, and the moment a held lease stops being usable.
//!
//! The rules, from CockroachDB (`docs/algorithms/multi-raft.md` cites each):
//! - a lease lasts `RangeLeaseDuration` (6 s) of wall-clock time from its request;
//! - its holder extends it once half of it is left (`RangeLeaseRenewalFraction`);
//! - a new holder's lease starts only after the previous lease's expiration by the new
//!   holder's clock (`pkg/kv/kvserver/replica_range_lease.go`, `requestLeaseAsync`: a
//!   lease for another store is requested only once the current one is expired);
//! - a holder serves only until `max_offset` before the expiration (the stasis period,
//!   `LeaseStatus` `UNUSABLE`), so that clocks apart by less than the maximum offset never
//!   see two usable leases at one true time.

use super::config::MultiRaftVariant;
use super::messages::{Entry, Lease, RangeMsg};
use super::replica::{Pending, Replica};
use super::store::Step;
use splitbrain_sim::{LocalNanos, NodeId};

impl Step<'_, '_, '_> {
    /// A leader's lease work on its tick: give up a proposal older than an election
    /// timeout, then request or extend the lease if it is time.
    pub(crate) fn tick_lease(&mut self, r: &mut Replica) {
        if let Some(pending) = r.pending.as_mut() {
            pending.ticks += 1;
            if pending.ticks <= self.config.election_ticks {
                return;
            }
            r.pending = None;
        }
        if let Some(lease) = self.lease_to_request(r) {
            self.propose(r, lease, true);
        }
    }

    /// The lease this leader should propose now, if any.
    fn lease_to_request(&mut self, r: &Replica) -> Option<Lease> {
        let now = self.ctx.wall_now();
        let current = r.entry.lease;
        let expiration_wall_ns = now.saturating_add(self.config.lease_duration_ns as LocalNanos);
        let me = self.me.0;
        if current.holder == me {
            let renew = self.config.renew_before_ns() as LocalNanos;
            let due = r.held.is_none() || current.expiration_wall_ns.saturating_sub(now) <= renew;
            // Its own lease is extended under the same sequence while it still holds it.
            let seq = if r.held.is_some() {
                current.seq
            } else {
                current.seq + 1
            };
            return due.then_some(Lease {
                holder: me,
                seq,
                expiration_wall_ns,
            });
        }
        let expired = now > current.expiration_wall_ns;
        let may = expired || self.config.variant == MultiRaftVariant::EarlyLease;
        may.then_some(Lease {
            holder: me,
            seq: current.seq + 1,
            expiration_wall_ns,
        })
    }

    /// The leader appends a record of `lease` to its log and sends it to the other
    /// replicas; it commits once a quorum has it. `request`: a lease request of this
    /// leader's (else the record of the lease it found, appended on election).
    pub(crate) fn propose(&mut self, r: &mut Replica, lease: Lease, request: bool) {
        assert!(r.leads(), "only the leader proposes");
        r.entry = Entry {
            term: r.term,
            index: r.entry.index + 1,
            lease,
        };
        r.pending = Some(Pending {
            index: r.entry.index,
            acks: self.bit(self.me, r.range),
            ticks: 0,
            request,
        });
        if self.config.quorum() == 1 {
            self.commit(r);
            return;
        }
        let msg = RangeMsg::Append {
            range: r.range,
            term: r.term,
            entry: r.entry,
        };
        self.send_to_peers(r.range, msg);
    }

    /// An append from the leader of `term`: a stale one is refused; otherwise the replica
    /// follows the sender and keeps the later of its entry and the sent one.
    pub(crate) fn on_append(&mut self, r: &mut Replica, from: NodeId, term: u64, entry: Entry) {
        let accepted = term >= r.term;
        if accepted {
            // The same as a heartbeat: follow the sender, restart the countdown.
            self.on_beat(r, from, term);
            if entry.position() > r.entry.position() {
                r.entry = entry;
            }
        }
        let answer = RangeMsg::AppendResp {
            range: r.range,
            term: r.term,
            accepted,
            index: entry.index,
        };
        self.send(from, answer);
    }

    /// An answer to an append: a quorum of acknowledgements commits the pending record.
    pub(crate) fn on_append_resp(
        &mut self,
        r: &mut Replica,
        from: NodeId,
        term: u64,
        accepted: bool,
        index: u64,
    ) {
        if term > r.term {
            self.become_follower(r, term, None);
            return;
        }
        if !r.leads() || term != r.term {
            return;
        }
        r.heard |= self.bit(from, r.range);
        let Some(pending) = r.pending.as_mut() else {
            return;
        };
        if accepted && pending.index == index {
            pending.acks |= self.bit(from, r.range);
            if pending.acks.count_ones() as usize >= self.config.quorum() {
                self.commit(r);
            }
        }
    }

    /// The pending record is on a quorum: if it is this store's lease, the store now holds
    /// it.
    fn commit(&mut self, r: &mut Replica) {
        let pending = r.pending.take().expect("a commit is of a pending record");
        let lease = r.entry.lease;
        // A lease found in the log on election is not used, even if it names this store: it
        // may predate a restart (`Replica.minLeaseProposedTS`).
        if pending.request && lease.holder == self.me.0 {
            self.apply_lease(r, lease);
        }
    }

    /// The store holds `lease` (new or extended) until `max_offset` before it expires.
    fn apply_lease(&mut self, r: &mut Replica, lease: Lease) {
        let usable_until = self.usable_until(lease);
        if self.ctx.wall_now() >= usable_until {
            return;
        }
        match r.held {
            Some(held) => {
                // Only its own lease, still held, is extended under the same sequence.
                assert_eq!(held.seq, lease.seq, "an extension keeps the sequence");
                let removed =
                    (self.volatile.lease_ends).remove(&(self.usable_until(held), r.range));
                assert!(removed, "a held lease has its end on file");
            }
            None => self.ctx.observe("lease_start", (r.range, lease.seq)),
        }
        r.held = Some(lease);
        self.volatile.lease_ends.insert((usable_until, r.range));
        self.arm_lease_timer();
    }

    /// The wall-clock moment `lease` stops being usable: the stasis period before its
    /// expiration.
    fn usable_until(&self, lease: Lease) -> LocalNanos {
        let offset = self.config.max_offset_ns as LocalNanos;
        lease.expiration_wall_ns.saturating_sub(offset)
    }

    /// `r`'s lease has reached its end on this store's clock.
    pub(crate) fn end_lease(&mut self, r: &mut Replica) {
        let held = r.held.take().expect("a lease on file is held");
        let removed = (self.volatile.lease_ends).remove(&(self.usable_until(held), r.range));
        assert!(removed, "a held lease has its end on file");
        self.ctx.observe("lease_end", (r.range, held.seq));
    }

    /// Arms the `LeaseEnd` timer at the earliest end on file, if it is not armed there.
    pub(crate) fn arm_lease_timer(&mut self) {
        let first = self.volatile.lease_ends.first().map(|&(at, _)| at);
        if first == self.volatile.lease_timer_at {
            return;
        }
        match first {
            Some(at) => self
                .ctx
                .set_wall_timer(super::messages::StoreTimer::LeaseEnd, at),
            None => self.ctx.cancel_timer(super::messages::StoreTimer::LeaseEnd),
        }
        self.volatile.lease_timer_at = first;
    }
}
