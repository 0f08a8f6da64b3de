//! The modeled API server holding the `Lease` object: optimistic concurrency on
//! `resourceVersion`. Variant `DbRow`: a database row whose expiry the database judges by its
//! own clock (`UPDATE .. WHERE holder IS NULL OR expires < now()`).
//!
//! The server is where leadership changes hands as the system sees it: it signals
//! `LeaseHeld` and `LeaseEnded` as the record's holder changes, and, for a database row, the
//! expiry and the vacancy it opens.

use super::config::{K8sConfig, K8sVariant};
use super::messages::{K8sMsg, K8sTimer, Record};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Signal};

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

/// The server process's state: the one lease record.
#[derive(Clone, Debug)]
pub struct K8sServer {
    config: K8sConfig,
    pub(super) record: Record,
}

impl K8sServer {
    /// A server whose record nobody holds yet, at resource version 1.
    pub fn new(config: &K8sConfig) -> Self {
        Self {
            config: config.clone(),
            record: Record {
                holder: None,
                resource_version: 1,
                acquired_rv: 0,
                expires_at: 0,
                lease_duration_s: 0,
            },
        }
    }

    /// The Lease record, for `run --stop-at` (read-only).
    pub fn inspect(&self) -> Vec<(&'static str, String)> {
        let r = &self.record;
        let holder = r.holder.map_or("none".to_string(), |h| h.node.to_string());
        vec![
            ("holder", holder),
            ("resource_version", r.resource_version.to_string()),
            ("acquired_rv", r.acquired_rv.to_string()),
            ("expires_at_ns", r.expires_at.to_string()),
        ]
    }

    /// The record's resource version (the server's term).
    pub fn resource_version(&self) -> u64 {
        self.record.resource_version
    }

    /// Answers a read or an update, and clears the record on its holder's release. A
    /// database row whose expiry has come is freed first.
    pub fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        let now = ctx.wall_now();
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
                lease_duration_s,
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
                    self.record.lease_duration_s = lease_duration_s;
                    self.record.expires_at =
                        now.saturating_add(self.config.lease_duration_ns as i64);
                    if self.config.variant == K8sVariant::DbRow {
                        ctx.set_wall_timer(K8sTimer::Expiry, self.record.expires_at);
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
                // client-go's `release`: an empty `HolderIdentity`, `LeaseDurationSeconds: 1`.
                self.record.holder = None;
                self.record.lease_duration_s = 1;
                self.record.resource_version += 1;
            }
            _ => {}
        }
    }

    /// The server's only timer is the database's expiry check.
    pub fn on_timer(&mut self, ctx: &mut K8sCtx<'_, '_>, timer: K8sTimer) {
        if timer == K8sTimer::Expiry {
            self.expire(ctx);
        }
    }

    /// A restarted server keeps its record; a database row's expiry starts over on the
    /// database's clock.
    pub fn on_restart(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.config.variant == K8sVariant::DbRow {
            let now = ctx.wall_now();
            self.record.expires_at = now.saturating_add(self.config.lease_duration_ns as i64);
            ctx.set_wall_timer(K8sTimer::Expiry, self.record.expires_at);
        }
    }

    /// DbRow: whether the row is held and the database clock has reached its expiry (`expires
    /// <= now()`: expired exactly at the boundary).
    pub fn row_expired(&self, now: LocalNanos) -> bool {
        self.record.holder.is_some() && self.record.expires_at <= now
    }

    /// DbRow: the database frees a row whose expiry its clock has reached.
    fn expire(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.config.variant == K8sVariant::DbRow && self.row_expired(ctx.wall_now()) {
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
