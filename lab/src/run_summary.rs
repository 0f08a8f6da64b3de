//! What a run's summary judges beyond the report itself: each failover's recovery time against
//! the scenario's recovery-time objective, and which invariants the summary lists. Typed rows
//! the CLI prints; no text here.

use splitbrain_scenario::Objective;
use splitbrain_sim::{Invariant, RunReport};

/// One failover's recovery against the objective, broken down: detection, election, the new
/// leader's start-up, and the rest of the way to its first accepted write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectiveRow {
    /// When the fault struck.
    pub at_ns: u64,
    /// What struck.
    pub cause: String,
    /// From the fault to the first suspicion or campaign.
    pub detection_ns: u64,
    /// From detection to the claim of a new leader.
    pub election_ns: u64,
    /// The new leader's start-up delay (the objective's).
    pub startup_ns: u64,
    /// From the end of start-up to the first accepted write (none: never recovered).
    pub to_first_write_ns: Option<u64>,
    /// From the fault to the first accepted write (none: never recovered).
    pub total_ns: Option<u64>,
    /// Whether that met the budget.
    pub verdict: ObjectiveVerdict,
}

/// A failover's recovery time against the objective's budget.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ObjectiveVerdict {
    /// The objective sets no failover budget.
    NoBudget,
    /// The failover never recovered.
    NeverRecovered,
    /// It recovered after the budget.
    Missed,
    /// It recovered within the budget.
    Met,
}

/// The rows of the failovers of `report` that were detected and elected a leader, in order.
pub fn objective_rows(objective: &Objective, report: &RunReport) -> Vec<ObjectiveRow> {
    let startup = objective.startup_delay_ns;
    let mut rows = Vec::new();
    for f in &report.failovers {
        let (Some(detection), Some(election)) = (f.detection_ns, f.election_ns) else {
            continue;
        };
        let verdict = match (objective.failover_p99_ns, f.recovery_ns) {
            (None, _) => ObjectiveVerdict::NoBudget,
            (Some(_), None) => ObjectiveVerdict::NeverRecovered,
            (Some(b), Some(r)) if r > b => ObjectiveVerdict::Missed,
            (Some(_), Some(_)) => ObjectiveVerdict::Met,
        };
        rows.push(ObjectiveRow {
            at_ns: f.at_ns,
            cause: f.cause.clone(),
            detection_ns: detection,
            election_ns: election.saturating_sub(detection),
            startup_ns: startup,
            to_first_write_ns: f.recovery_ns.map(|r| r.saturating_sub(election + startup)),
            total_ns: f.recovery_ns,
            verdict,
        });
    }
    rows
}

/// The invariants a run's summary lists, in order: the built-in safety invariants, the
/// algorithm's own `properties`, then any other safety property the run broke.
pub fn checked_invariants(report: &RunReport, properties: &[&'static str]) -> Vec<Invariant> {
    let mut checked: Vec<Invariant> = Invariant::SAFETY.to_vec();
    checked.extend(properties.iter().map(|name| Invariant::Property(name)));
    for v in &report.violations {
        if !checked.contains(&v.invariant) && v.invariant.is_safety() {
            checked.push(v.invariant);
        }
    }
    checked
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leader crash under an objective of `budget`.
    fn crashed_leader(budget: &str) -> (Objective, RunReport) {
        let text = format!(
            r#"Scenario(duration: "10s", nodes: 3, algorithm: Raft(),
            faults: [(at: "3s", do: Crash(Leader))],
            objective: (failover_p99: "{budget}", startup_delay: "10ms"))"#
        );
        let s = splitbrain_scenario::parse(&text, "o.ron").expect("a valid scenario");
        let report = crate::runner::run_seed(&s.materialize(1), None, &|| false).expect("runs");
        (s.objective.clone().expect("an objective"), report)
    }

    #[test]
    fn a_failover_is_broken_down_and_judged_against_the_budget() {
        let (objective, report) = crashed_leader("1h");
        let rows = objective_rows(&objective, &report);
        assert_eq!(rows.len(), 1, "{rows:?}");
        let row = &rows[0];
        assert_eq!(row.verdict, ObjectiveVerdict::Met);
        assert_eq!(row.startup_ns, 10_000_000);
        let total = row.total_ns.expect("recovered");
        let parts = row.detection_ns + row.election_ns + row.startup_ns;
        assert_eq!(parts + row.to_first_write_ns.unwrap(), total);
        let (objective, report) = crashed_leader("1ms");
        assert_eq!(
            objective_rows(&objective, &report)[0].verdict,
            ObjectiveVerdict::Missed
        );
    }

    #[test]
    fn the_listed_invariants_are_the_built_in_ones_then_the_properties() {
        let (_, report) = crashed_leader("1h");
        let listed = checked_invariants(&report, &["one_lock_holder"]);
        let mut expected = Invariant::SAFETY.to_vec();
        expected.push(Invariant::Property("one_lock_holder"));
        assert_eq!(listed, expected);
    }
}
