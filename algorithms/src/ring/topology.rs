//! The logical ring: which member follows which, and the next live successor when some are
//! skipped. Built once per run, before any node starts, and shared by every node, so that
//! all agree on the order (a random order is drawn from the run's set-up stream).

use super::config::RingOrder;
use splitbrain_sim::{NodeId, SimRng, StreamId};

/// The members in ring order; messages travel from each to the next, the last to the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingTopology {
    order: Vec<NodeId>,
    /// `position[id]`: where member `id` sits in `order`.
    position: Vec<usize>,
}

impl RingTopology {
    /// The ring of `members` in the given order. `Random` draws a uniform permutation
    /// (Fisher-Yates) from the `SETUP` stream of `seed`, once.
    pub fn new(order: RingOrder, members: usize, seed: u64) -> Self {
        let ids = (0..members).map(NodeId::from);
        let order = match order {
            RingOrder::Ascending => ids.collect(),
            RingOrder::Descending => ids.rev().collect(),
            RingOrder::Random => {
                let mut rng = SimRng::stream(seed, StreamId::SETUP);
                let mut shuffled: Vec<NodeId> = ids.collect();
                for i in (1..shuffled.len()).rev() {
                    let j = rng.index(i + 1);
                    shuffled.swap(i, j);
                }
                shuffled
            }
        };
        Self::from_order(order)
    }

    /// The ring with exactly this order, which must be a permutation of `0..order.len()`.
    pub fn from_order(order: Vec<NodeId>) -> Self {
        assert!(!order.is_empty(), "a ring has at least one member");
        let mut position = vec![usize::MAX; order.len()];
        for (at, id) in order.iter().enumerate() {
            assert!(id.index() < order.len(), "{id} is not a member");
            assert_eq!(
                position[id.index()],
                usize::MAX,
                "{id} is on the ring twice"
            );
            position[id.index()] = at;
        }
        Self { order, position }
    }

    /// The members in ring order.
    pub fn order(&self) -> &[NodeId] {
        &self.order
    }

    /// The number of members on the ring.
    pub fn members(&self) -> usize {
        self.order.len()
    }

    /// Where `id` sits on the ring (0 is the first node).
    pub fn position(&self, id: NodeId) -> usize {
        self.position[id.index()]
    }

    /// The node after `id` on the ring.
    pub fn successor(&self, id: NodeId) -> NodeId {
        self.order[(self.position(id) + 1) % self.order.len()]
    }

    /// Hops from `from` to `to` in the direction messages travel (0 when they are the same).
    pub fn distance(&self, from: NodeId, to: NodeId) -> usize {
        let n = self.order.len();
        (self.position(to) + n - self.position(from)) % n
    }

    /// The first node after `from` on the ring that `skipped` does not exclude, `from` itself
    /// never included; `None` when every other node is skipped.
    pub fn next_live(&self, from: NodeId, skipped: impl Fn(NodeId) -> bool) -> Option<NodeId> {
        let n = self.order.len();
        let start = self.position(from);
        (1..n)
            .map(|hop| self.order[(start + hop) % n])
            .find(|candidate| !skipped(*candidate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ids(raw: &[u32]) -> Vec<NodeId> {
        raw.iter().map(|i| NodeId(*i)).collect()
    }

    #[test]
    fn ascending_and_descending_rings_follow_the_ids() {
        let up = RingTopology::new(RingOrder::Ascending, 4, 0);
        assert_eq!(up.order(), ids(&[0, 1, 2, 3]).as_slice());
        assert_eq!(up.successor(NodeId(3)), NodeId(0));
        let down = RingTopology::new(RingOrder::Descending, 4, 0);
        assert_eq!(down.order(), ids(&[3, 2, 1, 0]).as_slice());
        assert_eq!(down.successor(NodeId(0)), NodeId(3));
        assert_eq!(down.distance(NodeId(3), NodeId(0)), 3);
    }

    #[test]
    fn a_random_ring_is_a_permutation_fixed_by_the_seed() {
        let a = RingTopology::new(RingOrder::Random, 50, 7);
        let b = RingTopology::new(RingOrder::Random, 50, 7);
        let c = RingTopology::new(RingOrder::Random, 50, 8);
        assert_eq!(a, b);
        assert_ne!(a.order(), c.order());
        let mut sorted = a.order().to_vec();
        sorted.sort();
        assert_eq!(sorted, (0..50).map(NodeId::from).collect::<Vec<_>>());
        assert_ne!(
            a.order(),
            RingTopology::new(RingOrder::Ascending, 50, 7).order()
        );
    }

    #[test]
    fn every_position_is_drawn_for_every_id_over_many_seeds() {
        // A biased shuffle (the classic off-by-one) would never put some id first.
        let mut seen = [[false; 5]; 5];
        for seed in 0..500 {
            let ring = RingTopology::new(RingOrder::Random, 5, seed);
            for (at, id) in ring.order().iter().enumerate() {
                seen[id.index()][at] = true;
            }
        }
        assert!(seen.iter().flatten().all(|s| *s));
    }

    #[test]
    fn a_lone_node_has_no_live_successor() {
        let ring = RingTopology::new(RingOrder::Ascending, 1, 0);
        assert_eq!(ring.successor(NodeId(0)), NodeId(0));
        assert_eq!(ring.next_live(NodeId(0), |_| false), None);
    }

    /// The dumb oracle: walk the order by linear search, one step at a time.
    fn naive_next_live(order: &[NodeId], from: NodeId, skipped: &[bool]) -> Option<NodeId> {
        let mut at = order.iter().position(|id| *id == from).expect("member");
        for _ in 0..order.len() - 1 {
            at = if at + 1 == order.len() { 0 } else { at + 1 };
            if !skipped[order[at].index()] {
                return Some(order[at]);
            }
        }
        None
    }

    fn naive_distance(order: &[NodeId], from: NodeId, to: NodeId) -> usize {
        let mut at = order.iter().position(|id| *id == from).expect("member");
        let mut hops = 0;
        while order[at] != to {
            at = (at + 1) % order.len();
            hops += 1;
        }
        hops
    }

    proptest! {
        #[test]
        fn successor_distance_and_skipping_agree_with_a_naive_walk(
            members in 1usize..12,
            seed in any::<u64>(),
            skip_bits in any::<u16>(),
        ) {
            let ring = RingTopology::new(RingOrder::Random, members, seed);
            let order = ring.order().to_vec();
            let skipped: Vec<bool> = (0..members).map(|i| skip_bits & (1 << i) != 0).collect();
            for from in (0..members).map(NodeId::from) {
                prop_assert_eq!(
                    ring.next_live(from, |id| skipped[id.index()]),
                    naive_next_live(&order, from, &skipped)
                );
                let nobody_skipped = vec![false; members];
                let next = naive_next_live(&order, from, &nobody_skipped).unwrap_or(from);
                prop_assert_eq!(ring.successor(from), next);
                for to in (0..members).map(NodeId::from) {
                    prop_assert_eq!(ring.distance(from, to), naive_distance(&order, from, to));
                }
            }
        }
    }
}
