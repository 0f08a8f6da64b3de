//! etcd as a scenario writes it (`algorithm: Etcd(ttl: "2s", ...)`): the settings, their
//! rules, writing them back, and the knobs `sweep` varies.

use super::config::{min_ttl_for, LESSOR_SWEEP_NS};
use super::{info, EtcdClientKind, EtcdConfig, EtcdProcess, EtcdVariant, EtcdVersion};
use crate::algorithm::{
    lower_checked, run_processes, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{at_most_a_day, dur, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// etcd leases and the election recipe; see the module doc of [`super`].
pub struct Etcd;

/// etcd's settings as written. Left out: the TTL, election timeout, variant and client take
/// [`EtcdConfig::default`], the minimum TTL derives from the election timeout as etcd's does,
/// and the keep-alive is a third of the granted TTL.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EtcdSettings {
    /// [`EtcdConfig::ttl_ns`]: the TTL a client asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<DurationText>,
    /// [`EtcdConfig::min_ttl_ns`]: the service's minimum TTL (not an etcd flag: etcd derives
    /// it from the election timeout; written, it overrides that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ttl: Option<DurationText>,
    /// [`EtcdConfig::election_timeout_ns`]: the server's `--election-timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub election_timeout: Option<DurationText>,
    /// [`EtcdConfig::keepalive_ns`]: the keep-alive and retry interval (TTL/3 if left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keepalive: Option<DurationText>,
    /// [`EtcdConfig::variant`]: the recipe or an unsafe variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<EtcdVariant>,
    /// [`EtcdConfig::client`]: etcd's Go client or the careful send-time one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<EtcdClientKind>,
    /// [`EtcdConfig::lessor_phase_ns`]: when the lessor's 500 ms sweeps fall, from the
    /// service's start (drawn per run if left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lessor_phase: Option<DurationText>,
    /// [`EtcdConfig::members`]: how many etcd members (odd, 1 to 7; 1 or left out: the
    /// single service process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<usize>,
    /// [`EtcdConfig::version`]: `"3.4"` (3.4.23, the default) or `"3.5"` (3.5.16 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// [`EtcdConfig::write_every_ns`]: a cluster's write load of other keys, one put every
    /// this often (left out: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_every: Option<DurationText>,
}

/// A rule etcd's settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EtcdError {
    /// A rule etcd shares with other algorithms (a day at most).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// A TTL of zero: a lease would expire as it is granted.
    #[error("the lease TTL must be longer than zero")]
    ZeroTtl,
    /// An election timeout shorter than etcd's heartbeat interval (100 ms).
    #[error("the election timeout {} is shorter than etcd's heartbeat interval 100ms", dur(.election_timeout_ns))]
    ElectionTimeoutBelowHeartbeat {
        /// The election timeout, in nanoseconds.
        election_timeout_ns: u64,
    },
    /// A keep-alive interval of zero (the timer would fire at one instant for ever), or not
    /// below the granted TTL (the lease would lapse between keep-alives).
    #[error("the keep-alive interval {} must be above zero and below the granted TTL {}", dur(.keepalive_ns), dur(.ttl_ns))]
    KeepaliveNotBelowTtl {
        /// The keep-alive interval, in nanoseconds of the client's clock.
        keepalive_ns: u64,
        /// The granted TTL (the TTL raised to the minimum), in nanoseconds.
        ttl_ns: u64,
    },
    /// A lessor phase at or beyond the sweep interval: the phase is a point within one.
    #[error("the lessor phase {} must be below the lessor's sweep interval {}", dur(.lessor_phase_ns), dur(&LESSOR_SWEEP_NS))]
    LessorPhaseNotBelowSweep {
        /// The phase, in nanoseconds of the service's clock.
        lessor_phase_ns: u64,
    },
    /// An etcd cluster of an even size, of none, or of more than 7 members.
    #[error("an etcd cluster has an odd number of members from 1 to 7, not {members}")]
    MembersNotOdd {
        /// The count written.
        members: usize,
    },
    /// A version the model does not know.
    #[error("unknown etcd version {version:?}: \"3.4\" or \"3.5\"")]
    UnknownVersion {
        /// The version written.
        version: String,
    },
    /// The SetNx variant models Redis, not etcd: it has no cluster mode.
    #[error("the SetNx variant runs against one service process only (members: 1)")]
    SetNxInCluster,
    /// A write load on the single service process, or one put every zero seconds.
    #[error("a write load needs a cluster (members > 1) and an interval above zero")]
    WriteLoadNotInCluster,
    /// A setting only a cluster uses (`version`: its members' Raft), written for the single
    /// service process, which would ignore it.
    #[error(
        "`{field}` is a setting of an etcd cluster, and the single service process ignores it"
    )]
    ClusterOnly {
        /// The setting written.
        field: &'static str,
    },
}

impl SettingError for EtcdError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            EtcdError::Common(rule) => return rule.hint(),
            EtcdError::ZeroTtl => {
                "a lease with no TTL expires as it is granted; etcd's clients use seconds"
            }
            EtcdError::ElectionTimeoutBelowHeartbeat { .. } => {
                "etcd's election timeout counts heartbeats of 100ms; its default is 1s"
            }
            EtcdError::KeepaliveNotBelowTtl { .. } => {
                "etcd's clients keep a lease alive a third of the granted TTL after each answer \
                 (the default when `keepalive` is left out); a keep-alive at or after the TTL \
                 lets the lease lapse"
            }
            EtcdError::LessorPhaseNotBelowSweep { .. } => {
                "the lessor sweeps every 500ms; the phase says where in that interval the sweeps \
                 fall (leave it out to draw it per run, as a real server's start time would)"
            }
            EtcdError::MembersNotOdd { .. } => {
                "etcd clusters run 1, 3, 5 or 7 members (a majority of an even count tolerates \
                 no more failures than the odd count below it)"
            }
            EtcdError::UnknownVersion { .. } => {
                "\"3.4\" is 3.4.23 (pre-vote off, no ensureLeadership); \"3.5\" is 3.5.16 or \
                 later (pre-vote on, ensureLeadership on renew and revoke)"
            }
            EtcdError::SetNxInCluster => "leave `members` out, or use the Revision recipe",
            EtcdError::WriteLoadNotInCluster => {
                "the load is what a cluster's leader writes to its WAL (`write_every: \"20ms\"` \
                 with `members: 3`); the single process has no WAL"
            }
            EtcdError::ClusterOnly { field } => {
                return Some(format!(
                    "write `members: 3` to run an etcd cluster, or leave `{field}` out"
                ))
            }
        };
        Some(hint.to_string())
    }
}

impl Etcd {
    /// Validates `settings` by etcd's own rules and fills in the defaults. A version is
    /// taken for any member count: the etcd behind the Kubernetes API servers runs Raft even
    /// with one member.
    pub(crate) fn lower_rules(settings: EtcdSettings) -> Lowered<EtcdConfig, EtcdError> {
        let defaults = EtcdConfig::default();
        let ttl_ns = ns_or(settings.ttl, defaults.ttl_ns);
        let election_timeout_ns = ns_or(settings.election_timeout, defaults.election_timeout_ns);
        // etcd's minimum TTL follows its election timeout; a TTL below it is raised silently.
        let min_ttl_ns = ns_or(settings.min_ttl, min_ttl_for(election_timeout_ns));
        let granted_ns = ttl_ns.max(min_ttl_ns);
        let keepalive_ns = ns_or(settings.keepalive, granted_ns / 3);
        let config = EtcdConfig {
            ttl_ns,
            min_ttl_ns,
            election_timeout_ns,
            keepalive_ns,
            variant: settings.variant.unwrap_or(defaults.variant),
            client: settings.client.unwrap_or(defaults.client),
            lessor_phase_ns: settings.lessor_phase.map(|phase| phase.0),
            members: settings.members.unwrap_or(1),
            version: defaults.version,
            write_every_ns: settings.write_every.map(|every| every.0),
        };
        let mut config = config;
        if let Some(name) = settings.version.as_deref() {
            match EtcdVersion::from_name(name) {
                Some(version) => config.version = version,
                None => {
                    let error = EtcdError::UnknownVersion {
                        version: name.to_string(),
                    };
                    return (
                        config,
                        vec![Problem {
                            field: "version",
                            error,
                        }],
                    );
                }
            }
        }
        let keepalive_field = if settings.keepalive.is_some() {
            "keepalive"
        } else {
            "ttl"
        };
        let problem = Self::first_broken_rule(&config, keepalive_field);
        let problems = problem.map(|(field, error)| Problem { field, error });
        (config, problems.into_iter().collect())
    }

    /// The first rule `config` breaks, with the field to blame (`keepalive_field`: the
    /// keep-alive as written, or the TTL it was derived from).
    fn first_broken_rule(
        config: &EtcdConfig,
        keepalive_field: &'static str,
    ) -> Option<(&'static str, EtcdError)> {
        let day = |ns, field| at_most_a_day(ns, field).map(|p| (p.field, p.error.into()));
        if config.ttl_ns == 0 {
            return Some(("ttl", EtcdError::ZeroTtl));
        }
        if let Some(problem) = day(config.ttl_ns, "ttl")
            .or_else(|| day(config.min_ttl_ns, "min_ttl"))
            .or_else(|| day(config.election_timeout_ns, "election_timeout"))
        {
            return Some(problem);
        }
        if config.election_timeout_ns < super::config::ETCD_HEARTBEAT_NS {
            let error = EtcdError::ElectionTimeoutBelowHeartbeat {
                election_timeout_ns: config.election_timeout_ns,
            };
            return Some(("election_timeout", error));
        }
        if config.members == 0 || config.members.is_multiple_of(2) || config.members > 7 {
            let error = EtcdError::MembersNotOdd {
                members: config.members,
            };
            return Some(("members", error));
        }
        if config.members > 1 && config.variant == EtcdVariant::SetNx {
            return Some(("variant", EtcdError::SetNxInCluster));
        }
        if let Some(every_ns) = config.write_every_ns {
            if let Some(problem) = day(every_ns, "write_every") {
                return Some(problem);
            }
            if config.members <= 1 || every_ns == 0 {
                return Some(("write_every", EtcdError::WriteLoadNotInCluster));
            }
        }
        if let Some(lessor_phase_ns) = config.lessor_phase_ns.filter(|&ns| ns >= LESSOR_SWEEP_NS) {
            let error = EtcdError::LessorPhaseNotBelowSweep { lessor_phase_ns };
            return Some(("lessor_phase", error));
        }
        let granted_ns = config.granted_ttl_ns();
        (config.keepalive_ns == 0 || config.keepalive_ns >= granted_ns).then_some((
            keepalive_field,
            EtcdError::KeepaliveNotBelowTtl {
                keepalive_ns: config.keepalive_ns,
                ttl_ns: granted_ns,
            },
        ))
    }
}

/// The knob `service_election_timeout`: an etcd cluster's election timeout (here, and for the
/// Kubernetes Lease's etcd).
pub(crate) const SERVICE_ELECTION_TIMEOUT: Knob = Knob {
    name: "service_election_timeout",
    shape: KnobShape::Duration,
    example: "500ms,1s,2s",
};

impl Algorithm for Etcd {
    const NAME: &'static str = "etcd";
    const SCENARIO_NAME: &'static str = "Etcd";
    // Its processes report nothing of their own: guided search need not watch its runs.
    const OBSERVES: bool = false;
    const SUMMARY: &'static str =
        "etcd leases (TTL, keep-alives, expiry on the service clock) and the concurrency.Election \
         recipe (lowest create revision leads, watch the predecessor, revision as fencing token); \
         variants WallClockToken and SetNx are unsafe on purpose";
    const HAS_SERVICE: bool = true;
    const SERVICE_NAME: &'static str = "etcd";
    const STREAM_BY_DEFAULT: bool = true;
    const KNOBS: &'static [Knob] = &[
        Knob {
            name: "lease",
            shape: KnobShape::Duration,
            example: "1s,2s",
        },
        SERVICE_ELECTION_TIMEOUT,
    ];

    type Settings = EtcdSettings;
    type Config = EtcdConfig;
    type Error = EtcdError;

    /// etcd's rules (`Etcd::lower_rules`), and a cluster's setting written for the single
    /// service process refused rather than ignored.
    fn lower(settings: EtcdSettings, _cluster: &Cluster) -> Lowered<EtcdConfig, EtcdError> {
        // The single process runs no Raft, so no version applies to it.
        let version_alone = settings.version.is_some() && settings.members.unwrap_or(1) == 1;
        let (config, mut problems) = Self::lower_rules(settings);
        if version_alone && !problems.iter().any(|p| p.field == "version") {
            let error = EtcdError::ClusterOnly { field: "version" };
            problems.push(Problem {
                field: "version",
                error,
            });
        }
        (config, problems)
    }

    fn settings(config: &EtcdConfig) -> EtcdSettings {
        EtcdSettings {
            ttl: Some(DurationText(config.ttl_ns)),
            min_ttl: Some(DurationText(config.min_ttl_ns)),
            election_timeout: Some(DurationText(config.election_timeout_ns)),
            keepalive: Some(DurationText(config.keepalive_ns)),
            variant: Some(config.variant),
            client: Some(config.client),
            lessor_phase: config.lessor_phase_ns.map(DurationText),
            members: (config.members > 1).then_some(config.members),
            // Only a cluster takes a version (see `EtcdError::ClusterOnly`).
            version: (config.members > 1 && config.version != EtcdVersion::default())
                .then(|| config.version.name().to_string()),
            write_every: config.write_every_ns.map(DurationText),
        }
    }

    fn info(config: &EtcdConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    /// One process for the single service, `members` for a cluster.
    fn service_processes(config: &EtcdConfig) -> usize {
        config.members.max(1)
    }

    fn timings(config: &EtcdConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("keepalive", config.keepalive_ns),
            ("ttl", config.ttl_ns),
            ("min_ttl", config.min_ttl_ns),
            ("election_timeout", config.election_timeout_ns),
        ]
    }

    /// etcd's lessor raises a TTL below the minimum (`Grant`: `if l.ttl < le.minLeaseTTL`)
    /// without a word to the client; the model does the same, and says so here.
    fn adjustments(config: &EtcdConfig) -> Vec<String> {
        if config.granted_ttl_ns() == config.ttl_ns {
            return Vec::new();
        }
        vec![format!(
            "ttl {} is raised to the minimum TTL {} (etcd's lessor: 3/2 of the election \
             timeout, in whole seconds); lower `election_timeout` for a shorter lease",
            dur(&config.ttl_ns),
            dur(&config.granted_ttl_ns()),
        )]
    }

    fn heartbeat_ns(config: &EtcdConfig) -> Nanos {
        config.keepalive_ns
    }

    /// `lease` sets the TTL; the keep-alive keeps its ratio to it. The minimum TTL stays: a
    /// `lease` below it is granted the minimum, as etcd does. `service_election_timeout` sets the
    /// server's election timeout (a cluster's Raft timings, Promote's extension) and the
    /// minimum TTL derived from it, as etcd derives it.
    fn vary(
        config: &EtcdConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<EtcdConfig, Problem<EtcdError>> {
        let KnobValue::Duration(value_ns) = value else {
            return Err(unknown_knob(name, EtcdError::Common));
        };
        if name == "service_election_timeout" {
            let mut settings = Self::settings(config);
            settings.election_timeout = Some(DurationText(value_ns));
            settings.min_ttl = None;
            return lower_checked::<Self>(settings, cluster);
        }
        if name != "lease" {
            return Err(unknown_knob(name, EtcdError::Common));
        }
        let lease_ns = value_ns;
        let mut settings = Self::settings(config);
        let keepalive_ns = crate::rules::scaled(config.keepalive_ns, config.ttl_ns, lease_ns);
        settings.keepalive = Some(DurationText(keepalive_ns));
        settings.ttl = Some(DurationText(lease_ns));
        lower_checked::<Self>(settings, cluster)
    }

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<EtcdProcess>().messages)
    }

    fn run(
        config: &EtcdConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        // The members campaign; the service is one more process, id `members`.
        let processes = super::processes(sim.members, config);
        run_processes(sim, info, processes, options)
    }
}
