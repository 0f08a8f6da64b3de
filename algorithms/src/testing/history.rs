//! Questions a test asks about what happened: election safety over every claim, and what
//! was sent, signalled or claimed since a bookmark in the history.

use super::{Cluster, Observed};
use splitbrain_sim::{Message, Process, Signal};
use std::collections::BTreeMap;

impl<P: Process> Cluster<P> {
    /// Election safety over the whole history: at most one claimant per term.
    pub(crate) fn assert_one_leader_per_term(&self) {
        for (term, claimants) in &self.claims {
            assert!(
                claimants.len() <= 1,
                "term {term} has leaders {claimants:?}"
            );
        }
    }

    /// A bookmark in the history, for the `*_since` queries.
    pub(crate) fn mark(&self) -> usize {
        self.history.len()
    }

    /// Observations of node `i` since the bookmark `mark`.
    pub(crate) fn observed_since(&self, i: usize, mark: usize) -> Vec<Observed<P::Msg>> {
        self.history[mark..]
            .iter()
            .filter(|(_, node, _)| *node == i)
            .map(|(_, _, o)| o.clone())
            .collect()
    }

    /// Messages sent by anyone since the bookmark `mark`, by kind name (kinds with none are
    /// absent).
    pub(crate) fn sent_since(&self, mark: usize) -> BTreeMap<&'static str, u64> {
        let mut counts = BTreeMap::new();
        for (_, _, observed) in &self.history[mark..] {
            if let Observed::Sent { msg, .. } = observed {
                *counts.entry(P::Msg::KINDS[msg.kind()]).or_default() += 1;
            }
        }
        counts
    }

    /// The messages node `from` sent since the bookmark `mark`, with their receivers.
    pub(crate) fn sent_by_since(&self, from: usize, mark: usize) -> Vec<(usize, P::Msg)> {
        self.history[mark..]
            .iter()
            .filter_map(|(_, node, o)| match o {
                Observed::Sent { to, msg } if *node == from => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    /// Signals of any node since the bookmark `mark` that match `wanted`.
    pub(crate) fn count_signals_since(
        &self,
        mark: usize,
        wanted: impl Fn(&Signal) -> bool,
    ) -> usize {
        self.history[mark..]
            .iter()
            .filter(|(_, _, o)| matches!(o, Observed::Signal(s) if wanted(s)))
            .count()
    }

    /// The claims `(time, node, term, token)` since the bookmark `mark`.
    pub(crate) fn claims_since(&self, mark: usize) -> Vec<(u64, usize, u64, u64)> {
        self.history[mark..]
            .iter()
            .filter_map(|(at, node, o)| match o {
                Observed::BecameLeader { term, token } => Some((*at, *node, *term, *token)),
                _ => None,
            })
            .collect()
    }
}

/// Counts of `kinds` in `counts`, zero where absent, in the order given.
pub(crate) fn counts_of(counts: &BTreeMap<&'static str, u64>, kinds: &[&str]) -> Vec<u64> {
    kinds
        .iter()
        .map(|kind| counts.get(kind).copied().unwrap_or(0))
        .collect()
}
