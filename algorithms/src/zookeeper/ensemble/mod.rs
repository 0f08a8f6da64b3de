//! A ZooKeeper server of an ensemble (`servers > 1`): FastLeaderElection between the
//! servers (`election.rs`), the new leader's sync and ZAB's broadcast (`zab.rs`), sessions
//! expired by the leader's tracker only, and the clients' requests (`serve.rs`), served only
//! while FOLLOWING or LEADING. `docs/algorithms/zookeeper.md`, "Ensemble (servers > 1)",
//! gives each rule's source (from `docs/service-clusters.md`, section 5); the paths are
//! under `zookeeper-server/src/main/java/org/apache/zookeeper/` at `release-3.8.0-1`.
//!
//! The servers are processes `members..members + servers`. What a server keeps on disk is
//! its database, its log of proposals not yet committed and its epochs; it keeps them in
//! memory across a restart (writes are fsynced with `ctx.persist` before what depends on
//! them leaves the server).

mod election;
mod serve;
mod zab;

use super::db::ZkDb;

use super::config::ZkConfig;
use super::messages::{ZkMsg, ZkPeerState, ZkTimer, ZkTxn};
use super::tracker::SessionTracker;
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process};
use std::collections::{BTreeMap, BTreeSet};

type ZkCtx<'a, 'b> = Ctx<'a, ZkMsg, ZkTimer>;

/// A vote of FastLeaderElection: the proposed leader, its last zxid and its epoch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    /// The proposed leader.
    pub leader: NodeId,
    /// Its last logged zxid.
    pub zxid: u64,
    /// Its epoch.
    pub epoch: u64,
}

impl Vote {
    /// `FastLeaderElection.totalOrderPredicate`: higher epoch, then higher zxid, then
    /// higher server id.
    pub fn beats(&self, other: &Vote) -> bool {
        (self.epoch, self.zxid, self.leader) > (other.epoch, other.zxid, other.leader)
    }
}

/// The election's state while LOOKING.
#[derive(Clone, Debug)]
struct Election {
    /// `logicalclock`: the election round.
    round: u64,
    /// The vote this server proposes.
    vote: Vote,
    /// Same-round votes of LOOKING servers (`recvset`), this server's own included.
    votes: BTreeMap<NodeId, Vote>,
    /// Votes of servers that already follow or lead (`outofelection`).
    out_of_election: BTreeMap<NodeId, (Vote, ZkPeerState)>,
    /// The notification timeout (`notTimeout`): 200 ms, doubling to 60 s.
    not_timeout_ns: u64,
    /// A quorum agrees: waiting `finalizeWait` for a better vote.
    finalizing: bool,
}

/// Where a leader is after the election.
#[derive(Clone, Debug, PartialEq, Eq)]
enum LeaderPhase {
    /// Collecting `FOLLOWERINFO` from a quorum (its epoch).
    Discovery {
        /// Followers heard, with the epoch each accepted last.
        infos: BTreeMap<NodeId, u64>,
    },
    /// `NEWLEADER` sent; waiting for a quorum of acks.
    Syncing {
        /// The servers that acknowledged, the leader included.
        acks: BTreeSet<NodeId>,
    },
    /// A quorum is synced: serving clients and broadcasting writes.
    Serving,
}

/// A proposal waiting for its quorum.
#[derive(Clone, Debug)]
struct Pending {
    txn: ZkTxn,
    origin: Option<NodeId>,
    acks: BTreeSet<NodeId>,
}

/// A leader's volatile state.
#[derive(Clone, Debug)]
struct Leader {
    phase: LeaderPhase,
    /// Followers sent `NEWLEADER`, each with the tick of its next ack deadline
    /// (`LearnerHandler.tickOfNextAckDeadline`).
    followers: BTreeMap<NodeId, u64>,
    /// When each follower last answered, by the leader's clock.
    heard_at: BTreeMap<NodeId, LocalNanos>,
    pending: BTreeMap<u64, Pending>,
    /// The next zxid counter of this epoch.
    counter: u64,
    next_session: u64,
    next_seq: u64,
    /// The session tracker: only the leader expires sessions.
    tracker: SessionTracker,
    /// Sessions whose close is proposed (`setSessionClosing`).
    closing: BTreeSet<u64>,
    /// `Leader.lead`'s tick count, and whether this half-tick pass skips the quorum check.
    tick: u64,
    tick_skip: bool,
}

/// A follower's volatile state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Follower {
    leader: NodeId,
    /// `UPTODATE` (or a ping) heard: serving clients.
    serving: bool,
}

/// The server's state in the ensemble (`QuorumPeer.ServerState`, with what each needs).
#[derive(Clone, Debug)]
enum Role {
    Looking,
    Following(Follower),
    Leading(Box<Leader>),
}

/// Watches the server's own clients left (they are per connection).
#[derive(Clone, Debug, Default)]
struct Watches {
    /// One-shot exists watches per child: (watcher, its session).
    exists: BTreeMap<u64, Vec<(NodeId, u64)>>,
    /// One-shot child watches on the election node.
    children: Vec<(NodeId, u64)>,
}

/// One server of a ZooKeeper ensemble.
#[derive(Clone, Debug)]
pub struct ZkServer {
    config: ZkConfig,
    me: NodeId,
    /// The first server's process id (the number of election members).
    first: usize,
    // Durable.
    db: ZkDb,
    /// Proposals logged and not yet committed, in zxid order.
    log: Vec<(u64, ZkTxn)>,
    accepted_epoch: u64,
    current_epoch: u64,
    // Volatile.
    role: Role,
    election: Election,
    /// The vote this server last decided on (answered to LOOKING servers).
    elected: Option<Vote>,
    clients: BTreeSet<NodeId>,
    watches: Watches,
    /// A follower's clients' sessions touched since its last ping answer.
    touches: BTreeSet<u64>,
    /// A follower has its leader's `NEWLEADER`.
    synced: bool,
    vacancy_signalled: bool,
}

impl ZkServer {
    /// Server `me` of an ensemble whose first server is process `first` (`config.servers`
    /// servers).
    pub fn new(me: NodeId, first: usize, config: &ZkConfig) -> Self {
        let vote = Vote {
            leader: me,
            zxid: 0,
            epoch: 0,
        };
        Self {
            config: config.clone(),
            me,
            first,
            db: ZkDb::new(),
            log: Vec::new(),
            accepted_epoch: 0,
            current_epoch: 0,
            role: Role::Looking,
            election: Election {
                round: 0,
                vote,
                votes: BTreeMap::new(),
                out_of_election: BTreeMap::new(),
                not_timeout_ns: election::FINALIZE_WAIT_NS,
                finalizing: false,
            },
            elected: None,
            clients: BTreeSet::new(),
            watches: Watches::default(),
            touches: BTreeSet::new(),
            synced: false,
            vacancy_signalled: false,
        }
    }

    /// The other servers, in id order.
    fn peers(&self) -> impl Iterator<Item = NodeId> + '_ {
        (self.first..self.first + self.config.servers as usize)
            .map(NodeId::from)
            .filter(move |n| *n != self.me)
    }

    fn is_server(&self, node: NodeId) -> bool {
        (self.first..self.first + self.config.servers as usize).contains(&node.index())
    }

    /// The last zxid this server logged (committed or not): what its vote carries.
    fn last_zxid(&self) -> u64 {
        self.log.last().map_or(self.db.zxid, |(z, _)| *z)
    }

    /// Whether the server serves clients: a leader with a synced quorum, or a follower
    /// that heard `UPTODATE`.
    pub fn serving(&self) -> bool {
        match &self.role {
            Role::Looking => false,
            Role::Following(f) => f.serving,
            Role::Leading(l) => l.phase == LeaderPhase::Serving,
        }
    }

    /// The server's state as `QuorumPeer` names it.
    pub fn state(&self) -> ZkPeerState {
        match self.role {
            Role::Looking => ZkPeerState::Looking,
            Role::Following(_) => ZkPeerState::Following,
            Role::Leading(_) => ZkPeerState::Leading,
        }
    }

    /// The last applied zxid (the server's term for `term_monotonic`).
    pub fn zxid(&self) -> u64 {
        self.db.zxid
    }

    /// The replicated database as this server has applied it.
    pub fn db(&self) -> &ZkDb {
        &self.db
    }

    /// Sessions the leader's tracker holds (None on a server that is not a serving leader).
    pub fn tracked_sessions(&self) -> Option<usize> {
        match &self.role {
            Role::Leading(l) if l.phase == LeaderPhase::Serving => Some(l.tracker.len()),
            _ => None,
        }
    }

    /// Leaves FOLLOWING or LEADING: closes every client connection (`zk.shutdown()`), and
    /// the connections to the leader or the followers (`Learner.shutdown`,
    /// `Leader.shutdown`).
    fn leave_service(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        for client in std::mem::take(&mut self.clients) {
            ctx.disconnect(client);
        }
        self.watches = Watches::default();
        self.touches.clear();
        match std::mem::replace(&mut self.role, Role::Looking) {
            Role::Following(f) => ctx.disconnect(f.leader),
            Role::Leading(l) => {
                for f in l.followers.keys() {
                    ctx.disconnect(*f);
                }
            }
            Role::Looking => {}
        }
        ctx.cancel_timer(ZkTimer::LeaderTick);
        ctx.cancel_timer(ZkTimer::Limit);
        ctx.cancel_timer(ZkTimer::Retry);
        ctx.cancel_timer(ZkTimer::Expiry);
    }
}

impl Process for ZkServer {
    type Msg = ZkMsg;
    type Timer = ZkTimer;
    type Durable = ();

    /// Whether the server is LEADING (in sync or serving).
    fn leads_service(&self) -> bool {
        matches!(self.role, Role::Leading(_))
    }

    /// Whom a client asking who leads would be told: the lowest child's owner, while the
    /// server serves.
    fn known_leader(&self) -> Option<NodeId> {
        self.serving().then(|| self.db.leader()).flatten()
    }

    /// The server's state, for `run --stop-at` (read-only).
    fn inspect(&self) -> Vec<(&'static str, String)> {
        let leader = match &self.role {
            Role::Following(f) => f.leader.to_string(),
            Role::Leading(_) => self.me.to_string(),
            Role::Looking => "none".to_string(),
        };
        vec![
            ("state", format!("{:?}", self.state())),
            ("serving", self.serving().to_string()),
            ("ensemble_leader", leader),
            ("epoch", self.current_epoch.to_string()),
            ("zxid", format!("{:#x}", self.db.zxid)),
            ("sessions", self.db.sessions.len().to_string()),
            ("children", self.db.children_text()),
        ]
    }

    /// Every server starts LOOKING.
    fn on_start(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.start_looking(ctx);
    }

    /// A restarted server keeps its database, log and epochs and starts LOOKING.
    fn on_restart(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.clients.clear();
        self.watches = Watches::default();
        self.touches.clear();
        self.role = Role::Looking;
        self.start_looking(ctx);
    }

    /// A message from another server or from a client.
    fn on_message(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, msg: ZkMsg) {
        self.vacancy_signalled = false;
        if !self.is_server(from) {
            self.on_client(ctx, from, msg);
            return;
        }
        match msg {
            ZkMsg::Notification {
                round,
                leader,
                zxid,
                epoch,
                state,
            } => {
                let vote = Vote {
                    leader,
                    zxid,
                    epoch,
                };
                self.on_notification(ctx, from, round, vote, state);
            }
            other => self.on_peer(ctx, from, other),
        }
    }

    /// The election's, the leader's and the tracker's timers.
    fn on_timer(&mut self, ctx: &mut ZkCtx<'_, '_>, timer: ZkTimer) {
        self.vacancy_signalled = false;
        match timer {
            ZkTimer::Notify => self.on_notify_timeout(ctx),
            ZkTimer::Finalize => self.on_finalize(ctx),
            ZkTimer::LeaderTick => self.on_leader_tick(ctx),
            ZkTimer::Limit => self.on_limit(ctx),
            ZkTimer::Retry => self.on_follower_retry(ctx),
            ZkTimer::Expiry => self.on_expiry(ctx),
            ZkTimer::Ping | ZkTimer::Disconnect | ZkTimer::Reconnect => {}
        }
    }

    /// A broken connection: to the leader (a follower goes LOOKING at once), to a follower
    /// (the leader stops counting it), or to a client (its watches go with it).
    fn on_disconnect(&mut self, ctx: &mut ZkCtx<'_, '_>, peer: NodeId) {
        self.vacancy_signalled = false;
        if !self.is_server(peer) {
            self.drop_client(peer);
            return;
        }
        match &mut self.role {
            Role::Following(f) if f.leader == peer => self.start_looking(ctx),
            Role::Leading(l) => {
                l.followers.remove(&peer);
            }
            _ => {}
        }
    }

    /// The last applied zxid (the server's term for `term_monotonic`).
    fn term(&self) -> u64 {
        self.zxid()
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests;
