//! The corpus of guided search: the schedules kept for reaching a feature no run reached
//! before, and how often every feature was reached. A feature is a log-2 bucket of a rare
//! built-in coverage counter, a pair of them reached together, or one of the user's own
//! observations ([`ObservedFeature`]: a name's count, a class of its values).

use super::{GuidedRun, PICK_STREAM};
use crate::hunt::observed::ObservedFeature;
use crate::hunt::record::Coverage;
use splitbrain_sim::{FaultSpec, SimRng};
use std::collections::BTreeMap;

/// The most entries the corpus keeps; past it the entry of least weight goes.
pub const CORPUS_MAX: usize = 256;

/// The most features of the user's observations the corpus tells apart over a hunt; those
/// first reached later are not counted (nor kept for).
pub const OBSERVED_FEATURES_MAX: usize = 4096;

/// The rare situations that guide the search: the coverage counters that are neither
/// routine (leader changes, failovers, faults) nor failures. Newer leaders locked out is
/// not one: each lock-out breaks `fencing_safety`, so a run that reaches it fails and is never
/// kept (unless the scenario expects `Violates([fencing_safety])`, which no nemesis scenario
/// does; such a hunt does not breed from lock-outs).
const RARE_KINDS: usize = 5;

/// Log-2 buckets of one counter's value (1, 2-3, 4-7, ...), the last one open.
pub(super) const BUCKETS: u32 = 16;

/// Feature ids: one per (rare counter, bucket), then one per pair of rare counters reached
/// together in one run.
pub(super) const PAIR_BASE: u32 = RARE_KINDS as u32 * BUCKETS;

/// How many built-in feature ids there are; the user's observations take the ids after.
const BUILT_IN: usize = PAIR_BASE as usize + RARE_KINDS * (RARE_KINDS - 1) / 2;

// Every built-in feature is one bit of a `u128`.
const _: () = assert!(BUILT_IN <= 128);

fn rare_counters(c: &Coverage) -> [u64; RARE_KINDS] {
    [
        c.split_votes,
        c.dueling_candidates,
        c.stale_leader_writes,
        c.minority_elections,
        c.leases_expired_while_leading,
    ]
}

/// The built-in features of a run's coverage: bit `f` set when it reached feature `f`.
pub(super) fn features_of(c: &Coverage) -> u128 {
    let counters = rare_counters(c);
    let mut features: u128 = 0;
    let mut pair = PAIR_BASE;
    for (k, value) in counters.iter().enumerate() {
        if *value > 0 {
            let bucket = (u64::BITS - value.leading_zeros() - 1).min(BUCKETS - 1);
            features |= 1 << (k as u32 * BUCKETS + bucket);
        }
        for other in &counters[k + 1..] {
            if *value > 0 && *other > 0 {
                features |= 1 << pair;
            }
            pair += 1;
        }
    }
    features
}

/// Why a run was kept: the features it reached first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// Built-in features (of the coverage counters) it reached first.
    pub counters: u32,
    /// Features of the user's observations it reached first.
    pub observations: Vec<ObservedFeature>,
}

/// A schedule kept for reaching something rare.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) seed: u64,
    pub(super) faults: Vec<FaultSpec>,
    /// Feature ids, ascending.
    pub(super) features: Vec<u32>,
}

/// The corpus: kept schedules, and how often every feature was reached over all runs.
#[derive(Clone, Debug)]
pub struct Corpus {
    entries: Vec<Entry>,
    /// Runs that reached each feature, by id.
    hits: Vec<u64>,
    /// The ids of the user's observation features, given in the order first reached.
    observed: BTreeMap<ObservedFeature, u32>,
}

impl Default for Corpus {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            hits: vec![0; BUILT_IN],
            observed: BTreeMap::new(),
        }
    }
}

impl Corpus {
    /// How many schedules it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Counts a run's features; keeps its schedule if it reached a feature no run had
    /// reached before and did not fail (a failure is reported, not bred from), and says why.
    pub(super) fn observe(&mut self, run: &GuidedRun) -> Option<Kept> {
        let ids = self.ids_of(run);
        let new: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&id| self.hits[id as usize] == 0)
            .collect();
        ids.iter().for_each(|&id| self.hits[id as usize] += 1);
        if new.is_empty() || run.record.failed() {
            return None;
        }
        if self.entries.len() >= CORPUS_MAX {
            let weakest = (0..self.entries.len())
                .min_by_key(|&i| self.weight(&self.entries[i]))
                .expect("a full corpus has entries");
            self.entries.remove(weakest);
        }
        self.entries.push(Entry {
            seed: run.record.seed,
            faults: run.faults.clone(),
            features: ids,
        });
        Some(self.why(&new, &run.observed))
    }

    /// The ids of a run's features, ascending: the built-in ones, then its observations'
    /// (those new to the hunt given the next ids, while there is room).
    fn ids_of(&mut self, run: &GuidedRun) -> Vec<u32> {
        let bits = features_of(&run.record.coverage);
        let mut ids: Vec<u32> = (0..BUILT_IN as u32)
            .filter(|f| bits >> f & 1 == 1)
            .collect();
        for feature in &run.observed {
            if let Some(id) = self.observed_id(*feature) {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        ids
    }

    fn observed_id(&mut self, feature: ObservedFeature) -> Option<u32> {
        if let Some(&id) = self.observed.get(&feature) {
            return Some(id);
        }
        if self.observed.len() >= OBSERVED_FEATURES_MAX {
            return None;
        }
        let id = self.hits.len() as u32;
        self.hits.push(0);
        self.observed.insert(feature, id);
        Some(id)
    }

    /// What the new ids `new` of a run that observed `observed` were.
    fn why(&self, new: &[u32], observed: &[ObservedFeature]) -> Kept {
        let counters = new.iter().filter(|&&id| (id as usize) < BUILT_IN).count() as u32;
        let is_new = |f: &&ObservedFeature| {
            self.observed
                .get(*f)
                .is_some_and(|id| new.binary_search(id).is_ok())
        };
        Kept {
            counters,
            observations: observed.iter().filter(is_new).copied().collect(),
        }
    }

    /// An entry's weight: the rarer its features (over every run so far), the heavier.
    fn weight(&self, entry: &Entry) -> u64 {
        let rarity = |&id: &u32| (1 << 20) / self.hits[id as usize].max(1);
        1 + entry.features.iter().map(rarity).sum::<u64>()
    }

    /// The entry mutant `index` mutates, drawn by weight from the mutant's own stream.
    pub(super) fn pick(&self, index: u64) -> &Entry {
        let weights: Vec<u64> = self.entries.iter().map(|e| self.weight(e)).collect();
        let mut ticket = SimRng::stream(index, PICK_STREAM).below(weights.iter().sum());
        for (entry, weight) in self.entries.iter().zip(&weights) {
            if ticket < *weight {
                return entry;
            }
            ticket -= weight;
        }
        unreachable!("the tickets add up to the total weight")
    }
}
