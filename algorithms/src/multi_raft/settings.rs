//! Multi-range Raft as a scenario writes it (`algorithm: MultiRaft(ranges: 700, ...)`): the
//! settings, their rules, writing them back, and the knobs `sweep` varies.

use super::config::{MultiRaftConfig, MultiRaftLease, MultiRaftVariant};
use super::{info, properties, Store};
use crate::algorithm::{
    lower_checked, run_members, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{at_most_a_day, dur, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// Many Raft groups with range leases on one set of stores; see the module doc of
/// [`super`].
pub struct MultiRaft;

/// The most ranges a run may hold: a million (the scale target is 10,000).
pub const MAX_RANGES: u64 = 1_000_000;
/// The largest replication factor: a range's replica masks are one byte.
pub const MAX_REPLICATION: u64 = 7;
/// The most ticks an election timeout or heartbeat interval may be.
pub const MAX_TICKS: u64 = 1_000_000;

/// The settings as written; every field left out takes [`MultiRaftConfig::default`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MultiRaftSettings {
    /// [`MultiRaftConfig::ranges`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranges: Option<u64>,
    /// [`MultiRaftConfig::replication`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<u64>,
    /// [`MultiRaftConfig::tick_ns`]: the Raft tick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<DurationText>,
    /// [`MultiRaftConfig::heartbeat_ticks`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_ticks: Option<u64>,
    /// [`MultiRaftConfig::election_ticks`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub election_ticks: Option<u64>,
    /// [`MultiRaftConfig::lease`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<MultiRaftLease>,
    /// [`MultiRaftConfig::lease_duration_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration: Option<DurationText>,
    /// [`MultiRaftConfig::max_offset_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_offset: Option<DurationText>,
    /// [`MultiRaftConfig::support_heartbeat_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support_heartbeat: Option<DurationText>,
    /// [`MultiRaftConfig::support_duration_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support_duration: Option<DurationText>,
    /// [`MultiRaftConfig::lease_rebalancing`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_rebalancing: Option<bool>,
    /// [`MultiRaftConfig::scan_interval_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_interval: Option<DurationText>,
    /// [`MultiRaftConfig::min_lease_transfer_interval_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_lease_transfer_interval: Option<DurationText>,
    /// [`MultiRaftConfig::variant`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<MultiRaftVariant>,
}

/// A rule the settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MultiRaftError {
    /// A rule shared with other algorithms (a timing of a day at most).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// No ranges, or more than [`MAX_RANGES`].
    #[error("ranges is {ranges}; give between 1 and {MAX_RANGES}")]
    RangesOutOfBounds {
        /// The number written.
        ranges: u64,
    },
    /// An even, zero or too large replication factor.
    #[error("replication is {replication}; it must be odd, from 1 to {MAX_REPLICATION}")]
    BadReplication {
        /// The factor written.
        replication: u64,
    },
    /// More replicas per range than stores.
    #[error("replication {replication} needs at least as many nodes, the scenario has {nodes}")]
    ReplicationAboveNodes {
        /// The factor written.
        replication: u64,
        /// The scenario's nodes.
        nodes: u64,
    },
    /// A zero tick: every replica would tick again at the same instant, for ever.
    #[error("the Raft tick must be longer than zero")]
    ZeroTick,
    /// A tick count of zero or above [`MAX_TICKS`].
    #[error("{field} is {ticks}; give between 1 and {MAX_TICKS} ticks")]
    TicksOutOfBounds {
        /// The setting.
        field: &'static str,
        /// The number written.
        ticks: u64,
    },
    /// An election timeout no longer than the heartbeat interval: followers would campaign
    /// against a live leader.
    #[error("election_ticks ({election}) must be above heartbeat_ticks ({heartbeat})")]
    ElectionNotAboveHeartbeat {
        /// The election timeout, in ticks.
        election: u64,
        /// The heartbeat interval, in ticks.
        heartbeat: u64,
    },
    /// Store-liveness support no longer than the interval between its requests.
    #[error(transparent)]
    SupportNotAboveHeartbeat(#[from] SupportNotAboveHeartbeat),
    /// A lease whose renewal half is no longer than the maximum clock offset: an extension
    /// would reach the holder after the lease became unusable.
    #[error(
        "the lease ({}) must be longer than twice the maximum clock offset ({})",
        dur(.lease_duration_ns),
        dur(.max_offset_ns)
    )]
    LeaseNotAboveOffset {
        /// The lease duration.
        lease_duration_ns: u64,
        /// The maximum clock offset.
        max_offset_ns: u64,
    },
}

/// Store liveness' rule: support must outlast the interval at which it is asked for, or
/// every store would lose its support between two requests.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error(
    "store-liveness support ({}) must last longer than the interval between requests ({})",
    dur(.support_duration_ns),
    dur(.support_heartbeat_ns)
)]
pub struct SupportNotAboveHeartbeat {
    /// `support_duration`.
    pub support_duration_ns: u64,
    /// `support_heartbeat`.
    pub support_heartbeat_ns: u64,
}

impl SettingError for MultiRaftError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            MultiRaftError::Common(rule) => return rule.hint(),
            MultiRaftError::RangesOutOfBounds { .. } => {
                "CockroachDB's allocator simulator runs 7 nodes with 700 ranges; the scale \
                 benchmark 10,000"
            }
            MultiRaftError::BadReplication { .. }
            | MultiRaftError::ReplicationAboveNodes { .. } => {
                "CockroachDB replicates user ranges 3 ways and system ranges 5 ways, each \
                 replica on a different node"
            }
            MultiRaftError::ZeroTick => "CockroachDB ticks every \"500ms\" (RaftTickInterval)",
            MultiRaftError::TicksOutOfBounds { .. }
            | MultiRaftError::ElectionNotAboveHeartbeat { .. } => {
                "CockroachDB heartbeats every 2 ticks and campaigns after 4 to 8"
            }
            MultiRaftError::LeaseNotAboveOffset { .. } => {
                "CockroachDB leases last \"6s\" with a maximum clock offset of \"500ms\""
            }
            MultiRaftError::SupportNotAboveHeartbeat(_) => {
                "CockroachDB asks for support every \"1s\" and gets it for \"3s\""
            }
        };
        Some(hint.to_string())
    }
}

/// Checks the counts: ranges, replication and ticks.
fn count_problems(config: &MultiRaftConfig, cluster: &Cluster) -> Vec<Problem<MultiRaftError>> {
    let mut problems = Vec::new();
    let mut problem = |field, error| problems.push(Problem { field, error });
    if !(1..=MAX_RANGES).contains(&config.ranges) {
        let ranges = config.ranges;
        problem("ranges", MultiRaftError::RangesOutOfBounds { ranges });
    }
    let replication = config.replication;
    if replication.is_multiple_of(2) || replication > MAX_REPLICATION {
        problem(
            "replication",
            MultiRaftError::BadReplication { replication },
        );
    } else if replication > cluster.nodes {
        let nodes = cluster.nodes;
        problem(
            "replication",
            MultiRaftError::ReplicationAboveNodes { replication, nodes },
        );
    }
    for (field, ticks) in [
        ("heartbeat_ticks", config.heartbeat_ticks),
        ("election_ticks", config.election_ticks),
    ] {
        if !(1..=MAX_TICKS).contains(&ticks) {
            problem(field, MultiRaftError::TicksOutOfBounds { field, ticks });
        }
    }
    if config.heartbeat_ticks >= 1 && config.election_ticks <= config.heartbeat_ticks {
        let error = MultiRaftError::ElectionNotAboveHeartbeat {
            election: config.election_ticks,
            heartbeat: config.heartbeat_ticks,
        };
        problem("election_ticks", error);
    }
    problems
}

/// Checks the timings: the tick, the lease and the clock offset.
fn timing_problems(
    config: &MultiRaftConfig,
    lease_field: &'static str,
) -> Vec<Problem<MultiRaftError>> {
    let mut problems = Vec::new();
    if config.tick_ns == 0 {
        problems.push(Problem {
            field: "tick",
            error: MultiRaftError::ZeroTick,
        });
    }
    if config.support_heartbeat_ns == 0 {
        problems.push(Problem {
            field: "support_heartbeat",
            error: CommonRule::ZeroHeartbeat.into(),
        });
    } else if config.support_duration_ns <= config.support_heartbeat_ns {
        let error = SupportNotAboveHeartbeat {
            support_duration_ns: config.support_duration_ns,
            support_heartbeat_ns: config.support_heartbeat_ns,
        };
        problems.push(Problem {
            field: "support_duration",
            error: error.into(),
        });
    }
    for (field, ns) in [
        ("tick", config.tick_ns),
        ("lease_duration", config.lease_duration_ns),
        ("max_offset", config.max_offset_ns),
        ("support_heartbeat", config.support_heartbeat_ns),
        ("support_duration", config.support_duration_ns),
        ("scan_interval", config.scan_interval_ns),
        (
            "min_lease_transfer_interval",
            config.min_lease_transfer_interval_ns,
        ),
    ] {
        problems.extend(at_most_a_day(ns, field).map(|p| Problem {
            field: p.field,
            error: p.error.into(),
        }));
    }
    if config.lease_duration_ns <= config.max_offset_ns.saturating_mul(2) {
        let error = MultiRaftError::LeaseNotAboveOffset {
            lease_duration_ns: config.lease_duration_ns,
            max_offset_ns: config.max_offset_ns,
        };
        problems.push(Problem {
            field: lease_field,
            error,
        });
    }
    problems
}

impl Algorithm for MultiRaft {
    const NAME: &'static str = "multi-raft";
    const SCENARIO_NAME: &'static str = "MultiRaft";
    const SUMMARY: &'static str =
        "CockroachDB-style ranges: one Raft group per range on shared stores, coalesced \
         heartbeats, leader leases on store liveness, epoch leases on node liveness or \
         expiration-based leases, count-based lease rebalancing by lease transfers; \
         per-range election safety, lease disjointness and fencing; variants EarlyLease \
         and ReusedSequence are broken on purpose";
    const SENDS_TO_EVERY_MEMBER: bool = true;
    // `Resign` is not wired to a lease transfer (transfers come from lease rebalancing).
    const RESIGNS: bool = false;
    // No knob has the same idea as another algorithm's `heartbeat`: the tick drives
    // heartbeats and elections alike.
    const KNOBS: &'static [Knob] = &[
        Knob {
            name: "tick",
            shape: KnobShape::Duration,
            example: "500ms",
        },
        // `lease` is every algorithm's knob for its lease's length (etcd's ttl, the
        // Kubernetes lease_duration): here `lease_duration`, which expiration leases use.
        Knob {
            name: "lease",
            shape: KnobShape::Duration,
            example: "6s",
        },
    ];

    type Settings = MultiRaftSettings;
    type Config = MultiRaftConfig;
    type Error = MultiRaftError;

    fn lower(
        settings: MultiRaftSettings,
        cluster: &Cluster,
    ) -> Lowered<MultiRaftConfig, MultiRaftError> {
        let defaults = MultiRaftConfig::default();
        let lease_field = if settings.max_offset.is_some() && settings.lease_duration.is_none() {
            "max_offset"
        } else {
            "lease_duration"
        };
        let config = MultiRaftConfig {
            ranges: settings.ranges.unwrap_or(defaults.ranges),
            replication: settings.replication.unwrap_or(defaults.replication),
            tick_ns: ns_or(settings.tick, defaults.tick_ns),
            heartbeat_ticks: settings.heartbeat_ticks.unwrap_or(defaults.heartbeat_ticks),
            election_ticks: settings.election_ticks.unwrap_or(defaults.election_ticks),
            lease: settings.lease.unwrap_or(defaults.lease),
            lease_duration_ns: ns_or(settings.lease_duration, defaults.lease_duration_ns),
            max_offset_ns: ns_or(settings.max_offset, defaults.max_offset_ns),
            support_heartbeat_ns: ns_or(settings.support_heartbeat, defaults.support_heartbeat_ns),
            support_duration_ns: ns_or(settings.support_duration, defaults.support_duration_ns),
            lease_rebalancing: (settings.lease_rebalancing).unwrap_or(defaults.lease_rebalancing),
            scan_interval_ns: ns_or(settings.scan_interval, defaults.scan_interval_ns),
            min_lease_transfer_interval_ns: ns_or(
                settings.min_lease_transfer_interval,
                defaults.min_lease_transfer_interval_ns,
            ),
            variant: settings.variant.unwrap_or(defaults.variant),
        };
        let mut problems = count_problems(&config, cluster);
        problems.extend(timing_problems(&config, lease_field));
        (config, problems)
    }

    fn settings(config: &MultiRaftConfig) -> MultiRaftSettings {
        MultiRaftSettings {
            ranges: Some(config.ranges),
            replication: Some(config.replication),
            tick: Some(DurationText(config.tick_ns)),
            heartbeat_ticks: Some(config.heartbeat_ticks),
            election_ticks: Some(config.election_ticks),
            lease: Some(config.lease),
            lease_duration: Some(DurationText(config.lease_duration_ns)),
            max_offset: Some(DurationText(config.max_offset_ns)),
            support_heartbeat: Some(DurationText(config.support_heartbeat_ns)),
            support_duration: Some(DurationText(config.support_duration_ns)),
            lease_rebalancing: Some(config.lease_rebalancing),
            scan_interval: Some(DurationText(config.scan_interval_ns)),
            min_lease_transfer_interval: Some(DurationText(config.min_lease_transfer_interval_ns)),
            variant: Some(config.variant),
        }
    }

    fn info(config: &MultiRaftConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &MultiRaftConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("tick", config.tick_ns),
            ("lease_duration", config.lease_duration_ns),
            ("max_offset", config.max_offset_ns),
            ("support_heartbeat", config.support_heartbeat_ns),
            ("support_duration", config.support_duration_ns),
            ("scan_interval", config.scan_interval_ns),
            (
                "min_lease_transfer_interval",
                config.min_lease_transfer_interval_ns,
            ),
        ]
    }

    fn shortest_timing(config: &MultiRaftConfig) -> (&'static str, Nanos) {
        ("tick", config.tick_ns.max(1))
    }

    fn heartbeat_ns(config: &MultiRaftConfig) -> Nanos {
        config.heartbeat_ticks.saturating_mul(config.tick_ns)
    }

    fn campaign_timeout_ns(config: &MultiRaftConfig) -> Nanos {
        config.election_ticks.saturating_mul(config.tick_ns)
    }

    fn for_members(config: &MultiRaftConfig, members: usize) -> Option<MultiRaftConfig> {
        (config.replication as usize <= members).then(|| config.clone())
    }

    fn vary(
        config: &MultiRaftConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<MultiRaftConfig, Problem<MultiRaftError>> {
        let mut settings = Self::settings(config);
        match (name, value) {
            ("tick", KnobValue::Duration(ns)) => settings.tick = Some(DurationText(ns)),
            ("lease", KnobValue::Duration(ns)) => {
                settings.lease_duration = Some(DurationText(ns));
            }
            _ => return Err(unknown_knob(name, MultiRaftError::Common)),
        }
        lower_checked::<Self>(settings, cluster)
    }

    /// The per-range safety properties, and the blast radius measured beside them.
    fn properties(config: &MultiRaftConfig) -> splitbrain_sim::Properties {
        let ranges = usize::try_from(config.ranges).unwrap_or(usize::MAX);
        properties::properties().with(std::sync::Arc::new(move || {
            Box::new(super::blast::BlastRadius::new(ranges))
        }))
    }

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<Store>().messages)
    }

    fn run(
        config: &MultiRaftConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        run_members(sim, info, options, |id, members| {
            Store::new(id, members, config)
        })
    }
}
