//! An election candidate running ZooKeeper's leader-election recipe: open a session, create
//! an ephemeral sequential child of the election node, lead when it has the lowest sequence
//! number, otherwise watch the predecessor with `exists` (or, in the herd variant, watch the
//! children). The client pings every third of the session timeout and counts itself
//! disconnected when it has heard nothing for two thirds of it. Against an ensemble it keeps
//! a shuffled server list and, when disconnected, pauses below a second and tries the next
//! server with a connect timeout of T / n (`ClientCnxn`, `StaticHostProvider`).

use super::config::{ZkConfig, ZkOnDisconnect, ZkRecipe};
use super::messages::{Child, ZkMsg, ZkTimer};
use splitbrain_sim::{Ctx, LocalNanos, Message, NodeId, Process, Signal};

type ZkCtx<'a, 'b> = Ctx<'a, ZkMsg, ZkTimer>;

/// `ClientCnxn.SendThread.startConnect`: a random pause below 1 s before each reconnect.
const RECONNECT_PAUSE_NS: u64 = 1_000_000_000;

/// Where a client is in the recipe.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ZkPhase {
    /// Waiting for a session.
    Connecting,
    /// Holding a session, waiting for its child to be created.
    Creating,
    /// Own node created, waiting for the watched node to go.
    Waiting {
        /// The watched predecessor's sequence number (the lowest child for the herd;
        /// `u64::MAX` until the first view of the children).
        pred: u64,
    },
    /// Own node is the lowest.
    Leading,
}

/// An election member: its session, its child and where it is in the recipe.
#[derive(Clone, Debug)]
pub struct ZkClient {
    me: NodeId,
    service: NodeId,
    config: ZkConfig,
    phase: ZkPhase,
    session: u64,
    timeout_ns: u64,
    seq: Option<u64>,
    czxid: u64,
    last_heard: LocalNanos,
    /// Whether the leader has announced leadership and not stepped down since.
    claimed: bool,
    seen_zxid: u64,
    leader_seen: Option<NodeId>,
    /// `Stream`: the client closed or lost its connection and has not heard the server on a
    /// new one yet; the first answer re-reads the children and re-sets the watch.
    reconnecting: bool,
    /// Messages travel on `Stream` connections (learnt at the start; a restart keeps it).
    on_stream: bool,
    /// Against an ensemble: the servers in the order this client tries them (shuffled at
    /// the start, as `StaticHostProvider` does), and the one it uses now. Empty against the
    /// single server.
    servers: Vec<NodeId>,
    current: usize,
    /// Against an ensemble: in the random pause before the next server.
    paused: bool,
}

impl ZkClient {
    /// Member `me` of `members`; the server is process `members`.
    pub fn new(me: NodeId, members: usize, config: &ZkConfig) -> Self {
        Self {
            me,
            service: NodeId::from(members),
            config: config.clone(),
            phase: ZkPhase::Connecting,
            session: 0,
            timeout_ns: config.negotiated_timeout_ns(),
            seq: None,
            czxid: 0,
            last_heard: 0,
            claimed: false,
            seen_zxid: 0,
            leader_seen: None,
            reconnecting: false,
            on_stream: false,
            servers: if config.is_ensemble() {
                (members..members + config.servers as usize)
                    .map(NodeId::from)
                    .collect()
            } else {
                Vec::new()
            },
            current: 0,
            paused: false,
        }
    }

    /// The server this client talks to: the single server, or its current ensemble server.
    pub fn server(&self) -> NodeId {
        self.servers
            .get(self.current)
            .copied()
            .unwrap_or(self.service)
    }

    fn ensemble(&self) -> bool {
        !self.servers.is_empty()
    }

    /// `ClientCnxn`: `connectTimeout = sessionTimeout / hostProvider.size()`.
    fn connect_timeout_ns(&self) -> u64 {
        self.timeout_ns / self.servers.len().max(1) as u64
    }

    /// Against an ensemble: the connection to the current server is gone. After a random
    /// pause of up to a second (`ClientCnxn.SendThread.startConnect`: `Thread.sleep(
    /// ThreadLocalRandom.current().nextLong(1000))`) the client tries the next server.
    fn move_on(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.paused = true;
        self.reconnecting = true;
        ctx.cancel_timer(ZkTimer::Disconnect);
        let pause_ns = ctx.rng().below(RECONNECT_PAUSE_NS);
        ctx.set_timer(ZkTimer::Reconnect, pause_ns);
    }

    /// The pause is over: connect to the next server in the list (`hostProvider.next`).
    fn next_server(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.paused = false;
        self.current = (self.current + 1) % self.servers.len().max(1);
        self.reconnect(ctx);
    }

    /// Where the client is in the recipe.
    pub fn phase(&self) -> ZkPhase {
        self.phase
    }

    /// The client's session id (0 without one).
    pub fn session(&self) -> u64 {
        self.session
    }

    fn connected(&self, now: LocalNanos) -> bool {
        now < self
            .last_heard
            .saturating_add((2 * self.timeout_ns / 3) as i64)
    }

    fn step_down(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if self.claimed {
            self.claimed = false;
            ctx.stepped_down();
        }
    }

    fn start_over(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.step_down(ctx);
        // A new session knows who leads once it has read the children (a leader starting
        // over must not go on naming itself).
        self.leader_seen = None;
        self.phase = ZkPhase::Connecting;
        self.session = 0;
        self.seq = None;
        if self.ensemble() {
            // The connect attempt is timed (T/n); in the pause it waits for the next server.
            if !self.paused {
                self.reconnect(ctx);
            }
            return;
        }
        ctx.send(
            self.server(),
            ZkMsg::Connect {
                timeout_ns: self.config.session_timeout_ns,
            },
        );
        Self::retry_after(ctx, self.timeout_ns / 3);
    }

    /// On `Datagram`, the request just sent goes again after `after_ns` if unanswered (a
    /// waiter's or leader's resync of the children, once per session timeout). On `Stream`
    /// nothing is lost while the connection is up and the Java client re-sends nothing: a
    /// broken connection is handled by [`Self::reconnect`].
    fn retry_after(ctx: &mut ZkCtx<'_, '_>, after_ns: u64) {
        if !ctx.stream() {
            ctx.set_timer(ZkTimer::Retry, after_ns);
        }
    }

    /// `Stream`: a new connection to the server, as `ClientCnxn.SendThread` opens one after
    /// `cleanup()` dropped the old (its read timeout, or the socket failed): it sends the
    /// session's `ConnectRequest` first (modeled by the phase's request, or a ping that
    /// carries the session), and the requests that were outstanding failed with
    /// `ConnectionLoss` (the recipe asks again). The first answer on the new connection
    /// re-reads the children (`SetWatches` replays the watches with the last zxid seen).
    fn reconnect(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.reconnecting = true;
        match self.phase {
            ZkPhase::Connecting => ctx.send(
                self.server(),
                ZkMsg::Connect {
                    timeout_ns: self.config.session_timeout_ns,
                },
            ),
            ZkPhase::Creating => ctx.send(
                self.server(),
                ZkMsg::Create {
                    session: self.session,
                },
            ),
            ZkPhase::Waiting { .. } | ZkPhase::Leading => ctx.send(
                self.server(),
                ZkMsg::Ping {
                    session: self.session,
                },
            ),
        }
        let check_ns = if self.ensemble() {
            self.connect_timeout_ns()
        } else {
            2 * self.timeout_ns / 3
        };
        ctx.set_timer(ZkTimer::Disconnect, check_ns);
    }

    /// A leader that gives up on a lost connection steps down; only its step-down counts as
    /// noticing the fault (a waiter keeps waiting; a leader that keeps leading until
    /// expired does nothing).
    fn disconnected(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if self.claimed && self.config.on_disconnect == ZkOnDisconnect::StepDown {
            ctx.signal(Signal::LeaderSuspected);
            self.step_down(ctx);
        }
    }

    fn get_children(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        ctx.send(
            self.server(),
            ZkMsg::GetChildren {
                session: self.session,
                watch: self.config.recipe == ZkRecipe::Herd,
            },
        );
    }

    /// Against an ensemble: the timers that differ from the single server's. True if
    /// `timer` is handled.
    fn ensemble_timer(&mut self, ctx: &mut ZkCtx<'_, '_>, timer: ZkTimer) -> bool {
        let now = ctx.monotonic_now();
        match timer {
            ZkTimer::Reconnect => self.next_server(ctx),
            // No pings, no retries without a connection (or while connecting).
            ZkTimer::Ping | ZkTimer::Retry if self.reconnecting => {
                if timer == ZkTimer::Ping {
                    ctx.set_timer(ZkTimer::Ping, self.timeout_ns / 3);
                }
            }
            ZkTimer::Disconnect => {
                // The connect attempt timed out (T/n), or nothing heard for 2/3 of T.
                if !self.paused && (self.reconnecting || !self.connected(now)) {
                    self.disconnected(ctx);
                    ctx.disconnect(self.server());
                    self.move_on(ctx);
                }
            }
            _ => return false,
        }
        true
    }

    fn evaluate(&mut self, ctx: &mut ZkCtx<'_, '_>, children: &[Child]) {
        self.leader_seen = children.first().map(|c| c.2);
        let Some(me) = self.seq else {
            return;
        };
        if !matches!(self.phase, ZkPhase::Waiting { .. } | ZkPhase::Leading) {
            return;
        }
        if !children.iter().any(|c| c.0 == me) {
            // The own node is gone: the session expired.
            self.start_over(ctx);
            return;
        }
        if children[0].0 == me {
            self.phase = ZkPhase::Leading;
            let now = ctx.monotonic_now();
            if !self.claimed
                && (self.connected(now)
                    || self.config.on_disconnect == ZkOnDisconnect::KeepUntilExpired)
            {
                self.claimed = true;
                ctx.became_leader(self.czxid, self.czxid);
            }
            Self::retry_after(ctx, self.timeout_ns);
            return;
        }
        let pred = match self.config.recipe {
            ZkRecipe::Predecessor => children
                .iter()
                .filter(|c| c.0 < me)
                .map(|c| c.0)
                .max()
                .expect("a lower child exists"),
            ZkRecipe::Herd => children[0].0,
        };
        let was = self.phase;
        self.phase = ZkPhase::Waiting { pred };
        if self.config.recipe == ZkRecipe::Predecessor && was != self.phase {
            ctx.send(
                self.server(),
                ZkMsg::Exists {
                    session: self.session,
                    seq: pred,
                },
            );
        }
        Self::retry_after(ctx, self.timeout_ns);
    }

    /// After a reconnect: read the children again, and watch the predecessor anew.
    fn resync(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if let ZkPhase::Waiting { .. } = self.phase {
            self.phase = ZkPhase::Waiting { pred: u64::MAX };
        }
        self.get_children(ctx);
    }
}

impl Process for ZkClient {
    type Msg = ZkMsg;
    type Timer = ZkTimer;
    type Durable = ();

    /// The highest zxid the client has seen (its term).
    fn term(&self) -> u64 {
        self.seen_zxid
    }

    /// The own child's czxid, while the client has claimed leadership and is connected (or
    /// at any time with `KeepUntilExpired`).
    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        let serving = self.claimed
            && (self.config.on_disconnect == ZkOnDisconnect::KeepUntilExpired
                || self.connected(now));
        serving.then_some(self.czxid)
    }

    /// Whether the client keeps no track of who leads but would ask: a waiter of the
    /// predecessor recipe on `Stream` that has not noticed a lost connection. Such a waiter
    /// hears only of its predecessor's deletion; a real application asks on demand (Curator
    /// `LeaderLatch.getLeader()` polls the server; kazoo `Election.contenders()` is a
    /// `get_children`). A herd waiter hears of every change, and on `Datagram` the model's
    /// waiters re-read the children once per session timeout: both keep track. A silent cut
    /// is noticed up to 2/3 of the session timeout late (`ZkTimer::Disconnect`); until then
    /// the waiter still counts as asking.
    fn learns_leader_on_demand(&self) -> bool {
        self.on_stream
            && self.config.recipe == ZkRecipe::Predecessor
            && matches!(self.phase, ZkPhase::Waiting { .. })
            && !self.reconnecting
    }

    /// The client's recipe state, for `run --stop-at` (read-only).
    fn inspect(&self) -> Vec<(&'static str, String)> {
        let seq = self.seq.map_or("none".to_string(), |s| s.to_string());
        let leader = self
            .leader_seen
            .map_or("none".to_string(), |n| n.to_string());
        vec![
            ("phase", format!("{:?}", self.phase)),
            ("session", self.session.to_string()),
            ("seq", seq),
            ("czxid", self.czxid.to_string()),
            ("last_heard_local_ns", self.last_heard.to_string()),
            ("claimed", self.claimed.to_string()),
            ("leader_seen", leader),
        ]
    }

    /// The client itself while it leads and serves (has claimed and not stepped down), nobody
    /// while it leads without serving, else the owner of the lowest child it last saw.
    fn known_leader(&self) -> Option<NodeId> {
        match self.phase {
            ZkPhase::Leading => self.claimed.then_some(self.me),
            _ => self.leader_seen,
        }
    }

    /// The connection to the server broke (`Stream` only): reconnect.
    fn on_disconnect(&mut self, ctx: &mut ZkCtx<'_, '_>, peer: NodeId) {
        if peer != self.server() {
            return;
        }
        self.disconnected(ctx);
        if self.ensemble() {
            if !self.paused {
                self.move_on(ctx);
            }
        } else {
            self.reconnect(ctx);
        }
    }

    /// A client connects at once.
    fn on_start(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.on_stream = ctx.stream();
        // StaticHostProvider: the server list is shuffled (`Collections.shuffle`).
        for i in (1..self.servers.len()).rev() {
            let j = ctx.rng().index(i + 1);
            self.servers.swap(i, j);
        }
        self.last_heard = ctx.monotonic_now();
        self.start_over(ctx);
    }

    /// A restarted client forgets its leader and starts over with a new session; the old
    /// session's child goes when the server expires it.
    fn on_restart(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.claimed = false;
        self.paused = false;
        self.last_heard = ctx.monotonic_now();
        self.start_over(ctx);
    }

    /// The leader closes its session (deleting its child) and starts over.
    fn on_resign(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if self.phase == ZkPhase::Leading {
            ctx.send(
                self.server(),
                ZkMsg::CloseSession {
                    session: self.session,
                },
            );
            self.start_over(ctx);
        }
    }

    /// Pings, steps a disconnected leader down (`StepDown`), or retries the request of the
    /// phase (for a waiter or leader, a resync of the children).
    fn on_timer(&mut self, ctx: &mut ZkCtx<'_, '_>, timer: ZkTimer) {
        let now = ctx.monotonic_now();
        if self.ensemble() && self.ensemble_timer(ctx, timer) {
            return;
        }
        match timer {
            ZkTimer::Ping => {
                if self.session != 0 {
                    ctx.send(
                        self.server(),
                        ZkMsg::Ping {
                            session: self.session,
                        },
                    );
                }
                ctx.set_timer(ZkTimer::Ping, self.timeout_ns / 3);
            }
            ZkTimer::Disconnect => {
                if !self.connected(now) {
                    self.disconnected(ctx);
                    if ctx.stream() {
                        // ClientCnxn: "Client session timed out, have not heard from server
                        // in ...ms": close the socket and connect again.
                        ctx.disconnect(self.server());
                        self.reconnect(ctx);
                    }
                }
            }
            ZkTimer::Retry => match self.phase {
                ZkPhase::Connecting => {
                    ctx.send(
                        self.server(),
                        ZkMsg::Connect {
                            timeout_ns: self.config.session_timeout_ns,
                        },
                    );
                    ctx.set_timer(ZkTimer::Retry, self.timeout_ns / 3);
                }
                ZkPhase::Creating => {
                    ctx.send(
                        self.server(),
                        ZkMsg::Create {
                            session: self.session,
                        },
                    );
                    ctx.set_timer(ZkTimer::Retry, self.timeout_ns / 3);
                }
                ZkPhase::Waiting { .. } | ZkPhase::Leading => {
                    self.get_children(ctx);
                    ctx.set_timer(ZkTimer::Retry, self.timeout_ns);
                }
            },
            ZkTimer::Expiry
            | ZkTimer::Reconnect
            | ZkTimer::Notify
            | ZkTimer::Finalize
            | ZkTimer::LeaderTick
            | ZkTimer::Limit => {}
        }
    }

    /// Any answer shows the connection alive; a session leads to the create, a view of the
    /// children to leading or watching, an expired session to starting over.
    fn on_message(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, msg: ZkMsg) {
        if self.ensemble() && (self.paused || from != self.server()) {
            // An old connection's late answer.
            return;
        }
        let now = ctx.monotonic_now();
        self.seen_zxid = self.seen_zxid.max(msg.term());
        self.last_heard = now;
        ctx.set_timer(ZkTimer::Disconnect, 2 * self.timeout_ns / 3);
        let resynced = std::mem::take(&mut self.reconnecting) && self.seq.is_some();
        if resynced {
            self.resync(ctx);
        }
        match msg {
            ZkMsg::ConnectResp {
                session,
                timeout_ns,
            } if self.phase == ZkPhase::Connecting => {
                self.session = session;
                self.timeout_ns = timeout_ns;
                self.phase = ZkPhase::Creating;
                ctx.set_timer(ZkTimer::Ping, timeout_ns / 3);
                ctx.send(self.server(), ZkMsg::Create { session });
                Self::retry_after(ctx, timeout_ns / 3);
            }
            ZkMsg::Pong { session, expired } if session == self.session && session != 0 => {
                if expired {
                    self.start_over(ctx);
                } else if self.phase == ZkPhase::Leading && !self.claimed && !resynced {
                    // Reconnected to a live session after a disconnect: check the children
                    // before serving again.
                    self.get_children(ctx);
                }
            }
            ZkMsg::CreateResp { seq, czxid } if self.phase == ZkPhase::Creating => {
                self.seq = Some(seq);
                self.czxid = czxid;
                self.phase = ZkPhase::Waiting { pred: u64::MAX };
                self.get_children(ctx);
                Self::retry_after(ctx, self.timeout_ns);
            }
            ZkMsg::Children { children, .. } => self.evaluate(ctx, &children),
            ZkMsg::ExistsResp { seq, exists }
                if !exists && self.phase == (ZkPhase::Waiting { pred: seq }) =>
            {
                self.get_children(ctx);
            }
            ZkMsg::NodeDeleted { seq, .. } if self.phase == (ZkPhase::Waiting { pred: seq }) => {
                self.get_children(ctx);
            }
            ZkMsg::ChildrenChanged { .. } if matches!(self.phase, ZkPhase::Waiting { .. }) => {
                self.get_children(ctx);
            }
            _ => {}
        }
    }

    /// A client's session is on the single server, or on its current ensemble server.
    fn service_member_used(&self) -> Option<NodeId> {
        Some(self.server())
    }
}
