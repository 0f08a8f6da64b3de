//! [`Hunt`]: a scenario hunted over seeds or searched systematically from a test, its first
//! failure shrunk to a reproducer ([`HuntResult`], [`Found`]).

use splitbrain_lab::hunt::record::{Failure, SeedRecord, LIMIT_KEY};
use splitbrain_lab::hunt::reproducer;
use splitbrain_lab::hunt::reproducer::SHRINK_BUDGET_RUNS;
use splitbrain_lab::hunt::seeds::SeedSpan;
use splitbrain_lab::hunt::shrink::shrink_scenario;
use splitbrain_lab::hunt::systematic::{Bound, Coverage};
use splitbrain_lab::hunt::systematic::{Search, Space, SystematicError};
use splitbrain_lab::panics;
use splitbrain_scenario::{self as scenario, Scenario, ScenarioError};
use splitbrain_sim::{Breach, Observation, Properties};
use std::fmt;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Seeds a hunt runs when neither the test nor `SPLITBRAIN_SEEDS` says.
pub const DEFAULT_SEEDS: u64 = 1_000;

/// Why a hunt could not start.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The scenario file or text is not a valid scenario (located, with a hint).
    #[error("{0}")]
    Scenario(#[from] Box<ScenarioError>),
    /// An environment variable the harness reads holds something else than a number.
    #[error("{name}={value:?} is not a whole number of seeds")]
    BadEnvironment {
        /// The variable.
        name: &'static str,
        /// What it holds.
        value: String,
    },
    /// The worker threads could not be started.
    #[error("cannot start the hunt's threads: {0}")]
    Threads(String),
    /// A systematic search cannot run on this scenario (no nemesis, no room, an empty bound).
    #[error(transparent)]
    Systematic(#[from] SystematicError),
    /// [`Scripted::after`](crate::Scripted::after) was called before any fault: it makes the fault added last wait
    /// for an event.
    #[error(
        "a trigger (`Scripted::after`) given before any fault: give it after the fault it triggers"
    )]
    AfterWithoutFault,
}

/// A hunt of one scenario, configured by its builder methods and started by [`Hunt::run`].
#[derive(Clone, Debug)]
pub struct Hunt {
    scenario: Scenario,
    seeds: Option<u64>,
    first_seed: u64,
    jobs: Option<usize>,
    shrink: bool,
    out_dir: Option<PathBuf>,
    /// A replay: these seeds, whatever the environment says.
    exact: bool,
    /// A systematic search to this bound instead of seeds.
    systematic: Option<Bound>,
}

impl Hunt {
    /// A hunt of the scenario file at `path`.
    pub fn file(path: impl AsRef<Path>) -> Result<Hunt, HarnessError> {
        let path = path.as_ref();
        let scenario = scenario::load(path).map_err(Box::new)?;
        Ok(Self::scenario(scenario))
    }

    /// A hunt of a scenario written in RON (`Scenario(algorithm: ..., ...)`).
    pub fn text(ron: &str) -> Result<Hunt, HarnessError> {
        let scenario = scenario::parse(ron, "scenario").map_err(Box::new)?;
        Ok(Self::scenario(scenario))
    }

    /// A hunt of a scenario already built (for example by [`Scripted`](crate::Scripted)).
    pub fn scenario(scenario: Scenario) -> Hunt {
        Hunt {
            scenario,
            seeds: None,
            first_seed: 1,
            jobs: None,
            shrink: true,
            out_dir: None,
            exact: false,
            systematic: None,
        }
    }

    /// A replay of the reproducer at `path` (a scenario with explicit faults, as a failing
    /// hunt writes it): its own seed only, not shrunk, whatever `SPLITBRAIN_SEEDS` and
    /// `SPLITBRAIN_SEED` say. For regression tests that keep reproducers.
    pub fn replay(path: impl AsRef<Path>) -> Result<Hunt, HarnessError> {
        let mut hunt = Self::file(path)?;
        hunt.first_seed = hunt.scenario.sim.seed;
        hunt.seeds = Some(1);
        hunt.shrink = false;
        hunt.exact = true;
        Ok(hunt)
    }

    /// Adds a safety property of the test's own, checked at every event of every run of the
    /// hunt (and of its shrinking) besides the built-in invariants and the algorithm's own:
    /// a closure over a state `S` (fresh in every run) and each [`Observation`]. Its name is
    /// the failure's key (`assert_found(name)`).
    ///
    /// ```
    /// use splitbrain_harness::{Breach, Hunt, Observation};
    ///
    /// // Raft never elects a leader past term 50 in this short run; a test can say so.
    /// let result = Hunt::text("Scenario(algorithm: Raft(), nodes: 3, duration: \"5s\")")
    ///     .unwrap()
    ///     .seeds(5)
    ///     .property("few_terms", |_: &mut (), _now_ns, observation| match observation {
    ///         Observation::Claim { term, node, .. } if *term > 50 => {
    ///             Err(Breach::new(format!("{node} claimed term {term}")))
    ///         }
    ///         _ => Ok(()),
    ///     })
    ///     .run();
    /// result.assert_safe();
    /// ```
    pub fn property<S, F>(mut self, name: &'static str, check: F) -> Self
    where
        S: Default + Send + 'static,
        F: Fn(&mut S, splitbrain_sim::Nanos, &Observation) -> Result<(), Breach>
            + Send
            + Sync
            + 'static,
    {
        self.scenario.properties =
            std::mem::take(&mut self.scenario.properties).always(name, check);
        self
    }

    /// Adds `properties` (see [`Hunt::property`]).
    pub fn properties(mut self, properties: &Properties) -> Self {
        self.scenario.properties = self.scenario.properties.and(properties);
        self
    }

    /// Runs `n` seeds unless `SPLITBRAIN_SEEDS` says how many (default [`DEFAULT_SEEDS`]).
    pub fn seeds(mut self, n: u64) -> Self {
        self.seeds = Some(n.max(1));
        self
    }

    /// Starts at seed `seed` (default 1).
    pub fn first_seed(mut self, seed: u64) -> Self {
        self.first_seed = seed;
        self
    }

    /// Runs seed `seed` alone, whatever `SPLITBRAIN_SEEDS` and `SPLITBRAIN_SEED` say (a test
    /// about one known seed).
    pub fn only_seed(mut self, seed: u64) -> Self {
        self.first_seed = seed;
        self.seeds = Some(1);
        self.exact = true;
        self
    }

    /// Explores every fault schedule of the scenario's own seed up to `steps` steps instead
    /// of running seeds (`hunt --search systematic`, docs/hunting.md): faults from its
    /// nemesis at the grid [`Bound::defaults`] gives, other ways at its choice points. Stops
    /// at the first failing schedule, shrunk and written like a seed's; the result's
    /// `coverage` says what it explored. `SPLITBRAIN_SEEDS` and `SPLITBRAIN_SEED` do not
    /// apply (to search another seed, change the scenario's `seed`).
    pub fn systematic(self, steps: usize) -> Self {
        let bound = Bound::defaults(&self.scenario, steps);
        self.systematic_within(bound)
    }

    /// [`Hunt::systematic`] to an explicit bound (grid, depth, fault lengths).
    pub fn systematic_within(mut self, bound: Bound) -> Self {
        self.systematic = Some(bound);
        self
    }

    /// Runs on `n` threads (default: every core).
    pub fn jobs(mut self, n: usize) -> Self {
        self.jobs = Some(n.max(1));
        self
    }

    /// Whether to shrink the first failure (default true).
    pub fn shrink(mut self, shrink: bool) -> Self {
        self.shrink = shrink;
        self
    }

    /// Where reproducers are written (default: `SPLITBRAIN_OUT`, else `target/splitbrain/`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The scenario being hunted.
    pub fn scenario_ref(&self) -> &Scenario {
        &self.scenario
    }

    /// Runs the hunt; panics only where [`Hunt::try_run`] would return an error.
    pub fn run(self) -> HuntResult {
        self.try_run()
            .unwrap_or_else(|e| panic!("splitbrain: the hunt could not start: {e}"))
    }

    /// Runs the seeds in order, in parallel batches, until the first failure or the last
    /// seed; then shrinks the failure and writes its reproducer.
    pub fn try_run(self) -> Result<HuntResult, HarnessError> {
        let jobs = self.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build()
            .map_err(|e| HarnessError::Threads(e.to_string()))?;
        if let Some(bound) = &self.systematic {
            return self.search(bound, &pool);
        }
        let span = self.span()?;
        let mut seeds_run = 0;
        let mut first_failed: Option<SeedRecord> = None;
        let never = || false;
        let _ = splitbrain_lab::hunt::hunt(
            &self.scenario,
            span,
            false,
            &pool,
            &never,
            &never,
            |records| {
                seeds_run += records.len() as u64;
                if first_failed.is_none() {
                    first_failed = records.iter().find(|r| r.failed()).cloned();
                }
                ControlFlow::<()>::Continue(())
            },
        );
        let failure = first_failed.map(|record| {
            let start = self.scenario.materialize(record.seed);
            self.found(record.seed, &record.failures[0], start, false)
        });
        Ok(HuntResult {
            scenario: self.scenario.name.clone(),
            first_seed: span.first,
            seeds_run,
            failure,
            coverage: None,
        })
    }

    /// The systematic search of the scenario's seed to `bound`, to its first failure.
    fn search(&self, bound: &Bound, pool: &rayon::ThreadPool) -> Result<HuntResult, HarnessError> {
        let seed = self.scenario.sim.seed;
        let space = Space::new(&self.scenario, seed, bound)?;
        let search = Search {
            space: &space,
            steps: bound.steps,
            keep_going: false,
            shard: None,
        };
        let mut first = None;
        let never = || false;
        let (coverage, _) = search.run(pool, &|| None, &never, |runs| {
            if first.is_none() {
                first = runs.iter().find(|r| r.record.failed()).cloned();
            }
            ControlFlow::Continue(())
        });
        let failure = first.map(|run| {
            let start = space.scenario(&run.schedule);
            self.found(seed, &run.record.failures[0], start, true)
        });
        Ok(HuntResult {
            scenario: self.scenario.name.clone(),
            first_seed: seed,
            seeds_run: 1,
            failure,
            coverage: Some(coverage),
        })
    }

    /// The seeds to run: `SPLITBRAIN_SEED` alone, else the count asked or from the
    /// environment.
    fn span(&self) -> Result<SeedSpan, HarnessError> {
        self.span_with(&|name| std::env::var(name).ok())
    }

    fn span_with(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<SeedSpan, HarnessError> {
        let env_number = |name| env_number(name, env);
        if self.exact {
            let count = self.seeds.unwrap_or(1);
            return Ok(SeedSpan {
                first: self.first_seed,
                last: self.first_seed.saturating_add(count - 1),
            });
        }
        if let Some(seed) = env_number("SPLITBRAIN_SEED")? {
            return Ok(SeedSpan {
                first: seed,
                last: seed,
            });
        }
        let count = env_number("SPLITBRAIN_SEEDS")?
            .or(self.seeds)
            .unwrap_or(DEFAULT_SEEDS)
            .max(1);
        Ok(SeedSpan {
            first: self.first_seed,
            last: self.first_seed.saturating_add(count - 1),
        })
    }

    /// What a failing run of `seed` (`start`, explicit) gives the test: shrunk, written, and
    /// how to replay it (`searched`: the run of a systematic search, replayed by the test).
    fn found(&self, seed: u64, failure: &Failure, start: Scenario, searched: bool) -> Found {
        let failure = failure.clone();
        let (scenario, failure, shrink_runs) = if self.shrink && failure.key != LIMIT_KEY {
            let never = || false;
            let caught =
                panics::catch(|| shrink_scenario(&start, &failure, SHRINK_BUDGET_RUNS, &never));
            match caught {
                // The failure as the reproducer shows it (the shrunk run's).
                Ok(shrunk) => (shrunk.candidate, shrunk.outcome, shrunk.runs),
                Err(_) => (start, failure, 0),
            }
        } else {
            (start, failure, 0)
        };
        let reproducer = self.write_reproducer(seed, &failure.key, scenario);
        Found {
            seed,
            invariant: failure.key.clone(),
            failure,
            replay: replay_command(
                (!searched).then_some(seed),
                reproducer.as_ref().ok(),
                self.scenario.algorithm.entry().built_in,
            ),
            reproducer: reproducer.unwrap_or_else(|e| e),
            shrink_runs,
        }
    }

    /// Writes `scenario` as `<name>-seed<seed>-<key>.ron` in the output folder, whole or not
    /// at all (written beside, then renamed). On failure, the path it was meant to have.
    fn write_reproducer(
        &self,
        seed: u64,
        key: &str,
        mut scenario: Scenario,
    ) -> Result<PathBuf, PathBuf> {
        let name = &self.scenario.name;
        // A reproducer replayed keeps its name: no `-seed1-x-seed1-x`.
        let suffix = reproducer::name("", seed, key);
        let (name, stem) = match name.ends_with(&suffix) {
            true => (name.clone(), reproducer::file_stem(name)),
            false => (
                reproducer::name(name, seed, key),
                reproducer::stem(name, seed, key),
            ),
        };
        scenario.name = name;
        let dir = self.out_dir.clone().unwrap_or_else(default_out_dir);
        let path = dir.join(format!("{stem}.ron"));
        let partial = dir.join(format!(".{stem}.ron.partial-{}", std::process::id()));
        let text = scenario::to_ron(&scenario);
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&partial, text))
            .and_then(|()| std::fs::rename(&partial, &path));
        match written {
            Ok(()) => Ok(path),
            Err(_) => {
                let _ = std::fs::remove_file(&partial);
                Err(path)
            }
        }
    }
}

/// `SPLITBRAIN_OUT`, else `$CARGO_TARGET_DIR/splitbrain`, else `target/splitbrain`.
fn default_out_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SPLITBRAIN_OUT") {
        return PathBuf::from(dir);
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    target.join("splitbrain")
}

/// The number in environment variable `name`, if it is set.
fn env_number(
    name: &'static str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<u64>, HarnessError> {
    match env(name) {
        None => Ok(None),
        Some(value) => value
            .trim()
            .replace('_', "")
            .parse()
            .map(Some)
            .map_err(|_| HarnessError::BadEnvironment { name, value }),
    }
}

/// The command that replays `seed` of the test that is running (cargo names a test's thread
/// after the test; `None`: the test as it is, a systematic search), and, when there is a
/// reproducer, how to run it with the CLI.
fn replay_command(seed: Option<u64>, reproducer: Option<&PathBuf>, built_in: bool) -> String {
    let thread = std::thread::current();
    let test = thread.name().filter(|name| *name != "main");
    let env = seed.map_or(String::new(), |seed| format!("SPLITBRAIN_SEED={seed} "));
    let mut line = match test {
        Some(test) => format!("{env}cargo test -- --exact {test}"),
        None => format!("{env}(this program)"),
    };
    if let Some(path) = reproducer {
        // The stock command knows only the built-in algorithms; a user's needs their own
        // binary (`splitbrain::cli::main_with`).
        let command = if built_in {
            "splitbrain"
        } else {
            "<your main_with binary>"
        };
        line += &format!("\n  or:         {command} run {}", path.display());
    }
    line
}

/// What a hunt found and did.
#[derive(Clone, Debug)]
pub struct HuntResult {
    /// The scenario's name.
    pub scenario: String,
    /// The first seed run.
    pub first_seed: u64,
    /// How many seeds ran (the hunt stops after the batch of its first failure).
    pub seeds_run: u64,
    /// The first failing seed (of a systematic search: its first failing schedule),
    /// shrunk, if any failed.
    pub failure: Option<Found>,
    /// What a systematic search ([`Hunt::systematic`]) explored; `None` for a seed hunt.
    pub coverage: Option<Coverage>,
}

impl HuntResult {
    /// Whether every seed passed.
    pub fn is_safe(&self) -> bool {
        self.failure.is_none()
    }

    /// Panics with the failure (seed, invariant, reproducer, replay command) if a seed failed.
    #[track_caller]
    pub fn assert_safe(&self) {
        if let Some(found) = &self.failure {
            panic!("{}", found.message(&self.scenario));
        }
    }

    /// The failure under `key` (an invariant name such as `fencing_safety`, or `liveness`,
    /// `panic`, `limit`); panics if the hunt found none, or found another one first.
    #[track_caller]
    pub fn assert_found(&self, key: &str) -> &Found {
        match &self.failure {
            Some(found) if found.invariant == key => found,
            Some(found) => panic!(
                "splitbrain: expected the hunt to find {key}, it found another failure first:\n{}",
                found.message(&self.scenario)
            ),
            None => panic!(
                "splitbrain: {} seeds of {} (from seed {}) found no {key}",
                self.seeds_run, self.scenario, self.first_seed
            ),
        }
    }
}

/// A failing seed, shrunk and written.
#[derive(Clone, Debug)]
pub struct Found {
    /// The seed.
    pub seed: u64,
    /// The failure's key: the invariant it broke (`election_safety`, `fencing_safety`, a
    /// property's name), `liveness`, `panic` or `limit`.
    pub invariant: String,
    /// The failure as the seed's run reported it (when, which nodes, what happened).
    pub failure: Failure,
    /// The shrunk scenario: `splitbrain run` replays it (with the algorithm registered).
    pub reproducer: PathBuf,
    /// The command that replays the seed.
    pub replay: String,
    /// Runs the shrinker spent.
    pub shrink_runs: u32,
}

impl Found {
    fn message(&self, scenario: &str) -> String {
        format!(
            "splitbrain: seed {} of {scenario} broke {}: {}\n  reproducer: {}\n  replay:     {}",
            self.seed,
            self.invariant,
            self.failure.detail,
            self.reproducer.display(),
            self.replay
        )
    }
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {} broke {}: {}",
            self.seed, self.invariant, self.failure.detail
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunt() -> Hunt {
        Hunt::text("Scenario(algorithm: Raft(), nodes: 3, duration: \"2s\")").unwrap()
    }

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn seeds_come_from_the_test_then_the_environment_then_the_default() {
        let span = |h: &Hunt, pairs| h.span_with(&env(pairs)).unwrap();
        assert_eq!(span(&hunt(), &[]).last, DEFAULT_SEEDS);
        assert_eq!(span(&hunt(), &[("SPLITBRAIN_SEEDS", "5_000")]).last, 5_000);
        let asked = hunt().seeds(20).first_seed(11);
        let got = span(&asked, &[]);
        assert_eq!((got.first, got.last), (11, 30));
        let got = span(&asked, &[("SPLITBRAIN_SEEDS", "5000")]);
        assert_eq!(
            (got.first, got.last),
            (11, 5010),
            "the environment raises it"
        );
    }

    #[test]
    fn only_seed_and_replay_ignore_the_environment() {
        let pairs = [("SPLITBRAIN_SEEDS", "500"), ("SPLITBRAIN_SEED", "9")];
        let got = hunt().only_seed(4).span_with(&env(&pairs)).unwrap();
        assert_eq!((got.first, got.last), (4, 4));
    }

    #[test]
    fn one_seed_in_the_environment_replays_that_seed_alone() {
        let got = hunt()
            .seeds(20)
            .span_with(&env(&[("SPLITBRAIN_SEED", "77")]))
            .unwrap();
        assert_eq!((got.first, got.last), (77, 77));
    }

    #[test]
    fn a_word_where_a_number_belongs_is_an_error_naming_the_variable() {
        let error = hunt()
            .span_with(&env(&[("SPLITBRAIN_SEEDS", "many")]))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "SPLITBRAIN_SEEDS=\"many\" is not a whole number of seeds"
        );
    }

    #[test]
    fn a_tests_own_property_is_checked_and_named_like_an_invariant() {
        let dir = std::env::temp_dir().join(format!("splitbrain-prop-{}", std::process::id()));
        let result =
            Hunt::text("Scenario(name: \"p\", algorithm: Raft(), nodes: 3, duration: \"5s\")")
                .unwrap()
                .seeds(3)
                .jobs(1)
                .out_dir(&dir)
                .property("no_claim_at_all", |_: &mut (), _now_ns, o| match o {
                    Observation::Claim { term, node, .. } => {
                        Err(Breach::new(format!("{node} claimed term {term}")).nodes([*node]))
                    }
                    _ => Ok(()),
                })
                .run();
        let found = result.assert_found("no_claim_at_all");
        assert!(found.failure.detail.contains("claimed term 1"), "{found}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_broken_scenario_is_an_error_with_its_place() {
        let error = Hunt::text("Scenario(algorithm: Paxos())").unwrap_err();
        assert!(error.to_string().contains("1:21"), "{error}");
    }

    #[test]
    fn a_failure_names_its_seed_invariant_reproducer_and_replay() {
        let dir = std::env::temp_dir().join(format!("splitbrain-harness-{}", std::process::id()));
        let result = Hunt::text(
            "Scenario(name: \"forgets\", nodes: 3, duration: \"20s\",
                      algorithm: Raft(variant: ForgetsTermOnRestart),
                      nemesis: (kinds: [Crash], mean_interval: \"500ms\", quiet: \"5s\"))",
        )
        .unwrap()
        .seeds(100)
        .jobs(2)
        .out_dir(&dir)
        .run();
        let found = result.failure.clone().expect("the broken variant is found");
        assert!(found.reproducer.starts_with(&dir));
        let replayed = Hunt::file(&found.reproducer)
            .unwrap()
            .seeds(1)
            .first_seed(found.seed)
            .shrink(false)
            .out_dir(&dir)
            .run();
        let again = replayed
            .failure
            .clone()
            .expect("the reproducer fails again");
        assert_eq!(
            again.reproducer, found.reproducer,
            "a replay keeps the name"
        );
        assert_eq!(
            replayed.failure.map(|f| f.invariant),
            Some(found.invariant.clone())
        );
        let message = std::panic::catch_unwind(|| result.assert_safe()).unwrap_err();
        let message = message.downcast_ref::<String>().unwrap();
        assert!(
            message.contains(&format!("seed {} of forgets broke", found.seed)),
            "{message}"
        );
        assert!(message.contains("SPLITBRAIN_SEED="), "{message}");
        assert!(
            message.contains(&found.reproducer.display().to_string()),
            "{message}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
