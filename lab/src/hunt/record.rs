//! What a hunt keeps of each seed: one JSON line per seed, appended as the hunt goes.

use serde::{Deserialize, Serialize};
use splitbrain_scenario::verdict::Outcome;
use splitbrain_sim::downtime::{Downtime, DowntimeCause};
use splitbrain_sim::nemesis::Drawn;
use splitbrain_sim::{Invariant, RunReport};

/// Why a seed failed, under a stable key: an invariant name, `liveness`, or
/// `missing:<invariant>` when an expected violation did not happen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The stable key: an invariant name, `liveness`, `objective`, `missing:<invariant>`,
    /// `panic`, `limit` or `refused`.
    pub key: String,
    /// When it happened, if a time is known.
    pub at_ns: Option<u64>,
    /// The nodes involved.
    pub nodes: Vec<u32>,
    /// What happened, in words.
    pub detail: String,
}

impl Failure {
    /// Whether it is a safety invariant violated against `expect`: not liveness, a missed
    /// objective, a panic, an outgrown limit, a refused effect, nor an expected violation that
    /// did not happen (`missing:`). Narrower than a hunt's exit code 1
    /// ([`HuntVerdict::of_keys`](super::summary::HuntVerdict::of_keys)), which panics, refused effects,
    /// missed objectives and `missing:` expectations give too.
    pub fn is_safety_violation(&self) -> bool {
        let key = self.key.as_str();
        key != "liveness"
            && !splitbrain_sim::property::RESERVED_NAMES.contains(&key)
            && !key.starts_with("missing:")
    }
}

/// The failure key of a seed whose run panicked.
pub const PANIC_KEY: &str = "panic";

/// The failure key of a seed whose run outgrew its runtime guard (`--max-events`,
/// `--max-in-flight`, `--max-memory`, `--max-node-in-flight`, `--max-time`): never shrunk
/// (each try would run to the limit again).
pub const LIMIT_KEY: &str = "limit";

/// The failure key of a seed whose process asked for an effect the engine refuses (a
/// message to a node that does not exist...): a bug in the algorithm.
pub const REFUSED_KEY: &str = "refused";

/// Every outcome a record may have, as written (see [`SeedRecord::outcome`]).
pub const OUTCOMES: [&str; 7] = [
    "matched",
    "safety_mismatch",
    "liveness_failed",
    "objective_missed",
    "panicked",
    OUTGREW_LIMITS,
    REFUSED_EFFECT,
];

/// The outcome of a seed whose process asked for an effect the engine refuses.
pub const REFUSED_EFFECT: &str = "refused_effect";

/// The outcome of a seed whose run outgrew its runtime guard.
pub const OUTGREW_LIMITS: &str = "outgrew_limits";

/// How many coverage counters there are.
pub const COVERAGE_KINDS: usize = 9;

/// The coverage counters of one run: the dangerous situations it reached.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Failed election rounds.
    pub split_votes: u64,
    /// Terms with two or more candidates.
    pub dueling_candidates: u64,
    /// Writes of a stale leader that reached the resource.
    pub stale_leader_writes: u64,
    /// Elections attempted on a minority side.
    pub minority_elections: u64,
    /// Leases that expired while their holder led.
    pub leases_expired_while_leading: u64,
    /// Absent from records written before it was counted.
    #[serde(default)]
    pub locked_out_writes: u64,
    /// Leadership passing from one node to another (a leader crashed, deposed, or replaced
    /// while alive: a slow disk's spurious election). Absent from older records.
    #[serde(default)]
    pub leader_changes: u64,
    /// Failovers.
    pub failovers: u64,
    /// Faults injected.
    pub faults: u64,
}

impl Coverage {
    /// The counters by name, in output order.
    pub fn named(&self) -> [(&'static str, u64); COVERAGE_KINDS] {
        [
            ("split votes (failed election rounds)", self.split_votes),
            (
                "dueling candidates (terms with two or more)",
                self.dueling_candidates,
            ),
            (
                "stale leader writes reaching the resource",
                self.stale_leader_writes,
            ),
            (
                "elections attempted on a minority side",
                self.minority_elections,
            ),
            (
                "leases expired while the holder led",
                self.leases_expired_while_leading,
            ),
            (
                "newer leaders' writes locked out by an older token",
                self.locked_out_writes,
            ),
            ("leader changes", self.leader_changes),
            ("failovers", self.failovers),
            ("faults injected", self.faults),
        ]
    }

    fn from_report(report: &RunReport) -> Self {
        let c = &report.counters;
        Self {
            split_votes: c.failed_rounds,
            dueling_candidates: c.dueling_candidate_terms,
            stale_leader_writes: c.stale_write_attempts,
            minority_elections: c.minority_elections,
            leases_expired_while_leading: c.leases_expired_while_leading,
            locked_out_writes: c.locked_out_writes,
            leader_changes: c.leader_changes,
            failovers: report.failovers.len() as u64,
            faults: report.faults.len() as u64,
        }
    }
}

/// One seed's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedRecord {
    /// The seed.
    pub seed: u64,
    /// `matched`, `safety_mismatch`, `liveness_failed`, `objective_missed`, `panicked` or
    /// `outgrew_limits`.
    pub outcome: String,
    /// Why it failed (empty: it matched).
    pub failures: Vec<Failure>,
    /// Events the run handled.
    pub events: u64,
    /// The dangerous situations it reached.
    pub coverage: Coverage,
    /// What the seed's nemesis drew: its kinds with their weights and its rates (swarm mode
    /// draws them per seed). Absent without a nemesis, and from records written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<Drawn>,
    /// The observations the scenario's properties watch that no node made in this run:
    /// those properties held without being tested (absent when there is none, and from
    /// records written before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unobserved: Vec<String>,
    /// The failure keys the scenario's reference (the version known to be right) failed
    /// too on the same schedule: taken out of `failures`, so not counted, as the schedule
    /// does not show the bug (`outcome` still says how the run itself went). Absent when
    /// none, without a reference, and from records written before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_failed: Vec<String>,
    /// Its downtime from any cause (absent when none, and from records written before).
    #[serde(default, skip_serializing_if = "DowntimeCounts::is_zero")]
    pub downtime: DowntimeCounts,
}

/// Downtime episodes in short (one run's, or a hunt's summed): by cause, the same-holder and
/// unrecovered ones, and how long they lasted ([`splitbrain_sim::downtime`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DowntimeCounts {
    /// Episodes put down to a fault on a member or the network.
    pub member_fault: u64,
    /// Episodes put down to a fault on a service process.
    pub service_fault: u64,
    /// Episodes with no fault to put them down to.
    pub spurious: u64,
    /// Episodes ended by the member that led before them.
    pub same_holder: u64,
    /// Episodes still open at the end of their run.
    pub unrecovered: u64,
    /// Their lengths, summed.
    pub total_ns: u64,
    /// The longest one.
    pub longest_ns: u64,
}

impl DowntimeCounts {
    /// The counts of a run's episodes.
    ///
    /// ```
    /// use splitbrain_lab::hunt::record::DowntimeCounts;
    /// use splitbrain_sim::downtime::{Downtime, DowntimeCause};
    /// use splitbrain_sim::NodeId;
    /// let late_renewal = Downtime {
    ///     from_ns: 1_000,
    ///     to_ns: 3_000,
    ///     recovered: true,
    ///     leader_before: NodeId::from(0),
    ///     leader_after: Some(NodeId::from(0)),
    ///     cause: DowntimeCause::ServiceFault,
    /// };
    /// let c = DowntimeCounts::of(&[late_renewal]);
    /// assert_eq!((c.episodes(), c.service_fault, c.same_holder), (1, 1, 1));
    /// ```
    pub fn of(episodes: &[Downtime]) -> Self {
        let mut c = Self::default();
        for d in episodes {
            match d.cause {
                DowntimeCause::MemberFault => c.member_fault += 1,
                DowntimeCause::ServiceFault => c.service_fault += 1,
                DowntimeCause::Spurious => c.spurious += 1,
            }
            c.same_holder += u64::from(d.same_holder());
            c.unrecovered += u64::from(!d.recovered);
            c.total_ns = c.total_ns.saturating_add(d.duration_ns());
            c.longest_ns = c.longest_ns.max(d.duration_ns());
        }
        c
    }

    /// Adds another's counts (saturating: a record file is input).
    pub fn add(&mut self, other: &Self) {
        self.member_fault = self.member_fault.saturating_add(other.member_fault);
        self.service_fault = self.service_fault.saturating_add(other.service_fault);
        self.spurious = self.spurious.saturating_add(other.spurious);
        self.same_holder = self.same_holder.saturating_add(other.same_holder);
        self.unrecovered = self.unrecovered.saturating_add(other.unrecovered);
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.longest_ns = self.longest_ns.max(other.longest_ns);
    }

    /// The episodes put down to `cause`.
    pub fn caused_by(&self, cause: DowntimeCause) -> u64 {
        match cause {
            DowntimeCause::MemberFault => self.member_fault,
            DowntimeCause::ServiceFault => self.service_fault,
            DowntimeCause::Spurious => self.spurious,
        }
    }

    /// Every episode counted.
    pub fn episodes(&self) -> u64 {
        self.member_fault
            .saturating_add(self.service_fault)
            .saturating_add(self.spurious)
    }

    /// Whether nothing was counted.
    pub fn is_zero(&self) -> bool {
        *self == Self::default()
    }
}

impl SeedRecord {
    /// Judges one run's report against its outcome.
    pub fn new(seed: u64, report: &RunReport, outcome: &Outcome) -> Self {
        let failures = failures_of(report, outcome);
        let outcome_name = match outcome {
            Outcome::Matched => "matched",
            Outcome::SafetyMismatch { .. } => "safety_mismatch",
            Outcome::LivenessFailed => "liveness_failed",
            Outcome::ObjectiveMissed { .. } => "objective_missed",
        };
        Self {
            seed,
            outcome: outcome_name.to_string(),
            failures,
            events: report.events,
            coverage: Coverage::from_report(report),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: DowntimeCounts::of(&report.downtime),
        }
    }

    /// The record, naming the watched observations its run never made.
    pub fn with_unobserved(mut self, names: &[&str]) -> Self {
        self.unobserved = names.iter().map(|n| n.to_string()).collect();
        self
    }

    /// The record without the failures that `reference`, the same schedule run on the
    /// version known to be right, has too (same key): those go to `reference_failed`. Only a
    /// judged run's failures can be excused, and only by a judged run: a panic, an outgrown
    /// limit or a refused effect is splitbrain's or the node's, whatever the reference does.
    pub fn excused_by(mut self, reference: &SeedRecord) -> Self {
        if !self.judged() || !reference.judged() {
            return self;
        }
        let also = |f: &Failure| reference.failures.iter().any(|r| r.key == f.key);
        let (excused, kept): (Vec<Failure>, Vec<Failure>) =
            self.failures.into_iter().partition(also);
        self.failures = kept;
        self.reference_failed = excused.into_iter().map(|f| f.key).collect();
        self
    }

    /// Whether the run failed, but every failure was the reference's too: not counted.
    pub fn excused(&self) -> bool {
        !self.failed() && !self.reference_failed.is_empty()
    }

    /// Whether the seed ran to its end and was judged (not refused, outgrown or panicked):
    /// only such a run can say what it observed.
    pub fn judged(&self) -> bool {
        matches!(
            self.outcome.as_str(),
            "matched" | "safety_mismatch" | "liveness_failed" | "objective_missed"
        )
    }

    /// A seed whose run panicked (a bug in splitbrain): failed under the key `panic`.
    pub fn panicked(seed: u64, message: String) -> Self {
        Self {
            seed,
            outcome: "panicked".to_string(),
            failures: vec![Failure {
                key: PANIC_KEY.to_string(),
                at_ns: None,
                nodes: Vec::new(),
                detail: message,
            }],
            events: 0,
            coverage: Coverage::default(),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: DowntimeCounts::default(),
        }
    }

    /// A seed whose run outgrew its limits: failed under the key `limit`, the error and its
    /// hint in the detail.
    pub fn outgrown(seed: u64, e: &splitbrain_sim::LimitExceeded) -> Self {
        Self {
            seed,
            outcome: OUTGREW_LIMITS.to_string(),
            failures: vec![Failure {
                key: LIMIT_KEY.to_string(),
                at_ns: Some(e.at_ns),
                nodes: e.node.iter().map(|n| n.0).collect(),
                detail: format!("{e}\n  hint: {}", crate::runner::hint(e)),
            }],
            events: e.events,
            coverage: Coverage::default(),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: DowntimeCounts::default(),
        }
    }

    /// A seed whose process asked for an effect the engine refuses: failed under the key
    /// `refused`, at the node and time of the handler that asked.
    pub fn refused(seed: u64, refused: &splitbrain_sim::RefusedEffect) -> Self {
        Self {
            seed,
            outcome: REFUSED_EFFECT.to_string(),
            failures: vec![Failure {
                key: REFUSED_KEY.to_string(),
                at_ns: Some(refused.handling.at_ns),
                nodes: vec![refused.handling.node.0],
                detail: refused.to_string(),
            }],
            events: 0,
            coverage: Coverage::default(),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: DowntimeCounts::default(),
        }
    }

    /// The record with what the seed's nemesis drew.
    pub fn with_nemesis(mut self, drew: Option<Drawn>) -> Self {
        self.nemesis = drew;
        self
    }

    /// Whether the seed's outcome differed from the scenario's `expect`.
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
}

fn failures_of(report: &RunReport, outcome: &Outcome) -> Vec<Failure> {
    let violation = |inv: Invariant| {
        let found = report.violations.iter().find(|v| v.invariant == inv);
        Failure {
            key: inv.name().to_string(),
            at_ns: found.map(|v| v.at_ns),
            nodes: found
                .map(|v| v.nodes.iter().map(|n| n.0).collect())
                .unwrap_or_default(),
            detail: found.map(|v| v.detail.clone()).unwrap_or_default(),
        }
    };
    match outcome {
        Outcome::Matched => Vec::new(),
        Outcome::SafetyMismatch {
            unexpected,
            missing,
        } => {
            let mut failures: Vec<Failure> = unexpected.iter().map(|inv| violation(*inv)).collect();
            failures.extend(missing.iter().map(|inv| Failure {
                key: format!("missing:{}", inv.name()),
                at_ns: None,
                nodes: Vec::new(),
                detail: format!("expected {inv} to be violated, but it held"),
            }));
            failures
        }
        Outcome::LivenessFailed => vec![violation(Invariant::Liveness)],
        Outcome::ObjectiveMissed { budget_ns, missed } => missed
            .iter()
            .take(1)
            .map(|m| Failure {
                key: "objective".to_string(),
                at_ns: Some(m.at_ns),
                nodes: Vec::new(),
                detail: m.describe(*budget_ns),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hunt::summary::HuntVerdict;

    fn failure(key: &str) -> Failure {
        Failure {
            key: key.to_string(),
            at_ns: None,
            nodes: Vec::new(),
            detail: String::new(),
        }
    }

    #[test]
    fn a_safety_violation_is_a_safety_mismatch_but_not_every_mismatch_is_one() {
        let safety = [
            "election_safety",
            "fencing_safety",
            "term_monotonic",
            "my_property",
        ];
        let other = [
            "liveness",
            "limit",
            "panic",
            "refused",
            "objective",
            "missing:x",
        ];
        for key in safety {
            assert!(failure(key).is_safety_violation(), "{key}");
            assert_eq!(
                HuntVerdict::of_keys([key]),
                HuntVerdict::SafetyMismatch,
                "{key}"
            );
        }
        for key in other {
            assert!(!failure(key).is_safety_violation(), "{key}");
        }
        for key in ["panic", "refused", "objective", "missing:x"] {
            assert_eq!(
                HuntVerdict::of_keys([key]),
                HuntVerdict::SafetyMismatch,
                "{key}"
            );
        }
    }
}
