//! raft-rs as a scenario writes it (`algorithm: RaftRs(election_tick: 10, heartbeat_tick: 3,
//! tick: "15ms", pre_vote: true, check_quorum: true)`): the settings, their rules (raft-rs'
//! own, `RaftRsConfig::validate`), writing them back, and the knob `sweep` varies.

use super::{info, RaftRsConfig, RaftRsConfigError, RaftRsNode};
use crate::algorithm::{
    lower_checked, run_processes, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, NodeId, RunReport, SimConfig};
use thiserror::Error;

/// tikv's raft-rs driven through the engine; see the module doc of [`super`].
pub struct RaftRs;

/// raft-rs' settings as written; every field left out takes [`RaftRsConfig::default`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RaftRsSettings {
    /// raft-rs `Config::election_tick`, in ticks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub election_tick: Option<usize>,
    /// raft-rs `Config::heartbeat_tick`, in ticks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_tick: Option<usize>,
    /// The local time of one tick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<DurationText>,
    /// raft-rs `Config::pre_vote`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_vote: Option<bool>,
    /// raft-rs `Config::check_quorum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_quorum: Option<bool>,
}

/// A rule raft-rs' settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RaftRsError {
    /// A rule several algorithms share.
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// A rule of raft-rs' own `Config::validate`, or of the adapter.
    #[error("{0}")]
    Config(RaftRsConfigError),
}

impl std::error::Error for RaftRsConfigError {}

impl SettingError for RaftRsError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            RaftRsError::Common(rule) => return rule.hint(),
            RaftRsError::Config(RaftRsConfigError::ZeroHeartbeatTick) => {
                "raft-rs refuses a heartbeat of zero ticks (`Config::validate`)"
            }
            RaftRsError::Config(RaftRsConfigError::ElectionTickNotAboveHeartbeatTick {
                ..
            }) => {
                "raft-rs refuses an election tick at or below the heartbeat tick \
                 (`Config::validate`); its default is 20 election ticks to 2 heartbeat ticks"
            }
            RaftRsError::Config(RaftRsConfigError::ZeroTick) => {
                "every raft-rs timeout is counted in ticks; give the tick a length, like \"50ms\""
            }
            RaftRsError::Config(RaftRsConfigError::ElectionTimeoutTooLong { .. }) => {
                "lower election_tick or the tick: election timeouts run up to twice \
                 election_tick ticks"
            }
        };
        Some(hint.to_string())
    }
}

impl Algorithm for RaftRs {
    const NAME: &'static str = "raft-rs";
    const ALIASES: &'static [&'static str] = &["raftrs"];
    const SUMMARY: &'static str =
        "tikv's raft-rs 0.7, the production library, driven unchanged (tick timer, step, \
         Ready/advance, MemStorage kept across restarts); election_tick, heartbeat_tick, tick, \
         pre_vote, check_quorum; its randomized timeouts drawn from the node's seeded stream";
    const SENDS_TO_EVERY_MEMBER: bool = true;
    const KNOBS: &'static [Knob] = &[Knob {
        name: "tick",
        shape: KnobShape::Duration,
        example: "15ms,50ms",
    }];

    type Settings = RaftRsSettings;
    type Config = RaftRsConfig;
    type Error = RaftRsError;

    fn lower(settings: RaftRsSettings, _cluster: &Cluster) -> Lowered<RaftRsConfig, RaftRsError> {
        let defaults = RaftRsConfig::default();
        let config = RaftRsConfig {
            election_tick: settings.election_tick.unwrap_or(defaults.election_tick),
            heartbeat_tick: settings.heartbeat_tick.unwrap_or(defaults.heartbeat_tick),
            tick_ns: ns_or(settings.tick, defaults.tick_ns),
            pre_vote: settings.pre_vote.unwrap_or(defaults.pre_vote),
            check_quorum: settings.check_quorum.unwrap_or(defaults.check_quorum),
        };
        let problems = config
            .validate()
            .into_iter()
            .map(|error| Problem {
                field: error.field(),
                error: RaftRsError::Config(error),
            })
            .collect();
        (config, problems)
    }

    fn settings(config: &RaftRsConfig) -> RaftRsSettings {
        RaftRsSettings {
            election_tick: Some(config.election_tick),
            heartbeat_tick: Some(config.heartbeat_tick),
            tick: Some(DurationText(config.tick_ns)),
            pre_vote: Some(config.pre_vote),
            check_quorum: Some(config.check_quorum),
        }
    }

    fn info(config: &RaftRsConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &RaftRsConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("tick", config.tick_ns),
            (
                "election_tick",
                config.max_election_timeout_ns().unwrap_or(Nanos::MAX),
            ),
        ]
    }

    fn heartbeat_ns(config: &RaftRsConfig) -> Nanos {
        let ticks = u64::try_from(config.heartbeat_tick).unwrap_or(u64::MAX);
        ticks.saturating_mul(config.tick_ns)
    }

    /// `tick` sets the length of a tick: every timeout, counted in ticks, scales with it.
    fn vary(
        config: &RaftRsConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<RaftRsConfig, Problem<RaftRsError>> {
        let (KnobValue::Duration(tick_ns), "tick") = (value, name) else {
            return Err(unknown_knob(name, RaftRsError::Common));
        };
        let mut settings = Self::settings(config);
        settings.tick = Some(DurationText(tick_ns));
        lower_checked::<Self>(settings, cluster)
    }

    fn run(
        config: &RaftRsConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> RunReport {
        let members = sim.members;
        let nodes = (0..members)
            .map(|i| RaftRsNode::new(NodeId::from(i), members, config))
            .collect();
        run_processes(sim, info, nodes, options)
    }
}
