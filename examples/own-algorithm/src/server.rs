//! The lock server: one lease with a TTL, granted to one member at a time with a fencing
//! token that grows with every grant, renewed by its holder, expired on the server's own
//! monotonic clock.
//!
//! What it keeps across a crash: the last token granted (it must never be granted again, so
//! a real server writes it to disk before answering). What it loses: the lease itself. A
//! restarted server therefore grants nothing for one TTL (its grace), by which time any
//! lease granted before the crash has ended in its holder's eyes too (Chubby's grace period
//! after a master fail-over plays the same part).

use crate::belief;
use crate::config::OwnLeaseConfig;
use crate::messages::{LeaseMsg, LeaseTimer};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};

type LeaseCtx<'a> = Ctx<'a, LeaseMsg, LeaseTimer>;

/// The lease as the server holds it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Lease {
    holder: NodeId,
    token: u64,
    /// The holder's campaign it was granted to.
    campaign: u64,
    /// Expires once the server's monotonic clock reads this.
    expires_at: LocalNanos,
}

/// The lock server's state (process id `members`).
#[derive(Clone, Debug)]
pub struct LockServer {
    ttl_ns: u64,
    /// The last token granted; kept across a crash.
    last_token: u64,
    lease: Option<Lease>,
    /// After a restart: nothing is granted until the clock reads this.
    grace_until: LocalNanos,
}

impl LockServer {
    /// A server that has granted nothing yet.
    pub fn new(config: &OwnLeaseConfig) -> Self {
        Self {
            ttl_ns: config.ttl_ns,
            last_token: 0,
            lease: None,
            grace_until: LocalNanos::MIN,
        }
    }

    /// The last token granted (the server's "term" for `term_monotonic`).
    pub fn last_token(&self) -> u64 {
        self.last_token
    }

    /// Who holds the lease now, as the server would tell a client that asked.
    pub fn holder(&self) -> Option<NodeId> {
        self.lease.map(|l| l.holder)
    }

    fn acquire(
        &mut self,
        ctx: &mut LeaseCtx<'_>,
        from: NodeId,
        sent_at: LocalNanos,
        campaign: u64,
    ) {
        if let Some(lease) = self.lease.filter(|l| l.holder == from) {
            if campaign < lease.campaign {
                // A duplicate from a campaign older than the lease's: nothing to answer.
                return;
            }
            if lease.campaign == campaign {
                // A retry or a duplicate of the request that got the lease: the same lease
                // (a new token would end a lease its holder may still act on).
                self.extend(ctx, from, lease.token);
                let token = lease.token;
                ctx.send(
                    from,
                    LeaseMsg::Granted {
                        token,
                        sent_at,
                        campaign,
                    },
                );
                return;
            }
            // The holder campaigns anew (it restarted, resigned or gave up, so it acts on the
            // old lease no more): the old lease ends, and a release of it arriving late
            // cannot end the new one.
            self.vacate(ctx, from);
        }
        if self.lease.is_some() || ctx.monotonic_now() < self.grace_until {
            let busy = LeaseMsg::Busy {
                holder: self.holder(),
                token: self.last_token,
            };
            ctx.send(from, busy);
            return;
        }
        self.last_token += 1;
        let token = self.last_token;
        self.lease = Some(Lease {
            holder: from,
            token,
            campaign,
            expires_at: self.later(ctx, self.ttl_ns),
        });
        belief::granted(ctx, from, token);
        ctx.signal(Signal::LeaseHeld { holder: from });
        ctx.set_timer(LeaseTimer::Expiry, self.ttl_ns);
        ctx.send(
            from,
            LeaseMsg::Granted {
                token,
                sent_at,
                campaign,
            },
        );
    }

    /// Extends `from`'s lease `token` by a TTL from now; false if it is not the lease held.
    fn extend(&mut self, ctx: &mut LeaseCtx<'_>, from: NodeId, token: u64) -> bool {
        let expires_at = self.later(ctx, self.ttl_ns);
        match self.lease.as_mut() {
            Some(lease) if lease.holder == from && lease.token == token => {
                lease.expires_at = expires_at;
                ctx.set_timer(LeaseTimer::Expiry, self.ttl_ns);
                true
            }
            _ => false,
        }
    }

    fn expire_if_due(&mut self, ctx: &mut LeaseCtx<'_>) {
        let Some(lease) = self.lease else {
            return;
        };
        if ctx.monotonic_now() >= lease.expires_at {
            ctx.signal(Signal::LeaseExpired {
                holder: lease.holder,
            });
            self.vacate(ctx, lease.holder);
        }
    }

    fn vacate(&mut self, ctx: &mut LeaseCtx<'_>, holder: NodeId) {
        self.lease = None;
        ctx.cancel_timer(LeaseTimer::Expiry);
        ctx.signal(Signal::LeaseEnded { holder });
        ctx.signal(Signal::ElectionStarted {
            term: self.last_token + 1,
        });
    }

    fn later(&self, ctx: &LeaseCtx<'_>, after_ns: u64) -> LocalNanos {
        ctx.monotonic_now()
            .saturating_add(i64::try_from(after_ns).unwrap_or(i64::MAX))
    }
}

impl Process for LockServer {
    type Msg = LeaseMsg;
    type Timer = LeaseTimer;
    type Durable = ();

    /// The server waits for requests.
    fn on_start(&mut self, _ctx: &mut LeaseCtx<'_>) {}

    /// Back from a crash: the lease is gone; wait out a TTL before granting again.
    fn on_restart(&mut self, ctx: &mut LeaseCtx<'_>) {
        self.lease = None;
        self.grace_until = self.later(ctx, self.ttl_ns);
        ctx.signal(Signal::ElectionStarted {
            term: self.last_token + 1,
        });
    }

    /// Expires the lease when its time has come.
    fn on_timer(&mut self, ctx: &mut LeaseCtx<'_>, timer: LeaseTimer) {
        if timer == LeaseTimer::Expiry {
            self.expire_if_due(ctx);
        }
    }

    /// Serves one request. An expired lease is expired first, whatever the order in which
    /// a pause let the expiry timer and the request come due.
    fn on_message(&mut self, ctx: &mut LeaseCtx<'_>, from: NodeId, msg: LeaseMsg) {
        self.expire_if_due(ctx);
        match msg {
            LeaseMsg::Acquire { sent_at, campaign } => self.acquire(ctx, from, sent_at, campaign),
            LeaseMsg::Renew { token, sent_at } => {
                if self.extend(ctx, from, token) {
                    ctx.send(from, LeaseMsg::Renewed { token, sent_at });
                } else {
                    ctx.send(from, LeaseMsg::Refused { token });
                }
            }
            LeaseMsg::Release { token } => {
                if self
                    .lease
                    .is_some_and(|l| l.holder == from && l.token == token)
                {
                    self.vacate(ctx, from);
                }
            }
            LeaseMsg::Granted { .. }
            | LeaseMsg::Busy { .. }
            | LeaseMsg::Renewed { .. }
            | LeaseMsg::Refused { .. } => {}
        }
    }

    /// The server's term: the last token it granted.
    fn term(&self) -> u64 {
        self.last_token()
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }

    /// The holder of the lock, as the server sees it.
    fn known_leader(&self) -> Option<NodeId> {
        self.holder()
    }
}
