//! Raft as a scenario writes it (`algorithm: Raft(heartbeat: "50ms", ...)`): the settings,
//! their rules, writing them back, and the knobs `sweep` varies.

use super::{info, RaftConfig, RaftNode, RaftTimeoutDraw, RaftTimerReset, RaftVariant};
use crate::algorithm::{
    lower_checked, run_members, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{dur, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// Raft leader election; see the module doc of [`super`].
pub struct Raft;

/// Raft's settings as written; every field left out takes [`RaftConfig::default`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RaftSettings {
    /// The election timeout range `(min, max)`: [`RaftConfig::election_timeout_min_ns`] and
    /// [`RaftConfig::election_timeout_max_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub election_timeout: Option<(DurationText, DurationText)>,
    /// [`RaftConfig::heartbeat_ns`]: the leader's heartbeat interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<DurationText>,
    /// [`RaftConfig::pre_vote`]: probe with PreVote before a real election (thesis §9.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_vote: Option<bool>,
    /// [`RaftConfig::check_quorum`]: leaders step down without a majority, and voters
    /// that heard from a leader recently refuse votes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_quorum: Option<bool>,
    /// [`RaftConfig::log_lengths`]: each member's initial log length, one per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_lengths: Option<Vec<u64>>,
    /// [`RaftConfig::variant`]: the correct Raft or a broken one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<RaftVariant>,
    /// [`RaftConfig::timer_reset`]: whether a step-down to a higher term restarts the
    /// election timer (etcd) or only a granted vote and the leader's heartbeat do (paper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_reset: Option<RaftTimerReset>,
    /// [`RaftConfig::propose_every_ns`]: a client proposal at the leader every this long,
    /// replicated and written to every disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propose_every: Option<DurationText>,
    /// [`RaftConfig::timeout_draw`]: a new timeout at every restart of the election timer
    /// (paper, LogCabin) or only on a role change (etcd-io/raft).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_draw: Option<RaftTimeoutDraw>,
}

/// The longest initial log a member may be given: a million million entries. A run appends
/// at most one entry per event, and events are bounded, so indexes stay far below `u64::MAX`.
pub const MAX_LOG_LENGTH: u64 = 1_000_000_000_000;

/// A rule Raft's settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RaftError {
    /// A rule Raft shares with other algorithms (heartbeat above zero, a day at most).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// The election timeout's lower end is above its upper end.
    #[error("the election timeout range is backwards: {} is above {}", dur(.min_ns), dur(.max_ns))]
    ElectionTimeoutMinAboveMax {
        /// The lower end, in nanoseconds of local time.
        min_ns: u64,
        /// The upper end, in nanoseconds of local time.
        max_ns: u64,
    },
    /// The shortest election timeout is no longer than the heartbeat: followers would start
    /// elections against a live leader.
    #[error(
        "the shortest election timeout ({}) must be longer than the heartbeat ({})",
        dur(.min_ns),
        dur(.heartbeat_ns)
    )]
    ElectionTimeoutNotAboveHeartbeat {
        /// The election timeout's lower end, in nanoseconds of local time.
        min_ns: u64,
        /// The heartbeat interval, in nanoseconds of local time.
        heartbeat_ns: u64,
    },
    /// A proposal interval of zero: the leader would propose again at the same instant, for
    /// ever.
    #[error("propose_every must be longer than zero")]
    ZeroProposeEvery,
    /// `log_lengths` is neither empty nor one entry per node.
    #[error("log_lengths has {count} entries for {nodes} nodes")]
    LogLengthsWrongCount {
        /// The number of entries written.
        count: usize,
        /// The number of members in the cluster.
        nodes: u64,
    },
    /// An initial log longer than [`MAX_LOG_LENGTH`].
    #[error("log_lengths[{node}] is {length} entries, more than {MAX_LOG_LENGTH}")]
    LogLengthTooLong {
        /// The member whose log it is (its index in the list).
        node: usize,
        /// The length written.
        length: u64,
    },
}

impl SettingError for RaftError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            RaftError::Common(rule) => return rule.hint(),
            RaftError::ElectionTimeoutMinAboveMax { .. } => {
                "write the shorter timeout first, like (\"150ms\", \"300ms\"): each timeout is \
                 drawn between the two"
            }
            RaftError::ElectionTimeoutNotAboveHeartbeat { .. } => {
                "followers start elections when heartbeats stop; keep the heartbeat well below \
                 the election timeout (a tenth to a third of it)"
            }
            RaftError::LogLengthsWrongCount { .. } => {
                "give one initial log length per node, or leave log_lengths out"
            }
            RaftError::LogLengthTooLong { .. } => {
                return Some(format!(
                    "an initial log only orders the members by how up to date they are: small \
                     lengths like [3, 3, 2] show the same; a length is at most {MAX_LOG_LENGTH}"
                ))
            }
            RaftError::ZeroProposeEvery => {
                "give the interval between two client writes at the leader (etcd under load: \
                 \"10ms\"), or leave propose_every out for elections without a workload"
            }
        };
        Some(hint.to_string())
    }

    fn item(&self) -> Option<usize> {
        match self {
            RaftError::LogLengthTooLong { node, .. } => Some(*node),
            _ => None,
        }
    }
}

impl Algorithm for Raft {
    const NAME: &'static str = "raft";
    const SCENARIO_NAME: &'static str = "Raft";
    // Its processes report nothing of their own: guided search need not watch its runs.
    const OBSERVES: bool = false;
    const SUMMARY: &'static str =
        "Raft leader election (paper 5.2, 5.4.1): randomized timeouts, up-to-date-log votes, \
         pre_vote, check_quorum, leadership transfer; variants ForgetsVoteOnRestart and \
         ForgetsTermOnRestart are broken on purpose";
    const SENDS_TO_EVERY_MEMBER: bool = true;
    const KNOBS: &'static [Knob] = &[
        Knob {
            name: "election_timeout",
            shape: KnobShape::DurationRange,
            example: "150ms..300ms",
        },
        Knob {
            name: "heartbeat",
            shape: KnobShape::Duration,
            example: "50ms",
        },
        Knob {
            name: "timer_reset",
            shape: KnobShape::Choice(RaftTimerReset::NAMES),
            example: "OnGrantOrLeader,OnAnyStepDown",
        },
        Knob {
            name: "timeout_draw",
            shape: KnobShape::Choice(RaftTimeoutDraw::NAMES),
            example: "EveryRestart,OnRoleChange",
        },
    ];

    type Settings = RaftSettings;
    type Config = RaftConfig;
    type Error = RaftError;

    fn lower(settings: RaftSettings, cluster: &Cluster) -> Lowered<RaftConfig, RaftError> {
        let defaults = RaftConfig::default();
        let mut problems = Vec::new();
        let mut problem = |field, error| problems.push(Problem { field, error });
        let (min_ns, max_ns) = settings.election_timeout.map_or(
            (
                defaults.election_timeout_min_ns,
                defaults.election_timeout_max_ns,
            ),
            |(min, max)| (min.0, max.0),
        );
        let heartbeat_ns = ns_or(settings.heartbeat, defaults.heartbeat_ns);
        let timeout_field = if settings.election_timeout.is_some() {
            "election_timeout"
        } else {
            "heartbeat"
        };
        if heartbeat_ns == 0 {
            problem("heartbeat", CommonRule::ZeroHeartbeat.into());
        } else if min_ns <= heartbeat_ns {
            let error = RaftError::ElectionTimeoutNotAboveHeartbeat {
                min_ns,
                heartbeat_ns,
            };
            problem(timeout_field, error);
        }
        if min_ns > max_ns {
            let error = RaftError::ElectionTimeoutMinAboveMax { min_ns, max_ns };
            problem("election_timeout", error);
        }
        let log_lengths = settings.log_lengths.unwrap_or_default();
        if !log_lengths.is_empty() && log_lengths.len() as u64 != cluster.nodes {
            let error = RaftError::LogLengthsWrongCount {
                count: log_lengths.len(),
                nodes: cluster.nodes,
            };
            problem("log_lengths", error);
        }
        if let Some((node, &length)) = log_lengths
            .iter()
            .enumerate()
            .find(|&(_, &length)| length > MAX_LOG_LENGTH)
        {
            problem("log_lengths", RaftError::LogLengthTooLong { node, length });
        }
        let propose_every_ns = settings.propose_every.map(|every| every.0);
        if propose_every_ns == Some(0) {
            problem("propose_every", RaftError::ZeroProposeEvery);
        }
        let config = RaftConfig {
            election_timeout_min_ns: min_ns,
            election_timeout_max_ns: max_ns,
            heartbeat_ns,
            pre_vote: settings.pre_vote.unwrap_or(defaults.pre_vote),
            check_quorum: settings.check_quorum.unwrap_or(defaults.check_quorum),
            log_lengths,
            variant: settings.variant.unwrap_or(defaults.variant),
            timer_reset: settings.timer_reset.unwrap_or(defaults.timer_reset),
            propose_every_ns,
            timeout_draw: settings.timeout_draw.unwrap_or(defaults.timeout_draw),
        };
        (config, problems)
    }

    fn settings(config: &RaftConfig) -> RaftSettings {
        RaftSettings {
            election_timeout: Some((
                DurationText(config.election_timeout_min_ns),
                DurationText(config.election_timeout_max_ns),
            )),
            heartbeat: Some(DurationText(config.heartbeat_ns)),
            pre_vote: Some(config.pre_vote),
            check_quorum: Some(config.check_quorum),
            log_lengths: Some(config.log_lengths.clone()),
            variant: Some(config.variant),
            timer_reset: Some(config.timer_reset),
            propose_every: config.propose_every_ns.map(DurationText),
            timeout_draw: Some(config.timeout_draw),
        }
    }

    fn info(config: &RaftConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &RaftConfig) -> Vec<(&'static str, Nanos)> {
        let mut timings = vec![
            ("heartbeat", config.heartbeat_ns),
            ("election_timeout[0]", config.election_timeout_min_ns),
            ("election_timeout[1]", config.election_timeout_max_ns),
        ];
        if let Some(every_ns) = config.propose_every_ns {
            timings.push(("propose_every", every_ns));
        }
        timings
    }

    fn heartbeat_ns(config: &RaftConfig) -> Nanos {
        config.heartbeat_ns
    }

    fn campaign_timeout_ns(config: &RaftConfig) -> Nanos {
        config.election_timeout_min_ns
    }

    fn for_members(config: &RaftConfig, members: usize) -> Option<RaftConfig> {
        let mut config = config.clone();
        if !config.log_lengths.is_empty() {
            config.log_lengths.truncate(members);
        }
        Some(config)
    }

    fn vary(
        config: &RaftConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<RaftConfig, Problem<RaftError>> {
        let mut settings = Self::settings(config);
        match (name, value) {
            ("election_timeout", KnobValue::Range(min_ns, max_ns)) => {
                settings.election_timeout = Some((DurationText(min_ns), DurationText(max_ns)));
            }
            ("heartbeat", KnobValue::Duration(ns)) => settings.heartbeat = Some(DurationText(ns)),
            ("timer_reset", KnobValue::Choice(rule)) => {
                let Some(rule) = RaftTimerReset::from_name(rule) else {
                    return Err(unknown_knob(name, RaftError::Common));
                };
                settings.timer_reset = Some(rule);
            }
            ("timeout_draw", KnobValue::Choice(rule)) => {
                let Some(rule) = RaftTimeoutDraw::from_name(rule) else {
                    return Err(unknown_knob(name, RaftError::Common));
                };
                settings.timeout_draw = Some(rule);
            }
            _ => return Err(unknown_knob(name, RaftError::Common)),
        }
        lower_checked::<Self>(settings, cluster)
    }

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<RaftNode>().messages)
    }

    /// A member's one setting of its own is its initial log.
    fn member_keys(config: &RaftConfig, members: usize) -> Option<Vec<u64>> {
        let length = |member: usize| config.log_lengths.get(member).copied().unwrap_or(0);
        Some((0..members).map(length).collect())
    }

    fn run(
        config: &RaftConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        run_members(sim, info, options, |id, members| {
            RaftNode::new(id, members, config)
        })
    }
}
