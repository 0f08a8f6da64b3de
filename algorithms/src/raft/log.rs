//! The static Raft log: only its shape matters for elections, through the up-to-date rule.

/// A log that never changes: a sequence of entry terms, stored run-length encoded so that a
/// scenario may give a member millions of entries at no cost. There is no replication, so
/// nothing is ever appended; the log exists for the voting rule of paper §5.4.1.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RaftLog {
    /// `(term, count)` runs in index order; every `count` is positive.
    runs: Vec<(u64, u64)>,
}

impl RaftLog {
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
    pub(crate) fn last_index(&self) -> u64 {
        self.runs.iter().map(|(_, count)| count).sum()
    }

    /// The term of the last entry; 0 for an empty log.
    pub(crate) fn last_term(&self) -> u64 {
        self.runs.last().map_or(0, |(term, _)| *term)
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
