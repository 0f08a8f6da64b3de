//! Failover measurement: when a fault strikes the leader, time detection, election and
//! recovery (the new leader's first accepted write).

use crate::ids::NodeId;
use crate::process::Signal;
use crate::report::{Failover, FailoverOutcome};
use crate::time::Nanos;

#[derive(Debug)]
struct Open {
    record: Failover,
    /// When the fault stops by itself (a pause ends, a partition heals, a resignation
    /// strikes); the old leader sending a write again from then on, with nobody else
    /// elected, rides the failover through.
    heals_at_ns: Option<Nanos>,
    last_write_before_ns: Option<Nanos>,
    last_round_term: Option<u64>,
}

/// Tracks at most one open failover at a time.
#[derive(Debug, Default)]
pub struct FailoverTracker {
    open: Option<Open>,
    pub(crate) done: Vec<Failover>,
}

/// What struck the leader.
pub struct Strike {
    pub(crate) cause: String,
    pub(crate) fault_kind: &'static str,
    pub(crate) at_ns: Nanos,
    pub(crate) leader: NodeId,
    pub(crate) term: u64,
    pub(crate) heals_at_ns: Option<Nanos>,
    pub(crate) last_write_before_ns: Option<Nanos>,
}

impl FailoverTracker {
    /// A fault struck the leader: a failover begins (superseding an unresolved one).
    pub fn open(&mut self, strike: Strike) {
        self.close(FailoverOutcome::Superseded);
        let record = Failover {
            cause: strike.cause,
            fault_kind: strike.fault_kind.to_string(),
            at_ns: strike.at_ns,
            old_leader: strike.leader,
            old_term: strike.term,
            detection_ns: None,
            election_ns: None,
            recovery_ns: None,
            unavailable_ns: None,
            rounds: 0,
            new_leader: None,
            new_term: None,
            outcome: FailoverOutcome::Unresolved,
        };
        self.open = Some(Open {
            record,
            heals_at_ns: strike.heals_at_ns,
            last_write_before_ns: strike.last_write_before_ns,
            last_round_term: None,
        });
    }

    /// A process reported a signal.
    pub fn on_signal(&mut self, now: Nanos, signal: Signal) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        let r = &mut open.record;
        let acts = matches!(
            signal,
            Signal::ElectionStarted { .. }
                | Signal::PreVoteStarted { .. }
                | Signal::LeaderSuspected
        );
        if acts && r.detection_ns.is_none() {
            r.detection_ns = Some(now - r.at_ns);
        }
        if let Signal::ElectionStarted { term } = signal {
            if r.new_leader.is_none() && open.last_round_term.is_none_or(|t| term > t) {
                open.last_round_term = Some(term);
                r.rounds += 1;
            }
        }
    }

    /// A process claimed leadership.
    pub fn on_claim(&mut self, now: Nanos, node: NodeId, term: u64) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        let r = &mut open.record;
        if r.new_leader.is_none() && (node != r.old_leader || term > r.old_term) {
            r.new_leader = Some(node);
            r.new_term = Some(term);
            r.election_ns = Some(now - r.at_ns);
            r.detection_ns.get_or_insert(now - r.at_ns);
            r.rounds = r.rounds.max(1);
        }
    }

    /// The resource accepted a write that `node` sent at `sent_ns`.
    ///
    /// The old leader rides the failover through only with a write *sent* once the fault
    /// was over: one sent before it and accepted after (in flight across a resignation,
    /// which is over the moment it strikes) proves nothing about the leader after the fault.
    /// A write sent at the very nanosecond of the heal counts as sent after it.
    pub fn on_accepted_write(&mut self, now: Nanos, sent_ns: Nanos, node: NodeId, token: u64) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        let r = &open.record;
        let by_new_leader = r.new_leader == Some(node) && r.new_term.is_some();
        let ridden_through = r.new_leader.is_none()
            && node == r.old_leader
            && token >= r.old_term
            && open.heals_at_ns.is_some_and(|h| sent_ns >= h);
        if !(by_new_leader || ridden_through) {
            return;
        }
        let mut open = self.open.take().expect("checked above");
        let r = &mut open.record;
        r.recovery_ns = Some(now - r.at_ns);
        r.unavailable_ns = Some(now - open.last_write_before_ns.unwrap_or(r.at_ns));
        r.outcome = if by_new_leader {
            FailoverOutcome::NewLeader
        } else {
            FailoverOutcome::RiddenThrough
        };
        self.done.push(open.record);
    }

    /// Closes the open failover, if any, with `outcome`.
    pub fn close(&mut self, outcome: FailoverOutcome) {
        if let Some(mut open) = self.open.take() {
            open.record.outcome = outcome;
            self.done.push(open.record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strike(at_ns: Nanos) -> Strike {
        Strike {
            cause: "crash of leader n0".into(),
            fault_kind: "crash",
            at_ns,
            leader: NodeId(0),
            term: 1,
            heals_at_ns: None,
            last_write_before_ns: Some(at_ns - 50),
        }
    }

    #[test]
    fn a_failover_times_detection_election_and_recovery() {
        let mut t = FailoverTracker::default();
        t.open(strike(1_000));
        t.on_signal(1_200, Signal::LeaderSuspected);
        t.on_signal(1_200, Signal::ElectionStarted { term: 2 });
        t.on_signal(1_500, Signal::ElectionStarted { term: 3 });
        t.on_claim(1_600, NodeId(2), 3);
        t.on_accepted_write(1_650, 1_640, NodeId(0), 1);
        t.on_accepted_write(1_700, 1_690, NodeId(2), 3);
        let f = &t.done[0];
        assert_eq!(f.detection_ns, Some(200));
        assert_eq!(f.election_ns, Some(600));
        assert_eq!(f.recovery_ns, Some(700));
        assert_eq!(f.unavailable_ns, Some(750));
        assert_eq!(f.rounds, 2);
        assert_eq!(f.outcome, FailoverOutcome::NewLeader);
    }

    #[test]
    fn a_leader_back_from_a_pause_rides_the_failover_through() {
        let mut t = FailoverTracker::default();
        t.open(Strike {
            heals_at_ns: Some(1_100),
            ..strike(1_000)
        });
        t.on_accepted_write(1_050, 1_040, NodeId(0), 1);
        assert!(
            t.done.is_empty(),
            "a write before the pause ends proves nothing"
        );
        t.on_accepted_write(1_120, 1_110, NodeId(0), 1);
        assert_eq!(t.done[0].outcome, FailoverOutcome::RiddenThrough);
    }

    #[test]
    fn a_write_sent_before_a_resignation_and_accepted_after_it_does_not_ride_it_through() {
        let mut t = FailoverTracker::default();
        // A resignation is over the moment it strikes.
        t.open(Strike {
            cause: "resign of leader n0".into(),
            fault_kind: "resign",
            heals_at_ns: Some(1_000),
            ..strike(1_000)
        });
        t.on_accepted_write(1_004, 998, NodeId(0), 1);
        assert!(t.done.is_empty(), "that write left before the resignation");
        t.on_claim(1_300, NodeId(2), 2);
        t.on_accepted_write(1_350, 1_340, NodeId(2), 2);
        assert_eq!(t.done[0].outcome, FailoverOutcome::NewLeader);
        assert_eq!(t.done[0].recovery_ns, Some(350));
    }

    #[test]
    fn a_write_sent_at_the_heal_or_later_rides_the_failover_through() {
        let mut t = FailoverTracker::default();
        t.open(Strike {
            heals_at_ns: Some(1_000),
            ..strike(1_000)
        });
        t.on_accepted_write(1_003, 1_000, NodeId(0), 1);
        assert_eq!(t.done[0].outcome, FailoverOutcome::RiddenThrough);
        assert_eq!(t.done[0].recovery_ns, Some(3));
    }

    #[test]
    fn a_second_strike_supersedes_an_unresolved_failover() {
        let mut t = FailoverTracker::default();
        t.open(strike(1_000));
        t.open(strike(2_000));
        t.close(FailoverOutcome::Unresolved);
        let outcomes: Vec<_> = t.done.iter().map(|f| f.outcome).collect();
        assert_eq!(
            outcomes,
            vec![FailoverOutcome::Superseded, FailoverOutcome::Unresolved]
        );
    }
}
