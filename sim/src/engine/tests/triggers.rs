//! Faults triggered by events: when they fire, that they fire once, and what the report and
//! trace say of them (docs/engine.md, "Faults triggered by events").

use super::{config, info, run, run_traced, Tick, Toy};
use crate::fault::{Actor, FaultAction, FaultSpec, Target, Trigger, TriggerEvent};
use crate::ids::NodeId;
use crate::process::{Ctx, Process, SignalKind};
use crate::report::FaultRecord;
use crate::time::{LocalNanos, NANOS_PER_MILLI as MS};
use crate::Sim;

fn after(event: TriggerEvent, by: Actor, nth: u32, delay_ns: u64) -> Option<Trigger> {
    Some(Trigger {
        event,
        by,
        nth,
        delay_ns,
    })
}

fn sent(kind: &str) -> TriggerEvent {
    TriggerEvent::Sent(kind.to_string())
}

/// Crashes n2 after `trigger`, from `at_ns` on.
fn crash_n2(at_ns: u64, trigger: Option<Trigger>) -> FaultSpec {
    FaultSpec {
        at_ns,
        action: FaultAction::Crash(Target::Node(2)),
        heal_after_ns: None,
        after: trigger,
    }
}

/// Three nodes; n0 pings both others every 10 ms (at 10, 20, 30 ms...; they arrive 1 ms later).
fn pinging(faults: Vec<FaultSpec>) -> crate::SimConfig {
    let mut c = config(3, 100 * MS);
    c.faults = faults;
    c
}

fn pingers() -> Vec<Toy> {
    vec![Toy::pinger(10 * MS), Toy::default(), Toy::default()]
}

fn pings_received(toy: &Toy) -> Vec<u64> {
    toy.received.iter().map(|(_, n, _)| *n).collect()
}

fn the_fault(faults: &[FaultRecord]) -> &FaultRecord {
    assert_eq!(faults.len(), 1, "{faults:#?}");
    &faults[0]
}

#[test]
fn a_triggered_fault_fires_right_after_the_nth_matching_handler_and_once() {
    let trigger = after(sent("ping"), Actor::Node(0), 3, 0);
    let (report, trace) = run_traced(pinging(vec![crash_n2(0, trigger.clone())]), pingers());
    let fault = the_fault(&report.faults);
    assert_eq!(fault.at_ns, 30 * MS);
    assert_eq!(
        fault.description,
        "crash n2, after n0 sent ping for the 3rd time (at 30ms)"
    );
    // The handler's own sends left: the third ping reaches n2 crashed, and n1 alive.
    let (_, procs) = run(pinging(vec![crash_n2(0, trigger)]), pingers());
    assert_eq!(pings_received(&procs[2]), [1, 2]);
    assert_eq!(&pings_received(&procs[1])[..4], [1, 2, 3, 4]);
    // The fault comes right after the handler, before anything else: the handler's line,
    // the crash's, the fault's.
    let lines: Vec<&str> = trace.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(r#""ev":"fault""#))
        .unwrap();
    assert!(
        lines[at - 2].contains(r#""t":30000000,"node":0"#) && lines[at - 2].contains("timer"),
        "{}",
        lines[at - 2]
    );
    assert!(lines[at - 1].contains(r#""node":2"#) && lines[at - 1].contains("crash"));
    assert_eq!(trace.matches(r#""ev":"fault""#).count(), 1, "it fires once");
}

#[test]
fn occurrences_count_from_at_and_the_fault_never_fires_before_it() {
    let trigger = after(sent("ping"), Actor::Any, 2, 0);
    let (report, _) = run(pinging(vec![crash_n2(25 * MS, trigger)]), pingers());
    assert_eq!(
        the_fault(&report.faults).at_ns,
        40 * MS,
        "the pings at 30 and 40 ms"
    );
}

#[test]
fn a_trigger_that_never_happens_never_fires_and_the_report_and_trace_say_so() {
    let never = after(sent("claim"), Actor::Node(0), 1, 0);
    let (report, trace) = run_traced(pinging(vec![crash_n2(0, never)]), pingers());
    let fault = the_fault(&report.faults);
    assert!(fault.skipped);
    assert_eq!(fault.at_ns, 100 * MS, "recorded at the end of the run");
    assert_eq!(
        fault.description,
        "crash never fired: its trigger never happened (n0 sends claim from 0s on; seen 0 times)"
    );
    let last = trace.lines().last().unwrap();
    assert!(
        last.contains(r#""ev":"fault""#) && last.contains("never fired"),
        "{last}"
    );
    let (_, procs) = run(
        pinging(vec![crash_n2(
            0,
            after(sent("claim"), Actor::Node(0), 1, 0),
        )]),
        pingers(),
    );
    assert_eq!(pings_received(&procs[2]).len(), 9, "n2 never crashed");
}

#[test]
fn a_message_type_nobody_declares_never_matches_and_the_note_names_the_types() {
    let typo = after(sent("Ping"), Actor::Any, 1, 0);
    let (report, _) = run(pinging(vec![crash_n2(0, typo)]), pingers());
    let fault = the_fault(&report.faults);
    assert!(fault.skipped);
    assert!(
        fault
            .description
            .ends_with("; no process sends `Ping`: the message types are ping, claim"),
        "{}",
        fault.description
    );
}

#[test]
fn the_delay_and_heal_after_count_from_the_trigger() {
    let mut crash = crash_n2(0, after(sent("ping"), Actor::Node(0), 2, 5 * MS));
    crash.heal_after_ns = Some(20 * MS);
    let (report, _) = run(pinging(vec![crash.clone()]), pingers());
    let fault = the_fault(&report.faults);
    assert_eq!(fault.at_ns, 25 * MS);
    assert_eq!(fault.healed_at_ns, Some(45 * MS));
    assert_eq!(
        fault.description,
        "crash n2, 5ms after n0 sent ping for the 2nd time (at 20ms)"
    );
    let (_, procs) = run(pinging(vec![crash]), pingers());
    assert_eq!(procs[2].restarts, 1);
    // Pings 1 and 2 before the crash at 25 ms; 3 and 4 lost; from the restart at 45 ms on.
    assert_eq!(&pings_received(&procs[2])[..3], [1, 2, 5]);
}

#[test]
fn a_delay_the_run_ends_within_leaves_the_fault_unfired_and_says_so() {
    let late = after(sent("ping"), Actor::Node(0), 9, 50 * MS);
    let (report, _) = run(pinging(vec![crash_n2(0, late)]), pingers());
    let fault = the_fault(&report.faults);
    assert!(fault.skipped);
    assert_eq!(
        fault.description,
        "crash never fired: its trigger happened at 90ms (n0), but the run ended within its \
         delay of 50ms"
    );
}

#[test]
fn a_claim_triggers_a_crash_of_the_new_leader_resolved_when_it_fires() {
    let mut c = config(3, 200 * MS);
    c.faults = vec![FaultSpec {
        at_ns: 0,
        action: FaultAction::Crash(Target::Leader),
        heal_after_ns: None,
        after: after(TriggerEvent::BecameLeader, Actor::Leader, 1, 0),
    }];
    let claims = Toy::claims(50 * MS, 1);
    let (report, _) = run(c, vec![Toy::default(), claims, Toy::default()]);
    let fault = the_fault(&report.faults);
    assert_eq!(fault.at_ns, 50 * MS);
    assert_eq!(fault.nodes, [NodeId(1)]);
    assert_eq!(
        fault.description,
        "crash n1 (leader), after n1 became leader (at 50ms)"
    );
}

#[test]
fn a_signal_triggers_and_another_actor_does_not_count() {
    let mut c = config(3, 200 * MS);
    let campaign = |ns| Toy {
        campaign_after_ns: Some(ns),
        ..Toy::default()
    };
    c.faults = vec![crash_n2(
        0,
        after(
            TriggerEvent::Signal(SignalKind::ElectionStarted),
            Actor::Node(1),
            1,
            0,
        ),
    )];
    let (report, _) = run(
        c,
        vec![campaign(30 * MS), campaign(60 * MS), campaign(90 * MS)],
    );
    assert_eq!(
        the_fault(&report.faults).at_ns,
        60 * MS,
        "n0's campaign at 30 ms is not n1's"
    );
}

#[test]
fn a_fault_triggered_by_held_work_fires_before_the_next_held_event() {
    // n0 and n1 ping; n0 is paused from 15 to 45 ms. At its resume it handles its tick held
    // since 20 ms (its 2nd ping round), then n1's pings of 20, 30 and 40 ms: the crash comes
    // between the tick and those pings, which are lost with it.
    let mut c = config(2, 100 * MS);
    c.faults = vec![
        FaultSpec {
            at_ns: 15 * MS,
            action: FaultAction::Pause(Target::Node(0), 30 * MS),
            heal_after_ns: None,
            after: None,
        },
        FaultSpec {
            at_ns: 0,
            action: FaultAction::Crash(Target::Node(0)),
            heal_after_ns: None,
            after: after(sent("ping"), Actor::Node(0), 2, 0),
        },
    ];
    let (report, procs) = run(c, vec![Toy::pinger(10 * MS), Toy::pinger(10 * MS)]);
    assert_eq!(report.faults[1].at_ns, 45 * MS);
    assert_eq!(pings_received(&procs[0]), [1], "only n1's ping of 10 ms");
    // The three held pings are lost with it, and the five that arrive from 51 ms on.
    assert_eq!(report.drops.crashed_receiver, 3 + 5);
}

#[test]
fn the_random_stream_of_a_triggered_fault_is_its_own_whenever_it_fires() {
    // The same fault, fired at 10 ms or at 7 ms: it strikes the same random member.
    let crash_random = || FaultSpec {
        at_ns: 0,
        action: FaultAction::Crash(Target::Random),
        heal_after_ns: None,
        after: after(sent("ping"), Actor::Node(0), 1, 0),
    };
    let struck = |every_ns| {
        let mut c = config(5, 50 * MS);
        c.faults = vec![crash_random()];
        let mut nodes = vec![Toy::default(); 5];
        nodes[0] = Toy::pinger(every_ns);
        let (report, _) = run(c, nodes);
        (report.faults[0].at_ns, report.faults[0].nodes.clone())
    };
    let (at_a, a) = struck(10 * MS);
    let (at_b, b) = struck(7 * MS);
    assert_ne!(at_a, at_b);
    assert_eq!(a, b);
}

/// Observes `tick` (its count) every 10 ms.
#[derive(Clone, Debug, Default)]
struct Observer {
    ticks: u64,
}

impl Process for Observer {
    type Msg = super::ToyMsg;
    type Timer = Tick;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, super::ToyMsg, Tick>) {
        ctx.set_timer(Tick, 10 * MS);
    }

    fn on_message(&mut self, _: &mut Ctx<'_, super::ToyMsg, Tick>, _: NodeId, _: super::ToyMsg) {}

    fn on_timer(&mut self, ctx: &mut Ctx<'_, super::ToyMsg, Tick>, _: Tick) {
        self.ticks += 1;
        ctx.observe("tick", self.ticks);
        ctx.set_timer(Tick, 10 * MS);
    }

    fn on_restart(&mut self, _: &mut Ctx<'_, super::ToyMsg, Tick>) {}

    fn term(&self) -> u64 {
        0
    }

    fn write_token(&self, _: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }
}

#[test]
fn a_user_observation_triggers_without_any_property_installed() {
    let mut c = config(3, 100 * MS);
    c.faults = vec![crash_n2(
        0,
        after(TriggerEvent::Observed("tick".into()), Actor::Node(1), 4, 0),
    )];
    let report = Sim::new(c, info(3), vec![Observer::default(); 3])
        .run()
        .unwrap();
    assert_eq!(the_fault(&report.faults).at_ns, 40 * MS);
    assert!(
        report.observations.is_empty(),
        "counted only for properties"
    );
}
