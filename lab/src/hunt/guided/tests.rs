use super::corpus::{features_of, Entry, BUCKETS, PAIR_BASE};
use super::*;
use crate::hunt::record::{Coverage, Failure};

fn scenario() -> Scenario {
    let text = r#"Scenario(duration: "20s", nodes: 3, algorithm: Raft(),
        nemesis: (mean_interval: "1s", fault_duration: ("100ms", "2s"), quiet: "5s"))"#;
    splitbrain_scenario::parse(text, "g.ron").expect("a valid scenario")
}

#[test]
fn a_seeds_own_draw_is_exactly_what_materialize_runs() {
    let s = scenario();
    let guided = Guided::new(&s, 8).unwrap();
    for seed in 1..20 {
        assert_eq!(
            scenario_of(&s, seed, &guided.drawn(seed)),
            s.materialize(seed)
        );
    }
}

#[test]
fn a_mutant_is_a_function_of_its_parent_and_index_and_heals_before_the_quiet_tail() {
    let s = scenario();
    let guided = Guided::new(&s, 8).unwrap();
    let mutator = Mutator {
        config: &guided.config,
        members: 3,
        duration_ns: s.sim.duration_ns,
    };
    let mut changed = 0;
    for seed in 1..40 {
        let parent = Entry {
            seed,
            faults: guided.drawn(seed),
            features: Vec::new(),
        };
        for index in 0..10 {
            let m = mutator.mutate(&parent, index);
            assert_eq!(m, mutator.mutate(&parent, index));
            assert!(m.iter().all(|f| mutator.fits(f)), "{m:?}");
            assert!(m.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
            changed += usize::from(m != parent.faults);
        }
    }
    assert!(
        changed > 300,
        "most mutants differ from their parent: {changed}"
    );
}

#[test]
fn features_bucket_each_counter_and_pair_them() {
    let c = Coverage {
        split_votes: 1,
        dueling_candidates: 5,
        ..Coverage::default()
    };
    let f = features_of(&c);
    assert_eq!(f.count_ones(), 3);
    assert_eq!(f & 1, 1, "split votes, bucket 0");
    assert_eq!(f >> (BUCKETS + 2) & 1, 1, "5 dueling candidates, bucket 2");
    assert_eq!(f >> PAIR_BASE & 1, 1, "the pair");
    assert_eq!(features_of(&Coverage::default()), 0);
}

#[test]
fn a_newer_leader_locked_out_reaches_no_feature() {
    // A lock-out breaks fencing_safety: the run fails and is never bred from.
    let c = Coverage {
        locked_out_writes: 3,
        ..Coverage::default()
    };
    assert_eq!(features_of(&c), 0);
}

fn run(id: RunId, keys: &[&str]) -> GuidedRun {
    let failures = keys
        .iter()
        .map(|key| Failure {
            key: key.to_string(),
            at_ns: None,
            nodes: Vec::new(),
            detail: String::new(),
        })
        .collect();
    GuidedRun {
        id,
        record: SeedRecord {
            seed: 7,
            outcome: if keys.is_empty() { "matched" } else { "failed" }.to_string(),
            failures,
            events: 1,
            coverage: Coverage::default(),
            nemesis: None,
            unobserved: Vec::new(),
            reference_failed: Vec::new(),
            downtime: Default::default(),
        },
        faults: Vec::new(),
        observed: Vec::new(),
        kept: None,
    }
}

#[test]
fn the_first_safety_violation_is_counted_apart_from_a_liveness_failure() {
    let mutant = RunId::Mutant(MutantId { index: 0, seed: 7 });
    let mut b = GuidedSummaryBuilder::new(8);
    b.add(&run(RunId::Seed(1), &[]));
    b.add(&run(RunId::Seed(2), &["liveness"]));
    b.add(&run(mutant, &["missing:fencing_safety"]));
    b.add(&run(mutant, &["election_safety"]));
    let s = b.finish();
    assert_eq!(s.runs_to_first_failure, Some(2));
    assert_eq!(s.runs_to_first_safety_violation, Some(4));
    let mut b = GuidedSummaryBuilder::new(8);
    b.add(&run(RunId::Seed(1), &["liveness", "limit"]));
    assert_eq!(b.finish().runs_to_first_safety_violation, None);
}

#[test]
fn a_scenario_without_a_nemesis_cannot_be_guided() {
    let text = r#"Scenario(duration: "2s", nodes: 3, algorithm: Raft())"#;
    let s = splitbrain_scenario::parse(text, "n.ron").unwrap();
    assert_eq!(Guided::new(&s, 8).err(), Some(GuidedError::NoNemesis));
    assert_eq!(
        Guided::new(&scenario(), 64).err(),
        Some(GuidedError::TooManyMutants(64))
    );
}

/// A bug that only breeding on the user's observations reaches: each node counts its
/// restarts and observes the count; the algorithm's own property breaks once a node has
/// restarted [`STORM`] times. Node 0 leads for ever and nothing else happens, so no built-in
/// coverage counter ever moves: without the observations the corpus stays empty.
mod observation_guided {
    use super::*;
    use serde::{Deserialize, Serialize};
    use splitbrain_algorithms::simple::SimpleAlgorithm;
    use splitbrain_sim::property::{Observation, Value};
    use splitbrain_sim::{Ctx, Message, Nanos, NodeId, Process, Properties, TimerKind};
    use std::sync::Once;

    /// Restarts of one node that break the property.
    const STORM: u64 = 7;

    #[derive(Clone, Debug)]
    struct NoMsg;
    impl Message for NoMsg {
        const KINDS: &'static [&'static str] = &["none"];
        fn kind(&self) -> usize {
            0
        }
    }

    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    struct NoTimer;
    impl TimerKind for NoTimer {
        const NAMES: &'static [&'static str] = &["none"];
        fn index(self) -> usize {
            0
        }
        fn from_index(_: usize) -> Self {
            NoTimer
        }
    }

    #[derive(Clone, Debug)]
    struct Counter {
        me: NodeId,
        /// Kept across restarts (the process object survives a crash).
        restarts: u64,
    }

    type C<'a> = Ctx<'a, NoMsg, NoTimer>;

    impl Process for Counter {
        type Msg = NoMsg;
        type Timer = NoTimer;
        type Durable = ();
        fn on_start(&mut self, ctx: &mut C<'_>) {
            if self.me == NodeId(0) {
                ctx.became_leader(1, 1);
            }
        }
        fn on_message(&mut self, _: &mut C<'_>, _: NodeId, _: NoMsg) {}
        fn on_timer(&mut self, _: &mut C<'_>, _: NoTimer) {}
        fn on_restart(&mut self, ctx: &mut C<'_>) {
            self.restarts += 1;
            ctx.observe("restarts", self.restarts);
            self.on_start(ctx);
        }
        fn term(&self) -> u64 {
            1
        }
        fn write_token(&self, _: i64) -> Option<u64> {
            None
        }
        fn known_leader(&self) -> Option<NodeId> {
            Some(NodeId(0))
        }
    }

    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NoSettings {}

    struct RestartCounter;
    impl SimpleAlgorithm for RestartCounter {
        const NAME: &'static str = "restart-counter";
        const SCENARIO_NAME: &'static str = "RestartCounter";
        type Settings = NoSettings;
        type Process = Counter;
        fn process(_: &NoSettings, me: NodeId, _: usize) -> Counter {
            Counter { me, restarts: 0 }
        }
        fn heartbeat_ns(_: &NoSettings) -> Nanos {
            100_000_000
        }
        fn properties(_: &NoSettings) -> Properties {
            Properties::new().always("restart_storm", |_: &mut (), _, o: &Observation| match *o {
                Observation::User {
                    name: "restarts",
                    value: Value::U64(n),
                    node,
                } if n >= STORM => Err(format!("{node} restarted {n} times").into()),
                _ => Ok(()),
            })
        }
    }

    fn storm_scenario() -> Scenario {
        static REGISTER: Once = Once::new();
        REGISTER.call_once(|| {
            splitbrain_algorithms::register::<RestartCounter>().expect("registers");
        });
        let text = r#"Scenario(duration: "12s", nodes: 3, algorithm: RestartCounter(),
            workload: (write_every: "0s"),
            nemesis: (kinds: [Crash], mean_interval: "3s", fault_duration: ("10ms", "100ms"),
                      start: "1s", quiet: "2s", swarm: false))"#;
        splitbrain_scenario::parse(text, "storm.ron").expect("a valid scenario")
    }

    /// Every run of a guided hunt of `seeds` seeds with `mutants` per batch, kept going, on
    /// `jobs` threads.
    fn guided_runs(s: &Scenario, seeds: u64, mutants: u64, jobs: usize) -> Vec<GuidedRun> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build()
            .expect("threads start");
        let mut runs = Vec::new();
        let span = SeedSpan {
            first: 1,
            last: seeds,
        };
        let guided = Guided::new(s, mutants).unwrap();
        let on_batch = |batch: &[GuidedRun]| {
            runs.extend_from_slice(batch);
            ControlFlow::<()>::Continue(())
        };
        let ended = guided.hunt(span, true, &pool, &|| false, &|| false, on_batch);
        assert_eq!(ended, Ok(Ended::Complete));
        runs
    }

    #[test]
    fn a_bug_reached_only_by_breeding_on_an_observation_is_found_by_a_mutant() {
        let s = storm_scenario();
        let runs = guided_runs(&s, 160, 32, 2);
        assert_eq!(
            runs,
            guided_runs(&s, 160, 32, 1),
            "the same whatever the jobs"
        );
        let storm = |r: &&GuidedRun| r.record.failures.iter().any(|f| f.key == "restart_storm");
        let first = runs
            .iter()
            .find(storm)
            .expect("guided search finds the storm");
        assert!(matches!(first.id, RunId::Mutant(_)), "{}", first.id);
        // Nothing else guided it: every run kept was kept for an observation alone.
        let kept: Vec<&Kept> = runs.iter().filter_map(|r| r.kept.as_ref()).collect();
        assert!(kept.len() >= 3, "{kept:?}");
        assert!(kept
            .iter()
            .all(|k| k.counters == 0 && !k.observations.is_empty()));
        let mutant_kept_for = |feature: &str| {
            runs.iter().any(|r| {
                matches!(r.id, RunId::Mutant(_))
                    && r.kept
                        .as_ref()
                        .is_some_and(|k| k.observations.iter().any(|o| o.to_string() == feature))
            })
        };
        assert!(mutant_kept_for(&format!("restarts={}", STORM - 1)));
        // The summary says so.
        let mut b = GuidedSummaryBuilder::new(32);
        runs.iter().for_each(|r| b.add(r));
        let g = b.finish();
        assert_eq!(g.kept as usize, kept.len());
        assert_eq!(g.kept_for_observations, g.kept);
        let last = g
            .observations
            .iter()
            .find(|o| o.feature == "restarts=6")
            .unwrap();
        assert!(
            last.kept.as_deref().unwrap().starts_with("mutant m"),
            "{last:?}"
        );
        // As many fresh seeds as the guided hunt made runs find nothing.
        let plain =
            (1..=runs.len() as u64).filter(|&seed| crate::hunt::run_seed(&s, seed).failed());
        assert_eq!(plain.count(), 0);
    }
}
