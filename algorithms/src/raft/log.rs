//! The Raft log: only the terms of its entries matter, for the up-to-date rule of elections
//! and, with a proposal workload, for the consistency check of replication (paper §5.3).

/// A log as a sequence of entry terms, stored run-length encoded so that a scenario may give
/// a member millions of entries at no cost. Without a proposal workload (`propose_every`)
/// it never changes and exists for the voting rule of paper §5.4.1; with one, leaders append
/// and followers copy (`replication.rs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RaftLog {
    /// `(term, count)` runs in index order; every `count` is positive.
    runs: Vec<(u64, u64)>,
}

impl RaftLog {
    /// The bytes its runs take on the heap (what a durable write of it is charged beyond
    /// its inline size).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.runs.len() * std::mem::size_of::<(u64, u64)>()
    }

    /// A log of `count` entries, all of term `term` (empty when `count` is 0).
    pub(crate) fn uniform(count: u64, term: u64) -> Self {
        let runs = if count == 0 {
            Vec::new()
        } else {
            vec![(term, count)]
        };
        Self { runs }
    }

    /// The index of the last entry (1-based, as in the paper); 0 for an empty log.
    /// Saturating, like every index sum here: `log_lengths` are bounded, so no real log
    /// reaches `u64::MAX`, but a model must not panic on a count a scenario gave.
    pub(crate) fn last_index(&self) -> u64 {
        self.runs
            .iter()
            .fold(0, |sum, (_, count)| sum.saturating_add(*count))
    }

    /// The term of the last entry; 0 for an empty log.
    pub(crate) fn last_term(&self) -> u64 {
        self.runs.last().map_or(0, |(term, _)| *term)
    }

    /// The term of the entry at `index` (1-based); 0 for index 0 (before the first entry),
    /// `None` past the end.
    pub(crate) fn term_at(&self, index: u64) -> Option<u64> {
        if index == 0 {
            return Some(0);
        }
        let mut end: u64 = 0;
        for &(term, count) in &self.runs {
            end = end.saturating_add(count);
            if index <= end {
                return Some(term);
            }
        }
        None
    }

    /// Appends `count` entries of `term` at the end.
    pub(crate) fn append(&mut self, term: u64, count: u64) {
        if count == 0 {
            return;
        }
        match self.runs.last_mut() {
            Some((last_term, last_count)) if *last_term == term => {
                *last_count = last_count.saturating_add(count);
            }
            _ => self.runs.push((term, count)),
        }
    }

    /// Drops every entry after `index`.
    fn truncate_after(&mut self, index: u64) {
        let mut kept = 0;
        let mut runs = 0;
        for (_, count) in &mut self.runs {
            if kept >= index {
                break;
            }
            *count = (*count).min(index - kept);
            kept += *count;
            runs += 1;
        }
        self.runs.truncate(runs);
    }

    /// The first index in `from..=to` whose entry is missing or not of `term`, if any.
    fn first_mismatch(&self, from: u64, to: u64, term: u64) -> Option<u64> {
        let mut start: u64 = 1;
        for &(run_term, count) in &self.runs {
            let end = start.saturating_add(count - 1);
            if end >= from && run_term != term {
                return Some(start.max(from)).filter(|&index| index <= to);
            }
            if end >= to {
                return None;
            }
            start = end.saturating_add(1);
        }
        Some(start.max(from)).filter(|&index| index <= to)
    }

    /// Paper §5.3, receiver steps 3 and 4: puts `count` entries of `term` right after
    /// `prev_index` (which the caller has matched). Entries already there with the same
    /// terms stay, and so does what follows them (a late or repeated message must not cut
    /// newer entries); from the first conflicting entry on, the log is replaced. Returns
    /// whether the log changed (and so must be written to disk).
    pub(crate) fn put_after(&mut self, prev_index: u64, term: u64, count: u64) -> bool {
        let last = prev_index.saturating_add(count);
        let Some(conflict) = self.first_mismatch(prev_index.saturating_add(1), last, term) else {
            return false;
        };
        self.truncate_after(conflict - 1);
        self.append(term, last - (conflict - 1));
        true
    }

    /// The run of equal-term entries that starts at `index` and goes to the end of its run:
    /// `(term, count)`; `None` when `index` is past the end.
    pub(crate) fn run_from(&self, index: u64) -> Option<(u64, u64)> {
        let mut end: u64 = 0;
        for &(term, count) in &self.runs {
            end = end.saturating_add(count);
            if index <= end {
                return Some((term, (end - index).saturating_add(1)));
            }
        }
        None
    }

    /// `(last_log_term, last_log_index)`, the position voters compare.
    pub(crate) fn position(&self) -> LogPosition {
        LogPosition {
            last_term: self.last_term(),
            last_index: self.last_index(),
        }
    }
}

/// Where a log ends: what RequestVote, PreVote and AppendEntriesResp carry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct LogPosition {
    pub(crate) last_term: u64,
    pub(crate) last_index: u64,
}

impl LogPosition {
    /// Raft paper §5.4.1: "If the logs have last entries with different terms, then the log
    /// with the later term is more up-to-date. If the logs end with the same term, then
    /// whichever log is longer is more up-to-date." A voter grants only if the candidate's
    /// log is at least as up-to-date as its own.
    pub(crate) fn at_least_as_up_to_date_as(self, other: LogPosition) -> bool {
        if self.last_term != other.last_term {
            return self.last_term > other.last_term;
        }
        self.last_index >= other.last_index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::SimRng;

    /// The dumb oracle: a log is "at least as up-to-date" iff its (term, index) pair is not
    /// lexicographically smaller, written without any cleverness.
    fn oracle(candidate: (u64, u64), voter: (u64, u64)) -> bool {
        let (ct, ci) = candidate;
        let (vt, vi) = voter;
        ct > vt || (ct == vt && ci >= vi)
    }

    #[test]
    fn the_up_to_date_rule_agrees_with_a_naive_oracle_on_random_positions() {
        let mut rng = SimRng::stream(2024, 77);
        for round in 0..50_000 {
            // Small ranges make ties in term and in index common, where the rule is subtle.
            let bound = if round % 2 == 0 { 4 } else { 1_000 };
            let c = (rng.below(bound), rng.below(bound));
            let v = (rng.below(bound), rng.below(bound));
            let candidate = LogPosition {
                last_term: c.0,
                last_index: c.1,
            };
            let voter = LogPosition {
                last_term: v.0,
                last_index: v.1,
            };
            assert_eq!(
                candidate.at_least_as_up_to_date_as(voter),
                oracle(c, v),
                "candidate {c:?} voter {v:?}"
            );
        }
    }

    #[test]
    fn a_later_last_term_beats_a_longer_log() {
        let short_new = LogPosition {
            last_term: 3,
            last_index: 2,
        };
        let long_old = LogPosition {
            last_term: 2,
            last_index: 100,
        };
        assert!(short_new.at_least_as_up_to_date_as(long_old));
        assert!(!long_old.at_least_as_up_to_date_as(short_new));
    }

    #[test]
    fn equal_logs_are_each_as_up_to_date_as_the_other() {
        let a = RaftLog::uniform(5, 0).position();
        assert!(a.at_least_as_up_to_date_as(a));
    }

    /// The dumb oracle of a log: one term per entry.
    fn expand(log: &RaftLog) -> Vec<u64> {
        log.runs
            .iter()
            .flat_map(|&(term, count)| std::iter::repeat_n(term, count as usize))
            .collect()
    }

    #[test]
    fn put_after_agrees_with_the_papers_rule_on_a_plain_vector() {
        let mut rng = SimRng::stream(2024, 78);
        for _ in 0..20_000 {
            let mut log = RaftLog::default();
            for _ in 0..rng.below(4) {
                log.append(1 + rng.below(3), 1 + rng.below(3));
            }
            let mut plain = expand(&log);
            let prev = rng.below(plain.len() as u64 + 1);
            let (term, count) = (1 + rng.below(3), 1 + rng.below(3));
            // Paper §5.3 steps 3 and 4, entry by entry: a conflicting entry and all that
            // follow it go, then any new entries not already there are appended.
            for offset in 0..count as usize {
                let at = prev as usize + offset;
                if at < plain.len() && plain[at] != term {
                    plain.truncate(at);
                }
                if at >= plain.len() {
                    plain.push(term);
                }
            }
            let before = expand(&log);
            let changed = log.put_after(prev, term, count);
            assert_eq!(expand(&log), plain, "prev {prev} term {term} count {count}");
            assert_eq!(changed, before != plain);
            for index in 0..=plain.len() as u64 + 1 {
                let expected = match index {
                    0 => Some(0),
                    i => plain.get(i as usize - 1).copied(),
                };
                assert_eq!(log.term_at(index), expected);
            }
        }
    }

    #[test]
    fn run_from_gives_the_rest_of_the_run() {
        let mut log = RaftLog::uniform(3, 1);
        log.append(2, 4);
        assert_eq!(log.run_from(2), Some((1, 2)));
        assert_eq!(log.run_from(4), Some((2, 4)));
        assert_eq!(log.run_from(7), Some((2, 1)));
        assert_eq!(log.run_from(8), None);
    }

    #[test]
    fn a_uniform_log_reports_its_length_and_term() {
        let log = RaftLog::uniform(7, 2);
        assert_eq!(log.last_index(), 7);
        assert_eq!(log.last_term(), 2);
        let empty = RaftLog::uniform(0, 9);
        assert_eq!(
            empty.position(),
            LogPosition {
                last_term: 0,
                last_index: 0
            }
        );
    }
}
