//! Where each range's replicas live: a deterministic allocator that spreads them evenly.
//!
//! Range `r` of a cluster of `n` stores is placed on the stores `r mod n`, `r + 1 mod n`,
//! ..., `r + replication - 1 mod n`. Every `n` consecutive ranges put exactly `replication`
//! replicas on each store, so a store holds `R * replication / n` replicas, give or take
//! `replication`; and a range's first replica (its preferred leader at the start) walks
//! round the stores, so leaders start spread too. CockroachDB's allocator balances by
//! replica count and load (`pkg/kv/kvserver/allocator`); this rule reaches the same balance
//! for ranges of equal size with none of its moves.

use splitbrain_sim::NodeId;

/// The stores holding range `range`, in placement order.
pub fn replicas(range: u64, stores: usize, replication: u64) -> impl Iterator<Item = NodeId> {
    let stores = stores as u64;
    (0..replication).map(move |k| NodeId::from(((range + k) % stores) as usize))
}

/// Whether store `store` holds a replica of `range`.
pub fn holds(store: NodeId, range: u64, stores: usize, replication: u64) -> bool {
    let stores = stores as u64;
    let offset = (store.index() as u64 + stores - range % stores) % stores;
    offset < replication
}

/// The ranges store `store` holds, in increasing order.
pub fn ranges_of(store: NodeId, stores: usize, ranges: u64, replication: u64) -> Vec<u64> {
    (0..ranges)
        .filter(|&range| holds(store, range, stores, replication))
        .collect()
}

/// Where a store finds its replica of a range among the ranges it holds (in increasing
/// order, as [`ranges_of`] lists them), in O(1) and O(stores) memory: each block of `stores`
/// consecutive ranges puts `replication` replicas on every store, at the same offsets in
/// every block.
#[derive(Clone, Debug)]
pub struct SlotIndex {
    stores: u64,
    replication: u64,
    /// Per offset within a block: the rank of that range among the store's ranges of the
    /// block, or `u8::MAX` if the store holds no replica at that offset.
    rank: Vec<u8>,
}

impl SlotIndex {
    /// The index of store `store` in a cluster of `stores`.
    pub fn new(store: NodeId, stores: usize, replication: u64) -> Self {
        let mut rank = vec![u8::MAX; stores];
        let held = (0..stores as u64).filter(|&j| holds(store, j, stores, replication));
        for (r, j) in held.enumerate() {
            rank[j as usize] = u8::try_from(r).expect("a replication factor fits a byte");
        }
        Self {
            stores: stores as u64,
            replication,
            rank,
        }
    }

    /// The position of `range` in the store's ranges, if the store holds it.
    pub fn slot(&self, range: u64) -> Option<usize> {
        let rank = self.rank[(range % self.stores) as usize];
        (rank != u8::MAX)
            .then(|| ((range / self.stores) * self.replication) as usize + rank as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_range_has_its_replicas_on_distinct_stores() {
        for range in 0..50 {
            let mut stores: Vec<NodeId> = replicas(range, 7, 3).collect();
            stores.dedup();
            stores.sort();
            stores.dedup();
            assert_eq!(stores.len(), 3, "range {range}");
        }
    }

    #[test]
    fn holds_agrees_with_the_placement_of_every_range() {
        for stores in [3, 5, 7] {
            for range in 0..40 {
                let placed: Vec<NodeId> = replicas(range, stores, 3).collect();
                for store in (0..stores).map(NodeId::from) {
                    assert_eq!(holds(store, range, stores, 3), placed.contains(&store));
                }
            }
        }
    }

    #[test]
    fn the_slot_index_agrees_with_a_search_of_the_store_s_ranges() {
        for (stores, ranges, replication) in [(7, 700, 3), (7, 45, 5), (5, 33, 3), (3, 10, 1)] {
            for store in (0..stores).map(NodeId::from) {
                let held = ranges_of(store, stores, ranges, replication);
                let index = SlotIndex::new(store, stores, replication);
                for range in 0..ranges {
                    assert_eq!(
                        index.slot(range),
                        held.binary_search(&range).ok(),
                        "{range}"
                    );
                }
            }
        }
    }

    #[test]
    fn each_store_holds_its_even_share_of_the_replicas_within_the_replication_factor() {
        for (stores, ranges, replication) in [(7, 700, 3), (7, 1000, 5), (5, 33, 3)] {
            let share = ranges * replication / stores as u64;
            for store in (0..stores).map(NodeId::from) {
                let held = ranges_of(store, stores, ranges, replication).len() as u64;
                assert!(
                    held.abs_diff(share) <= replication,
                    "{store}: {held} of {share}"
                );
            }
        }
    }
}
