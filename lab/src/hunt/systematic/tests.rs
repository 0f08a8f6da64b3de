//! Each kind of step is enumerated (a bug reachable only through it is found, and not found
//! without it); the search is the same whatever the number of jobs; a correct algorithm is
//! explored complete to its bound.

use super::*;
use crate::hunt::seeds::Shard;
use crate::hunt::Ended;
use serde::{Deserialize, Serialize};
use splitbrain_algorithms::simple::SimpleAlgorithm;
use splitbrain_scenario::Scenario;
use splitbrain_sim::{Ctx, Message, NodeId, Process, TimerKind};
use std::collections::BTreeSet;

/// What the toy algorithm gets wrong, as a scenario names it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Flaw {
    /// Each member claims term 1 when its timeout (drawn with `draw_timeout`) fires unless
    /// it heard a claim first: two timeouts within a message's latency claim twice.
    #[default]
    SameTimeout,
    /// Members 1 and 2 ask member 0 at once; 0 grants the first, and grants member 1 as
    /// well after member 2: only the order member 2 first breaks safety.
    AskOrder,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ToySettings {
    flaw: Flaw,
}

#[derive(Clone, Debug)]
enum ToyMsg {
    Claim,
    Ask,
    Grant,
}

impl Message for ToyMsg {
    const KINDS: &'static [&'static str] = &["Claim", "Ask", "Grant"];
    fn kind(&self) -> usize {
        match self {
            ToyMsg::Claim => 0,
            ToyMsg::Ask => 1,
            ToyMsg::Grant => 2,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Claim;

impl TimerKind for Claim {
    const NAMES: &'static [&'static str] = &["claim"];
    fn index(self) -> usize {
        0
    }
    fn from_index(_: usize) -> Self {
        Claim
    }
}

#[derive(Clone, Debug)]
struct Toy {
    flaw: Flaw,
    leader: Option<NodeId>,
    granted: Vec<NodeId>,
}

type ToyCtx<'a> = Ctx<'a, ToyMsg, Claim>;

impl Toy {
    fn claim(&mut self, ctx: &mut ToyCtx<'_>) {
        self.leader = Some(ctx.me());
        ctx.became_leader(1, 1);
        let peers: Vec<NodeId> = ctx.peers().collect();
        for peer in peers {
            ctx.send(peer, ToyMsg::Claim);
        }
    }
}

impl Process for Toy {
    type Msg = ToyMsg;
    type Timer = Claim;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut ToyCtx<'_>) {
        match self.flaw {
            Flaw::SameTimeout => {
                let after_ns = ctx.draw_timeout(100_000_000, 400_000_000);
                ctx.set_timer(Claim, after_ns);
            }
            Flaw::AskOrder if ctx.me() != NodeId(0) => ctx.send(NodeId(0), ToyMsg::Ask),
            Flaw::AskOrder => {}
        }
    }

    fn on_message(&mut self, ctx: &mut ToyCtx<'_>, from: NodeId, msg: ToyMsg) {
        match msg {
            ToyMsg::Claim if self.leader.is_none() => {
                self.leader = Some(from);
                ctx.cancel_timer(Claim);
            }
            ToyMsg::Claim => {}
            ToyMsg::Ask => {
                let second_after_two = self.granted == [NodeId(2)] && from == NodeId(1);
                if self.granted.is_empty() || second_after_two {
                    self.granted.push(from);
                    ctx.send(from, ToyMsg::Grant);
                }
            }
            ToyMsg::Grant => self.claim(ctx),
        }
    }

    fn on_timer(&mut self, ctx: &mut ToyCtx<'_>, _: Claim) {
        if self.leader.is_none() {
            self.claim(ctx);
        }
    }

    fn on_restart(&mut self, _: &mut ToyCtx<'_>) {}

    fn term(&self) -> u64 {
        u64::from(self.leader.is_some())
    }

    fn write_token(&self, _: i64) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        self.leader
    }
}

struct ToyAlgorithm;

impl SimpleAlgorithm for ToyAlgorithm {
    const NAME: &'static str = "systematic-toy";
    const SCENARIO_NAME: &'static str = "SystematicToy";
    type Settings = ToySettings;
    type Process = Toy;

    fn process(settings: &ToySettings, _: NodeId, _: usize) -> Toy {
        Toy {
            flaw: settings.flaw,
            leader: None,
            granted: Vec::new(),
        }
    }

    fn heartbeat_ns(_: &ToySettings) -> Nanos {
        50_000_000
    }
}

/// A scenario of the toy with `flaw` on `nodes` members, whose nemesis has only clock jumps
/// (which the toy never reads): no fault can break it.
fn toy(flaw: &str, nodes: u32, choices: &str) -> Scenario {
    splitbrain_algorithms::register::<ToyAlgorithm>().expect("the toy registers");
    let text = format!(
        r#"Scenario(duration: "3s", nodes: {nodes}, algorithm: SystematicToy(flaw: {flaw}),
           network: (latency: Constant("10ms")), {choices}
           nemesis: (kinds: [ClockJump], mean_interval: "300ms", start: "50ms", quiet: "1s", fault_duration: ("100ms", "100ms")))"#
    );
    splitbrain_scenario::parse(&text, "toy.ron").expect("a valid scenario")
}

fn bound(steps: usize) -> Bound {
    Bound {
        steps,
        grid_ns: 100_000_000,
        points: 3,
        lengths_ns: vec![100_000_000],
    }
}

fn search(scenario: &Scenario, steps: usize, jobs: usize) -> (Coverage, Ended, Option<Explored>) {
    let space = Space::new(scenario, scenario.sim.seed, &bound(steps)).expect("a space");
    search_in(&space, steps, jobs)
}

/// Searches `space` to `steps` on `jobs` threads: what it covered, how it ended and its
/// first failing run.
fn search_in(space: &Space, steps: usize, jobs: usize) -> (Coverage, Ended, Option<Explored>) {
    search_shard(space, steps, jobs, None)
}

/// Searches `shard` of `space` (all of it if `None`).
fn search_shard(
    space: &Space,
    steps: usize,
    jobs: usize,
    shard: Option<Shard>,
) -> (Coverage, Ended, Option<Explored>) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .expect("a pool");
    let search = Search {
        space,
        steps,
        keep_going: false,
        shard,
    };
    let mut first = None;
    let (coverage, ended) = search.run(&pool, &|| None, &|| false, |runs| {
        if first.is_none() {
            first = runs.iter().find(|r| r.record.failed()).cloned();
        }
        ControlFlow::Continue(())
    });
    (coverage, ended, first)
}

/// The first seed whose own draws do not make two members claim at once.
fn seed_without_a_clash(scenario: &mut Scenario) {
    for seed in 1..100 {
        scenario.sim.seed = seed;
        let space = Space::new(scenario, seed, &bound(0)).expect("a space");
        if !crate::hunt::run_judged(&space.scenario(&[])).failed() {
            return;
        }
    }
    panic!("every seed clashes");
}

#[test]
fn a_bug_reachable_only_through_a_timeout_choice_is_found() {
    let mut with = toy("SameTimeout", 2, r#"choices: (timeouts: 4),"#);
    seed_without_a_clash(&mut with);
    let (_, ended, first) = search(&with, 1, 2);
    assert_eq!(ended, Ended::FirstFailure);
    let found = first.expect("a counterexample");
    assert!(
        matches!(
            found.schedule[..],
            [Step::Choose {
                kind: ChoiceKind::Timeout,
                ..
            }]
        ),
        "{:?}",
        found.schedule
    );
    assert_eq!(found.record.failures[0].key, "election_safety");
    // The written scenario replays it, choices and all.
    let space = Space::new(&with, with.sim.seed, &bound(1)).expect("a space");
    let text = splitbrain_scenario::to_ron(&space.scenario(&found.schedule));
    assert!(text.contains("take: [(index: "), "{text}");
    let written = splitbrain_scenario::parse(&text, "written.ron").expect("it reads back");
    let replayed = crate::hunt::run_judged(&written);
    assert!(replayed.failed());
    // Timeouts drawn from a continuum are no choice: the same bound finds nothing.
    let mut without = toy("SameTimeout", 2, "");
    without.sim.seed = with.sim.seed;
    let (coverage, ended, _) = search(&without, 1, 2);
    assert_eq!((ended, coverage.complete_to), (Ended::Complete, Some(1)));
    assert_eq!(coverage.choice_points.timeout, 0);
}

#[test]
fn a_bug_reachable_only_through_the_order_of_simultaneous_events_is_found() {
    let scenario = toy("AskOrder", 3, "");
    let space = Space::new(&scenario, scenario.sim.seed, &bound(0)).expect("a space");
    assert!(!crate::hunt::run_judged(&space.scenario(&[])).failed());
    let (coverage, ended, first) = search(&scenario, 1, 2);
    assert_eq!(ended, Ended::FirstFailure);
    assert!(coverage.choice_points.order >= 1);
    let found = first.expect("a counterexample");
    assert!(
        matches!(
            found.schedule[..],
            [Step::Choose {
                kind: ChoiceKind::Order,
                ..
            }]
        ),
        "{:?}",
        found.schedule
    );
}

/// Raft that forgets its vote on 3 nodes, crashes and cut links on a grid of 6 points: a
/// double vote needs three faults.
fn forgets_vote_space() -> Space {
    let text = r#"Scenario(seed: 1, duration: "5s", nodes: 3,
        algorithm: Raft(election_timeout: ("150ms", "300ms"), heartbeat: "50ms", variant: ForgetsVoteOnRestart),
        nemesis: (kinds: [Crash, CutLink], mean_interval: "300ms", fault_duration: ("10ms", "2s"), start: "500ms", quiet: "1s"))"#;
    let scenario = splitbrain_scenario::parse(text, "forgets.ron").expect("a valid scenario");
    let grid = Bound {
        steps: 3,
        grid_ns: 50_000_000,
        points: 6,
        lengths_ns: vec![10_000_000, 2_000_000_000],
    };
    Space::new(&scenario, 1, &grid).expect("a space")
}

#[test]
fn a_bug_needing_three_faults_is_found_with_three_steps_and_not_with_two() {
    let space = forgets_vote_space();
    let run = |steps| search_in(&space, steps, 2);
    let (two, ended, _) = run(2);
    assert_eq!((ended, two.complete_to), (Ended::Complete, Some(2)));
    assert!(
        two.pruned_points > 0,
        "states reached again are not explored again"
    );
    let (_, ended, first) = run(3);
    assert_eq!(ended, Ended::FirstFailure);
    let found = first.expect("a counterexample");
    assert_eq!(found.schedule.len(), 3);
    assert!(found
        .record
        .failures
        .iter()
        .any(|f| f.key == "election_safety"));
}

#[test]
fn shards_split_the_one_step_schedules_and_together_find_what_the_whole_search_finds() {
    let space = forgets_vote_space();
    let one_step = |shard: Option<Shard>| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool");
        let search = Search {
            space: &space,
            steps: 1,
            keep_going: false,
            shard,
        };
        let mut seen = BTreeSet::new();
        let (coverage, ended) = search.run(&pool, &|| None, &|| false, |runs| {
            seen.extend(
                runs.iter()
                    .filter(|r| r.schedule.len() == 1)
                    .map(|r| format!("{:?}", r.schedule[0])),
            );
            ControlFlow::Continue(())
        });
        assert_eq!((ended, coverage.complete_to), (Ended::Complete, Some(1)));
        seen
    };
    let whole = one_step(None);
    let shards: Vec<_> = (0..3)
        .map(|index| one_step(Some(Shard { index, count: 3 })))
        .collect();
    for (i, a) in shards.iter().enumerate() {
        assert!(!a.is_empty());
        for b in &shards[i + 1..] {
            assert!(a.is_disjoint(b), "a schedule runs in two shards");
        }
    }
    let together: BTreeSet<String> = shards.into_iter().flatten().collect();
    assert_eq!(together, whole);
    // Three faults: some shard finds the double vote.
    let found =
        (0..3).filter_map(|index| search_shard(&space, 3, 2, Some(Shard { index, count: 3 })).2);
    assert!(found.into_iter().any(|f| f.schedule.len() == 3));
}

#[test]
fn the_count_and_the_first_counterexample_do_not_depend_on_the_jobs() {
    let mut scenario = toy("SameTimeout", 3, r#"choices: (timeouts: 3),"#);
    scenario.sim.seed = 7;
    let one = search(&scenario, 2, 1);
    let two = search(&scenario, 2, 2);
    assert_eq!(one.0.schedules, two.0.schedules);
    assert_eq!(one.0.distinct_states, two.0.distinct_states);
    assert_eq!(one.1, two.1);
    let schedule =
        |r: &(Coverage, Ended, Option<Explored>)| r.2.as_ref().map(|e| e.schedule.clone());
    assert_eq!(schedule(&one), schedule(&two));
}

#[test]
fn a_stall_behind_a_pause_keeps_liveness_windows_shut_until_it_ends() {
    // Found by the search: the stall strikes at the pause's end and freezes n2 five more
    // seconds; no window may judge the group while it does.
    let text = r#"Scenario(seed: 1, duration: "20s", nodes: 3,
        algorithm: Raft(election_timeout: ("150ms", "300ms"), heartbeat: "50ms", pre_vote: true, check_quorum: true),
        faults: [(at: "1s", do: Pause(Node(2), "5s")), (at: "1.05s", do: Stall(Node(2), "5s"))])"#;
    let scenario = splitbrain_scenario::parse(text, "stall.ron").expect("a valid scenario");
    let record = crate::hunt::run_judged(&scenario);
    assert!(!record.failed(), "{:?}", record.failures);
}

/// Three Raft members of which n1 and n2 are alike to the nanosecond: fixed election
/// timeouts, constant latency, and n0's clock 20% fast so that n0 leads. A crash of n1 or
/// of n2 at one instant leads to states that differ only by their names.
fn alike_followers() -> Scenario {
    let text = r#"Scenario(seed: 1, duration: "4s", nodes: 3,
        algorithm: Raft(election_timeout: ("300ms", "300ms"), heartbeat: "50ms"),
        network: (latency: Constant("5ms")),
        clocks: (nodes: [(node: 0, drift_ppm: 200000)]),
        nemesis: (kinds: [Crash, Pause], mean_interval: "300ms", fault_duration: ("20ms", "20ms"), start: "600ms", quiet: "2s"))"#;
    splitbrain_scenario::parse(text, "alike.ron").expect("a valid scenario")
}

fn alike_bound(steps: usize) -> Bound {
    Bound {
        steps,
        grid_ns: 50_000_000,
        points: 6,
        lengths_ns: vec![20_000_000],
    }
}

#[test]
fn members_set_alike_and_named_by_no_fault_are_interchangeable() {
    let alike = alike_followers();
    let space = Space::new(&alike, 1, &alike_bound(1)).expect("a space");
    assert_eq!(
        space.symmetric(),
        [NodeId(1), NodeId(2)],
        "n0's clock is its own"
    );
    assert!(space.clone().without_symmetry().symmetric().is_empty());
    let mut named = alike.clone();
    named.sim.faults.push(splitbrain_sim::FaultSpec {
        at_ns: 2_000_000_000,
        action: splitbrain_sim::FaultAction::Crash(splitbrain_sim::Target::Node(2)),
        heal_after_ns: None,
        after: None,
    });
    let space = Space::new(&named, 1, &alike_bound(1)).expect("a space");
    assert!(space.symmetric().is_empty(), "n1 alone is left");
    let toy = toy("SameTimeout", 3, "");
    let space = Space::new(&toy, 1, &bound(1)).expect("a space");
    assert!(space.symmetric().is_empty(), "the toy does not rename");
    let text = r#"Scenario(seed: 1, duration: "4s", nodes: 4,
        algorithm: Raft(log_lengths: [3, 0, 3, 3]),
        nemesis: (kinds: [Crash], mean_interval: "300ms", start: "600ms", quiet: "2s"))"#;
    let logs = splitbrain_scenario::parse(text, "logs.ron").expect("a valid scenario");
    let space = Space::new(&logs, 1, &alike_bound(1)).expect("a space");
    let alike_logs = [NodeId(0), NodeId(2), NodeId(3)];
    assert_eq!(space.symmetric(), alike_logs, "the same initial log");
}

#[test]
fn symmetry_explores_fewer_states_and_finds_the_same_nothing() {
    let space = Space::new(&alike_followers(), 1, &alike_bound(2)).expect("a space");
    let (with, ended_with, _) = search_in(&space, 2, 2);
    let (without, ended_without, _) = search_in(&space.clone().without_symmetry(), 2, 2);
    assert_eq!((ended_with, with.complete_to), (Ended::Complete, Some(2)));
    assert_eq!(
        (ended_without, without.complete_to),
        (Ended::Complete, Some(2))
    );
    assert_eq!((with.failing, without.failing), (0, 0));
    assert!(
        with.distinct_states < without.distinct_states,
        "{} < {}",
        with.distinct_states,
        without.distinct_states
    );
    assert!(with.schedules < without.schedules);
    assert!(with.symmetric_prunes > 0);
    assert_eq!(without.symmetric_prunes, 0);
    // At one step every schedule extends the step-free run: only the states are fewer.
    let (one_with, ..) = search_in(&space, 1, 2);
    let (one_without, ..) = search_in(&space.clone().without_symmetry(), 1, 2);
    assert!(one_with.distinct_states < one_without.distinct_states);
}

#[test]
fn with_symmetry_the_count_does_not_depend_on_the_jobs() {
    let space = Space::new(&alike_followers(), 1, &alike_bound(2)).expect("a space");
    let one = search_in(&space, 2, 1);
    let two = search_in(&space, 2, 2);
    assert_eq!(one.0.schedules, two.0.schedules);
    assert_eq!(one.0.distinct_states, two.0.distinct_states);
    assert_eq!(one.0.symmetric_prunes, two.0.symmetric_prunes);
    let schedule = |r: &(Coverage, Ended, Option<Explored>)| r.0.schedules_by_steps.clone();
    assert_eq!(schedule(&one), schedule(&two));
}

#[test]
fn with_symmetry_the_three_step_double_vote_is_still_found_whatever_the_jobs() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../benches/time-to-bug/raft-forgets-vote-3-no-prevote.ron"
    ))
    .expect("the bench file");
    let scenario = splitbrain_scenario::parse(&text, "no-prevote.ron").expect("a valid scenario");
    // The counterexample's steps are at 1 s, 1.05 s and 1.15 s: four points hold them.
    let grid = Bound {
        steps: 3,
        grid_ns: 50_000_000,
        points: 4,
        lengths_ns: vec![100_000_000, 5_000_000_000],
    };
    let space = Space::new(&scenario, 1, &grid).expect("a space");
    assert_eq!(space.symmetric().len(), 3);
    let (count, ended, first) = search_in(&space, 3, 2);
    assert_eq!(ended, Ended::FirstFailure);
    let (count_alone, _, first_alone) = search_in(&space, 3, 1);
    assert_eq!(count.schedules, count_alone.schedules, "whatever the jobs");
    let schedule = |e: &Option<Explored>| e.as_ref().map(|e| e.schedule.clone());
    assert_eq!(schedule(&first), schedule(&first_alone));
    let found = first.expect("a counterexample");
    assert!(found
        .record
        .failures
        .iter()
        .any(|f| f.key == "election_safety"));
}
