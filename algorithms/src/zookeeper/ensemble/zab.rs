//! After the election: the new leader's sync and ZAB's broadcast
//! (`server/quorum/Leader.java`, `Learner.java`, `Follower.java`).
//!
//! Sync, simplified to ZooKeeper's `SNAP`: followers send `FOLLOWERINFO`; once a quorum has,
//! the leader takes the next epoch (`getEpochToPropose`: one above every accepted epoch),
//! commits its own logged history, and sends each follower its whole database in
//! `NEWLEADER`; it serves once a quorum acknowledged (`waitForNewLeaderAck`) and tells them
//! `UPTODATE`. Each wait is bounded by `initLimit × tickTime`.
//!
//! Broadcast: every write is a proposal logged (fsynced) by the leader and its followers;
//! a quorum of acks commits it, in zxid order, on every server. The leader pings every half
//! tick and counts a tick every other pass; without a quorum of followers that acked within
//! `syncLimit` ticks it gives up (`Leader.lead`, "Not sufficient followers synced"). A
//! follower that hears nothing from its leader for `syncLimit × tickTime` gives up
//! (`Learner.syncWithLeader`'s socket timeout).

use super::{Follower, Leader, LeaderPhase, Pending, Role, ZkCtx, ZkServer};
use crate::zookeeper::messages::{ZkMsg, ZkTimer, ZkTxn};
use crate::zookeeper::tracker::SessionTracker;
use splitbrain_sim::{LocalNanos, NodeId};
use std::collections::{BTreeMap, BTreeSet};

/// The zxid counter's width: the epoch is the high 32 bits.
const EPOCH_SHIFT: u32 = 32;

/// How soon a follower asks its elected leader again: `Learner.java`,
/// `leaderConnectDelayDuringRetryMs` ("Time to wait after connection attempt with the
/// Leader ... before this Learner tries to connect again"), default 100 ms. Read in a
/// stored copy of `Learner.java` for this model (release not pinned), not in
/// docs/service-clusters.md.
const FOLLOWER_INFO_RETRY_NS: u64 = 100_000_000;

impl ZkServer {
    pub(super) fn become_follower(&mut self, ctx: &mut ZkCtx<'_, '_>, leader: NodeId) {
        self.synced = false;
        self.role = Role::Following(Follower {
            leader,
            serving: false,
        });
        self.send_follower_info(ctx, leader);
        ctx.set_timer(ZkTimer::Limit, self.config.init_limit_ns());
    }

    fn send_follower_info(&mut self, ctx: &mut ZkCtx<'_, '_>, leader: NodeId) {
        ctx.send(
            leader,
            ZkMsg::FollowerInfo {
                accepted_epoch: self.accepted_epoch,
                zxid: self.last_zxid(),
            },
        );
        // The leader may still be finishing its own election: ask again until it answers
        // (`Learner.connectToLeader` retries its connection within the initLimit bound).
        ctx.set_timer(ZkTimer::Retry, FOLLOWER_INFO_RETRY_NS);
    }

    /// A follower's `FOLLOWERINFO` went unanswered: send it again.
    pub(super) fn on_follower_retry(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if let Role::Following(f) = self.role
            && !self.synced
        {
            self.send_follower_info(ctx, f.leader);
        }
    }

    pub(super) fn become_leader(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.role = Role::Leading(Box::new(Leader {
            phase: LeaderPhase::Discovery {
                infos: BTreeMap::new(),
            },
            followers: BTreeMap::new(),
            heard_at: BTreeMap::new(),
            pending: BTreeMap::new(),
            counter: 1,
            next_session: 0,
            next_seq: 0,
            tracker: SessionTracker::new(self.config.tick_ns),
            closing: BTreeSet::new(),
            tick: 0,
            tick_skip: true,
        }));
        ctx.set_timer(ZkTimer::Limit, self.config.init_limit_ns());
    }

    fn leader_mut(&mut self) -> Option<&mut Leader> {
        match &mut self.role {
            Role::Leading(l) => Some(l),
            _ => None,
        }
    }

    /// A message from another server (not a notification).
    pub(super) fn on_peer(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, msg: ZkMsg) {
        if let Role::Following(f) = self.role {
            if f.leader == from {
                self.on_leader_msg(ctx, f, msg);
            }
            return;
        }
        let (sync_limit, epoch_now) = (self.config.sync_limit, self.current_epoch);
        let Some(l) = self.leader_mut() else {
            return;
        };
        // Any answer of a follower moves its ack deadline (`LearnerHandler`).
        if let Some(deadline) = l.followers.get_mut(&from) {
            *deadline = l.tick + sync_limit;
            l.heard_at.insert(from, ctx.monotonic_now());
        }
        match msg {
            ZkMsg::FollowerInfo { accepted_epoch, .. } => {
                self.on_follower_info(ctx, from, accepted_epoch)
            }
            ZkMsg::AckNewLeader { epoch } if epoch == epoch_now => {
                self.on_new_leader_ack(ctx, from)
            }
            ZkMsg::Ack { zxid } => {
                if let Some(p) = l.pending.get_mut(&zxid) {
                    p.acks.insert(from);
                }
                self.try_commit(ctx);
            }
            ZkMsg::FollowerPing { touches } => {
                let now = ctx.monotonic_now();
                for session in touches {
                    if !l.closing.contains(&session) {
                        l.tracker.touch(now, session);
                    }
                }
                self.arm_expiry(ctx);
            }
            ZkMsg::Request { client, op } if l.phase == LeaderPhase::Serving => {
                self.handle_op(ctx, from, client, op);
            }
            _ => {}
        }
    }

    fn on_follower_info(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, accepted_epoch: u64) {
        let quorum = self.config.quorum();
        let Some(l) = self.leader_mut() else {
            return;
        };
        match &mut l.phase {
            LeaderPhase::Discovery { infos } => {
                infos.insert(from, accepted_epoch);
                if infos.len() + 1 >= quorum {
                    self.new_epoch(ctx);
                }
            }
            LeaderPhase::Syncing { .. } | LeaderPhase::Serving => self.send_snapshot(ctx, from),
        }
    }

    /// A quorum's epochs are in: take the next epoch, commit the own history, sync.
    fn new_epoch(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let Some(Role::Leading(l)) = Some(&mut self.role) else {
            return;
        };
        let LeaderPhase::Discovery { infos } = std::mem::replace(
            &mut l.phase,
            LeaderPhase::Syncing {
                acks: BTreeSet::from([self.me]),
            },
        ) else {
            return;
        };
        let epoch = infos
            .values()
            .copied()
            .max()
            .unwrap_or(0)
            .max(self.accepted_epoch)
            + 1;
        self.accepted_epoch = epoch;
        self.current_epoch = epoch;
        // The new leader's history is committed in its epoch: ZAB's proposals a quorum
        // logged are in it, since the vote took the highest zxid of a quorum.
        for (zxid, txn) in std::mem::take(&mut self.log) {
            self.db.apply(zxid, &txn);
        }
        self.db.zxid = epoch << EPOCH_SHIFT;
        ctx.persist(());
        for follower in infos.keys() {
            self.send_snapshot(ctx, *follower);
        }
    }

    /// `NEWLEADER` with the whole database, and the proposals still open.
    fn send_snapshot(&mut self, ctx: &mut ZkCtx<'_, '_>, follower: NodeId) {
        let epoch = self.current_epoch;
        let snapshot = self.db.clone();
        let sync_limit = self.config.sync_limit;
        let Some(l) = self.leader_mut() else {
            return;
        };
        l.followers.insert(follower, l.tick + sync_limit);
        l.heard_at.insert(follower, ctx.monotonic_now());
        ctx.send(follower, ZkMsg::NewLeader { epoch, snapshot });
        for (zxid, p) in &l.pending {
            let (zxid, txn) = (*zxid, p.txn.clone());
            ctx.send(follower, ZkMsg::Proposal { zxid, txn });
        }
    }

    fn on_new_leader_ack(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId) {
        let (quorum, epoch) = (self.config.quorum(), self.current_epoch);
        let Some(l) = self.leader_mut() else {
            return;
        };
        match &mut l.phase {
            LeaderPhase::Syncing { acks } => {
                acks.insert(from);
                if acks.len() >= quorum {
                    self.start_serving(ctx);
                }
            }
            LeaderPhase::Serving => ctx.send(from, ZkMsg::UpToDate { epoch }),
            LeaderPhase::Discovery { .. } => {}
        }
    }

    /// A quorum is synced: re-track every session with its full timeout, serve, ping.
    fn start_serving(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        let (epoch, db) = (self.current_epoch, &self.db);
        let Some(Role::Leading(l)) = Some(&mut self.role) else {
            return;
        };
        let LeaderPhase::Syncing { acks } = std::mem::replace(&mut l.phase, LeaderPhase::Serving)
        else {
            return;
        };
        // LeaderZooKeeperServer.createSessionTracker: SessionTrackerImpl's constructor
        // tracks every session of the database with its full timeout from now.
        for (id, s) in &db.sessions {
            l.tracker.track(now, *id, s.timeout_ns);
        }
        l.next_session = db.next_session;
        l.next_seq = db.next_seq;
        for follower in acks.iter().filter(|f| **f != self.me) {
            ctx.send(*follower, ZkMsg::UpToDate { epoch });
        }
        ctx.cancel_timer(ZkTimer::Limit);
        ctx.set_timer(ZkTimer::LeaderTick, self.config.tick_ns / 2);
        self.arm_expiry(ctx);
    }

    /// The leader's half-tick pass: count a tick every other pass and check the quorum,
    /// re-send open proposals, ping every follower.
    pub(super) fn on_leader_tick(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let (quorum, epoch, me) = (self.config.quorum(), self.current_epoch, self.me);
        let Some(l) = self.leader_mut() else {
            return;
        };
        l.tick_skip = !l.tick_skip;
        if !l.tick_skip {
            l.tick += 1;
            let tick = l.tick;
            let synced = l.followers.values().filter(|d| tick <= **d).count() + 1;
            if synced < quorum {
                self.start_looking(ctx);
                return;
            }
        }
        for (follower, _) in l.followers.iter() {
            for (zxid, p) in l.pending.iter().filter(|(_, p)| !p.acks.contains(follower)) {
                let (zxid, txn) = (*zxid, p.txn.clone());
                ctx.send(*follower, ZkMsg::Proposal { zxid, txn });
            }
            ctx.send(*follower, ZkMsg::LeaderPing { epoch });
        }
        let _ = me;
        ctx.set_timer(ZkTimer::LeaderTick, self.config.tick_ns / 2);
    }

    /// Whether a serving leader has heard a quorum (itself counted) within `syncLimit ×
    /// tickTime` by its own clock (true on a follower). A leader resumed from a pause answers
    /// no client until its next tick check drops it.
    pub(super) fn quorum_heard(&self, now: LocalNanos) -> bool {
        let Role::Leading(l) = &self.role else {
            return true;
        };
        let limit = self.config.sync_limit_ns() as i64;
        let heard = l
            .heard_at
            .iter()
            .filter(|(f, at)| l.followers.contains_key(f) && now.saturating_sub(**at) <= limit)
            .count();
        heard + 1 >= self.config.quorum()
    }

    /// The sync did not finish within `initLimit` ticks, or a follower's leader was silent
    /// for `syncLimit` ticks: LOOKING again.
    pub(super) fn on_limit(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let gives_up = match &self.role {
            Role::Following(_) => true,
            Role::Leading(l) => l.phase != LeaderPhase::Serving,
            Role::Looking => false,
        };
        if gives_up {
            self.start_looking(ctx);
        }
    }

    /// Proposes `txn` (asked for through server `origin`, if a client asked).
    pub(super) fn propose(&mut self, ctx: &mut ZkCtx<'_, '_>, txn: ZkTxn, origin: Option<NodeId>) {
        let (epoch, me) = (self.current_epoch, self.me);
        let Some(l) = self.leader_mut() else {
            return;
        };
        let zxid = (epoch << EPOCH_SHIFT) | l.counter;
        l.counter += 1;
        for follower in l.followers.keys() {
            let txn = txn.clone();
            ctx.send(*follower, ZkMsg::Proposal { zxid, txn });
        }
        l.pending.insert(
            zxid,
            Pending {
                txn: txn.clone(),
                origin,
                acks: BTreeSet::from([me]),
            },
        );
        self.log.push((zxid, txn));
        // The leader's own log write: what it sends from here on waits for it.
        ctx.persist(());
        self.try_commit(ctx);
    }

    /// Commits the open proposals a quorum acknowledged, in zxid order.
    fn try_commit(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let quorum = self.config.quorum();
        loop {
            let Some(l) = self.leader_mut() else {
                return;
            };
            let Some(entry) = l.pending.first_entry() else {
                return;
            };
            if entry.get().acks.len() < quorum {
                return;
            }
            let (zxid, p) = entry.remove_entry();
            for follower in l.followers.keys() {
                let msg = ZkMsg::Commit {
                    zxid,
                    txn: p.txn.clone(),
                    origin: p.origin,
                };
                ctx.send(*follower, msg);
            }
            self.apply_committed(ctx, zxid, &p.txn, p.origin);
        }
    }

    fn on_leader_msg(&mut self, ctx: &mut ZkCtx<'_, '_>, f: Follower, msg: ZkMsg) {
        let limit = if f.serving {
            self.config.sync_limit_ns()
        } else {
            self.config.init_limit_ns()
        };
        ctx.set_timer(ZkTimer::Limit, limit);
        match msg {
            // Once per sync: a duplicated or late `NewLeader` must not take the database
            // back to an older snapshot of the same epoch.
            ZkMsg::NewLeader { epoch, snapshot }
                if !self.synced
                    && epoch >= self.accepted_epoch
                    && snapshot.zxid >= self.db.zxid =>
            {
                self.synced = true;
                ctx.cancel_timer(ZkTimer::Retry);
                self.accepted_epoch = epoch;
                self.current_epoch = epoch;
                self.db = snapshot;
                self.log.clear();
                ctx.persist(());
                ctx.send(f.leader, ZkMsg::AckNewLeader { epoch });
            }
            ZkMsg::UpToDate { .. } | ZkMsg::LeaderPing { .. } if !f.serving => {
                self.role = Role::Following(Follower { serving: true, ..f });
                ctx.set_timer(ZkTimer::Limit, self.config.sync_limit_ns());
                if let ZkMsg::LeaderPing { .. } = msg {
                    self.answer_ping(ctx, f.leader);
                }
            }
            ZkMsg::LeaderPing { .. } => self.answer_ping(ctx, f.leader),
            ZkMsg::Proposal { zxid, txn } if zxid >> EPOCH_SHIFT == self.current_epoch => {
                if zxid > self.last_zxid() {
                    self.log.push((zxid, txn));
                    ctx.persist(());
                }
                if zxid > self.db.zxid {
                    ctx.send(f.leader, ZkMsg::Ack { zxid });
                }
            }
            ZkMsg::Commit { zxid, txn, origin } => self.follower_commit(ctx, zxid, &txn, origin),
            ZkMsg::Reply { client, answer } if self.clients.contains(&client) => {
                ctx.send(client, *answer);
            }
            _ => {}
        }
    }

    fn answer_ping(&mut self, ctx: &mut ZkCtx<'_, '_>, leader: NodeId) {
        let touches = std::mem::take(&mut self.touches).into_iter().collect();
        ctx.send(leader, ZkMsg::FollowerPing { touches });
    }

    fn follower_commit(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        zxid: u64,
        txn: &ZkTxn,
        origin: Option<NodeId>,
    ) {
        if zxid <= self.db.zxid {
            return;
        }
        let (epoch, counter) = (zxid >> EPOCH_SHIFT, zxid & ((1 << EPOCH_SHIFT) - 1));
        let last = self.db.zxid;
        let next = if last >> EPOCH_SHIFT == epoch {
            counter == (last & ((1 << EPOCH_SHIFT) - 1)) + 1
        } else {
            counter == 1
        };
        if next {
            self.apply_committed(ctx, zxid, txn, origin);
        } else {
            // A commit was lost (only on `Datagram`): sync again.
            self.start_looking(ctx);
        }
    }

    /// The session tracker's expiry: each due session's close is proposed once.
    pub(super) fn on_expiry(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        let Some(l) = self.leader_mut() else {
            return;
        };
        if l.phase != LeaderPhase::Serving {
            return;
        }
        let due = l.tracker.due(now);
        for session in &due {
            l.tracker.remove(*session);
            l.closing.insert(*session);
        }
        for session in due {
            let txn = ZkTxn::CloseSession {
                session,
                expired: true,
            };
            self.propose(ctx, txn, None);
        }
        self.arm_expiry(ctx);
    }

    pub(super) fn arm_expiry(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        let Some(l) = self.leader_mut() else {
            return;
        };
        match l.tracker.next_expiry() {
            Some(at) => {
                let after = at.saturating_sub(now).max(0) as u64;
                ctx.set_timer(ZkTimer::Expiry, after);
            }
            None => ctx.cancel_timer(ZkTimer::Expiry),
        }
    }
}
