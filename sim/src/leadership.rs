//! Who believes they lead: claims, spans, overlap of two believers, and the oracle's leader.

use crate::ids::NodeId;
use crate::report::{LeadershipSpan, TermRecord};
use crate::time::Nanos;

#[derive(Copy, Clone, Debug)]
struct Belief {
    term: u64,
    since_ns: Nanos,
}

/// Leadership as the nodes themselves see it.
#[derive(Debug)]
pub struct Leadership {
    belief: Vec<Option<Belief>>,
    believers: usize,
    overlap_since_ns: Option<Nanos>,
    pub(crate) overlap_ns: Nanos,
    pub(crate) claims: Vec<TermRecord>,
    pub(crate) spans: Vec<LeadershipSpan>,
    pub(crate) leader_changes: u64,
    pub(crate) reacquisitions: u64,
    /// The highest term any node has claimed so far.
    highest_claimed: Option<u64>,
}

impl Leadership {
    pub(crate) fn new(processes: usize) -> Self {
        Self {
            belief: vec![None; processes],
            believers: 0,
            overlap_since_ns: None,
            overlap_ns: 0,
            claims: Vec::new(),
            spans: Vec::new(),
            leader_changes: 0,
            reacquisitions: 0,
            highest_claimed: None,
        }
    }

    /// `node` claims `term`. Re-claiming the term it already believes it leads is a no-op.
    pub fn claim(&mut self, now: Nanos, node: NodeId, term: u64, token: u64) {
        if let Some(b) = self.belief[node.index()] {
            if b.term == term {
                return;
            }
            self.end(now, node);
        }
        match self.claims.last() {
            Some(last) if last.node != node => self.leader_changes += 1,
            Some(_) => self.reacquisitions += 1,
            None => {}
        }
        self.claims.push(TermRecord {
            term,
            node,
            token,
            at_ns: now,
        });
        self.highest_claimed = Some(self.highest_claimed.map_or(term, |h| h.max(term)));
        self.belief[node.index()] = Some(Belief {
            term,
            since_ns: now,
        });
        self.believers += 1;
        if self.believers == 2 {
            self.overlap_since_ns = Some(now);
        }
    }

    /// `node` stops believing it leads (stepped down, crashed).
    pub fn end(&mut self, now: Nanos, node: NodeId) {
        let Some(b) = self.belief[node.index()].take() else {
            return;
        };
        self.spans.push(LeadershipSpan {
            node,
            term: b.term,
            from_ns: b.since_ns,
            to_ns: now,
        });
        self.believers -= 1;
        if self.believers == 1 {
            let since = self
                .overlap_since_ns
                .take()
                .expect("overlap began at two believers");
            self.overlap_ns += now - since;
        }
    }

    /// Whether some node has already claimed `term` or a later one: a campaign for it comes
    /// too late to be an election of its own.
    pub fn decided(&self, term: u64) -> bool {
        self.highest_claimed.is_some_and(|h| term <= h)
    }

    /// Whether `node` believes it leads.
    pub fn believes(&self, node: NodeId) -> bool {
        // A process beyond the members (a coordination service) never claims.
        self.belief.get(node.index()).is_some_and(Option::is_some)
    }

    /// Since when `node` has believed it leads, if it does.
    pub fn since(&self, node: NodeId) -> Option<Nanos> {
        self.belief[node.index()].map(|b| b.since_ns)
    }

    /// The term `node` believes it leads.
    pub fn term_of(&self, node: NodeId) -> Option<u64> {
        self.belief[node.index()].map(|b| b.term)
    }

    /// The oracle's leader: the believer with the highest term (lowest id on a tie).
    pub fn leader(&self) -> Option<NodeId> {
        let mut best: Option<(u64, NodeId)> = None;
        for (index, belief) in self.belief.iter().enumerate() {
            if let Some(b) = belief
                && best.is_none_or(|(term, _)| b.term > term)
            {
                best = Some((b.term, NodeId::from(index)));
            }
        }
        best.map(|(_, node)| node)
    }

    /// Closes every open span at the end of the run.
    pub fn finish(&mut self, end_ns: Nanos) {
        for index in 0..self.belief.len() {
            self.end(end_ns, NodeId::from(index));
        }
        self.spans.sort_by_key(|s| (s.from_ns, s.node));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_counts_only_time_with_two_believers() {
        let mut l = Leadership::new(3);
        l.claim(10, NodeId(0), 1, 1);
        l.claim(30, NodeId(1), 2, 2);
        l.end(45, NodeId(0));
        l.finish(100);
        assert_eq!(l.overlap_ns, 15);
        assert_eq!(l.leader_changes, 1);
        assert_eq!(l.spans.len(), 2);
    }

    #[test]
    fn a_holder_claiming_again_after_it_stepped_down_is_a_reacquisition_not_a_change() {
        let mut l = Leadership::new(3);
        l.claim(10, NodeId(1), 2, 2);
        l.end(20, NodeId(1));
        l.claim(30, NodeId(1), 3, 3);
        l.claim(40, NodeId(1), 3, 3);
        assert_eq!((l.leader_changes, l.reacquisitions), (0, 1));
        l.claim(50, NodeId(0), 4, 4);
        assert_eq!((l.leader_changes, l.reacquisitions), (1, 1));
    }

    #[test]
    fn the_oracle_leader_is_the_highest_term_believer() {
        let mut l = Leadership::new(3);
        l.claim(0, NodeId(2), 1, 1);
        l.claim(0, NodeId(0), 3, 3);
        assert_eq!(l.leader(), Some(NodeId(0)));
        l.end(1, NodeId(0));
        assert_eq!(l.leader(), Some(NodeId(2)));
    }
}
