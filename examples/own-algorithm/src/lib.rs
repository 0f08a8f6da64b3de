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

use splitbrain_algorithms::hosted::{host, HostedProcess};
use splitbrain_sim::{AlgorithmInfo, NodeId, SignalSupport};

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

/// A process of a run: a [`Member`] or the [`LockServer`], each a `Process` of its own,
/// hosted side by side (no enum to dispatch by hand: `splitbrain_algorithms::hosted`).
pub type OwnLeaseProcess = HostedProcess<LeaseMsg, LeaseTimer>;

/// The processes of a run: `members` members, then the server.
pub fn processes(members: usize, config: &OwnLeaseConfig) -> Vec<OwnLeaseProcess> {
    let members_then_server =
        (0..members).map(|i| host(Member::new(NodeId::from(i), members, config)));
    members_then_server
        .chain(std::iter::once(host(LockServer::new(config))))
        .collect()
}
