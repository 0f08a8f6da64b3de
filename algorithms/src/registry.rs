//! The open registry of algorithms: the built-in ones, and any a user registers at run time
//! with [`register`]. A scenario names an algorithm by its registry name (`algorithm:
//! Raft(...)`); every command (run, hunt, shrink, compare, sweep) finds it here, so a user's
//! algorithm goes everywhere a built-in one goes.
//!
//! The registry is process-wide: registering is idempotent for the same type, and a name
//! (or an alias) can belong to only one algorithm.
//!
//! ```
//! use splitbrain_algorithms::{algorithms, register, AlgorithmEntry};
//!
//! // Built-in algorithms are always there.
//! assert!(algorithms().iter().any(|entry| entry.name == "raft"));
//! // Registering a built-in again is harmless and gives the same entry.
//! let entry = register::<splitbrain_algorithms::raft::Raft>().unwrap();
//! assert!(std::ptr::eq(entry, AlgorithmEntry::named("raft").unwrap()));
//! ```

use crate::algorithm::{Algorithm, Cluster, Knob, KnobValue, Problem, SettingError};
use crate::RunOptions;
use serde::ser::{Serialize, Serializer};
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use std::any::{Any, TypeId};
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

/// Why an algorithm could not be registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Another algorithm already answers to one of its names.
    #[error("the name `{name}` already belongs to the algorithm `{owner}`")]
    NameTaken {
        /// The name (a command-line name, scenario name or alias) both claim.
        name: String,
        /// The registered algorithm that has it.
        owner: &'static str,
    },
    /// A command-line name or alias must be lowercase letters, digits and `-` (`my-lease`).
    #[error("`{name}` cannot be a command-line name: use lowercase letters, digits and `-`, starting with a letter")]
    BadName {
        /// The name as given.
        name: &'static str,
    },
    /// A scenario name must be an identifier RON reads as an enum variant (`MyLease`).
    #[error("`{name}` cannot be written in a scenario: use letters, digits and `_`, starting with a letter")]
    BadScenarioName {
        /// The name as given.
        name: &'static str,
    },
}

/// One algorithm as `list`, help texts, hints and `compare --algorithms` see it.
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
    /// [`Algorithm::CHANGES_MEMBERSHIP`]: whether `ConfChange` reaches its nodes.
    pub changes_membership: bool,
    /// Whether it is one of splitbrain's own algorithms (as opposed to a user's).
    pub built_in: bool,
    type_id: TypeId,
    ops: &'static dyn EntryOps,
}

impl fmt::Debug for AlgorithmEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlgorithmEntry")
            .field("name", &self.name)
            .field("scenario_name", &self.scenario_name)
            .field("built_in", &self.built_in)
            .finish_non_exhaustive()
    }
}

impl AlgorithmEntry {
    /// The algorithm with its default settings.
    pub fn default_config(&'static self) -> AlgorithmConfig {
        self.ops.default_config(self)
    }

    /// Whether its default configuration can run as it is: false for an algorithm that
    /// needs a setting (`External` needs its `command`), which only a scenario can give, so
    /// `compare --algorithms` cannot name it.
    ///
    /// ```
    /// # use splitbrain_algorithms::AlgorithmEntry;
    /// assert!(AlgorithmEntry::named("raft").unwrap().runs_with_defaults());
    /// assert!(!AlgorithmEntry::named("external").unwrap().runs_with_defaults());
    /// ```
    pub fn runs_with_defaults(&'static self) -> bool {
        let cluster = Cluster { nodes: 3 };
        self.default_config()
            .settings()
            .lower(&cluster)
            .1
            .is_empty()
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
        algorithms().into_iter().find(|entry| entry.is_named(name))
    }

    /// The entry a scenario means by `scenario_name` (exactly as written, `Raft`).
    pub fn by_scenario_name(scenario_name: &str) -> Option<&'static AlgorithmEntry> {
        algorithms()
            .into_iter()
            .find(|entry| entry.scenario_name == scenario_name)
    }

    /// Reads this algorithm's settings from the RON value `text` starts with, such as
    /// `Raft(heartbeat: "50ms")`, with `options` (the scenario's extensions); what follows the
    /// value is not read (it is the rest of the scenario). Errors are ron's, located within
    /// `text`.
    pub fn parse_settings(
        &'static self,
        text: &str,
        options: &ron::Options,
    ) -> Result<AlgorithmSettings, ron::error::SpannedError> {
        self.ops.parse_settings(self, text, options)
    }
}

/// Every registered algorithm: the built-in ones in the order `list` shows them, then the
/// user's in the order they were registered.
pub fn algorithms() -> Vec<&'static AlgorithmEntry> {
    registry().read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The scenario names of every registered algorithm, as one `'static` list (what a RON error
/// about an unknown algorithm lists).
pub fn scenario_names() -> &'static [&'static str] {
    let _ = registry();
    *SCENARIO_NAMES.read().unwrap_or_else(|e| e.into_inner())
}

/// A built-in algorithm that comes with a cargo feature of this crate, so that a build may
/// lack it: what an error about its unknown name says to turn on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionalBuiltIn {
    /// The name a scenario writes (`RaftRs`).
    pub scenario_name: &'static str,
    /// The feature of `splitbrain-algorithms` that builds it (`raft-rs`).
    pub feature: &'static str,
}

/// The built-in algorithms behind a feature (the rest are always built).
pub const OPTIONAL_BUILT_INS: &[OptionalBuiltIn] = &[OptionalBuiltIn {
    scenario_name: "RaftRs",
    feature: "raft-rs",
}];

/// The feature that would build the algorithm a scenario names `scenario_name`, when this
/// build lacks it; `None` for a registered name or one no feature builds.
///
/// ```
/// # use splitbrain_algorithms::registry::missing_feature;
/// assert_eq!(missing_feature("Paxos"), None);
/// assert_eq!(missing_feature("Raft"), None);
/// if cfg!(feature = "raft-rs") {
///     assert_eq!(missing_feature("RaftRs"), None);
/// } else {
///     assert_eq!(missing_feature("RaftRs"), Some("raft-rs"));
/// }
/// ```
pub fn missing_feature(scenario_name: &str) -> Option<&'static str> {
    if scenario_names().contains(&scenario_name) {
        return None;
    }
    OPTIONAL_BUILT_INS
        .iter()
        .find(|optional| optional.scenario_name == scenario_name)
        .map(|optional| optional.feature)
}

/// Registers algorithm `A`, so that scenarios may name it and every command may run it.
/// Registering the same type again returns its entry; a name another algorithm already has is
/// an error.
///
/// ```
/// # use splitbrain_algorithms::{register, AlgorithmEntry};
/// let entry = register::<splitbrain_algorithms::ring::Ring>().unwrap();
/// assert_eq!(entry.scenario_name, "Ring");
/// ```
pub fn register<A: Algorithm>() -> Result<&'static AlgorithmEntry, RegistryError> {
    add::<A>(false)
}

fn add<A: Algorithm>(built_in: bool) -> Result<&'static AlgorithmEntry, RegistryError> {
    let mut entries = registry().write().unwrap_or_else(|e| e.into_inner());
    insert::<A>(&mut entries, built_in)
}

fn insert<A: Algorithm>(
    entries: &mut Vec<&'static AlgorithmEntry>,
    built_in: bool,
) -> Result<&'static AlgorithmEntry, RegistryError> {
    if let Some(existing) = entries.iter().find(|e| e.type_id == TypeId::of::<A>()) {
        return Ok(existing);
    }
    check_scenario_name(A::SCENARIO_NAME)?;
    for name in std::iter::once(A::NAME).chain(A::ALIASES.iter().copied()) {
        check_name(name)?;
    }
    let names = std::iter::once(A::NAME)
        .chain(std::iter::once(A::SCENARIO_NAME))
        .chain(A::ALIASES.iter().copied());
    for name in names {
        if let Some(owner) = entries.iter().find(|e| e.is_named(name)) {
            return Err(RegistryError::NameTaken {
                name: name.to_string(),
                owner: owner.name,
            });
        }
    }
    let entry: &'static AlgorithmEntry = Box::leak(Box::new(AlgorithmEntry {
        name: A::NAME,
        scenario_name: A::SCENARIO_NAME,
        aliases: A::ALIASES,
        summary: A::SUMMARY,
        has_service: A::HAS_SERVICE,
        service_name: A::SERVICE_NAME,
        stream_by_default: A::STREAM_BY_DEFAULT,
        knobs: A::KNOBS,
        resigns: A::RESIGNS,
        changes_membership: A::CHANGES_MEMBERSHIP,
        built_in,
        type_id: TypeId::of::<A>(),
        ops: &Ops::<A>(std::marker::PhantomData),
    }));
    entries.push(entry);
    let names: Vec<&'static str> = entries.iter().map(|e| e.scenario_name).collect();
    *SCENARIO_NAMES.write().unwrap_or_else(|e| e.into_inner()) = Box::leak(names.into());
    Ok(entry)
}

fn check_name(name: &'static str) -> Result<(), RegistryError> {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    if starts_well && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        Ok(())
    } else {
        Err(RegistryError::BadName { name })
    }
}

/// Names a scenario file gives its own structures: an algorithm named so would make its
/// errors ambiguous (`unknown field in Network`).
const STRUCT_NAMES: &[&str] = &[
    "Scenario",
    "Design",
    "Network",
    "Link",
    "Clocks",
    "ServiceClock",
    "NodeClock",
    "Disk",
    "NodeDisk",
    "Workload",
    "Resource",
    "Liveness",
    "Fault",
];

fn check_scenario_name(name: &'static str) -> Result<(), RegistryError> {
    if STRUCT_NAMES.contains(&name) {
        return Err(RegistryError::BadScenarioName { name });
    }
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if starts_well && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(RegistryError::BadScenarioName { name })
    }
}

static SCENARIO_NAMES: RwLock<&'static [&'static str]> = RwLock::new(&[]);

fn registry() -> &'static RwLock<Vec<&'static AlgorithmEntry>> {
    static REGISTRY: OnceLock<RwLock<Vec<&'static AlgorithmEntry>>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut entries = Vec::new();
        crate::built_in::built_ins(&mut entries);
        RwLock::new(entries)
    })
}

/// Adds a built-in algorithm while the registry is being made (see `lib.rs`).
pub(crate) fn insert_built_in<A: Algorithm>(entries: &mut Vec<&'static AlgorithmEntry>) {
    insert::<A>(entries, true).expect("built-in algorithms have distinct, valid names");
}

/// What an entry does with its type, behind the entry's `&'static dyn`.
trait EntryOps: Send + Sync {
    fn default_config(&self, entry: &'static AlgorithmEntry) -> AlgorithmConfig;
    fn parse_settings(
        &self,
        entry: &'static AlgorithmEntry,
        text: &str,
        options: &ron::Options,
    ) -> Result<AlgorithmSettings, ron::error::SpannedError>;
}

struct Ops<A>(std::marker::PhantomData<fn() -> A>);

impl<A: Algorithm> EntryOps for Ops<A> {
    fn default_config(&self, entry: &'static AlgorithmEntry) -> AlgorithmConfig {
        AlgorithmConfig::with_entry::<A>(entry, A::Config::default())
    }

    fn parse_settings(
        &self,
        entry: &'static AlgorithmEntry,
        text: &str,
        options: &ron::Options,
    ) -> Result<AlgorithmSettings, ron::error::SpannedError> {
        let mut deserializer = ron::Deserializer::from_str_with_options(text, options)?;
        let Only::<A>(settings) = serde::Deserialize::deserialize(&mut deserializer)
            .map_err(|e| deserializer.span_error(e))?;
        Ok(AlgorithmSettings {
            entry,
            settings: Box::new(Typed::<A, A::Settings>::new(settings)),
        })
    }
}

/// `A`'s settings read as the variant `A::SCENARIO_NAME` of the enum `algorithm`; any other
/// variant is "unknown", listed against every registered name (as a derived enum would).
struct Only<A: Algorithm>(A::Settings);

impl<'de, A: Algorithm> serde::Deserialize<'de> for Only<A> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_enum(
            "algorithm",
            scenario_names(),
            OnlyVisitor::<A>(Default::default()),
        )
    }
}

struct OnlyVisitor<A>(std::marker::PhantomData<fn() -> A>);

impl<'de, A: Algorithm> serde::de::Visitor<'de> for OnlyVisitor<A> {
    type Value = Only<A>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("enum algorithm")
    }

    fn visit_enum<E: serde::de::EnumAccess<'de>>(self, data: E) -> Result<Self::Value, E::Error> {
        use serde::de::{Error, VariantAccess};
        let (VariantName(name), variant) = data.variant()?;
        if name != A::SCENARIO_NAME {
            return Err(E::Error::unknown_variant(&name, scenario_names()));
        }
        variant.newtype_variant().map(Only)
    }
}

/// An enum variant's name, read as an identifier.
struct VariantName(String);

impl<'de> serde::Deserialize<'de> for VariantName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("variant identifier")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
                Ok(v.to_string())
            }
        }
        deserializer.deserialize_identifier(Name).map(VariantName)
    }
}

/// A value of one algorithm's type behind the registry's type-free handles.
struct Typed<A, T>(T, std::marker::PhantomData<fn() -> A>);

impl<A, T> Typed<A, T> {
    fn new(value: T) -> Self {
        Self(value, std::marker::PhantomData)
    }
}

impl<A, T: Serialize> Serialize for Typed<A, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// What [`AlgorithmConfig`] asks of the configuration behind it.
trait DynConfig: Hooks + Send + Sync + erased_serde::Serialize {
    fn as_any(&self) -> &dyn Any;
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn same_as(&self, other: &dyn DynConfig) -> bool;
    fn settings(&self, entry: &'static AlgorithmEntry) -> AlgorithmSettings;
    fn info(&self, members: usize) -> AlgorithmInfo;
    fn for_members(
        &self,
        entry: &'static AlgorithmEntry,
        members: usize,
    ) -> Option<AlgorithmConfig>;
    fn reference(&self, entry: &'static AlgorithmEntry) -> Option<AlgorithmConfig>;
    fn vary(
        &self,
        entry: &'static AlgorithmEntry,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<AlgorithmConfig, Problem<AlgorithmError>>;
    fn run(
        &self,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError>;
}

erased_serde::serialize_trait_object!(DynConfig);

impl<A: Algorithm> DynConfig for Typed<A, A::Config> {
    fn as_any(&self) -> &dyn Any {
        &self.0
    }

    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }

    fn same_as(&self, other: &dyn DynConfig) -> bool {
        other.as_any().downcast_ref::<A::Config>() == Some(&self.0)
    }

    fn settings(&self, entry: &'static AlgorithmEntry) -> AlgorithmSettings {
        AlgorithmSettings {
            entry,
            settings: Box::new(Typed::<A, A::Settings>::new(A::settings(&self.0))),
        }
    }

    fn info(&self, members: usize) -> AlgorithmInfo {
        A::info(&self.0, members)
    }

    fn for_members(
        &self,
        entry: &'static AlgorithmEntry,
        members: usize,
    ) -> Option<AlgorithmConfig> {
        A::for_members(&self.0, members).map(|c| AlgorithmConfig::with_entry::<A>(entry, c))
    }

    fn reference(&self, entry: &'static AlgorithmEntry) -> Option<AlgorithmConfig> {
        A::reference(&self.0).map(|c| AlgorithmConfig::with_entry::<A>(entry, c))
    }

    fn vary(
        &self,
        entry: &'static AlgorithmEntry,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<AlgorithmConfig, Problem<AlgorithmError>> {
        A::vary(&self.0, cluster, name, value)
            .map(|c| AlgorithmConfig::with_entry::<A>(entry, c))
            .map_err(|p| Problem {
                field: p.field,
                error: AlgorithmError::new(entry, p.error),
            })
    }

    fn run(
        &self,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        let own = A::properties(&self.0);
        if own.is_empty() {
            return A::run(&self.0, sim, info, options);
        }
        let all = match options.properties {
            Some(theirs) => own.and(theirs),
            None => own,
        };
        let options = RunOptions {
            properties: Some(&all),
            ..options.shorten()
        };
        A::run(&self.0, sim, info, options)
    }
}

/// Every plain hook of [`Algorithm`], relayed once: for each, the object-safe method of
/// `Hooks`, its body for algorithm `A` (on `config: &A::Config`), and the public method of
/// [`AlgorithmConfig`] with its doc. A new hook is one entry here (and its default in
/// [`Algorithm`]); hooks that need the entry or wrap their answer are [`DynConfig`]'s.
macro_rules! relayed_hooks {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($config:ident $(, $arg:ident: $ty:ty)*) -> $ret:ty $body:block
    )*) => {
        /// The plain hooks of an algorithm's configuration, behind `dyn`.
        trait Hooks {
            $(fn $name(&self $(, $arg: $ty)*) -> $ret;)*
        }

        impl<A: Algorithm> Hooks for Typed<A, A::Config> {
            $(fn $name(&self $(, $arg: $ty)*) -> $ret {
                let $config = &self.0;
                $body
            })*
        }

        impl AlgorithmConfig {
            $($(#[$doc])*
            pub fn $name(&self $(, $arg: $ty)*) -> $ret {
                self.config.$name($($arg),*)
            })*
        }
    };
}

relayed_hooks! {
    /// Every timing in the settings, each with its field name in a scenario file (a range's
    /// ends as `name[0]` and `name[1]`).
    fn timings(config) -> Vec<(&'static str, Nanos)> { A::timings(config) }
    /// What the modeled system does to the settings as written (see
    /// [`Algorithm::adjustments`]); empty when they run as written.
    fn adjustments(config) -> Vec<String> { A::adjustments(config) }
    /// The shortest period at which a process of the algorithm acts on its own timers, with
    /// its field name, at least 1 ns (the basis of [`crate::expected_events`]).
    fn shortest_timing(config) -> (&'static str, Nanos) { A::shortest_timing(config) }
    /// The interval at which a live leader or lease holder shows it is alive.
    fn heartbeat_ns(config) -> Nanos { A::heartbeat_ns(config) }
    /// The shortest wait after which a member acts on not having heard from others.
    fn campaign_timeout_ns(config) -> Nanos { A::campaign_timeout_ns(config) }
    /// Whether members send to every other member (messages in flight, and the memory of a
    /// run, grow with the square of the cluster).
    fn sends_to_every_member(_config) -> bool { A::SENDS_TO_EVERY_MEMBER }
    /// Whether one election can cost `n (n - 1)` messages (see
    /// [`Algorithm::ELECTION_IS_QUADRATIC`]).
    fn election_is_quadratic(_config) -> bool { A::ELECTION_IS_QUADRATIC }
    /// Whether its processes may report observations of their own (see
    /// [`Algorithm::OBSERVES`]).
    fn observes(_config) -> bool { A::OBSERVES }
    /// The names of the algorithm's own safety properties ([`Algorithm::properties`]).
    fn property_names(config) -> Vec<&'static str> { A::properties(config).names() }
    /// The names of its message types ([`Algorithm::message_names`]); `None` when its nodes
    /// declare them only when they start.
    fn message_names(config) -> Option<&'static [&'static str]> { A::message_names(config) }
    /// The observation names its scenario-declared properties watch
    /// ([`Algorithm::watched_observations`]).
    fn watched_observations(config) -> Vec<&'static str> { A::watched_observations(config) }
    /// The programs a run with this algorithm starts, as command lines
    /// ([`Algorithm::programs`]): empty unless its nodes are external processes.
    fn programs(config) -> Vec<Vec<String>> { A::programs(config) }
    /// Which of `members` a systematic search may take for one another as far as the
    /// settings go: a key per member, equal for members set alike; `None` when the
    /// algorithm's processes cannot be renamed ([`Algorithm::member_keys`]).
    ///
    /// ```
    /// use splitbrain_algorithms::{raft::{Raft, RaftConfig}, ring::Ring, AlgorithmConfig};
    /// let logs = RaftConfig { log_lengths: vec![5, 0, 5], ..RaftConfig::default() };
    /// let raft = AlgorithmConfig::new::<Raft>(logs).unwrap();
    /// assert_eq!(raft.member_keys(3), Some(vec![5, 0, 5]));
    /// let ring = AlgorithmConfig::new::<Ring>(Default::default()).unwrap();
    /// assert_eq!(ring.member_keys(3), None);
    /// ```
    fn member_keys(config, members: usize) -> Option<Vec<u64>> { A::member_keys(config, members) }
    /// How many processes the modeled coordination service runs as, after the members (see
    /// [`Algorithm::service_processes`]): 0, 1, or a clustered service's member count.
    fn service_processes(config) -> usize { A::service_processes(config) }
    /// The names of the service's processes, in id order ([`Algorithm::service_names`]):
    /// empty without a service.
    fn service_names(config) -> Vec<String> { A::service_names(config) }
}

/// A validated algorithm choice with its settings: any registered algorithm.
#[derive(Clone)]
pub struct AlgorithmConfig {
    entry: &'static AlgorithmEntry,
    config: Arc<dyn DynConfig>,
}

impl AlgorithmConfig {
    /// Algorithm `A` with `config`, registering `A` if it is not yet.
    ///
    /// ```
    /// use splitbrain_algorithms::{raft::{Raft, RaftConfig}, AlgorithmConfig};
    /// let config = AlgorithmConfig::new::<Raft>(RaftConfig::default()).unwrap();
    /// assert_eq!(config.name(), "raft");
    /// assert_eq!(config.config::<Raft>(), Some(&RaftConfig::default()));
    /// ```
    pub fn new<A: Algorithm>(config: A::Config) -> Result<Self, RegistryError> {
        let entry = register::<A>()?;
        Ok(Self::with_entry::<A>(entry, config))
    }

    fn with_entry<A: Algorithm>(entry: &'static AlgorithmEntry, config: A::Config) -> Self {
        Self {
            entry,
            config: Arc::new(Typed::<A, A::Config>::new(config)),
        }
    }

    /// The configuration, if this is algorithm `A`.
    pub fn config<A: Algorithm>(&self) -> Option<&A::Config> {
        self.config.as_any().downcast_ref()
    }

    /// The algorithm named `name` (any case, or an alias) with its defaults.
    pub fn default_named(name: &str) -> Option<Self> {
        AlgorithmEntry::named(name).map(AlgorithmEntry::default_config)
    }

    /// Every setting written out, such that lowering them gives this configuration.
    pub fn settings(&self) -> AlgorithmSettings {
        self.config.settings(self.entry)
    }

    /// The registry entry of this algorithm.
    pub fn entry(&self) -> &'static AlgorithmEntry {
        self.entry
    }

    /// Facts the engine's checks need, for a cluster of `members`.
    pub fn info(&self, members: usize) -> AlgorithmInfo {
        AlgorithmInfo {
            service_names: self.config.service_names(),
            ..self.config.info(members)
        }
    }

    /// The same settings for a cluster of `members` (shrinking a failing scenario drops
    /// members); `None` if the algorithm cannot run with that many.
    pub fn for_members(&self, members: usize) -> Option<Self> {
        if members == 0 {
            return None;
        }
        self.config.for_members(self.entry, members)
    }

    /// The configuration with knob `name` set to `value`, checked like a scenario.
    pub fn vary(
        &self,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<Self, Problem<AlgorithmError>> {
        self.config.vary(self.entry, cluster, name, value)
    }

    /// Those of [`AlgorithmConfig::watched_observations`] that `report`'s run never observed:
    /// their properties held without being tested.
    pub fn unobserved(&self, report: &RunReport) -> Vec<&'static str> {
        let seen = |name: &str| report.observations.iter().any(|o| o.kind == name);
        self.watched_observations()
            .into_iter()
            .filter(|name| !seen(name))
            .collect()
    }

    /// The programs a hunt of this algorithm may start: a run's
    /// ([`AlgorithmConfig::programs`]), and its reference's, which a hunt runs on every
    /// failing schedule.
    pub fn programs_with_reference(&self) -> Vec<Vec<String>> {
        let mut programs = self.programs();
        if let Some(reference) = self.reference() {
            programs.extend(reference.programs());
        }
        programs
    }

    /// The configuration of the version known to be right ([`Algorithm::reference`]), if
    /// this one names one.
    pub fn reference(&self) -> Option<AlgorithmConfig> {
        self.config.reference(self.entry)
    }

    /// Runs `config` with this algorithm and the given options.
    pub fn run_with(&self, config: SimConfig, options: RunOptions) -> Result<RunReport, RunError> {
        let info = self.info(config.members);
        self.config.run(config, info, options)
    }

    /// Every process of a run of `members`: the members and the service's processes.
    pub fn processes(&self, members: usize) -> usize {
        members.saturating_add(self.service_processes())
    }

    /// The lifeline names of a run of `members`: `n0`, `n1`, ..., then the service's
    /// processes' names (`etcd`, `ZooKeeper`, `API server`; `etcd-0`, `etcd-1`, ... for each
    /// member of a clustered service; [`Algorithm::service_names`]), then `resource`.
    pub fn lifeline_names(&self, members: usize) -> Vec<String> {
        let mut names: Vec<String> = (0..members).map(|i| format!("n{i}")).collect();
        names.extend(self.config.service_names());
        names.push("resource".to_string());
        names
    }

    /// Whether the algorithm runs a modeled coordination service (process id `members`).
    pub fn has_service(&self) -> bool {
        self.entry.has_service
    }

    /// Whether its messages travel on `Stream` connections unless the scenario says
    /// otherwise.
    pub fn stream_by_default(&self) -> bool {
        self.entry.stream_by_default
    }

    /// The algorithm's short name.
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The name a scenario writes for it (`Raft`).
    pub fn scenario_name(&self) -> &'static str {
        self.entry.scenario_name
    }
}

impl PartialEq for AlgorithmConfig {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.entry, other.entry) && self.config.same_as(&*other.config)
    }
}

impl Eq for AlgorithmConfig {}

impl fmt::Debug for AlgorithmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(self.entry.scenario_name)
            .field(&DebugWith(&*self.config))
            .finish()
    }
}

struct DebugWith<'a>(&'a dyn DynConfig);

impl fmt::Debug for DebugWith<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.debug(f)
    }
}

impl Serialize for AlgorithmConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_variant(
            "AlgorithmConfig",
            variant_index(self.entry),
            self.entry.scenario_name,
            &*self.config,
        )
    }
}

fn variant_index(entry: &'static AlgorithmEntry) -> u32 {
    let index = algorithms()
        .iter()
        .position(|e| std::ptr::eq(*e, entry))
        .unwrap_or(0);
    u32::try_from(index).unwrap_or(u32::MAX)
}

/// What [`AlgorithmSettings`] asks of the settings behind it.
trait DynSettings: Send + Sync + erased_serde::Serialize {
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn lower(
        self: Box<Self>,
        entry: &'static AlgorithmEntry,
        cluster: &Cluster,
    ) -> (AlgorithmConfig, Vec<Problem<AlgorithmError>>);
}

erased_serde::serialize_trait_object!(DynSettings);

impl<A: Algorithm> DynSettings for Typed<A, A::Settings> {
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }

    fn lower(
        self: Box<Self>,
        entry: &'static AlgorithmEntry,
        cluster: &Cluster,
    ) -> (AlgorithmConfig, Vec<Problem<AlgorithmError>>) {
        let (config, problems) = A::lower(self.0, cluster);
        let problems = problems
            .into_iter()
            .map(|p| Problem {
                field: p.field,
                error: AlgorithmError::new(entry, p.error),
            })
            .collect();
        (AlgorithmConfig::with_entry::<A>(entry, config), problems)
    }
}

/// An algorithm's settings as a scenario writes them: `Raft(heartbeat: "50ms")`. Read with
/// [`AlgorithmEntry::parse_settings`] (or [`AlgorithmSettings::from_ron`]); written with serde
/// as the enum variant `algorithm: Name(...)`.
pub struct AlgorithmSettings {
    entry: &'static AlgorithmEntry,
    settings: Box<dyn DynSettings>,
}

impl AlgorithmSettings {
    /// Reads the value of `algorithm: Name(...)`, `Name(...)`, that `text` starts with (what
    /// follows it is not read), with `options`: the registered algorithm `Name` reads its own
    /// settings. An unregistered name is ron's "unknown variant" error listing every
    /// registered name.
    ///
    /// ```
    /// use splitbrain_algorithms::{AlgorithmSettings, Cluster};
    /// use ron::extensions::Extensions;
    /// let options = ron::Options::default().with_default_extension(
    ///     Extensions::UNWRAP_VARIANT_NEWTYPES | Extensions::IMPLICIT_SOME,
    /// );
    /// let settings = AlgorithmSettings::from_ron("Raft(heartbeat: \"50ms\")", &options).unwrap();
    /// let (config, problems) = settings.lower(&Cluster { nodes: 5 });
    /// assert!(problems.is_empty());
    /// assert_eq!(config.heartbeat_ns(), 50_000_000);
    /// assert!(AlgorithmSettings::from_ron("Paxos()", &options).is_err());
    /// ```
    pub fn from_ron(text: &str, options: &ron::Options) -> Result<Self, ron::error::SpannedError> {
        let entry = leading_identifier(text)
            .and_then(AlgorithmEntry::by_scenario_name)
            .unwrap_or_else(|| algorithms()[0]);
        entry.parse_settings(text, options)
    }

    /// The registry entry of the algorithm these settings are for.
    pub fn entry(&self) -> &'static AlgorithmEntry {
        self.entry
    }

    /// Validates the settings for `cluster` and fills in the defaults; every broken rule is
    /// reported, each at its field.
    pub fn lower(self, cluster: &Cluster) -> (AlgorithmConfig, Vec<Problem<AlgorithmError>>) {
        self.settings.lower(self.entry, cluster)
    }
}

/// The identifier `text` starts with, after whitespace and comments (`Raft` in
/// `/* x */ Raft(...)`; `r#Raft` reads as `Raft`).
fn leading_identifier(text: &str) -> Option<&str> {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if rest.starts_with("/*") {
            rest = after_block_comment(rest);
        } else {
            break;
        }
    }
    let rest = rest.strip_prefix("r#").unwrap_or(rest);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let starts_well = rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    (end > 0 && starts_well).then(|| &rest[..end])
}

/// What follows the block comment `text` starts with (`/*`), nested comments included (RON
/// nests them); empty if it never closes.
fn after_block_comment(text: &str) -> &str {
    let mut depth = 0usize;
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        if rest.starts_with("/*") {
            depth += 1;
            at += 2;
        } else if rest.starts_with("*/") {
            depth -= 1;
            at += 2;
            if depth == 0 {
                return &text[at..];
            }
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    ""
}

impl fmt::Debug for AlgorithmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Inner<'a>(&'a dyn DynSettings);
        impl fmt::Debug for Inner<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.debug(f)
            }
        }
        f.debug_tuple(self.entry.scenario_name)
            .field(&Inner(&*self.settings))
            .finish()
    }
}

impl Serialize for AlgorithmSettings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_variant(
            "algorithm",
            variant_index(self.entry),
            self.entry.scenario_name,
            &*self.settings,
        )
    }
}

/// What [`AlgorithmError`] asks of the error behind it.
trait DynError: std::error::Error + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn same_as(&self, other: &dyn DynError) -> bool;
    fn hint(&self) -> Option<String>;
    fn item(&self) -> Option<usize>;
}

impl<E: SettingError> DynError for E {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_as(&self, other: &dyn DynError) -> bool {
        other.as_any().downcast_ref::<E>() == Some(self)
    }

    fn hint(&self) -> Option<String> {
        SettingError::hint(self)
    }

    fn item(&self) -> Option<usize> {
        SettingError::item(self)
    }
}

/// A rule an algorithm's settings broke: the algorithm's own error type, behind a handle.
#[derive(Clone)]
pub struct AlgorithmError {
    entry: &'static AlgorithmEntry,
    error: Arc<dyn DynError>,
}

impl AlgorithmError {
    fn new<E: SettingError>(entry: &'static AlgorithmEntry, error: E) -> Self {
        Self {
            entry,
            error: Arc::new(error),
        }
    }

    /// What to do about it, if there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        self.error.hint()
    }

    /// The item of a list setting the rule is about, when it is one item.
    pub fn item(&self) -> Option<usize> {
        self.error.item()
    }

    /// The algorithm's own error, if it is of type `E`.
    pub fn downcast_ref<E: SettingError>(&self) -> Option<&E> {
        self.error.as_any().downcast_ref()
    }
}

impl PartialEq for AlgorithmError {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.entry, other.entry) && self.error.same_as(&*other.error)
    }
}

impl Eq for AlgorithmError {}

impl fmt::Debug for AlgorithmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(self.entry.scenario_name)
            .field(&self.error)
            .finish()
    }
}

impl fmt::Display for AlgorithmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.error, f)
    }
}

impl std::error::Error for AlgorithmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_identifier_skips_comments_and_raw_prefix() {
        assert_eq!(leading_identifier(" Raft(x)"), Some("Raft"));
        assert_eq!(leading_identifier("/* a */ // b\n r#Ring()"), Some("Ring"));
        assert_eq!(leading_identifier("/* a /* b */ c */ Ring()"), Some("Ring"));
        assert_eq!(leading_identifier("/* é /* ü */ */Bully"), Some("Bully"));
        assert_eq!(leading_identifier("5"), None);
        assert_eq!(leading_identifier(""), None);
    }

    #[test]
    fn a_name_another_algorithm_has_is_refused() {
        struct Impostor;
        impl Algorithm for Impostor {
            const NAME: &'static str = "raft";
            const SCENARIO_NAME: &'static str = "Impostor";
            const SUMMARY: &'static str = "takes raft's name";
            type Settings = <crate::raft::Raft as Algorithm>::Settings;
            type Config = <crate::raft::Raft as Algorithm>::Config;
            type Error = <crate::raft::Raft as Algorithm>::Error;
            fn lower(
                s: Self::Settings,
                c: &Cluster,
            ) -> crate::algorithm::Lowered<Self::Config, Self::Error> {
                crate::raft::Raft::lower(s, c)
            }
            fn settings(c: &Self::Config) -> Self::Settings {
                crate::raft::Raft::settings(c)
            }
            fn info(c: &Self::Config, m: usize) -> AlgorithmInfo {
                crate::raft::Raft::info(c, m)
            }
            fn timings(c: &Self::Config) -> Vec<(&'static str, Nanos)> {
                crate::raft::Raft::timings(c)
            }
            fn heartbeat_ns(c: &Self::Config) -> Nanos {
                crate::raft::Raft::heartbeat_ns(c)
            }
            fn vary(
                c: &Self::Config,
                cl: &Cluster,
                n: &str,
                v: KnobValue,
            ) -> Result<Self::Config, Problem<Self::Error>> {
                crate::raft::Raft::vary(c, cl, n, v)
            }
            fn run(
                c: &Self::Config,
                s: SimConfig,
                i: AlgorithmInfo,
                o: RunOptions,
            ) -> Result<RunReport, RunError> {
                crate::raft::Raft::run(c, s, i, o)
            }
        }
        let error = register::<Impostor>().unwrap_err();
        assert_eq!(
            error,
            RegistryError::NameTaken {
                name: "raft".into(),
                owner: "raft"
            }
        );
        assert!(AlgorithmEntry::by_scenario_name("Impostor").is_none());
    }
}
