//! The results of one run: what the CLI prints, `--json` emits and reports chart.

use crate::checker::Violation;
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::time::Nanos;
use serde::Serialize;

/// One run's outcome and measurements.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// The algorithm's short name ([`AlgorithmInfo::name`](crate::AlgorithmInfo::name)).
    pub algorithm: String,
    /// The seed every random stream of the run derives from.
    pub seed: u64,
    /// The number of election members (a modeled service is not one).
    pub members: usize,
    /// The optional signals the algorithm emits: which measures are numbers, not `n/a`.
    pub signals: crate::config::SignalSupport,
    /// True time the run ended at.
    pub end_ns: Nanos,
    /// Events handled (deliveries, timers, faults, ...).
    pub events: u64,
    /// Every leadership claim, in order: the leaders by term.
    pub leaders: Vec<TermRecord>,
    /// Every interval during which a node believed it led.
    pub leadership_spans: Vec<LeadershipSpan>,
    /// Every interval during which a coordination service held a lease (key, session, Lease
    /// record) for a candidate, by true time; empty for algorithms without a service.
    pub lease_spans: Vec<LeaseSpan>,
    /// Every fault that struck the leader, with how long the cluster took to recover.
    pub failovers: Vec<Failover>,
    /// Every election: from the first campaign signal of a node that could win to the next
    /// claim.
    pub elections: Vec<ElectionRecord>,
    /// Messages of futile campaigns, by type (types with none left out): sent by or to a
    /// member that campaigned while it could not win (cut off from a majority of the
    /// members, or from the coordination service) and still could not. No election record
    /// is charged them ([`Counters::futile_campaigns`] counts the campaigns).
    pub futile_campaign_messages: Vec<KindCount>,
    /// Messages by type, in the algorithm's type order, then `write`.
    pub messages: Vec<MessageStats>,
    /// Dropped messages, by cause.
    pub drops: DropStats,
    /// What the cluster costs when nothing happens: steady time and the messages sent in it.
    pub steady_state: SteadyState,
    /// Writes to the fenced resource and their verdicts.
    pub writes: WriteStats,
    /// The algorithms' signals counted, and counts derived from the run.
    pub counters: Counters,
    /// Real time during which two or more nodes believed they led at once.
    pub overlap_ns: Nanos,
    /// Real time during which two or more nodes that could act (not crashed, paused,
    /// suspended or stalled) believed they led at once ([`crate::downtime`]).
    pub acting_overlap_ns: Nanos,
    /// The stretches with no leader that could act, after the first one could
    /// ([`crate::downtime`]).
    pub downtime: Vec<crate::downtime::Downtime>,
    /// Every fault, as it was applied, in the order it fired.
    pub faults: Vec<FaultRecord>,
    /// The first occurrence of each broken invariant (liveness included).
    pub violations: Vec<Violation>,
    /// Whether a leader appeared in time after the last fault.
    pub liveness: LivenessVerdict,
    /// The first time a quorum, live and connected while other faults were still active,
    /// recognised no leader within the bound (liveness failed before the last fault).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<crate::liveness::Stall>,
    /// The leader the oracle sees when the run ends.
    pub final_leader: Option<NodeId>,
    /// The processes' own observations (`Ctx::observe`), counted by name in the order first
    /// made; counted only in a run with properties of its own. A property over a name never
    /// observed held without being tested.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub observations: Vec<KindCount>,
    /// What the run's own properties measured ([`Property::measures`](crate::Property::measures)),
    /// in the order of the properties: blast radius, balance, whatever an algorithm reports.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<crate::property::Measured>,
    /// What the run's own properties followed over time ([`Property::curves`](crate::Property::curves)).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<crate::property::Curve>,
}

impl DropStats {
    /// Every drop, whatever its cause: the sum of the `dropped` column.
    pub fn total(&self) -> u64 {
        self.partition + self.loss + self.crashed_receiver + self.broken_connection
    }
}

impl RunReport {
    /// The safety invariants that broke, in stable order.
    pub fn violated_safety(&self) -> Vec<Invariant> {
        let mut broken: Vec<Invariant> = self
            .violations
            .iter()
            .map(|v| v.invariant)
            .filter(|inv| inv.is_safety())
            .collect();
        broken.sort();
        broken
    }

    /// Whether liveness failed (a leader did not appear in time).
    pub fn liveness_failed(&self) -> bool {
        matches!(self.liveness, LivenessVerdict::Missed { .. }) || self.stall.is_some()
    }

    /// Total messages sent, `write`s to the resource excluded.
    pub fn protocol_messages_sent(&self) -> u64 {
        self.messages
            .iter()
            .filter(|m| m.kind != WRITE_KIND)
            .map(|m| m.sent)
            .sum()
    }
}

/// The message type name of a write to the resource.
pub const WRITE_KIND: &str = "write";

/// A claim of leadership.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TermRecord {
    /// The term claimed.
    pub term: u64,
    /// The claimant.
    pub node: NodeId,
    /// The fencing token it writes with.
    pub token: u64,
    /// True time of the claim.
    pub at_ns: Nanos,
}

/// A node believing it led, from `from_ns` to `to_ns` (the end of the run if it still did).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeadershipSpan {
    /// The node that believed it led.
    pub node: NodeId,
    /// The term it believed it led.
    pub term: u64,
    /// True time of its claim.
    pub from_ns: Nanos,
    /// True time it stepped down or crashed, or the end of the run.
    pub to_ns: Nanos,
}

/// A lease a coordination service held for `node`, in true time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeaseSpan {
    /// The candidate the lease was held for.
    pub node: NodeId,
    /// True time the service granted it ([`Signal::LeaseHeld`](crate::Signal::LeaseHeld)).
    pub from_ns: Nanos,
    /// True time it ended ([`Signal::LeaseEnded`](crate::Signal::LeaseEnded)), or the end of
    /// the run.
    pub to_ns: Nanos,
}

/// One election, from the first node that could win to campaign (or pre-vote) while none
/// was under way, to the next leadership claim; with every message sent meanwhile, by type,
/// except a leader's (the steady state) and those of futile campaigns
/// ([`RunReport::futile_campaign_messages`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ElectionRecord {
    /// True time of the first campaign signal.
    pub started_ns: Nanos,
    /// When a node claimed leadership; `None` if the run ended first or the election was
    /// abandoned.
    pub decided_ns: Option<Nanos>,
    /// When every node that campaigned in it had accepted a leader without anyone claiming
    /// (a pre-vote refused by the followers of a live leader, say): the election ended
    /// undecided. `None` for a decided election, or one the run ended (Raft alone reports
    /// the `LeaderHeard` signal this needs; for the others an election runs to the next
    /// claim).
    pub abandoned_ns: Option<Nanos>,
    /// The node that claimed, if one did.
    pub winner: Option<NodeId>,
    /// The term it claimed.
    pub term: Option<u64>,
    /// Campaign signals (elections and pre-votes started) during the election, futile ones
    /// left out.
    pub campaigns: u64,
    /// Messages sent during the election, by type (types with none are left out).
    pub messages: Vec<KindCount>,
}

impl ElectionRecord {
    /// Messages of every type sent during the election.
    pub fn total_messages(&self) -> u64 {
        self.messages.iter().map(|m| m.count).sum()
    }

    /// Messages of type `kind` sent during the election.
    pub fn messages_of(&self, kind: &str) -> u64 {
        self.messages
            .iter()
            .filter(|m| m.kind == kind)
            .map(|m| m.count)
            .sum()
    }
}

/// A count of one message type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KindCount {
    /// The message type's name ([`Message::KINDS`](crate::Message::KINDS), or `write`).
    pub kind: String,
    /// How many were sent.
    pub count: u64,
}

/// Message counts of one type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MessageStats {
    /// The message type's name ([`Message::KINDS`](crate::Message::KINDS), or `write`).
    pub kind: String,
    /// Handed to the network.
    pub sent: u64,
    /// Handled by their receiver (a duplicate counts again).
    pub delivered: u64,
    /// Lost to a partition, to random loss, to a crashed receiver, or with a broken
    /// `Stream` connection ([`DropStats`] by cause).
    pub dropped: u64,
    /// Sent twice by the network's duplication.
    pub duplicated: u64,
    /// Still under way when the run ended: travelling, held back on a `Stream` connection,
    /// or held for a paused receiver. Every row adds up:
    /// `sent + duplicated = delivered + dropped + in_flight` ([`MessageStats::balances`]).
    pub in_flight: u64,
}

impl MessageStats {
    /// Whether every copy handed to the network is accounted for:
    /// `sent + duplicated = delivered + dropped + in_flight`.
    pub fn balances(&self) -> bool {
        self.sent + self.duplicated == self.delivered + self.dropped + self.in_flight
    }
}

/// The steady state of a run (docs/reports.md, "Steady-state cost"): the time during which
/// no fault was under way, no election open, no futile campaign, and the leader had held for
/// twice the failure-detection time; and the messages sent meanwhile, by type (the workload's
/// writes left out). Message sizes are not modelled: there is no byte count.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SteadyState {
    /// Steady time in all.
    pub duration_ns: Nanos,
    /// Messages sent by members while steady, by type (types with none left out).
    pub messages: Vec<KindCount>,
    /// Messages sent by the coordination service's own process while steady, by type
    /// (empty for algorithms without a modelled service).
    pub service_messages: Vec<KindCount>,
}

impl SteadyState {
    /// Messages per second of steady time, members' and the service's; `None` without
    /// steady time.
    pub fn per_second(&self, kinds: &[KindCount]) -> Option<f64> {
        let total: u64 = kinds.iter().map(|k| k.count).sum();
        (self.duration_ns > 0).then(|| total as f64 * 1e9 / self.duration_ns as f64)
    }
}

/// Why messages were dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DropStats {
    /// Cut by a partition, at the send or (formed in flight) at the arrival.
    pub partition: u64,
    /// Lost to the network's random loss.
    pub loss: u64,
    /// Arrived at a crashed process, or held for a paused one that crashed before it
    /// resumed.
    pub crashed_receiver: u64,
    /// Lost with the `Stream` connection they were on (held back or in flight when it
    /// broke).
    pub broken_connection: u64,
    /// `Stream` only, not drops: sends lost or cut and sent again by the connection (they
    /// arrive late, or are lost with it).
    pub retransmissions: u64,
    /// `Stream` only: connections that broke (cut past their timeout, an end crashed, or an
    /// end closed them).
    pub connections_broken: u64,
}

/// What happened at the resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WriteStats {
    /// Writes sent by nodes that believed they led.
    pub attempted: u64,
    /// Writes the resource accepted.
    pub accepted: u64,
    /// Stale writes the fencing check rejected.
    pub rejected_stale: u64,
    /// Stale writes that reached the resource: accepted with a token below the highest it had
    /// accepted (only without fencing).
    pub accepted_stale: u64,
}

/// Event counts the algorithms report through signals, plus derived ones.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// [`Signal::ElectionStarted`](crate::Signal::ElectionStarted) signals: elections
    /// started by candidates, or vacancies declared by a service.
    pub elections_started: u64,
    /// [`Signal::PreVoteStarted`](crate::Signal::PreVoteStarted) signals: pre-election probes.
    pub pre_votes_started: u64,
    /// Election rounds that ended without a winner (split votes, timeouts).
    pub failed_rounds: u64,
    /// [`Signal::LeaderSuspected`](crate::Signal::LeaderSuspected) signals: a node noticed
    /// its leader or lease gone.
    pub leader_suspicions: u64,
    /// [`Signal::DisruptionPrevented`](crate::Signal::DisruptionPrevented) signals: requests
    /// refused because the refuser heard from a leader recently.
    pub disruptions_prevented: u64,
    /// Claims by a node other than the previous claimant.
    pub leader_changes: u64,
    /// Claims by the previous claimant again, for a new term (a holder that lost its lease
    /// and took it back): no leader change, but leadership was lost and regained.
    pub reacquisitions: u64,
    /// Terms in which two or more nodes were candidates (dueling candidates).
    pub dueling_candidate_terms: u64,
    /// Elections or pre-votes started by a node that could not reach a majority of the members.
    pub minority_elections: u64,
    /// Elections or pre-votes started by a member that could not win: cut off from a
    /// majority of the members or, where members elect through a coordination service, from
    /// the service (or the service is down). They open no election record.
    pub futile_campaigns: u64,
    /// Writes that reached the resource with a token below one it had accepted.
    pub stale_write_attempts: u64,
    /// Leases or sessions a service expired while their holder still believed it led.
    pub leases_expired_while_leading: u64,
    /// Writes that fencing rejected from a leader of a higher term than the writer of the
    /// highest accepted token: an older leader's token locks the newer one out (tokens that
    /// do not follow terms, like wall-clock tokens under a clock step). The checker judges each a
    /// `fencing_safety` violation (docs/engine.md); this counts them.
    pub locked_out_writes: u64,
}

/// A fault as it was applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    /// True time the fault fired.
    pub at_ns: Nanos,
    /// Its kind ([`FaultAction::kind_name`](crate::FaultAction::kind_name): `crash`,
    /// `partition`, ...).
    pub kind: String,
    /// What happened, for people: `crash n2 (leader)`, `skipped: nobody leads`.
    pub description: String,
    /// The nodes its target resolved to when it fired.
    pub nodes: Vec<NodeId>,
    /// When it healed (restart, heal, resume), if it did.
    pub healed_at_ns: Option<Nanos>,
    /// Its target matched nobody when it fired (no leader to crash, say): it did nothing.
    pub skipped: bool,
    /// Safety breaks attributed to it: each step that broke a safety invariant counts for
    /// the faults in effect then, and for the one that healed last unless a fault in effect
    /// began after that heal (docs/reports.md, "Safety by fault kind").
    pub safety_violations: u64,
}

/// How a failover ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailoverOutcome {
    /// Another node (or a later term) took over and wrote.
    NewLeader,
    /// The old leader came back in its own term and wrote again before anyone took over.
    RiddenThrough,
    /// Another fault struck the leader before this one resolved.
    Superseded,
    /// The run ended first.
    Unresolved,
}

/// One failover: a fault struck the leader; how long until things worked again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Failover {
    /// What struck the leader, for people: `crash of leader n2`.
    pub cause: String,
    /// The kind of that fault (`crash`, `pause`, ...).
    pub fault_kind: String,
    /// True time of the fault.
    pub at_ns: Nanos,
    /// The leader it struck.
    pub old_leader: NodeId,
    /// The term that leader led.
    pub old_term: u64,
    /// Fault to the first node acting on it (suspecting, pre-voting, electing).
    pub detection_ns: Option<Nanos>,
    /// Fault to the new leader's claim.
    pub election_ns: Option<Nanos>,
    /// Fault to the new leader's first accepted write.
    pub recovery_ns: Option<Nanos>,
    /// Last accepted write before the fault to the first accepted one after it.
    pub unavailable_ns: Option<Nanos>,
    /// Fault to the moment every member that can hear the new leader had heard it
    /// (accepted its first heartbeat, [`Signal::LeaderHeard`](crate::Signal::LeaderHeard)):
    /// the Raft paper's measure of a failover. A crashed member, or one a partition cuts off
    /// from the new leader, is not waited for; a paused one is. `None` when the algorithm does not report it, when nobody took
    /// over, or when a later fault or leader came first.
    pub followers_heard_ns: Option<Nanos>,
    /// Election rounds (distinct terms started) until the new leader, whoever campaigned.
    pub rounds: u32,
    /// Of those, the rounds in which a candidate that could win campaigned
    /// ([`Signal::CampaignEligible`](crate::Signal::CampaignEligible)); `None` when the
    /// algorithm does not say which candidates could win.
    pub eligible_rounds: Option<u32>,
    /// The node that took over: another node, or the old one in a later term.
    pub new_leader: Option<NodeId>,
    /// The term the new leader claimed.
    pub new_term: Option<u64>,
    /// How the failover ended.
    pub outcome: FailoverOutcome,
    /// The failover's whole episode, from the fault until the cluster was stable again
    /// (docs/reports.md, "Leaderless time"): time during which no node was a recognised
    /// leader (none believed it led, the struck leader not counted before its fault was
    /// over), summed over the episode.
    pub leaderless_ns: Nanos,
    /// Leadership claims during the episode: the first new leader and every re-election
    /// after it (a node re-elected in a new term counts again).
    pub leader_claims: u32,
    /// From the fault to the end of the episode.
    pub episode_ns: Nanos,
    /// Whether the episode ended stable (one recognised leader held leadership for the
    /// stability window with the fault over); `false`: the next strike of the leader or the
    /// end of the run cut it short.
    pub episode_stable: bool,
}

/// The liveness verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum LivenessVerdict {
    /// Every live connected member recognised `leader` at `at_ns`.
    Met {
        /// True time the faults were over and the watch began.
        quiet_from_ns: Nanos,
        /// The leader everyone recognised.
        leader: NodeId,
        /// True time the last member of the group recognised it.
        at_ns: Nanos,
    },
    /// No such leader within the bound.
    Missed {
        /// True time the faults were over and the watch began.
        quiet_from_ns: Nanos,
        /// How long a leader had to appear.
        bound_ns: Nanos,
        /// The members that had to agree: the live, mutually connected ones, or (members
        /// electing through a coordination service) the live ones that reach the service.
        group: Vec<NodeId>,
    },
    /// The scenario itself made progress impossible; not a failure of the algorithm.
    Impossible {
        /// True time the faults were over.
        quiet_from_ns: Nanos,
        /// Why, for people: too few live, connected members for the algorithm, or the
        /// coordination service down.
        reason: String,
    },
    /// Faults were still active (not all fired or healed) when the run ended.
    FaultsActive {
        /// True time the run ended.
        end_ns: Nanos,
    },
    /// The run ended before the bound ran out and before a leader was recognised.
    Inconclusive {
        /// True time the faults were over and the watch began.
        quiet_from_ns: Nanos,
        /// How long a leader had to appear.
        bound_ns: Nanos,
        /// True time the run ended, before `quiet_from_ns + bound_ns`.
        end_ns: Nanos,
    },
}
