//! Leader-election algorithms for splitbrain, one module each, as pure state machines on the
//! engine's [`splitbrain_sim::Process`] API. The engine knows none of them; each implements
//! [`Algorithm`] in its own module and is registered by one line in `built_ins` below:
//! nothing else in the workspace names an algorithm. A user's own algorithm joins them at run
//! time through [`register`] (the open [`registry`]), and then goes everywhere they go.
//!
//! `raft_rs` (tikv's raft-rs driven as an algorithm, `algorithm: RaftRs(...)`) comes with the
//! `raft-rs` feature, off by default and on in the `splitbrain` command: it brings raft and
//! protobuf, most of a clean build, which a crate hunting its own algorithm does not need.

#![warn(missing_docs)]

pub mod algorithm;
pub mod bully;
pub mod etcd;
pub mod external;
mod json_form;
pub mod k8s_lease;
pub mod raft;
#[cfg(feature = "raft-rs")]
pub mod raft_rs;
pub mod registry;
pub mod ring;
mod rules;
pub mod simple;
#[cfg(test)]
mod testing;
pub mod zookeeper;

pub use algorithm::{
    Algorithm, Cluster, Knob, KnobShape, KnobValue, Problem, SettingError, MAX_TIMING_NS,
};
pub use registry::{
    algorithms, register, scenario_names, AlgorithmConfig, AlgorithmEntry, AlgorithmError,
    AlgorithmSettings, RegistryError,
};
pub use rules::CommonRule;

use splitbrain_sim::{Nanos, Properties, RunError, RunReport, SimConfig, TraceSink};

/// Adds the built-in algorithms to a new registry, in the order `list` shows them. A user's
/// algorithm is added with [`register`] instead; nothing else in the workspace names one.
fn built_ins(entries: &mut Vec<&'static AlgorithmEntry>) {
    use registry::insert_built_in;
    insert_built_in::<raft::Raft>(entries);
    insert_built_in::<bully::Bully>(entries);
    insert_built_in::<ring::Ring>(entries);
    insert_built_in::<etcd::Etcd>(entries);
    insert_built_in::<zookeeper::ZooKeeper>(entries);
    insert_built_in::<k8s_lease::K8sLease>(entries);
    #[cfg(feature = "raft-rs")]
    insert_built_in::<raft_rs::RaftRs>(entries);
    insert_built_in::<external::External>(entries);
    insert_built_in::<external::ExternalClient>(entries);
}

/// `AlgorithmConfig::from(RaftConfig { .. })`: a built-in algorithm's configuration.
macro_rules! built_in_from {
    ($($alg:ty => $config:ty),+ $(,)?) => {$(
        impl From<$config> for AlgorithmConfig {
            fn from(config: $config) -> Self {
                Self::new::<$alg>(config).expect("built-in algorithms are always registered")
            }
        }
    )+};
}

built_in_from! {
    raft::Raft => raft::RaftConfig,
    bully::Bully => bully::BullyConfig,
    ring::Ring => ring::RingConfig,
    etcd::Etcd => etcd::EtcdConfig,
    zookeeper::ZooKeeper => zookeeper::ZkConfig,
    k8s_lease::K8sLease => k8s_lease::K8sConfig,
}

#[cfg(feature = "raft-rs")]
built_in_from! {
    raft_rs::RaftRs => raft_rs::RaftRsConfig,
}

/// The algorithms `compare` runs when not told which (command-line names, comma-separated).
pub const DEFAULT_COMPARISON: &str = "raft,bully,ring";

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
    let processes = algorithm.processes(config.members) as u128;
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
    let service = algorithm.service_processes() as u128;
    let connections = if algorithm.sends_to_every_member() {
        members * members.saturating_sub(1)
    } else if service > 0 {
        // Members to each service process and back, and between the service's members.
        2 * members * service + service * service.saturating_sub(1)
    } else {
        // Members to a ring's neighbours and back.
        4 * members
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
    /// Stops the run at a point instead of its end and keeps a snapshot of it there
    /// (`splitbrain run --stop-at`); the report is then the run so far.
    pub step: Option<Step<'a>>,
    /// Digests of the run's state at given true times ([`splitbrain_sim::Sim::digest`]),
    /// for a systematic search; the run goes on to its end (ignored with `step`).
    pub checkpoints: Option<Checkpoints<'a>>,
    /// Picks the way the run goes at its choice points ([`splitbrain_sim::choice`]), for a
    /// systematic search; none: each takes its default.
    pub chooser: Option<&'a mut dyn splitbrain_sim::Chooser>,
}

/// When to take a state digest, and where to put them ([`RunOptions::checkpoints`]).
pub struct Checkpoints<'a> {
    /// True times, in increasing order: the digest is of the state after every event due
    /// at or before each.
    pub at_ns: &'a [splitbrain_sim::Nanos],
    /// Receives one digest per time the run reached, in order (fewer if the run ended or
    /// stopped first): [`splitbrain_sim::Sim::digest`], or with `symmetric` its
    /// [`splitbrain_sim::Sim::digest_symmetric`].
    pub digests: &'a mut Vec<u64>,
    /// The members whose renamings count as one state (docs/hunting.md, "Symmetry"); empty:
    /// states are compared exactly.
    pub symmetric: &'a [splitbrain_sim::NodeId],
    /// With `symmetric`: receives at each time the fingerprint of the renaming that gave
    /// the digest ([`splitbrain_sim::Sim::digest_symmetric_renamed`]), to tell a state
    /// seen again from a renaming of one; untouched without.
    pub renamings: &'a mut Vec<u64>,
}

/// Where to stop a run, and where to put what it looked like there ([`RunOptions::step`]).
pub struct Step<'a> {
    /// The stop.
    pub at: splitbrain_sim::engine::StopAt,
    /// Set to whether the run got to the stop and the snapshot taken there (or at the end,
    /// if the run ended first).
    pub snapshot: &'a mut Option<(
        splitbrain_sim::engine::Reached,
        splitbrain_sim::engine::Snapshot,
    )>,
}

impl<'a> RunOptions<'a> {
    /// The same options, borrowed for a shorter `'b`: so that a caller can add a stop or
    /// properties that live only as long as its own call (`RunOptions { stop: Some(&stop),
    /// ..options.shorten() }`).
    pub fn shorten<'b>(self) -> RunOptions<'b>
    where
        'a: 'b,
    {
        RunOptions {
            // `&'a mut dyn T` does not shorten by itself behind an `Option`: re-borrowed.
            trace: match self.trace {
                Some(sink) => Some(sink),
                None => None,
            },
            progress: match self.progress {
                Some(progress) => Some(progress),
                None => None,
            },
            max_events: self.max_events,
            stop: self.stop,
            properties: self.properties,
            step: self.step.map(|step| Step {
                at: step.at,
                snapshot: step.snapshot,
            }),
            checkpoints: self.checkpoints.map(|c| Checkpoints {
                at_ns: c.at_ns,
                digests: c.digests,
                symmetric: c.symmetric,
                renamings: c.renamings,
            }),
            chooser: match self.chooser {
                Some(chooser) => Some(chooser),
                None => None,
            },
        }
    }
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

    /// `problems` without those a default cannot avoid: the external algorithms have no
    /// default `command` (the user's program), nor `ExternalClient` a default `service`
    /// once written back empty, and say so.
    fn but_required<E: std::fmt::Debug>(
        entry: &AlgorithmEntry,
        mut problems: Vec<Problem<E>>,
    ) -> Vec<Problem<E>> {
        let required: &[&str] = match entry.name {
            "external" => &["command"],
            "external-client" => &["command", "service"],
            _ => &[],
        };
        if !required.is_empty() {
            assert!(
                problems.iter().any(|p| p.field == "command"),
                "{} says that it needs its command",
                entry.name
            );
            problems.retain(|p| !required.contains(&p.field));
        }
        problems
    }

    #[test]
    fn every_default_configuration_is_written_so_that_it_lowers_back_equal() {
        for entry in algorithms() {
            let config = entry.default_config();
            let (lowered, problems) = config.settings().lower(&five());
            let problems = but_required(entry, problems);
            assert!(problems.is_empty(), "{}: {problems:?}", entry.name);
            assert_eq!(lowered, config, "{}", entry.name);
        }
    }

    #[test]
    fn empty_settings_lower_to_the_default_configuration() {
        for entry in algorithms() {
            let text = format!("{}()", entry.scenario_name);
            let options = ron::Options::default()
                .with_default_extension(ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES);
            let settings = AlgorithmSettings::from_ron(&text, &options).expect(&text);
            let (config, problems) = settings.lower(&five());
            let problems = but_required(entry, problems);
            assert!(problems.is_empty(), "{}: {problems:?}", entry.name);
            assert_eq!(config, entry.default_config(), "{}", entry.name);
        }
    }

    #[test]
    fn names_and_aliases_find_their_algorithm_and_nothing_else() {
        for entry in algorithms() {
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
    fn built_in_algorithms_name_their_message_types_and_external_nodes_declare_theirs() {
        for entry in algorithms() {
            let names = entry.default_config().message_names();
            match entry.name {
                "external" | "external-client" => assert_eq!(names, None, "{}", entry.name),
                _ => assert!(names.is_some_and(|n| !n.is_empty()), "{}", entry.name),
            }
        }
        let raft = AlgorithmEntry::named("raft").unwrap().default_config();
        assert!(raft.message_names().unwrap().contains(&"RequestVoteResp"));
    }

    #[test]
    fn the_engine_knows_each_algorithm_by_its_registry_name() {
        for entry in algorithms() {
            assert_eq!(entry.default_config().info(5).name, entry.name);
        }
    }

    #[test]
    fn a_knob_name_means_the_same_shape_in_every_algorithm_that_has_it() {
        let knobs: Vec<&Knob> = algorithms().into_iter().flat_map(|e| e.knobs).collect();
        for a in &knobs {
            for b in knobs.iter().filter(|b| b.name == a.name) {
                assert_eq!(a.shape, b.shape, "knob {}", a.name);
            }
        }
    }

    #[test]
    fn every_knob_varies_its_setting_within_the_rules_and_refuses_values_that_break_them() {
        for entry in algorithms() {
            for knob in entry.knobs {
                let config = knob_home(entry, knob.name);
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
                // A value a tenth above or below one of the default's own timings is a valid
                // design (below: ZooKeeper's default session timeout is the server's cap, 20
                // ticks, and a longer one would be negotiated down, so `lease` refuses it)...
                let accepted: Vec<AlgorithmConfig> = config
                    .timings()
                    .into_iter()
                    .flat_map(|(_, ns)| [ns + ns / 10, ns - ns / 10])
                    .filter_map(|ns| config.vary(&five(), knob.name, value(ns)).ok())
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
            let config = entry.default_config();
            let unknown = config.vary(&five(), "no_such_knob", KnobValue::Duration(1));
            assert!(unknown.is_err(), "{}", entry.name);
        }
    }

    /// The design knob `knob` of `entry` is varied from in the test above: the default, or,
    /// for a knob of a service the default does not run (the Kubernetes Lease's etcd
    /// cluster), a design that runs it.
    fn knob_home(entry: &'static AlgorithmEntry, knob: &str) -> AlgorithmConfig {
        if entry.name == "k8s-lease" && knob == "service_election_timeout" {
            let etcd = crate::etcd::EtcdConfig {
                members: 3,
                ..crate::etcd::EtcdConfig::default()
            };
            let config = crate::k8s_lease::K8sConfig {
                etcd: Some(etcd),
                ..crate::k8s_lease::K8sConfig::default()
            };
            return AlgorithmConfig::new::<crate::k8s_lease::K8sLease>(config).expect("valid");
        }
        entry.default_config()
    }

    #[test]
    fn a_broken_rule_names_its_field_and_renders_with_its_hint() {
        let options = ron::Options::default().with_default_extension(
            ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES
                | ron::extensions::Extensions::IMPLICIT_SOME,
        );
        let settings = AlgorithmSettings::from_ron("Raft(heartbeat: \"400ms\")", &options).unwrap();
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
