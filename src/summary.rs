//! The human-readable summary of a run: leaders by term, failovers, faults, messages by type,
//! counters and a verdict per invariant.

use crate::scenario::Scenario;
use crate::verdict::{describe_expect, Outcome};
use splitbrain_lab::run_summary::{checked_invariants, objective_rows, ObjectiveVerdict};
use splitbrain_lab::runner::Determinism;
use splitbrain_reports::Table;
use splitbrain_sim::{format_duration, Invariant, LivenessVerdict, RunReport};
use std::path::Path;

/// What the summary needs besides the report.
pub struct Context<'a> {
    pub scenario: &'a Scenario,
    pub file: &'a Path,
    pub replay: &'a str,
}

/// Prints `table` aligned, indented under its section heading.
fn print_table(table: &Table) {
    for line in table.aligned_lines() {
        crate::outln!("  {line}");
    }
}

fn opt_duration(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), format_duration)
}

/// Prints the whole summary.
pub fn print(ctx: &Context<'_>, report: &RunReport, outcome: &Outcome) {
    let s = ctx.scenario;
    crate::outln!(
        "scenario {} ({}): {} on {}, {} nodes, {} simulated, {} events",
        s.name,
        ctx.file.display(),
        report.algorithm,
        crate::scenario::transport_line(&s.sim.network.transport),
        report.members,
        format_duration(report.end_ns),
        report.events
    );
    if let Some(drew) = &s.nemesis_drew {
        crate::outln!("nemesis drew ({})", drew.describe());
    }
    print_leaders(report);
    print_faults(report);
    print_failovers(report);
    print_downtime(report);
    print_measures(report);
    print_objective(ctx.scenario, report);
    print_messages(report);
    print_steady_state(report);
    print_counters(report);
    print_invariants(report, &s.algorithm.property_names());
    print_verdict(ctx, report, outcome);
}

fn print_leaders(report: &RunReport) {
    crate::outln!("\nLeaders by term");
    if report.leaders.is_empty() {
        crate::outln!("  (no node ever claimed leadership)");
        return;
    }
    let mut table = Table::new(&["term", "leader", "token", "claimed at"]);
    const SHOWN: usize = 20;
    let mut previous = None;
    for claim in report.leaders.iter().take(SHOWN) {
        // The previous claimant claiming again took back what it had lost.
        let again = if previous == Some(claim.node) {
            " (again)"
        } else {
            ""
        };
        previous = Some(claim.node);
        table.push(vec![
            claim.term.to_string(),
            format!("{}{again}", claim.node),
            claim.token.to_string(),
            format_duration(claim.at_ns),
        ]);
    }
    print_table(&table);
    if report.leaders.len() > SHOWN {
        crate::outln!(
            "  ... {} more claims (see --json)",
            report.leaders.len() - SHOWN
        );
    }
    match report.final_leader {
        Some(leader) => crate::outln!("  leader at the end: {leader}"),
        None => crate::outln!("  leader at the end: none"),
    }
}

fn print_faults(report: &RunReport) {
    if report.faults.is_empty() {
        return;
    }
    crate::outln!("\nFaults");
    // The safety breaks attributed to each fault (docs/reports.md), when there were any.
    let breaks = report.faults.iter().any(|f| f.safety_violations > 0);
    let mut header = vec!["at", "what", "healed at"];
    header.extend(breaks.then_some("safety breaks"));
    let mut table = Table::new(&header);
    for f in &report.faults {
        let mut row = vec![
            format_duration(f.at_ns),
            f.description.clone(),
            opt_duration(f.healed_at_ns),
        ];
        row.extend(breaks.then(|| f.safety_violations.to_string()));
        table.push(row);
    }
    print_table(&table);
}

/// Every stretch with no leader that could act (docs/reports.md, "Downtime"), whatever
/// struck: a failover's and the ones no failover opens (a service fault, a lease renewed
/// late by its own holder).
/// What the algorithm's own properties measured (`RunReport::measures`), one line each.
fn print_measures(report: &RunReport) {
    if report.measures.is_empty() {
        return;
    }
    crate::outln!("\nThe algorithm's own measures");
    let mut table = Table::new(&["measure", "value"]);
    for m in &report.measures {
        let value = splitbrain_lab::measures::number(m.value);
        table.push(vec![m.name.to_string(), value]);
    }
    print_table(&table);
}

fn print_downtime(report: &RunReport) {
    if report.downtime.is_empty() {
        return;
    }
    const SHOWN: usize = 10;
    crate::outln!("\nDowntime (no leader that could act)");
    let mut table = Table::new(&["from", "lasted", "before", "after", "cause"]);
    for d in report.downtime.iter().take(SHOWN) {
        let after = match d.leader_after {
            Some(n) if d.same_holder() => format!("{n} (same holder)"),
            Some(n) => n.to_string(),
            None => "none by the end".to_string(),
        };
        table.push(vec![
            format_duration(d.from_ns),
            format_duration(d.duration_ns()),
            d.leader_before.to_string(),
            after,
            d.cause.name().replace('_', " "),
        ]);
    }
    print_table(&table);
    if report.downtime.len() > SHOWN {
        crate::outln!(
            "  ... {} more episodes (see --json)",
            report.downtime.len() - SHOWN
        );
    }
    let total: u64 = report.downtime.iter().map(|d| d.duration_ns()).sum();
    let episodes = report.downtime.len();
    crate::outln!(
        "  {episodes} episode{}, {} in all",
        if episodes == 1 { "" } else { "s" },
        format_duration(total)
    );
}

fn print_failovers(report: &RunReport) {
    if report.failovers.is_empty() {
        return;
    }
    crate::outln!("\nFailovers");
    let mut table = Table::new(&[
        "at",
        "cause",
        "detection",
        "election",
        "recovery",
        "unavailable",
        "all heard",
        "rounds",
        "eligible rounds",
        "new leader",
        "outcome",
        "leaderless",
        "claims",
    ]);
    // `n/a`: the algorithm does not report the signal the measure needs.
    let na = |reports: bool, shown: String| if reports { shown } else { "n/a".to_string() };
    for f in &report.failovers {
        let new_leader = match (f.new_leader, f.new_term) {
            (Some(n), Some(t)) => format!("{n} (term {t})"),
            _ => "-".to_string(),
        };
        table.push(vec![
            format_duration(f.at_ns),
            f.cause.clone(),
            opt_duration(f.detection_ns),
            opt_duration(f.election_ns),
            opt_duration(f.recovery_ns),
            opt_duration(f.unavailable_ns),
            na(
                report.signals.leader_heard,
                opt_duration(f.followers_heard_ns),
            ),
            f.rounds.to_string(),
            na(
                report.signals.campaign_eligibility,
                f.eligible_rounds.map_or("-".to_string(), |r| r.to_string()),
            ),
            new_leader,
            serde_json::to_value(f.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            format!(
                "{}{}",
                format_duration(f.leaderless_ns),
                if f.episode_stable { "" } else { " (cut short)" }
            ),
            f.leader_claims.to_string(),
        ]);
    }
    print_table(&table);
    crate::outln!(
        "  times from the fault (unavailable: see below):\n{}",
        crate::failover_legend!()
    );
}

/// What the failover table's columns measure: printed under the table and in `run --help`.
#[macro_export]
macro_rules! failover_legend {
    () => {
        "  detection = a node first suspects the leader or campaigns;
  election = another node (or a higher term) claims; recovery = the first write accepted after
  the fault, the new leader's (or the old one's, when it rode the fault through); all heard =
  every member that can hear the new leader (up, not cut off from it) accepted it;
  unavailable = from the last write accepted before the fault to the first after it;
  ridden_through = the old leader wrote again in its own term with nobody elected
  (docs/engine.md); leaderless = time without a recognised leader over the whole episode,
  until one leader held for twice the failure-detection time with the fault over (cut short:
  by the next strike or the end of the run); claims = leadership claims in the episode,
  re-elections included (docs/reports.md)"
    };
}

/// The recovery-time budget, broken down per failover: detection, election, the new leader's
/// start-up, and the rest of the way to its first accepted write.
fn print_objective(scenario: &Scenario, report: &RunReport) {
    let Some(objective) = &scenario.objective else {
        return;
    };
    let budget = objective
        .failover_p99_ns
        .map_or("no failover budget".to_string(), |b| {
            format!("failover within {}", format_duration(b))
        });
    crate::outln!(
        "\nRecovery-time objective: {budget}, start-up {}",
        format_duration(objective.startup_delay_ns)
    );
    let mut table = Table::new(&[
        "at",
        "cause",
        "detection",
        "election",
        "start-up",
        "to first write",
        "total",
        "verdict",
    ]);
    for row in objective_rows(objective, report) {
        let verdict = match row.verdict {
            ObjectiveVerdict::NoBudget => "-",
            ObjectiveVerdict::NeverRecovered => "MISSED (never recovered)",
            ObjectiveVerdict::Missed => "MISSED",
            ObjectiveVerdict::Met => "met",
        };
        table.push(vec![
            format_duration(row.at_ns),
            row.cause,
            format_duration(row.detection_ns),
            format_duration(row.election_ns),
            format_duration(row.startup_ns),
            opt_duration(row.to_first_write_ns),
            opt_duration(row.total_ns),
            verdict.to_string(),
        ]);
    }
    print_table(&table);
}

fn print_messages(report: &RunReport) {
    crate::outln!("\nMessages");
    let mut table = Table::new(&[
        "type",
        "sent",
        "delivered",
        "dropped",
        "duplicated",
        "in flight",
    ]);
    for m in report
        .messages
        .iter()
        .filter(|m| m.sent > 0 || m.delivered > 0)
    {
        table.push(vec![
            m.kind.clone(),
            m.sent.to_string(),
            m.delivered.to_string(),
            m.dropped.to_string(),
            m.duplicated.to_string(),
            m.in_flight.to_string(),
        ]);
    }
    print_table(&table);
    crate::outln!("  sent + duplicated = delivered + dropped + in flight (at the end of the run)");
    crate::outln!("  {}", drops_line(&report.drops));
    let w = &report.writes;
    crate::outln!(
        "  writes: {} attempted, {} accepted, {} stale rejected by fencing",
        w.attempted,
        w.accepted,
        w.rejected_stale
    );
    if w.accepted_stale > 0 {
        crate::outln!(
            "  {} stale write(s) reached the resource (accepted with a token below one it had \
             accepted: fencing is off)",
            w.accepted_stale
        );
    }
    let locked_out = report.counters.locked_out_writes;
    if locked_out > 0 {
        crate::outln!(
            "  {locked_out} of them from a leader of a newer term: an older leader's higher token \
             locks it out"
        );
    }
}

/// The steady state's cost: messages per second by type, members' and the service's.
fn print_steady_state(report: &RunReport) {
    crate::outln!("\n{}", steady_state_line(&report.steady_state));
}

/// The steady-state paragraph (docs/reports.md, "Steady-state cost").
pub fn steady_state_line(steady: &splitbrain_sim::report::SteadyState) -> String {
    let seconds = steady.duration_ns as f64 / 1e9;
    if steady.duration_ns == 0 {
        return "Steady state: none (no stretch without a fault, an election or a new leader)"
            .to_string();
    }
    let rates = |kinds: &[splitbrain_sim::report::KindCount]| -> String {
        let parts: Vec<String> = kinds
            .iter()
            .map(|k| format!("{} {:.1}/s", k.kind, k.count as f64 / seconds))
            .collect();
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    };
    let mut text = format!(
        "Steady state: {} (no fault under way, no election, the leader held for twice the \
         failure-detection time)\n  members: {:.1} messages/s ({})",
        format_duration(steady.duration_ns),
        steady.per_second(&steady.messages).unwrap_or(0.0),
        rates(&steady.messages)
    );
    if !steady.service_messages.is_empty() {
        text.push_str(&format!(
            "\n  service: {:.1} messages/s ({})",
            steady.per_second(&steady.service_messages).unwrap_or(0.0),
            rates(&steady.service_messages)
        ));
    }
    text.push_str(
        "\n  writes to the resource left out; message sizes are not modelled (no bytes/s)",
    );
    text
}

/// The `drops:` line: every cause, adding up to the `dropped` column, then what `Stream`
/// connections did that is not a drop.
pub fn drops_line(d: &splitbrain_sim::report::DropStats) -> String {
    let mut line = format!(
        "drops: {} in all = {} partition, {} loss, {} to a crashed node, {} with a broken connection",
        d.total(),
        d.partition,
        d.loss,
        d.crashed_receiver,
        d.broken_connection
    );
    if d.retransmissions > 0 || d.connections_broken > 0 {
        line.push_str(&format!(
            " (not drops: {} retransmissions, {} connections broken)",
            d.retransmissions, d.connections_broken
        ));
    }
    line
}

fn print_counters(report: &RunReport) {
    let c = &report.counters;
    crate::outln!("\nElections");
    print_elections(report);
    let reacquired = match c.reacquisitions {
        0 => String::new(),
        1 => ", 1 re-acquisition by the same holder".to_string(),
        n => format!(", {n} re-acquisitions by the same holder"),
    };
    crate::outln!(
        "  {} started, {} pre-votes, {} failed rounds, {} dueling-candidate terms, {} leader changes{reacquired}, {} disruptions prevented",
        c.elections_started, c.pre_votes_started, c.failed_rounds, c.dueling_candidate_terms, c.leader_changes, c.disruptions_prevented
    );
    if c.futile_campaigns > 0 {
        let by_type: Vec<String> = report
            .futile_campaign_messages
            .iter()
            .map(|m| format!("{} {}", m.kind, m.count))
            .collect();
        crate::outln!(
            "  {} futile campaigns (by a member cut off from what it needs to win; in no \
             election above), their messages: {}",
            c.futile_campaigns,
            if by_type.is_empty() {
                "none".to_string()
            } else {
                by_type.join(", ")
            }
        );
    }
    crate::outln!(
        "  two or more nodes believed they led for {} in total, {} of it while they could act",
        format_duration(report.overlap_ns),
        format_duration(report.acting_overlap_ns)
    );
}

/// One row per election: when, who won, how long, and its messages by type.
fn print_elections(report: &RunReport) {
    if report.elections.is_empty() {
        return;
    }
    const SHOWN: usize = 10;
    let mut table = Table::new(&[
        "started",
        "took",
        "winner",
        "campaigns",
        "messages",
        "by type",
    ]);
    for e in report.elections.iter().take(SHOWN) {
        let winner = match (e.winner, e.term, e.abandoned_ns) {
            (Some(n), Some(t), _) => format!("{n} (term {t})"),
            (_, _, Some(_)) => "abandoned".to_string(),
            _ => "none".to_string(),
        };
        let by_type: Vec<String> = e
            .messages
            .iter()
            .map(|m| format!("{} {}", m.kind, m.count))
            .collect();
        table.push(vec![
            format_duration(e.started_ns),
            opt_duration(e.decided_ns.or(e.abandoned_ns).map(|d| d - e.started_ns)),
            winner,
            e.campaigns.to_string(),
            e.total_messages().to_string(),
            by_type.join(", "),
        ]);
    }
    print_table(&table);
    if report.elections.len() > SHOWN {
        crate::outln!(
            "  ... {} more elections (see --json)",
            report.elections.len() - SHOWN
        );
    }
}

/// The built-in invariants, then the algorithm's own properties (`properties`) and any other
/// property that broke, each held or violated.
fn print_invariants(report: &RunReport, properties: &[&'static str]) {
    crate::outln!("\nInvariants");
    let mut table = Table::new(&["invariant", "verdict"]);
    for inv in checked_invariants(report, properties) {
        let verdict = match report.violations.iter().find(|v| v.invariant == inv) {
            Some(v) if v.count > 1 => format!("VIOLATED: {} ({} times)", v.detail, v.count),
            Some(v) => format!("VIOLATED: {}", v.detail),
            None => "held".to_string(),
        };
        table.push(vec![inv.name().to_string(), verdict]);
    }
    if let Some(stall) = &report.stall {
        let during = format!("STALLED: {}", stall.describe());
        table.push(vec![Invariant::Liveness.name().to_string(), during]);
    }
    table.push(vec![
        Invariant::Liveness.name().to_string(),
        describe_liveness(&report.liveness),
    ]);
    print_table(&table);
}

/// The liveness verdict in words.
pub fn describe_liveness(verdict: &LivenessVerdict) -> String {
    match verdict {
        LivenessVerdict::Met { quiet_from_ns, leader, at_ns } => format!(
            "held: {leader} recognised by every live connected member at {} ({} after the last fault)",
            format_duration(*at_ns),
            format_duration(at_ns - quiet_from_ns)
        ),
        LivenessVerdict::Missed { quiet_from_ns, bound_ns, group } => format!(
            "FAILED: no leader recognised by all {} live connected members within {} of {}",
            group.len(),
            format_duration(*bound_ns),
            format_duration(*quiet_from_ns)
        ),
        LivenessVerdict::Impossible { reason, .. } => format!("not applicable: {reason}"),
        LivenessVerdict::Inconclusive { quiet_from_ns, bound_ns, end_ns } => format!(
            "inconclusive: the run ended {} after the last fault, before the {} bound",
            format_duration(end_ns - quiet_from_ns),
            format_duration(*bound_ns)
        ),
        LivenessVerdict::FaultsActive { .. } => "not checked: faults were still active when the run ended (a fault not healed, a triggered fault that never fired, or a clock stepped back that had not caught up)".to_string(),
    }
}

/// Prints the verdict line (and the replay command when something broke).
pub fn print_verdict(ctx: &Context<'_>, report: &RunReport, outcome: &Outcome) {
    let expect = describe_expect(&ctx.scenario.expect);
    crate::outln!();
    match outcome {
        Outcome::Matched => crate::outln!("verdict: as expected ({expect}); exit 0"),
        Outcome::SafetyMismatch {
            unexpected,
            missing,
        } => {
            for inv in unexpected {
                let detail = report
                    .violations
                    .iter()
                    .find(|v| v.invariant == *inv)
                    .map(|v| v.detail.as_str())
                    .unwrap_or("");
                crate::outln!("verdict: UNEXPECTED VIOLATION of {inv}: {detail}");
            }
            for inv in missing {
                crate::outln!("verdict: expected {inv} to be violated, but it held");
            }
            crate::outln!("  expected {expect}; exit 1");
        }
        Outcome::LivenessFailed => {
            crate::outln!("verdict: safety as expected ({expect}), but LIVENESS FAILED; exit 3")
        }
        Outcome::ObjectiveMissed { budget_ns, missed } => {
            for m in missed {
                crate::outln!("verdict: {}", m.describe(*budget_ns));
            }
            crate::outln!("  safety as expected ({expect}), but the RECOVERY-TIME OBJECTIVE WAS MISSED; exit 3");
        }
    }
    if !report.violations.is_empty() || *outcome != Outcome::Matched {
        crate::outln!("replay: {}", ctx.replay);
    }
}

/// A warning for each property declared in the scenario over an observation no node made
/// in the run `report` describes: it held without being tested.
pub fn unobserved_warnings(
    algorithm: &splitbrain_algorithms::AlgorithmConfig,
    report: &splitbrain_sim::RunReport,
) -> Vec<String> {
    algorithm
        .unobserved(report)
        .into_iter()
        .map(|name| {
            format!(
                "property `{name}` was never tested: no node observed `{name}` in this run \
                 (is an `observe` effect's name spelled differently?)"
            )
        })
        .collect()
}

/// Prints the determinism check's result.
pub fn print_determinism(d: &Determinism) {
    if d.identical {
        crate::outln!(
            "determinism: ok (two more runs, on new processes and on reused ones: trace hash {} over {} lines)",
            d.trace_hashes[0],
            d.trace_lines
        );
    } else if let Some(difference) = &d.first_difference {
        crate::outln!(
            "determinism: FAILED (trace hashes {} and {}): an external node is not a function of \
             its inputs (it read the OS clock or randomness, its pid or a per-process hash seed, or kept state across `init`): {difference}; exit 1",
            d.trace_hashes[0], d.trace_hashes[1]
        );
    } else {
        crate::outln!(
            "determinism: FAILED (trace hashes {} and {}): this is a bug in splitbrain, please report it; exit 1",
            d.trace_hashes[0], d.trace_hashes[1]
        );
    }
}
