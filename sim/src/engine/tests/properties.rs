//! Users' own properties, the observation stream, refused effects and handler panics.

use super::{config, info, run_traced, Toy};
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::network_config::Latency;
use crate::process::{Ctx, Message, Process, TimerKind};
use crate::property::{Breach, Observation, Properties, Value, WriteOutcome};
use crate::refused::{HandlerEvent, Handling, Refusal, RunError};
use crate::report::RunReport;
use crate::time::{LocalNanos, NANOS_PER_MILLI as MS, NANOS_PER_SEC as S};
use crate::trace::TraceHasher;
use crate::{Sim, SimConfig};
use std::sync::{Arc, Mutex};

// A lock passed from node to node: the holder keeps it a random while, then hands it to a
// random peer. The correct node lets go before it hands the lock on; the broken one hands it
// on first and lets go a random while later, so two nodes may hold it at once.

#[derive(Clone, Debug)]
enum LockMsg {
    Grant,
}

impl Message for LockMsg {
    const KINDS: &'static [&'static str] = &["grant"];
    fn kind(&self) -> usize {
        0
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum LockTimer {
    Release,
    LetGo,
}

impl TimerKind for LockTimer {
    const NAMES: &'static [&'static str] = &["release", "let_go"];
    fn index(self) -> usize {
        self as usize
    }
    fn from_index(index: usize) -> Self {
        [LockTimer::Release, LockTimer::LetGo][index]
    }
}

#[derive(Clone, Debug)]
struct LockNode {
    broken: bool,
    holds: bool,
}

type LockCtx<'a> = Ctx<'a, LockMsg, LockTimer>;

impl LockNode {
    fn acquire(&mut self, ctx: &mut LockCtx<'_>) {
        self.holds = true;
        ctx.observe("acquired", ());
        let hold_ns = ctx.rng().between(MS, 10 * MS);
        ctx.set_timer(LockTimer::Release, hold_ns);
    }

    fn let_go(&mut self, ctx: &mut LockCtx<'_>) {
        self.holds = false;
        ctx.observe("released", ());
    }
}

impl Process for LockNode {
    type Msg = LockMsg;
    type Timer = LockTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut LockCtx<'_>) {
        if ctx.me() == NodeId(0) {
            self.acquire(ctx);
        }
    }

    fn on_message(&mut self, ctx: &mut LockCtx<'_>, _from: NodeId, _msg: LockMsg) {
        self.acquire(ctx);
    }

    fn on_timer(&mut self, ctx: &mut LockCtx<'_>, timer: LockTimer) {
        match timer {
            LockTimer::Release => {
                let peers: Vec<NodeId> = ctx.peers().collect();
                let next = peers[ctx.rng().index(peers.len())];
                if self.broken {
                    // Hands the lock on first, lets go after a while: a check-then-act race.
                    ctx.send(next, LockMsg::Grant);
                    let linger_ns = ctx.rng().between(0, 3 * MS);
                    ctx.set_timer(LockTimer::LetGo, linger_ns);
                } else {
                    self.let_go(ctx);
                    ctx.send(next, LockMsg::Grant);
                }
            }
            LockTimer::LetGo => self.let_go(ctx),
        }
    }

    fn on_restart(&mut self, _ctx: &mut LockCtx<'_>) {
        self.holds = false;
    }

    fn term(&self) -> u64 {
        0
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        None
    }
}

/// At most one node holds the lock at any time, by the nodes' own observations.
fn one_lock_holder() -> Properties {
    Properties::new().always(
        "one_lock_holder",
        |holder: &mut Option<NodeId>, _now, observation: &Observation| {
            match *observation {
                Observation::User {
                    node,
                    name: "acquired",
                    ..
                } => match *holder {
                    Some(other) if other != node => {
                        return Err(Breach::new(format!("{node} took the lock {other} holds"))
                            .nodes([other, node]));
                    }
                    _ => *holder = Some(node),
                },
                Observation::User {
                    node,
                    name: "released",
                    ..
                }
                | Observation::Crash { node }
                    if *holder == Some(node) =>
                {
                    *holder = None;
                }
                _ => {}
            }
            Ok(())
        },
    )
}

fn lock_config(seed: u64) -> SimConfig {
    let mut c = SimConfig::quiet(seed, 3, 2 * S);
    c.network.default.latency = Latency::Uniform(MS / 2, 2 * MS);
    c
}

fn lock_run(seed: u64, broken: bool, properties: &Properties) -> RunReport {
    let nodes = vec![
        LockNode {
            broken,
            holds: false
        };
        3
    ];
    Sim::new(lock_config(seed), info(3), nodes)
        .with_properties(properties)
        .run()
        .expect("within the default limits")
}

#[test]
fn a_user_property_fires_on_a_broken_lock_and_stays_quiet_on_a_correct_one() {
    let properties = one_lock_holder();
    let name = Invariant::Property("one_lock_holder");
    let mut broken_seeds = 0;
    for seed in 1..=40 {
        let correct = lock_run(seed, false, &properties);
        // (No leader is ever elected here: liveness fails, and is not this test's business.)
        assert!(
            correct.violated_safety().is_empty(),
            "seed {seed}: {correct:?}"
        );
        let broken = lock_run(seed, true, &properties);
        if let Some(v) = broken.violations.iter().find(|v| v.invariant == name) {
            broken_seeds += 1;
            assert_eq!(v.nodes.len(), 2, "the two holders: {v:?}");
            assert!(v.detail.contains("took the lock"), "{}", v.detail);
            assert!(
                v.detail.ends_with(')'),
                "the time is appended: {}",
                v.detail
            );
            assert_eq!(broken.violated_safety(), vec![name]);
        }
    }
    // Two holders overlap whenever the grant arrives before the old holder lets go.
    assert!(broken_seeds >= 30, "fired on {broken_seeds} of 40 seeds");
}

#[test]
fn a_user_property_is_named_in_the_report_json_and_the_trace() {
    let mut writer = crate::trace::JsonLinesWriter::new(Vec::new());
    let nodes = vec![
        LockNode {
            broken: true,
            holds: false
        };
        3
    ];
    let report = Sim::new(lock_config(1), info(3), nodes)
        .with_properties(&one_lock_holder())
        .with_trace(&mut writer)
        .run()
        .unwrap();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["violations"][0]["invariant"], "one_lock_holder");
    let trace = String::from_utf8(writer.into_inner()).unwrap();
    let flagged = trace
        .lines()
        .find(|l| l.contains(r#""check":"one_lock_holder""#))
        .expect("the event that broke it is flagged");
    assert!(flagged.contains(r#""ev":"deliver""#), "{flagged}");
}

/// A property that keeps every observation it is shown (shared, for the test to read).
fn recorder(seen: &Arc<Mutex<Vec<Observation>>>) -> Properties {
    let seen = Arc::clone(seen);
    Properties::new().always("records", move |_: &mut (), _now, o: &Observation| {
        seen.lock().unwrap().push(*o);
        Ok(())
    })
}

#[test]
fn a_user_observation_reaches_the_property_with_its_node_and_value() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    lock_run(3, false, &recorder(&seen));
    let seen = seen.lock().unwrap();
    let first = seen
        .iter()
        .find(|o| matches!(o, Observation::User { .. }))
        .expect("observed");
    assert_eq!(
        *first,
        Observation::User {
            node: NodeId(0),
            name: "acquired",
            value: Value::Unit
        }
    );
    // A handler's own observations come before its term report.
    let position = seen.iter().position(|o| o == first).unwrap();
    assert_eq!(
        seen[position + 1],
        Observation::Term {
            node: NodeId(0),
            term: 0
        }
    );
}

#[test]
fn claims_step_downs_crashes_and_write_verdicts_are_observed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut c = config(3, 2 * S);
    c.write_every_ns = 100 * MS;
    c.faults = vec![super::fault(
        S,
        crate::fault::FaultAction::Crash(crate::fault::Target::Node(1)),
    )];
    let nodes = vec![
        Toy::claims(100 * MS, 1),
        Toy::claims(300 * MS, 2),
        Toy::default(),
    ];
    Sim::new(c, info(3), nodes)
        .with_properties(&recorder(&seen))
        .run()
        .unwrap();
    let seen = seen.lock().unwrap();
    let claims: Vec<(NodeId, u64)> = seen
        .iter()
        .filter_map(|o| match *o {
            Observation::Claim { node, term, .. } => Some((node, term)),
            _ => None,
        })
        .collect();
    assert_eq!(claims, vec![(NodeId(0), 1), (NodeId(1), 2)]);
    assert!(seen.contains(&Observation::StepDown { node: NodeId(0) }));
    assert!(seen.contains(&Observation::Crash { node: NodeId(1) }));
    let verdicts: Vec<WriteOutcome> = seen
        .iter()
        .filter_map(|o| match *o {
            Observation::Write { verdict, .. } => Some(verdict),
            _ => None,
        })
        .collect();
    assert!(verdicts.contains(&WriteOutcome::Accepted { stale: false }));
    assert!(seen
        .iter()
        .any(|o| matches!(o, Observation::Term { node, term: 2 } if *node == NodeId(2))));
}

#[test]
fn a_panicking_property_is_reported_as_its_own_violation_and_the_run_goes_on() {
    let properties = Properties::new()
        .always("panics", |_: &mut (), _now, o: &Observation| {
            if let Observation::Claim { .. } = o {
                panic!("cannot count claims");
            }
            Ok(())
        })
        .always("never_breaks", |_: &mut (), _now, _: &Observation| Ok(()));
    let nodes = vec![Toy::claims(100 * MS, 1), Toy::default()];
    let report = Sim::new(config(2, S), info(2), nodes)
        .with_properties(&properties)
        .run()
        .expect("a property's panic does not end the run");
    assert_eq!(report.violations.len(), 1, "{:?}", report.violations);
    let v = &report.violations[0];
    assert_eq!(v.invariant, Invariant::Property("panics"));
    assert!(v.detail.contains("the property panicked"), "{}", v.detail);
    assert!(v.detail.contains("cannot count claims"), "{}", v.detail);
    assert_eq!(v.nodes, vec![NodeId(0)]);
    assert_eq!(report.end_ns, S);
}

#[test]
fn the_same_seed_with_properties_gives_the_same_report_and_trace() {
    let once = |broken: bool| {
        let mut hasher = TraceHasher::default();
        let nodes = vec![
            LockNode {
                broken,
                holds: false
            };
            3
        ];
        let report = Sim::new(lock_config(7), info(3), nodes)
            .with_properties(&one_lock_holder())
            .with_trace(&mut hasher)
            .run()
            .unwrap();
        (serde_json::to_string(&report).unwrap(), hasher.hash())
    };
    assert_eq!(once(true), once(true));
    assert_eq!(once(false), once(false));
}

#[test]
fn a_property_that_never_breaks_changes_neither_the_trace_nor_the_report() {
    let nodes = || {
        vec![
            Toy::claims(100 * MS, 1),
            Toy::pinger(30 * MS),
            Toy::default(),
        ]
    };
    let mut c = config(3, 2 * S);
    c.write_every_ns = 100 * MS;
    let (plain, plain_trace) = run_traced(c.clone(), nodes());
    let mut writer = crate::trace::JsonLinesWriter::new(Vec::new());
    let quiet = Properties::new().always("quiet", |_: &mut (), _, _: &Observation| Ok(()));
    let watched = Sim::new(c, info(3), nodes())
        .with_properties(&quiet)
        .with_trace(&mut writer)
        .run()
        .unwrap();
    let watched_trace = String::from_utf8(writer.into_inner()).unwrap();
    assert_eq!(plain_trace, watched_trace);
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        serde_json::to_string(&watched).unwrap()
    );
}

// Effects the engine refuses: typed errors, never panics.

/// Sends one ping to `to` when its tick fires at 5 ms.
#[derive(Clone, Debug, Default)]
struct Misuser {
    to: u32,
    timer_index: Option<usize>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct BadTimer(usize);

impl TimerKind for BadTimer {
    const NAMES: &'static [&'static str] = &["tick"];
    fn index(self) -> usize {
        self.0
    }
    fn from_index(index: usize) -> Self {
        BadTimer(index)
    }
}

impl Process for Misuser {
    type Msg = LockMsg;
    type Timer = BadTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, LockMsg, BadTimer>) {
        ctx.set_timer(BadTimer(0), 5 * MS);
        if let Some(index) = self.timer_index {
            ctx.set_timer(BadTimer(index), MS);
        }
    }

    fn on_message(&mut self, _: &mut Ctx<'_, LockMsg, BadTimer>, _: NodeId, _: LockMsg) {}

    fn on_timer(&mut self, ctx: &mut Ctx<'_, LockMsg, BadTimer>, _timer: BadTimer) {
        ctx.send(NodeId(self.to), LockMsg::Grant);
    }

    fn on_restart(&mut self, _: &mut Ctx<'_, LockMsg, BadTimer>) {}

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
fn a_message_to_a_node_that_does_not_exist_is_a_refused_effect_not_a_panic() {
    let nodes = vec![
        Misuser {
            to: 9,
            ..Misuser::default()
        },
        Misuser {
            to: 0,
            ..Misuser::default()
        },
    ];
    let error = Sim::new(config(2, S), info(2), nodes)
        .run()
        .expect_err("n9 does not exist");
    let RunError::Refused(refused) = &error else {
        panic!("refused, not {error}");
    };
    assert_eq!(
        refused.handling,
        Handling {
            node: NodeId(0),
            at_ns: 5 * MS,
            event: HandlerEvent::Timer { timer: "tick" },
        }
    );
    assert_eq!(
        refused.refusal,
        Refusal::NoSuchNode {
            node: NodeId(9),
            processes: 2
        }
    );
    assert!(refused.effect.contains("NodeId(9)"), "{}", refused.effect);
    assert_eq!(
        error.to_string(),
        "n0 asked for an effect the engine refuses while handling timer tick at 5ms: \
         Send { to: NodeId(9), msg: Grant }: n9 does not exist (this run has processes n0 to n1)"
    );
}

#[test]
fn the_resource_is_no_process_to_send_to() {
    let nodes = vec![
        Misuser {
            to: 2,
            ..Misuser::default()
        },
        Misuser {
            to: 0,
            ..Misuser::default()
        },
    ];
    let error = Sim::new(config(2, S), info(2), nodes).run().unwrap_err();
    assert!(
        matches!(
            error.refused().map(|r| r.refusal),
            Some(Refusal::NoSuchNode {
                node: NodeId(2),
                ..
            })
        ),
        "{error}"
    );
}

#[test]
fn a_timer_kind_past_its_names_is_refused_at_start() {
    let nodes = vec![
        Misuser {
            to: 1,
            timer_index: Some(1),
        },
        Misuser::default(),
    ];
    let error = Sim::new(config(2, S), info(2), nodes).run().unwrap_err();
    let refused = error.refused().expect("refused");
    assert_eq!(refused.handling.event, HandlerEvent::Start);
    assert_eq!(refused.handling.at_ns, 0);
    assert_eq!(
        refused.refusal,
        Refusal::NoSuchTimerKind { index: 1, kinds: 1 }
    );
    assert!(error.limit().is_none());
}

// A panic inside a handler: whoever catches it learns where it happened.

#[derive(Clone, Debug, Default)]
struct Fragile;

impl Process for Fragile {
    type Msg = LockMsg;
    type Timer = LockTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut LockCtx<'_>) {
        if ctx.me() == NodeId(1) {
            ctx.send(NodeId(0), LockMsg::Grant);
        }
    }

    fn on_message(&mut self, _: &mut LockCtx<'_>, _: NodeId, _: LockMsg) {
        panic!("a grant was not expected");
    }

    fn on_timer(&mut self, _: &mut LockCtx<'_>, _: LockTimer) {}

    fn on_restart(&mut self, _: &mut LockCtx<'_>) {}

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
fn a_panic_in_a_handler_leaves_its_node_and_event_to_the_catcher() {
    assert_eq!(crate::take_handler_panic(), None);
    let caught =
        std::panic::catch_unwind(|| Sim::new(config(2, S), info(2), vec![Fragile, Fragile]).run());
    assert!(caught.is_err());
    assert_eq!(
        crate::take_handler_panic(),
        Some(Handling {
            node: NodeId(0),
            at_ns: MS,
            event: HandlerEvent::Message {
                message: "grant",
                from: NodeId(1),
                sent_ns: 0
            },
        })
    );
    assert_eq!(crate::take_handler_panic(), None, "taken once");
    // A run that does not panic leaves nothing behind.
    let nodes = vec![Toy::pinger(10 * MS), Toy::default()];
    Sim::new(config(2, S), info(2), nodes).run().unwrap();
    assert_eq!(crate::take_handler_panic(), None);
}

/// Counts the observations it is shown and measures their number and the last one's time.
#[derive(Default)]
struct Counter {
    seen: u64,
    last_ns: u64,
}

impl crate::property::Property for Counter {
    fn name(&self) -> &'static str {
        "counter"
    }
    fn check(&mut self, now_ns: u64, _observation: &Observation) -> Result<(), Breach> {
        self.seen += 1;
        self.last_ns = now_ns;
        Ok(())
    }
    fn measures(&self, end_ns: u64) -> Vec<crate::property::Measured> {
        let quiet_s = (end_ns - self.last_ns) as f64 / S as f64;
        vec![
            crate::property::Measured::new("observations", self.seen as f64),
            crate::property::Measured::new("quiet_at_end_s", quiet_s),
        ]
    }
}

#[test]
fn what_a_property_measures_is_in_the_report_and_nothing_changes_without_it() {
    let counting = Properties::new().with(Arc::new(|| Box::new(Counter::default())));
    let measured = lock_run(7, false, &counting);
    let names: Vec<&str> = measured.measures.iter().map(|m| m.name).collect();
    assert_eq!(names, ["observations", "quiet_at_end_s"]);
    assert!(measured.measures[0].value > 0.0, "{:?}", measured.measures);
    assert!((0.0..=2.0).contains(&measured.measures[1].value));
    let json = serde_json::to_string(&measured).expect("serializes");
    assert!(
        json.contains(r#""measures":[{"name":"observations","value":"#),
        "{json}"
    );
    let plain = lock_run(7, false, &Properties::new());
    assert!(plain.measures.is_empty());
    assert!(!serde_json::to_string(&plain)
        .expect("serializes")
        .contains("measures"));
}
