//! ZooKeeper as a scenario writes it (`algorithm: ZooKeeper(tick: "2s", ...)`): the
//! settings, their rules, writing them back, and the knobs `sweep` varies.

use super::config::{MAX_SERVERS, ZOO_SAMPLE_INIT_LIMIT, ZOO_SAMPLE_SYNC_LIMIT};
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

/// The server counts `sweep --param servers=...` takes: the single server, or an ensemble.
const SERVER_COUNTS: &[&str] = &["1", "3", "5", "7"];

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
    /// [`ZkConfig::servers`]: 1 (the single server, the default) or an odd ensemble size
    /// up to 7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<u64>,
    /// [`ZkConfig::init_limit`]: an ensemble's `initLimit`, in ticks (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_limit: Option<u64>,
    /// [`ZkConfig::sync_limit`]: an ensemble's `syncLimit`, in ticks (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_limit: Option<u64>,
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
    /// An ensemble size that is even, zero or above the most modeled.
    #[error(
        "the ZooKeeper ensemble has {servers} servers; it takes an odd number from 1 to {max}"
    )]
    ServersNotOdd {
        /// The number written.
        servers: u64,
        /// The most servers modeled.
        max: u64,
    },
    /// An `initLimit` or `syncLimit` of zero ticks: no sync, or no silence, would be
    /// allowed.
    #[error("the ensemble's limit must be at least one tick")]
    ZeroLimit,
    /// An ensemble's setting (`init_limit`, `sync_limit`) written for the single server,
    /// which has no followers to sync and would ignore it.
    #[error("`{field}` is a setting of a ZooKeeper ensemble, and the single server ignores it")]
    EnsembleOnly {
        /// The setting written.
        field: &'static str,
    },
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
            ZkError::ServersNotOdd { .. } => Some(
                "a ZooKeeper ensemble has an odd number of servers (a majority is its quorum): \
                 3 or 5 as deployed, or 1 (leave it out) for the single server"
                    .to_string(),
            ),
            ZkError::ZeroLimit => Some(
                "initLimit and syncLimit count ticks; zoo_sample.cfg has initLimit=10 and \
                 syncLimit=5"
                    .to_string(),
            ),
            ZkError::EnsembleOnly { field } => Some(format!(
                "write `servers: 3` to run an ensemble, or leave `{field}` out"
            )),
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
    // Its processes report nothing of their own: guided search need not watch its runs.
    const OBSERVES: bool = false;
    const SUMMARY: &'static str =
        "ZooKeeper sessions (negotiated timeout, pings, expiry by tick on the server clock) and the \
         election recipe (ephemeral sequential znodes, lowest leads, exists-watch on the \
         predecessor, czxid as fencing token); variants Herd and KeepUntilExpired";
    const HAS_SERVICE: bool = true;
    const SERVICE_NAME: &'static str = "ZooKeeper";
    const STREAM_BY_DEFAULT: bool = true;
    const KNOBS: &'static [Knob] = &[
        Knob {
            name: "lease",
            shape: KnobShape::Duration,
            example: "1s,2s",
        },
        Knob {
            name: "servers",
            shape: KnobShape::Choice(SERVER_COUNTS),
            example: "1,3",
        },
    ];

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
        problems.extend(too_long.clone().into_iter().flatten().map(|p| Problem {
            field: p.field,
            error: p.error.into(),
        }));
        let servers = settings.servers.unwrap_or(defaults.servers);
        if servers.is_multiple_of(2) || servers > MAX_SERVERS {
            problems.push(Problem {
                field: "servers",
                error: ZkError::ServersNotOdd {
                    servers,
                    max: MAX_SERVERS,
                },
            });
        }
        let init_limit = settings.init_limit.unwrap_or(defaults.init_limit);
        let sync_limit = settings.sync_limit.unwrap_or(defaults.sync_limit);
        // The limits' spans matter to an ensemble only, and a tick already too long is
        // reported at `tick`, not again at each multiple of it.
        let spans_matter = servers > 1 && too_long[0].is_none();
        let limits = [
            ("init_limit", init_limit, settings.init_limit.is_some()),
            ("sync_limit", sync_limit, settings.sync_limit.is_some()),
        ];
        for (field, limit, written) in limits {
            if written && servers == 1 {
                // The single server has no followers: a limit written for it would be ignored.
                problems.push(Problem {
                    field,
                    error: ZkError::EnsembleOnly { field },
                });
            } else if limit == 0 {
                problems.push(Problem {
                    field,
                    error: ZkError::ZeroLimit,
                });
            } else if let Some(p) =
                at_most_a_day(limit.saturating_mul(tick_ns), field).filter(|_| spans_matter)
            {
                problems.push(Problem {
                    field: p.field,
                    error: p.error.into(),
                });
            }
        }
        let config = ZkConfig {
            tick_ns: tick_ns.max(1),
            session_timeout_ns: ns_or(settings.session_timeout, defaults.session_timeout_ns),
            recipe: settings.recipe.unwrap_or(defaults.recipe),
            on_disconnect: settings.on_disconnect.unwrap_or(defaults.on_disconnect),
            servers: servers.clamp(1, MAX_SERVERS),
            init_limit: init_limit.max(1),
            sync_limit: sync_limit.max(1),
        };
        (config, problems)
    }

    fn settings(config: &ZkConfig) -> ZkSettings {
        ZkSettings {
            tick: Some(DurationText(config.tick_ns)),
            session_timeout: Some(DurationText(config.session_timeout_ns)),
            recipe: Some(config.recipe),
            on_disconnect: Some(config.on_disconnect),
            servers: config.is_ensemble().then_some(config.servers),
            // Only an ensemble takes the limits (see `ZkError::EnsembleOnly`).
            init_limit: (config.is_ensemble() && config.init_limit != ZOO_SAMPLE_INIT_LIMIT)
                .then_some(config.init_limit),
            sync_limit: (config.is_ensemble() && config.sync_limit != ZOO_SAMPLE_SYNC_LIMIT)
                .then_some(config.sync_limit),
        }
    }

    fn info(config: &ZkConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    /// One server, or the ensemble's servers.
    fn service_processes(config: &ZkConfig) -> usize {
        config.servers as usize
    }

    fn timings(config: &ZkConfig) -> Vec<(&'static str, Nanos)> {
        let mut timings = vec![
            ("tick", config.tick_ns),
            ("session_timeout", config.session_timeout_ns),
        ];
        if config.is_ensemble() {
            timings.push(("init_limit", config.init_limit_ns()));
            timings.push(("sync_limit", config.sync_limit_ns()));
        }
        timings
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
    /// is refused (2 to 20 ticks). `servers` runs the single server or an ensemble.
    fn vary(
        config: &ZkConfig,
        _cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<ZkConfig, Problem<ZkError>> {
        if let (KnobValue::Choice(count), "servers") = (value, name) {
            let servers = count
                .parse()
                .map_err(|_| unknown_knob(name, ZkError::Common))?;
            return Ok(ZkConfig {
                servers,
                ..config.clone()
            });
        }
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

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<ZkProcess>().messages)
    }

    fn run(
        config: &ZkConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        // The members campaign; the server is one more process, id `members` (an
        // ensemble's servers are `members..members + servers`).
        let processes = super::processes(sim.members, config);
        run_processes(sim, info, processes, options)
    }
}
