//! Count-based lease rebalancing on a [`Step`], as CockroachDB's replicate queue (the lease
//! queue in newer versions) does it when no load statistics decide (`docs/algorithms/multi-raft.md` cites each rule):
//! - the replica scanner visits the store's replicas one at a time, what is left of the
//!   scan interval (10 min) spread over them, at least 10 ms and at most 1 s apart
//!   (`pkg/kv/kvserver/scanner.go`, `replicaScanner.paceInterval`);
//! - at a range it holds the lease of and leads, a store transfers the lease if it holds
//!   more than `max(mean * 1.05, mean + 5)` leases, or more than the mean while a replica
//!   of the range sits on a store with fewer than `min(mean * 0.95, mean - 5)`
//!   (`allocatorimpl.Allocator.shouldTransferLeaseForLeaseCountConvergence`), the mean
//!   taken over the live stores;
//! - the target is drawn among the range's other replicas on stores with fewer than
//!   `mean - 0.5` leases that the leader heard from lately; none, no transfer
//!   (`Allocator.TransferLeaseTarget`, `LeaseCountConvergence`);
//! - a store starts at most one such transfer per `kv.allocator.min_lease_transfer_interval`
//!   (1 s), and counts the moved lease at once in its own view of the counts
//!   (`StorePool.UpdateLocalStoresAfterLeaseTransfer`).
//!
//! The counts are gossiped on the coalesced heartbeats, each store relaying every count it
//! knows with its version (CockroachDB gossips them in its store descriptors), so every
//! store learns every store's count within a few rounds; a store whose count has not moved
//! to a newer version within an election timeout is not live to the allocator.

use super::replica::Replica;
use super::store::Step;
use splitbrain_sim::{LocalNanos, NodeId};

/// `allocatorimpl.LeaseRebalanceThreshold`: the fraction of the mean a store may be above
/// (or below) it before it counts as overfull (underfull).
const LEASE_REBALANCE_THRESHOLD: f64 = 0.05;
/// `allocatorimpl.LeaseRebalanceThresholdMin`: the same, as a number of leases; the wider of
/// the two applies.
const LEASE_REBALANCE_THRESHOLD_MIN: f64 = 5.0;

/// The allocator's view of the live stores' lease counts.
struct LeaseCounts {
    /// By store: its lease count (`None`: not live to the allocator).
    counts: Vec<Option<u32>>,
    /// The mean over the live stores.
    mean: f64,
}

impl LeaseCounts {
    fn of(&self, store: NodeId) -> Option<u32> {
        self.counts.get(store.index()).copied().flatten()
    }

    /// `shouldTransferLeaseForLeaseCountConvergence`: whether a store holding `own`
    /// leases should move one of `range_stores`' range away.
    fn should_transfer(&self, own: u32, range_stores: &[NodeId]) -> bool {
        let mean = self.mean;
        let overfull = (mean * (1.0 + LEASE_REBALANCE_THRESHOLD))
            .ceil()
            .max((mean + LEASE_REBALANCE_THRESHOLD_MIN).ceil());
        if f64::from(own) > overfull {
            return true;
        }
        if f64::from(own) <= mean {
            return false;
        }
        let underfull = (mean * (1.0 - LEASE_REBALANCE_THRESHOLD))
            .ceil()
            .min((mean - LEASE_REBALANCE_THRESHOLD_MIN).ceil());
        (range_stores.iter())
            .filter_map(|&store| self.of(store))
            .any(|count| f64::from(count) < underfull)
    }

    /// The range's other replicas' stores that may take the lease: below the mean by more
    /// than half a lease.
    fn candidates(&self, me: NodeId, range_stores: &[NodeId]) -> Vec<NodeId> {
        (range_stores.iter().copied())
            .filter(|&store| store != me)
            .filter(|&store| {
                self.of(store)
                    .is_some_and(|c| f64::from(c) < self.mean - 0.5)
            })
            .collect()
    }
}

impl Step<'_, '_, '_> {
    /// The scanner's visit to its next replica: a lease it holds may move.
    pub(crate) fn scan_next(&mut self, replicas: &mut [Replica]) {
        if replicas.is_empty() {
            return;
        }
        let cursor = self.volatile.scan_cursor % replicas.len();
        self.volatile.scan_cursor = cursor + 1;
        if self.volatile.scan_cursor == replicas.len() {
            // The cycle is over: the next one starts now.
            self.volatile.scan_cursor = 0;
            self.volatile.scan_started_mono_ns = self.ctx.monotonic_now();
        }
        self.maybe_rebalance_lease(&mut replicas[cursor]);
    }

    /// At a range whose lease it holds and that it leads, with nothing under way: moves the
    /// lease to a store with fewer, if the counts call for it and the rate limit allows.
    fn maybe_rebalance_lease(&mut self, r: &mut Replica) {
        if !r.leads() || r.held.is_none() || r.pending.is_some() {
            return;
        }
        let now = self.ctx.monotonic_now();
        let interval = self.config.min_lease_transfer_interval_ns as LocalNanos;
        let last = self.volatile.last_transfer_mono_ns;
        if last.is_some_and(|at| now.saturating_sub(at) < interval) {
            return;
        }
        let counts = self.lease_counts(now);
        let own = self.volatile.leases_held;
        let range_stores: Vec<NodeId> =
            super::placement::replicas(r.range, self.stores, self.config.replication).collect();
        if !counts.should_transfer(own, &range_stores) {
            return;
        }
        // Only a replica the leader heard from in the current CheckQuorum window (etcd
        // raft's `Progress.RecentActive`): CockroachDB's leaseholder leaves out replicas
        // its Raft progress shows behind or unreachable (`Allocator.ValidLeaseTargets`).
        let mut candidates = counts.candidates(self.me, &range_stores);
        candidates.retain(|&store| r.heard & self.bit(store, r.range) != 0);
        if candidates.is_empty() {
            return;
        }
        let target = candidates[self.ctx.rng().index(candidates.len())];
        self.volatile.last_transfer_mono_ns = Some(now);
        // The store's own view counts the move at once.
        self.volatile.leases_held = own.saturating_sub(1);
        if let Some((count, _)) = self.volatile.lease_counts[target.index()].as_mut() {
            count.leases += 1;
        }
        self.transfer_lease(r, target);
    }

    /// The lease counts of the stores whose count came in a newer version within the longest
    /// election timeout, this one included, and their mean.
    fn lease_counts(&self, now: LocalNanos) -> LeaseCounts {
        let fresh_ns = self.config.election_timeout_max_ns() as LocalNanos;
        let mut counts: Vec<Option<u32>> = (self.volatile.lease_counts.iter())
            .map(|heard| {
                heard
                    .filter(|&(_, at)| now.saturating_sub(at) <= fresh_ns)
                    .map(|(count, _)| count.leases)
            })
            .collect();
        counts[self.me.index()] = Some(self.volatile.leases_held);
        let live: Vec<u32> = counts.iter().flatten().copied().collect();
        let mean = f64::from(live.iter().sum::<u32>()) / live.len() as f64;
        LeaseCounts { counts, mean }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(counts: &[u32]) -> LeaseCounts {
        let mean = f64::from(counts.iter().sum::<u32>()) / counts.len() as f64;
        LeaseCounts {
            counts: counts.iter().map(|&c| Some(c)).collect(),
            mean,
        }
    }

    fn stores(ids: &[usize]) -> Vec<NodeId> {
        ids.iter().map(|&i| NodeId::from(i)).collect()
    }

    #[test]
    fn an_overfull_store_transfers_and_a_store_within_the_band_keeps_its_leases() {
        // Mean 100: overfull above max(105, 105), underfull below min(95, 95).
        let view = counts(&[106, 100, 100, 97, 97, 100, 100]);
        assert!(view.should_transfer(106, &stores(&[0, 1, 2])));
        let view = counts(&[104, 100, 100, 96, 100, 100, 100]);
        assert!(
            !view.should_transfer(104, &stores(&[0, 3, 4])),
            "above the mean, but no replica's store is underfull"
        );
        let view = counts(&[104, 100, 100, 92, 100, 100, 104]);
        assert!(view.should_transfer(104, &stores(&[0, 3, 4])));
        assert!(
            !view.should_transfer(104, &stores(&[0, 1, 2])),
            "the underfull store holds no replica of this range"
        );
    }

    #[test]
    fn the_absolute_threshold_keeps_small_clusters_from_thrashing() {
        // Mean 9.7: 5% is half a lease, so the 5-lease band applies: overfull above 15,
        // underfull below 5.
        let view = counts(&[15, 10, 4]);
        assert!(!view.should_transfer(15, &stores(&[0, 1])));
        assert!(view.should_transfer(16, &stores(&[0, 1])));
        assert!(
            view.should_transfer(15, &stores(&[0, 2])),
            "store 2 holds 4"
        );
    }

    #[test]
    fn only_stores_below_the_mean_take_a_lease() {
        let view = counts(&[120, 99, 100, 81]);
        assert_eq!(
            view.candidates(NodeId(0), &stores(&[0, 1, 2])),
            stores(&[1])
        );
        assert_eq!(
            view.candidates(NodeId(0), &stores(&[0, 2, 3])),
            stores(&[3])
        );
        let unknown = LeaseCounts {
            counts: vec![Some(120), None, Some(80)],
            mean: 100.0,
        };
        assert_eq!(
            unknown.candidates(NodeId(0), &stores(&[0, 1, 2])),
            stores(&[2]),
            "a store not heard from is not a target"
        );
    }
}
