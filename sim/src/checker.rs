//! The safety checker. It observes typed events (claims, terms, accepted writes) at every
//! step and knows nothing of any algorithm's internals.

use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::time::{format_duration, Nanos};
use serde::Serialize;
use std::collections::BTreeMap;

/// The first occurrence of a broken invariant, and how often it broke.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The invariant that broke.
    pub invariant: Invariant,
    /// True time of its first break.
    pub at_ns: Nanos,
    /// The nodes involved in the first break (the two claimants, the writer, ...).
    pub nodes: Vec<NodeId>,
    /// What happened, for people: `n0 and n2 both claimed leadership of term 3`.
    pub detail: String,
    /// How many times it broke during the run.
    pub count: u64,
}

/// Watches the safety invariants.
#[derive(Debug, Default)]
pub struct Checker {
    /// Who claimed each term first: `election_safety`.
    claims: BTreeMap<u64, NodeId>,
    /// The highest term each process reported: `term_monotonic` (survives restarts).
    last_term: Vec<u64>,
    /// `fencing_safety`.
    highest_accepted_token: Option<u64>,
    /// The term the writer of the highest accepted token believed it led when it sent it.
    highest_token_term: Option<u64>,
    token_writer: BTreeMap<u64, NodeId>,
    violations: Vec<Violation>,
}

impl Checker {
    pub(crate) fn new(processes: usize) -> Self {
        Self {
            last_term: vec![0; processes],
            ..Self::default()
        }
    }

    /// Feeds what the checker remembers, and what later verdicts depend on, to a state
    /// digest: who claimed each term, each process's highest term, the highest token; every
    /// node renamed by `names` ([`NodeId::renamed`]; empty: as they are).
    pub(crate) fn digest(&self, names: &[NodeId], h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        let renamed = |map: &BTreeMap<u64, NodeId>| -> Vec<(u64, NodeId)> {
            map.iter().map(|(k, n)| (*k, n.renamed(names))).collect()
        };
        renamed(&self.claims).hash(h);
        crate::ids::renamed_vec(&self.last_term, names).hash(h);
        self.highest_accepted_token.hash(h);
        self.highest_token_term.hash(h);
        renamed(&self.token_writer).hash(h);
        self.violations.len().hash(h);
    }

    /// A process claims leadership of `term`. Returns the invariant it broke, if any.
    pub fn on_claim(&mut self, now: Nanos, node: NodeId, term: u64) -> Option<Invariant> {
        match self.claims.get(&term) {
            None => {
                self.claims.insert(term, node);
                None
            }
            Some(first) if *first == node => None,
            Some(first) => {
                let detail = format!("{first} and {node} both claimed leadership of term {term}");
                let nodes = vec![*first, node];
                self.record(Invariant::ElectionSafety, now, nodes, detail)
            }
        }
    }

    /// A process's term after a handler. Returns the invariant it broke, if any.
    pub fn on_term(&mut self, now: Nanos, node: NodeId, term: u64) -> Option<Invariant> {
        self.term_went_back(now, node, term)
            .then_some(Invariant::TermMonotonic)
    }

    /// [`Checker::on_term`] for the engine, after every handler: whether `term_monotonic`
    /// broke. A `bool` comes back in a register; an `Option<Invariant>`, which a user
    /// property's name makes three words long, would come back through memory.
    #[inline]
    pub(crate) fn term_went_back(&mut self, now: Nanos, node: NodeId, term: u64) -> bool {
        let last = &mut self.last_term[node.index()];
        if term >= *last {
            *last = term;
            return false;
        }
        let last = *last;
        self.term_back(now, node, last, term);
        true
    }

    /// Records that `node`'s term went back from `last` to `term`: rare, kept off the path
    /// every handler takes.
    #[cold]
    #[inline(never)]
    fn term_back(&mut self, now: Nanos, node: NodeId, last: u64, term: u64) {
        let detail = format!("{node}'s term went back from {last} to {term}");
        self.record(Invariant::TermMonotonic, now, vec![node], detail);
    }

    /// `node` crashed before terms above `term` were durable: it never acted on them (what
    /// it sent waited for the write), so coming back at `term` is no regression.
    pub fn forget_terms_above(&mut self, node: NodeId, term: u64) {
        let last = &mut self.last_term[node.index()];
        *last = (*last).min(term);
    }

    /// The resource accepted `node`'s write of `token`, sent while `node` believed it led
    /// `term` (`None`: it did not). Returns the invariant it broke, if any.
    pub fn on_accepted_write(
        &mut self,
        now: Nanos,
        node: NodeId,
        token: u64,
        term: Option<u64>,
    ) -> Option<Invariant> {
        if self
            .highest_accepted_token
            .is_none_or(|highest| token >= highest)
        {
            self.highest_token_term = term;
        }
        let mut broken = None;
        if let Some(highest) = self.highest_accepted_token
            && token < highest
        {
            let writer = self.token_writer.get(&highest).copied().unwrap_or(node);
            let detail = format!(
                    "the resource accepted token {token} from {node} after token {highest} from {writer}"
                );
            broken = self.record(Invariant::FencingSafety, now, vec![node, writer], detail);
        }
        match self.token_writer.get(&token) {
            Some(first) if *first != node => {
                let detail =
                    format!("the resource accepted token {token} from both {first} and {node}");
                let nodes = vec![*first, node];
                broken = self
                    .record(Invariant::FencingSafety, now, nodes, detail)
                    .or(broken);
            }
            Some(_) => {}
            None => {
                self.token_writer.insert(token, node);
            }
        }
        self.highest_accepted_token =
            Some(self.highest_accepted_token.map_or(token, |h| h.max(token)));
        broken
    }

    /// The resource rejected `node`'s write of `token` because it had accepted a higher
    /// token; `node` sent it while it believed it led `term`. Fencing then sides with the
    /// older leadership if the writer of that higher token led an older term when it wrote
    /// it: the legitimate leader is locked out and the deposed one's writes still count
    /// (docs/engine.md, "Checker and measurements"). Returns the invariant it broke, if any.
    pub fn on_rejected_write(
        &mut self,
        now: Nanos,
        node: NodeId,
        token: u64,
        term: Option<u64>,
    ) -> Option<Invariant> {
        let (Some(newer), Some(older)) = (term, self.highest_token_term) else {
            return None;
        };
        if newer <= older {
            return None;
        }
        let highest = self.highest_accepted_token?;
        let writer = self.token_writer.get(&highest).copied().unwrap_or(node);
        let detail = format!(
            "the resource rejected token {token} from {node}, leader of term {newer}, in favour of token {highest} from {writer}, leader of the older term {older}"
        );
        self.record(Invariant::FencingSafety, now, vec![node, writer], detail)
    }

    /// Whether a write `node` sent while leading `term` would be rejected in favour of an
    /// older leadership: see [`Checker::on_rejected_write`].
    pub(crate) fn locks_out(&self, term: Option<u64>) -> bool {
        matches!((term, self.highest_token_term), (Some(w), Some(h)) if w > h)
    }

    /// Records a liveness failure decided elsewhere (the liveness monitor).
    pub fn record_liveness(&mut self, now: Nanos, nodes: Vec<NodeId>, detail: String) {
        self.record(Invariant::Liveness, now, nodes, detail);
    }

    /// Records a break of the user property `name` ([`crate::property`]); returns its
    /// invariant, for the trace.
    pub(crate) fn record_property(
        &mut self,
        now: Nanos,
        name: &'static str,
        nodes: Vec<NodeId>,
        detail: String,
    ) -> Invariant {
        let invariant = Invariant::Property(name);
        self.record(invariant, now, nodes, detail);
        invariant
    }

    /// The violations so far: the first of each invariant, in the order they first broke.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Whether `invariant` has broken.
    pub fn violated(&self, invariant: Invariant) -> bool {
        self.violations.iter().any(|v| v.invariant == invariant)
    }

    fn record(
        &mut self,
        invariant: Invariant,
        now: Nanos,
        nodes: Vec<NodeId>,
        detail: String,
    ) -> Option<Invariant> {
        match self
            .violations
            .iter_mut()
            .find(|v| v.invariant == invariant)
        {
            Some(existing) => existing.count += 1,
            None => {
                let detail = format!("{detail} (at {})", format_duration(now));
                self.violations.push(Violation {
                    invariant,
                    at_ns: now,
                    nodes,
                    detail,
                    count: 1,
                });
            }
        }
        Some(invariant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_claims_of_one_term_break_election_safety() {
        let mut checker = Checker::new(3);
        assert_eq!(checker.on_claim(1, NodeId(0), 4), None);
        assert_eq!(
            checker.on_claim(2, NodeId(0), 4),
            None,
            "re-claiming one's own term is fine"
        );
        assert_eq!(checker.on_claim(3, NodeId(1), 5), None);
        assert_eq!(
            checker.on_claim(4, NodeId(2), 4),
            Some(Invariant::ElectionSafety)
        );
        assert_eq!(checker.violations()[0].nodes, vec![NodeId(0), NodeId(2)]);
    }

    #[test]
    fn a_term_going_back_breaks_term_monotonic() {
        let mut checker = Checker::new(2);
        assert_eq!(checker.on_term(1, NodeId(1), 3), None);
        assert_eq!(checker.on_term(2, NodeId(1), 3), None);
        assert_eq!(
            checker.on_term(3, NodeId(1), 2),
            Some(Invariant::TermMonotonic)
        );
    }

    #[test]
    fn a_lower_token_accepted_after_a_higher_one_breaks_fencing_safety() {
        let mut checker = Checker::new(2);
        assert_eq!(checker.on_accepted_write(1, NodeId(0), 1, Some(1)), None);
        assert_eq!(checker.on_accepted_write(2, NodeId(1), 2, Some(2)), None);
        assert_eq!(
            checker.on_accepted_write(3, NodeId(0), 1, Some(1)),
            Some(Invariant::FencingSafety)
        );
    }

    #[test]
    fn one_token_from_two_writers_breaks_fencing_safety() {
        let mut checker = Checker::new(2);
        assert_eq!(checker.on_accepted_write(1, NodeId(0), 7, Some(1)), None);
        assert_eq!(
            checker.on_accepted_write(2, NodeId(1), 7, Some(2)),
            Some(Invariant::FencingSafety)
        );
    }

    #[test]
    fn a_newer_leaders_write_rejected_for_an_older_ones_token_breaks_fencing_safety() {
        let mut checker = Checker::new(2);
        // n1 led term 2 with a wall-clock token of 900; n0 leads term 3 with token 5.
        assert_eq!(checker.on_accepted_write(1, NodeId(1), 900, Some(2)), None);
        assert_eq!(
            checker.on_rejected_write(2, NodeId(0), 5, Some(3)),
            Some(Invariant::FencingSafety)
        );
        assert_eq!(checker.violations()[0].nodes, vec![NodeId(0), NodeId(1)]);
        assert!(checker.violations()[0].detail.contains("older term 2"));
    }

    #[test]
    fn a_deposed_leaders_write_rejected_is_fencing_at_work() {
        let mut checker = Checker::new(2);
        assert_eq!(checker.on_accepted_write(1, NodeId(0), 3, Some(3)), None);
        // The deposed leader of term 2, and a write sent by no leader at all.
        assert_eq!(checker.on_rejected_write(2, NodeId(1), 2, Some(2)), None);
        assert_eq!(checker.on_rejected_write(3, NodeId(1), 2, None), None);
        // A write of the same term rejected (an older token of the same leader, in flight).
        assert_eq!(checker.on_rejected_write(4, NodeId(0), 1, Some(3)), None);
        assert!(checker.violations().is_empty());
    }

    #[test]
    fn the_term_of_the_highest_token_follows_the_highest_token_only() {
        let mut checker = Checker::new(3);
        assert_eq!(checker.on_accepted_write(1, NodeId(0), 10, Some(1)), None);
        // Fencing off: a lower token from a newer leader is accepted (and breaks the
        // monotonic rule), but the highest token is still the term-1 leader's.
        checker.on_accepted_write(2, NodeId(1), 4, Some(2));
        assert!(checker.locks_out(Some(2)));
        assert_eq!(checker.on_accepted_write(3, NodeId(2), 11, Some(3)), None);
        assert!(!checker.locks_out(Some(3)));
        assert!(checker.locks_out(Some(4)));
    }

    #[test]
    fn repeated_breaks_are_counted_once_each_invariant() {
        let mut checker = Checker::new(3);
        checker.on_claim(1, NodeId(0), 1);
        checker.on_claim(2, NodeId(1), 1);
        checker.on_claim(3, NodeId(2), 1);
        assert_eq!(checker.violations().len(), 1);
        assert_eq!(checker.violations()[0].count, 2);
    }
}
