//! Kubernetes Lease lock settings, validated by the scenario loader.

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

/// client-go's `LeaderElectionConfig` durations, and the variant. Each duration is local time
/// of whoever measures it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct K8sConfig {
    /// A candidate takes the lease when the record has not changed for this long by its own
    /// clock (`DbRow`: the row expires this long after its last update, by the database's).
    pub lease_duration_ns: u64,
    /// The leader stops leading when this long has passed since the send time of its last
    /// successful renewal.
    pub renew_deadline_ns: u64,
    /// The leader renews, and candidates read the record, this often (candidates add a
    /// jitter of up to 1.2 periods).
    pub retry_period_ns: u64,
    /// Who judges expiry: each candidate's clock, or the database's.
    pub variant: K8sVariant,
}

impl Default for K8sConfig {
    fn default() -> Self {
        // client-go's defaults are 15s, 10s and 2s; the same ratios, ten times shorter.
        Self {
            lease_duration_ns: 1_500_000_000,
            renew_deadline_ns: 1_000_000_000,
            retry_period_ns: 200_000_000,
            variant: K8sVariant::Lease,
        }
    }
}
