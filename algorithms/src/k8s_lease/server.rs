//! The modeled API server holding the `Lease` object: optimistic concurrency on
//! `resourceVersion`. Variant `DbRow`: a database row whose expiry the database judges by its
//! own clock (`UPDATE .. WHERE holder IS NULL OR expires < now()`).
//!
//! The server is where leadership changes hands as the system sees it: it signals
//! `LeaseHeld` and `LeaseEnded` as the record's holder changes, and, for a database row, the
//! expiry and the vacancy it opens.

use super::config::{K8sConfig, K8sVariant};
use super::messages::{Identity, K8sMsg, K8sTimer, Record};
use crate::etcd::messages::ObjectView;
use crate::etcd::store::{object_matches, object_put, signal_holder_change};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

/// The server process's state: the one Lease object, kept by the object store's rules that
/// the API server on an etcd cluster has from etcd (`etcd/store.rs`: the compare on the
/// resource version, the holder's acquisition revision), and a database row's expiry.
#[derive(Clone, Debug)]
pub struct K8sServer {
    config: K8sConfig,
    object: ObjectView,
    /// DbRow: the row expires when the database clock reads this.
    expires_at: LocalNanos,
}

impl K8sServer {
    /// A server whose record nobody holds yet, at resource version 1.
    pub fn new(config: &K8sConfig) -> Self {
        Self {
            config: config.clone(),
            object: ObjectView {
                mod_rev: 1,
                owner: None,
                owner_since: 0,
                value: 0,
            },
            expires_at: 0,
        }
    }

    /// The record as a client reads it.
    pub fn record(&self) -> Record {
        Record {
            expires_at: self.expires_at,
            ..Record::of_object(Some(&self.object))
        }
    }

    /// The record's resource version (the server's term).
    pub fn resource_version(&self) -> u64 {
        self.object.mod_rev
    }

    /// Writes the object at the next resource version; signals a change of holder.
    fn put(&mut self, ctx: &mut K8sCtx<'_, '_>, holder: Option<Identity>, value: u64) {
        let before = self.object.owner;
        let owner = holder.map(Identity::owner);
        let rev = self.object.mod_rev + 1;
        self.object = object_put(Some(&self.object), rev, owner, value);
        signal_holder_change(ctx, before, owner);
    }

    /// DbRow: whether the row is held and the database clock has reached its expiry (`expires
    /// <= now()`: expired exactly at the boundary).
    pub fn row_expired(&self, now: LocalNanos) -> bool {
        self.object.owner.is_some() && self.expires_at <= now
    }

    /// DbRow: the database frees a row whose expiry its clock has reached.
    fn expire(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.config.variant != K8sVariant::DbRow || !self.row_expired(ctx.wall_now()) {
            return;
        }
        let (holder, _) = self.object.owner.expect("checked");
        ctx.signal(Signal::LeaseExpired { holder });
        let value = self.object.value;
        self.put(ctx, None, value);
        // The database freed the row: leadership is vacant until the next claim.
        ctx.signal(Signal::ElectionStarted {
            term: self.object.mod_rev,
        });
    }
}

impl Process for K8sServer {
    type Msg = K8sMsg;
    type Timer = K8sTimer;
    type Durable = ();

    /// The Lease record, for `run --stop-at` (read-only).
    fn inspect(&self) -> Vec<(&'static str, String)> {
        let r = self.record();
        let holder = r.holder.map_or("none".to_string(), |h| h.node.to_string());
        vec![
            ("holder", holder),
            ("resource_version", r.resource_version.to_string()),
            ("acquired_rv", r.acquired_rv.to_string()),
            ("expires_at_ns", r.expires_at.to_string()),
        ]
    }

    /// Answers a read or an update, and clears the record on its holder's release. A
    /// database row whose expiry has come is freed first.
    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        let now = ctx.wall_now();
        self.expire(ctx);
        match msg {
            K8sMsg::Get => ctx.send(
                from,
                K8sMsg::GetResp {
                    record: self.record(),
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
                    K8sVariant::Lease => object_matches(Some(&self.object), expected_rv),
                    K8sVariant::DbRow => self
                        .object
                        .owner
                        .is_none_or(|owner| owner == identity.owner()),
                };
                if ok {
                    self.put(ctx, Some(identity), u64::from(lease_duration_s));
                    self.expires_at = now.saturating_add(self.config.lease_duration_ns as i64);
                    if self.config.variant == K8sVariant::DbRow {
                        ctx.set_wall_timer(K8sTimer::Expiry, self.expires_at);
                    }
                }
                ctx.send(
                    from,
                    K8sMsg::UpdateResp {
                        ok,
                        record: self.record(),
                        sent_at,
                        request,
                    },
                );
            }
            K8sMsg::Release { identity } if self.object.owner == Some(identity.owner()) => {
                // client-go's `release`: an empty `HolderIdentity`, `LeaseDurationSeconds: 1`.
                self.put(ctx, None, 1);
            }
            _ => {}
        }
    }

    /// The server's only timer is the database's expiry check.
    fn on_timer(&mut self, ctx: &mut K8sCtx<'_, '_>, timer: K8sTimer) {
        if timer == K8sTimer::Expiry {
            self.expire(ctx);
        }
    }

    /// A restarted server keeps its record; a database row's expiry starts over on the
    /// database's clock.
    fn on_restart(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        if self.config.variant == K8sVariant::DbRow {
            let now = ctx.wall_now();
            self.expires_at = now.saturating_add(self.config.lease_duration_ns as i64);
            ctx.set_wall_timer(K8sTimer::Expiry, self.expires_at);
        }
    }

    /// The server waits for requests.
    fn on_start(&mut self, _ctx: &mut K8sCtx<'_, '_>) {}

    /// The record's resource version (the server's term).
    fn term(&self) -> u64 {
        self.object.mod_rev
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }
}
