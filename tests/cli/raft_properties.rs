//! Raft under random fault schedules: the correct Raft stays safe whatever strikes it, and the
//! deliberately broken variants are caught by the checker within a bounded search (a checker
//! that never fires proves nothing).
//!
//! A failing case prints its schedule as a scenario file: save it and
//! `splitbrain run FILE --trace trace.jsonl` replays it.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, RngAlgorithm, TestRng, TestRunner};
use splitbrain::scenario::{parse, to_ron, Expect, Scenario};
use splitbrain_algorithms::raft::{RaftConfig, RaftTimerReset, RaftVariant};
use splitbrain_algorithms::AlgorithmConfig;
use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, PartitionShape, RunReport, SimConfig, Target,
    NANOS_PER_MILLI,
};
use std::fmt;

const DURATION_MS: u64 = 5_000;
const MAX_FAULTS: usize = 10;
/// Node indices are drawn below this and reduced modulo the cluster size, so that a schedule
/// does not depend on the cluster size it was drawn with (and shrinks independently of it).
const MAX_NODES: u32 = 5;

// ---------------------------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------------------------

/// A target before the cluster size is known.
#[derive(Clone, Debug)]
enum Who {
    Leader,
    Follower,
    Random,
    Node(u32),
    Minority,
    All,
}

impl Who {
    fn lower(&self, nodes: u32) -> Target {
        match self {
            Who::Leader => Target::Leader,
            Who::Follower => Target::Follower,
            Who::Random => Target::Random,
            Who::Node(i) => Target::Node(i % nodes),
            Who::Minority => Target::Minority,
            Who::All => Target::All,
        }
    }
}

/// Crash, pause, stall, clock targets: one node, chosen by role, at random, or by index.
fn one_node() -> impl Strategy<Value = Who> {
    prop_oneof![
        Just(Who::Leader),
        Just(Who::Follower),
        Just(Who::Random),
        (0..MAX_NODES).prop_map(Who::Node),
    ]
}

/// A partition shape before the cluster size is known. `Groups` is a group label per node.
#[derive(Clone, Debug)]
enum Shape {
    Groups([u32; MAX_NODES as usize]),
    Isolate(Who),
    MajorityMinority(Who),
    OneWay(Who, Who),
    CutLink(Who, Who),
    Bridge(Who),
}

impl Shape {
    fn lower(&self, nodes: u32) -> PartitionShape {
        match self {
            Shape::Groups(labels) => {
                let groups = (0..MAX_NODES)
                    .map(|g| (0..nodes).filter(|i| labels[*i as usize] == g).collect())
                    .filter(|group: &Vec<u32>| !group.is_empty())
                    .collect();
                PartitionShape::Groups(groups)
            }
            Shape::Isolate(t) => PartitionShape::Isolate(t.lower(nodes)),
            Shape::MajorityMinority(t) => PartitionShape::MajorityMinority(t.lower(nodes)),
            Shape::OneWay(from, to) => PartitionShape::OneWay {
                from: from.lower(nodes),
                to: to.lower(nodes),
            },
            Shape::CutLink(a, b) => PartitionShape::CutLink(a.lower(nodes), b.lower(nodes)),
            Shape::Bridge(t) => PartitionShape::Bridge(t.lower(nodes)),
        }
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        1 => proptest::array::uniform5(0..3_u32).prop_map(Shape::Groups),
        1 => prop_oneof![one_node(), Just(Who::Minority)].prop_map(Shape::Isolate),
        1 => one_node().prop_map(Shape::MajorityMinority),
        1 => (one_node(), prop_oneof![one_node(), Just(Who::All)])
            .prop_map(|(from, to)| Shape::OneWay(from, to)),
        // A cut link between two nodes is the partial partition that lets two candidates
        // campaign through one voter without hearing of each other: weighted up.
        3 => (one_node(), one_node()).prop_map(|(a, b)| Shape::CutLink(a, b)),
        1 => one_node().prop_map(Shape::Bridge),
    ]
}

/// A fault before the cluster size is known; times and durations in milliseconds.
#[derive(Clone, Debug)]
enum Act {
    Crash(Who),
    Pause(Who, u64),
    Stall(Who, u64),
    Partition(Shape),
    ClockJump(Who, i64),
    ClockDrift(Who, i64),
    Loss(u32),
    Resign,
}

#[derive(Clone, Debug)]
struct Fault {
    at_ms: u64,
    act: Act,
    heal_after_ms: Option<u64>,
}

impl Fault {
    fn lower(&self, nodes: u32) -> FaultSpec {
        let ms = |d: u64| d * NANOS_PER_MILLI;
        let action = match &self.act {
            Act::Crash(t) => FaultAction::Crash(t.lower(nodes)),
            Act::Pause(t, d) => FaultAction::Pause(t.lower(nodes), ms(*d)),
            Act::Stall(t, d) => FaultAction::Stall(t.lower(nodes), ms(*d)),
            Act::Partition(s) => FaultAction::Partition(s.lower(nodes)),
            Act::ClockJump(t, d) => {
                FaultAction::ClockJump(t.lower(nodes), d * NANOS_PER_MILLI as i64)
            }
            Act::ClockDrift(t, ppm) => FaultAction::ClockDrift(t.lower(nodes), *ppm),
            Act::Loss(ppm) => FaultAction::Loss(*ppm),
            Act::Resign => FaultAction::Resign(Target::Leader),
        };
        FaultSpec {
            at_ns: ms(self.at_ms),
            action,
            heal_after_ns: self.heal_after_ms.map(ms),
            after: None,
        }
    }
}

fn fault() -> impl Strategy<Value = Fault> {
    let at = 0..DURATION_MS;
    let act_and_heal = prop_oneof![
        // A crash with a restart anywhere from almost at once to a second later.
        3 => (one_node(), 10..=1_000_u64).prop_map(|(t, h)| (Act::Crash(t), Some(h))),
        // A quick crash-restart of one node, the kind that makes a node forget volatile
        // state in the middle of an election.
        3 => ((0..MAX_NODES), 10..=50_u64).prop_map(|(i, h)| (Act::Crash(Who::Node(i)), Some(h))),
        1 => (one_node(), 10..=2_000_u64).prop_map(|(t, d)| (Act::Pause(t, d), None)),
        1 => (one_node(), 10..=2_000_u64).prop_map(|(t, d)| (Act::Stall(t, d), None)),
        4 => (shape(), 10..=3_000_u64).prop_map(|(s, h)| (Act::Partition(s), Some(h))),
        1 => (one_node(), -2_000..=2_000_i64).prop_map(|(t, d)| (Act::ClockJump(t, d), None)),
        1 => (one_node(), -200_000..=200_000_i64, 10..=3_000_u64)
            .prop_map(|(t, ppm, h)| (Act::ClockDrift(t, ppm), Some(h))),
        1 => (0..=500_000_u32, 10..=3_000_u64).prop_map(|(ppm, h)| (Act::Loss(ppm), Some(h))),
        1 => Just((Act::Resign, None)),
    ];
    (at, act_and_heal).prop_map(|(at_ms, (act, heal_after_ms))| Fault {
        at_ms,
        act,
        heal_after_ms,
    })
}

/// One generated run: a scenario, shown as its RON text so that a failure prints a file.
#[derive(Clone)]
struct Schedule {
    scenario: Scenario,
    raft: RaftConfig,
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{}", to_ron(&self.scenario))
    }
}

impl Schedule {
    fn new(sim: SimConfig, raft: RaftConfig) -> Self {
        // Start from a parsed scenario so that fields this test does not know keep their
        // defaults.
        let mut scenario = parse("Scenario(algorithm: Raft())", "raft-random-schedule.ron")
            .expect("the minimal scenario is valid");
        scenario.sim = sim;
        scenario.algorithm = AlgorithmConfig::from(raft.clone());
        assert_eq!(scenario.expect, Expect::Safe);
        Self { scenario, raft }
    }

    fn run(&self) -> RunReport {
        splitbrain_algorithms::run(&self.scenario.algorithm, self.scenario.sim.clone(), None)
            .expect("within the default limits")
    }

    /// The same faults, seed and options, run by another variant of Raft.
    fn with_variant(&self, variant: RaftVariant) -> Self {
        let raft = RaftConfig {
            variant,
            ..self.raft.clone()
        };
        Self::new(self.scenario.sim.clone(), raft)
    }
}

/// Where schedules are drawn from.
#[derive(Clone, Copy, Debug)]
struct Space {
    variant: RaftVariant,
    cluster_sizes: &'static [u32],
    /// Whether `pre_vote`, `check_quorum` and `timer_reset` are drawn at random; otherwise
    /// the first two are off and `timer_reset` is the default.
    raft_options: bool,
}

impl Space {
    /// Everything the generator can do, for `variant`.
    fn everything(variant: RaftVariant) -> Self {
        Self {
            variant,
            cluster_sizes: &[3, 5],
            raft_options: true,
        }
    }
}

/// Random schedules of up to ten faults over 5 seconds, with a random seed, cluster size,
/// Raft options (pre-vote, check-quorum, either election-timer rule) and fencing.
fn schedule(space: Space) -> impl Strategy<Value = Schedule> {
    (
        any::<u64>(),
        proptest::sample::select(space.cluster_sizes),
        any::<bool>().prop_map(move |b| b && space.raft_options),
        any::<bool>().prop_map(move |b| b && space.raft_options),
        any::<bool>(),
        proptest::collection::vec(fault(), 0..=MAX_FAULTS),
        any::<bool>().prop_map(move |b| space.raft_options.then_some(b)),
    )
        .prop_map(
            move |(seed, nodes, pre_vote, check_quorum, fencing, faults, etcd_timer)| {
                let mut sim = SimConfig::quiet(seed, nodes as usize, DURATION_MS * NANOS_PER_MILLI);
                sim.write_every_ns = 100 * NANOS_PER_MILLI;
                sim.fencing = fencing;
                sim.faults = faults.iter().map(|f| f.lower(nodes)).collect();
                sim.faults.sort_by_key(|f| f.at_ns);
                let timer_reset = match etcd_timer {
                    Some(true) => RaftTimerReset::OnAnyStepDown,
                    Some(false) => RaftTimerReset::OnGrantOrLeader,
                    None => RaftConfig::default().timer_reset,
                };
                let raft = RaftConfig {
                    pre_vote,
                    check_quorum,
                    variant: space.variant,
                    timer_reset,
                    ..RaftConfig::default()
                };
                Schedule::new(sim, raft)
            },
        )
}

/// A schedule drawn from `strategy` by a runner seeded with a fixed value: the same sequence
/// on every machine and every run.
fn deterministic_draws(
    strategy: impl Strategy<Value = Schedule>,
    count: usize,
) -> impl Iterator<Item = Schedule> {
    let mut runner = TestRunner::new_with_rng(
        ProptestConfig::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    (0..count).map(move |_| {
        strategy
            .new_tree(&mut runner)
            .expect("the strategy has no filters")
            .current()
    })
}

// ---------------------------------------------------------------------------------------------
// Correct Raft stays safe
// ---------------------------------------------------------------------------------------------

proptest! {
    // 1,024 cases take about half a second in a debug build. A failure is saved beside this
    // file (raft_properties.proptest-regressions) and replayed first from then on.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(
            FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::with_cases(1024)
    })]

    #[test]
    fn correct_raft_keeps_one_leader_per_term_terms_monotonic_and_fenced_writes_ordered(
        schedule in schedule(Space::everything(RaftVariant::Correct))
    ) {
        let report = schedule.run();
        let broken = report.violated_safety();
        let sim = &schedule.scenario.sim;
        let forbidden: &[Invariant] = if sim.fencing {
            &[Invariant::ElectionSafety, Invariant::TermMonotonic, Invariant::FencingSafety]
        } else {
            // Without fencing a stalled leader's late write is accepted: that is the point of
            // raft-leader-stall-unfenced.ron, not a Raft bug.
            &[Invariant::ElectionSafety, Invariant::TermMonotonic]
        };
        let offending: Vec<_> = report
            .violations
            .iter()
            .filter(|v| forbidden.contains(&v.invariant))
            .collect();
        prop_assert!(
            offending.is_empty(),
            "correct Raft broke {:?}: {:#?}\nschedule:{:?}",
            broken,
            offending,
            schedule
        );
    }
}

#[test]
fn the_generated_schedules_strike_leaders_and_force_elections() {
    // The sweep above proves something only if its schedules hurt: most must strike a leader
    // and force a new election, and every kind of fault must occur.
    let draws: Vec<Schedule> =
        deterministic_draws(schedule(Space::everything(RaftVariant::Correct)), 200).collect();
    let mut with_failover = 0;
    let mut with_leader_change = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for schedule in &draws {
        let report = schedule.run();
        with_failover += usize::from(!report.failovers.is_empty());
        with_leader_change += usize::from(report.counters.leader_changes > 0);
        kinds.extend(
            schedule
                .scenario
                .sim
                .faults
                .iter()
                .map(|f| f.action.kind_name()),
        );
    }
    assert!(
        with_failover * 2 > draws.len(),
        "only {with_failover} of {} schedules struck a leader",
        draws.len()
    );
    assert!(
        with_leader_change * 2 > draws.len(),
        "only {with_leader_change} of {} schedules changed the leader",
        draws.len()
    );
    for kind in [
        "crash",
        "pause",
        "stall",
        "partition",
        "clock_jump",
        "clock_drift",
        "loss",
        "resign",
    ] {
        assert!(kinds.contains(kind), "no `{kind}` fault in {kinds:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Broken Raft is caught
// ---------------------------------------------------------------------------------------------

/// The first of `bound` deterministic draws from `space` that breaks `invariant`, with its
/// index.
fn first_violation(space: Space, invariant: Invariant, bound: usize) -> Option<(usize, Schedule)> {
    deterministic_draws(schedule(space), bound)
        .enumerate()
        .find(|(_, schedule)| schedule.run().violated_safety().contains(&invariant))
}

#[test]
fn the_checker_catches_raft_that_forgets_its_vote_on_restart() {
    // The bug needs a voter to restart between granting two candidates of one term that
    // cannot hear each other (scenarios/raft-broken-forgets-vote.ron): a cut link, a pause or
    // a crash keeps them apart, and a crash with a quick restart strikes the voter at the
    // right moment. Three nodes, and neither pre-vote nor check-quorum (defences that also
    // hide this bug), keep the search small.
    //
    // Measured: 12 of the first 5,000 draws break election_safety (1 in 420); the first is
    // draw 503. A bound of 4,000 leaves the chance of missing it below 1 in 10,000 should a
    // change to the generator or the engine's random streams reshuffle the draws.
    const BOUND: usize = 4_000;
    let space = Space {
        variant: RaftVariant::ForgetsVoteOnRestart,
        cluster_sizes: &[3],
        raft_options: false,
    };
    let (index, schedule) = first_violation(space, Invariant::ElectionSafety, BOUND)
        .unwrap_or_else(|| panic!("no schedule among {BOUND} broke election_safety"));
    // The schedule is not to blame: correct Raft survives it.
    let correct = schedule.with_variant(RaftVariant::Correct).run();
    assert!(
        !correct
            .violated_safety()
            .contains(&Invariant::ElectionSafety),
        "draw {index} breaks correct Raft too:{schedule:?}"
    );
}

#[test]
fn the_checker_catches_raft_that_forgets_its_term_on_restart() {
    // Any restart of a node that had left term 0 moves its term back. Measured: 214 of the first
    // 300 draws break term_monotonic, the first of them draw 0.
    const BOUND: usize = 50;
    let space = Space::everything(RaftVariant::ForgetsTermOnRestart);
    let (index, schedule) = first_violation(space, Invariant::TermMonotonic, BOUND)
        .unwrap_or_else(|| panic!("no schedule among {BOUND} broke term_monotonic"));
    let correct = schedule.with_variant(RaftVariant::Correct).run();
    assert!(
        !correct
            .violated_safety()
            .contains(&Invariant::TermMonotonic),
        "draw {index} breaks correct Raft too:{schedule:?}"
    );
}
