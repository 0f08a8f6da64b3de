//! Kubernetes Lease lock settings, validated by the scenario loader.

use crate::etcd::EtcdConfig;
use serde::{Deserialize, Serialize};

/// Who judges a lease's expiry: each candidate's clock, or the database's.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "k8s lease variant"))]
pub enum K8sVariant {
    /// client-go: expiry judged by each candidate's own clock since it last saw a change.
    Lease,
    /// A database row: the database's clock judges expiry.
    DbRow,
}

/// Which timing rules the electors follow: client-go's own, or the model's stricter ones.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "k8s lease rules"))]
pub enum K8sRules {
    /// client-go's `leaderelection.go` as it is: the renew deadline counts from the start of a
    /// retry round (`renew`: `wait.PollUntilContextTimeout(.., RetryPeriod, RenewDeadline,
    /// ..)`, a round starting `RetryPeriod` after the last renewal returned), a leader shown
    /// another holder keeps leading until that deadline, candidates wait the
    /// `LeaseDurationSeconds` of the record, whole seconds, and the waits between tries start
    /// when a try returns (`sliding`).
    ClientGo,
    /// Stricter than client-go: the leader leads only until the renew deadline counted from the
    /// send of its last successful renewal and steps down as soon as it is shown another
    /// holder; candidates wait the configured lease duration to the nanosecond; the waits
    /// start at the send. The model's rules until issue 28.
    Strict,
}

/// client-go's `LeaderElectionConfig` durations, and the variant. Each duration is local time
/// of whoever measures it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct K8sConfig {
    /// A candidate takes the lease when the record has not changed for this long by its own
    /// clock (`ClientGo`: cut to whole seconds as the holder writes it into the record;
    /// `DbRow`: the row expires this long after its last update, by the database's clock).
    pub lease_duration_ns: u64,
    /// The leader stops leading when this long has passed since the start of a retry round
    /// without a successful renewal (`Strict`: since the send of its last successful
    /// renewal).
    pub renew_deadline_ns: u64,
    /// The leader renews, and candidates read the record, this often (candidates add a
    /// jitter of up to 1.2 periods).
    pub retry_period_ns: u64,
    /// Who judges expiry: each candidate's clock, or the database's.
    pub variant: K8sVariant,
    /// client-go's timing rules, or the model's stricter ones.
    pub rules: K8sRules,
    /// The etcd cluster that stores the Lease behind the API servers (its `members`,
    /// `version` and `election_timeout_ns`; the rest are etcd's defaults and unused: the API
    /// server takes no lease). `None`: one modeled API server holds the record itself.
    pub etcd: Option<EtcdConfig>,
    /// How many API servers front the etcd cluster (1 without one), behind a load balancer:
    /// election member `i` connects first to API server `i % apiservers`, and after a
    /// request that failed to the next one in turn.
    pub apiservers: usize,
}

/// client-go's defaults: component-base `config/v1alpha1/defaults.go`,
/// `RecommendedDefaultLeaderElectionConfiguration` (`LeaseDuration` 15s, `RenewDeadline`
/// 10s, `RetryPeriod` 2s), the defaults of kube-controller-manager and kube-scheduler.
impl Default for K8sConfig {
    fn default() -> Self {
        Self {
            lease_duration_ns: 15_000_000_000,
            renew_deadline_ns: 10_000_000_000,
            retry_period_ns: 2_000_000_000,
            variant: K8sVariant::Lease,
            rules: K8sRules::ClientGo,
            etcd: None,
            apiservers: 1,
        }
    }
}

impl K8sConfig {
    /// How many processes the service runs as: the API server alone, or the API servers and
    /// the etcd members behind them.
    pub fn service_processes(&self) -> usize {
        match &self.etcd {
            Some(etcd) => self.apiservers + etcd.members,
            None => 1,
        }
    }

    /// How many of the service's processes a client talks to: the API servers (the first
    /// of them), never the etcd members behind them.
    pub fn client_endpoints(&self) -> usize {
        match &self.etcd {
            Some(_) => self.apiservers,
            None => 1,
        }
    }

    /// client-go's `LeaseDurationSeconds` as an elector with this config writes it into the
    /// record: `int(le.config.LeaseDuration / time.Second)`, whole seconds rounded down.
    pub fn lease_duration_s(&self) -> u32 {
        u32::try_from(self.lease_duration_ns / 1_000_000_000).unwrap_or(u32::MAX)
    }
}
