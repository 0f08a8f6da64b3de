//! Epoch-based range leases on node liveness, on a [`Step`] (CockroachDB's
//! `pkg/kv/kvserver/liveness` and the epoch branch of `pkg/kv/kvserver/replica_range_lease.go`):
//! - every store keeps a liveness record `(epoch, expiration)` in the liveness range (here
//!   the first range, which takes expiration-based leases, as CockroachDB's liveness range
//!   does: an epoch lease on it would depend on itself). The store heartbeats it every
//!   `liveness_heartbeat` (3 s) to `now + liveness_duration` (6 s): a conditional put that
//!   the liveness range's leaseholder evaluates and commits through the range's log
//!   (`NodeLiveness.heartbeatInternal`); an unanswered heartbeat is sent again a second later;
//! - an epoch lease `(holder, epoch)` is usable by its holder while the record it last
//!   heard committed has that epoch, until `max_offset` before its expiration (the stasis,
//!   as for the other kinds);
//! - a leader that wants a range whose lease belongs to another store first asks the
//!   liveness range to raise that store's epoch (`NodeLiveness.IncrementEpoch`), which the
//!   leaseholder of the liveness range grants only once the record has expired by its
//!   clock; then it proposes its own lease;
//! - the holder need not lead the range: a leader that hears from the leaseholder hands it
//!   the leadership (`Replica.maybeTransferRaftLeadershipToLeaseholderLocked`), and one
//!   that cannot reach it cannot move the lease while the holder's record stays live. That
//!   is the hazard leader leases remove.

use super::config::{MultiRaftLease, MultiRaftVariant};
use super::messages::{Lease, LivenessRecord, StoreMsg, StoreTimer};
use super::placement;
use super::properties::LEASE_START;
use super::replica::Replica;
use super::store::{Step, FIRST_RANGE};
use splitbrain_sim::{LocalNanos, NodeId};
use std::sync::Arc;

/// The range holding the liveness records: the first range.
pub(crate) const LIVENESS_RANGE: u64 = FIRST_RANGE;

/// A store's own liveness record, as the liveness range last answered it.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct OwnLiveness {
    /// Its epoch (0: not known yet, after a start).
    pub(crate) epoch: u64,
    /// The expiration of the record last heard committed in that epoch.
    pub(crate) until_wall_ns: Option<LocalNanos>,
    /// When the next heartbeat is due.
    pub(crate) next_due_wall_ns: LocalNanos,
    /// When the heartbeat waiting for its answer was sent, if one is.
    pub(crate) sent_wall_ns: Option<LocalNanos>,
}

/// A request the liveness range's leaseholder evaluates.
#[derive(Copy, Clone, Debug)]
pub(crate) enum LivenessOp {
    /// `from` extends its record to `expiration_wall_ns` if its epoch is `epoch`.
    Heartbeat {
        epoch: u64,
        expiration_wall_ns: LocalNanos,
    },
    /// Raise `store`'s epoch past `epoch` if its record has expired.
    Increment { store: u32, epoch: u64 },
}

impl Step<'_, '_, '_> {
    /// Whether this run takes epoch-based leases.
    pub(crate) fn epoch_leases(&self) -> bool {
        self.config.lease == MultiRaftLease::Epoch
    }

    /// Whether `range` takes epoch-based leases: every range but the liveness range.
    pub(crate) fn epoch_range(&self, range: u64) -> bool {
        self.epoch_leases() && range != LIVENESS_RANGE
    }

    /// Whether this store's own record is usable now: known, and before its stasis.
    pub(crate) fn own_liveness_usable(&self) -> bool {
        let own = self.volatile.own_liveness;
        let offset = self.config.max_offset_ns as LocalNanos;
        own.until_wall_ns
            .is_some_and(|until| self.ctx.wall_now() < until.saturating_sub(offset))
    }

    /// Sends `msg` to the liveness range's leaseholder, or to every replica of it when the
    /// store knows no leader there.
    fn send_to_liveness_range(&mut self, msg: StoreMsg) {
        let targets: Vec<NodeId> = match self.liveness_leader {
            Some(leader) => vec![leader],
            None => {
                placement::replicas(LIVENESS_RANGE, self.stores, self.config.replication).collect()
            }
        };
        for to in targets {
            self.ctx.send(to, msg.clone());
        }
    }

    /// The liveness timer: a heartbeat when one is due or the last one went unanswered.
    pub(crate) fn on_liveness_timer(&mut self) {
        let now = self.ctx.wall_now();
        let own = self.volatile.own_liveness;
        let unanswered = own.sent_wall_ns.is_some();
        if unanswered || now >= own.next_due_wall_ns {
            self.send_liveness_heartbeat();
        }
        let retry_ns = self.config.liveness_retry_ns();
        self.ctx.set_timer(StoreTimer::Liveness, retry_ns);
    }

    fn send_liveness_heartbeat(&mut self) {
        let now = self.ctx.wall_now();
        let duration = self.config.liveness_duration_ns() as LocalNanos;
        let own = &mut self.volatile.own_liveness;
        own.sent_wall_ns = Some(now);
        let msg = StoreMsg::LivenessHeartbeat {
            epoch: own.epoch,
            expiration_wall_ns: now.saturating_add(duration),
        };
        self.send_to_liveness_range(msg);
    }

    /// The liveness range answered this store's heartbeat.
    pub(crate) fn on_liveness_result(
        &mut self,
        replicas: &mut [Replica],
        extended: bool,
        record: LivenessRecord,
    ) {
        let own = self.volatile.own_liveness;
        if extended && record.epoch == own.epoch {
            let sent = own.sent_wall_ns.unwrap_or(self.ctx.wall_now());
            let heartbeat = self.config.liveness_heartbeat_ns() as LocalNanos;
            let until = own.until_wall_ns.max(Some(record.expiration_wall_ns));
            self.volatile.own_liveness = OwnLiveness {
                until_wall_ns: until,
                next_due_wall_ns: sent.saturating_add(heartbeat),
                sent_wall_ns: None,
                ..own
            };
            self.resume_lapsed_leases(replicas);
            self.arm_liveness_end();
        } else if record.epoch > own.epoch {
            // Raised by another store (or first heard after a start): every lease of an
            // older epoch is gone for good; heartbeat again in the new epoch at once.
            self.end_epoch_leases(replicas);
            self.volatile.epoch_lapsed.clear();
            self.volatile.own_liveness = OwnLiveness {
                epoch: record.epoch,
                ..OwnLiveness::default()
            };
            self.send_liveness_heartbeat();
        }
    }

    /// Arms the `LivenessEnd` timer at the stasis of this store's record.
    fn arm_liveness_end(&mut self) {
        if let Some(until) = self.volatile.own_liveness.until_wall_ns {
            let offset = self.config.max_offset_ns as LocalNanos;
            let at = until.saturating_sub(offset);
            self.ctx.set_wall_timer(StoreTimer::LivenessEnd, at);
        }
    }

    /// The store's record reached its stasis (unless a heartbeat moved it since): every
    /// epoch lease it holds stops being usable, until a heartbeat in the same epoch
    /// commits again.
    pub(crate) fn on_liveness_end(&mut self, replicas: &mut [Replica]) {
        if self.own_liveness_usable() {
            return;
        }
        let ended = self.end_epoch_leases(replicas);
        self.volatile.epoch_lapsed.extend(ended);
    }

    /// Ends every epoch lease this store holds; returns them with their replicas' places.
    fn end_epoch_leases(&mut self, replicas: &mut [Replica]) -> Vec<(usize, Lease)> {
        let mut ended = Vec::new();
        for (slot, r) in replicas.iter_mut().enumerate() {
            if let Some((lease, _)) = r.held.filter(|(lease, _)| lease.epoch > 0) {
                ended.push((slot, lease));
                self.end_lease(r);
            }
        }
        ended
    }

    /// A heartbeat in the same epoch committed after the record's stasis: the leases that
    /// lapsed with it are usable again (no other store can have taken them: that takes an
    /// increment of this epoch first, which the heartbeat's success rules out).
    fn resume_lapsed_leases(&mut self, replicas: &mut [Replica]) {
        let epoch = self.volatile.own_liveness.epoch;
        for (slot, lease) in std::mem::take(&mut self.volatile.epoch_lapsed) {
            let r = &mut replicas[slot];
            if lease.epoch == epoch && r.entry.lease == lease && r.held.is_none() {
                self.hold_epoch_lease(r, lease);
            }
        }
    }

    /// The store holds epoch lease `lease` of `r` while its record lasts (not at all if
    /// the record is not usable now or is of another epoch).
    pub(crate) fn hold_epoch_lease(&mut self, r: &mut Replica, lease: Lease) {
        if !self.own_liveness_usable() || lease.epoch != self.volatile.own_liveness.epoch {
            return;
        }
        match r.held {
            Some((held, key)) if held.seq == lease.seq && held.epoch == 0 => {
                // The upgrade of a transferred expiration-based lease under the same
                // sequence (`roachpb.Lease.Equivalent`): held without a break.
                let removed = self.volatile.lease_ends.remove(&(key, r.range));
                assert!(removed, "a held expiration lease has its end on file");
                r.held = Some((lease, LocalNanos::MAX));
                self.arm_lease_timer();
                return;
            }
            Some(_) => self.end_lease(r),
            None => {}
        }
        r.held = Some((lease, LocalNanos::MAX));
        self.ctx.observe(LEASE_START, (r.range, lease.seq));
    }

    /// The epoch lease a leader of an epoch range should propose now, if any; asks the
    /// liveness range to raise another holder's epoch when that is what stands in the way.
    pub(crate) fn epoch_lease_to_request(&mut self, r: &Replica) -> Option<Lease> {
        if !self.own_liveness_usable() {
            return None;
        }
        let current = r.entry.lease;
        let mine = Lease {
            holder: self.me.0,
            seq: self.next_seq(current.seq),
            expiration_wall_ns: LocalNanos::MAX,
            epoch: self.volatile.own_liveness.epoch,
        };
        if current.holder == u32::MAX || current.holder == self.me.0 {
            return match r.held {
                None => Some(mine),
                Some((held, _)) if held.epoch == 0 => self
                    .epoch_upgrade(held, mine)
                    .or_else(|| self.own_expiration_lease_to_request(r)),
                Some(_) => None,
            };
        }
        if current.epoch == 0 {
            // Another store's transferred expiration-based lease: waited out by its
            // expiration.
            return self.expiration_lease_over(r.range, current).then_some(mine);
        }
        let holder = current.holder as usize;
        // Variant EarlyLease: the new holder does not wait for the old holder's epoch to be
        // raised.
        let early = self.config.variant == MultiRaftVariant::EarlyLease;
        if early || self.volatile.epochs_seen[holder] > current.epoch {
            return Some(mine);
        }
        self.ask_increment(current.holder, current.epoch);
        None
    }

    /// The upgrade of a transferred expiration-based lease `held` to the epoch lease `mine`
    /// under the same sequence (`kv.transfer_expiration_leases_first.enabled`), once the
    /// store's record lasts at least as long (`roachpb.Lease.Equivalent`: "this promotion is
    /// only proposed if the liveness expiration is later than previous expiration"): a
    /// store that takes the epoch lease by raising the epoch must not find the expiration
    /// lease still running.
    fn epoch_upgrade(&self, held: Lease, mine: Lease) -> Option<Lease> {
        let until = self.volatile.own_liveness.until_wall_ns;
        let outlasts = until.is_some_and(|u| u >= held.expiration_wall_ns);
        outlasts.then_some(Lease {
            seq: held.seq,
            ..mine
        })
    }

    /// Asks the liveness range to raise `store`'s epoch past `epoch`: not before the
    /// moment on file for it (a retry interval after the last ask, or the record's
    /// expiration the liveness range answered).
    fn ask_increment(&mut self, store: u32, epoch: u64) {
        let now = self.ctx.wall_now();
        let not_before = self.volatile.increments_asked.get(&(store, epoch));
        if not_before.is_some_and(|&at| now < at) {
            return;
        }
        let retry = self.config.liveness_retry_ns() as LocalNanos;
        let again = now.saturating_add(retry);
        self.volatile.increments_asked.insert((store, epoch), again);
        self.send_to_liveness_range(StoreMsg::IncrementEpoch { store, epoch });
    }

    /// The `IncrementWait` timer: the records this store waits on have expired; it asks
    /// again at once (CockroachDB raises the epoch when a request finds the record expired).
    pub(crate) fn on_increment_wait(&mut self) {
        let now = self.ctx.wall_now();
        let due: Vec<(u32, u64)> = (self.volatile.increments_asked.iter())
            .filter(|&(&(store, epoch), &at)| {
                at <= now && self.volatile.epochs_seen[store as usize] <= epoch
            })
            .map(|(&key, _)| key)
            .collect();
        for (store, epoch) in due {
            self.ask_increment(store, epoch);
        }
        self.arm_increment_wait();
    }

    /// Arms the `IncrementWait` timer at the earliest moment an increment may be asked for
    /// again (one timer for every store waited on).
    fn arm_increment_wait(&mut self) {
        let now = self.ctx.wall_now();
        let next = (self.volatile.increments_asked.values().copied())
            .filter(|&at| at > now)
            .min();
        if let Some(at) = next {
            self.ctx.set_wall_timer(StoreTimer::IncrementWait, at);
        }
    }

    /// The liveness range answered an increment: `store`'s epoch is now `epoch`, its record
    /// expiring at `expiration_wall_ns`. Not raised: the store asks again right after that
    /// expiration. Raised: the ranges this store leads whose lease was `store`'s in an
    /// older epoch take a lease now.
    pub(crate) fn on_epoch_result(
        &mut self,
        replicas: &mut [Replica],
        store: u32,
        epoch: u64,
        expiration_wall_ns: LocalNanos,
    ) {
        let mut asked = self.volatile.increments_asked.keys();
        if asked.any(|&(s, e)| s == store && e >= epoch) {
            let at = expiration_wall_ns.saturating_add(1);
            self.volatile.increments_asked.insert((store, epoch), at);
            self.arm_increment_wait();
        }
        let seen = &mut self.volatile.epochs_seen[store as usize];
        if epoch <= *seen {
            return;
        }
        *seen = epoch;
        self.volatile
            .increments_asked
            .retain(|&(s, e), _| s != store || e >= epoch);
        for r in replicas.iter_mut() {
            if r.entry.lease.holder == store && r.entry.lease.epoch < epoch {
                self.request_lease_now(r);
            }
        }
    }

    /// A leader of an epoch range that heard the leaseholder within the last election
    /// timeout hands it the leadership, unless its lease is known to be invalid.
    pub(crate) fn maybe_transfer_to_leaseholder(&mut self, r: &Replica) {
        if !self.epoch_range(r.range) {
            return;
        }
        let lease = r.entry.lease;
        if lease.holder == u32::MAX || lease.holder == self.me.0 || r.transfer_to.is_some() {
            return;
        }
        let holder = NodeId(lease.holder);
        let heard = r.heard & self.bit(holder, r.range) != 0;
        let valid = if lease.epoch == 0 {
            // A transferred expiration-based lease.
            self.ctx.wall_now() < lease.expiration_wall_ns
        } else {
            self.volatile.epochs_seen[holder.index()] <= lease.epoch
        };
        if heard && valid {
            self.send_timeout_now(r, holder);
        }
    }

    /// The liveness range's leaseholder receives a request; another store ignores it (the
    /// requester asks again).
    pub(crate) fn on_liveness_request(&mut self, r: &mut Replica, from: NodeId, op: LivenessOp) {
        if !(r.leads() && r.held.is_some()) {
            return;
        }
        self.volatile.liveness_queue.push((from, op));
        if r.pending.is_none() {
            self.propose_liveness(r);
        }
    }

    /// Evaluates the queued requests against the latest records: the writes go out as one
    /// entry, answered once it commits; the others are answered now if those records are
    /// committed, else with the writes (an entry goes out even without a write, to commit
    /// them).
    pub(crate) fn propose_liveness(&mut self, r: &mut Replica) {
        let ops = std::mem::take(&mut self.volatile.liveness_queue);
        if ops.is_empty() {
            return;
        }
        let mut table: Vec<LivenessRecord> = match &r.entry.liveness {
            Some(table) => table.to_vec(),
            None => vec![LivenessRecord::INITIAL; self.stores],
        };
        let now = self.ctx.wall_now();
        // Records read from an entry not yet committed (a proposal given up) may be lost:
        // every answer then waits for the next entry, which commits them with it.
        let settled = r.entry.index <= r.committed_index;
        let mut deferred = Vec::new();
        let mut answer = |to: NodeId, msg: StoreMsg, write: bool| {
            if write || !settled {
                deferred.push((to, msg));
            } else {
                self.ctx.send(to, msg);
            }
        };
        for (from, op) in ops {
            match op {
                LivenessOp::Heartbeat {
                    epoch,
                    expiration_wall_ns,
                } => {
                    let record = &mut table[from.index()];
                    let extended = epoch == record.epoch;
                    if extended {
                        record.expiration_wall_ns =
                            record.expiration_wall_ns.max(expiration_wall_ns);
                    }
                    let result = StoreMsg::LivenessResult {
                        extended,
                        record: *record,
                    };
                    answer(from, result, extended);
                }
                LivenessOp::Increment { store, epoch } => {
                    let record = &mut table[store as usize];
                    let raise = record.epoch == epoch && record.expiration_wall_ns < now;
                    if raise {
                        record.epoch += 1;
                    }
                    let result = StoreMsg::EpochResult {
                        store,
                        epoch: record.epoch,
                        expiration_wall_ns: record.expiration_wall_ns,
                    };
                    answer(from, result, raise);
                }
            }
        }
        if deferred.is_empty() {
            return;
        }
        let lease = r.entry.lease;
        self.volatile.liveness_inflight = Some((r.entry.index + 1, deferred));
        self.append(r, lease, false, Some(Arc::from(table)));
    }

    /// An entry of the liveness range committed at `index`: the answers waiting for it go
    /// out, and the requests queued meanwhile are evaluated.
    pub(crate) fn liveness_committed(&mut self, r: &mut Replica, index: u64) {
        if r.range != LIVENESS_RANGE || !self.epoch_leases() {
            return;
        }
        if let Some((at, answers)) = self.volatile.liveness_inflight.take() {
            if at == index {
                for (to, answer) in answers {
                    self.ctx.send(to, answer);
                }
            } else {
                self.volatile.liveness_inflight = Some((at, answers));
            }
        }
        if r.pending.is_none() {
            self.propose_liveness(r);
        }
    }

    /// The liveness range's leader gave up or lost its proposals: the requesters ask again.
    pub(crate) fn drop_liveness_requests(&mut self, r: &Replica) {
        if r.range == LIVENESS_RANGE {
            self.volatile.liveness_queue.clear();
            self.volatile.liveness_inflight = None;
        }
    }
}
