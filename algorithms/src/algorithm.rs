//! What every algorithm gives the rest of splitbrain, in one place per algorithm: its settings
//! as a scenario writes them, the rules they obey (with structured errors), how its settings
//! are written back, the knobs `sweep` may vary, the facts the engine's checks need, and how
//! to build its processes. An algorithm implements [`Algorithm`] in its own module and is
//! registered by one line in `lib.rs` (a user's algorithm: [`crate::register`]); nothing else
//! in the workspace names it.
//!
//! `docs/adding-an-algorithm.md` walks through adding one.

use crate::RunOptions;
use serde::de::DeserializeOwned;
use serde::Serialize;
use splitbrain_sim::engine::{Reached, StopAt};
use splitbrain_sim::{AlgorithmInfo, Nanos, NodeId, Process, RunError, RunReport, Sim, SimConfig};
use std::fmt::Debug;

/// The longest lease, session or tick that the coordination-service recipes and raft-rs take
/// (`rules::at_most_a_day`, which an algorithm calls in its `lower`; it is not automatic).
pub const MAX_TIMING_NS: u64 = 86_400_000_000_000;

/// One leader-election algorithm. Implemented by a unit type in the algorithm's module
/// (`raft::Raft`); every method is a plain function of the settings or the configuration.
pub trait Algorithm: 'static {
    /// The name on the command line and in reports (`raft`, `k8s-lease`).
    const NAME: &'static str;
    /// The name a scenario writes: `Raft` in `algorithm: Raft(...)` (letters, digits and
    /// `_`, starting with a letter).
    const SCENARIO_NAME: &'static str;
    /// Other names `compare --algorithms` accepts (lowercase).
    const ALIASES: &'static [&'static str] = &[];
    /// One line for `splitbrain list`: what is modeled, and the broken variants.
    const SUMMARY: &'static str;
    /// Whether it runs a modeled coordination service as process `members` (the scenario's
    /// `Service` target and `clocks.service` name it).
    const HAS_SERVICE: bool = false;
    /// What the service process is, as charts name its lifeline (`etcd`, `API server`).
    const SERVICE_NAME: &'static str = "service";
    /// Whether its processes talk over `Stream` connections unless the scenario says
    /// otherwise (`network.transport`): true for a service whose real clients hold a TCP
    /// connection to it and whose model relies on it (no polling); peer protocols keep
    /// `Datagram`.
    const STREAM_BY_DEFAULT: bool = false;
    /// Whether members send to every other member: messages in flight, and the memory of a
    /// run, then grow with the square of the cluster.
    const SENDS_TO_EVERY_MEMBER: bool = false;
    /// Whether a leader hands over when asked (`Resign`); without it the fault does nothing.
    const RESIGNS: bool = true;
    /// Whether its nodes are told of membership changes (`ConfChange`); without it the fault
    /// does nothing. Only external nodes are (the step protocol's `conf_change` event).
    const CHANGES_MEMBERSHIP: bool = false;
    /// Whether one election can cost a message from every member to every other member and
    /// an answer (Bully: every member that suspects the coordinator challenges every higher
    /// id, and each answers): `n (n - 1)` events per election, counted by the events estimate
    /// once per start, fault and heal.
    const ELECTION_IS_QUADRATIC: bool = false;
    /// Whether its processes may report observations of their own (`Ctx::observe`, an
    /// external node's `observe` effect). Guided search watches every run of an algorithm
    /// that may, to breed on what they reach (docs/hunting.md, "Guided search"), which costs
    /// a run about 10% more; it skips that for one that says it never does (the built-in
    /// algorithms). True by default.
    const OBSERVES: bool = true;
    /// The settings `sweep --param` may vary.
    const KNOBS: &'static [Knob] = &[];

    /// The settings as a scenario writes them: every field optional, so that lowering knows
    /// what the author wrote. `Deserialize` reads them from RON (unknown fields refused);
    /// `Serialize` writes them back.
    type Settings: DeserializeOwned + Serialize + Debug + Send + Sync + 'static;
    /// The validated settings the processes run with.
    type Config: Clone + Debug + Default + PartialEq + Eq + Serialize + Send + Sync + 'static;
    /// A rule the settings broke.
    type Error: SettingError;

    /// Validates `settings` for `cluster` and fills in the defaults. Every broken rule is
    /// reported, each at the field to change; the configuration is then meaningless.
    fn lower(settings: Self::Settings, cluster: &Cluster) -> Lowered<Self::Config, Self::Error>;

    /// Every setting of `config` written out, such that lowering them gives `config` back.
    fn settings(config: &Self::Config) -> Self::Settings;

    /// Facts the engine's checks need, for a cluster of `members`.
    fn info(config: &Self::Config, members: usize) -> AlgorithmInfo;

    /// How many processes the modeled coordination service runs as, after the members:
    /// 0 without a service, 1 for a single-process service (the default when
    /// [`Algorithm::HAS_SERVICE`]), the members' count of a clustered one (an etcd cluster, a
    /// ZooKeeper ensemble). The `ServiceMember(i)` target names one of them.
    fn service_processes(config: &Self::Config) -> usize {
        let _ = config;
        usize::from(Self::HAS_SERVICE)
    }

    /// The names of the service's processes, in id order, for lifelines and reports: the
    /// default is [`Algorithm::SERVICE_NAME`] for one process, `NAME-0`, `NAME-1`, ... for
    /// several. An algorithm whose service runs processes of different kinds names them.
    fn service_names(config: &Self::Config) -> Vec<String> {
        match Self::service_processes(config) {
            0 => Vec::new(),
            1 => vec![Self::SERVICE_NAME.to_string()],
            n => (0..n)
                .map(|i| format!("{}-{i}", Self::SERVICE_NAME))
                .collect(),
        }
    }

    /// Every timing, each with its field name in a scenario (a range's ends as `name[0]` and
    /// `name[1]`).
    fn timings(config: &Self::Config) -> Vec<(&'static str, Nanos)>;

    /// What the modeled system does to a setting as written, said in words: a value the real
    /// server negotiates or raises (ZooKeeper's session timeout, etcd's minimum TTL). `check`,
    /// `run`, `compare` and `sweep` show these, so that the settings a user wrote are never
    /// silently not the ones that run. Empty when every setting runs as written.
    fn adjustments(config: &Self::Config) -> Vec<String> {
        let _ = config;
        Vec::new()
    }

    /// The shortest period at which a process acts on its own timers, with the field it
    /// comes from, at least 1 ns: the basis of the expected event count of a run.
    fn shortest_timing(config: &Self::Config) -> (&'static str, Nanos) {
        let (name, ns) = Self::timings(config)
            .into_iter()
            .min_by_key(|(_, ns)| *ns)
            .unwrap_or(("", 1));
        (name, ns.max(1))
    }

    /// The interval at which a live leader (or lease holder) shows it is alive: `sweep`
    /// phases its trials' faults over it.
    fn heartbeat_ns(config: &Self::Config) -> Nanos;

    /// The shortest wait after which a member acts on not having heard from others (Raft's
    /// smallest election timeout): messages slower than this make every member campaign
    /// (validation's storm estimate). Defaults to the heartbeat.
    fn campaign_timeout_ns(config: &Self::Config) -> Nanos {
        Self::heartbeat_ns(config)
    }

    /// The same settings for a cluster of `members` (shrinking a failing scenario drops
    /// members), or `None` if it cannot run with that many.
    fn for_members(config: &Self::Config, members: usize) -> Option<Self::Config> {
        let _ = members;
        Some(config.clone())
    }

    /// `config` with the knob `name` (one of [`Algorithm::KNOBS`]) set to `value`, checked by
    /// the same rules as a scenario. Timings tied to the knob keep their ratio to it.
    fn vary(
        config: &Self::Config,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<Self::Config, Problem<Self::Error>>;

    /// Safety properties of this algorithm's own, checked at every event of every run of it
    /// (hunt, shrink, replay, compare, sweep, `run`) like the built-in invariants, over the
    /// observations its processes emit (`Ctx::observe`) and the engine's (claims, step-downs,
    /// writes...). None by default.
    fn properties(config: &Self::Config) -> splitbrain_sim::Properties {
        let _ = config;
        splitbrain_sim::Properties::new()
    }

    /// The observation names (`Ctx::observe`) that properties declared in the scenario watch,
    /// each property named after its observation (an external node's `properties`): a run
    /// in which one of them was never observed tested nothing, and the CLI warns. None by
    /// default.
    fn watched_observations(config: &Self::Config) -> Vec<&'static str> {
        let _ = config;
        Vec::new()
    }

    /// The programs a run of `config` starts, each as its command line (program and
    /// arguments, as written): the external nodes' `command`. Empty for an algorithm whose
    /// processes run inside splitbrain, the default. The commands say so before they start
    /// one, and a reproducer names them: a scenario that starts programs is code.
    fn programs(config: &Self::Config) -> Vec<Vec<String>> {
        let _ = config;
        Vec::new()
    }

    /// The configuration of a version known to be right, if `config` names one (an
    /// external node's `reference`: the fixed release of the library under test). A hunt
    /// counts a failure, and its shrinker keeps a step, only if the reference passes the
    /// same schedule. None by default.
    fn reference(config: &Self::Config) -> Option<Self::Config> {
        let _ = config;
        None
    }

    /// The names of its processes' message types, as traces and counts show them
    /// ([`splitbrain_sim::Message::KINDS`]): what a scenario's triggered faults
    /// (`after: (event: Sent("..."))`) are checked against. `None`, the default, when they are
    /// known only at run time (an external node declares them when it starts): any name is
    /// then accepted, and one no process declares never matches.
    fn message_names(config: &Self::Config) -> Option<&'static [&'static str]> {
        let _ = config;
        None
    }

    /// Which members a systematic search may take for one another, as far as the settings
    /// go (docs/hunting.md, "Symmetry"): a key per member of `members`, equal for members
    /// the settings treat alike (Raft: the same initial log), when the processes rename
    /// the node ids in their state ([`Process::digest_renamed`], and the message's and
    /// durable state's `renamed`). `None`, the default: no member may be.
    fn member_keys(config: &Self::Config, members: usize) -> Option<Vec<u64>> {
        let _ = (config, members);
        None
    }

    /// Runs the algorithm's processes in `sim`.
    fn run(
        config: &Self::Config,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError>;
}

/// What lowering may depend on besides the settings themselves.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// The number of election members, as the scenario gives it.
    pub nodes: u64,
}

/// A rule broken by an algorithm's settings: a lowercase message fragment (its `Display`)
/// and what to do about it.
pub trait SettingError: std::error::Error + Clone + PartialEq + Send + Sync + 'static {
    /// What to do about it, if there is something useful to say.
    fn hint(&self) -> Option<String>;

    /// The item of a list setting the rule is about (`log_lengths[2]`), when it is one item.
    fn item(&self) -> Option<usize> {
        None
    }
}

/// A broken rule and the setting to change: `field` is its name under `algorithm` as written
/// in a scenario (`election_timeout`), or empty for the algorithm as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem<E> {
    /// The setting to change, as named under `algorithm` in a scenario; empty for the
    /// algorithm as a whole.
    pub field: &'static str,
    /// The rule it broke.
    pub error: E,
}

/// The result of lowering: the configuration, and every rule the settings broke.
pub type Lowered<C, E> = (C, Vec<Problem<E>>);

/// Lowers `settings` and keeps the first broken rule, for callers that change one setting
/// of a valid configuration ([`Algorithm::vary`]).
pub fn lower_checked<A: Algorithm>(
    settings: A::Settings,
    cluster: &Cluster,
) -> Result<A::Config, Problem<A::Error>> {
    let (config, mut problems) = A::lower(settings, cluster);
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(problems.swap_remove(0))
    }
}

/// A setting `sweep` may vary.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    /// The name after `--param` (`heartbeat`); the same knob name means the same idea in every
    /// algorithm that has it.
    pub name: &'static str,
    /// Whether `--param` takes one duration, a range of them, or one of a few names.
    pub shape: KnobShape,
    /// An example value, for help texts (`50ms`).
    pub example: &'static str,
}

/// The form of a knob's values.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KnobShape {
    /// One duration longer than zero (`50ms`).
    Duration,
    /// A range `MIN..MAX` of durations (`150ms..300ms`).
    DurationRange,
    /// One of these names, written as in a scenario (`OnAnyStepDown`).
    Choice(&'static [&'static str]),
}

/// One value of a knob.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KnobValue {
    /// A value of a [`KnobShape::Duration`] knob, in nanoseconds.
    Duration(Nanos),
    /// A value of a [`KnobShape::DurationRange`] knob: its lower and upper end, in
    /// nanoseconds.
    Range(Nanos, Nanos),
    /// A value of a [`KnobShape::Choice`] knob: one of its names.
    Choice(&'static str),
}

/// Runs one process per member, member `id` built by `node(id, members)`.
pub fn run_members<P: Process>(
    sim: SimConfig,
    info: AlgorithmInfo,
    options: RunOptions,
    node: impl Fn(NodeId, usize) -> P,
) -> Result<RunReport, RunError> {
    let members = sim.members;
    let nodes = (0..members)
        .map(|i| node(NodeId::from(i), members))
        .collect();
    run_processes(sim, info, nodes, options)
}

/// Builds a [`Sim`] of `processes` with `options` attached and runs it.
pub fn run_processes<P: Process>(
    sim: SimConfig,
    info: AlgorithmInfo,
    processes: Vec<P>,
    options: RunOptions,
) -> Result<RunReport, RunError> {
    let names = splitbrain_sim::Names::of::<P>();
    run_named_processes(sim, info, processes, names, options)
}

/// [`run_processes`] for processes whose message and timer names are known only at run time
/// ([`Sim::with_names`]).
pub fn run_named_processes<P: Process>(
    sim: SimConfig,
    info: AlgorithmInfo,
    processes: Vec<P>,
    names: splitbrain_sim::Names,
    options: RunOptions,
) -> Result<RunReport, RunError> {
    // A stepped run counts trace events (a stop may name one; the snapshot tells the
    // number): without a sink of the caller's, one that only hashes is handed them.
    let mut counter = splitbrain_sim::TraceHasher::default();
    let mut sim = Sim::with_names(sim, info, processes, names);
    match options.trace {
        Some(sink) => sim = sim.with_trace(sink),
        None if options.step.is_some() => sim = sim.with_trace(&mut counter),
        None => {}
    }
    if let Some(progress) = options.progress {
        sim = sim.with_progress(progress);
    }
    if let Some(limit) = options.max_events {
        sim = sim.with_event_limit(limit);
    }
    if let Some(stop) = options.stop {
        sim = sim.with_stop(stop);
    }
    if let Some(properties) = options.properties {
        sim = sim.with_properties(properties);
    }
    if let Some(chooser) = options.chooser {
        sim = sim.with_chooser(chooser);
    }
    let Some(step) = options.step else {
        if let Some(checkpoints) = options.checkpoints {
            for &at_ns in checkpoints.at_ns {
                if sim.run_until(StopAt::Time(at_ns))? == Reached::End {
                    break;
                }
                if checkpoints.symmetric.is_empty() {
                    checkpoints.digests.push(sim.digest());
                } else {
                    let (digest, renaming) = sim.digest_symmetric_renamed(checkpoints.symmetric);
                    checkpoints.digests.push(digest);
                    checkpoints.renamings.push(renaming);
                }
            }
        }
        return sim.run();
    };
    let reached = sim.run_until(step.at)?;
    *step.snapshot = Some((reached, sim.inspect()));
    Ok(sim.finish_here())
}
