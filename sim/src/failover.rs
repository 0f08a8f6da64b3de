//! Failover measurement: when a fault strikes the leader, time detection, election and
//! recovery (the new leader's first accepted write), count the election rounds (all, and
//! those of candidates that could win), and time until every follower that can hear the
//! new leader (up, and not cut off from it) has heard it.

use crate::config::SignalSupport;
use crate::ids::NodeId;
use crate::process::Signal;
use crate::report::{Failover, FailoverOutcome, LeadershipSpan, TermRecord};
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
    /// The last term counted in `eligible_rounds`.
    last_eligible_term: Option<u64>,
}

/// Waiting for every follower that can hear a failover's new leader to hear it.
#[derive(Debug)]
struct HeardWatch {
    /// The failover's place in `done` once it closed; `None` while it is open.
    done_index: Option<usize>,
    /// True time of the fault.
    at_ns: Nanos,
    leader: NodeId,
    term: u64,
    /// Per member: heard `leader` in `term` (the leader counts as hearing itself).
    heard: Vec<bool>,
}

/// Tracks at most one open failover at a time.
#[derive(Debug)]
pub struct FailoverTracker {
    open: Option<Open>,
    heard: Option<HeardWatch>,
    members: usize,
    signals: SignalSupport,
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
    /// A tracker for `members` election members of an algorithm that emits `signals`.
    pub fn new(members: usize, signals: SignalSupport) -> Self {
        Self {
            open: None,
            heard: None,
            members,
            signals,
            done: Vec::new(),
        }
    }

    /// A fault struck the leader: a failover begins (superseding an unresolved one, and
    /// ending the wait for the followers of the last one to hear its new leader).
    pub fn open(&mut self, strike: Strike) {
        self.close(FailoverOutcome::Superseded);
        self.heard = None;
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
            followers_heard_ns: None,
            rounds: 0,
            eligible_rounds: self.signals.campaign_eligibility.then_some(0),
            new_leader: None,
            new_term: None,
            outcome: FailoverOutcome::Unresolved,
            leaderless_ns: 0,
            leader_claims: 0,
            episode_ns: 0,
            episode_stable: false,
        };
        self.open = Some(Open {
            record,
            heals_at_ns: strike.heals_at_ns,
            last_write_before_ns: strike.last_write_before_ns,
            last_round_term: None,
            last_eligible_term: None,
        });
    }

    /// `node` reported a signal; `hears(leader, member)` says whether `member` can hear
    /// `leader` now (it is up, not crashed, and no partition cuts `leader` -> `member`).
    pub fn on_signal(
        &mut self,
        now: Nanos,
        node: NodeId,
        signal: Signal,
        hears: impl Fn(NodeId, NodeId) -> bool,
    ) {
        if let Signal::LeaderHeard { leader, term } = signal {
            self.on_leader_heard(now, node, leader, term, hears);
            return;
        }
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
        let undecided = r.new_leader.is_none();
        match signal {
            Signal::ElectionStarted { term }
                if undecided && open.last_round_term.is_none_or(|t| term > t) =>
            {
                open.last_round_term = Some(term);
                r.rounds += 1;
            }
            Signal::CampaignEligible { term }
                if undecided && open.last_eligible_term.is_none_or(|t| term > t) =>
            {
                open.last_eligible_term = Some(term);
                if let Some(n) = r.eligible_rounds.as_mut() {
                    *n += 1;
                }
            }
            _ => {}
        }
    }

    /// A process claimed leadership; `hears` as for [`FailoverTracker::on_signal`].
    pub fn on_claim(
        &mut self,
        now: Nanos,
        node: NodeId,
        term: u64,
        hears: impl Fn(NodeId, NodeId) -> bool,
    ) {
        // A later leader ends the wait for the followers to hear an earlier one.
        if self
            .heard
            .as_ref()
            .is_some_and(|w| (w.leader, w.term) != (node, term))
        {
            self.heard = None;
        }
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
            // The winner could win: its round counts even if it did not say so first.
            if let Some(n) = r.eligible_rounds.as_mut() {
                *n = (*n).max(1);
            }
            if self.signals.leader_heard && node.index() < self.members {
                let mut heard = vec![false; self.members];
                heard[node.index()] = true;
                self.heard = Some(HeardWatch {
                    done_index: None,
                    at_ns: r.at_ns,
                    leader: node,
                    term,
                    heard,
                });
                self.check_heard(now, hears);
            }
        }
    }

    /// A member crashed or a partition formed: the followers that can still hear the new
    /// leader may all have heard it.
    pub fn on_reach_changed(&mut self, now: Nanos, hears: impl Fn(NodeId, NodeId) -> bool) {
        self.check_heard(now, hears);
    }

    fn on_leader_heard(
        &mut self,
        now: Nanos,
        node: NodeId,
        leader: NodeId,
        term: u64,
        hears: impl Fn(NodeId, NodeId) -> bool,
    ) {
        let Some(w) = self.heard.as_mut() else {
            return;
        };
        if (w.leader, w.term) != (leader, term) || node.index() >= self.members {
            return;
        }
        w.heard[node.index()] = true;
        self.check_heard(now, hears);
    }

    /// Ends the wait when every member that can hear the new leader has heard it: a crashed
    /// member, or one a partition cuts off from the leader, is not waited for (a paused one
    /// is: it hears at resume).
    fn check_heard(&mut self, now: Nanos, hears: impl Fn(NodeId, NodeId) -> bool) {
        let Some(w) = self.heard.as_ref() else {
            return;
        };
        let all = w
            .heard
            .iter()
            .enumerate()
            .all(|(i, heard)| *heard || !hears(w.leader, NodeId::from(i)));
        if !all {
            return;
        }
        let w = self.heard.take().expect("checked above");
        let took = Some(now - w.at_ns);
        match w.done_index {
            Some(i) => self.done[i].followers_heard_ns = took,
            None => {
                let open = self
                    .open
                    .as_mut()
                    .expect("a watch without a place has its failover open");
                open.record.followers_heard_ns = took;
            }
        }
    }

    /// Moves the open failover to `done` (the watch, if it is this failover's, follows).
    fn push_done(&mut self, record: Failover) {
        self.done.push(record);
        if let Some(w) = self.heard.as_mut().filter(|w| w.done_index.is_none()) {
            w.done_index = Some(self.done.len() - 1);
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
        self.push_done(open.record);
    }

    /// Closes the open failover, if any, with `outcome`.
    pub fn close(&mut self, outcome: FailoverOutcome) {
        if let Some(mut open) = self.open.take() {
            open.record.outcome = outcome;
            self.push_done(open.record);
        }
    }
}

/// What the failover episodes are measured against, once the run is over.
pub struct EpisodeInputs<'a> {
    /// Every interval a node believed it led, closed at the end of the run.
    pub spans: &'a [LeadershipSpan],
    /// Every leadership claim, in order.
    pub claims: &'a [TermRecord],
    /// Per failover (in `done` order), true time its fault was over: healed, restarted or
    /// resumed; the strike itself for a fault that did not heal within the run.
    pub over_ns: &'a [Nanos],
    /// How long one leader must hold, with the fault over, for the cluster to be stable.
    pub window_ns: Nanos,
    /// True time the run ended.
    pub end_ns: Nanos,
}

/// Measures each failover's episode: from its fault to the first moment one recognised
/// leader has held leadership for `window_ns` with the fault over, or to the next failover's
/// fault, or to the end of the run; the leaderless time in it and the claims in it.
pub fn measure_episodes(failovers: &mut [Failover], inputs: &EpisodeInputs<'_>) {
    let starts: Vec<Nanos> = failovers.iter().map(|f| f.at_ns).collect();
    for (i, f) in failovers.iter_mut().enumerate() {
        let start = f.at_ns;
        let cut_ns = starts.get(i + 1).copied().unwrap_or(inputs.end_ns);
        let over = inputs.over_ns.get(i).copied().unwrap_or(start).max(start);
        // A span counts from when its node is a recognised leader: the struck leader only
        // once the fault is over.
        let recognised = |s: &LeadershipSpan| {
            let from = if s.node == f.old_leader {
                s.from_ns.max(over)
            } else {
                s.from_ns
            };
            (from < s.to_ns).then_some((from, s.to_ns))
        };
        let stable_at = inputs
            .spans
            .iter()
            .filter_map(recognised)
            .map(|(from, to)| (from.max(over).saturating_add(inputs.window_ns), to))
            .filter(|(at, to)| at <= to)
            .map(|(at, _)| at)
            .min();
        let end = stable_at.map_or(cut_ns, |at| at.min(cut_ns)).max(start);
        f.episode_stable = stable_at.is_some_and(|at| at <= cut_ns);
        f.episode_ns = end - start;
        let mut led: Vec<(Nanos, Nanos)> = inputs
            .spans
            .iter()
            .filter_map(recognised)
            .map(|(from, to)| (from.max(start), to.min(end)))
            .filter(|(from, to)| from < to)
            .collect();
        led.sort_unstable();
        f.leaderless_ns = f.episode_ns - union_ns(&led);
        let claims = inputs
            .claims
            .iter()
            .filter(|c| c.at_ns >= start && c.at_ns <= end)
            .count();
        f.leader_claims = u32::try_from(claims).unwrap_or(u32::MAX);
    }
}

/// The total length of the union of `intervals`, sorted by start.
fn union_ns(intervals: &[(Nanos, Nanos)]) -> Nanos {
    let mut total = 0;
    let mut reach: Option<Nanos> = None;
    for &(from, to) in intervals {
        let from = reach.map_or(from, |r| from.max(r));
        if to > from {
            total += to - from;
        }
        reach = Some(reach.map_or(to, |r| r.max(to)));
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> FailoverTracker {
        FailoverTracker::new(5, SignalSupport::NONE)
    }

    /// A tracker of five members for an algorithm that emits every optional signal.
    fn raft_like() -> FailoverTracker {
        FailoverTracker::new(
            5,
            SignalSupport {
                campaign_eligibility: true,
                leader_heard: true,
            },
        )
    }

    fn up(_: NodeId, _: NodeId) -> bool {
        true
    }

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
        let mut t = tracker();
        t.open(strike(1_000));
        t.on_signal(1_200, NodeId(1), Signal::LeaderSuspected, up);
        t.on_signal(1_200, NodeId(1), Signal::ElectionStarted { term: 2 }, up);
        t.on_signal(1_500, NodeId(1), Signal::ElectionStarted { term: 3 }, up);
        t.on_claim(1_600, NodeId(2), 3, up);
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
        let mut t = tracker();
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
        let mut t = tracker();
        // A resignation is over the moment it strikes.
        t.open(Strike {
            cause: "resign of leader n0".into(),
            fault_kind: "resign",
            heals_at_ns: Some(1_000),
            ..strike(1_000)
        });
        t.on_accepted_write(1_004, 998, NodeId(0), 1);
        assert!(t.done.is_empty(), "that write left before the resignation");
        t.on_claim(1_300, NodeId(2), 2, up);
        t.on_accepted_write(1_350, 1_340, NodeId(2), 2);
        assert_eq!(t.done[0].outcome, FailoverOutcome::NewLeader);
        assert_eq!(t.done[0].recovery_ns, Some(350));
    }

    #[test]
    fn a_write_sent_at_the_heal_or_later_rides_the_failover_through() {
        let mut t = tracker();
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
        let mut t = tracker();
        t.open(strike(1_000));
        t.open(strike(2_000));
        t.close(FailoverOutcome::Unresolved);
        let outcomes: Vec<_> = t.done.iter().map(|f| f.outcome).collect();
        assert_eq!(
            outcomes,
            vec![FailoverOutcome::Superseded, FailoverOutcome::Unresolved]
        );
    }

    #[test]
    fn rounds_count_every_campaigned_term_and_eligible_rounds_only_those_that_could_win() {
        let mut t = raft_like();
        t.open(strike(1_000));
        // Term 2: a short-log candidate, which no majority would vote for.
        t.on_signal(1_200, NodeId(3), Signal::ElectionStarted { term: 2 }, up);
        // Term 3: two candidates that could win split the vote.
        for node in [NodeId(1), NodeId(2)] {
            t.on_signal(1_300, node, Signal::ElectionStarted { term: 3 }, up);
            t.on_signal(1_300, node, Signal::CampaignEligible { term: 3 }, up);
        }
        // Term 4: a short-log candidate again, then one that wins term 5.
        t.on_signal(1_400, NodeId(4), Signal::ElectionStarted { term: 4 }, up);
        t.on_signal(1_500, NodeId(2), Signal::ElectionStarted { term: 5 }, up);
        t.on_signal(1_500, NodeId(2), Signal::CampaignEligible { term: 5 }, up);
        t.on_claim(1_520, NodeId(2), 5, up);
        t.on_signal(1_530, NodeId(1), Signal::ElectionStarted { term: 6 }, up);
        t.on_signal(1_530, NodeId(1), Signal::CampaignEligible { term: 6 }, up);
        t.on_accepted_write(1_600, 1_590, NodeId(2), 5);
        let f = &t.done[0];
        assert_eq!(f.rounds, 4, "terms 2, 3, 4 and 5; nothing after the claim");
        assert_eq!(f.eligible_rounds, Some(2), "terms 3 and 5");
    }

    #[test]
    fn an_algorithm_that_does_not_say_who_could_win_has_no_eligible_rounds() {
        let mut t = tracker();
        t.open(strike(1_000));
        t.on_signal(1_200, NodeId(1), Signal::ElectionStarted { term: 2 }, up);
        // Even a stray signal is not counted: the algorithm did not declare it.
        t.on_signal(1_200, NodeId(1), Signal::CampaignEligible { term: 2 }, up);
        t.on_claim(1_300, NodeId(1), 2, up);
        t.on_signal(
            1_310,
            NodeId(2),
            Signal::LeaderHeard {
                leader: NodeId(1),
                term: 2,
            },
            up,
        );
        t.on_accepted_write(1_400, 1_390, NodeId(1), 2);
        let f = &t.done[0];
        assert_eq!((f.rounds, f.eligible_rounds), (1, None));
        assert_eq!(f.followers_heard_ns, None);
    }

    #[test]
    fn a_winner_that_never_said_it_could_win_still_makes_one_eligible_round() {
        let mut t = raft_like();
        t.open(strike(1_000));
        t.on_claim(1_300, NodeId(1), 2, up);
        assert_eq!(t.open.as_ref().unwrap().record.eligible_rounds, Some(1));
    }

    #[test]
    fn followers_heard_is_timed_when_the_last_live_follower_hears_the_new_leader() {
        let mut t = raft_like();
        t.open(strike(1_000));
        // n0, the old leader, is crashed; n2 wins term 2.
        let live = |_, n: NodeId| n != NodeId(0);
        t.on_claim(1_300, NodeId(2), 2, live);
        let heard = |leader, term| Signal::LeaderHeard { leader, term };
        t.on_signal(1_310, NodeId(1), heard(NodeId(2), 2), live);
        // A heartbeat of another leader or term is not this one.
        t.on_signal(1_315, NodeId(3), heard(NodeId(1), 2), live);
        t.on_signal(1_316, NodeId(3), heard(NodeId(2), 1), live);
        t.on_signal(1_320, NodeId(3), heard(NodeId(2), 2), live);
        // The new leader's first write closes the failover before n4 heard it.
        t.on_accepted_write(1_350, 1_340, NodeId(2), 2);
        assert_eq!(t.done[0].followers_heard_ns, None);
        t.on_signal(1_390, NodeId(4), heard(NodeId(2), 2), live);
        let f = &t.done[0];
        assert_eq!(f.election_ns, Some(300));
        assert_eq!(f.recovery_ns, Some(350));
        assert_eq!(f.followers_heard_ns, Some(390));
    }

    #[test]
    fn a_follower_that_crashes_before_hearing_is_no_longer_waited_for() {
        let mut t = raft_like();
        t.open(strike(1_000));
        let all_up = |_, _: NodeId| true;
        t.on_claim(1_300, NodeId(2), 2, all_up);
        for n in [0, 1, 3] {
            let signal = Signal::LeaderHeard {
                leader: NodeId(2),
                term: 2,
            };
            t.on_signal(1_310, NodeId(n), signal, all_up);
        }
        assert_eq!(t.open.as_ref().unwrap().record.followers_heard_ns, None);
        t.on_reach_changed(1_340, |_, n| n != NodeId(4));
        assert_eq!(
            t.open.as_ref().unwrap().record.followers_heard_ns,
            Some(340)
        );
    }

    #[test]
    fn a_follower_cut_off_from_the_new_leader_is_not_waited_for() {
        let mut t = raft_like();
        t.open(strike(1_000));
        // The old leader n0 is isolated: it cannot hear n2 until the heal.
        let isolated_0 = |_, n: NodeId| n != NodeId(0);
        t.on_claim(1_300, NodeId(2), 2, isolated_0);
        for n in [1, 3, 4] {
            let signal = Signal::LeaderHeard {
                leader: NodeId(2),
                term: 2,
            };
            t.on_signal(1_300 + 10 * u64::from(n), NodeId(n), signal, isolated_0);
        }
        let f = &t.open.as_ref().unwrap().record;
        assert_eq!(f.followers_heard_ns, Some(340), "not the heal time");
    }

    #[test]
    fn a_partition_cutting_off_the_last_follower_ends_the_wait() {
        let mut t = raft_like();
        t.open(strike(1_000));
        t.on_claim(1_300, NodeId(2), 2, up);
        for n in [0, 1, 3] {
            let signal = Signal::LeaderHeard {
                leader: NodeId(2),
                term: 2,
            };
            t.on_signal(1_310, NodeId(n), signal, up);
        }
        assert_eq!(t.open.as_ref().unwrap().record.followers_heard_ns, None);
        // n4 is cut off from the leader (one way is enough: it cannot hear it).
        t.on_reach_changed(1_350, |leader, n| !(leader == NodeId(2) && n == NodeId(4)));
        assert_eq!(
            t.open.as_ref().unwrap().record.followers_heard_ns,
            Some(350)
        );
    }

    #[test]
    fn a_new_fault_or_leader_before_everyone_heard_leaves_the_time_unmeasured() {
        let heard = Signal::LeaderHeard {
            leader: NodeId(2),
            term: 2,
        };
        let mut t = raft_like();
        t.open(strike(1_000));
        t.on_claim(1_300, NodeId(2), 2, up);
        t.on_accepted_write(1_350, 1_340, NodeId(2), 2);
        t.open(strike(2_000));
        for n in [0, 1, 3, 4] {
            t.on_signal(2_010, NodeId(n), heard, up);
        }
        assert_eq!(t.done[0].followers_heard_ns, None, "a new fault came first");

        let mut t = raft_like();
        t.open(strike(1_000));
        t.on_claim(1_300, NodeId(2), 2, up);
        t.on_claim(1_500, NodeId(3), 3, up);
        for n in [0, 1, 3, 4] {
            t.on_signal(1_510, NodeId(n), heard, up);
        }
        t.on_accepted_write(1_550, 1_540, NodeId(2), 2);
        assert_eq!(
            t.done[0].followers_heard_ns, None,
            "a later leader came first"
        );
    }

    fn span(node: u32, from_ns: Nanos, to_ns: Nanos) -> LeadershipSpan {
        LeadershipSpan {
            node: NodeId(node),
            term: 0,
            from_ns,
            to_ns,
        }
    }

    fn claim(node: u32, at_ns: Nanos) -> TermRecord {
        TermRecord {
            term: 0,
            node: NodeId(node),
            token: 0,
            at_ns,
        }
    }

    fn struck_at(at_ns: Nanos) -> Failover {
        let mut t = tracker();
        t.open(strike(at_ns));
        t.close(FailoverOutcome::Unresolved);
        t.done.pop().unwrap()
    }

    #[test]
    fn an_episode_sums_every_leaderless_gap_until_one_leader_holds_with_the_fault_over() {
        // n0 led until its isolation at 1_000 (it still believes it leads until 5_000, the
        // heal: not counted); n1 leads 1_200-1_500, n2 1_700-2_000, n1 2_300 on.
        let spans = [
            span(0, 0, 5_000),
            span(1, 1_200, 1_500),
            span(2, 1_700, 2_000),
            span(1, 2_300, 9_000),
        ];
        let claims = [
            claim(0, 0),
            claim(1, 1_200),
            claim(2, 1_700),
            claim(1, 2_300),
        ];
        let mut fs = [struck_at(1_000)];
        let inputs = EpisodeInputs {
            spans: &spans,
            claims: &claims,
            over_ns: &[5_000],
            window_ns: 400,
            end_ns: 9_000,
        };
        measure_episodes(&mut fs, &inputs);
        let f = &fs[0];
        assert_eq!(f.leaderless_ns, 200 + 200 + 300);
        assert_eq!(f.leader_claims, 3);
        assert!(f.episode_stable);
        assert_eq!(f.episode_ns, 5_400 - 1_000, "held 400 past the heal");
    }

    #[test]
    fn the_next_strike_cuts_an_episode_short_and_the_struck_leader_counts_after_its_heal() {
        // A pause of n0 from 1_000 to 1_300, nobody else elected: n0 leads again at 1_300.
        let spans = [span(0, 0, 9_000)];
        let mut fs = [struck_at(1_000), struck_at(1_500)];
        let inputs = EpisodeInputs {
            spans: &spans,
            claims: &[claim(0, 0)],
            over_ns: &[1_300, 1_800],
            window_ns: 400,
            end_ns: 9_000,
        };
        measure_episodes(&mut fs, &inputs);
        assert_eq!((fs[0].episode_ns, fs[0].episode_stable), (500, false));
        assert_eq!(fs[0].leaderless_ns, 300);
        assert_eq!(fs[0].leader_claims, 0);
        assert_eq!((fs[1].episode_ns, fs[1].episode_stable), (700, true));
        assert_eq!(fs[1].leaderless_ns, 300);
    }

    #[test]
    fn a_cluster_of_one_has_heard_its_leader_at_the_claim() {
        let mut t = FailoverTracker::new(
            1,
            SignalSupport {
                campaign_eligibility: true,
                leader_heard: true,
            },
        );
        t.open(strike(1_000));
        t.on_claim(1_100, NodeId(0), 2, up);
        assert_eq!(
            t.open.as_ref().unwrap().record.followers_heard_ns,
            Some(100)
        );
    }
}
