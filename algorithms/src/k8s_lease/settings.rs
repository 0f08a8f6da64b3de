//! The Kubernetes Lease as a scenario writes it (`algorithm: K8sLease(lease_duration: "15s",
//! ...)`): the settings, their rules (client-go's), writing them back, and the knobs `sweep`
//! varies.

use super::{info, K8sConfig, K8sProcess, K8sRules, K8sVariant};
use crate::algorithm::{
    lower_checked, run_processes, Algorithm, Cluster, Knob, KnobShape, KnobValue, Lowered, Problem,
    SettingError,
};
use crate::etcd::{Etcd, EtcdConfig, EtcdError, EtcdSettings};
use crate::rules::{at_most_a_day, dur, ns_or, scaled, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};
use thiserror::Error;

/// The Kubernetes Lease lock; see the module doc of [`super`].
pub struct K8sLease;

/// The Kubernetes Lease settings as written. All left out, client-go's defaults (15s, 10s, 2s,
/// [`K8sConfig::default`]); a lease duration written without the others, the renew deadline
/// is 2/3 of it and the retry period 1/5 of the renew deadline (the defaults' ratios).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct K8sSettings {
    /// [`K8sConfig::lease_duration_ns`]: how long an unchanged record takes to look free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration: Option<DurationText>,
    /// [`K8sConfig::renew_deadline_ns`]: how long the leader leads without a renewal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_deadline: Option<DurationText>,
    /// [`K8sConfig::retry_period_ns`]: the renewal and polling interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_period: Option<DurationText>,
    /// [`K8sConfig::variant`]: client-go's Lease or a database row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<K8sVariant>,
    /// [`K8sConfig::rules`]: client-go's timing rules (the default) or the stricter ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<K8sRules>,
    /// How many etcd members store the Lease behind the API servers (odd, 1 to 7; left
    /// out: one modeled API server holds the record itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd_members: Option<usize>,
    /// [`K8sConfig::apiservers`]: how many API servers front the etcd cluster (1 to 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apiservers: Option<usize>,
    /// The etcd cluster's version: `"3.4"` (the default) or `"3.5"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd_version: Option<String>,
    /// The etcd cluster's `--election-timeout` (etcd's default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etcd_election_timeout: Option<DurationText>,
}

/// A rule the Kubernetes Lease settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum K8sError {
    /// A rule the Lease lock shares with other algorithms (a day at most).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// A retry period of zero: candidates would poll at one instant for ever.
    #[error("the retry period must be longer than zero")]
    ZeroRetryPeriod,
    /// A renew deadline of 1.2 retry periods or less, which client-go refuses: the leader
    /// would get no second try at renewing.
    #[error(
        "the renew deadline {} must be longer than 1.2 retry periods ({})",
        dur(.renew_deadline_ns),
        dur(.retry_period_ns)
    )]
    RenewDeadlineNotAboveRetry {
        /// The renew deadline, in nanoseconds.
        renew_deadline_ns: u64,
        /// The retry period, in nanoseconds.
        retry_period_ns: u64,
    },
    /// A rule of the etcd cluster behind the API servers broke (its size, version or
    /// election timeout).
    #[error("etcd: {0}")]
    Etcd(EtcdError),
    /// A setting of the etcd-backed API servers without `etcd_members`.
    #[error("`{field}` needs an etcd cluster behind the API servers (`etcd_members`)")]
    EtcdOnly {
        /// The setting written.
        field: &'static str,
    },
    /// No API server, or more than 7.
    #[error("a cluster runs 1 to 7 API servers, not {apiservers}")]
    ApiServersOutOfRange {
        /// The count written.
        apiservers: usize,
    },
    /// The database-row variant on an etcd cluster.
    #[error("the DbRow variant runs against one database process, not an etcd cluster")]
    DbRowOnEtcd,
    /// A lease duration no longer than the renew deadline: candidates could take over while
    /// the leader still leads.
    #[error(
        "the lease duration {} must be longer than the renew deadline {}",
        dur(.lease_duration_ns),
        dur(.renew_deadline_ns)
    )]
    LeaseNotAboveRenewDeadline {
        /// The lease duration, in nanoseconds.
        lease_duration_ns: u64,
        /// The renew deadline, in nanoseconds.
        renew_deadline_ns: u64,
    },
}

impl SettingError for K8sError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            K8sError::Common(rule) => return rule.hint(),
            K8sError::Etcd(error) => return error.hint(),
            K8sError::EtcdOnly { .. } => {
                "write `etcd_members: 3` to run the API servers in front of an etcd cluster"
            }
            K8sError::ApiServersOutOfRange { .. } => "write 1 to 7 API servers",
            K8sError::DbRowOnEtcd => {
                "a database row is judged by the database's clock: leave `etcd_members` out, \
                 or use `variant: Lease`"
            }
            K8sError::ZeroRetryPeriod => {
                "candidates poll and the leader renews every retry period; client-go's default \
                 is 2s"
            }
            K8sError::RenewDeadlineNotAboveRetry { .. } => {
                "client-go refuses a renew deadline of 1.2 retry periods or less (its jitter \
                 factor): the leader must get more than one try before it gives up"
            }
            K8sError::LeaseNotAboveRenewDeadline { .. } => {
                "the leader stops at the renew deadline and candidates take over after the lease \
                 duration; the gap between them is the safety margin (client-go: 15s and 10s)"
            }
        };
        Some(hint.to_string())
    }
}

impl Algorithm for K8sLease {
    const NAME: &'static str = "k8s-lease";
    const SCENARIO_NAME: &'static str = "K8sLease";
    // Its processes report nothing of their own: guided search need not watch its runs.
    const OBSERVES: bool = false;
    const ALIASES: &'static [&'static str] = &["k8slease", "kubernetes"];
    const SUMMARY: &'static str =
        "Kubernetes Lease lock (client-go leaderelection): lease duration, renew deadline, retry \
         period, resourceVersion concurrency, expiry timed by each candidate's own sight of the \
         last change; variant DbRow, a database-row lease judged by the database's clock; \
         rules Strict, a renew deadline from the last renewal's send";
    const HAS_SERVICE: bool = true;
    const SERVICE_NAME: &'static str = "API server";
    const KNOBS: &'static [Knob] = &[
        Knob {
            name: "lease",
            shape: KnobShape::Duration,
            example: "1s,2s",
        },
        crate::etcd::SERVICE_ELECTION_TIMEOUT,
    ];

    type Settings = K8sSettings;
    type Config = K8sConfig;
    type Error = K8sError;

    /// The timings, checked as client-go checks them (`NewLeaderElector`). A timing left out
    /// derives from the next one up, so a problem is reported at the first one written.
    fn lower(settings: K8sSettings, _cluster: &Cluster) -> Lowered<K8sConfig, K8sError> {
        let defaults = K8sConfig::default();
        let lease_duration_ns = ns_or(settings.lease_duration, defaults.lease_duration_ns);
        let renew_deadline_ns = ns_or(settings.renew_deadline, lease_duration_ns / 3 * 2);
        let retry_period_ns = ns_or(settings.retry_period, renew_deadline_ns / 5);
        let written = [
            ("retry_period", settings.retry_period.is_some()),
            ("renew_deadline", settings.renew_deadline.is_some()),
            ("lease_duration", settings.lease_duration.is_some()),
        ];
        let from = |level: usize| {
            written[level..]
                .iter()
                .find(|(_, given)| *given)
                .map_or("", |(field, _)| *field)
        };
        let too_long = [
            (2, lease_duration_ns),
            (1, renew_deadline_ns),
            (0, retry_period_ns),
        ]
        .into_iter()
        .find_map(|(level, ns)| at_most_a_day(ns, from(level)));
        let problem = if let Some(p) = too_long {
            Some((p.field, p.error.into()))
        } else if retry_period_ns == 0 {
            Some((from(0), K8sError::ZeroRetryPeriod))
        } else if u128::from(renew_deadline_ns) * 5 <= u128::from(retry_period_ns) * 6 {
            let error = K8sError::RenewDeadlineNotAboveRetry {
                renew_deadline_ns,
                retry_period_ns,
            };
            Some((from(0), error))
        } else if lease_duration_ns <= renew_deadline_ns {
            let error = K8sError::LeaseNotAboveRenewDeadline {
                lease_duration_ns,
                renew_deadline_ns,
            };
            Some((from(1), error))
        } else {
            None
        };
        let (etcd, etcd_problem) = etcd_behind(&settings);
        let config = K8sConfig {
            lease_duration_ns,
            renew_deadline_ns,
            retry_period_ns: retry_period_ns.max(1),
            variant: settings.variant.unwrap_or(defaults.variant),
            rules: settings.rules.unwrap_or(defaults.rules),
            etcd,
            apiservers: settings.apiservers.unwrap_or(1),
        };
        let problem = problem.or(etcd_problem).or_else(|| {
            let dbrow = config.etcd.is_some() && config.variant == K8sVariant::DbRow;
            dbrow.then_some(("variant", K8sError::DbRowOnEtcd))
        });
        let problems = problem.map(|(field, error)| Problem { field, error });
        (config, problems.into_iter().collect())
    }

    fn settings(config: &K8sConfig) -> K8sSettings {
        K8sSettings {
            lease_duration: Some(DurationText(config.lease_duration_ns)),
            renew_deadline: Some(DurationText(config.renew_deadline_ns)),
            retry_period: Some(DurationText(config.retry_period_ns)),
            variant: Some(config.variant),
            rules: Some(config.rules),
            etcd_members: config.etcd.as_ref().map(|e| e.members),
            apiservers: config.etcd.as_ref().map(|_| config.apiservers),
            etcd_version: config.etcd.as_ref().map(|e| e.version.name().to_string()),
            etcd_election_timeout: config
                .etcd
                .as_ref()
                .map(|e| DurationText(e.election_timeout_ns)),
        }
    }

    /// The API server alone, or the API servers and the etcd members.
    fn service_processes(config: &K8sConfig) -> usize {
        config.service_processes()
    }

    /// `API server`, or `apiserver-0`, ..., then `etcd-0`, ...
    fn service_names(config: &K8sConfig) -> Vec<String> {
        let Some(etcd) = &config.etcd else {
            return vec![Self::SERVICE_NAME.to_string()];
        };
        let apiservers = (0..config.apiservers).map(|i| format!("apiserver-{i}"));
        let members = (0..etcd.members).map(|i| format!("etcd-{i}"));
        apiservers.chain(members).collect()
    }

    fn info(config: &K8sConfig, members: usize) -> AlgorithmInfo {
        info(config, members)
    }

    fn timings(config: &K8sConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("retry_period", config.retry_period_ns),
            ("renew_deadline", config.renew_deadline_ns),
            ("lease_duration", config.lease_duration_ns),
        ]
    }

    /// Under client-go's rules the holder writes the lease duration into the record in whole
    /// seconds (`int(le.config.LeaseDuration / time.Second)`) and candidates wait that: a
    /// duration that is not whole seconds is cut, said here, with the margin it leaves.
    fn adjustments(config: &K8sConfig) -> Vec<String> {
        let written_ns = u64::from(config.lease_duration_s()).saturating_mul(1_000_000_000);
        if config.rules != K8sRules::ClientGo || written_ns == config.lease_duration_ns {
            return Vec::new();
        }
        let margin = if written_ns <= config.renew_deadline_ns {
            format!(
                ", not longer than the renew deadline {}: candidates may take over while the \
                 leader still leads",
                dur(&config.renew_deadline_ns)
            )
        } else {
            String::new()
        };
        vec![format!(
            "lease_duration {} is written into the Lease as LeaseDurationSeconds {} (client-go: \
             int(LeaseDuration / time.Second)), and candidates wait {}{margin}; write whole \
             seconds, or `rules: Strict` to wait {}",
            dur(&config.lease_duration_ns),
            config.lease_duration_s(),
            dur(&written_ns),
            dur(&config.lease_duration_ns),
        )]
    }

    fn heartbeat_ns(config: &K8sConfig) -> Nanos {
        // The leader renews, and candidates poll, every retry period.
        config.retry_period_ns
    }

    /// `lease` sets the lease duration; the renew deadline and retry period keep their ratio
    /// to it.
    fn vary(
        config: &K8sConfig,
        cluster: &Cluster,
        name: &str,
        value: KnobValue,
    ) -> Result<K8sConfig, Problem<K8sError>> {
        let KnobValue::Duration(lease_ns) = value else {
            return Err(unknown_knob(name, K8sError::Common));
        };
        if name == "service_election_timeout" && config.etcd.is_some() {
            let mut settings = Self::settings(config);
            settings.etcd_election_timeout = Some(DurationText(lease_ns));
            return lower_checked::<Self>(settings, cluster);
        }
        if name != "lease" {
            return Err(unknown_knob(name, K8sError::Common));
        }
        let old_ns = config.lease_duration_ns;
        let mut settings = Self::settings(config);
        let renew_ns = scaled(config.renew_deadline_ns, old_ns, lease_ns);
        let retry_ns = scaled(config.retry_period_ns, old_ns, lease_ns);
        settings.renew_deadline = Some(DurationText(renew_ns));
        settings.retry_period = Some(DurationText(retry_ns));
        settings.lease_duration = Some(DurationText(lease_ns));
        lower_checked::<Self>(settings, cluster)
    }

    fn message_names(_: &Self::Config) -> Option<&'static [&'static str]> {
        Some(splitbrain_sim::Names::of::<K8sProcess>().messages)
    }

    fn run(
        config: &K8sConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        // The members campaign; the API server (or database) is process `members`.
        let processes = super::processes(sim.members, config);
        run_processes(sim, info, processes, options)
    }
}

/// The etcd cluster the settings put behind the API servers, and the first rule they broke:
/// the cluster's own (`Etcd::lower_rules`', for its size, version and election timeout), or an
/// API-server setting written without a cluster.
fn etcd_behind(settings: &K8sSettings) -> (Option<EtcdConfig>, Option<(&'static str, K8sError)>) {
    let Some(members) = settings.etcd_members else {
        let written = [
            ("apiservers", settings.apiservers.is_some()),
            ("etcd_version", settings.etcd_version.is_some()),
            (
                "etcd_election_timeout",
                settings.etcd_election_timeout.is_some(),
            ),
        ];
        let problem = written
            .into_iter()
            .find(|(_, given)| *given)
            .map(|(field, _)| (field, K8sError::EtcdOnly { field }));
        return (None, problem);
    };
    let etcd = EtcdSettings {
        members: Some(members),
        version: settings.etcd_version.clone(),
        election_timeout: settings.etcd_election_timeout,
        ..EtcdSettings::default()
    };
    let (config, problems) = Etcd::lower_rules(etcd);
    let etcd_problem = problems.into_iter().next().map(|p| {
        let field = match p.field {
            "members" => "etcd_members",
            "version" => "etcd_version",
            _ => "etcd_election_timeout",
        };
        (field, K8sError::Etcd(p.error))
    });
    let problem = etcd_problem.or_else(|| {
        let apiservers = settings.apiservers.unwrap_or(1);
        (apiservers == 0 || apiservers > 7)
            .then_some(("apiservers", K8sError::ApiServersOutOfRange { apiservers }))
    });
    (Some(config), problem)
}
