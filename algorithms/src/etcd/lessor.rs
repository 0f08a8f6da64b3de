//! etcd's lessor (`lease/lessor.go`, docs/service-clusters.md section 1), the one place a
//! lease's expiry is counted: every member of a cluster applies grants and revokes, but only
//! the *primary* (the leader's lessor, from its `Promote` to its `Demote`) counts lease
//! expiries, renews, and sweeps; on the others every lease lives "forever". The one-process
//! service is a member that is primary from its start ([`Lessor::primary`]).

use crate::etcd::config::after;
use splitbrain_sim::LocalNanos;
use std::collections::BTreeMap;

/// The sweep's batch: at most this many leases offered for revocation a pass
/// (`leaseRevokeRate / 2`, `revokeExpiredLeases`).
pub(crate) const SWEEP_LIMIT: usize = 500;

/// The lessor's own state on one member (volatile: a restarted member is not primary).
#[derive(Clone, Debug, Default)]
pub(crate) struct Lessor {
    /// Between `Promote` and `Demote`.
    pub(crate) primary: bool,
    /// Primary only: each lease's expiry on this member's monotonic clock.
    expiries: BTreeMap<u64, LocalNanos>,
    /// How many leases expire at each time: the earliest without a scan of every lease
    /// (10,000 clients made each request of the one-process service cost 10,000 steps).
    deadlines: BTreeMap<LocalNanos, u32>,
    /// Leases the sweep has offered for revocation: not offered again before this time
    /// (`expiredLeaseRetryInterval`, 7 s: `expireExists` re-queues the lease).
    offered: BTreeMap<u64, LocalNanos>,
}

/// `Renew`'s answer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Renewal {
    /// Renewed for this TTL; 0 when the lease is unknown or already expired.
    Ttl(u64),
    /// `ErrNotPrimary`: the caller forwards to the leader or fails.
    NotPrimary,
}

impl Lessor {
    /// A lessor primary from the start, with no lease: the one-process service's.
    pub(crate) fn primary() -> Self {
        Self {
            primary: true,
            ..Self::default()
        }
    }

    /// `Promote(extend)`: every lease gets its full TTL plus `extend` from `now`
    /// (`refresh(extend)`: `time.Now().Add(extend + RemainingTTL)`; no checkpoints, the
    /// default everywhere, so the remaining TTL is the full TTL).
    pub(crate) fn promote(
        &mut self,
        now: LocalNanos,
        extend_ns: u64,
        leases: impl Iterator<Item = (u64, u64)>,
    ) {
        self.primary = true;
        self.offered.clear();
        self.expiries = leases
            .map(|(lease, ttl_ns)| (lease, after(now, extend_ns.saturating_add(ttl_ns))))
            .collect();
        self.deadlines.clear();
        for expiry in self.expiries.values() {
            *self.deadlines.entry(*expiry).or_default() += 1;
        }
    }

    /// `Demote`: every lease "forever", nothing to sweep.
    pub(crate) fn demote(&mut self) {
        *self = Self::default();
    }

    /// `Grant` applied: the primary starts the countdown (`refresh(0)`), the others none.
    pub(crate) fn granted(&mut self, lease: u64, ttl_ns: u64, now: LocalNanos) {
        if self.primary {
            self.set_expiry(lease, after(now, ttl_ns));
        }
    }

    /// `Revoke` applied.
    pub(crate) fn forget(&mut self, lease: u64) {
        if let Some(expiry) = self.expiries.remove(&lease) {
            self.forget_deadline(expiry);
        }
        self.offered.remove(&lease);
    }

    /// Whether `lease`'s expiry has come on a primary (expired, not yet revoked): the rule
    /// every renew and sweep applies.
    pub(crate) fn is_past(&self, lease: u64, now: LocalNanos) -> bool {
        self.primary
            && self
                .expiries
                .get(&lease)
                .is_some_and(|expiry| *expiry <= now)
    }

    /// `Renew`: not primary → `ErrNotPrimary`; unknown → 0; expired (not yet revoked) → 0
    /// (etcd waits for the revoke and then answers "not found": the model answers at once,
    /// which only makes the client give up earlier); else `refresh(0)`.
    pub(crate) fn renew(&mut self, lease: u64, ttl_ns: Option<u64>, now: LocalNanos) -> Renewal {
        if !self.primary {
            return Renewal::NotPrimary;
        }
        let Some(ttl_ns) = ttl_ns.filter(|_| self.expiries.contains_key(&lease)) else {
            return Renewal::Ttl(0);
        };
        if self.is_past(lease, now) {
            return Renewal::Ttl(0);
        }
        self.set_expiry(lease, after(now, ttl_ns));
        Renewal::Ttl(ttl_ns)
    }

    /// One pass of the sweep (`revokeExpiredLeases`, primary only): the expired leases not
    /// offered within the retry interval `retry_ns`, at most [`SWEEP_LIMIT`].
    pub(crate) fn expired(&mut self, now: LocalNanos, retry_ns: u64) -> Vec<u64> {
        if !self.primary {
            return Vec::new();
        }
        let due: Vec<u64> = self
            .expiries
            .keys()
            .filter(|lease| {
                self.is_past(**lease, now) && self.offered.get(lease).is_none_or(|at| *at <= now)
            })
            .copied()
            .take(SWEEP_LIMIT)
            .collect();
        for lease in &due {
            self.offered.insert(*lease, after(now, retry_ns));
        }
        due
    }

    /// A lease's expiry on this member, if primary and known (for tests and `inspect`).
    pub(crate) fn expiry(&self, lease: u64) -> Option<LocalNanos> {
        self.expiries.get(&lease).copied()
    }

    /// The earliest expiry of any lease, if primary.
    pub(crate) fn earliest(&self) -> Option<LocalNanos> {
        self.deadlines.keys().next().copied()
    }

    fn set_expiry(&mut self, lease: u64, expiry: LocalNanos) {
        if let Some(before) = self.expiries.insert(lease, expiry) {
            self.forget_deadline(before);
        }
        *self.deadlines.entry(expiry).or_default() += 1;
    }

    fn forget_deadline(&mut self, expiry: LocalNanos) {
        if let Some(count) = self.deadlines.get_mut(&expiry) {
            *count -= 1;
            if *count == 0 {
                self.deadlines.remove(&expiry);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_primary_counts_and_promote_gives_ttl_plus_extend_from_now() {
        let mut lessor = Lessor::default();
        lessor.granted(1, 10, 0);
        assert_eq!(lessor.renew(1, Some(10), 5), Renewal::NotPrimary);
        assert!(lessor.expired(100, 7).is_empty());
        lessor.promote(50, 1000, [(1, 10)].into_iter());
        assert_eq!(lessor.expiry(1), Some(1060));
        assert_eq!(lessor.renew(1, Some(10), 1059), Renewal::Ttl(10));
        assert_eq!(lessor.expiry(1), Some(1069));
        assert_eq!(lessor.expired(1069, 7), vec![1]);
        // Offered: not again until the retry interval has passed.
        assert!(lessor.expired(1070, 7).is_empty());
        assert_eq!(lessor.expired(1076, 7), vec![1]);
        assert_eq!(lessor.renew(1, Some(10), 1076), Renewal::Ttl(0));
        lessor.demote();
        assert_eq!(lessor.renew(1, Some(10), 1076), Renewal::NotPrimary);
        assert!(lessor.expired(5000, 7).is_empty());
    }
}
