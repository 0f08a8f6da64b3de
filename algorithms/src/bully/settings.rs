//! Bully as a scenario writes it (`algorithm: Bully(heartbeat: "50ms", ...)`): the settings,
//! their rules, writing them back, and the knobs `sweep` varies.

use super::{info, BullyConfig, BullyNode};
use crate::algorithm::{
    lower_checked, run_members, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{dur, heartbeat_and_failure_timeout, ns_or, unknown_knob, wrap, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// The Bully algorithm; see the module doc of [`super`].
pub struct Bully;

/// Bully's settings as written; every field left out takes [`BullyConfig::default`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BullySettings {
    /// [`BullyConfig::heartbeat_ns`]: the coordinator's heartbeat interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<DurationText>,
    /// [`BullyConfig::failure_timeout_ns`]: silence after which a follower suspects the
    /// coordinator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_timeout: Option<DurationText>,
    /// [`BullyConfig::answer_timeout_ns`] (Coulouris' `T`): a candidate's wait for an OK.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_timeout: Option<DurationText>,
    /// [`BullyConfig::coordinator_timeout_ns`] (Coulouris' `T'`): the wait for COORDINATOR
    /// after an OK.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator_timeout: Option<DurationText>,
}

/// A rule Bully's settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BullyError {
    /// A rule Bully shares with other algorithms (heartbeat, failure timeout, a day at most).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// An answer timeout of zero: a candidate would win before any OK could arrive.
    #[error("the answer timeout must be longer than zero")]
    ZeroAnswerTimeout,
    /// A coordinator timeout no longer than the answer timeout: the node that answered OK
    /// could not announce itself before the candidate gave up on it.
    #[error(
        "the coordinator timeout ({}) must be longer than the answer timeout ({})",
        dur(.coordinator_timeout_ns),
        dur(.answer_timeout_ns)
    )]
    CoordinatorTimeoutNotAboveAnswerTimeout {
        /// Coulouris' `T'`, in nanoseconds of local time.
        coordinator_timeout_ns: u64,
        /// Coulouris' `T`, in nanoseconds of local time.
        answer_timeout_ns: u64,
    },
}

impl SettingError for BullyError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            BullyError::Common(rule) => return rule.hint(),
            BullyError::ZeroAnswerTimeout => {
                "a candidate waits this long for an OK from a higher id before it declares \
                 itself; keep it above one round trip (Coulouris' T)"
            }
            BullyError::CoordinatorTimeoutNotAboveAnswerTimeout { .. } => {
                "the node that answered OK waits the answer timeout itself before it announces; \
                 leave room for that and two message delays (three times the answer timeout, say)"
            }
        };
        Some(hint.to_string())
    }
}

impl Algorithm for Bully {
    const NAME: &'static str = "bully";
    const SCENARIO_NAME: &'static str = "Bully";
    // Its processes report nothing of their own: guided search need not watch its runs.
    const OBSERVES: bool = false;
    const SUMMARY: &'static str =
        "Bully (Garcia-Molina 1982): heartbeat failure detection, ELECTION to higher ids, OK, \
         COORDINATOR, the highest live id wins and a recovering higher id takes over; epochs, no quorum";
    const SENDS_TO_EVERY_MEMBER: bool = true;
    /// No planned handover: `Resign` does nothing.
    const RESIGNS: bool = false;
    // Every member that suspects the coordinator sends ELECTION to every higher id and each
    // answers OK: n (n - 1) / 2 of each when all suspect at once (docs/algorithms/bully.md).
    const ELECTION_IS_QUADRATIC: bool = true;
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
    ];

    type Settings = BullySettings;
    type Config = BullyConfig;
    type Error = BullyError;

    fn lower(settings: BullySettings, _cluster: &Cluster) -> Lowered<BullyConfig, BullyError> {
        let defaults = BullyConfig::default();
        let mut common = Vec::new();
        let (heartbeat_ns, failure_timeout_ns) = heartbeat_and_failure_timeout(
            settings.heartbeat,
            settings.failure_timeout,
            defaults.heartbeat_ns,
            defaults.failure_timeout_ns,
            &mut common,
        );
        let mut problems: Vec<_> = wrap(common, BullyError::Common).collect();
        let answer_timeout_ns = ns_or(settings.answer_timeout, defaults.answer_timeout_ns);
        let coordinator_timeout_ns = ns_or(
            settings.coordinator_timeout,
            defaults.coordinator_timeout_ns,
        );
        if answer_timeout_ns == 0 {
            problems.push(Problem {
                field: "answer_timeout",
                error: BullyError::ZeroAnswerTimeout,
            });
        } else if coordinator_timeout_ns <= answer_timeout_ns {
            let field =
                if settings.coordinator_timeout.is_some() || settings.answer_timeout.is_none() {
                    "coordinator_timeout"
                } else {
                    "answer_timeout"
                };
            let error = BullyError::CoordinatorTimeoutNotAboveAnswerTimeout {
                coordinator_timeout_ns,
                answer_timeout_ns,
            };
            problems.push(Problem { field, error });
        }
        let config = BullyConfig {
            heartbeat_ns,
            failure_timeout_ns,
            answer_timeout_ns,
            coordinator_timeout_ns,
        };
        (config, problems)
    }

    fn settings(config: &BullyConfig) -> BullySettings {
        BullySettings {
            heartbeat: Some(DurationText(config.heartbeat_ns)),
            failure_timeout: Some(DurationText(config.failure_timeout_ns)),
            answer_timeout: Some(DurationText(config.answer_timeout_ns)),
            coordinator_timeout: Some(DurationText(config.coordinator_timeout_ns)),
        }
    }

    fn info(config: &BullyConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &BullyConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("heartbeat", config.heartbeat_ns),
            ("failure_timeout", config.failure_timeout_ns),
            ("answer_timeout", config.answer_timeout_ns),
            ("coordinator_timeout", config.coordinator_timeout_ns),
        ]
    }

    fn heartbeat_ns(config: &BullyConfig) -> Nanos {
        config.heartbeat_ns
    }

    fn campaign_timeout_ns(config: &BullyConfig) -> Nanos {
        // A follower suspects after the failure timeout; a candidate claims after the answer
        // timeout; a waiter restarts after the coordinator timeout.
        config
            .failure_timeout_ns
            .min(config.answer_timeout_ns)
            .min(config.coordinator_timeout_ns)
    }

    fn vary(
        config: &BullyConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<BullyConfig, Problem<BullyError>> {
        let mut settings = Self::settings(config);
        match (name, value) {
            ("heartbeat", KnobValue::Duration(ns)) => settings.heartbeat = Some(DurationText(ns)),
            ("failure_timeout", KnobValue::Duration(ns)) => {
                settings.failure_timeout = Some(DurationText(ns));
            }
            _ => return Err(unknown_knob(name, BullyError::Common)),
        }
        lower_checked::<Self>(settings, cluster)
    }

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<BullyNode>().messages)
    }

    fn run(
        config: &BullyConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        run_members(sim, info, options, |id, members| {
            BullyNode::new(id, members, config)
        })
    }
}
