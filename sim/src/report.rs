//! The results of one run: what the CLI prints, `--json` emits and reports chart.

use crate::checker::Violation;
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::time::Nanos;
use serde::Serialize;

/// One run's outcome and measurements.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub algorithm: String,
    pub seed: u64,
    pub members: usize,
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
    pub failovers: Vec<Failover>,
    /// Every election: from the first campaign signal to the next claim.
    pub elections: Vec<ElectionRecord>,
    /// Messages by type, in the algorithm's type order, then `write`.
    pub messages: Vec<MessageStats>,
    pub drops: DropStats,
    pub writes: WriteStats,
    pub counters: Counters,
    /// Real time during which two or more nodes believed they led at once.
    pub overlap_ns: Nanos,
    pub faults: Vec<FaultRecord>,
    /// The first occurrence of each broken invariant (liveness included).
    pub violations: Vec<Violation>,
    pub liveness: LivenessVerdict,
    /// The leader the oracle sees when the run ends.
    pub final_leader: Option<NodeId>,
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
        matches!(self.liveness, LivenessVerdict::Missed { .. })
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
    pub term: u64,
    pub node: NodeId,
    pub token: u64,
    pub at_ns: Nanos,
}

/// A node believing it led, from `from_ns` to `to_ns` (the end of the run if it still did).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeadershipSpan {
    pub node: NodeId,
    pub term: u64,
    pub from_ns: Nanos,
    pub to_ns: Nanos,
}

/// A lease a coordination service held for `node`, in true time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeaseSpan {
    pub node: NodeId,
    pub from_ns: Nanos,
    pub to_ns: Nanos,
}

/// One election, from the first node to campaign (or pre-vote) while none was under way, to
/// the next leadership claim; with every message sent meanwhile, by type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ElectionRecord {
    pub started_ns: Nanos,
    /// When a node claimed leadership; `None` if the run ended first.
    pub decided_ns: Option<Nanos>,
    pub winner: Option<NodeId>,
    pub term: Option<u64>,
    /// Campaign signals (elections and pre-votes started) during the election.
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
    pub kind: String,
    pub count: u64,
}

/// Message counts of one type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MessageStats {
    pub kind: String,
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub duplicated: u64,
}

/// Why messages were dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DropStats {
    pub partition: u64,
    pub loss: u64,
    pub crashed_receiver: u64,
}

/// What happened at the resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WriteStats {
    /// Writes sent by nodes that believed they led.
    pub attempted: u64,
    pub accepted: u64,
    /// Stale writes the fencing check rejected.
    pub rejected_stale: u64,
}

/// Event counts the algorithms report through signals, plus derived ones.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub elections_started: u64,
    pub pre_votes_started: u64,
    /// Election rounds that ended without a winner (split votes, timeouts).
    pub failed_rounds: u64,
    pub leader_suspicions: u64,
    pub disruptions_prevented: u64,
    /// Claims by a node other than the previous claimant.
    pub leader_changes: u64,
    /// Terms in which two or more nodes were candidates (dueling candidates).
    pub dueling_candidate_terms: u64,
    /// Elections or pre-votes started by a node that could not reach a majority of the members.
    pub minority_elections: u64,
    /// Writes that reached the resource with a token below one it had accepted.
    pub stale_write_attempts: u64,
    /// Leases or sessions a service expired while their holder still believed it led.
    pub leases_expired_while_leading: u64,
    /// Writes that fencing rejected from a leader of a higher term than the writer of the
    /// highest accepted token: an older leader's token locks the newer one out (tokens that
    /// do not follow terms, like wall-clock tokens under a clock step). Safe, but unavailable.
    pub locked_out_writes: u64,
}

/// A fault as it was applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    pub at_ns: Nanos,
    pub kind: String,
    /// What happened, for people: `crash n2 (leader)`, `skipped: nobody leads`.
    pub description: String,
    pub nodes: Vec<NodeId>,
    /// When it healed (restart, heal, resume), if it did.
    pub healed_at_ns: Option<Nanos>,
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
    pub cause: String,
    pub fault_kind: String,
    pub at_ns: Nanos,
    pub old_leader: NodeId,
    pub old_term: u64,
    /// Fault to the first node acting on it (suspecting, pre-voting, electing).
    pub detection_ns: Option<Nanos>,
    /// Fault to the new leader's claim.
    pub election_ns: Option<Nanos>,
    /// Fault to the new leader's first accepted write.
    pub recovery_ns: Option<Nanos>,
    /// Last accepted write before the fault to the first accepted one after it.
    pub unavailable_ns: Option<Nanos>,
    /// Election rounds (distinct terms started) until the new leader.
    pub rounds: u32,
    pub new_leader: Option<NodeId>,
    pub new_term: Option<u64>,
    pub outcome: FailoverOutcome,
}

/// The liveness verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum LivenessVerdict {
    /// Every live connected member recognised `leader` at `at_ns`.
    Met {
        quiet_from_ns: Nanos,
        leader: NodeId,
        at_ns: Nanos,
    },
    /// No such leader within the bound.
    Missed {
        quiet_from_ns: Nanos,
        bound_ns: Nanos,
        group: Vec<NodeId>,
    },
    /// The scenario itself made progress impossible; not a failure of the algorithm.
    Impossible {
        quiet_from_ns: Nanos,
        reason: String,
    },
    /// Faults were still active (not all fired or healed) when the run ended.
    FaultsActive { end_ns: Nanos },
    /// The run ended before the bound ran out and before a leader was recognised.
    Inconclusive {
        quiet_from_ns: Nanos,
        bound_ns: Nanos,
        end_ns: Nanos,
    },
}
