//! From run results to chart inputs, with one definition of each measure for every command.

use crate::chart::{CdfSeries, ElectionMessages};
use splitbrain_sim::report::{ElectionRecord, Failover, FailoverOutcome};

/// Which time of a failover to chart (all measured from the fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailoverMeasure {
    /// To the first node acting on the fault.
    Detection,
    /// To the new leader's claim.
    Election,
    /// To the new leader's first accepted write.
    Recovery,
    /// From the last accepted write before the fault to the first after it.
    Unavailable,
    /// To the moment every follower that can hear the new leader had heard it (the Raft
    /// paper's measure).
    FollowersHeard,
    /// The time without a recognised leader over the failover's whole episode, until the
    /// cluster was stable again (re-elections included).
    Leaderless,
}

impl FailoverMeasure {
    /// The measured time of `f`, if it has one.
    pub fn of(self, f: &Failover) -> Option<u64> {
        match self {
            FailoverMeasure::Detection => f.detection_ns,
            FailoverMeasure::Election => f.election_ns,
            FailoverMeasure::Recovery => f.recovery_ns,
            FailoverMeasure::Unavailable => f.unavailable_ns,
            FailoverMeasure::FollowersHeard => f.followers_heard_ns,
            FailoverMeasure::Leaderless => Some(f.leaderless_ns),
        }
    }

    /// How the measure reads on an axis: `recovery time`.
    pub fn axis_label(self) -> &'static str {
        match self {
            FailoverMeasure::Detection => "detection time",
            FailoverMeasure::Election => "election time",
            FailoverMeasure::Recovery => "recovery time",
            FailoverMeasure::Unavailable => "unavailability window",
            FailoverMeasure::FollowersHeard => "time until every follower heard the new leader",
            FailoverMeasure::Leaderless => "leaderless time over the episode",
        }
    }
}

/// The failover times of `failovers` as one CDF series. A failover with the measure is a
/// sample; one without it counts as unresolved, except a `Superseded` one (another fault
/// struck the leader first: there was nothing left to measure), which is left out.
pub fn failover_series<'a>(
    label: &str,
    failovers: impl IntoIterator<Item = &'a Failover>,
    measure: FailoverMeasure,
) -> CdfSeries {
    let mut series = CdfSeries {
        label: label.to_string(),
        samples_ns: Vec::new(),
        unresolved: 0,
    };
    for f in failovers {
        match (measure.of(f), f.outcome) {
            (Some(ns), _) => series.samples_ns.push(ns),
            (None, FailoverOutcome::Superseded) => {}
            (None, _) => series.unresolved += 1,
        }
    }
    series
}

/// The mean messages per election, by type, over the *decided* elections among `elections`
/// (one cut short by the end of the run is incomplete), leaving out the workload's `write`s to
/// the resource. Types appear in the order first met.
/// Also returns how many elections the means are over (0 gives no types).
pub fn election_messages<'a>(
    label: &str,
    elections: impl IntoIterator<Item = &'a ElectionRecord>,
) -> (ElectionMessages, usize) {
    let mut tally = ElectionTally::default();
    for e in elections {
        tally.add(e);
    }
    tally.finish(label)
}

/// [`election_messages`] folded one election at a time, for results that arrive run by run
/// and are not kept: the totals by type and the count of decided elections.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ElectionTally {
    totals: Vec<(String, u64)>,
    decided: usize,
    /// Each decided election's messages (all types but writes), for the tail.
    per_election: Vec<u64>,
}

impl ElectionTally {
    /// Counts `e` if it was decided.
    pub fn add(&mut self, e: &ElectionRecord) {
        if e.decided_ns.is_none() {
            return;
        }
        self.decided += 1;
        // Writes to the resource are the workload, not election traffic.
        let counted = e.messages.iter().filter(|m| m.kind != "write");
        self.per_election
            .push(counted.clone().map(|m| m.count).sum());
        for m in counted {
            match self.totals.iter_mut().find(|(k, _)| *k == m.kind) {
                Some((_, total)) => *total += m.count,
                None => self.totals.push((m.kind.clone(), m.count)),
            }
        }
    }

    /// The median and 99th percentile of the messages of one decided election (nearest
    /// rank), or `None` when none was decided: the mean hides the split votes' tail.
    pub fn percentiles(&self) -> Option<(u64, u64)> {
        let mut sorted = self.per_election.clone();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_unstable();
        let at = |percent| crate::stats::percentile_sorted(&sorted, percent);
        Some((at(50), at(99)))
    }

    /// The means by type, and how many decided elections they are over.
    pub fn finish(&self, label: &str) -> (ElectionMessages, usize) {
        let decided = self.decided;
        let per_kind = self
            .totals
            .iter()
            .map(|(kind, total)| (kind.clone(), *total as f64 / decided as f64))
            .collect();
        let label = label.to_string();
        (ElectionMessages { label, per_kind }, decided)
    }
}

/// The share of failovers that ended with a new leader elected in the first round, over
/// those that ended with a new leader; `None` when none did.
pub fn first_round_share<'a>(failovers: impl IntoIterator<Item = &'a Failover>) -> Option<f64> {
    let (mut first, mut all) = (0u64, 0u64);
    for f in failovers {
        if f.outcome == FailoverOutcome::NewLeader {
            all += 1;
            first += u64::from(f.rounds <= 1);
        }
    }
    (all > 0).then(|| first as f64 / all as f64)
}

/// The share of failovers that ended with a new leader elected in the first round that a
/// candidate able to win campaigned in (`eligible_rounds` of 1: no such candidate's round
/// failed before), over those that ended with a new leader and say who could win; `None`
/// when none did (an algorithm that does not say who could win).
pub fn eligible_first_round_share<'a>(
    failovers: impl IntoIterator<Item = &'a Failover>,
) -> Option<f64> {
    let (mut first, mut all) = (0u64, 0u64);
    for f in failovers {
        if let (FailoverOutcome::NewLeader, Some(rounds)) = (f.outcome, f.eligible_rounds) {
            all += 1;
            first += u64::from(rounds <= 1);
        }
    }
    (all > 0).then(|| first as f64 / all as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::report::KindCount;
    use splitbrain_sim::NodeId;

    fn failover(recovery_ns: Option<u64>, rounds: u32, outcome: FailoverOutcome) -> Failover {
        Failover {
            cause: "crash of leader n1".to_string(),
            fault_kind: "crash".to_string(),
            at_ns: 0,
            old_leader: NodeId(1),
            old_term: 1,
            detection_ns: None,
            election_ns: None,
            recovery_ns,
            unavailable_ns: None,
            followers_heard_ns: None,
            rounds,
            eligible_rounds: None,
            new_leader: None,
            new_term: None,
            outcome,
            leaderless_ns: 0,
            leader_claims: 0,
            episode_ns: 0,
            episode_stable: false,
        }
    }

    fn election(decided: bool, messages: &[(&str, u64)]) -> ElectionRecord {
        ElectionRecord {
            abandoned_ns: None,
            started_ns: 0,
            decided_ns: decided.then_some(10),
            winner: None,
            term: None,
            campaigns: 1,
            messages: messages
                .iter()
                .map(|&(kind, count)| KindCount {
                    kind: kind.to_string(),
                    count,
                })
                .collect(),
        }
    }

    #[test]
    fn unresolved_failovers_count_and_superseded_ones_do_not() {
        let fs = [
            failover(Some(5), 1, FailoverOutcome::NewLeader),
            failover(None, 0, FailoverOutcome::Unresolved),
            failover(None, 0, FailoverOutcome::Superseded),
        ];
        let s = failover_series("raft", &fs, FailoverMeasure::Recovery);
        assert_eq!((s.samples_ns, s.unresolved), (vec![5], 1));
    }

    #[test]
    fn messages_per_election_average_over_decided_elections_only() {
        let es = [
            election(true, &[("RequestVote", 4), ("RequestVoteResp", 4)]),
            election(true, &[("PreVote", 2), ("RequestVote", 8)]),
            election(false, &[("RequestVote", 100)]),
        ];
        let (m, decided) = election_messages("raft", &es);
        assert_eq!(decided, 2);
        let expected = [
            ("RequestVote", 6.0),
            ("RequestVoteResp", 2.0),
            ("PreVote", 1.0),
        ];
        let expected: Vec<(String, f64)> =
            expected.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        assert_eq!(m.per_kind, expected);
    }

    #[test]
    fn the_tail_of_messages_per_election_counts_decided_elections_without_writes() {
        let mut tally = ElectionTally::default();
        assert_eq!(tally.percentiles(), None);
        for n in 1..=99 {
            tally.add(&election(true, &[("RequestVote", 8), ("write", 1000 + n)]));
        }
        tally.add(&election(
            true,
            &[("RequestVote", 30), ("RequestVoteResp", 12)],
        ));
        tally.add(&election(false, &[("RequestVote", 500)]));
        assert_eq!(
            tally.percentiles(),
            Some((8, 8)),
            "99 of 100 at 8: p99 is the 99th"
        );
        tally.add(&election(true, &[("RequestVote", 42)]));
        assert_eq!(tally.percentiles(), Some((8, 42)));
    }

    #[test]
    fn the_first_round_share_counts_new_leaders_only() {
        let fs = [
            failover(Some(1), 1, FailoverOutcome::NewLeader),
            failover(Some(1), 3, FailoverOutcome::NewLeader),
            failover(Some(1), 1, FailoverOutcome::RiddenThrough),
        ];
        assert_eq!(first_round_share(&fs), Some(0.5));
        assert_eq!(first_round_share(&[]), None);
    }

    #[test]
    fn the_eligible_first_round_share_leaves_out_rounds_of_candidates_that_could_not_win() {
        let with = |rounds, eligible, outcome| Failover {
            eligible_rounds: eligible,
            ..failover(Some(1), rounds, outcome)
        };
        let fs = [
            // Two short-log campaigns, then the winner's: one eligible round.
            with(3, Some(1), FailoverOutcome::NewLeader),
            // A split vote between two that could win.
            with(2, Some(2), FailoverOutcome::NewLeader),
            with(1, Some(1), FailoverOutcome::NewLeader),
            with(0, Some(0), FailoverOutcome::RiddenThrough),
        ];
        assert_eq!(first_round_share(&fs), Some(1.0 / 3.0));
        assert_eq!(eligible_first_round_share(&fs), Some(2.0 / 3.0));
        let unknown = [with(1, None, FailoverOutcome::NewLeader)];
        assert_eq!(eligible_first_round_share(&unknown), None, "n/a, not 0");
    }

    #[test]
    fn the_followers_heard_measure_reads_its_own_field() {
        let f = Failover {
            followers_heard_ns: Some(7),
            ..failover(Some(5), 1, FailoverOutcome::NewLeader)
        };
        assert_eq!(FailoverMeasure::FollowersHeard.of(&f), Some(7));
    }
}
