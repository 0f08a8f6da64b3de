//! `compare` and `sweep` answer the same question with the same numbers: one fault-phase rule
//! (`splitbrain_lab::phase`), each design on its own transport.

use splitbrain_lab::compare::{self, ComparePlan};
use splitbrain_lab::group::{GroupRuns, Progress};
use splitbrain_lab::sweep::{self, SweepPlan};
use splitbrain_lab::Fencing;
use splitbrain_scenario::Scenario;
use std::collections::BTreeSet;

struct Quiet;

impl Progress for Quiet {
    fn run_started(&self) {}
}

const SEEDS: u64 = 6;

fn shipped(name: &str) -> Scenario {
    let path = format!("{}/../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    splitbrain_scenario::load(path.as_ref()).expect("a shipped scenario")
}

/// Each seed's failovers: (seed, fault time, recovery, election).
type Failovers = Vec<(u64, u64, Option<u64>, Option<u64>)>;

fn failovers(group: &GroupRuns) -> Failovers {
    let runs = group.runs.iter();
    runs.flat_map(|r| {
        let seed = r.seed;
        r.failovers
            .iter()
            .map(move |f| (seed, f.at_ns, f.recovery_ns, f.election_ns))
    })
    .collect()
}

/// `compare` of the named algorithms (the scenario's designs when `None`), `SEEDS` seeds.
fn compared(
    scenario: &Scenario,
    algorithms: Option<&[&str]>,
) -> (Vec<compare::Design>, Vec<GroupRuns>) {
    let plan = ComparePlan {
        algorithms: algorithms.map(|names| names.iter().map(|n| n.to_string()).collect()),
        seeds: SEEDS,
        sizes: vec![3],
        fencing: Fencing::Scenario,
        file: "x.ron".to_string(),
    };
    let designs = compare::designs(&plan, scenario).expect("designs");
    let result = compare::compare(&plan, scenario, &designs, &Quiet).expect("compared");
    (designs, result.groups)
}

/// `sweep` with `--param` as given (one value) or as written, `SEEDS` trials.
fn swept(scenario: &Scenario, param: Option<&str>) -> Vec<GroupRuns> {
    let plan = SweepPlan {
        param: param.map(str::to_string),
        heartbeat_fraction: None,
        trials: SEEDS,
        fencing: Fencing::Scenario,
        file: "x.ron".to_string(),
    };
    let (param, values) = match param {
        Some(text) => {
            let (param, values) = sweep::parse_param(text).expect("a parameter");
            (Some(param), values)
        }
        None => (None, Vec::new()),
    };
    let variants = sweep::variants(&plan, scenario, param, &values).expect("variants");
    let result = sweep::sweep(&plan, scenario, param, &variants, &Quiet).expect("swept");
    result.groups
}

#[test]
fn compare_and_a_one_value_sweep_give_the_same_failovers_for_the_same_seeds() {
    // One explicit fault: the leader crashes at 10 s, back after 3 s.
    let mut scenario = shipped("compare-leases.ron");
    scenario.sim.faults.truncate(1);
    // The scenario's etcd alone: its designs (etcd, ZooKeeper, Kubernetes) would each be a
    // sweep group.
    scenario.designs.clear();
    let (_, compare_groups) = compared(&scenario, Some(&["etcd"]));
    let from_compare = failovers(&compare_groups[0]);
    assert_eq!(from_compare.len() as u64, SEEDS, "{from_compare:?}");
    for param in [None, Some("loss=0")] {
        let sweep_groups = swept(&scenario, param);
        assert_eq!(sweep_groups.len(), 1);
        assert_eq!(failovers(&sweep_groups[0]), from_compare, "{param:?}");
    }
    // The fault strikes at a different point of the keep-alive cycle in each seed.
    let at: BTreeSet<u64> = from_compare.iter().map(|f| f.1).collect();
    assert_eq!(at.len() as u64, SEEDS, "{from_compare:?}");
    let keepalive_ns = scenario.algorithm.heartbeat_ns();
    let written_ns = 10_000_000_000;
    assert!(
        at.iter()
            .all(|&t| (written_ns..written_ns + keepalive_ns).contains(&t)),
        "within one keep-alive after the written time: {at:?}"
    );
}

#[test]
fn a_scenarios_designs_agree_between_compare_and_sweep_on_their_own_transports() {
    let mut scenario = shipped("review-controller.ron");
    scenario.sim.duration_ns = 70_000_000_000;
    scenario.sim.faults.retain(|f| f.at_ns < 60_000_000_000);
    let (designs, compare_groups) = compared(&scenario, None);
    let sweep_groups = swept(&scenario, None);
    assert_eq!(compare_groups.len(), sweep_groups.len());
    for ((design, c), s) in designs.iter().zip(&compare_groups).zip(&sweep_groups) {
        assert_eq!(failovers(c), failovers(s), "{}", design.name);
    }
    let etcd = designs.iter().find(|d| d.name == "etcd-10s").expect("etcd");
    assert_eq!(
        splitbrain_scenario::transport_line(&etcd.transport),
        "Stream"
    );
}

/// Guided search (`splitbrain_lab::hunt::guided`): the same runs whatever the threads, and
/// each mutant's scenario replays to its record.
mod guided {
    use super::shipped;
    use splitbrain_lab::hunt::guided::{Guided, GuidedRun, RunId};
    use splitbrain_lab::hunt::run_judged;
    use splitbrain_lab::hunt::seeds::SeedSpan;
    use std::ops::ControlFlow;

    fn runs(threads: usize) -> Vec<GuidedRun> {
        let scenario = shipped("raft-nemesis.ron");
        let guided = Guided::new(&scenario, 32).expect("a nemesis scenario");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("threads start");
        let mut all = Vec::new();
        let seeds = SeedSpan {
            first: 1,
            last: 100,
        };
        let ended = guided.hunt(seeds, true, &pool, &|| false, &|| false, |batch| {
            all.extend_from_slice(batch);
            ControlFlow::<()>::Continue(())
        });
        assert!(ended.is_ok());
        all
    }

    #[test]
    fn guided_runs_are_the_same_on_one_thread_and_on_two() {
        let one = runs(1);
        assert_eq!(one, runs(2));
        let fresh = one
            .iter()
            .filter(|r| matches!(r.id, RunId::Seed(_)))
            .count();
        assert_eq!(fresh, 100, "every fresh seed runs once");
        assert!(one.len() > 140, "mutants run between them: {}", one.len());
    }

    #[test]
    fn a_mutants_scenario_replays_to_its_record() {
        let scenario = shipped("raft-nemesis.ron");
        let guided = Guided::new(&scenario, 32).expect("a nemesis scenario");
        let all = runs(2);
        let mutants: Vec<&GuidedRun> = all
            .iter()
            .filter(|r| matches!(r.id, RunId::Mutant(_)))
            .take(5)
            .collect();
        assert_eq!(mutants.len(), 5);
        for m in mutants {
            let RunId::Mutant(id) = m.id else {
                unreachable!()
            };
            assert_eq!(id.seed, m.record.seed);
            assert!(id.to_string().starts_with('m'));
            assert_eq!(run_judged(&guided.scenario_of(m)), m.record, "{id}");
        }
    }
}
