//! A store (a CockroachDB node with one store): every replica it holds, its Raft tick, the
//! coalesced heartbeats, and the [`Process`] entry points. Per-range transitions live in
//! `election.rs` and `lease.rs`, on a [`Step`]: one handler's view of the store.

use super::config::{MultiRaftConfig, MultiRaftLease};
use super::epoch::{LivenessOp, OwnLiveness, LIVENESS_RANGE};
use super::liveness::Support;
use super::messages::{Beat, BeatResp, Lease, LeaseCount, RangeMsg, StoreMsg, StoreTimer};
use super::placement;
use super::properties::MESSAGES_SENT;
use super::replica::{position, Replica};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process};
use std::collections::{BTreeMap, BTreeSet};

/// The handler context of a store.
pub(crate) type StoreCtx<'a> = Ctx<'a, StoreMsg, StoreTimer>;

/// The range whose leader the engine's single-leader checks watch: CockroachDB's first
/// range (it holds the node-liveness records and the meta ranges' addressing). Its
/// leadership is claimed to the engine (`election_safety`, `liveness`, the workload's
/// writes); every range, this one included, is checked by the algorithm's own properties.
pub const FIRST_RANGE: u64 = 0;

/// A store's state that a restart loses, besides its replicas' volatile fields.
#[derive(Clone, Debug)]
pub(crate) struct StoreVolatile {
    /// Raft ticks since the store started: heartbeats go out every `heartbeat_ticks`.
    pub(crate) ticks: u64,
    /// The leases it holds, by the wall-clock moment each stops being usable, with range.
    pub(crate) lease_ends: BTreeSet<(LocalNanos, u64)>,
    /// Where the `LeaseEnd` timer is armed, if it is.
    pub(crate) lease_timer_at: Option<LocalNanos>,
    /// Expiration leases: the ranges this store leads that wait for another store's lease
    /// to expire, by the wall-clock moment it has.
    pub(crate) lease_waits: BTreeSet<(LocalNanos, u64)>,
    /// For a store without a replica of the first range: its leader, as last gossiped
    /// (`Replica.maybeGossipFirstRange`), with its term.
    pub(crate) first_range_gossip: Option<(u64, NodeId)>,
    /// Store liveness, per other store: the support it granted this one, as last heard.
    pub(crate) support_from: Vec<Support>,
    /// Node liveness (epoch leases): this store's own record, as last answered.
    pub(crate) own_liveness: OwnLiveness,
    /// Node liveness, at the liveness range's leaseholder: requests waiting for the
    /// range's next entry.
    pub(crate) liveness_queue: Vec<(NodeId, LivenessOp)>,
    /// Node liveness, at the liveness range's leaseholder: the index of the entry under
    /// way and the answers that wait for it to commit.
    pub(crate) liveness_inflight: Option<(u64, Vec<(NodeId, StoreMsg)>)>,
    /// Node liveness, per store: the highest epoch this store heard it has.
    pub(crate) epochs_seen: Vec<u64>,
    /// Node liveness: increments asked for, by (store, epoch), with the moment not to ask
    /// again before.
    pub(crate) increments_asked: BTreeMap<(u32, u64), LocalNanos>,
    /// Node liveness: the epoch leases (with their replicas' places) that stopped being
    /// usable when this store's record reached its stasis; usable again if a heartbeat in
    /// the same epoch commits.
    pub(crate) epoch_lapsed: Vec<(usize, Lease)>,
    /// How many leases this store held at its last tick (sent on its heartbeats).
    pub(crate) leases_held: u32,
    /// Lease rebalancing, per store: its latest lease count this store heard of, directly
    /// or relayed, with the monotonic moment a newer version last arrived (CockroachDB's
    /// store pool, fed by gossip).
    pub(crate) lease_counts: Vec<Option<(LeaseCount, LocalNanos)>>,
    /// Lease rebalancing: the replica the scanner visits next.
    pub(crate) scan_cursor: usize,
    /// Lease rebalancing: when the scan's cycle started, on the monotonic clock.
    pub(crate) scan_started_mono_ns: LocalNanos,
    /// Lease rebalancing: when this store last started a lease transfer, on the monotonic
    /// clock.
    pub(crate) last_transfer_mono_ns: Option<LocalNanos>,
}

impl StoreVolatile {
    /// Every store's lease count this store knows, its own included, to gossip.
    pub(crate) fn known_lease_counts(&self) -> Vec<LeaseCount> {
        self.lease_counts
            .iter()
            .flatten()
            .map(|&(count, _)| count)
            .collect()
    }

    /// The volatile state of a store of a cluster of `stores`, as it starts.
    fn new(stores: usize) -> Self {
        Self {
            ticks: 0,
            lease_ends: BTreeSet::new(),
            lease_timer_at: None,
            lease_waits: BTreeSet::new(),
            first_range_gossip: None,
            support_from: vec![Support::NONE; stores],
            own_liveness: OwnLiveness::default(),
            liveness_queue: Vec::new(),
            liveness_inflight: None,
            epochs_seen: vec![0; stores],
            increments_asked: BTreeMap::new(),
            epoch_lapsed: Vec::new(),
            leases_held: 0,
            lease_counts: vec![None; stores],
            scan_cursor: 0,
            scan_started_mono_ns: 0,
            last_transfer_mono_ns: None,
        }
    }
}

/// One store as a pure state machine.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) id: NodeId,
    pub(crate) stores: usize,
    pub(crate) config: MultiRaftConfig,
    /// Every replica it holds, sorted by range.
    pub(crate) replicas: Vec<Replica>,
    /// Where each range's replica is in `replicas`: arithmetic on the placement rule, one
    /// read. (A binary search over `replicas` cost 75% of a 100,000-range run in cache
    /// misses: docs/performance.md, "Many ranges".)
    slots: placement::SlotIndex,
    /// Store liveness, per other store, kept across a restart: the support this store
    /// promised it (CockroachDB persists a supporter's promises).
    support_for: Vec<Support>,
    /// Store liveness, kept across a restart: this store's incarnation, raised by every
    /// restart (CockroachDB increments a requester's epoch when its store starts), so that
    /// its supporters start a new epoch and the fortifications of its leaderships from
    /// before the restart end.
    incarnation: u64,
    /// Every message this store has sent, restarts included: reported on each heartbeat
    /// round (`messages_sent`) for the blast radius' messages per second per store.
    messages_sent: u64,
    pub(crate) volatile: StoreVolatile,
}

/// One handler's view of a store: what a per-range transition needs besides the replica.
pub(crate) struct Step<'s, 'c, 'x> {
    pub(crate) me: NodeId,
    pub(crate) stores: usize,
    pub(crate) config: &'s MultiRaftConfig,
    pub(crate) volatile: &'s mut StoreVolatile,
    /// Store liveness: the support this store promised each other store.
    pub(crate) support_for: &'s mut Vec<Support>,
    /// Store liveness: this store's incarnation.
    pub(crate) incarnation: u64,
    /// Per-range messages waiting to leave, one batch per destination store.
    pub(crate) outbox: Vec<Vec<RangeMsg>>,
    /// The liveness range's leader as this store knows it (epoch leases send it their
    /// liveness requests).
    pub(crate) liveness_leader: Option<NodeId>,
    pub(crate) ctx: &'x mut StoreCtx<'c>,
}

impl Step<'_, '_, '_> {
    /// Queues `msg` for `to`; it leaves with the handler's other messages to that store.
    pub(crate) fn send(&mut self, to: NodeId, msg: RangeMsg) {
        self.outbox[to.index()].push(msg);
    }

    /// Queues `msg` for every other replica of `range`.
    pub(crate) fn send_to_peers(&mut self, range: u64, msg: RangeMsg) {
        let me = self.me;
        for peer in placement::replicas(range, self.stores, self.config.replication) {
            if peer != me {
                self.send(peer, msg.clone());
            }
        }
    }

    /// The bit of `store` in `range`'s replica masks; none for a store without a replica
    /// of it.
    pub(crate) fn bit(&self, store: NodeId, range: u64) -> u8 {
        let position = position(store, range, self.stores);
        if u64::from(position) < self.config.replication {
            1 << position
        } else {
            0
        }
    }

    /// A fresh randomized election timeout, in ticks: etcd raft's
    /// `resetRandomizedElectionTimeout` draws `[election, 2 * election)`.
    pub(crate) fn draw_timeout_ticks(&mut self) -> u64 {
        let low = self.config.election_ticks;
        self.ctx.rng().between(low, 2 * low - 1)
    }

    /// Sends every queued batch, one message per destination store.
    fn flush(mut self) {
        for (to, msgs) in self.outbox.iter_mut().enumerate() {
            if !msgs.is_empty() {
                let msgs = std::mem::take(msgs);
                self.ctx.send(NodeId::from(to), StoreMsg::Raft { msgs });
            }
        }
    }
}

impl Store {
    /// Store `id` of a cluster of `stores`, holding its share of `config.ranges`.
    pub fn new(id: NodeId, stores: usize, config: &MultiRaftConfig) -> Self {
        assert!(id.index() < stores, "{id} is not one of {stores} stores");
        assert!(config.replication as usize <= stores.min(8));
        assert!(config.election_ticks > config.heartbeat_ticks);
        let replicas: Vec<Replica> =
            placement::ranges_of(id, stores, config.ranges, config.replication)
                .into_iter()
                .map(|range| Replica::new(range, config.election_ticks))
                .collect();
        let slots = placement::SlotIndex::new(id, stores, config.replication);
        Self {
            id,
            stores,
            config: config.clone(),
            replicas,
            slots,
            support_for: vec![Support::NONE; stores],
            incarnation: 1,
            messages_sent: 0,
            volatile: StoreVolatile::new(stores),
        }
    }

    /// The index of `range`'s replica here, if the store holds one.
    pub(crate) fn slot(&self, range: u64) -> Option<usize> {
        let slot = self
            .slots
            .slot(range)
            .filter(|&slot| slot < self.replicas.len())?;
        assert_eq!(
            self.replicas[slot].range, range,
            "the index follows the placement"
        );
        Some(slot)
    }

    /// Runs `body` on this handler's view of the store and its replicas, then sends the
    /// queued batches.
    fn with_step<'c>(
        &mut self,
        ctx: &mut StoreCtx<'c>,
        body: impl FnOnce(&mut Step<'_, 'c, '_>, &mut Vec<Replica>),
    ) {
        // Only epoch leases send liveness requests: other runs skip the lookup.
        let epoch = self.config.lease == MultiRaftLease::Epoch;
        let liveness_leader = epoch.then(|| self.known_leader()).flatten();
        let mut step = Step {
            me: self.id,
            stores: self.stores,
            config: &self.config,
            volatile: &mut self.volatile,
            support_for: &mut self.support_for,
            incarnation: self.incarnation,
            outbox: vec![Vec::new(); self.stores],
            liveness_leader,
            ctx,
        };
        body(&mut step, &mut self.replicas);
        step.flush();
    }

    /// The Raft tick (`Store.raftTickLoop`): every replica ticks; on a heartbeat tick every
    /// range this store leads heartbeats its followers, coalesced per store.
    fn on_tick(&mut self, ctx: &mut StoreCtx<'_>) {
        self.volatile.ticks += 1;
        let heartbeat = self
            .volatile
            .ticks
            .is_multiple_of(self.config.heartbeat_ticks);
        if heartbeat {
            ctx.observe(MESSAGES_SENT, self.messages_sent);
        }
        self.with_step(ctx, |step, replicas| {
            let mut held = 0;
            for replica in replicas.iter_mut() {
                step.tick(replica);
                held += u32::from(replica.held.is_some());
            }
            step.volatile.leases_held = held;
            let version = (step.incarnation, step.volatile.ticks);
            let own = LeaseCount {
                store: step.me.0,
                version,
                leases: held,
            };
            let now = step.ctx.monotonic_now();
            step.volatile.lease_counts[step.me.index()] = Some((own, now));
            if heartbeat {
                step.send_heartbeats(replicas);
            }
        });
        ctx.set_timer(StoreTimer::Tick, self.config.tick_ns);
    }

    fn on_heartbeats(
        &mut self,
        ctx: &mut StoreCtx<'_>,
        from: NodeId,
        beats: Vec<Beat>,
        counts: Vec<LeaseCount>,
    ) {
        self.hear_lease_counts(ctx, &counts);
        let mut resps = Vec::with_capacity(beats.len());
        let slots: Vec<Option<usize>> = beats.iter().map(|b| self.slot(b.range)).collect();
        self.with_step(ctx, |step, replicas| {
            for (beat, slot) in beats.iter().zip(slots) {
                let Some(slot) = slot else { continue };
                let (term, fortified) = step.on_beat(&mut replicas[slot], from, beat.term);
                resps.push(BeatResp {
                    range: beat.range,
                    term,
                    fortified,
                });
            }
        });
        if !resps.is_empty() {
            let counts = self.volatile.known_lease_counts();
            ctx.send(from, StoreMsg::HeartbeatResps { resps, counts });
        }
    }

    /// Lease rebalancing: the lease counts another store gossiped; a newer version of a
    /// store's count replaces the one on file.
    fn hear_lease_counts(&mut self, ctx: &StoreCtx<'_>, counts: &[LeaseCount]) {
        let now = ctx.monotonic_now();
        for &count in counts.iter().filter(|c| c.store != self.id.0) {
            let known = &mut self.volatile.lease_counts[count.store as usize];
            if known.is_none_or(|(k, _)| count.version > k.version) {
                *known = Some((count, now));
            }
        }
    }

    fn on_heartbeat_resps(
        &mut self,
        ctx: &mut StoreCtx<'_>,
        from: NodeId,
        resps: Vec<BeatResp>,
        counts: Vec<LeaseCount>,
    ) {
        self.hear_lease_counts(ctx, &counts);
        let slots: Vec<Option<usize>> = resps.iter().map(|b| self.slot(b.range)).collect();
        self.with_step(ctx, |step, replicas| {
            for (resp, slot) in resps.iter().zip(slots) {
                if let Some(slot) = slot {
                    step.on_beat_resp(&mut replicas[slot], from, resp.term, resp.fortified);
                }
            }
        });
    }

    fn on_raft(&mut self, ctx: &mut StoreCtx<'_>, from: NodeId, msgs: Vec<RangeMsg>) {
        let slots: Vec<Option<usize>> = msgs.iter().map(|m| self.slot(m.range())).collect();
        self.with_step(ctx, |step, replicas| {
            for (msg, slot) in msgs.into_iter().zip(slots) {
                if let Some(slot) = slot {
                    step.on_range_msg(&mut replicas[slot], from, msg);
                }
            }
        });
    }

    /// The `LeaseWait` timer: every range whose previous lease has expired by now asks again
    /// for its lease, if this store still leads it; the timer moves to the next wait.
    fn on_lease_wait(&mut self, ctx: &mut StoreCtx<'_>) {
        let now = ctx.wall_now();
        let later = self
            .volatile
            .lease_waits
            .split_off(&(now.saturating_add(1), 0));
        let due = std::mem::replace(&mut self.volatile.lease_waits, later);
        let slots: Vec<usize> = due.iter().filter_map(|&(_, r)| self.slot(r)).collect();
        self.with_step(ctx, |step, replicas| {
            for slot in slots {
                step.request_lease_now(&mut replicas[slot]);
            }
            step.arm_lease_wait();
        });
    }

    fn on_lease_end(&mut self, ctx: &mut StoreCtx<'_>) {
        self.volatile.lease_timer_at = None;
        let now = ctx.wall_now();
        let due: Vec<u64> = (self.volatile.lease_ends)
            .range(..=(now, u64::MAX))
            .map(|&(_, range)| range)
            .collect();
        let slots: Vec<usize> = due
            .iter()
            .map(|&range| {
                self.slot(range)
                    .expect("a held lease is of a range held here")
            })
            .collect();
        self.with_step(ctx, |step, replicas| {
            for slot in slots {
                step.lease_end_due(&mut replicas[slot]);
            }
            step.arm_lease_timer();
        });
    }

    /// A liveness request for the liveness range's leaseholder.
    fn on_liveness_request(&mut self, ctx: &mut StoreCtx<'_>, from: NodeId, op: LivenessOp) {
        let Some(slot) = self.slot(LIVENESS_RANGE) else {
            return;
        };
        self.with_step(ctx, |step, replicas| {
            step.on_liveness_request(&mut replicas[slot], from, op);
        });
    }

    /// Lease rebalancing: the scanner visits its next replica, and comes again at its pace.
    fn on_scan(&mut self, ctx: &mut StoreCtx<'_>) {
        self.with_step(ctx, |step, replicas| step.scan_next(replicas));
        self.arm_scan(ctx);
    }

    /// Arms the scanner's timer for its next replica (`replicaScanner.paceInterval`).
    fn arm_scan(&self, ctx: &mut StoreCtx<'_>) {
        let elapsed_ns = ctx.monotonic_now() - self.volatile.scan_started_mono_ns;
        let elapsed_ns = u64::try_from(elapsed_ns).unwrap_or(0);
        let idle_ns = self.config.scan_idle_ns(elapsed_ns, self.replicas.len());
        ctx.set_timer(StoreTimer::Scan, idle_ns);
    }

    /// Store liveness: asks every other store for support, and comes again.
    fn on_support_timer(&mut self, ctx: &mut StoreCtx<'_>) {
        self.with_step(ctx, |step, _| step.request_support());
        ctx.set_timer(StoreTimer::Support, self.config.support_heartbeat_ns);
    }

    /// Arms the timers a store runs on: the tick, and store liveness with leader leases.
    /// The first tick comes at a random point of the tick interval: stores start at
    /// different moments, so their ticks are out of phase (in phase, two followers whose
    /// timeouts drew the same number of ticks campaign at the same instant every time).
    fn arm_timers(&mut self, ctx: &mut StoreCtx<'_>) {
        let phase_ns = ctx.rng().between(1, self.config.tick_ns);
        ctx.set_timer(StoreTimer::Tick, phase_ns);
        match self.config.lease {
            MultiRaftLease::Leader => {
                ctx.set_timer(StoreTimer::Support, self.config.support_heartbeat_ns);
            }
            MultiRaftLease::Epoch => ctx.set_timer(StoreTimer::Liveness, phase_ns),
            MultiRaftLease::Expiration => {}
        }
        if self.config.lease_rebalancing {
            self.volatile.scan_started_mono_ns = ctx.monotonic_now();
            self.arm_scan(ctx);
        }
    }

    /// A message, dispatched to its handler.
    fn handle_message(&mut self, ctx: &mut StoreCtx<'_>, from: NodeId, msg: StoreMsg) {
        match msg {
            StoreMsg::Heartbeats { beats, counts } => {
                self.on_heartbeats(ctx, from, beats, counts);
            }
            StoreMsg::HeartbeatResps { resps, counts } => {
                self.on_heartbeat_resps(ctx, from, resps, counts);
            }
            StoreMsg::Raft { msgs } => self.on_raft(ctx, from, msgs),
            StoreMsg::FirstRange { term } => {
                let newer = self
                    .volatile
                    .first_range_gossip
                    .is_none_or(|(t, _)| term >= t);
                if newer {
                    self.volatile.first_range_gossip = Some((term, from));
                }
            }
            StoreMsg::SupportRequest {
                incarnation,
                until_wall_ns,
            } => self.with_step(ctx, |step, _| {
                step.on_support_request(from, incarnation, until_wall_ns);
            }),
            StoreMsg::SupportGrant {
                epoch,
                until_wall_ns,
            } => self.with_step(ctx, |step, replicas| {
                step.on_support_grant(replicas, from, epoch, until_wall_ns);
            }),
            StoreMsg::LivenessHeartbeat {
                epoch,
                expiration_wall_ns,
            } => {
                let op = LivenessOp::Heartbeat {
                    epoch,
                    expiration_wall_ns,
                };
                self.on_liveness_request(ctx, from, op);
            }
            StoreMsg::IncrementEpoch { store, epoch } => {
                self.on_liveness_request(ctx, from, LivenessOp::Increment { store, epoch });
            }
            StoreMsg::LivenessResult { extended, record } => {
                self.with_step(ctx, |step, replicas| {
                    step.on_liveness_result(replicas, extended, record);
                });
            }
            StoreMsg::EpochResult {
                store,
                epoch,
                expiration_wall_ns,
            } => self.with_step(ctx, |step, replicas| {
                step.on_epoch_result(replicas, store, epoch, expiration_wall_ns);
            }),
        }
    }

    /// A timer, dispatched to its handler.
    fn handle_timer(&mut self, ctx: &mut StoreCtx<'_>, timer: StoreTimer) {
        match timer {
            StoreTimer::Tick => self.on_tick(ctx),
            StoreTimer::LeaseEnd => self.on_lease_end(ctx),
            StoreTimer::Support => self.on_support_timer(ctx),
            StoreTimer::LeaseWait => self.on_lease_wait(ctx),
            StoreTimer::Liveness => self.with_step(ctx, |step, _| step.on_liveness_timer()),
            StoreTimer::IncrementWait => self.with_step(ctx, |step, _| step.on_increment_wait()),
            StoreTimer::Scan => self.on_scan(ctx),
            StoreTimer::LivenessEnd => {
                self.with_step(ctx, |step, replicas| step.on_liveness_end(replicas));
            }
        }
    }

    /// The first range's replica here, if the store holds one.
    fn first_range(&self) -> Option<&Replica> {
        self.slot(FIRST_RANGE).map(|slot| &self.replicas[slot])
    }
}

impl Process for Store {
    type Msg = StoreMsg;
    type Timer = StoreTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut StoreCtx<'_>) {
        self.with_step(ctx, |step, replicas| {
            for replica in replicas.iter_mut() {
                replica.timeout_ticks = step.draw_timeout_ticks();
            }
        });
        self.arm_timers(ctx);
    }

    fn on_message(&mut self, ctx: &mut StoreCtx<'_>, from: NodeId, msg: StoreMsg) {
        let before = ctx.sent();
        self.handle_message(ctx, from, msg);
        self.messages_sent += (ctx.sent() - before) as u64;
    }

    fn on_timer(&mut self, ctx: &mut StoreCtx<'_>, timer: StoreTimer) {
        let before = ctx.sent();
        self.handle_timer(ctx, timer);
        self.messages_sent += (ctx.sent() - before) as u64;
    }

    fn on_restart(&mut self, ctx: &mut StoreCtx<'_>) {
        // Terms, votes and logs are durable (written before anything that depends on them
        // leaves, as CockroachDB's Raft does); roles, leaders and leases are not. A lease
        // proposed before the restart is never used again (`Replica.minLeaseProposedTS`).
        self.volatile = StoreVolatile::new(self.stores);
        self.incarnation += 1;
        self.with_step(ctx, |step, replicas| {
            for replica in replicas.iter_mut() {
                let timeout = step.draw_timeout_ticks();
                replica.restart(timeout);
            }
        });
        self.arm_timers(ctx);
    }

    fn term(&self) -> u64 {
        self.first_range().map_or(0, |r| r.term)
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        // The first range's leaseholder writes, fenced by its lease sequence.
        self.first_range()?.held.map(|(lease, _)| lease.seq)
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self.first_range() {
            Some(replica) => replica.leader,
            None => self.volatile.first_range_gossip.map(|(_, leader)| leader),
        }
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        let leading = self.replicas.iter().filter(|r| r.leads()).count();
        let leases = self.replicas.iter().filter(|r| r.held.is_some()).count();
        vec![
            ("replicas", self.replicas.len().to_string()),
            ("leading", leading.to_string()),
            ("leases", leases.to_string()),
        ]
    }
}
