//! The modeled ZooKeeper server: sessions with a negotiated timeout that expire on the
//! server's clock in buckets of one tick, ephemeral sequential children of one election
//! node, getChildren and exists with one-shot watches, and a zxid.
//!
//! The server is also where an election begins as the system sees it: leadership falls
//! vacant when the lowest child (the leader's) is deleted, and the first child ever created
//! opens the initial election. It signals `ElectionStarted` then; the next claim ends it.

use super::config::ZkConfig;
use super::db::{Applied, ZkDb};
use super::messages::{Child, ZkMsg, ZkTimer, ZkTxn};
use super::tracker::SessionTracker;
use crate::seat::record_removed;
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};
use std::collections::BTreeMap;

type ZkCtx<'a, 'b> = Ctx<'a, ZkMsg, ZkTimer>;

/// The server process's state: the database an ensemble's servers replicate ([`ZkDb`]: the
/// sessions, the election node's children, the zxid), its session tracker, and watches. It
/// is one process (id = `members`); its state survives a crash (it is in the snapshot).
/// Transactions (createSession, create, closeSession) are logged and synced before their
/// answers and watch events leave (`ctx.persist`: the scenario's `disk.service` latency;
/// `disk.batch` is the SyncRequestProcessor's group commit); pings and reads write nothing,
/// but leave after the writes before them, as ZooKeeper answers in order.
#[derive(Clone, Debug)]
pub struct ZkService {
    config: ZkConfig,
    db: ZkDb,
    /// Each session's timeout and expiry bucket.
    tracker: SessionTracker,
    /// One-shot exists watches per child, in registration order: (watcher, its session).
    exists_watches: BTreeMap<u64, Vec<(NodeId, u64)>>,
    /// One-shot child watches on the election node: (watcher, its session).
    child_watches: Vec<(NodeId, u64)>,
    /// Whether the handler under way has already signalled a vacancy: sessions that expire
    /// together (each delete making the next child the lowest) leave the seat vacant once.
    vacancy_signalled: bool,
}

impl ZkService {
    /// A server with no session and no child, at zxid 0.
    pub fn new(config: &ZkConfig) -> Self {
        Self {
            config: config.clone(),
            db: ZkDb::new(),
            tracker: SessionTracker::new(config.tick_ns),
            exists_watches: BTreeMap::new(),
            child_watches: Vec::new(),
            vacancy_signalled: false,
        }
    }

    /// The last zxid (the server's term for `term_monotonic`).
    pub fn zxid(&self) -> u64 {
        self.db.zxid
    }

    /// The owner of the lowest child: whom a client asking who leads would be told (Curator's
    /// `LeaderLatch.getLeader()` and kazoo's `Election.contenders()` read the children and
    /// take the first).
    pub fn leader(&self) -> Option<NodeId> {
        self.db.leader()
    }

    /// Live sessions (for tests).
    pub fn session_count(&self) -> usize {
        self.db.sessions.len()
    }

    /// The election node's children, lowest sequence number first.
    pub fn children(&self) -> Vec<Child> {
        self.db.children()
    }

    /// Applies `txn` as the next transaction (zxids count up by one: one server, no epoch).
    fn apply(&mut self, txn: ZkTxn) -> Applied {
        self.db.apply(self.db.zxid + 1, &txn)
    }

    fn touch(&mut self, now: LocalNanos, session: u64) -> bool {
        self.tracker.touch(now, session)
    }

    fn fire_child_watches(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        for (watcher, _) in std::mem::take(&mut self.child_watches) {
            ctx.send(watcher, ZkMsg::ChildrenChanged { zxid: self.db.zxid });
        }
    }

    fn close(&mut self, ctx: &mut ZkCtx<'_, '_>, session: u64, expired: bool) {
        if !self.db.sessions.contains_key(&session) {
            return;
        }
        let Applied::Closed { owner, child, .. } =
            self.apply(ZkTxn::CloseSession { session, expired })
        else {
            unreachable!("a live session closes")
        };
        self.tracker.remove(session);
        // closeSession, asked for or by the session tracker, is a transaction too.
        ctx.persist(());
        // A closed session's watches go with it: they never fire to its (former) owner.
        self.child_watches.retain(|w| w.1 != session);
        self.exists_watches.retain(|_, watchers| {
            watchers.retain(|w| w.1 != session);
            !watchers.is_empty()
        });
        let Some((seq, led)) = child else {
            return;
        };
        // The next child's owner hears of a vacancy, or, with no child left, the next
        // candidate.
        let term = self.db.zxid;
        let signalled = &mut self.vacancy_signalled;
        record_removed(ctx, owner, (led, expired), term, signalled);
        for (watcher, _) in self.exists_watches.remove(&seq).unwrap_or_default() {
            ctx.send(
                watcher,
                ZkMsg::NodeDeleted {
                    seq,
                    zxid: self.db.zxid,
                },
            );
        }
        self.fire_child_watches(ctx);
    }

    /// Expires every session whose bucket the server's clock has reached.
    fn expire(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        for id in self.tracker.due(ctx.monotonic_now()) {
            self.close(ctx, id, true);
        }
    }

    fn arm(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        match self.tracker.next_expiry() {
            Some(at) => {
                let after = at.saturating_sub(ctx.monotonic_now()).max(0) as u64;
                ctx.set_timer(ZkTimer::Expiry, after);
            }
            None => ctx.cancel_timer(ZkTimer::Expiry),
        }
    }
}

impl Process for ZkService {
    type Msg = ZkMsg;
    type Timer = ZkTimer;
    type Durable = ();

    /// The server's state, for `run --stop-at` (read-only): zxid, live sessions, the
    /// election node's children by sequence number.
    fn inspect(&self) -> Vec<(&'static str, String)> {
        vec![
            ("zxid", self.db.zxid.to_string()),
            ("sessions", self.db.sessions.len().to_string()),
            ("children", self.db.children_text()),
        ]
    }

    /// A restarted server keeps its sessions and gives each a full timeout from now.
    fn on_restart(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        // Sessions survive a server restart (they are in the snapshot); like a new leader,
        // the server gives every session a full timeout from now.
        let now = ctx.monotonic_now();
        let ids: Vec<u64> = self.db.sessions.keys().copied().collect();
        for id in ids {
            self.touch(now, id);
        }
        self.arm(ctx);
    }

    /// The expiry timer: expires every session whose bucket has come.
    fn on_timer(&mut self, ctx: &mut ZkCtx<'_, '_>, timer: ZkTimer) {
        self.vacancy_signalled = false;
        if timer == ZkTimer::Expiry {
            self.expire(ctx);
            self.arm(ctx);
        }
    }

    /// Expires what is due, then serves the request and re-arms the expiry timer.
    fn on_message(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, msg: ZkMsg) {
        self.vacancy_signalled = false;
        self.expire(ctx);
        let now = ctx.monotonic_now();
        match msg {
            ZkMsg::Connect { timeout_ns } => {
                let timeout_ns = ZkConfig {
                    session_timeout_ns: timeout_ns,
                    ..self.config.clone()
                }
                .negotiated_timeout_ns();
                let session = self.db.next_session;
                self.apply(ZkTxn::CreateSession {
                    session,
                    owner: from,
                    timeout_ns,
                });
                self.tracker.track(now, session, timeout_ns);
                // createSession is a transaction: logged and synced before the answer
                // (SyncRequestProcessor).
                ctx.persist(());
                ctx.send(
                    from,
                    ZkMsg::ConnectResp {
                        session,
                        timeout_ns,
                    },
                );
            }
            ZkMsg::Ping { session } => {
                let alive = self.touch(now, session);
                ctx.send(
                    from,
                    ZkMsg::Pong {
                        session,
                        expired: !alive,
                    },
                );
            }
            ZkMsg::Create { session } => {
                if !self.touch(now, session) {
                    ctx.send(
                        from,
                        ZkMsg::Pong {
                            session,
                            expired: true,
                        },
                    );
                } else {
                    // One election node per session (a retried create returns the first,
                    // like Curator's protected mode).
                    let existing = self.db.sessions[&session].node;
                    let seq = match existing {
                        Some(seq) => seq,
                        None => {
                            let seq = self.db.next_seq;
                            let Applied::Created { owner, .. } =
                                self.apply(ZkTxn::Create { session, seq })
                            else {
                                unreachable!("a live session without a child creates one")
                            };
                            ctx.persist(());
                            ctx.signal(Signal::LeaseHeld { holder: owner });
                            if seq == 0 {
                                // The first candidate ever: the initial election begins.
                                ctx.signal(Signal::ElectionStarted { term: self.db.zxid });
                            }
                            self.fire_child_watches(ctx);
                            seq
                        }
                    };
                    let czxid = self.db.children[&seq].0;
                    ctx.send(from, ZkMsg::CreateResp { seq, czxid });
                }
            }
            ZkMsg::GetChildren { session, watch } => {
                // A watch belongs to a live session (ZooKeeper refuses an expired one's
                // requests and drops its watches with its connection).
                let live = self.touch(now, session);
                if watch && live && !self.child_watches.contains(&(from, session)) {
                    self.child_watches.push((from, session));
                }
                ctx.send(
                    from,
                    ZkMsg::Children {
                        zxid: self.db.zxid,
                        children: self.children(),
                    },
                );
            }
            ZkMsg::Exists { session, seq } => {
                let live = self.touch(now, session);
                let exists = self.db.children.contains_key(&seq);
                if exists && live {
                    let w = self.exists_watches.entry(seq).or_default();
                    if !w.contains(&(from, session)) {
                        w.push((from, session));
                    }
                }
                ctx.send(from, ZkMsg::ExistsResp { seq, exists });
            }
            ZkMsg::CloseSession { session } => self.close(ctx, session, false),
            _ => {}
        }
        self.arm(ctx);
    }

    /// The server waits for requests: sessions start when clients connect.
    fn on_start(&mut self, _ctx: &mut ZkCtx<'_, '_>) {}

    /// The last zxid (the server's term for `term_monotonic`).
    fn term(&self) -> u64 {
        self.db.zxid
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }

    /// The owner of the lowest child.
    fn known_leader(&self) -> Option<NodeId> {
        self.leader()
    }
}
