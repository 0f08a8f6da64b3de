//! What an ensemble server does for its clients: nothing outside FOLLOWING or LEADING (the
//! connection is closed: `NIOServerCnxn`, "ZooKeeperServer not running"); reads and watches
//! from its own database; writes forwarded to the leader and answered after their commit;
//! touches kept by the leader's tracker, or collected for the next ping on a follower
//! (`LearnerSessionTracker`); watch events after each applied commit.

use super::super::db::{Applied, ZkDb};
use super::{LeaderPhase, Role, ZkCtx, ZkServer};
use crate::seat::record_removed;
use crate::zookeeper::config::ZkConfig;
use crate::zookeeper::messages::{ZkMsg, ZkOp, ZkTxn};
use splitbrain_sim::{NodeId, Process, Signal};

impl ZkServer {
    /// A client's request.
    pub(super) fn on_client(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, msg: ZkMsg) {
        // A leader that has not heard a quorum within syncLimit × tick (one resumed from a
        // pause) answers nobody from its stale view; it leaves LEADING at its next tick check
        // (`Leader.lead`), as ZooKeeper's does.
        if !self.serving() || !self.quorum_heard(ctx.monotonic_now()) {
            // No service outside FOLLOWING or LEADING: the connection is closed (nothing
            // answers on `Datagram`).
            ctx.disconnect(from);
            return;
        }
        let new_connection = self.clients.insert(from);
        let now = ctx.monotonic_now();
        match msg {
            ZkMsg::Ping { session } if new_connection && !self.leads_service() => {
                // A reconnect through a follower: the leader says whether the session is
                // alive, and renews it (`Learner.validateSession`).
                self.write(ctx, from, ZkOp::Revalidate { session });
            }
            ZkMsg::Connect { timeout_ns } => {
                let timeout_ns = ZkConfig {
                    session_timeout_ns: timeout_ns,
                    ..self.config.clone()
                }
                .negotiated_timeout_ns();
                self.write(ctx, from, ZkOp::CreateSession { timeout_ns });
            }
            ZkMsg::Ping { session } => {
                let alive = self.touch(now, session);
                let expired = !alive;
                ctx.send(from, ZkMsg::Pong { session, expired });
            }
            ZkMsg::Create { session } => {
                if !self.touch(now, session) {
                    let expired = true;
                    ctx.send(from, ZkMsg::Pong { session, expired });
                } else if let Some(answer) = existing_child(&self.db, session) {
                    ctx.send(from, answer);
                } else {
                    self.write(ctx, from, ZkOp::Create { session });
                }
            }
            ZkMsg::GetChildren { session, watch } => {
                let live = self.touch(now, session);
                let w = &mut self.watches.children;
                if watch && live && !w.contains(&(from, session)) {
                    w.push((from, session));
                }
                let zxid = self.db.zxid;
                let children = self.db.children();
                ctx.send(from, ZkMsg::Children { zxid, children });
            }
            ZkMsg::Exists { session, seq } => {
                let live = self.touch(now, session);
                let exists = self.db.children.contains_key(&seq);
                if exists && live {
                    let w = self.watches.exists.entry(seq).or_default();
                    if !w.contains(&(from, session)) {
                        w.push((from, session));
                    }
                }
                ctx.send(from, ZkMsg::ExistsResp { seq, exists });
            }
            ZkMsg::CloseSession { session } => {
                self.write(ctx, from, ZkOp::CloseSession { session })
            }
            _ => {}
        }
    }

    /// A client's connection is gone: so are its watches.
    pub(super) fn drop_client(&mut self, client: NodeId) {
        self.clients.remove(&client);
        self.watches.children.retain(|w| w.0 != client);
        self.watches.exists.retain(|_, watchers| {
            watchers.retain(|w| w.0 != client);
            !watchers.is_empty()
        });
    }

    /// A request on `session` renews it: at the leader's tracker, or at the next ping for a
    /// follower. False if the session is not in this server's database (or is closing).
    fn touch(&mut self, now: splitbrain_sim::LocalNanos, session: u64) -> bool {
        if !self.db.sessions.contains_key(&session) {
            return false;
        }
        match &mut self.role {
            Role::Leading(l) => l.tracker.touch(now, session),
            _ => {
                self.touches.insert(session);
                true
            }
        }
    }

    fn write(&mut self, ctx: &mut ZkCtx<'_, '_>, client: NodeId, op: ZkOp) {
        match self.role {
            Role::Following(f) => ctx.send(f.leader, ZkMsg::Request { client, op }),
            Role::Leading(_) => self.handle_op(ctx, self.me, client, op),
            Role::Looking => {}
        }
        if let Role::Leading(_) = self.role {
            self.arm_expiry(ctx);
        }
    }

    /// The leader turns a write into a proposal (ids assigned), or answers it at once when
    /// it needs none.
    pub(super) fn handle_op(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        origin: NodeId,
        client: NodeId,
        op: ZkOp,
    ) {
        if !matches!(&self.role, Role::Leading(l) if l.phase == LeaderPhase::Serving) {
            return;
        }
        let txn = match op {
            ZkOp::CreateSession { timeout_ns } => self.session_txn(client, timeout_ns),
            ZkOp::Create { session } => self.create_txn(ctx, origin, client, session),
            ZkOp::Revalidate { session } => {
                self.revalidate(ctx, origin, client, session);
                None
            }
            ZkOp::CloseSession { session } => self.close_txn(session),
        };
        if let Some(txn) = txn {
            self.propose(ctx, txn, Some(origin));
        }
    }

    /// createSession with the leader's next session id.
    fn session_txn(&mut self, owner: NodeId, timeout_ns: u64) -> Option<ZkTxn> {
        let Role::Leading(l) = &mut self.role else {
            return None;
        };
        let session = l.next_session;
        l.next_session += 1;
        Some(ZkTxn::CreateSession {
            session,
            owner,
            timeout_ns,
        })
    }

    /// The create of the session's child with the next sequence number; none if the session
    /// is gone (answered `expired`), already has its child (answered with it) or its create
    /// is already proposed (answered when that commits).
    fn create_txn(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        origin: NodeId,
        client: NodeId,
        session: u64,
    ) -> Option<ZkTxn> {
        let Role::Leading(l) = &mut self.role else {
            return None;
        };
        let gone = !self.db.sessions.contains_key(&session) || l.closing.contains(&session);
        if gone {
            let expired = true;
            self.answer(ctx, origin, client, ZkMsg::Pong { session, expired });
            return None;
        }
        l.tracker.touch(ctx.monotonic_now(), session);
        let asked = l
            .pending
            .values()
            .any(|p| matches!(p.txn, ZkTxn::Create { session: s, .. } if s == session));
        if let Some(answer) = existing_child(&self.db, session) {
            self.answer(ctx, origin, client, answer);
            return None;
        }
        if asked {
            return None;
        }
        let seq = l.next_seq;
        l.next_seq += 1;
        Some(ZkTxn::Create { session, seq })
    }

    /// `Learner.validateSession` at the leader: whether the session is alive, touching it.
    fn revalidate(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        origin: NodeId,
        client: NodeId,
        session: u64,
    ) {
        let Role::Leading(l) = &mut self.role else {
            return;
        };
        let alive = self.db.sessions.contains_key(&session)
            && !l.closing.contains(&session)
            && l.tracker.touch(ctx.monotonic_now(), session);
        let expired = !alive;
        self.answer(ctx, origin, client, ZkMsg::Pong { session, expired });
    }

    /// closeSession asked by its client, once (`setSessionClosing`).
    fn close_txn(&mut self, session: u64) -> Option<ZkTxn> {
        let Role::Leading(l) = &mut self.role else {
            return None;
        };
        if !self.db.sessions.contains_key(&session) || !l.closing.insert(session) {
            return None;
        }
        l.tracker.remove(session);
        Some(ZkTxn::CloseSession {
            session,
            expired: false,
        })
    }

    fn answer(&mut self, ctx: &mut ZkCtx<'_, '_>, origin: NodeId, client: NodeId, msg: ZkMsg) {
        if origin == self.me {
            ctx.send(client, msg);
        } else {
            let answer = Box::new(msg);
            ctx.send(origin, ZkMsg::Reply { client, answer });
        }
    }

    /// Applies a committed write: the leader's tracker follows it and the leader signals
    /// what it means for the election; the server the client asked through answers; local
    /// watches fire.
    pub(super) fn apply_committed(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        zxid: u64,
        txn: &ZkTxn,
        origin: Option<NodeId>,
    ) {
        assert!(zxid > self.db.zxid, "commits apply in zxid order");
        self.log.retain(|(z, _)| *z > zxid);
        let applied = self.db.apply(zxid, txn);
        let leads = self.leads_service();
        self.track(ctx.monotonic_now(), &applied);
        let answers = origin == Some(self.me);
        match applied {
            Applied::Session {
                session,
                owner,
                timeout_ns,
            } => {
                if answers && self.clients.contains(&owner) {
                    if !leads {
                        self.touches.insert(session);
                    }
                    let answer = ZkMsg::ConnectResp {
                        session,
                        timeout_ns,
                    };
                    ctx.send(owner, answer);
                }
            }
            Applied::Created { seq, owner } => {
                if leads {
                    ctx.signal(Signal::LeaseHeld { holder: owner });
                    if seq == 0 {
                        // The first candidate ever: the initial election begins.
                        ctx.signal(Signal::ElectionStarted { term: zxid });
                    }
                }
                self.fire_child_watches(ctx);
                if answers && self.clients.contains(&owner) {
                    ctx.send(owner, ZkMsg::CreateResp { seq, czxid: zxid });
                }
            }
            Applied::Closed {
                session,
                owner,
                child,
                expired,
            } => self.closed(ctx, session, owner, child, expired && leads, leads),
            Applied::Nothing => {}
        }
        if leads {
            self.arm_expiry(ctx);
        }
    }

    /// The leader's tracker follows the sessions opened and closed.
    fn track(&mut self, now: splitbrain_sim::LocalNanos, applied: &Applied) {
        let Role::Leading(l) = &mut self.role else {
            return;
        };
        match *applied {
            Applied::Session {
                session,
                timeout_ns,
                ..
            } => l.tracker.track(now, session, timeout_ns),
            Applied::Closed { session, .. } => {
                l.tracker.remove(session);
                l.closing.remove(&session);
            }
            Applied::Created { .. } | Applied::Nothing => {}
        }
    }

    /// A closed session's watches go with it; its child's watchers hear of the delete.
    fn closed(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        session: u64,
        owner: NodeId,
        child: Option<(u64, bool)>,
        expired: bool,
        leads: bool,
    ) {
        self.watches.children.retain(|w| w.1 != session);
        self.watches.exists.retain(|_, watchers| {
            watchers.retain(|w| w.1 != session);
            !watchers.is_empty()
        });
        let Some((seq, led)) = child else {
            return;
        };
        if leads {
            let term = self.db.zxid;
            let signalled = &mut self.vacancy_signalled;
            record_removed(ctx, owner, (led, expired), term, signalled);
        }
        let zxid = self.db.zxid;
        for (watcher, _) in self.watches.exists.remove(&seq).unwrap_or_default() {
            ctx.send(watcher, ZkMsg::NodeDeleted { seq, zxid });
        }
        self.fire_child_watches(ctx);
    }

    fn fire_child_watches(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        let zxid = self.db.zxid;
        for (watcher, _) in std::mem::take(&mut self.watches.children) {
            ctx.send(watcher, ZkMsg::ChildrenChanged { zxid });
        }
    }
}

/// The session's child as a create's answer, if it has one (a retried create returns the
/// first, like Curator's protected mode).
fn existing_child(db: &ZkDb, session: u64) -> Option<ZkMsg> {
    let seq = db.sessions.get(&session)?.node?;
    let czxid = db.children.get(&seq)?.0;
    Some(ZkMsg::CreateResp { seq, czxid })
}
