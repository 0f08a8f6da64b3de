//! ZooKeeper as a scenario writes it (`algorithm: ZooKeeper(tick: "2s", ...)`): the
//! settings, their rules, writing them back, and the knobs `sweep` varies.

use super::{info, ZkConfig, ZkOnDisconnect, ZkProcess, ZkRecipe};
use crate::algorithm::{
    run_processes, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem, SettingError,
};
use crate::rules::{at_most_a_day, dur, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// ZooKeeper sessions and the election recipe; see the module doc of [`super`].
pub struct ZooKeeper;

/// ZooKeeper's settings as written; every field left out takes [`ZkConfig::default`]. Any
/// session timeout may be asked for: the server negotiates it into 2 to 20 ticks.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZkSettings {
    /// [`ZkConfig::tick_ns`]: the server's tick, which bounds session timeouts and groups
    /// expiries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<DurationText>,
    /// [`ZkConfig::session_timeout_ns`]: the session timeout clients ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_timeout: Option<DurationText>,
    /// [`ZkConfig::recipe`]: who a waiter watches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<ZkRecipe>,
    /// [`ZkConfig::on_disconnect`]: what a leader does when its connection is lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_disconnect: Option<ZkOnDisconnect>,
}

/// A rule ZooKeeper's settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ZkError {
    /// A rule ZooKeeper shares with other algorithms (a day at most).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// A tick of zero: every session timeout would be negotiated down to nothing.
    #[error("the ZooKeeper tick must be longer than zero")]
    ZeroTick,
    /// Only from `sweep`: a swept lease the server would not grant as asked is not one design.
    #[error(
        "the session timeout {} is outside what the ZooKeeper server grants: 2 to 20 ticks of {}",
        dur(.session_timeout_ns),
        dur(.tick_ns)
    )]
    SessionTimeoutNotGranted {
        /// The session timeout asked for, in nanoseconds.
        session_timeout_ns: u64,
        /// The server's tick, in nanoseconds.
        tick_ns: u64,
    },
}

impl SettingError for ZkError {
    fn hint(&self) -> Option<String> {
        match self {
            ZkError::Common(rule) => rule.hint(),
            ZkError::ZeroTick => Some(
                "the server's tick bounds session timeouts (2 to 20 ticks) and groups expiries; \
                 ZooKeeper's default is 2s"
                    .to_string(),
            ),
            ZkError::SessionTimeoutNotGranted { tick_ns, .. } => Some(format!(
                "give session timeouts from {} to {}, or change the scenario's tick",
                dur(&(2 * tick_ns)),
                dur(&(20 * tick_ns))
            )),
        }
    }
}

impl Algorithm for ZooKeeper {
    const NAME: &'static str = "zookeeper";
    const SCENARIO_NAME: &'static str = "ZooKeeper";
    const SUMMARY: &'static str =
        "ZooKeeper sessions (negotiated timeout, pings, expiry by tick on the server clock) and the \
         election recipe (ephemeral sequential znodes, lowest leads, exists-watch on the \
         predecessor, czxid as fencing token); variants Herd and KeepUntilExpired";
    const HAS_SERVICE: bool = true;
    const SERVICE_NAME: &'static str = "ZooKeeper";
    const STREAM_BY_DEFAULT: bool = true;
    const KNOBS: &'static [Knob] = &[Knob {
        name: "lease",
        shape: KnobShape::Duration,
        example: "1s,2s",
    }];

    type Settings = ZkSettings;
    type Config = ZkConfig;
    type Error = ZkError;

    fn lower(settings: ZkSettings, _cluster: &Cluster) -> Lowered<ZkConfig, ZkError> {
        let defaults = ZkConfig::default();
        let mut problems = Vec::new();
        let tick_ns = ns_or(settings.tick, defaults.tick_ns);
        if tick_ns == 0 {
            problems.push(Problem {
                field: "tick",
                error: ZkError::ZeroTick,
            });
        }
        let too_long = [
            at_most_a_day(tick_ns, "tick"),
            settings
                .session_timeout
                .and_then(|t| at_most_a_day(t.0, "session_timeout")),
        ];
        problems.extend(too_long.into_iter().flatten().map(|p| Problem {
            field: p.field,
            error: p.error.into(),
        }));
        let config = ZkConfig {
            tick_ns: tick_ns.max(1),
            session_timeout_ns: ns_or(settings.session_timeout, defaults.session_timeout_ns),
            recipe: settings.recipe.unwrap_or(defaults.recipe),
            on_disconnect: settings.on_disconnect.unwrap_or(defaults.on_disconnect),
            servers: defaults.servers,
            init_limit: defaults.init_limit,
            sync_limit: defaults.sync_limit,
        };
        (config, problems)
    }

    fn settings(config: &ZkConfig) -> ZkSettings {
        ZkSettings {
            tick: Some(DurationText(config.tick_ns)),
            session_timeout: Some(DurationText(config.session_timeout_ns)),
            recipe: Some(config.recipe),
            on_disconnect: Some(config.on_disconnect),
        }
    }

    fn info(config: &ZkConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &ZkConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("tick", config.tick_ns),
            ("session_timeout", config.session_timeout_ns),
        ]
    }

    fn shortest_timing(config: &ZkConfig) -> (&'static str, Nanos) {
        let mut timings = Self::timings(config);
        // Clients ping every third of the negotiated session timeout.
        timings.push(("session_timeout", config.negotiated_timeout_ns() / 3));
        let (name, ns) = timings
            .into_iter()
            .min_by_key(|(_, ns)| *ns)
            .unwrap_or(("", 1));
        (name, ns.max(1))
    }

    /// ZooKeeper's `processConnectRequest` clamps the asked session timeout into 2 to 20
    /// ticks and tells the client; so does the model.
    fn adjustments(config: &ZkConfig) -> Vec<String> {
        let granted = config.negotiated_timeout_ns();
        if granted == config.session_timeout_ns {
            return Vec::new();
        }
        vec![format!(
            "session_timeout {} is negotiated to {}: the server grants 2 to 20 ticks of {} \
             (ZooKeeper's processConnectRequest); {} `tick` to keep {}",
            dur(&config.session_timeout_ns),
            dur(&granted),
            dur(&config.tick_ns),
            if granted < config.session_timeout_ns {
                "raise"
            } else {
                "lower"
            },
            dur(&config.session_timeout_ns),
        )]
    }

    fn heartbeat_ns(config: &ZkConfig) -> Nanos {
        // Clients ping at a third of the negotiated session timeout.
        config.negotiated_timeout_ns() / 3
    }

    /// `lease` sets the session timeout; one the server would negotiate to something else
    /// is refused (2 to 20 ticks).
    fn vary(
        config: &ZkConfig,
        _cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<ZkConfig, Problem<ZkError>> {
        let KnobValue::Duration(lease_ns) = value else {
            return Err(unknown_knob(name, ZkError::Common));
        };
        if name != "lease" {
            return Err(unknown_knob(name, ZkError::Common));
        }
        let (low, high) = (2 * config.tick_ns, 20 * config.tick_ns);
        if !(low..=high).contains(&lease_ns) {
            let error = ZkError::SessionTimeoutNotGranted {
                session_timeout_ns: lease_ns,
                tick_ns: config.tick_ns,
            };
            return Err(Problem {
                field: "session_timeout",
                error,
            });
        }
        Ok(ZkConfig {
            session_timeout_ns: lease_ns,
            ..config.clone()
        })
    }

    fn run(
        config: &ZkConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        // The members campaign; the server is one more process, id `members`.
        let processes = ZkProcess::cluster(sim.members, config);
        run_processes(sim, info, processes, options)
    }
}
