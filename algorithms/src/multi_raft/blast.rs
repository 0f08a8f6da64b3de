//! The blast radius of whatever strikes the stores, measured from the leases the stores
//! report (`lease_start`, `lease_end`) and the crashes the engine reports: how many ranges
//! lost their lease, for how long each, the range-seconds without one, how many at once, how
//! often leases moved, and how evenly the leases sit on the stores at the end. A property
//! that never breaks, only measures (`Property::measures`): `run`, `compare` and `sweep`
//! show the numbers.
//!
//! A range is *without a lease* from the moment its holder's lease ends (its stasis, a
//! crash) to the next lease start, by any store; its first lease is its birth, not a
//! recovery, so the initial elections count for nothing. A crash ends every lease of the
//! crashed store at once (no one can use them), though no other store may take them before
//! they expire. A lease kept by a store that is cut off or paused counts as held: what a
//! lease holder must reach to serve is not modeled here (docs/algorithms/multi-raft.md).
//! The cost of an observation does not grow with the number of ranges; a crash costs the
//! leases of the crashed store.

use super::properties::{LEASE_END, LEASE_START};
use splitbrain_sim::property::{Breach, Measured, Observation, Property, Value};
use splitbrain_sim::{Nanos, NodeId, NANOS_PER_SEC};
use std::collections::BTreeSet;

/// The measures' names, in the order they are reported.
pub const MEASURES: [&str; 9] = [
    "ranges_lost",
    "never_leased",
    "peak_without_lease",
    "outage_p50_s",
    "outage_p99_s",
    "outage_max_s",
    "unavailable_range_s",
    "lease_moves",
    "lease_balance_max_over_mean",
];

/// One range, as the leases reported it.
#[derive(Clone, Debug, Default)]
struct Range {
    /// The store holding its lease now.
    holder: Option<NodeId>,
    /// The store that held it last (for moves).
    last_holder: Option<NodeId>,
    /// Without a lease since (after its first lease).
    lost_since: Option<Nanos>,
    /// Its longest stretch without a lease so far.
    longest_ns: Nanos,
    /// Every stretch without a lease, summed.
    total_ns: Nanos,
    /// Whether it ever lost its lease.
    lost: bool,
}

/// The blast-radius measures of one run over `ranges` ranges.
#[derive(Debug)]
pub struct BlastRadius {
    ranges: Vec<Range>,
    /// Per store: the ranges whose lease it holds.
    held: Vec<BTreeSet<u64>>,
    /// Ranges without a lease now, after their first.
    without_now: usize,
    peak_without: usize,
    moves: u64,
}

impl BlastRadius {
    /// A run of `ranges` ranges, none leased yet.
    pub fn new(ranges: usize) -> Self {
        Self {
            ranges: vec![Range::default(); ranges],
            held: Vec::new(),
            without_now: 0,
            peak_without: 0,
            moves: 0,
        }
    }

    fn held_by(&mut self, node: NodeId) -> &mut BTreeSet<u64> {
        if self.held.len() <= node.index() {
            self.held.resize(node.index() + 1, BTreeSet::new());
        }
        &mut self.held[node.index()]
    }

    fn start(&mut self, now_ns: Nanos, node: NodeId, range: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        let previous = r.holder.replace(node);
        if r.last_holder.is_some_and(|last| last != node) {
            self.moves += 1;
        }
        r.last_holder = Some(node);
        if let Some(since) = r.lost_since.take() {
            let gap = now_ns.saturating_sub(since);
            r.longest_ns = r.longest_ns.max(gap);
            r.total_ns += gap;
            self.without_now -= 1;
        }
        if let Some(previous) = previous.filter(|&p| p != node) {
            self.held_by(previous).remove(&range);
        }
        self.held_by(node).insert(range);
    }

    fn end(&mut self, now_ns: Nanos, node: NodeId, range: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        if r.holder != Some(node) {
            return;
        }
        r.holder = None;
        r.lost_since = Some(now_ns);
        r.lost = true;
        self.without_now += 1;
        self.peak_without = self.peak_without.max(self.without_now);
        self.held_by(node).remove(&range);
    }

    fn crash(&mut self, now_ns: Nanos, node: NodeId) {
        let ranges = std::mem::take(self.held_by(node));
        for range in ranges {
            self.end(now_ns, node, range);
        }
    }

    /// Each lost range's longest stretch without a lease, to `end_ns` for one still without.
    fn outages_ns(&self, end_ns: Nanos) -> Vec<Nanos> {
        let mut outages: Vec<Nanos> = self
            .ranges
            .iter()
            .filter(|r| r.lost)
            .map(|r| {
                let open = r.lost_since.map_or(0, |since| end_ns.saturating_sub(since));
                r.longest_ns.max(open)
            })
            .collect();
        outages.sort_unstable();
        outages
    }

    fn unavailable_ns(&self, end_ns: Nanos) -> Nanos {
        let open = |r: &Range| r.lost_since.map_or(0, |since| end_ns.saturating_sub(since));
        self.ranges.iter().map(|r| r.total_ns + open(r)).sum()
    }

    /// The most leases on one store over the mean per store (1: even), NaN with no lease.
    fn balance(&self, stores: usize) -> f64 {
        let held: Vec<usize> = self.held.iter().map(BTreeSet::len).collect();
        let total: usize = held.iter().sum();
        if total == 0 || stores == 0 {
            return f64::NAN;
        }
        let max = held.iter().copied().max().unwrap_or(0);
        let stores = stores.max(1);
        max as f64 / (total as f64 / stores as f64)
    }
}

impl Property for BlastRadius {
    fn name(&self) -> &'static str {
        "blast_radius"
    }

    fn check(&mut self, now_ns: Nanos, observation: &Observation) -> Result<(), Breach> {
        // Every store shows up (its terms after each handler): the balance's denominator.
        self.held_by(observation.node());
        match *observation {
            Observation::User {
                node,
                name,
                value: Value::Pair(range, _),
            } if name == LEASE_START => self.start(now_ns, node, range),
            Observation::User {
                node,
                name,
                value: Value::Pair(range, _),
            } if name == LEASE_END => self.end(now_ns, node, range),
            Observation::Crash { node } => self.crash(now_ns, node),
            _ => {}
        }
        Ok(())
    }

    fn measures(&self, end_ns: Nanos) -> Vec<Measured> {
        let seconds = |ns: Nanos| ns as f64 / NANOS_PER_SEC as f64;
        let outages = self.outages_ns(end_ns);
        let quantile = |permille: usize| match outages.len() {
            0 => f64::NAN,
            n => seconds(outages[(n * permille).div_ceil(1000).clamp(1, n) - 1]),
        };
        let never = self
            .ranges
            .iter()
            .filter(|r| r.last_holder.is_none())
            .count();
        let values = [
            outages.len() as f64,
            never as f64,
            self.peak_without as f64,
            quantile(500),
            quantile(990),
            quantile(1000),
            seconds(self.unavailable_ns(end_ns)),
            self.moves as f64,
            self.balance(self.held.len()),
        ];
        MEASURES
            .iter()
            .zip(values)
            .map(|(&name, value)| Measured::new(name, value))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = NANOS_PER_SEC;

    fn lease(name: &'static str, node: usize, range: u64) -> Observation {
        Observation::User {
            node: NodeId::from(node),
            name,
            value: Value::Pair(range, 1),
        }
    }

    fn measured(blast: &BlastRadius, end_ns: Nanos) -> Vec<(&'static str, f64)> {
        blast
            .measures(end_ns)
            .into_iter()
            .map(|m| (m.name, m.value))
            .collect()
    }

    #[test]
    fn a_crash_loses_the_leases_of_its_store_until_others_take_them() {
        let mut blast = BlastRadius::new(4);
        for range in 0..4 {
            let node = range as usize % 2;
            blast.check(0, &lease(LEASE_START, node, range)).unwrap();
        }
        // Store 0 (ranges 0 and 2) crashes at 10 s; store 1 takes range 0 at 13 s and range
        // 2 at 16 s; range 3's lease lapses at 20 s and is back on store 1 at 21 s.
        blast
            .check(
                10 * S,
                &Observation::Crash {
                    node: NodeId::from(0usize),
                },
            )
            .unwrap();
        blast.check(13 * S, &lease(LEASE_START, 1, 0)).unwrap();
        blast.check(16 * S, &lease(LEASE_START, 1, 2)).unwrap();
        blast.check(20 * S, &lease(LEASE_END, 1, 3)).unwrap();
        blast.check(21 * S, &lease(LEASE_START, 1, 3)).unwrap();
        let m = measured(&blast, 30 * S);
        let get = |name: &str| m.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_eq!(get("ranges_lost"), 3.0);
        assert_eq!(get("never_leased"), 0.0);
        assert_eq!(get("peak_without_lease"), 2.0);
        assert_eq!((get("outage_p50_s"), get("outage_max_s")), (3.0, 6.0));
        assert_eq!(get("unavailable_range_s"), 10.0);
        assert_eq!(
            get("lease_moves"),
            2.0,
            "ranges 0 and 2 moved; range 3 came back"
        );
        assert_eq!(
            get("lease_balance_max_over_mean"),
            2.0,
            "all 4 on one of 2 stores"
        );
    }

    #[test]
    fn an_outage_still_open_lasts_to_the_end_and_first_leases_are_no_outage() {
        let mut blast = BlastRadius::new(3);
        blast.check(S, &lease(LEASE_START, 0, 0)).unwrap();
        blast.check(2 * S, &lease(LEASE_END, 0, 0)).unwrap();
        // A lease end from a store that does not hold the range changes nothing.
        blast.check(3 * S, &lease(LEASE_END, 1, 1)).unwrap();
        let m = measured(&blast, 10 * S);
        let get = |name: &str| m.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_eq!((get("ranges_lost"), get("never_leased")), (1.0, 2.0));
        assert_eq!(
            (get("outage_max_s"), get("unavailable_range_s")),
            (8.0, 8.0)
        );
        assert!(
            get("lease_balance_max_over_mean").is_nan(),
            "no lease held at the end"
        );
    }
}
