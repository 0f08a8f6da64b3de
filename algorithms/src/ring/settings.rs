//! Ring as a scenario writes it (`algorithm: Ring(variant: AllIds, ...)`): the settings, their
//! rules, writing them back, and the knobs `sweep` varies.

use super::{info, RingConfig, RingInitiators, RingNode, RingOrder, RingTopology, RingVariant};
use crate::algorithm::{
    lower_checked, run_processes, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{heartbeat_and_failure_timeout, ns_or, unknown_knob, wrap, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, NodeId, RunError, RunReport, SimConfig};
use std::sync::Arc;
use thiserror::Error;

/// Ring elections; see the module doc of [`super`].
pub struct Ring;

/// Ring's settings as written; every field left out takes [`RingConfig::default`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RingSettings {
    /// [`RingConfig::variant`]: which ring election runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<RingVariant>,
    /// [`RingConfig::order`]: how the members are placed on the ring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<RingOrder>,
    /// [`RingConfig::initiators`]: who starts an election.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initiators: Option<RingInitiators>,
    /// [`RingConfig::heartbeat_ns`]: the coordinator's heartbeat interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<DurationText>,
    /// [`RingConfig::failure_timeout_ns`]: silence after which a follower suspects the
    /// coordinator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_timeout: Option<DurationText>,
    /// [`RingConfig::ack_timeout_ns`]: the wait for an Ack before a successor is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_timeout: Option<DurationText>,
}

/// A rule Ring's settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RingError {
    /// A rule Ring shares with other algorithms (heartbeat, failure timeout, a day at most).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// An ack timeout of zero: every successor would be skipped before it could answer.
    #[error("the ack timeout must be longer than zero")]
    ZeroAckTimeout,
}

impl SettingError for RingError {
    fn hint(&self) -> Option<String> {
        match self {
            RingError::Common(rule) => rule.hint(),
            RingError::ZeroAckTimeout => Some(
                "a successor is skipped when its acknowledgement takes longer than this; keep it \
                 above one round trip between neighbours"
                    .to_string(),
            ),
        }
    }
}

impl Algorithm for Ring {
    const NAME: &'static str = "ring";
    const SCENARIO_NAME: &'static str = "Ring";
    // Its processes report nothing of their own: guided search need not watch its runs.
    const OBSERVES: bool = false;
    const SUMMARY: &'static str =
        "Ring election: Chang-Roberts (1979) or the all-ids token ring; ring order and initiators \
         configurable, acknowledged hops that skip a dead successor; epochs, no quorum";
    /// No planned handover: `Resign` does nothing.
    const RESIGNS: bool = false;
    const KNOBS: &'static [Knob] = &[
        Knob {
            name: "heartbeat",
            shape: KnobShape::Duration,
            example: "50ms",
        },
        Knob {
            name: "failure_timeout",
            shape: KnobShape::Duration,
            example: "500ms",
        },
        Knob {
            name: "ack_timeout",
            shape: KnobShape::Duration,
            example: "100ms",
        },
    ];

    type Settings = RingSettings;
    type Config = RingConfig;
    type Error = RingError;

    fn lower(settings: RingSettings, _cluster: &Cluster) -> Lowered<RingConfig, RingError> {
        let defaults = RingConfig::default();
        let mut common = Vec::new();
        let (heartbeat_ns, failure_timeout_ns) = heartbeat_and_failure_timeout(
            settings.heartbeat,
            settings.failure_timeout,
            defaults.heartbeat_ns,
            defaults.failure_timeout_ns,
            &mut common,
        );
        let mut problems: Vec<_> = wrap(common, RingError::Common).collect();
        let ack_timeout_ns = ns_or(settings.ack_timeout, defaults.ack_timeout_ns);
        if ack_timeout_ns == 0 {
            problems.push(Problem {
                field: "ack_timeout",
                error: RingError::ZeroAckTimeout,
            });
        }
        let config = RingConfig {
            variant: settings.variant.unwrap_or(defaults.variant),
            order: settings.order.unwrap_or(defaults.order),
            initiators: settings.initiators.unwrap_or(defaults.initiators),
            heartbeat_ns,
            failure_timeout_ns,
            ack_timeout_ns,
        };
        (config, problems)
    }

    fn settings(config: &RingConfig) -> RingSettings {
        RingSettings {
            variant: Some(config.variant),
            order: Some(config.order),
            initiators: Some(config.initiators),
            heartbeat: Some(DurationText(config.heartbeat_ns)),
            failure_timeout: Some(DurationText(config.failure_timeout_ns)),
            ack_timeout: Some(DurationText(config.ack_timeout_ns)),
        }
    }

    fn info(config: &RingConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &RingConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("heartbeat", config.heartbeat_ns),
            ("failure_timeout", config.failure_timeout_ns),
            ("ack_timeout", config.ack_timeout_ns),
        ]
    }

    fn heartbeat_ns(config: &RingConfig) -> Nanos {
        config.heartbeat_ns
    }

    fn vary(
        config: &RingConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<RingConfig, Problem<RingError>> {
        let mut settings = Self::settings(config);
        let KnobValue::Duration(ns) = value else {
            return Err(unknown_knob(name, RingError::Common));
        };
        match name {
            "heartbeat" => settings.heartbeat = Some(DurationText(ns)),
            "failure_timeout" => settings.failure_timeout = Some(DurationText(ns)),
            "ack_timeout" => settings.ack_timeout = Some(DurationText(ns)),
            _ => return Err(unknown_knob(name, RingError::Common)),
        }
        lower_checked::<Self>(settings, cluster)
    }

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<RingNode>().messages)
    }

    fn run(
        config: &RingConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        // Drawn once, before any node starts, so that every node agrees on the ring.
        let topology = Arc::new(RingTopology::new(config.order, sim.members, sim.seed));
        let nodes = (0..sim.members)
            .map(|i| RingNode::new(NodeId::from(i), config, Arc::clone(&topology)))
            .collect();
        run_processes(sim, info, nodes, options)
    }
}
