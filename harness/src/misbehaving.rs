//! A user's algorithm that misbehaves, registered at run time as a user's would be (the short
//! way, [`SimpleAlgorithm`]): a panic
//! in its handler and an effect the engine refuses are that seed's failure, named with the
//! node and the event, never the end of the hunt or a panic of the engine.

use crate::Hunt;
use serde::{Deserialize, Serialize};
use splitbrain_algorithms::simple::SimpleAlgorithm;
use splitbrain_sim::{Ctx, Message, Nanos, NodeId, Process, TimerKind};

/// What the faulty node 1 does when its timer fires.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Fault {
    /// Nothing: a quiet algorithm.
    #[default]
    Nothing,
    /// Panics in its timer handler.
    Panics,
    /// Sends a message to node 99, which does not exist.
    SendsNowhere,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultySettings {
    #[serde(default)]
    fault: Fault,
}

#[derive(Clone, Debug)]
struct Ping;

impl Message for Ping {
    const KINDS: &'static [&'static str] = &["ping"];
    fn kind(&self) -> usize {
        0
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Tick;

impl TimerKind for Tick {
    const NAMES: &'static [&'static str] = &["tick"];
    fn index(self) -> usize {
        0
    }
    fn from_index(_: usize) -> Self {
        Tick
    }
}

const TICK_NS: Nanos = 100_000_000;

#[derive(Clone, Debug)]
struct FaultyNode {
    fault: Fault,
}

impl Process for FaultyNode {
    type Msg = Ping;
    type Timer = Tick;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Ping, Tick>) {
        // Node 0 leads term 1 for the whole run: the built-in checks stay quiet.
        if ctx.me() == NodeId(0) {
            ctx.became_leader(1, 1);
        }
        ctx.set_timer(Tick, TICK_NS);
    }

    fn on_message(&mut self, _ctx: &mut Ctx<'_, Ping, Tick>, _from: NodeId, _msg: Ping) {}

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Ping, Tick>, _timer: Tick) {
        if ctx.me() == NodeId(1) && ctx.monotonic_now() >= 5 * TICK_NS as i64 {
            match self.fault {
                Fault::Nothing => {}
                Fault::Panics => panic!("the user's handler gave up"),
                Fault::SendsNowhere => ctx.send(NodeId(99), Ping),
            }
        }
        ctx.set_timer(Tick, TICK_NS);
    }

    fn on_restart(&mut self, ctx: &mut Ctx<'_, Ping, Tick>) {
        ctx.set_timer(Tick, TICK_NS);
    }

    fn term(&self) -> u64 {
        1
    }

    fn write_token(&self, _local_now_ns: splitbrain_sim::LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        Some(NodeId(0))
    }
}

/// The short way: a process and its settings ([`SimpleAlgorithm`]).
struct Faulty;

impl SimpleAlgorithm for Faulty {
    const NAME: &'static str = "faulty";
    const SCENARIO_NAME: &'static str = "Faulty";
    type Settings = FaultySettings;
    type Process = FaultyNode;

    fn process(settings: &FaultySettings, _id: NodeId, _members: usize) -> FaultyNode {
        FaultyNode {
            fault: settings.fault,
        }
    }
    fn heartbeat_ns(_: &FaultySettings) -> Nanos {
        TICK_NS
    }
}

fn hunt(fault: &str) -> crate::HuntResult {
    crate::register::<Faulty>().expect("faulty registers");
    let text = format!(
        "Scenario(name: \"faulty-{fault}\", nodes: 3, duration: \"2s\",
                  algorithm: Faulty(fault: {fault}))"
    );
    let dir = std::env::temp_dir().join(format!("splitbrain-faulty-{}", std::process::id()));
    Hunt::text(&text)
        .expect("a scenario naming a registered algorithm")
        .seeds(3)
        .jobs(1)
        .shrink(false)
        .out_dir(dir)
        .run()
}

#[test]
fn a_registered_algorithm_runs_and_hunts_like_a_built_in_one() {
    hunt("Nothing").assert_safe();
}

#[test]
fn a_panic_in_a_users_handler_is_the_seeds_failure_naming_node_and_event() {
    let result = hunt("Panics");
    let found = result.assert_found("panic");
    let detail = &found.failure.detail;
    assert!(detail.contains("the user's handler gave up"), "{detail}");
    assert!(detail.contains("n1 handling timer tick"), "{detail}");
    assert!(
        found.replay.contains("SPLITBRAIN_SEED=1"),
        "{}",
        found.replay
    );
}

#[test]
fn an_effect_the_engine_refuses_is_the_seeds_failure_naming_node_and_event() {
    let result = hunt("SendsNowhere");
    let found = result.assert_found("refused");
    let detail = &found.failure.detail;
    assert!(detail.contains("n1 asked for an effect"), "{detail}");
    assert!(
        detail.contains("while handling timer tick at 500ms"),
        "{detail}"
    );
    assert!(detail.contains("99"), "{detail}");
    assert_eq!(found.failure.nodes, vec![1]);
}
