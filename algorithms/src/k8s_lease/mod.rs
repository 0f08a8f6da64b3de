//! The Kubernetes `Lease` lock of client-go's `leaderelection` package, on a modeled API
//! server: optimistic concurrency on `resourceVersion`; candidates time the holder's expiry by
//! their own observation of the last change to the record (`observedTime`), never by the
//! record's timestamps; the leader renews every retry period and steps down when it has not
//! renewed within the renew deadline. Variant `DbRow`: a database-row lease whose expiry the
//! database judges by its own clock (`UPDATE .. WHERE holder IS NULL OR expires < now()`).
//! The server is one process, id `members`.

use serde::{Deserialize, Serialize};
use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, Message, NodeId, Process, Signal, TimerKind};

mod settings;
#[cfg(test)]
mod tests;

pub use settings::{K8sError, K8sLease, K8sSettings};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "k8s lease variant"))]
pub enum K8sVariant {
    /// client-go: expiry judged by each candidate's own clock since it last saw a change.
    Lease,
    /// A database row: the database's clock judges expiry.
    DbRow,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct K8sConfig {
    pub lease_duration_ns: u64,
    pub renew_deadline_ns: u64,
    pub retry_period_ns: u64,
    pub variant: K8sVariant,
}

impl Default for K8sConfig {
    fn default() -> Self {
        // client-go's defaults are 15s, 10s and 2s; the same ratios, ten times shorter.
        Self {
            lease_duration_ns: 1_500_000_000,
            renew_deadline_ns: 1_000_000_000,
            retry_period_ns: 200_000_000,
            variant: K8sVariant::Lease,
        }
    }
}

pub fn info(config: &K8sConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        name: "k8s-lease".to_string(),
        failure_detection_ns: config
            .lease_duration_ns
            .saturating_add(config.retry_period_ns.saturating_mul(2)),
        min_group_for_progress: 1,
    }
}

/// A holder identity: the node and its incarnation. Like the `hostname_uuid` identities of
/// Kubernetes controllers, a restarted process is someone new and waits like any candidate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub node: NodeId,
    pub incarnation: u32,
}

/// The lease record as the server stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub holder: Option<Identity>,
    /// Bumped by every successful update; the fencing token of the holder that acquired.
    pub resource_version: u64,
    /// The resource version at which the current holder acquired (its term and token).
    pub acquired_rv: u64,
    /// DbRow: the row expires when the database clock reads this.
    pub expires_at: LocalNanos,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum K8sMsg {
    Get,
    GetResp {
        record: Record,
    },
    /// Replace the record if its resourceVersion is still `expected_rv` (Lease), or if the
    /// row is free, expired by the database's clock, or already ours (DbRow).
    Update {
        expected_rv: u64,
        sent_at: LocalNanos,
        identity: Identity,
        /// The client's request number, echoed back: the newest answered request is the
        /// last renewal, whatever its client's clock did since.
        request: u64,
    },
    UpdateResp {
        ok: bool,
        record: Record,
        sent_at: LocalNanos,
        request: u64,
    },
    /// Release: clear the holder if still ours.
    Release {
        identity: Identity,
    },
}

impl Message for K8sMsg {
    const KINDS: &'static [&'static str] = &["Get", "GetResp", "Update", "UpdateResp", "Release"];
    fn kind(&self) -> usize {
        match self {
            K8sMsg::Get => 0,
            K8sMsg::GetResp { .. } => 1,
            K8sMsg::Update { .. } => 2,
            K8sMsg::UpdateResp { .. } => 3,
            K8sMsg::Release { .. } => 4,
        }
    }
    fn term(&self) -> u64 {
        match self {
            K8sMsg::GetResp { record } | K8sMsg::UpdateResp { record, .. } => {
                record.resource_version
            }
            _ => 0,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum K8sTimer {
    /// The retry period: candidates poll and try, the leader renews.
    Retry,
    /// The leader's renew deadline.
    RenewDeadline,
    /// DbRow: the database's expiry check.
    Expiry,
}

impl TimerKind for K8sTimer {
    const NAMES: &'static [&'static str] = &["retry", "renewdeadline", "expiry"];
    fn index(self) -> usize {
        self as usize
    }
    fn from_index(index: usize) -> Self {
        match index {
            0 => K8sTimer::Retry,
            1 => K8sTimer::RenewDeadline,
            2 => K8sTimer::Expiry,
            _ => panic!("k8s-lease has no timer kind {index}"),
        }
    }
}

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

#[derive(Clone, Debug)]
pub struct K8sServer {
    config: K8sConfig,
    record: Record,
}

impl K8sServer {
    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        let now = ctx.local_now();
        self.expire(ctx);
        match msg {
            K8sMsg::Get => ctx.send(
                from,
                K8sMsg::GetResp {
                    record: self.record.clone(),
                },
            ),
            K8sMsg::Update {
                expected_rv,
                sent_at,
                identity,
                request,
            } => {
                let ok = match self.config.variant {
                    K8sVariant::Lease => expected_rv == self.record.resource_version,
                    K8sVariant::DbRow => {
                        self.record.holder.is_none() || self.record.holder == Some(identity)
                    }
                };
                if ok {
                    self.record.resource_version += 1;
                    if self.record.holder != Some(identity) {
                        if let Some(previous) = self.record.holder {
                            ctx.signal(Signal::LeaseEnded {
                                holder: previous.node,
                            });
                        }
                        ctx.signal(Signal::LeaseHeld {
                            holder: identity.node,
                        });
                        self.record.holder = Some(identity);
                        self.record.acquired_rv = self.record.resource_version;
                    }
                    self.record.expires_at =
                        now.saturating_add(self.config.lease_duration_ns as i64);
                    if self.config.variant == K8sVariant::DbRow {
                        ctx.set_timer(K8sTimer::Expiry, self.config.lease_duration_ns);
                    }
                }
                ctx.send(
                    from,
                    K8sMsg::UpdateResp {
                        ok,
                        record: self.record.clone(),
                        sent_at,
                        request,
                    },
                );
            }
            K8sMsg::Release { identity } if self.record.holder == Some(identity) => {
                ctx.signal(Signal::LeaseEnded {
                    holder: identity.node,
                });
                self.record.holder = None;
                self.record.resource_version += 1;
            }
            _ => {}
        }
    }

    /// DbRow: whether the row is held and the database clock has reached its expiry (`expires
    /// <= now()`: expired exactly at the boundary).
    pub fn row_expired(&self, now: LocalNanos) -> bool {
        self.record.holder.is_some() && self.record.expires_at <= now
    }

    /// DbRow: the database frees a row whose expiry its clock has reached.
    fn expire(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.config.variant == K8sVariant::DbRow && self.row_expired(ctx.local_now()) {
            let holder = self.record.holder.take().expect("checked");
            self.record.resource_version += 1;
            ctx.signal(Signal::LeaseExpired {
                holder: holder.node,
            });
            ctx.signal(Signal::LeaseEnded {
                holder: holder.node,
            });
            // The database freed the row: leadership is vacant until the next claim.
            ctx.signal(Signal::ElectionStarted {
                term: self.record.resource_version,
            });
        }
    }
}

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

#[derive(Clone, Debug)]
pub struct K8sClient {
    me: NodeId,
    server: NodeId,
    config: K8sConfig,
    /// The last record seen and the local time it was first seen (client-go's observedTime).
    observed: Option<(Record, LocalNanos)>,
    leading: bool,
    token: u64,
    /// The leader's last successful renewal, by the send time of its request.
    renewed_at: LocalNanos,
    /// The number of the request that renewal answered, and of the last request sent.
    renewed_request: u64,
    requests: u64,
    seen_rv: u64,
    /// The local time of the last release. The client lets the others take over: it does not
    /// try to acquire again for one lease duration, and an answer to an update it sent
    /// before the release makes it lead no more.
    released_at: LocalNanos,
    /// Bumped by every restart: a restarted process is a new identity.
    incarnation: u32,
}

impl K8sClient {
    /// A retry period is up. The leader renews at once on the record it last saw (client-go's
    /// fast path for the holder); a candidate reads the record first and decides on what it
    /// reads (`tryAcquireOrRenew`).
    fn tick(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.leading {
            self.update(ctx);
        } else {
            ctx.send(self.server, K8sMsg::Get);
        }
        self.arm_retry(ctx);
    }

    /// A candidate has read the record: it tries to acquire when the lease looks free to it
    /// (no holder, or no change seen for a lease duration by its own clock) or still names
    /// it. A database row is upserted on every try: the database, not the client, judges
    /// expiry there.
    fn consider(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        let now = ctx.local_now();
        let Some((record, seen)) = &self.observed else {
            return;
        };
        let sitting_out_until = self
            .released_at
            .saturating_add(self.config.lease_duration_ns as i64);
        if self.leading || now < sitting_out_until {
            return;
        }
        let mine = record.holder == Some(self.identity());
        let vacant = looks_free(record, *seen, now, self.config.lease_duration_ns);
        if vacant && !mine {
            // An attempt to take a lease that looks free: the update would win `rv + 1`.
            ctx.signal(Signal::ElectionStarted {
                term: record.resource_version + 1,
            });
        }
        if vacant || mine || self.config.variant == K8sVariant::DbRow {
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
        let sent_at = ctx.local_now();
        self.requests += 1;
        ctx.send(
            self.server,
            K8sMsg::Update {
                expected_rv,
                sent_at,
                identity: self.identity(),
                request: self.requests,
            },
        );
    }

    /// The next try: the leader renews every retry period (client-go's `renew` loop); a
    /// candidate waits a retry period plus up to 1.2 more (`wait.JitterUntil` with
    /// client-go's `JitterFactor`), so that candidates do not poll in lockstep.
    fn arm_retry(&self, ctx: &mut K8sCtx<'_, '_>) {
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
        if self.leading {
            self.leading = false;
            ctx.stepped_down();
            ctx.cancel_timer(K8sTimer::RenewDeadline);
        }
    }

    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, msg: K8sMsg) {
        let now = ctx.local_now();
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

    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        (self.leading
            && now
                < self
                    .renewed_at
                    .saturating_add(self.config.renew_deadline_ns as i64))
        .then_some(self.token)
    }
}

#[derive(Clone, Debug)]
pub enum K8sProcess {
    Client(K8sClient),
    Server(K8sServer),
}

impl K8sProcess {
    pub fn cluster(members: usize, config: &K8sConfig) -> Vec<K8sProcess> {
        (0..members)
            .map(|i| {
                K8sProcess::Client(K8sClient {
                    me: NodeId::from(i),
                    server: NodeId::from(members),
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
                })
            })
            .chain(std::iter::once(K8sProcess::Server(K8sServer {
                config: config.clone(),
                record: Record {
                    holder: None,
                    resource_version: 1,
                    acquired_rv: 0,
                    expires_at: 0,
                },
            })))
            .collect()
    }
}

impl Process for K8sProcess {
    type Msg = K8sMsg;
    type Timer = K8sTimer;

    fn on_start(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if let K8sProcess::Client(c) = self {
            ctx.send(c.server, K8sMsg::Get);
            c.arm_retry(ctx);
        }
    }

    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        match self {
            K8sProcess::Client(c) => c.on_message(ctx, msg),
            K8sProcess::Server(s) => s.on_message(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut K8sCtx<'_, '_>, timer: K8sTimer) {
        match (self, timer) {
            (K8sProcess::Client(c), K8sTimer::Retry) => c.tick(ctx),
            (K8sProcess::Client(c), K8sTimer::RenewDeadline) => {
                ctx.signal(Signal::LeaderSuspected);
                c.step_down(ctx);
            }
            (K8sProcess::Server(s), K8sTimer::Expiry) => s.expire(ctx),
            _ => {}
        }
    }

    fn on_restart(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        match self {
            K8sProcess::Client(c) => {
                c.observed = None;
                c.leading = false;
                c.incarnation += 1;
                // A new identity: nothing of the old one's leadership or release holds.
                c.renewed_at = LocalNanos::MIN;
                c.released_at = LocalNanos::MIN;
                ctx.send(c.server, K8sMsg::Get);
                c.arm_retry(ctx);
            }
            K8sProcess::Server(s) => {
                if s.config.variant == K8sVariant::DbRow {
                    let now = ctx.local_now();
                    s.record.expires_at = now.saturating_add(s.config.lease_duration_ns as i64);
                    ctx.set_timer(K8sTimer::Expiry, s.config.lease_duration_ns);
                }
            }
        }
    }

    fn on_resign(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if let K8sProcess::Client(c) = self {
            if c.leading {
                let identity = c.identity();
                ctx.send(c.server, K8sMsg::Release { identity });
                c.step_down(ctx);
                c.observed = None;
                c.released_at = ctx.local_now();
            }
        }
    }

    fn term(&self) -> u64 {
        match self {
            K8sProcess::Client(c) => c.seen_rv,
            K8sProcess::Server(s) => s.record.resource_version,
        }
    }

    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        match self {
            K8sProcess::Client(c) => c.write_token(now),
            K8sProcess::Server(_) => None,
        }
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            K8sProcess::Client(c) if c.leading => Some(c.me),
            K8sProcess::Client(c) => c.observed.as_ref().and_then(|o| o.0.holder.map(|h| h.node)),
            K8sProcess::Server(_) => None,
        }
    }
}
