//! A candidate running client-go's `leaderelection` loop on the Lease lock: candidates time
//! the holder's expiry by their own observation of the last change to the record
//! (`observedTime`), never by the record's timestamps; the leader renews in rounds of tries
//! and stops leading when a round ends at the renew deadline without a renewal (`ClientGo`),
//! or when the renew deadline has passed since the send of its last renewal (`Strict`).

use super::config::{K8sConfig, K8sRules, K8sVariant};
use super::messages::{Identity, K8sMsg, K8sTimer, Record};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

/// Whether a candidate that first saw `record` at `seen` takes the lease for free at `now` (its
/// own clock): nobody holds it, or it has not changed for a whole lease duration. client-go's
/// `observedTime + leaseDuration > now` means "still held", so the lease is free exactly at
/// the boundary.
pub fn looks_free(
    record: &Record,
    seen: LocalNanos,
    now: LocalNanos,
    lease_duration_ns: u64,
) -> bool {
    record.holder.is_none() || now >= seen.saturating_add(lease_duration_ns as i64)
}

/// A candidate's state: what it last saw of the record, and its own leadership.
#[derive(Clone, Debug)]
pub struct K8sClient {
    pub(super) me: NodeId,
    /// The API server this elector's connection reaches (the only one, or the endpoint the
    /// load balancer gave its current connection).
    pub(super) server: NodeId,
    /// The first API server's id and how many there are: the endpoints behind the load
    /// balancer.
    first_apiserver: usize,
    /// Whether the last request sent is still unanswered: when the next try comes, it failed
    /// (a lost answer stands for client-go's request timeout or a refused connection).
    awaiting: bool,
    config: K8sConfig,
    /// The last record seen and the local time it was first seen (client-go's observedTime).
    observed: Option<(Record, LocalNanos)>,
    pub(super) leading: bool,
    token: u64,
    /// The leader's last successful renewal, by the send time of its request.
    renewed_at: LocalNanos,
    /// The number of the request that renewal answered, and of the last request sent.
    renewed_request: u64,
    pub(super) requests: u64,
    seen_rv: u64,
    /// `ClientGo`: the deadline of the open renew round (`renew`'s
    /// `wait.PollUntilContextTimeout(.., RenewDeadline, ..)`), `None` between rounds.
    round_deadline: Option<LocalNanos>,
    /// The local time of the last release. The client lets the others take over: it does not
    /// try to acquire again for one lease duration, and an answer to an update it sent
    /// before the release makes it lead no more.
    released_at: LocalNanos,
    /// Bumped by every restart: a restarted process is a new identity.
    incarnation: u32,
}

impl K8sClient {
    /// Member `me` of `members`; its server is process `members` (with several API servers,
    /// its first connection lands on `members + me % apiservers`).
    pub fn new(me: NodeId, members: usize, config: &K8sConfig) -> Self {
        Self {
            me,
            // Its API server: the only one, or one of several in turn.
            server: NodeId::from(members + me.index() % config.apiservers.max(1)),
            first_apiserver: members,
            awaiting: false,
            config: config.clone(),
            observed: None,
            leading: false,
            token: 0,
            renewed_at: LocalNanos::MIN,
            renewed_request: 0,
            requests: 0,
            seen_rv: 0,
            released_at: LocalNanos::MIN,
            incarnation: 0,
            round_deadline: None,
        }
    }

    /// The API server this elector's requests go to now (also what
    /// `Process::service_member_used` reports: the `ServiceOfLeader` fault target).
    pub fn apiserver(&self) -> NodeId {
        self.server
    }

    /// Sends a request to the current API server, first moving to the next one when the last
    /// request failed. client-go's leader-election client times a request out after
    /// `max(1s, RenewDeadline / 2)` (`resourcelock/interface.go`, `NewFromKubeconfig`) and a
    /// crashed API server refuses or resets the connection at once; either way the try fails
    /// and the next one, a retry period later, goes on a new connection, which the load
    /// balancer in front of the API servers (the `kubernetes` Service, or an external one)
    /// gives to another endpoint. The model: a request still unanswered when the elector
    /// sends its next one failed, and the next goes to the next API server in turn.
    fn request(&mut self, ctx: &mut K8sCtx<'_, '_>, msg: K8sMsg) {
        if self.awaiting {
            self.next_apiserver();
        }
        self.awaiting = true;
        ctx.send(self.server, msg);
    }

    /// The connection is dropped; the next one lands on the next API server (round robin).
    /// With one API server, the same one.
    fn next_apiserver(&mut self) {
        let apiservers = self.config.apiservers.max(1);
        let at = self.server.index() - self.first_apiserver;
        self.server = NodeId::from(self.first_apiserver + (at + 1) % apiservers);
    }

    /// A retry period is up. The leader renews at once on the record it last saw (client-go's
    /// fast path for the holder); a candidate reads the record first and decides on what it
    /// reads (`tryAcquireOrRenew`).
    fn tick(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.leading && self.config.rules == K8sRules::ClientGo {
            return self.renew_try(ctx);
        }
        if self.leading {
            self.update(ctx);
        } else {
            self.request(ctx, K8sMsg::Get);
        }
        // `ClientGo` candidates wait from the try's return (re-armed at the answer); this
        // timer stands for the request's timeout when an answer is lost.
        self.arm_retry(ctx);
    }

    /// `ClientGo`: one try of client-go's `renew` loop. The first try of a round opens it
    /// (`wait.PollUntilContextTimeout(ctx, RetryPeriod, RenewDeadline, true, ..)`: a
    /// deadline `RenewDeadline` from now); the next try comes `RetryPeriod` after this one
    /// started (the poll's timer is not sliding). The try is `tryAcquireOrRenew`: while the
    /// record last observed names this elector and `isLeaseValid`, an Update without a read
    /// (the fast path), else a Get first.
    fn renew_try(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        if self.round_deadline.is_none() {
            let deadline_ns = self.config.renew_deadline_ns;
            self.round_deadline = Some(now.saturating_add(deadline_ns as i64));
            ctx.set_timer(K8sTimer::RenewDeadline, deadline_ns);
        }
        if self.own_lease_valid(now) {
            self.update(ctx);
        } else {
            self.request(ctx, K8sMsg::Get);
        }
        ctx.set_timer(K8sTimer::Retry, self.config.retry_period_ns);
    }

    /// client-go's `le.IsLeader() && le.isLeaseValid(now)`: the record last observed names
    /// this elector and its lease has not run out since this elector observed it.
    fn own_lease_valid(&self, now: LocalNanos) -> bool {
        self.observed.as_ref().is_some_and(|(record, seen)| {
            record.holder == Some(self.identity())
                && !looks_free(record, *seen, now, self.lease_ns(record))
        })
    }

    /// How long `record` must stay unchanged before it looks free: `ClientGo`, the record's
    /// `LeaseDurationSeconds` (`isLeaseValid`: `time.Second *
    /// time.Duration(le.observedRecord.LeaseDurationSeconds)`); `Strict`, the configured
    /// lease duration to the nanosecond.
    pub fn lease_ns(&self, record: &Record) -> u64 {
        match self.config.rules {
            K8sRules::ClientGo => u64::from(record.lease_duration_s) * 1_000_000_000,
            K8sRules::Strict => self.config.lease_duration_ns,
        }
    }

    /// A candidate has read the record: it tries to acquire when the lease looks free to it
    /// (no holder, or no change seen for a lease duration by its own clock) or still names
    /// it. A database row is upserted on every try: the database, not the client, judges
    /// expiry there.
    /// Returns whether it sent an update (the try goes on until its answer).
    fn consider(&mut self, ctx: &mut K8sCtx<'_, '_>) -> bool {
        let now = ctx.monotonic_now();
        let Some((record, seen)) = &self.observed else {
            return false;
        };
        let sitting_out_until = self
            .released_at
            .saturating_add(self.config.lease_duration_ns as i64);
        if self.leading || now < sitting_out_until {
            return false;
        }
        let mine = record.holder == Some(self.identity());
        let vacant = looks_free(record, *seen, now, self.lease_ns(record));
        if vacant && !mine {
            // An attempt to take a lease that looks free: the update would win `rv + 1`.
            ctx.signal(Signal::ElectionStarted {
                term: record.resource_version + 1,
            });
        }
        let tries = vacant || mine || self.config.variant == K8sVariant::DbRow;
        if tries {
            self.update(ctx);
        }
        tries
    }

    /// `ClientGo`: the leader's try read the record (the slow path of `tryAcquireOrRenew`):
    /// it updates a record that names it or that looks free; another holder's live lease
    /// fails the try, and the round goes on until its deadline.
    fn renew_after_read(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        let now = ctx.monotonic_now();
        let Some((record, seen)) = &self.observed else {
            return;
        };
        let open = self.round_deadline.is_some_and(|d| now < d);
        let mine = record.holder == Some(self.identity());
        if open && (mine || looks_free(record, *seen, now, self.lease_ns(record))) {
            self.update(ctx);
        }
    }

    fn identity(&self) -> Identity {
        Identity {
            node: self.me,
            incarnation: self.incarnation,
        }
    }

    fn update(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        let expected_rv = self.observed.as_ref().map_or(0, |o| o.0.resource_version);
        let sent_at = ctx.monotonic_now();
        self.requests += 1;
        self.request(
            ctx,
            K8sMsg::Update {
                expected_rv,
                sent_at,
                identity: self.identity(),
                lease_duration_s: self.config.lease_duration_s(),
                request: self.requests,
            },
        );
    }

    /// The next try: the leader renews every retry period (client-go's `renew` loop); a
    /// candidate waits a retry period plus up to 1.2 more (`wait.JitterUntil` with
    /// client-go's `JitterFactor`), so that candidates do not poll in lockstep.
    pub(super) fn arm_retry(&self, ctx: &mut K8sCtx<'_, '_>) {
        let period_ns = self.config.retry_period_ns;
        let jitter_ns = if self.leading {
            0
        } else {
            ctx.rng().between(0, period_ns / 5 * 6)
        };
        ctx.set_timer(K8sTimer::Retry, period_ns + jitter_ns);
    }

    fn observe(&mut self, now: LocalNanos, record: Record) {
        self.seen_rv = self.seen_rv.max(record.resource_version);
        let changed = self.observed.as_ref().is_none_or(|o| o.0 != record);
        if changed {
            self.observed = Some((record, now));
        }
    }

    fn step_down(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        self.round_deadline = None;
        if self.leading {
            self.leading = false;
            ctx.stepped_down();
            ctx.cancel_timer(K8sTimer::RenewDeadline);
        }
    }

    /// `ClientGo`: the server's answers as client-go's loops take them. A read is one step of
    /// a try; an update's answer ends the try. A successful acquisition starts the renew loop
    /// at once (`Run`: `acquire`, then `renew`, whose first round tries immediately); a
    /// successful renewal closes the round and the next starts one retry period after it
    /// returned (`wait.UntilWithContext`, sliding). A refused update carries no record (a
    /// 409): a leader reads the record in the same try (the slow path), a candidate waits for
    /// its next poll.
    fn on_message_client_go(&mut self, ctx: &mut K8sCtx<'_, '_>, msg: K8sMsg) {
        let now = ctx.monotonic_now();
        match msg {
            K8sMsg::GetResp { record } => {
                self.observe(now, record);
                if self.leading {
                    self.renew_after_read(ctx);
                } else if !self.consider(ctx) {
                    // The try returned: `JitterUntil` waits from here (sliding).
                    self.arm_retry(ctx);
                }
            }
            K8sMsg::UpdateResp {
                ok,
                record,
                sent_at,
                request,
            } => {
                // A renewal counts only within its round (its request ran under the round's
                // context); an acquisition has no deadline. Nor does an update sent before a
                // release count, nor an answer older than the newest counted one.
                let in_time = !self.leading || self.round_deadline.is_some_and(|d| now < d);
                let counts = ok
                    && record.holder == Some(self.identity())
                    && sent_at > self.released_at
                    && request > self.renewed_request
                    && in_time;
                if !counts {
                    if self.leading {
                        if !ok {
                            self.request(ctx, K8sMsg::Get);
                        }
                    } else {
                        self.arm_retry(ctx);
                    }
                    return;
                }
                self.observe(now, record.clone());
                self.renewed_at = sent_at;
                self.renewed_request = request;
                let was_leading = self.leading;
                if !self.leading || self.token != record.acquired_rv {
                    self.leading = true;
                    self.token = record.acquired_rv;
                    ctx.became_leader(record.acquired_rv, record.acquired_rv);
                }
                self.round_deadline = None;
                if was_leading {
                    // The round succeeded: the next one starts a retry period from now.
                    ctx.cancel_timer(K8sTimer::RenewDeadline);
                    ctx.set_timer(K8sTimer::Retry, self.config.retry_period_ns);
                } else {
                    self.renew_try(ctx);
                }
            }
            _ => {}
        }
    }
}

impl Process for K8sClient {
    type Msg = K8sMsg;
    type Timer = K8sTimer;
    type Durable = ();

    /// `Stream`: the connection to the current API server broke (it crashed, or stayed cut
    /// off for the connection's timeout): the next request dials again and lands on the next
    /// API server.
    fn on_disconnect(&mut self, _ctx: &mut K8sCtx<'_, '_>, peer: NodeId) {
        if peer == self.server {
            self.awaiting = false;
            self.next_apiserver();
        }
    }

    /// The highest resource version seen (the client's term).
    fn term(&self) -> u64 {
        self.seen_rv
    }

    /// The candidate's state, for `run --stop-at` (read-only).
    fn inspect(&self) -> Vec<(&'static str, String)> {
        let holder = self
            .observed
            .as_ref()
            .and_then(|(record, _)| record.holder)
            .map_or("none".to_string(), |h| h.node.to_string());
        vec![
            ("leading", self.leading.to_string()),
            ("token", self.token.to_string()),
            ("observed_holder", holder),
            (
                "renewed_at_local_ns",
                match self.renewed_at {
                    LocalNanos::MIN => "never".to_string(),
                    at => at.to_string(),
                },
            ),
            ("seen_rv", self.seen_rv.to_string()),
        ]
    }

    /// The leader itself, or the holder of the record last seen.
    fn known_leader(&self) -> Option<NodeId> {
        if self.leading {
            Some(self.me)
        } else {
            self.observed
                .as_ref()
                .and_then(|o| o.0.holder.map(|h| h.node))
        }
    }

    /// A candidate reads the record at once and then every retry period.
    fn on_start(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        self.request(ctx, K8sMsg::Get);
        self.arm_retry(ctx);
    }

    /// A restarted process is a new identity and starts over as a candidate.
    fn on_restart(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        self.observed = None;
        self.leading = false;
        self.round_deadline = None;
        self.incarnation += 1;
        // A new identity: nothing of the old one's leadership or release holds.
        self.renewed_at = LocalNanos::MIN;
        self.released_at = LocalNanos::MIN;
        // A new process: nothing in flight, its first connection where the last one was.
        self.awaiting = false;
        self.request(ctx, K8sMsg::Get);
        self.arm_retry(ctx);
    }

    /// The leader releases the lease (client-go's `ReleaseOnCancel`) and sits out.
    fn on_resign(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.leading {
            let identity = self.identity();
            self.request(ctx, K8sMsg::Release { identity });
            self.step_down(ctx);
            self.observed = None;
            self.released_at = ctx.monotonic_now();
        }
    }

    /// The retry period polls or renews; at the renew deadline the leader steps down.
    fn on_timer(&mut self, ctx: &mut K8sCtx<'_, '_>, timer: K8sTimer) {
        match timer {
            K8sTimer::Retry => self.tick(ctx),
            K8sTimer::RenewDeadline => {
                ctx.signal(Signal::LeaderSuspected);
                self.step_down(ctx);
                if self.config.rules == K8sRules::ClientGo {
                    // The round's context is done: every try still in flight is cancelled
                    // (its answer counts no more), and the elector polls as a candidate.
                    self.renewed_request = self.requests;
                    self.arm_retry(ctx);
                }
            }
            K8sTimer::Expiry | K8sTimer::Etcd(_) => {}
        }
    }

    /// The server's answers: a read is considered, an update's answer may make or unmake
    /// the leader.
    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, _from: NodeId, msg: K8sMsg) {
        // An answer, late or not: the connection works.
        self.awaiting = false;
        if self.config.rules == K8sRules::ClientGo {
            return self.on_message_client_go(ctx, msg);
        }
        let now = ctx.monotonic_now();
        match msg {
            K8sMsg::GetResp { record } => {
                self.observe(now, record);
                self.consider(ctx);
            }
            K8sMsg::UpdateResp {
                ok,
                record,
                sent_at,
                request,
            } => {
                // An update sent before a release was answered after it: not a mandate. Nor
                // is an answer older than the newest one, or one whose renew deadline has
                // passed by the time it arrives (after a pause, or duplicated).
                let deadline = sent_at.saturating_add(self.config.renew_deadline_ns as i64);
                let mine = ok
                    && record.holder == Some(self.identity())
                    && sent_at > self.released_at
                    && request > self.renewed_request
                    && now < deadline;
                self.observe(now, record.clone());
                if mine {
                    if !self.leading || self.token != record.acquired_rv {
                        self.leading = true;
                        self.token = record.acquired_rv;
                        ctx.became_leader(record.acquired_rv, record.acquired_rv);
                    }
                    self.renewed_at = sent_at;
                    self.renewed_request = request;
                    let left = self
                        .renewed_at
                        .saturating_add(self.config.renew_deadline_ns as i64)
                        .saturating_sub(now)
                        .max(0) as u64;
                    ctx.set_timer(K8sTimer::RenewDeadline, left);
                } else if record.holder != Some(self.identity()) {
                    self.step_down(ctx);
                }
            }
            _ => {}
        }
    }

    /// The leader's token while it leads: `ClientGo`, until the deadline of a round without a
    /// renewal (between rounds nothing ends it); `Strict`, while its last renewal's send is
    /// within the renew deadline.
    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        let within = match self.config.rules {
            K8sRules::ClientGo => self.round_deadline.is_none_or(|d| now < d),
            K8sRules::Strict => {
                now < self
                    .renewed_at
                    .saturating_add(self.config.renew_deadline_ns as i64)
            }
        };
        (self.leading && within).then_some(self.token)
    }

    /// An elector talks to its API server (the single server, or one in front of etcd).
    fn service_member_used(&self) -> Option<NodeId> {
        Some(self.apiserver())
    }
}
