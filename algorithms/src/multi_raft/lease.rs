//! Range leases on a [`Step`]: acquisition and extension as lease records appended through
//! the range's Raft log, and the moment a held lease stops being usable.
//!
//! Leader leases: a new leader requests one at once (the voters that elected it had
//! stopped supporting the previous leader: `liveness.rs`); it holds it while it leads and
//! until `max_offset` before its `LeadSupportUntil`, looked at again whenever support or
//! fortification changes and on every tick.
//!
//! Expiration leases, from CockroachDB (`docs/algorithms/multi-raft.md` cites each):
//! - a lease lasts `RangeLeaseDuration` (6 s) of wall-clock time from its request;
//! - its holder extends it once half of it is left (`RangeLeaseRenewalFraction`);
//! - a new holder's lease starts only after the previous lease's expiration by the
//!   proposer's clock (`pkg/kv/kvserver/batcheval/cmd_lease_request.go`, `RequestLease`:
//!   "requested lease overlaps previous lease");
//! - a holder serves only until `max_offset` before the expiration (the stasis period:
//!   `Replica.leaseStatus` finds the lease `UNUSABLE`), so that clocks apart by less than
//!   the maximum offset never see two usable leases at one true time.

use super::config::MultiRaftVariant;
use super::messages::{Entry, Lease, LivenessRecord, RangeMsg, StoreTimer};
use super::properties::{LEADER_READY, LEASE_END, LEASE_START};
use super::replica::{Pending, Replica};
use super::store::Step;
use splitbrain_sim::{LocalNanos, NodeId};
use std::sync::Arc;

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
            r.transfer_to = None;
            self.drop_liveness_requests(r);
        }
        if let Some(lease) = self.lease_to_request(r) {
            self.propose(r, lease, true);
        }
        if r.held.is_none() {
            // Support may have come back since the lease ended.
            self.refresh_leader_lease(r);
        }
    }

    /// The lease this leader should propose now, if any.
    fn lease_to_request(&mut self, r: &Replica) -> Option<Lease> {
        if self.epoch_range(r.range) {
            return self.epoch_lease_to_request(r);
        }
        if self.leader_leases() {
            return self.leader_lease_to_request(r);
        }
        let current = r.entry.lease;
        if current.holder == self.me.0 {
            return self.own_expiration_lease_to_request(r);
        }
        self.expiration_lease_over(r.range, current).then(|| Lease {
            seq: self.next_seq(current.seq),
            ..self.expiration_lease(current.seq)
        })
    }

    /// An expiration-based lease of this store's from now, under sequence `seq`.
    fn expiration_lease(&self, seq: u64) -> Lease {
        let duration = self.config.lease_duration_ns as LocalNanos;
        Lease {
            holder: self.me.0,
            seq,
            expiration_wall_ns: self.ctx.wall_now().saturating_add(duration),
            epoch: 0,
        }
    }

    /// The expiration-based lease to propose when the record on file is this store's own
    /// expiration lease: extended under the same sequence once half of it is left while the
    /// store holds it, taken anew (next sequence) when it does not.
    pub(crate) fn own_expiration_lease_to_request(&self, r: &Replica) -> Option<Lease> {
        let current = r.entry.lease;
        let left_ns = current
            .expiration_wall_ns
            .saturating_sub(self.ctx.wall_now());
        let renew = self.config.renew_before_ns() as LocalNanos;
        match r.held {
            Some(_) => (left_ns <= renew).then(|| self.expiration_lease(current.seq)),
            None => Some(self.expiration_lease(current.seq + 1)),
        }
    }

    /// The leader lease this leader should propose now, if any. A leader lease has no
    /// expiration of its own: its leader's support is its end. A transferred lease is
    /// expiration-based (CockroachDB's `leases.leaseType` gives transfers expiration leases
    /// with leader leases too): another store's is waited out, this store's own is
    /// upgraded to a leader lease under the same sequence once its support would carry it.
    fn leader_lease_to_request(&mut self, r: &Replica) -> Option<Lease> {
        let current = r.entry.lease;
        let me = self.me.0;
        let leader_lease = |seq| Lease {
            holder: me,
            seq,
            expiration_wall_ns: LocalNanos::MAX,
            epoch: 0,
        };
        let others = current.holder != me && current.holder != u32::MAX;
        if others && !is_leader_lease(current) && !self.expiration_lease_over(r.range, current) {
            return None;
        }
        if let Some((held, _)) = r.held.filter(|&(held, _)| !is_leader_lease(held)) {
            let supported = self.ctx.wall_now() < self.usable_until(self.lead_support_until(r));
            if supported {
                return Some(leader_lease(held.seq));
            }
            // Not yet supported: the transferred lease is kept up as an expiration lease.
            return self.own_expiration_lease_to_request(r);
        }
        (!r.lease_granted).then(|| leader_lease(self.next_seq(current.seq)))
    }

    /// Whether another store's expiration-based lease `current` of `range` is over, so
    /// that this leader may propose its own: once it has expired by this store's clock
    /// (`RequestLease`; variant `EarlyLease`: at once). If not, the leader comes back right
    /// after the expiration (CockroachDB requests the lease when a request finds it
    /// expired; the model has no requests).
    pub(crate) fn expiration_lease_over(&mut self, range: u64, current: Lease) -> bool {
        let expired = self.ctx.wall_now() > current.expiration_wall_ns;
        let over = expired || self.config.variant == MultiRaftVariant::EarlyLease;
        if !over {
            self.wait_for_expiration(range, current.expiration_wall_ns.saturating_add(1));
        }
        over
    }

    /// The sequence of a lease for a new holder after a lease of sequence `seq`: the next
    /// one (`roachpb.Lease.Sequence` is raised on every change of holder); variant
    /// `ReusedSequence` keeps it.
    pub(crate) fn next_seq(&self, seq: u64) -> u64 {
        if self.config.variant == MultiRaftVariant::ReusedSequence && seq > 0 {
            seq
        } else {
            seq + 1
        }
    }

    /// The leader appends a record of `lease` to its log and sends it to the other
    /// replicas; it commits once a quorum has it. `request`: a lease request of this
    /// leader's (else the record of the lease it found, appended on election).
    pub(crate) fn propose(&mut self, r: &mut Replica, lease: Lease, request: bool) {
        let liveness = r.entry.liveness.clone();
        self.append(r, lease, request, liveness);
    }

    /// [`Step::propose`] with the liveness records the entry carries (in the liveness
    /// range; `None` elsewhere).
    pub(crate) fn append(
        &mut self,
        r: &mut Replica,
        lease: Lease,
        request: bool,
        liveness: Option<Arc<[LivenessRecord]>>,
    ) {
        assert!(r.leads(), "only the leader proposes");
        r.entry = Entry {
            term: r.term,
            index: r.entry.index + 1,
            lease,
            liveness,
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
            entry: r.entry.clone(),
        };
        self.send_to_peers(r.range, msg);
    }

    /// An append from the leader of `term`: a stale one is refused; otherwise the replica
    /// follows the sender and keeps the later of its entry and the sent one.
    pub(crate) fn on_append(&mut self, r: &mut Replica, from: NodeId, term: u64, entry: Entry) {
        let accepted = term >= r.term;
        let index = entry.index;
        if accepted {
            // The same as a heartbeat: follow the sender, restart the countdown.
            let _ = self.on_beat(r, from, term);
            let named = entry.lease.holder == self.me.0;
            if named && r.entry.lease.holder != self.me.0 {
                // A lease record naming this store after one naming another, from a leader
                // since it started: a lease transferred to it, which it may use once it
                // leads (a copy of its own record from before a restart is not one).
                r.lease_in = Some(entry.lease.seq);
            }
            if entry.position() > r.entry.position() {
                r.entry = entry;
            }
        }
        let answer = RangeMsg::AppendResp {
            range: r.range,
            term: r.term,
            accepted,
            index,
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
            let acks = pending.acks;
            if acks.count_ones() as usize >= self.config.quorum() && self.transfer_acked(r, acks) {
                self.commit(r);
            }
        }
    }

    /// The pending record is on a quorum (with a transfer's target among it): a transferred
    /// lease hands the leadership over; the entry of an election ends the election (and
    /// brings a lease transferred to this store); this store's own lease is held now.
    fn commit(&mut self, r: &mut Replica) {
        let pending = r.pending.take().expect("a commit is of a pending record");
        r.committed_index = pending.index;
        let lease = r.entry.lease;
        if r.transfer_to.is_some() {
            self.hand_over(r);
            return;
        }
        let election_entry = !pending.request && pending.index == r.first_index_of_term;
        if election_entry {
            // The entry it appended on election is committed: the election is over (the
            // failover table's "Election (3x RTT: prevote, vote, append)").
            self.ctx.observe(LEADER_READY, (r.range, r.term));
        }
        self.liveness_committed(r, pending.index);
        if election_entry {
            self.take_transferred_lease(r);
        }
        // A lease found in the log on election is not used, even if it names this store: it
        // may predate a restart (`Replica.minLeaseProposedTS`).
        if !pending.request || lease.holder != self.me.0 {
            return;
        }
        if self.epoch_range(r.range) {
            self.hold_epoch_lease(r, lease);
        } else if self.leader_leases() {
            r.lease_granted = true;
            self.refresh_leader_lease(r);
        } else {
            self.hold_expiration_lease(r, lease);
        }
    }

    /// The store holds expiration-based `lease` until the stasis before its expiration.
    pub(crate) fn hold_expiration_lease(&mut self, r: &mut Replica, lease: Lease) {
        let usable_until = self.usable_until(lease.expiration_wall_ns);
        self.hold(r, lease, usable_until);
    }

    /// A leader's leader lease against its support now: it starts, moves its end, or ends.
    pub(crate) fn refresh_leader_lease(&mut self, r: &mut Replica) {
        if !self.leader_leases() || !r.leads() || !r.lease_granted {
            return;
        }
        let usable_until = self.usable_until(self.lead_support_until(r));
        let lease = r.entry.lease;
        assert_eq!(
            lease.holder, self.me.0,
            "a granted leader lease is the leader's"
        );
        if self.ctx.wall_now() < usable_until {
            self.hold(r, lease, usable_until);
        } else if r.held.is_some() {
            self.end_lease(r);
        }
    }

    /// The store holds `lease` (new, extended, or with its support moved) until
    /// `usable_until` on its wall clock.
    fn hold(&mut self, r: &mut Replica, lease: Lease, usable_until: LocalNanos) {
        if self.ctx.wall_now() >= usable_until {
            return;
        }
        if r.held.is_some_and(|(held, _)| held.seq != lease.seq) {
            // A new lease of its own while it still holds an older one (only a broken
            // variant takes a lease over one it has not waited out): the old one ends.
            self.end_lease(r);
        }
        match r.held {
            Some((_, key)) => {
                // Its own lease, still held, extended under the same sequence.
                let removed = self.volatile.lease_ends.remove(&(key, r.range));
                assert!(removed, "a held lease has its end on file");
            }
            None => self.ctx.observe(LEASE_START, (r.range, lease.seq)),
        }
        r.held = Some((lease, usable_until));
        self.volatile.lease_ends.insert((usable_until, r.range));
        self.arm_lease_timer();
    }

    /// The wall-clock moment a lease ending at `end_wall_ns` stops being usable: the
    /// stasis period before it.
    fn usable_until(&self, end_wall_ns: LocalNanos) -> LocalNanos {
        let offset = self.config.max_offset_ns as LocalNanos;
        end_wall_ns.saturating_sub(offset)
    }

    /// `r`'s lease reached the end on file. An expiration lease ends. A leader lease's end on
    /// file is a lower bound, not moved on every support grant (that cost 0.95 s of a
    /// 10,000-range run instead of 0.12 s): support only grows within an epoch and while
    /// the fortifiers stay (a lost fortifier or a new epoch looks at the lease at once), so
    /// the lease is looked at again here, and ends only if its support has too.
    pub(crate) fn lease_end_due(&mut self, r: &mut Replica) {
        if r.held.is_some_and(|(held, _)| is_leader_lease(held)) && self.leader_leases() {
            self.refresh_leader_lease(r);
        } else {
            self.end_lease(r);
        }
    }

    /// `r`'s lease has reached its end on this store's clock.
    pub(crate) fn end_lease(&mut self, r: &mut Replica) {
        let (held, key) = r.held.take().expect("a lease on file is held");
        // An epoch lease ends with its holder's liveness record, not at an end on file.
        let removed = held.epoch > 0 || self.volatile.lease_ends.remove(&(key, r.range));
        assert!(removed, "a held lease has its end on file");
        self.ctx.observe(LEASE_END, (r.range, held.seq));
    }

    /// Comes back to `range` at `at_wall_ns` on this store's clock (one timer for every
    /// range waited on: O(log R) per wait).
    fn wait_for_expiration(&mut self, range: u64, at_wall_ns: LocalNanos) {
        let waits = &mut self.volatile.lease_waits;
        if waits.insert((at_wall_ns, range)) && waits.first() == Some(&(at_wall_ns, range)) {
            self.ctx.set_wall_timer(StoreTimer::LeaseWait, at_wall_ns);
        }
    }

    /// Arms the `LeaseWait` timer at the earliest wait, if any.
    pub(crate) fn arm_lease_wait(&mut self) {
        if let Some(&(at, _)) = self.volatile.lease_waits.first() {
            self.ctx.set_wall_timer(StoreTimer::LeaseWait, at);
        }
    }

    /// A leader with no proposal under way asks for its lease now, if it is time.
    pub(crate) fn request_lease_now(&mut self, r: &mut Replica) {
        if !r.leads() || r.pending.is_some() {
            return;
        }
        if let Some(lease) = self.lease_to_request(r) {
            self.propose(r, lease, true);
        }
    }

    /// Arms the `LeaseEnd` timer at the earliest end on file, if it is not armed there.
    pub(crate) fn arm_lease_timer(&mut self) {
        let first = self.volatile.lease_ends.first().map(|&(at, _)| at);
        if first == self.volatile.lease_timer_at {
            return;
        }
        match first {
            Some(at) => self.ctx.set_wall_timer(StoreTimer::LeaseEnd, at),
            None => self.ctx.cancel_timer(StoreTimer::LeaseEnd),
        }
        self.volatile.lease_timer_at = first;
    }
}

/// Whether `lease` is a leader lease: no expiration of its own and no epoch (with leader
/// leases, a transferred lease is expiration-based until its holder upgrades it).
fn is_leader_lease(lease: Lease) -> bool {
    lease.expiration_wall_ns == LocalNanos::MAX && lease.epoch == 0
}
