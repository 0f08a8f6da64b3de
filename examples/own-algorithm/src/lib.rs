//! A lease-based leader election written outside splitbrain, as a user's crate would be,
//! and hunted with splitbrain (`tests/hunt.rs`; `docs/your-own-code.md` walks through it).
//!
//! A lock server (process `members`) grants one lease at a time, with a TTL and a fencing
//! token that grows with every grant. Members ask for it; the holder renews it every
//! `renew_every` and, while it believes it holds it, writes to the fenced resource with its
//! token every `work_every`. A member believes its lease until its own monotonic clock
//! reaches the send time of its last answered request plus `ttl - margin`; the server expires
//! the lease a TTL after it *handled* that request, on its own clock. The margin covers the
//! clocks' drift, so a member never acts on a lease the server may have granted since. The
//! token covers what no check can: a write decided in time that arrives late (a stall, a
//! slow network) is rejected by the resource because the next holder's token is higher.
//!
//! The token is also the term a holder claims (`ctx.became_leader(token, token)`): each is
//! granted once, so `election_safety` holds by construction and the interesting checks are
//! `fencing_safety` and the members' own reports ([`belief`]).
//!
//! Two variants are unsafe on purpose ([`Variant`]): `CheckThenAct` checks its lease, then
//! writes `act_delay` later without checking again and with the constant token 0;
//! `CheckThenActFenced` does the same with its lease's token, which a fencing resource turns
//! into a rejected write that no built-in invariant reports.
//!
//! The algorithm joins splitbrain at run time:
//!
//! ```
//! splitbrain_algorithms::register::<own_algorithm::OwnLease>().unwrap();
//! let entry = splitbrain_algorithms::AlgorithmEntry::named("own-lease").unwrap();
//! assert_eq!(entry.scenario_name, "OwnLease");
//! assert!(!entry.built_in);
//! ```

#![warn(missing_docs)]

pub mod belief;
pub mod config;
pub mod member;
pub mod messages;
pub mod server;
mod settings;

pub use config::{OwnLeaseConfig, Variant};
pub use member::{Member, Phase};
pub use messages::{LeaseMsg, LeaseTimer};
pub use server::LockServer;
pub use settings::{OwnLease, OwnLeaseError, OwnLeaseSettings};

use splitbrain_sim::{AlgorithmInfo, Ctx, LocalNanos, NodeId, Process, SignalSupport};

/// What the engine's checks need to know about the election.
pub fn info(config: &OwnLeaseConfig, _members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: "own-lease".to_string(),
        // At worst: a restarted server waits out a TTL, a dead holder's lease runs a TTL
        // past its last renewal, and a waiter asks once per renewal interval.
        failure_detection_ns: config
            .ttl_ns
            .saturating_mul(2)
            .saturating_add(config.renew_every_ns),
        // One member and the server elect a leader.
        min_group_for_progress: 1,
        signals: SignalSupport::NONE,
        // The server grants each token once: a late campaign cannot win a decided term.
        late_campaigns_lose: true,
    }
}

/// A process of a run: a member, or the lock server.
#[derive(Clone, Debug)]
pub enum OwnLeaseProcess {
    /// An election member (ids `0..members`).
    Member(Member),
    /// The lock server (id `members`).
    Server(LockServer),
}

impl OwnLeaseProcess {
    /// The processes of a run: `members` members, then the server.
    pub fn cluster(members: usize, config: &OwnLeaseConfig) -> Vec<OwnLeaseProcess> {
        (0..members)
            .map(|i| OwnLeaseProcess::Member(Member::new(NodeId::from(i), members, config)))
            .chain(std::iter::once(OwnLeaseProcess::Server(LockServer::new(
                config,
            ))))
            .collect()
    }
}

type LeaseCtx<'a> = Ctx<'a, LeaseMsg, LeaseTimer>;

impl Process for OwnLeaseProcess {
    type Msg = LeaseMsg;
    type Timer = LeaseTimer;
    // Both keep what survives a crash in memory and drop the rest in `on_restart`.
    type Durable = ();

    fn on_start(&mut self, ctx: &mut LeaseCtx<'_>) {
        match self {
            OwnLeaseProcess::Member(m) => m.on_start(ctx),
            OwnLeaseProcess::Server(s) => s.on_start(ctx),
        }
    }

    fn on_message(&mut self, ctx: &mut LeaseCtx<'_>, from: NodeId, msg: LeaseMsg) {
        match self {
            OwnLeaseProcess::Member(m) => m.on_message(ctx, from, msg),
            OwnLeaseProcess::Server(s) => s.on_message(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut LeaseCtx<'_>, timer: LeaseTimer) {
        match self {
            OwnLeaseProcess::Member(m) => m.on_timer(ctx, timer),
            OwnLeaseProcess::Server(s) => s.on_timer(ctx, timer),
        }
    }

    fn on_restart(&mut self, ctx: &mut LeaseCtx<'_>) {
        match self {
            OwnLeaseProcess::Member(m) => m.on_restart(ctx),
            OwnLeaseProcess::Server(s) => s.on_restart(ctx),
        }
    }

    fn on_resign(&mut self, ctx: &mut LeaseCtx<'_>) {
        if let OwnLeaseProcess::Member(m) = self {
            m.on_resign(ctx);
        }
    }

    fn term(&self) -> u64 {
        match self {
            OwnLeaseProcess::Member(m) => m.term(),
            OwnLeaseProcess::Server(s) => s.last_token(),
        }
    }

    fn write_token(&self, local_now_ns: LocalNanos) -> Option<u64> {
        match self {
            OwnLeaseProcess::Member(m) => m.write_token(local_now_ns),
            OwnLeaseProcess::Server(_) => None,
        }
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            OwnLeaseProcess::Member(m) => m.known_leader(),
            OwnLeaseProcess::Server(s) => s.holder(),
        }
    }
}
