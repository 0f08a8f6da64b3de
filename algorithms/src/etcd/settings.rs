//! etcd as a scenario writes it (`algorithm: Etcd(ttl: "2s", ...)`): the settings, their
//! rules, writing them back, and the knobs `sweep` varies.

use super::{info, EtcdConfig, EtcdProcess, EtcdVariant};
use crate::algorithm::{
    lower_checked, run_processes, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::rules::{at_most_a_day, dur, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunReport, SimConfig};
use thiserror::Error;

/// etcd leases and the election recipe; see the module doc of [`super`].
pub struct Etcd;

/// etcd's settings as written. Left out: the TTL and minimum TTL take
/// [`EtcdConfig::default`] (the minimum never above the TTL), the keep-alive TTL/3.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EtcdSettings {
    /// [`EtcdConfig::ttl_ns`]: the TTL a client asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<DurationText>,
    /// [`EtcdConfig::min_ttl_ns`]: the service's minimum TTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ttl: Option<DurationText>,
    /// [`EtcdConfig::keepalive_ns`]: the keep-alive and retry interval (TTL/3 if left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keepalive: Option<DurationText>,
    /// [`EtcdConfig::variant`]: the recipe or an unsafe variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<EtcdVariant>,
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
    /// A TTL the service would raise to its minimum without saying so.
    #[error("the TTL {} is below the service's minimum TTL {}", dur(.ttl_ns), dur(.min_ttl_ns))]
    TtlBelowMinTtl {
        /// The TTL clients ask for, in nanoseconds.
        ttl_ns: u64,
        /// The service's minimum TTL, in nanoseconds.
        min_ttl_ns: u64,
    },
    /// A keep-alive interval of zero (the timer would fire at one instant for ever), or not
    /// below the TTL (the lease would lapse between keep-alives).
    #[error("the keep-alive interval {} must be above zero and below the TTL {}", dur(.keepalive_ns), dur(.ttl_ns))]
    KeepaliveNotBelowTtl {
        /// The keep-alive interval, in nanoseconds of the client's clock.
        keepalive_ns: u64,
        /// The TTL, in nanoseconds.
        ttl_ns: u64,
    },
}

impl SettingError for EtcdError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            EtcdError::Common(rule) => return rule.hint(),
            EtcdError::ZeroTtl => {
                "a lease with no TTL expires as it is granted; etcd's clients use seconds"
            }
            EtcdError::TtlBelowMinTtl { .. } => {
                "etcd raises a TTL below its minimum silently; write the TTL you mean, at or above \
                 `min_ttl`, or lower `min_ttl`"
            }
            EtcdError::KeepaliveNotBelowTtl { .. } => {
                "etcd's clients keep a lease alive every TTL/3 (the default when `keepalive` is \
                 left out); a keep-alive at or after the TTL lets the lease lapse"
            }
        };
        Some(hint.to_string())
    }
}

impl Algorithm for Etcd {
    const NAME: &'static str = "etcd";
    const SUMMARY: &'static str =
        "etcd leases (TTL, keep-alives, expiry on the service clock) and the concurrency.Election \
         recipe (lowest create revision leads, watch the predecessor, revision as fencing token); \
         variants WallClockToken and SetNx are unsafe on purpose";
    const HAS_SERVICE: bool = true;
    const KNOBS: &'static [Knob] = &[Knob {
        name: "lease",
        shape: KnobShape::Duration,
        example: "1s,2s",
    }];

    type Settings = EtcdSettings;
    type Config = EtcdConfig;
    type Error = EtcdError;

    fn lower(settings: EtcdSettings, _cluster: &Cluster) -> Lowered<EtcdConfig, EtcdError> {
        let defaults = EtcdConfig::default();
        let ttl_ns = ns_or(settings.ttl, defaults.ttl_ns);
        let min_ttl_ns = ns_or(settings.min_ttl, defaults.min_ttl_ns.min(ttl_ns));
        // etcd's clients keep alive every TTL/3.
        let keepalive_ns = ns_or(settings.keepalive, ttl_ns / 3);
        let written_or_ttl = |written: bool, field| if written { field } else { "ttl" };
        let problem = if ttl_ns == 0 {
            Some(("ttl", EtcdError::ZeroTtl))
        } else if let Some(p) = at_most_a_day(ttl_ns, "ttl") {
            Some((p.field, p.error.into()))
        } else if ttl_ns < min_ttl_ns {
            let field = written_or_ttl(settings.min_ttl.is_some(), "min_ttl");
            Some((field, EtcdError::TtlBelowMinTtl { ttl_ns, min_ttl_ns }))
        } else if keepalive_ns == 0 || keepalive_ns >= ttl_ns {
            let field = written_or_ttl(settings.keepalive.is_some(), "keepalive");
            let error = EtcdError::KeepaliveNotBelowTtl {
                keepalive_ns,
                ttl_ns,
            };
            Some((field, error))
        } else {
            None
        };
        let config = EtcdConfig {
            ttl_ns,
            min_ttl_ns,
            keepalive_ns,
            variant: settings.variant.unwrap_or(defaults.variant),
        };
        let problems = problem.map(|(field, error)| Problem { field, error });
        (config, problems.into_iter().collect())
    }

    fn settings(config: &EtcdConfig) -> EtcdSettings {
        EtcdSettings {
            ttl: Some(DurationText(config.ttl_ns)),
            min_ttl: Some(DurationText(config.min_ttl_ns)),
            keepalive: Some(DurationText(config.keepalive_ns)),
            variant: Some(config.variant),
        }
    }

    fn info(config: &EtcdConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &EtcdConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("keepalive", config.keepalive_ns),
            ("ttl", config.ttl_ns),
            ("min_ttl", config.min_ttl_ns),
        ]
    }

    fn heartbeat_ns(config: &EtcdConfig) -> Nanos {
        config.keepalive_ns
    }

    /// `lease` sets the TTL; the keep-alive keeps its ratio to it, and the minimum TTL is
    /// lowered to it if it was above.
    fn vary(
        config: &EtcdConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<EtcdConfig, Problem<EtcdError>> {
        let (Some(knob), KnobValue::Duration(lease_ns)) = (Self::KNOBS.first(), value) else {
            return Err(unknown_knob(name, EtcdError::Common));
        };
        if name != knob.name {
            return Err(unknown_knob(name, EtcdError::Common));
        }
        let mut settings = Self::settings(config);
        let keepalive_ns = crate::rules::scaled(config.keepalive_ns, config.ttl_ns, lease_ns);
        settings.keepalive = Some(DurationText(keepalive_ns));
        settings.min_ttl = Some(DurationText(config.min_ttl_ns.min(lease_ns)));
        settings.ttl = Some(DurationText(lease_ns));
        lower_checked::<Self>(settings, cluster)
    }

    fn run(
        config: &EtcdConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> RunReport {
        // The members campaign; the service is one more process, id `members`.
        let processes = EtcdProcess::cluster(sim.members, config);
        run_processes(sim, info, processes, options)
    }
}
