//! The short way to bring your own election code: a [`Process`] with its settings. Implement
//! [`SimpleAlgorithm`] (names, a settings struct, how to build a process) and every type that
//! does is an [`Algorithm`]: register it and scenarios, hunts, shrinking, replays, `compare`
//! and `--check-determinism` take it like a built-in one. The full [`Algorithm`] trait is for
//! settings with rules of their own, `sweep` knobs and hints.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use splitbrain_algorithms::simple::SimpleAlgorithm;
//! use splitbrain_sim::{Ctx, Message, Nanos, NodeId, Process, TimerKind};
//!
//! /// Node 0 leads term 1 for ever: the smallest election there is.
//! #[derive(Clone, Debug)]
//! struct Fixed;
//!
//! #[derive(Clone, Debug)]
//! struct NoMsg;
//! impl Message for NoMsg {
//!     const KINDS: &'static [&'static str] = &["none"];
//!     fn kind(&self) -> usize { 0 }
//! }
//! #[derive(Copy, Clone, Debug, PartialEq, Eq)]
//! struct NoTimer;
//! impl TimerKind for NoTimer {
//!     const NAMES: &'static [&'static str] = &["none"];
//!     fn index(self) -> usize { 0 }
//!     fn from_index(_: usize) -> Self { NoTimer }
//! }
//!
//! impl Process for Fixed {
//!     type Msg = NoMsg;
//!     type Timer = NoTimer;
//!     type Durable = ();
//!     fn on_start(&mut self, ctx: &mut Ctx<'_, NoMsg, NoTimer>) {
//!         if ctx.me() == NodeId(0) {
//!             ctx.became_leader(1, 1);
//!         }
//!     }
//!     fn on_message(&mut self, _: &mut Ctx<'_, NoMsg, NoTimer>, _: NodeId, _: NoMsg) {}
//!     fn on_timer(&mut self, _: &mut Ctx<'_, NoMsg, NoTimer>, _: NoTimer) {}
//!     fn on_restart(&mut self, _: &mut Ctx<'_, NoMsg, NoTimer>) {}
//!     fn term(&self) -> u64 { 1 }
//!     fn write_token(&self, _: i64) -> Option<u64> { None }
//!     fn known_leader(&self) -> Option<NodeId> { Some(NodeId(0)) }
//! }
//!
//! #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct FixedSettings {}
//!
//! struct FixedLeader;
//! impl SimpleAlgorithm for FixedLeader {
//!     const NAME: &'static str = "fixed-leader";
//!     const SCENARIO_NAME: &'static str = "FixedLeader";
//!     type Settings = FixedSettings;
//!     type Process = Fixed;
//!     fn process(_: &FixedSettings, _: NodeId, _: usize) -> Fixed { Fixed }
//!     fn heartbeat_ns(_: &FixedSettings) -> Nanos { 100_000_000 }
//! }
//!
//! splitbrain_algorithms::register::<FixedLeader>().unwrap();
//! let options = ron::Options::default()
//!     .with_default_extension(ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES);
//! let settings =
//!     splitbrain_algorithms::AlgorithmSettings::from_ron("FixedLeader()", &options).unwrap();
//! let (config, problems) = settings.lower(&splitbrain_algorithms::Cluster { nodes: 3 });
//! assert!(problems.is_empty());
//! assert_eq!(config.name(), "fixed-leader");
//! ```

use crate::algorithm::{run_processes, Algorithm, Cluster, KnobValue, Lowered, Problem};
use crate::{RunOptions, SettingError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use splitbrain_sim::{
    AlgorithmInfo, Nanos, NodeId, Process, Properties, RunError, RunReport, SignalSupport,
    SimConfig,
};
use std::fmt::Debug;

/// An election given as a [`Process`] and its settings; every such type is an [`Algorithm`].
pub trait SimpleAlgorithm: 'static {
    /// The name on the command line and in reports (`my-lease`).
    const NAME: &'static str;
    /// The name a scenario writes (`MyLease` in `algorithm: MyLease(...)`).
    const SCENARIO_NAME: &'static str;
    /// One line for `splitbrain list`.
    const SUMMARY: &'static str = "a user's algorithm";
    /// Whether process `members` is a coordination service of the algorithm's own (built by
    /// [`SimpleAlgorithm::process`] with `id == members`).
    const HAS_SERVICE: bool = false;
    /// The settings as a scenario writes them, also what runs: serde with `#[serde(default)]`
    /// fields (or a `Default` with every field), `deny_unknown_fields` for typo errors.
    type Settings: DeserializeOwned
        + Serialize
        + Debug
        + Default
        + Clone
        + PartialEq
        + Eq
        + Send
        + Sync
        + 'static;
    /// The process every member (and the service, if any) runs.
    type Process: Process;

    /// Process `id` of a cluster of `members` election members.
    fn process(settings: &Self::Settings, id: NodeId, members: usize) -> Self::Process;
    /// The interval at which a live leader shows it is alive (the basis of the events
    /// estimate and of liveness bounds).
    fn heartbeat_ns(settings: &Self::Settings) -> Nanos;
    /// How long the cluster may take to notice a dead leader and elect another; liveness
    /// allows ten times this after the last fault. Ten heartbeats by default.
    fn failure_detection_ns(settings: &Self::Settings) -> Nanos {
        Self::heartbeat_ns(settings).saturating_mul(10)
    }
    /// Safety properties of the algorithm's own (see [`Algorithm::properties`]).
    fn properties(settings: &Self::Settings) -> Properties {
        let _ = settings;
        Properties::new()
    }
}

/// A [`SimpleAlgorithm`]'s settings have no rules of their own: this is never produced but
/// for `sweep --param`, which has no knob to vary.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimpleError {
    /// `sweep --param` named a knob: a simple algorithm has none.
    #[error("`{0}` is not a setting `sweep` can vary for this algorithm")]
    NoKnob(String),
}

impl SettingError for SimpleError {
    fn hint(&self) -> Option<String> {
        Some("implement the full `Algorithm` trait to give it knobs".into())
    }
}

impl<T: SimpleAlgorithm> Algorithm for T {
    const NAME: &'static str = T::NAME;
    const SCENARIO_NAME: &'static str = T::SCENARIO_NAME;
    const SUMMARY: &'static str = T::SUMMARY;
    const HAS_SERVICE: bool = T::HAS_SERVICE;
    type Settings = T::Settings;
    type Config = T::Settings;
    type Error = SimpleError;

    fn lower(settings: T::Settings, _cluster: &Cluster) -> Lowered<T::Settings, SimpleError> {
        (settings, Vec::new())
    }
    fn settings(config: &T::Settings) -> T::Settings {
        config.clone()
    }
    fn info(config: &T::Settings, _members: usize) -> AlgorithmInfo {
        AlgorithmInfo {
            service_names: Vec::new(),
            name: T::NAME.to_string(),
            failure_detection_ns: T::failure_detection_ns(config),
            min_group_for_progress: 1,
            signals: SignalSupport::NONE,
            late_campaigns_lose: false,
        }
    }
    fn timings(config: &T::Settings) -> Vec<(&'static str, Nanos)> {
        vec![("heartbeat", T::heartbeat_ns(config))]
    }
    fn heartbeat_ns(config: &T::Settings) -> Nanos {
        T::heartbeat_ns(config)
    }
    fn vary(
        _config: &T::Settings,
        _cluster: &Cluster,
        name: &str,
        _value: KnobValue,
    ) -> Result<T::Settings, Problem<SimpleError>> {
        Err(Problem {
            field: "",
            error: SimpleError::NoKnob(name.to_string()),
        })
    }
    fn properties(config: &T::Settings) -> Properties {
        T::properties(config)
    }
    fn run(
        config: &T::Settings,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        let members = sim.members;
        let processes = (0..members + usize::from(T::HAS_SERVICE))
            .map(|i| T::process(config, NodeId::from(i), members))
            .collect();
        run_processes(sim, info, processes, options)
    }
}
