//! Leader-election algorithms for splitbrain, one module each, as pure state machines on the
//! engine's [`splitbrain_sim::Process`] API. The engine knows none of them; each implements
//! [`Algorithm`] in its own module and is registered by one line in `registry!` below:
//! nothing else in the workspace names an algorithm.

#![warn(missing_docs)]

pub mod algorithm;
pub mod bully;
pub mod etcd;
pub mod k8s_lease;
pub mod raft;
pub mod raft_rs;
pub mod ring;
mod rules;
#[cfg(test)]
mod testing;
pub mod zookeeper;

pub use algorithm::{
    Algorithm, Cluster, Knob, KnobShape, KnobValue, Problem, SettingError, MAX_TIMING_NS,
};
pub use rules::CommonRule;

use serde::{Deserialize, Serialize};
use splitbrain_sim::{Nanos, Properties, RunError, RunReport, SimConfig, TraceSink};

/// Declares the registry: for each algorithm `Variant => path::Type`, where `Type`
/// implements [`Algorithm`] and `Variant` is the name a scenario writes
/// (`algorithm: Variant(...)`). Generates [`AlgorithmSettings`] (what a scenario says),
/// [`AlgorithmConfig`] (what runs), [`AlgorithmError`] (what was wrong), [`ALGORITHMS`] (what
/// `list`, help texts and hints show) and the dispatch between them.
macro_rules! registry {
    ($($variant:ident => $alg:ty),+ $(,)?) => {
        /// An algorithm's settings as a scenario writes them: `Raft(heartbeat: "50ms")`.
        #[derive(Debug, Deserialize, Serialize)]
        #[serde(rename = "algorithm")]
        pub enum AlgorithmSettings {
            $(
                #[doc = concat!(
                    "The settings of [`", stringify!($alg), "`]: `algorithm: ",
                    stringify!($variant), "(...)` in a scenario."
                )]
                $variant(<$alg as Algorithm>::Settings),
            )+
        }

        /// A validated algorithm choice with its settings.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
        pub enum AlgorithmConfig {
            $(
                #[doc = concat!("[`", stringify!($alg), "`] with its validated configuration.")]
                $variant(<$alg as Algorithm>::Config),
            )+
        }

        /// A rule an algorithm's settings broke.
        #[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
        pub enum AlgorithmError {
            $(
                #[doc = concat!("A rule the settings of [`", stringify!($alg), "`] broke.")]
                #[error(transparent)]
                $variant(<$alg as Algorithm>::Error),
            )+
        }

        /// Every algorithm, in the order `list` shows them.
        pub static ALGORITHMS: &[AlgorithmEntry] = &[
            $(AlgorithmEntry {
                name: <$alg as Algorithm>::NAME,
                scenario_name: stringify!($variant),
                aliases: <$alg as Algorithm>::ALIASES,
                summary: <$alg as Algorithm>::SUMMARY,
                has_service: <$alg as Algorithm>::HAS_SERVICE,
                service_name: <$alg as Algorithm>::SERVICE_NAME,
                stream_by_default: <$alg as Algorithm>::STREAM_BY_DEFAULT,
                resigns: <$alg as Algorithm>::RESIGNS,
                knobs: <$alg as Algorithm>::KNOBS,
                default: || AlgorithmConfig::$variant(Default::default()),
            },)+
        ];

        impl AlgorithmSettings {
            /// Validates the settings for `cluster` and fills in the defaults; every broken
            /// rule is reported, each at its field.
            pub fn lower(self, cluster: &Cluster) -> (AlgorithmConfig, Vec<Problem<AlgorithmError>>) {
                match self {
                    $(AlgorithmSettings::$variant(s) => {
                        let (config, problems) = <$alg as Algorithm>::lower(s, cluster);
                        (AlgorithmConfig::$variant(config), wrap_problems(problems, AlgorithmError::$variant))
                    })+
                }
            }
        }

        impl AlgorithmError {
            /// What to do about it, if there is something useful to say.
            pub fn hint(&self) -> Option<String> {
                match self {
                    $(AlgorithmError::$variant(e) => e.hint(),)+
                }
            }

            /// The item of a list setting the rule is about, when it is one item.
            pub fn item(&self) -> Option<usize> {
                match self {
                    $(AlgorithmError::$variant(e) => e.item(),)+
                }
            }
        }

        impl AlgorithmConfig {
            /// Every setting written out, such that lowering them gives this configuration.
            pub fn settings(&self) -> AlgorithmSettings {
                match self {
                    $(AlgorithmConfig::$variant(c) => AlgorithmSettings::$variant(<$alg as Algorithm>::settings(c)),)+
                }
            }

            /// The registry entry of this algorithm.
            pub fn entry(&self) -> &'static AlgorithmEntry {
                let names = [$(stringify!($variant)),+];
                let variant = match self {
                    $(AlgorithmConfig::$variant(_) => stringify!($variant),)+
                };
                let index = names.iter().position(|n| *n == variant).unwrap_or(0);
                &ALGORITHMS[index]
            }

            /// Facts the engine's checks need, for a cluster of `members`.
            pub fn info(&self, members: usize) -> splitbrain_sim::AlgorithmInfo {
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::info(c, members),)+
                }
            }

            /// The same settings for a cluster of `members` (shrinking a failing scenario drops
            /// members); `None` if the algorithm cannot run with that many.
            pub fn for_members(&self, members: usize) -> Option<Self> {
                if members == 0 {
                    return None;
                }
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::for_members(c, members).map(AlgorithmConfig::$variant),)+
                }
            }

            /// Every timing in the settings, each with its field name in a scenario file (a
            /// range's ends as `name[0]` and `name[1]`).
            pub fn timings(&self) -> Vec<(&'static str, Nanos)> {
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::timings(c),)+
                }
            }

            /// What the modeled system does to the settings as written (see
            /// [`Algorithm::adjustments`]); empty when they run as written.
            pub fn adjustments(&self) -> Vec<String> {
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::adjustments(c),)+
                }
            }

            /// The shortest period at which a process of the algorithm acts on its own timers,
            /// with its field name, at least 1 ns (the basis of [`expected_events`]).
            pub fn shortest_timing(&self) -> (&'static str, Nanos) {
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::shortest_timing(c),)+
                }
            }

            /// The interval at which a live leader or lease holder shows it is alive.
            pub fn heartbeat_ns(&self) -> Nanos {
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::heartbeat_ns(c),)+
                }
            }

            /// The shortest wait after which a member acts on not having heard from others.
            pub fn campaign_timeout_ns(&self) -> Nanos {
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::campaign_timeout_ns(c),)+
                }
            }

            /// The configuration with knob `name` set to `value`, checked like a scenario.
            pub fn vary(&self, cluster: &Cluster, name: &str, value: KnobValue) -> Result<Self, Problem<AlgorithmError>> {
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::vary(c, cluster, name, value)
                        .map(AlgorithmConfig::$variant)
                        .map_err(|p| Problem { field: p.field, error: AlgorithmError::$variant(p.error) }),)+
                }
            }

            /// Whether members send to every other member (messages in flight, and the memory
            /// of a run, grow with the square of the cluster).
            pub fn sends_to_every_member(&self) -> bool {
                match self {
                    $(AlgorithmConfig::$variant(_) => <$alg as Algorithm>::SENDS_TO_EVERY_MEMBER,)+
                }
            }

            /// Whether one election can cost `n (n - 1)` messages (see
            /// [`Algorithm::ELECTION_IS_QUADRATIC`]).
            pub fn election_is_quadratic(&self) -> bool {
                match self {
                    $(AlgorithmConfig::$variant(_) => <$alg as Algorithm>::ELECTION_IS_QUADRATIC,)+
                }
            }

            /// Runs `config` with this algorithm and the given options.
            pub fn run_with(
                &self,
                config: SimConfig,
                options: RunOptions,
            ) -> Result<RunReport, RunError> {
                let info = self.info(config.members);
                match self {
                    $(AlgorithmConfig::$variant(c) => <$alg as Algorithm>::run(c, config, info, options),)+
                }
            }
        }
    };
}

registry! {
    Raft => raft::Raft,
    Bully => bully::Bully,
    Ring => ring::Ring,
    Etcd => etcd::Etcd,
    ZooKeeper => zookeeper::ZooKeeper,
    K8sLease => k8s_lease::K8sLease,
    RaftRs => raft_rs::RaftRs,
}

/// The algorithms `compare` runs when not told which (command-line names, comma-separated).
pub const DEFAULT_COMPARISON: &str = "raft,bully,ring";

/// One algorithm as `list`, help texts, hints and `compare --algorithms` see it.
#[derive(Debug)]
pub struct AlgorithmEntry {
    /// The name on the command line and in reports (`raft`).
    pub name: &'static str,
    /// The name a scenario writes (`Raft` in `algorithm: Raft(...)`).
    pub scenario_name: &'static str,
    /// Other names the command line accepts.
    pub aliases: &'static [&'static str],
    /// One line for `splitbrain list`: what is modeled, and the broken variants.
    pub summary: &'static str,
    /// Whether it models a coordination service (the `Service` process).
    pub has_service: bool,
    /// What its service process is, as charts name its lifeline.
    pub service_name: &'static str,
    /// Whether its messages travel on `Stream` connections by default.
    pub stream_by_default: bool,
    /// The settings `sweep --param` may vary.
    pub knobs: &'static [Knob],
    /// [`Algorithm::RESIGNS`]: whether `Resign` makes its leader hand over.
    pub resigns: bool,
    default: fn() -> AlgorithmConfig,
}

impl AlgorithmEntry {
    /// The algorithm with its default settings.
    pub fn default_config(&self) -> AlgorithmConfig {
        (self.default)()
    }

    /// Whether `name` (any case) names this algorithm.
    pub fn is_named(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        name == self.name
            || name == self.scenario_name.to_ascii_lowercase()
            || self.aliases.contains(&name.as_str())
    }

    /// The entry named `name` (any case, or an alias).
    pub fn named(name: &str) -> Option<&'static AlgorithmEntry> {
        ALGORITHMS.iter().find(|entry| entry.is_named(name))
    }
}

fn wrap_problems<E>(
    problems: Vec<Problem<E>>,
    into: fn(E) -> AlgorithmError,
) -> Vec<Problem<AlgorithmError>> {
    problems
        .into_iter()
        .map(|p| Problem {
            field: p.field,
            error: into(p.error),
        })
        .collect()
}

impl AlgorithmConfig {
    /// The algorithm named `name` (any case, or an alias) with its defaults.
    pub fn default_named(name: &str) -> Option<Self> {
        AlgorithmEntry::named(name).map(AlgorithmEntry::default_config)
    }

    /// The lifeline names of a run of `members`: `n0`, `n1`, ..., then the service's name
    /// (`etcd`, `ZooKeeper`, `API server`) when there is one, then `resource`.
    pub fn lifeline_names(&self, members: usize) -> Vec<String> {
        let mut names: Vec<String> = (0..members).map(|i| format!("n{i}")).collect();
        if self.has_service() {
            names.push(self.entry().service_name.to_string());
        }
        names.push("resource".to_string());
        names
    }

    /// Whether the algorithm runs a modeled coordination service (process id `members`).
    pub fn has_service(&self) -> bool {
        self.entry().has_service
    }

    /// Whether its messages travel on `Stream` connections unless the scenario says
    /// otherwise.
    pub fn stream_by_default(&self) -> bool {
        self.entry().stream_by_default
    }

    /// The algorithm's short name.
    pub fn name(&self) -> &'static str {
        self.entry().name
    }

    /// The name a scenario writes for it (`Raft`).
    pub fn scenario_name(&self) -> &'static str {
        self.entry().scenario_name
    }
}

/// Runs `config` with this algorithm, tracing to `trace` if given.
pub fn run(
    algorithm: &AlgorithmConfig,
    config: SimConfig,
    trace: Option<&mut dyn TraceSink>,
) -> Result<RunReport, RunError> {
    run_with(
        algorithm,
        config,
        RunOptions {
            trace,
            ..RunOptions::default()
        },
    )
}

/// An upper estimate of the events a run of `config` handles: every process (members and the
/// service) acting once per the shortest timing of the algorithm and the workload, as often
/// as the fastest clock of the run makes it (a clock drifting `+d` ppm fires its timers
/// `1 + d / 10^6` times as often in true time), plus on `Stream` every connection
/// retransmitting once per `max_rto` and breaking and reopening once per `timeout`. Where
/// members send to every other member and a message can take longer than a member waits
/// before it campaigns (Raft's smallest election timeout, on the fastest clock), nobody hears
/// from the others in time and every act can be a campaign to all of them and their answers
/// (`1 + 2 (n - 1)` events): a storm, counted so. Where one election can cost `n (n - 1)`
/// messages (Bully), every start, fault and heal is counted as such an election. Validation
/// refuses runs whose estimate is absurd; the runtime guard
/// ([`splitbrain_sim::limits::RunLimits`]) ends any run that outgrows its limits anyway.
pub fn expected_events(algorithm: &AlgorithmConfig, config: &SimConfig) -> u128 {
    expected_events_with(algorithm, config, 0)
}

/// [`expected_events`] with `nemesis_faults` more faults than `config` lists (what a
/// nemesis may inject in one run).
pub fn expected_events_with(
    algorithm: &AlgorithmConfig,
    config: &SimConfig,
    nemesis_faults: u64,
) -> u128 {
    let mut period_ns = algorithm.shortest_timing().1;
    if config.write_every_ns > 0 {
        period_ns = period_ns.min(config.write_every_ns);
    }
    let processes = config.members as u128 + u128::from(algorithm.has_service());
    let acting = u128::from(config.duration_ns / period_ns) * processes;
    let acting = (acting * clock_rate_ppm(config)).div_ceil(1_000_000);
    let faults = config.faults.len() as u128 + u128::from(nemesis_faults);
    acting * events_per_act(algorithm, config)
        + retransmissions(algorithm, config)
        + quadratic_elections(algorithm, config, faults)
}

/// The events of Bully-like elections (see [`Algorithm::ELECTION_IS_QUADRATIC`]): one at the
/// start and one per fault and heal, each `n (n - 1)` messages plus `2 n` announcements and
/// reminders; 0 for other algorithms.
fn quadratic_elections(algorithm: &AlgorithmConfig, config: &SimConfig, faults: u128) -> u128 {
    if !algorithm.election_is_quadratic() {
        return 0;
    }
    let n = config.members as u128;
    (1 + 2 * faults) * (n * n.saturating_sub(1) + 2 * n)
}

/// The fastest clock's rate in millionths: `10^6` plus its drift in ppm (a clock at
/// 1,500,000 counts 1.5 s per true second).
fn clock_rate_ppm(config: &SimConfig) -> u128 {
    1_000_000 + u128::from(fastest_drift_ppm(config).max(0).unsigned_abs())
}

/// Events per act in [`expected_events`]: `1 + 2 (n - 1)` in a storm (members that send to
/// every member, messages that can take longer than the campaign timeout on the fastest
/// clock), else 1.
pub fn events_per_act(algorithm: &AlgorithmConfig, config: &SimConfig) -> u128 {
    let true_wait_ns =
        u128::from(algorithm.campaign_timeout_ns()) * 1_000_000 / clock_rate_ppm(config);
    let storm =
        algorithm.sends_to_every_member() && u128::from(slowest_latency_ns(config)) >= true_wait_ns;
    if storm {
        1 + 2 * (config.members as u128).saturating_sub(1)
    } else {
        1
    }
}

/// The longest latency any link of `config` usually takes (see [`Latency::typical_max_ns`]).
fn slowest_latency_ns(config: &SimConfig) -> Nanos {
    let network = &config.network;
    network
        .overrides
        .iter()
        .map(|o| o.link.latency.typical_max_ns())
        .fold(network.default.latency.typical_max_ns(), Nanos::max)
}

/// The largest drift any clock of `config` may run with, in ppm: the random draw's bound,
/// explicit clocks, and the drift faults set.
pub fn fastest_drift_ppm(config: &SimConfig) -> i64 {
    let clocks = &config.clocks;
    let explicit = clocks.per_node.iter().map(|c| c.drift_ppm);
    let service = clocks.service.iter().map(|c| c.drift_ppm);
    let faults = config.faults.iter().filter_map(|f| match f.action {
        splitbrain_sim::FaultAction::ClockDrift(_, ppm) => Some(ppm),
        _ => None,
    });
    explicit
        .chain(service)
        .chain(faults)
        .fold(i64::from(clocks.max_drift_ppm), i64::max)
}

/// An upper bound on `Stream` retransmissions and reconnections: every connection
/// retransmitting once per `max_rto` and, cut off, breaking (both ends hear it) and being
/// opened again once per `timeout`, for the whole run (0 on `Datagram`). Connections: each way
/// between every two members where members send to every member, each way between every
/// member and the service where there is one, else each way to two neighbours (a ring).
pub fn retransmissions(algorithm: &AlgorithmConfig, config: &SimConfig) -> u128 {
    let splitbrain_sim::Transport::Stream(stream) = config.network.transport else {
        return 0;
    };
    let members = config.members as u128;
    let connections = if algorithm.sends_to_every_member() {
        members * members.saturating_sub(1)
    } else {
        // Members to the service and back, or to a ring's neighbours and back.
        2 * members * if algorithm.has_service() { 1 } else { 2 }
    };
    let resends = u128::from(config.duration_ns / stream.max_rto_ns.max(1));
    // A break is heard at both ends and the connection reopened with a send: three events.
    let reconnects = 3 * u128::from(config.duration_ns / stream.timeout_ns.max(1));
    (resends + reconnects) * connections
}

/// What a caller may attach to a run besides its configuration.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Receives one JSON line per event.
    pub trace: Option<&'a mut dyn TraceSink>,
    /// Told the true time every [`splitbrain_sim::engine::PROGRESS_EVERY_EVENTS`] events.
    pub progress: Option<&'a mut dyn FnMut(Nanos)>,
    /// Stops the run after this many events even if simulated time remains (bounded runs in
    /// tests); the report then ends at the last event handled.
    pub max_events: Option<u64>,
    /// Asked now and then whether to end the run at once (see
    /// [`splitbrain_sim::Sim::with_stop`]).
    pub stop: Option<&'a (dyn Fn() -> Option<splitbrain_sim::limits::Stop> + Sync)>,
    /// Safety properties of the caller's own, checked at every observation besides the
    /// built-in invariants (see [`splitbrain_sim::property`] and
    /// [`splitbrain_sim::Sim::with_properties`]); a break is a violation named after the
    /// property. Borrowed: every run makes fresh property states from it.
    pub properties: Option<&'a Properties>,
}

/// Runs `config` with this algorithm and the given options.
pub fn run_with(
    algorithm: &AlgorithmConfig,
    config: SimConfig,
    options: RunOptions,
) -> Result<RunReport, RunError> {
    algorithm.run_with(config, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn five() -> Cluster {
        Cluster { nodes: 5 }
    }

    #[test]
    fn every_default_configuration_is_written_so_that_it_lowers_back_equal() {
        for entry in ALGORITHMS {
            let config = entry.default_config();
            let (lowered, problems) = config.settings().lower(&five());
            assert!(problems.is_empty(), "{}: {problems:?}", entry.name);
            assert_eq!(lowered, config, "{}", entry.name);
        }
    }

    #[test]
    fn empty_settings_lower_to_the_default_configuration() {
        for entry in ALGORITHMS {
            let text = format!("{}()", entry.scenario_name);
            let options = ron::Options::default()
                .with_default_extension(ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES);
            let settings: AlgorithmSettings = options.from_str(&text).expect(&text);
            let (config, problems) = settings.lower(&five());
            assert!(problems.is_empty(), "{}: {problems:?}", entry.name);
            assert_eq!(config, entry.default_config(), "{}", entry.name);
        }
    }

    #[test]
    fn names_and_aliases_find_their_algorithm_and_nothing_else() {
        for entry in ALGORITHMS {
            assert!(std::ptr::eq(
                AlgorithmEntry::named(entry.name).unwrap(),
                entry
            ));
            assert!(std::ptr::eq(entry.default_config().entry(), entry));
            for alias in entry.aliases {
                assert_eq!(AlgorithmEntry::named(alias).unwrap().name, entry.name);
            }
        }
        assert!(AlgorithmEntry::named("paxos").is_none());
    }

    #[test]
    fn the_engine_knows_each_algorithm_by_its_registry_name() {
        for entry in ALGORITHMS {
            assert_eq!(entry.default_config().info(5).name, entry.name);
        }
    }

    #[test]
    fn a_knob_name_means_the_same_shape_in_every_algorithm_that_has_it() {
        let knobs: Vec<&Knob> = ALGORITHMS.iter().flat_map(|e| e.knobs).collect();
        for a in &knobs {
            for b in knobs.iter().filter(|b| b.name == a.name) {
                assert_eq!(a.shape, b.shape, "knob {}", a.name);
            }
        }
    }

    #[test]
    fn every_knob_varies_its_setting_within_the_rules_and_refuses_values_that_break_them() {
        for entry in ALGORITHMS {
            let config = entry.default_config();
            for knob in entry.knobs {
                let value = |ns: Nanos| match knob.shape {
                    KnobShape::Duration => KnobValue::Duration(ns),
                    KnobShape::DurationRange => KnobValue::Range(ns, 2 * ns),
                    KnobShape::Choice(_) => unreachable!("choices are checked below"),
                };
                if let KnobShape::Choice(names) = knob.shape {
                    // Every name is a valid design, and at least one is not the default's.
                    let varied: Vec<AlgorithmConfig> = names
                        .iter()
                        .map(|name| config.vary(&five(), knob.name, KnobValue::Choice(name)))
                        .collect::<Result<_, _>>()
                        .unwrap_or_else(|p| panic!("{} {}: {p:?}", entry.name, knob.name));
                    assert!(
                        varied.iter().any(|v| *v != config),
                        "{} {} changed nothing",
                        entry.name,
                        knob.name
                    );
                    let unknown = config.vary(&five(), knob.name, KnobValue::Choice("Nonsense"));
                    assert!(unknown.is_err(), "{} {}", entry.name, knob.name);
                    continue;
                }
                // A value a tenth above one of the default's own timings is a valid design...
                let accepted: Vec<AlgorithmConfig> = config
                    .timings()
                    .into_iter()
                    .filter_map(|(_, ns)| config.vary(&five(), knob.name, value(ns + ns / 10)).ok())
                    .collect();
                assert!(
                    !accepted.is_empty(),
                    "{} {}: no value accepted",
                    entry.name,
                    knob.name
                );
                assert!(
                    accepted.iter().all(|varied| *varied != config),
                    "{} {} changed nothing",
                    entry.name,
                    knob.name
                );
                // ...and zero never is: every rule set refuses it or something derived from it.
                assert!(
                    config.vary(&five(), knob.name, value(0)).is_err(),
                    "{} {}=0 accepted",
                    entry.name,
                    knob.name
                );
            }
            let unknown = config.vary(&five(), "no_such_knob", KnobValue::Duration(1));
            assert!(unknown.is_err(), "{}", entry.name);
        }
    }

    #[test]
    fn a_broken_rule_names_its_field_and_renders_with_its_hint() {
        let settings: AlgorithmSettings = ron::Options::default()
            .with_default_extension(
                ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES
                    | ron::extensions::Extensions::IMPLICIT_SOME,
            )
            .from_str("Raft(heartbeat: \"400ms\")")
            .unwrap();
        let (_, problems) = settings.lower(&five());
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "heartbeat");
        assert_eq!(
            problems[0].error.to_string(),
            "the shortest election timeout (\"150ms\") must be longer than the heartbeat (\"400ms\")"
                .replace('"', "")
        );
        assert!(problems[0].error.hint().unwrap().contains("heartbeat"));
    }
}
