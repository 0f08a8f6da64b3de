//! An election candidate running etcd's `concurrency.Election` recipe (or the SetNx lock).
//!
//! Revision recipe: grant a lease; in one transaction create `prefix/<lease>` if it does not
//! exist and range the prefix; lead when the own key has the lowest create revision, else
//! watch the predecessor (the key with the highest create revision below the own one) for
//! its delete, then range again. Waiters resync with a range every TTL (the `Observe` side of
//! the recipe: it also tells them who leads).
//!
//! Keeping the lease alive, as etcd's Go client does ([`EtcdClientKind::Clientv3`],
//! `clientv3/lease.go` of v3.4): a send loop passes every 500 ms (`sendKeepAliveLoop`) and
//! sends a keep-alive once the local clock is past `keepalive` after the last answer
//! (`recvKeepAlive`: `nextKeepAlive = now + TTL/3`); every answer sets the deadline to its
//! arrival plus the granted TTL (`ka.deadline = now + TTL`), and a loop passing every second
//! (`deadlineLoop`) ends the session once the clock is past it. The careful client
//! ([`EtcdClientKind::SendTime`], not etcd's) sends every `keepalive` and believes until its
//! clock reaches the send time of the last answered keep-alive plus the TTL.

use super::config::{
    after, EtcdClientKind, EtcdConfig, EtcdVariant, CLIENT_DEADLINE_LOOP_NS, CLIENT_SEND_LOOP_NS,
};
use super::messages::{EtcdMsg, EtcdTimer, KeyView};
use splitbrain_sim::{Ctx, LocalNanos, Message, NodeId, Process, Signal, NANOS_PER_MILLI};

type EtcdCtx<'a, 'b> = Ctx<'a, EtcdMsg, EtcdTimer>;

/// clientv3's wait between unary retries (`options.go`, `defaultBackoffWaitBetween`, 25 ms;
/// its 10 % jitter is left out).
const CLIENT_RETRY_BACKOFF_NS: u64 = 25 * NANOS_PER_MILLI;

/// Where a client is in its campaign.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for a lease grant in campaign number `campaign` (grants asked for by an
    /// earlier campaign belong to an abandoned one).
    Granting {
        /// The number of the campaign under way.
        campaign: u64,
    },
    /// Holding a lease, waiting for the transaction's answer.
    Creating,
    /// Own key created; waiting for the predecessor `pred` to go.
    Waiting {
        /// The create revision of the predecessor's key, which the client watches.
        pred: u64,
    },
    /// Own key is the lowest.
    Leading,
    /// SetNx: polling for the lock.
    Polling,
}

/// An election member: its lease, its key and where it is in the recipe.
#[derive(Clone, Debug)]
pub struct EtcdClient {
    me: NodeId,
    /// The member the client talks to now (the single service, or one etcd member).
    service: NodeId,
    /// Every etcd member's process id (one entry for the single service).
    endpoints: Vec<NodeId>,
    /// The index of `service` in `endpoints`.
    endpoint: usize,
    /// The armed retry is the backoff after a member's error (it already moved on), not a
    /// request's timeout.
    backoff_retry: bool,
    config: EtcdConfig,
    phase: Phase,
    lease: Option<u64>,
    /// The own key's create revision (Revision recipes) or the lock's term (SetNx).
    my_rev: u64,
    /// The lease is believed alive while the local clock reads less than this (clientv3:
    /// until its deadline loop finds the clock past it).
    lease_deadline: LocalNanos,
    /// clientv3: the send loop sends a keep-alive once the local clock is past this; only an
    /// answer moves it on, so an unanswered keep-alive goes again at every pass.
    next_keepalive: LocalNanos,
    token: u64,
    /// The highest revision seen; kept across restarts (it only grows at the service).
    seen_revision: u64,
    leader_seen: Option<NodeId>,
    /// Campaigns started, the current one's number included (kept across restarts).
    campaigns: u64,
    /// The revision of the newest view of the prefix acted on: an older one, answered before
    /// it but delivered after, is stale and ignored.
    view_revision: u64,
    /// `Stream`: the leader's key a waiter watches for its delete (`Election.Observe`), when
    /// it is not the predecessor; 0 = none.
    observed_rev: u64,
}

impl EtcdClient {
    /// Member `me` of `members`; the service is process `members` (or, for a cluster, the
    /// etcd members are `members..members + config.members`, and the client starts with
    /// member `me % config.members`, as round-robin balancers of several clients spread).
    pub fn new(me: NodeId, members: usize, config: &EtcdConfig) -> Self {
        let size = config.members.max(1);
        let endpoints: Vec<NodeId> = (0..size).map(|k| NodeId::from(members + k)).collect();
        let endpoint = me.index() % size;
        Self {
            me,
            service: endpoints[endpoint],
            endpoints,
            endpoint,
            backoff_retry: false,
            config: config.clone(),
            phase: Phase::Granting { campaign: 0 },
            lease: None,
            my_rev: 0,
            lease_deadline: LocalNanos::MIN,
            next_keepalive: LocalNanos::MIN,
            token: 0,
            seen_revision: 0,
            leader_seen: None,
            campaigns: 0,
            view_revision: 0,
            observed_rev: 0,
        }
    }

    /// The service process the client talks to now: the single service, or the etcd
    /// member its balancer picked last (`Process::service_member_used`).
    pub fn service(&self) -> NodeId {
        self.service
    }

    /// Where the client is in its campaign.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The local time after which the client stops believing in its lease: the arrival of
    /// the last answered keep-alive plus the granted TTL (clientv3), or the send time of the
    /// last answered grant or keep-alive plus the TTL (`SendTime`; SetNx: lock request or
    /// Extend).
    pub fn lease_deadline(&self) -> LocalNanos {
        self.lease_deadline
    }

    /// Whether the lease is kept by etcd's Go client (SetNx models a Redis client instead).
    fn uses_clientv3(&self) -> bool {
        self.config.client == EtcdClientKind::Clientv3 && self.config.variant != EtcdVariant::SetNx
    }

    /// Cluster mode: moves to the next member (clientv3's round-robin balancer picks the
    /// next READY sub-connection for each new RPC or stream: docs/service-clusters.md
    /// section 4, `picker/roundrobin_balanced.go`, `Pick`). Nothing with one endpoint.
    fn fail_over(&mut self) {
        self.endpoint = (self.endpoint + 1) % self.endpoints.len();
        self.service = self.endpoints[self.endpoint];
    }

    fn see(&mut self, revision: u64) {
        self.seen_revision = self.seen_revision.max(revision);
    }

    /// Starts (or restarts) a campaign from nothing.
    fn campaign(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        self.lease = None;
        self.my_rev = 0;
        self.observed_rev = 0;
        self.lease_deadline = LocalNanos::MIN;
        ctx.cancel_timer(EtcdTimer::KeepAlive);
        ctx.cancel_timer(EtcdTimer::LeaseDeadline);
        if self.config.variant == EtcdVariant::SetNx {
            self.phase = Phase::Polling;
            self.poll(ctx);
            return;
        }
        self.campaigns += 1;
        self.phase = Phase::Granting {
            campaign: self.campaigns,
        };
        self.ask_for_lease(ctx);
    }

    fn ask_for_lease(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        ctx.send(
            self.service,
            EtcdMsg::LeaseGrant {
                ttl_ns: self.config.ttl_ns,
                sent_at: ctx.monotonic_now(),
                campaign: self.campaigns,
            },
        );
        Self::retry_after(ctx, self.config.keepalive_ns);
    }

    /// On `Datagram`, the request just sent goes again after `after_ns` if unanswered (a
    /// waiter's resync range, once per TTL). On `Stream` nothing is lost while the connection
    /// is up, and gRPC retries nothing: [`Self::on_disconnect`] re-sends instead.
    fn retry_after(ctx: &mut EtcdCtx<'_, '_>, after_ns: u64) {
        if !ctx.stream() {
            ctx.set_timer(EtcdTimer::Retry, after_ns);
        }
    }

    fn poll(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        self.lease_deadline = after(ctx.monotonic_now(), self.config.ttl_ns);
        ctx.send(
            self.service,
            EtcdMsg::SetNx {
                ttl_ns: self.config.ttl_ns,
            },
        );
        ctx.set_timer(EtcdTimer::Retry, self.config.keepalive_ns);
    }

    /// Leaves leadership (if held) and campaigns again; revokes the old lease on the way
    /// out so that a lease the service still honours does not block the new key.
    fn lost_lease(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        if self.phase == Phase::Leading {
            ctx.stepped_down();
        }
        ctx.signal(Signal::LeaderSuspected);
        match self.config.variant {
            EtcdVariant::SetNx => {
                if self.my_rev != 0 {
                    ctx.send(self.service, EtcdMsg::Del { term: self.my_rev });
                }
            }
            _ => {
                if let Some(lease) = self.lease {
                    ctx.send(self.service, EtcdMsg::Revoke { lease });
                }
            }
        }
        self.campaign(ctx);
    }

    /// The retry timer: the request of the phase goes again (a waiter's retry is its resync
    /// range). Cluster mode: a grant or transaction that got no answer in time moves to the
    /// next member first (clientv3 picks a member afresh for each retry), unless the timer
    /// was the backoff after a member's error, which already moved on.
    fn timed_out(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        let backoff = std::mem::take(&mut self.backoff_retry);
        let request = matches!(self.phase, Phase::Granting { .. } | Phase::Creating);
        if !backoff && request && self.endpoints.len() > 1 {
            self.fail_over();
        }
        match self.phase {
            Phase::Granting { .. } => self.ask_for_lease(ctx),
            Phase::Creating => {
                self.resend_txn(ctx);
                ctx.set_timer(EtcdTimer::Retry, self.config.keepalive_ns);
            }
            Phase::Waiting { .. } => {
                ctx.send(self.service, EtcdMsg::Range);
                ctx.set_timer(EtcdTimer::Retry, self.config.ttl_ns);
            }
            Phase::Polling => self.poll(ctx),
            Phase::Leading => {}
        }
    }

    fn send_keepalive(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        if let Some(lease) = self.lease {
            let sent_at = ctx.monotonic_now();
            ctx.send(self.service, EtcdMsg::KeepAlive { lease, sent_at });
        }
    }

    /// One pass of clientv3's send loop: a keep-alive if one is due, then the next pass.
    fn send_loop_pass(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        if ctx.monotonic_now() > self.next_keepalive {
            self.send_keepalive(ctx);
        }
        ctx.set_timer(EtcdTimer::KeepAlive, CLIENT_SEND_LOOP_NS);
    }

    /// A lease was granted: keep it alive. clientv3 registers it with its keep-alive loops
    /// (a keep-alive due at once; the deadline the grant's arrival plus the TTL until the
    /// first answer); the careful client counts from the grant's send time.
    fn start_keepalives(&mut self, ctx: &mut EtcdCtx<'_, '_>, sent_at: LocalNanos, ttl_ns: u64) {
        self.lease_deadline = LocalNanos::MIN;
        if self.uses_clientv3() {
            let now = ctx.monotonic_now();
            self.lease_deadline = after(now, ttl_ns);
            self.next_keepalive = LocalNanos::MIN;
            self.send_loop_pass(ctx);
            ctx.set_timer(EtcdTimer::LeaseDeadline, CLIENT_DEADLINE_LOOP_NS);
        } else {
            self.renewed(ctx, sent_at, ttl_ns);
            ctx.set_timer(EtcdTimer::KeepAlive, self.config.keepalive_ns);
        }
    }

    /// An answered keep-alive: clientv3 counts from its arrival, the careful client from its
    /// send time.
    fn keepalive_answered(&mut self, ctx: &mut EtcdCtx<'_, '_>, sent_at: LocalNanos, ttl_ns: u64) {
        if self.uses_clientv3() {
            let now = ctx.monotonic_now();
            self.lease_deadline = after(now, ttl_ns);
            self.next_keepalive = after(now, self.config.keepalive_ns);
        } else {
            self.renewed(ctx, sent_at, ttl_ns);
        }
    }

    fn arm_deadline(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        let after = self
            .lease_deadline
            .saturating_sub(ctx.monotonic_now())
            .max(0) as u64;
        ctx.set_timer(EtcdTimer::LeaseDeadline, after);
    }

    fn renewed(&mut self, ctx: &mut EtcdCtx<'_, '_>, sent_at: LocalNanos, ttl_ns: u64) {
        let deadline = after(sent_at, ttl_ns);
        if deadline > self.lease_deadline {
            self.lease_deadline = deadline;
            self.arm_deadline(ctx);
        }
    }

    /// Cluster mode: a member failed the request (no leader, `ErrNotPrimary`, a timeout):
    /// the client moves to the next member and retries 25 ms later (clientv3's unary retry,
    /// `defaultBackoffWaitBetween`); a waiter re-creates its watch there. An unanswered
    /// keep-alive goes again at the send loop's next pass (`retryConnWait`, 500 ms).
    fn unavailable(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        self.fail_over();
        if matches!(self.phase, Phase::Waiting { .. }) {
            self.phase = Phase::Waiting { pred: 0 };
            self.observed_rev = 0;
        }
        if self.phase != Phase::Leading {
            self.backoff_retry = true;
            ctx.set_timer(EtcdTimer::Retry, CLIENT_RETRY_BACKOFF_NS);
        }
    }

    /// The recipe's decision on a view of the prefix.
    fn evaluate(&mut self, ctx: &mut EtcdCtx<'_, '_>, revision: u64, keys: &[KeyView]) {
        if revision < self.view_revision {
            return;
        }
        self.view_revision = revision;
        self.leader_seen = keys.first().map(|k| k.1);
        if !keys.iter().any(|k| k.0 == self.my_rev) {
            // The own key is gone (the lease expired at the service): whatever the
            // predecessor did, this client must not lead with it.
            self.lost_lease(ctx);
            return;
        }
        if keys[0].0 == self.my_rev {
            if self.phase != Phase::Leading {
                self.phase = Phase::Leading;
                self.token = match self.config.variant {
                    EtcdVariant::WallClockToken => (ctx.wall_now().max(0) as u64) / NANOS_PER_MILLI,
                    _ => self.my_rev,
                };
                ctx.cancel_timer(EtcdTimer::Retry);
                ctx.became_leader(self.my_rev, self.token);
            }
            return;
        }
        if self.phase == Phase::Leading {
            // A lower key cannot appear after the own one: a fresh view never says this. Step
            // down rather than lead on a view that disagrees.
            self.lost_lease(ctx);
            return;
        }
        let pred = keys
            .iter()
            .filter(|k| k.0 < self.my_rev)
            .map(|k| k.0)
            .max()
            .expect("a lower key exists");
        if self.phase != (Phase::Waiting { pred }) {
            self.phase = Phase::Waiting { pred };
            ctx.send(
                self.service,
                EtcdMsg::Watch {
                    key: pred,
                    start_rev: revision + 1,
                },
            );
        }
        self.observe(ctx, keys[0].0, pred, revision);
        Self::retry_after(ctx, self.config.ttl_ns);
    }

    /// `Stream`: a waiter learns who leads as `Election.Observe` does (clientv3
    /// `concurrency/election.go`: get the first key by create revision, watch that key from
    /// the next revision, get again on its delete), since no periodic range does it here.
    /// The predecessor's own watch covers a leader that is the predecessor.
    fn observe(&mut self, ctx: &mut EtcdCtx<'_, '_>, leader_key: u64, pred: u64, revision: u64) {
        if !ctx.stream() || leader_key == self.observed_rev {
            return;
        }
        self.observed_rev = leader_key;
        if leader_key != pred {
            ctx.send(
                self.service,
                EtcdMsg::Watch {
                    key: leader_key,
                    start_rev: revision + 1,
                },
            );
        }
    }

    /// Sends the election transaction on the lease again (the phase waits for its answer).
    fn resend_txn(&self, ctx: &mut EtcdCtx<'_, '_>) {
        if let Some(lease) = self.lease {
            ctx.send(self.service, EtcdMsg::Txn { lease });
        }
    }
}

impl Process for EtcdClient {
    type Msg = EtcdMsg;
    type Timer = EtcdTimer;
    type Durable = ();

    /// The highest revision the client has seen (its term; kept across restarts).
    fn term(&self) -> u64 {
        self.seen_revision
    }

    /// The token to write with, while the client leads: the key's create revision
    /// (`WallClockToken`: its claim time in milliseconds; `SetNx`: 0). clientv3 leads until
    /// its deadline loop ends the session (the application sees only `Session.Done()`); the
    /// careful client and SetNx check their clock against the deadline before every write.
    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        let believes = self.uses_clientv3() || now < self.lease_deadline;
        (self.phase == Phase::Leading && believes).then_some(self.token)
    }

    /// The client's campaign state, for `run --stop-at` (read-only).
    fn inspect(&self) -> Vec<(&'static str, String)> {
        let lease = self.lease.map_or("none".to_string(), |l| l.to_string());
        vec![
            ("phase", format!("{:?}", self.phase)),
            ("lease", lease),
            ("my_rev", self.my_rev.to_string()),
            ("lease_deadline_local_ns", self.lease_deadline.to_string()),
            ("token", self.token.to_string()),
            ("leader_seen", shown(self.leader_seen)),
        ]
    }

    /// The client itself when it leads, else the owner of the lowest key it last saw.
    fn known_leader(&self) -> Option<NodeId> {
        if self.phase == Phase::Leading {
            Some(self.me)
        } else {
            self.leader_seen
        }
    }

    /// A client campaigns at once.
    fn on_start(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        self.campaign(ctx);
    }

    /// A restarted client forgets its leader and campaigns with a new lease; its old key
    /// goes when the old lease expires.
    fn on_restart(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        self.leader_seen = None;
        self.campaign(ctx);
    }

    /// The leader revokes its lease (or deletes the SetNx lock) and campaigns again.
    fn on_resign(&mut self, ctx: &mut EtcdCtx<'_, '_>) {
        if self.phase == Phase::Leading {
            ctx.stepped_down();
            match self.config.variant {
                EtcdVariant::SetNx => ctx.send(self.service, EtcdMsg::Del { term: self.my_rev }),
                _ => {
                    if let Some(lease) = self.lease {
                        ctx.send(self.service, EtcdMsg::Revoke { lease });
                    }
                }
            }
            self.leader_seen = None;
            self.campaign(ctx);
        }
    }

    /// Sends a keep-alive (or Extend), gives up a lease whose deadline has come, or retries
    /// the request of the phase (a waiter's retry is its resync range).
    fn on_timer(&mut self, ctx: &mut EtcdCtx<'_, '_>, timer: EtcdTimer) {
        let now = ctx.monotonic_now();
        match timer {
            EtcdTimer::KeepAlive => {
                if self.config.variant == EtcdVariant::SetNx {
                    if self.phase == Phase::Leading {
                        ctx.send(
                            self.service,
                            EtcdMsg::Extend {
                                term: self.my_rev,
                                sent_at: now,
                            },
                        );
                    }
                    ctx.set_timer(EtcdTimer::KeepAlive, self.config.keepalive_ns);
                } else if self.uses_clientv3() {
                    self.send_loop_pass(ctx);
                } else {
                    self.send_keepalive(ctx);
                    ctx.set_timer(EtcdTimer::KeepAlive, self.config.keepalive_ns);
                }
            }
            EtcdTimer::LeaseDeadline if self.uses_clientv3() => {
                if now > self.lease_deadline {
                    self.lost_lease(ctx);
                } else {
                    ctx.set_timer(EtcdTimer::LeaseDeadline, CLIENT_DEADLINE_LOOP_NS);
                }
            }
            EtcdTimer::LeaseDeadline => {
                if now >= self.lease_deadline {
                    self.lost_lease(ctx);
                } else {
                    self.arm_deadline(ctx);
                }
            }
            EtcdTimer::Retry => self.timed_out(ctx),
            _ => {}
        }
    }

    /// Acts on the service's answer: a grant leads to the transaction, a view of the prefix
    /// to leading or watching, a lost lease or lock to a new campaign.
    fn on_message(&mut self, ctx: &mut EtcdCtx<'_, '_>, from: NodeId, msg: EtcdMsg) {
        self.see(msg.term());
        match msg {
            EtcdMsg::LeaseGrantResp {
                lease,
                ttl_ns,
                sent_at,
                campaign,
            } => {
                if self.phase != (Phase::Granting { campaign }) {
                    // Asked for by an abandoned campaign, or already granted: it will expire.
                    return;
                }
                self.lease = Some(lease);
                self.phase = Phase::Creating;
                self.start_keepalives(ctx, sent_at, ttl_ns);
                ctx.send(self.service, EtcdMsg::Txn { lease });
                Self::retry_after(ctx, self.config.keepalive_ns);
            }
            EtcdMsg::KeepAliveResp {
                lease,
                ttl_ns,
                sent_at,
            } => {
                if self.lease != Some(lease) {
                    return;
                }
                if ttl_ns == 0 {
                    self.lost_lease(ctx);
                } else {
                    self.keepalive_answered(ctx, sent_at, ttl_ns);
                }
            }
            EtcdMsg::TxnResp {
                lease,
                create_rev,
                revision,
                keys,
            } => {
                // Only the answer for the lease held now: a key created on an abandoned lease
                // is revoked with it.
                if self.phase != Phase::Creating || self.lease != Some(lease) {
                    return;
                }
                if create_rev == 0 {
                    self.lost_lease(ctx);
                    return;
                }
                self.my_rev = create_rev;
                self.evaluate(ctx, revision, &keys);
            }
            EtcdMsg::RangeResp { revision, keys } => {
                if matches!(self.phase, Phase::Waiting { .. } | Phase::Leading) {
                    self.evaluate(ctx, revision, &keys);
                } else {
                    self.leader_seen = keys.first().map(|k| k.1);
                }
            }
            EtcdMsg::WatchEvent { key, .. }
                if self.phase == (Phase::Waiting { pred: key })
                    || (matches!(self.phase, Phase::Waiting { .. })
                        && key == self.observed_rev) =>
            {
                if key == self.observed_rev {
                    self.observed_rev = 0;
                }
                ctx.send(self.service, EtcdMsg::Range);
                Self::retry_after(ctx, self.config.keepalive_ns);
            }
            EtcdMsg::SetNxResp {
                acquired,
                term,
                holder,
            } => {
                self.leader_seen = holder;
                if self.phase == Phase::Polling && acquired {
                    // The lease deadline was set from the poll's send time.
                    self.my_rev = term;
                    self.phase = Phase::Leading;
                    self.token = 0;
                    ctx.became_leader(term, 0);
                    ctx.cancel_timer(EtcdTimer::Retry);
                    self.arm_deadline(ctx);
                    ctx.set_timer(EtcdTimer::KeepAlive, self.config.keepalive_ns);
                }
            }
            // A failure from a member the client has already left changes nothing.
            EtcdMsg::Unavailable if from == self.service => self.unavailable(ctx),
            EtcdMsg::ExtendResp { ok, term, sent_at } => {
                if self.phase != Phase::Leading || term != self.my_rev {
                    return;
                }
                if ok {
                    self.renewed(ctx, sent_at, self.config.ttl_ns);
                } else {
                    self.lost_lease(ctx);
                }
            }
            _ => {}
        }
    }

    /// The connection to the service broke (`Stream` only): what was in flight is lost, so
    /// the request the phase waits for goes again on a new connection, as clientv3's
    /// retrying interceptor re-sends a unary call, and a waiter's watch is re-created from
    /// the last revision it saw (`watchGrpcStream.resume` restarts it at `lastRev + 1`): a
    /// range, then the watch anew. Keep-alives need nothing: one not answered goes again at
    /// the send loop's next pass. SetNx polls on its timer anyway.
    fn on_disconnect(&mut self, ctx: &mut EtcdCtx<'_, '_>, peer: NodeId) {
        if peer != self.service {
            return;
        }
        self.fail_over();
        match self.phase {
            Phase::Granting { .. } => self.ask_for_lease(ctx),
            Phase::Creating => self.resend_txn(ctx),
            Phase::Waiting { .. } => {
                // No key has create revision 0: the next view re-sends the watches.
                self.phase = Phase::Waiting { pred: 0 };
                self.observed_rev = 0;
                ctx.send(self.service, EtcdMsg::Range);
            }
            Phase::Leading | Phase::Polling => {}
        }
    }

    /// A client talks to the single service, or to the member it is connected to.
    fn service_member_used(&self) -> Option<NodeId> {
        Some(self.service)
    }
}

/// A node id, or `none`.
fn shown(node: Option<NodeId>) -> String {
    node.map_or("none".to_string(), |n| n.to_string())
}
