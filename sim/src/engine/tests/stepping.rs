//! Stepping through a run: `run_until`, `inspect`, and that stopping changes nothing.

use super::{config, fault, info, Toy};
use crate::engine::{NodeStatus, Reached, Role, StopAt, Whereabouts};
use crate::fault::{FaultAction, Target};
use crate::ids::NodeId;
use crate::time::{NANOS_PER_MILLI as MS, NANOS_PER_SEC as S};
use crate::trace::JsonLinesWriter;
use crate::Sim;

/// Node 0 claims term 1 at 10 ms; node 1 pings every 7 ms; node 2 campaigns at 5 ms; node 1
/// is paused from 30 ms for 20 ms.
fn cluster() -> Vec<Toy> {
    vec![
        Toy::claims(10 * MS, 1),
        Toy::pinger(7 * MS),
        Toy {
            campaign_after_ns: Some(5 * MS),
            ..Toy::default()
        },
    ]
}

fn scenario() -> crate::SimConfig {
    let mut c = config(3, S);
    c.faults = vec![fault(30 * MS, FaultAction::Pause(Target::Node(1), 20 * MS))];
    c
}

/// The whole run's trace and report.
fn whole() -> (String, String) {
    let mut writer = JsonLinesWriter::new(Vec::new());
    let report = Sim::new(scenario(), info(3), cluster())
        .with_trace(&mut writer)
        .run()
        .unwrap();
    let json = serde_json::to_string(&report).unwrap();
    (String::from_utf8(writer.into_inner()).unwrap(), json)
}

#[test]
fn the_trace_up_to_a_stop_is_a_prefix_of_the_whole_run_and_going_on_gives_the_whole_run() {
    let (full, full_report) = whole();
    for stop in [
        StopAt::Time(12 * MS),
        StopAt::Time(40 * MS),
        StopAt::TraceEvent(9),
    ] {
        let mut writer = JsonLinesWriter::new(Vec::new());
        let (report, snapshot_lines) = {
            let mut sim = Sim::new(scenario(), info(3), cluster()).with_trace(&mut writer);
            assert_eq!(sim.run_until(stop).unwrap(), Reached::Stop);
            let lines = sim.inspect().trace_events;
            (sim.run().unwrap(), lines)
        };
        let text = String::from_utf8(writer.into_inner()).unwrap();
        assert_eq!(text, full, "{stop:?}");
        assert_eq!(serde_json::to_string(&report).unwrap(), full_report);
        assert!(snapshot_lines > 0 && snapshot_lines < full.lines().count() as u64);
    }
}

#[test]
fn a_stopped_run_reports_only_what_happened_before_the_stop() {
    let (full, _) = whole();
    let mut writer = JsonLinesWriter::new(Vec::new());
    let mut sim = Sim::new(scenario(), info(3), cluster()).with_trace(&mut writer);
    sim.run_until(StopAt::Time(40 * MS)).unwrap();
    let report = sim.finish_here();
    drop(sim);
    let text = String::from_utf8(writer.into_inner()).unwrap();
    assert!(full.starts_with(&text));
    assert!(text.len() < full.len());
    let last = text.lines().last().unwrap();
    let t: u64 = serde_json::from_str::<serde_json::Value>(last).unwrap()["t"]
        .as_u64()
        .unwrap();
    assert!(t <= 40 * MS);
    assert_eq!(report.end_ns, 40 * MS);
}

#[test]
fn a_stop_after_trace_event_n_stops_after_the_step_that_wrote_it() {
    let mut writer = JsonLinesWriter::new(Vec::new());
    let mut sim = Sim::new(scenario(), info(3), cluster()).with_trace(&mut writer);
    assert_eq!(sim.run_until(StopAt::TraceEvent(7)).unwrap(), Reached::Stop);
    let snapshot = sim.inspect();
    drop(sim);
    let text = String::from_utf8(writer.into_inner()).unwrap();
    assert_eq!(snapshot.trace_events, text.lines().count() as u64);
    assert!(snapshot.trace_events >= 7);
    // Past the last event: the run ends first, and says so.
    let mut sink = crate::TraceHasher::default();
    let mut sim = Sim::new(scenario(), info(3), cluster()).with_trace(&mut sink);
    assert_eq!(
        sim.run_until(StopAt::TraceEvent(u64::MAX)).unwrap(),
        Reached::End
    );
    assert_eq!(sim.inspect().at_ns, S);
}

#[test]
fn the_snapshot_shows_the_leader_the_candidate_and_the_timers_armed() {
    let mut sim = Sim::new(scenario(), info(3), cluster());
    sim.run_until(StopAt::Time(10 * MS + MS / 2)).unwrap();
    let snapshot = sim.inspect();
    assert_eq!(snapshot.at_ns, 10 * MS + MS / 2);
    let [n0, n1, n2] = &snapshot.nodes[..] else {
        panic!("three processes")
    };
    assert_eq!(
        (n0.role, n0.term, n0.leads_term),
        (Role::Leader, 1, Some(1))
    );
    // Node 2 campaigned for term 1 at 5 ms and has not heard the claim yet (1 ms latency).
    assert_eq!(n2.role, Role::Candidate);
    assert_eq!(n1.role, Role::Follower);
    // Node 1 pinged at 7 ms and re-armed its tick for 14 ms, on a clock without drift.
    let tick = n1.timers.iter().find(|t| t.name == "tick").unwrap();
    assert_eq!(
        (tick.due_ns, tick.due_local_ns, tick.wall),
        (14 * MS, 14 * MS as i64, false)
    );
    assert_eq!(n1.clocks.monotonic_ns, (10 * MS + MS / 2) as i64);
    // The claims node 0 sent at 10 ms are on their way, due at 11 ms.
    let claims: Vec<_> = snapshot
        .in_flight
        .iter()
        .filter(|m| m.message == "claim")
        .collect();
    assert_eq!(claims.len(), 2);
    for m in claims {
        assert_eq!(
            (m.from, m.sent_ns, m.due_ns),
            (NodeId(0), 10 * MS, Some(11 * MS))
        );
        assert_eq!(m.whereabouts, Whereabouts::Travelling);
    }
    // Once heard, node 2 follows the leader of term 1.
    sim.run_until(StopAt::Time(12 * MS)).unwrap();
    assert_eq!(sim.inspect().nodes[2].role, Role::Follower);
}

#[test]
fn a_paused_node_shows_its_pause_and_the_messages_held_for_it() {
    let mut sim = Sim::new(scenario(), info(3), cluster());
    sim.run_until(StopAt::Time(45 * MS)).unwrap();
    let snapshot = sim.inspect();
    let n1 = &snapshot.nodes[1];
    assert_eq!(n1.status, NodeStatus::Paused { until_ns: 50 * MS });
    // Its tick came due at 35 and 42 ms (one slot: held once) while paused.
    assert!(n1.held_events >= 1);
    assert!(n1.timers.iter().all(|t| t.name != "tick"));
}
