//! An election member: it asks the lock server for the lease, renews it while it holds it,
//! and writes to the fenced resource while it believes it holds it.
//!
//! The member believes its lease until its own monotonic clock reads the send time of the
//! last answered request plus `ttl - margin` (`Correct`). The server counts the same TTL from
//! when it *handled* that request, which is later, on its own clock; the margin covers the
//! two clocks drifting apart. So the member stops acting before the server can grant the
//! lease to anyone else. A pause, a GC stall or a slow network may still delay a write the
//! member decided on in time: the resource's fencing rejects it, because the next holder's
//! token is higher (Kleppmann, "How to do distributed locking", 2016).
//!
//! The unsafe variants check the lease, then act `act_delay` later without checking again
//! (the application's "work" between check and commit), which a pause turns into a write on
//! a lease that has long gone to someone else.

use crate::belief;
use crate::config::{OwnLeaseConfig, Variant};
use crate::messages::{LeaseMsg, LeaseTimer};
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process, Signal};

type LeaseCtx<'a> = Ctx<'a, LeaseMsg, LeaseTimer>;

/// Where a member is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Asking for the lease in campaign number `campaign`.
    Waiting {
        /// The campaign under way (answers to an earlier one are released).
        campaign: u64,
    },
    /// Holding lease `token` (believed until [`Member::deadline`]).
    Holding {
        /// The lease's fencing token, also the term the member claims.
        token: u64,
    },
}

/// One election member (ids `0..members`).
#[derive(Clone, Debug)]
pub struct Member {
    me: NodeId,
    server: NodeId,
    config: OwnLeaseConfig,
    phase: Phase,
    /// Believes its lease while its monotonic clock reads less than this.
    deadline: LocalNanos,
    /// The late variants: the token of the write decided at the last check.
    pending_act: Option<u64>,
    /// Who the server last said holds the lease.
    holder_seen: Option<NodeId>,
    /// Campaigns started; kept across a restart, so that a restarted member's campaign is
    /// never mistaken for its previous life's.
    campaigns: u64,
    /// The highest token seen (the member's term); kept across a restart.
    highest_token: u64,
}

impl Member {
    /// Member `me`; the lock server is process `members`.
    pub fn new(me: NodeId, members: usize, config: &OwnLeaseConfig) -> Self {
        Self {
            me,
            server: NodeId::from(members),
            config: config.clone(),
            phase: Phase::Waiting { campaign: 0 },
            deadline: LocalNanos::MIN,
            pending_act: None,
            holder_seen: None,
            campaigns: 0,
            highest_token: 0,
        }
    }

    /// Where the member is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The local time from which the member no longer believes its lease.
    pub fn deadline(&self) -> LocalNanos {
        self.deadline
    }

    /// One pass of the application loop: check the lease, then write (now, or later).
    fn work(&mut self, ctx: &mut LeaseCtx<'_>, token: u64) {
        ctx.set_timer(LeaseTimer::Work, self.config.work_every_ns);
        if ctx.monotonic_now() >= self.deadline {
            return;
        }
        if self.config.variant.acts_late() {
            self.pending_act = Some(token);
            ctx.set_timer(LeaseTimer::Act, self.config.act_delay_ns);
        } else {
            self.write(ctx, token);
        }
    }

    fn write(&mut self, ctx: &mut LeaseCtx<'_>, token: u64) {
        belief::acted(ctx, token);
        match self.config.variant {
            Variant::Correct | Variant::CheckThenActFenced => ctx.write(token),
            // The lock is trusted to be the fence: every write carries the same token.
            Variant::CheckThenAct => ctx.write(0),
        }
    }

    fn campaign(&mut self, ctx: &mut LeaseCtx<'_>) {
        self.campaigns += 1;
        self.phase = Phase::Waiting {
            campaign: self.campaigns,
        };
        self.ask(ctx);
    }

    /// Asks for the lease, and again after a jittered interval if still waiting (so that
    /// waiters do not ask in lockstep).
    fn ask(&mut self, ctx: &mut LeaseCtx<'_>) {
        let Phase::Waiting { campaign } = self.phase else {
            return;
        };
        let sent_at = ctx.monotonic_now();
        ctx.send(self.server, LeaseMsg::Acquire { sent_at, campaign });
        let every = self.config.renew_every_ns;
        let jitter = ctx.rng().below(every / 2 + 1);
        ctx.set_timer(LeaseTimer::Renew, every / 2 + jitter);
    }

    fn become_holder(&mut self, ctx: &mut LeaseCtx<'_>, token: u64, sent_at: LocalNanos) {
        let deadline = self.belief_end(sent_at);
        if ctx.monotonic_now() >= deadline {
            // Granted, but answered too late to be believed. Not released: the next ask of
            // this campaign gets the same lease back, fresh, and a release arriving after
            // that would end the lease its holder then believes (the hunt found this with
            // an unfenced resource: a server pause queued several asks).
            return;
        }
        self.deadline = deadline;
        self.phase = Phase::Holding { token };
        self.holder_seen = Some(self.me);
        ctx.became_leader(token, token);
        belief::holds(ctx, token);
        self.arm_deadline(ctx);
        ctx.set_timer(LeaseTimer::Renew, self.config.renew_every_ns);
        self.work(ctx, token);
    }

    fn renewed(&mut self, ctx: &mut LeaseCtx<'_>, sent_at: LocalNanos) {
        self.deadline = self.deadline.max(self.belief_end(sent_at));
        self.arm_deadline(ctx);
    }

    /// Stops believing: steps down, hands the lease back if it may still be held (`release`),
    /// and campaigns again, later. The late variants' decided write stays pending (the bug).
    fn give_up(&mut self, ctx: &mut LeaseCtx<'_>, release: bool) {
        let Phase::Holding { token } = self.phase else {
            return;
        };
        ctx.stepped_down();
        belief::released(ctx, token);
        ctx.signal(Signal::LeaderSuspected);
        ctx.cancel_timer(LeaseTimer::Work);
        ctx.cancel_timer(LeaseTimer::Deadline);
        if !self.config.variant.acts_late() {
            self.pending_act = None;
            ctx.cancel_timer(LeaseTimer::Act);
        }
        if release {
            ctx.send(self.server, LeaseMsg::Release { token });
        }
        self.deadline = LocalNanos::MIN;
        // Ask again only after a renewal interval: a resigning holder lets another member
        // take over, and no write of the old lease still on its way to the resource is
        // overtaken by a write of a new lease of its own.
        self.campaigns += 1;
        self.phase = Phase::Waiting {
            campaign: self.campaigns,
        };
        ctx.set_timer(LeaseTimer::Renew, self.config.renew_every_ns);
    }

    fn belief_end(&self, sent_at: LocalNanos) -> LocalNanos {
        let belief_ns = i64::try_from(self.config.belief_ns()).unwrap_or(i64::MAX);
        sent_at.saturating_add(belief_ns)
    }

    fn arm_deadline(&self, ctx: &mut LeaseCtx<'_>) {
        let left = self.deadline.saturating_sub(ctx.monotonic_now()).max(0);
        ctx.set_timer(LeaseTimer::Deadline, left.unsigned_abs());
    }
}

impl Process for Member {
    type Msg = LeaseMsg;
    type Timer = LeaseTimer;
    type Durable = ();

    /// The highest token seen: the member's term.
    fn term(&self) -> u64 {
        self.highest_token
    }

    /// The token it would write with at local time `now`: its lease's, if it believes it.
    fn write_token(&self, now: LocalNanos) -> Option<u64> {
        match self.phase {
            Phase::Holding { token } if now < self.deadline => Some(token),
            _ => None,
        }
    }

    /// Itself while it holds the lease, else the holder the server last named.
    fn known_leader(&self) -> Option<NodeId> {
        match self.phase {
            Phase::Holding { .. } => Some(self.me),
            Phase::Waiting { .. } => self.holder_seen,
        }
    }

    /// A member asks for the lease at once.
    fn on_start(&mut self, ctx: &mut LeaseCtx<'_>) {
        self.campaign(ctx);
    }

    /// Back from a crash with nothing but its campaign count and highest token: it asks
    /// again, in a new campaign (the server gives it a new token even if its previous life
    /// held the lease).
    fn on_restart(&mut self, ctx: &mut LeaseCtx<'_>) {
        self.deadline = LocalNanos::MIN;
        self.pending_act = None;
        self.holder_seen = None;
        self.campaign(ctx);
    }

    /// A planned handover: the holder stops, releases the lease, and asks again a renewal
    /// interval later.
    fn on_resign(&mut self, ctx: &mut LeaseCtx<'_>) {
        if let Phase::Holding { .. } = self.phase {
            self.holder_seen = None;
            self.give_up(ctx, true);
        }
    }

    /// Renewals, the lease's end, the application loop and the late variants' writes.
    fn on_timer(&mut self, ctx: &mut LeaseCtx<'_>, timer: LeaseTimer) {
        match (timer, self.phase) {
            (LeaseTimer::Renew, Phase::Waiting { .. }) => self.ask(ctx),
            (LeaseTimer::Renew, Phase::Holding { token }) => {
                let sent_at = ctx.monotonic_now();
                ctx.send(self.server, LeaseMsg::Renew { token, sent_at });
                ctx.set_timer(LeaseTimer::Renew, self.config.renew_every_ns);
            }
            (LeaseTimer::Deadline, Phase::Holding { .. }) => {
                if ctx.monotonic_now() >= self.deadline {
                    self.give_up(ctx, true);
                } else {
                    self.arm_deadline(ctx);
                }
            }
            (LeaseTimer::Work, Phase::Holding { token }) => self.work(ctx, token),
            // Acts whatever the phase: the check was made `act_delay` ago (the bug).
            (LeaseTimer::Act, _) => {
                if let Some(token) = self.pending_act.take() {
                    self.write(ctx, token);
                }
            }
            _ => {}
        }
    }

    /// Acts on the server's answers.
    fn on_message(&mut self, ctx: &mut LeaseCtx<'_>, _from: NodeId, msg: LeaseMsg) {
        use splitbrain_sim::Message;
        self.highest_token = self.highest_token.max(msg.term());
        match msg {
            LeaseMsg::Granted {
                token,
                sent_at,
                campaign,
            } => match self.phase {
                Phase::Waiting { campaign: c } if c == campaign => {
                    self.become_holder(ctx, token, sent_at);
                }
                // The answer to a duplicate of the request that got this lease.
                Phase::Holding { token: held } if held == token => self.renewed(ctx, sent_at),
                // A grant for an abandoned campaign: hand it back at once.
                _ => ctx.send(self.server, LeaseMsg::Release { token }),
            },
            LeaseMsg::Renewed { token, sent_at } => {
                if self.phase == (Phase::Holding { token }) {
                    self.renewed(ctx, sent_at);
                }
            }
            LeaseMsg::Refused { token } => {
                if self.phase == (Phase::Holding { token }) {
                    self.give_up(ctx, false);
                }
            }
            LeaseMsg::Busy { holder, .. } => {
                if let Phase::Waiting { .. } = self.phase {
                    self.holder_seen = holder;
                }
            }
            LeaseMsg::Acquire { .. } | LeaseMsg::Renew { .. } | LeaseMsg::Release { .. } => {}
        }
    }
}
