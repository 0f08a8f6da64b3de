//! The Kubernetes `Lease` lock of client-go's `leaderelection` package, on a modeled API
//! server: optimistic concurrency on `resourceVersion`; candidates time the holder's expiry by
//! their own observation of the last change to the record (`observedTime`), never by the
//! record's timestamps; the leader renews every retry period and steps down when it has not
//! renewed within the renew deadline. Variant `DbRow`: a database-row lease whose expiry the
//! database judges by its own clock (`UPDATE .. WHERE holder IS NULL OR expires < now()`).
//! The server is one process, id `members`. Not yet selectable from scenario files.

use serde::Serialize;
use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, Message, NodeId, Process, Signal, TimerKind};

#[cfg(test)]
mod tests;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
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
        failure_detection_ns: config.lease_duration_ns + 2 * config.retry_period_ns,
        min_group_for_progress: 1,
    }
}

/// The lease record as the server stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub holder: Option<NodeId>,
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
    },
    UpdateResp {
        ok: bool,
        record: Record,
        sent_at: LocalNanos,
    },
    /// Release: clear the holder if still ours.
    Release,
}

impl Message for K8sMsg {
    const KINDS: &'static [&'static str] = &["Get", "GetResp", "Update", "UpdateResp", "Release"];
    fn kind(&self) -> usize {
        match self {
            K8sMsg::Get => 0,
            K8sMsg::GetResp { .. } => 1,
            K8sMsg::Update { .. } => 2,
            K8sMsg::UpdateResp { .. } => 3,
            K8sMsg::Release => 4,
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
            } => {
                let ok = match self.config.variant {
                    K8sVariant::Lease => expected_rv == self.record.resource_version,
                    K8sVariant::DbRow => {
                        self.record.holder.is_none() || self.record.holder == Some(from)
                    }
                };
                if ok {
                    self.record.resource_version += 1;
                    if self.record.holder != Some(from) {
                        self.record.holder = Some(from);
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
                    },
                );
            }
            K8sMsg::Release if self.record.holder == Some(from) => {
                self.record.holder = None;
                self.record.resource_version += 1;
            }
            _ => {}
        }
    }

    /// DbRow: the database frees a row whose expiry its clock has reached.
    fn expire(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.config.variant == K8sVariant::DbRow
            && self.record.holder.is_some()
            && self.record.expires_at <= ctx.local_now()
        {
            let holder = self.record.holder.take().expect("checked");
            self.record.resource_version += 1;
            ctx.signal(Signal::LeaseExpired { holder });
        }
    }
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
    seen_rv: u64,
}

impl K8sClient {
    fn tick(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        let now = ctx.local_now();
        let rv = self.observed.as_ref().map_or(0, |o| o.0.resource_version);
        let try_update = match &self.observed {
            None => false,
            Some((r, seen)) => {
                r.holder.is_none()
                    || r.holder == Some(self.me)
                    || self.config.variant == K8sVariant::DbRow
                    || now >= seen.saturating_add(self.config.lease_duration_ns as i64)
            }
        };
        if try_update {
            ctx.send(
                self.server,
                K8sMsg::Update {
                    expected_rv: rv,
                    sent_at: now,
                },
            );
        } else {
            ctx.send(self.server, K8sMsg::Get);
        }
        ctx.set_timer(K8sTimer::Retry, self.config.retry_period_ns);
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
            K8sMsg::GetResp { record } => self.observe(now, record),
            K8sMsg::UpdateResp {
                ok,
                record,
                sent_at,
            } => {
                let mine = ok && record.holder == Some(self.me);
                self.observe(now, record.clone());
                if mine {
                    if !self.leading || self.token != record.acquired_rv {
                        self.leading = true;
                        self.token = record.acquired_rv;
                        ctx.signal(Signal::ElectionStarted {
                            term: record.acquired_rv,
                        });
                        ctx.became_leader(record.acquired_rv, record.acquired_rv);
                    }
                    self.renewed_at = self.renewed_at.max(sent_at);
                    let left = self
                        .renewed_at
                        .saturating_add(self.config.renew_deadline_ns as i64)
                        .saturating_sub(now)
                        .max(0) as u64;
                    ctx.set_timer(K8sTimer::RenewDeadline, left);
                } else if record.holder != Some(self.me) {
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
                    seen_rv: 0,
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
            ctx.set_timer(K8sTimer::Retry, c.config.retry_period_ns);
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
                ctx.send(c.server, K8sMsg::Get);
                ctx.set_timer(K8sTimer::Retry, c.config.retry_period_ns);
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
                ctx.send(c.server, K8sMsg::Release);
                c.step_down(ctx);
                c.observed = None;
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
            K8sProcess::Client(c) => c.observed.as_ref().and_then(|o| o.0.holder),
            K8sProcess::Server(_) => None,
        }
    }
}
