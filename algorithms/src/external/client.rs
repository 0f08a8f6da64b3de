//! `ExternalClient(command: [...], service: Etcd(...))`: the user's nodes as clients of a
//! modeled coordination service (etcd, ZooKeeper or the Kubernetes API server). A node sends
//! the service's requests in their JSON form (`docs/protocol-services.md`) to the service's
//! id (`init`'s `service`), and gets its answers, watch events and all, the same way.

use super::config::ExternalConfig;
use super::host::{run_with_service, ServiceProcesses};
use super::settings::{info_of, lower_common, settings_of};
use super::settings::{ExternalError, ExternalSettings, Unused};
use super::stderr::Stderr;
use crate::algorithm::{Algorithm, Cluster, KnobValue, Lowered, Problem, SettingError};
use crate::etcd::{Etcd, EtcdConfig, EtcdMsg, EtcdSettings};
use crate::k8s_lease::{K8sConfig, K8sLease, K8sMsg, K8sSettings};
use crate::rules::unknown_knob;
use crate::zookeeper::{ZkConfig, ZkMsg, ZkSettings, ZooKeeper};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SimConfig};

/// Election clients in any language against a modeled coordination service.
pub struct ExternalClient;

/// The service the nodes are clients of, with its settings as its own algorithm takes them.
#[derive(Debug, Deserialize, Serialize)]
pub enum ServiceSettings {
    /// The modeled etcd (`Etcd(...)`'s settings but `variant` and `client`, which concern
    /// the built-in client only: see `take_unused`).
    Etcd(EtcdSettings),
    /// The modeled ZooKeeper server.
    ZooKeeper(ZkSettings),
    /// The modeled Kubernetes API server holding a Lease.
    K8sLease(K8sSettings),
}

/// The validated service.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum ServiceConfig {
    /// The modeled etcd.
    Etcd(EtcdConfig),
    /// The modeled ZooKeeper server.
    ZooKeeper(ZkConfig),
    /// The modeled Kubernetes API server.
    K8sLease(K8sConfig),
}

/// The settings as written: `External`'s, and the service.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalClientSettings {
    /// [`ExternalConfig::command`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// [`ExternalConfig::heartbeat_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<DurationText>,
    /// [`ExternalConfig::failure_detection_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_detection: Option<DurationText>,
    /// [`ExternalConfig::deadline_ns`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DurationText>,
    /// [`ExternalConfig::fresh_process`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_process: Option<bool>,
    /// [`ExternalConfig::stderr`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<Stderr>,
    /// [`ExternalConfig::properties`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<Vec<super::Check>>,
    /// [`ExternalClientConfig::service`] (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceSettings>,
}

/// The validated settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExternalClientConfig {
    /// The nodes.
    pub nodes: ExternalConfig,
    /// The service they are clients of (process `members`).
    pub service: ServiceConfig,
}

impl Default for ExternalClientConfig {
    fn default() -> Self {
        Self {
            nodes: ExternalConfig::default(),
            service: ServiceConfig::Etcd(EtcdConfig::default()),
        }
    }
}

/// `A`'s settings lowered, its broken rules told as the service's.
fn lower_service<A: Algorithm>(
    settings: A::Settings,
    cluster: &Cluster,
    wrap: fn(A::Config) -> ServiceConfig,
) -> Lowered<ServiceConfig, ExternalError> {
    let (config, problems) = A::lower(settings, cluster);
    let problems = problems
        .into_iter()
        .map(|p| Problem {
            field: "service",
            error: ExternalError::Service {
                field: p.field,
                message: p.error.to_string(),
                hint: p.error.hint(),
            },
        })
        .collect();
    (wrap(config), problems)
}

/// Takes out of `service` the settings that an external client's run leaves unused, and
/// says which they were (the setting, its path under `algorithm`, and why): the built-in
/// client's (the nodes are the clients: etcd's `variant` and `client`, ZooKeeper's `recipe`
/// and `on_disconnect`, the Kubernetes Lease's `rules`). Written, each is refused rather than
/// ignored; written back, each is left out. A cluster's settings (etcd's `members`,
/// ZooKeeper's `servers`, the Lease's `etcd_members` and `apiservers`) are used: the nodes
/// run against the whole cluster.
fn take_unused(service: &mut ServiceSettings) -> Vec<(&'static str, &'static str, Unused)> {
    use Unused::ClientOnly;
    let mut taken = Vec::new();
    // `take!(s.field, why)`: takes `field` out of `s` and records it, if it was written.
    macro_rules! take {
        ($s:ident . $field:ident, $why:expr) => {
            if $s.$field.take().is_some() {
                let field = stringify!($field);
                taken.push((field, concat!("service.", stringify!($field)), $why));
            }
        };
    }
    match service {
        ServiceSettings::Etcd(s) => {
            take!(s.variant, ClientOnly);
            take!(s.client, ClientOnly);
        }
        ServiceSettings::ZooKeeper(s) => {
            take!(s.recipe, ClientOnly);
            take!(s.on_disconnect, ClientOnly);
        }
        ServiceSettings::K8sLease(s) => {
            take!(s.rules, ClientOnly);
        }
    }
    taken
}

impl ServiceConfig {
    /// The service's own settings, written back (without those this form leaves unused).
    fn settings(&self) -> ServiceSettings {
        let mut settings = match self {
            ServiceConfig::Etcd(c) => ServiceSettings::Etcd(Etcd::settings(c)),
            ServiceConfig::ZooKeeper(c) => ServiceSettings::ZooKeeper(ZooKeeper::settings(c)),
            ServiceConfig::K8sLease(c) => ServiceSettings::K8sLease(K8sLease::settings(c)),
        };
        take_unused(&mut settings);
        settings
    }

    /// The service's facts for the engine's checks (its lease or session bounds failure
    /// detection).
    fn info(&self, members: usize) -> AlgorithmInfo {
        match self {
            ServiceConfig::Etcd(c) => Etcd::info(c, members),
            ServiceConfig::ZooKeeper(c) => ZooKeeper::info(c, members),
            ServiceConfig::K8sLease(c) => K8sLease::info(c, members),
        }
    }

    /// How many processes the service runs as, and their names ([`Algorithm::service_names`]).
    fn processes(&self) -> (usize, Vec<String>) {
        match self {
            ServiceConfig::Etcd(c) => (Etcd::service_processes(c), Etcd::service_names(c)),
            ServiceConfig::ZooKeeper(c) => {
                (ZooKeeper::service_processes(c), ZooKeeper::service_names(c))
            }
            ServiceConfig::K8sLease(c) => {
                (K8sLease::service_processes(c), K8sLease::service_names(c))
            }
        }
    }

    fn timings(&self) -> Vec<(&'static str, Nanos)> {
        match self {
            ServiceConfig::Etcd(c) => Etcd::timings(c),
            ServiceConfig::ZooKeeper(c) => ZooKeeper::timings(c),
            ServiceConfig::K8sLease(c) => K8sLease::timings(c),
        }
    }

    fn adjustments(&self) -> Vec<String> {
        match self {
            ServiceConfig::Etcd(c) => Etcd::adjustments(c),
            ServiceConfig::ZooKeeper(c) => ZooKeeper::adjustments(c),
            ServiceConfig::K8sLease(c) => K8sLease::adjustments(c),
        }
    }
}

impl Algorithm for ExternalClient {
    const NAME: &'static str = "external-client";
    const SCENARIO_NAME: &'static str = "ExternalClient";
    const SUMMARY: &'static str =
        "your own election or lock client, in any language, against the modeled etcd, ZooKeeper \
         or Kubernetes API server (docs/protocol-services.md), with every fault on the service too";
    const HAS_SERVICE: bool = true;
    const STREAM_BY_DEFAULT: bool = true;
    const CHANGES_MEMBERSHIP: bool = true;

    type Settings = ExternalClientSettings;
    type Config = ExternalClientConfig;
    type Error = ExternalError;

    fn lower(
        settings: ExternalClientSettings,
        cluster: &Cluster,
    ) -> Lowered<ExternalClientConfig, ExternalError> {
        let common = ExternalSettings {
            command: settings.command,
            heartbeat: settings.heartbeat,
            failure_detection: settings.failure_detection,
            deadline: settings.deadline,
            fresh_process: settings.fresh_process,
            stderr: settings.stderr,
            properties: settings.properties,
            // Unused: a client elects through the service, whose facts judge liveness.
            quorum: None,
            reference: None,
        };
        let (nodes, mut problems) = lower_common(common);
        let mut service = settings.service;
        if let Some(service) = service.as_mut() {
            let unused = take_unused(service)
                .into_iter()
                .map(|(field, path, unused)| Problem {
                    field: path,
                    error: ExternalError::ServiceSettingUnused { field, unused },
                });
            problems.extend(unused);
        }
        let (service, service_problems) = match service {
            None => {
                let error = ExternalError::NoService;
                problems.push(Problem {
                    field: "service",
                    error,
                });
                (ServiceConfig::Etcd(EtcdConfig::default()), Vec::new())
            }
            Some(ServiceSettings::Etcd(s)) => {
                lower_service::<Etcd>(s, cluster, ServiceConfig::Etcd)
            }
            Some(ServiceSettings::ZooKeeper(s)) => {
                lower_service::<ZooKeeper>(s, cluster, ServiceConfig::ZooKeeper)
            }
            Some(ServiceSettings::K8sLease(s)) => {
                lower_service::<K8sLease>(s, cluster, ServiceConfig::K8sLease)
            }
        };
        problems.extend(service_problems);
        (ExternalClientConfig { nodes, service }, problems)
    }

    fn settings(config: &ExternalClientConfig) -> ExternalClientSettings {
        let nodes = settings_of(&config.nodes);
        ExternalClientSettings {
            command: nodes.command,
            heartbeat: nodes.heartbeat,
            failure_detection: nodes.failure_detection,
            deadline: nodes.deadline,
            fresh_process: nodes.fresh_process,
            stderr: nodes.stderr,
            properties: nodes.properties,
            service: Some(config.service.settings()),
        }
    }

    /// The service's facts, with the nodes' own failure detection if it is longer.
    fn info(config: &ExternalClientConfig, members: usize) -> AlgorithmInfo {
        let service = config.service.info(members);
        let nodes = info_of(Self::NAME, &config.nodes, members);
        AlgorithmInfo {
            service_names: Vec::new(),
            name: nodes.name,
            failure_detection_ns: nodes.failure_detection_ns.max(service.failure_detection_ns),
            ..service
        }
    }

    fn timings(config: &ExternalClientConfig) -> Vec<(&'static str, Nanos)> {
        let mut timings = vec![
            ("heartbeat", config.nodes.heartbeat_ns),
            ("failure_detection", config.nodes.failure_detection_ns),
        ];
        timings.extend(config.service.timings());
        timings
    }

    fn adjustments(config: &ExternalClientConfig) -> Vec<String> {
        config.service.adjustments()
    }

    fn heartbeat_ns(config: &ExternalClientConfig) -> Nanos {
        config.nodes.heartbeat_ns
    }

    fn properties(config: &ExternalClientConfig) -> splitbrain_sim::Properties {
        super::checks::properties(&config.nodes.properties)
    }

    fn watched_observations(config: &ExternalClientConfig) -> Vec<&'static str> {
        super::checks::watched(&config.nodes.properties)
    }

    /// The nodes' `command` (the modeled service runs inside splitbrain).
    fn programs(config: &ExternalClientConfig) -> Vec<Vec<String>> {
        vec![config.nodes.command.clone()]
    }

    fn vary(
        _: &ExternalClientConfig,
        _: &Cluster,
        name: &str,
        _: KnobValue,
    ) -> Result<ExternalClientConfig, Problem<ExternalError>> {
        Err(unknown_knob(name, ExternalError::Common))
    }

    /// The service's processes: one, or a cluster's members (etcd, ZooKeeper), or the API
    /// servers and the etcd members behind them.
    fn service_processes(config: &ExternalClientConfig) -> usize {
        config.service.processes().0
    }

    fn service_names(config: &ExternalClientConfig) -> Vec<String> {
        config.service.processes().1
    }

    /// The nodes, then every process of the service; a node may send requests to each of
    /// etcd's or ZooKeeper's members, and to the Kubernetes Lease's API servers.
    fn run(
        config: &ExternalClientConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        let (nodes, members) = (&config.nodes, sim.members);
        match &config.service {
            ServiceConfig::Etcd(c) => {
                let processes = crate::etcd::service(members, c);
                let endpoints = processes.len();
                let requests = match endpoints {
                    1 => EtcdMsg::CLIENT_REQUESTS,
                    _ => EtcdMsg::CLUSTER_CLIENT_REQUESTS,
                };
                let service = ServiceProcesses {
                    processes,
                    endpoints,
                    requests,
                };
                run_with_service(nodes, sim, info, options, service)
            }
            ServiceConfig::ZooKeeper(c) => {
                let processes = crate::zookeeper::service(members, c);
                let endpoints = processes.len();
                let requests = ZkMsg::CLIENT_REQUESTS;
                let service = ServiceProcesses {
                    processes,
                    endpoints,
                    requests,
                };
                run_with_service(nodes, sim, info, options, service)
            }
            ServiceConfig::K8sLease(c) => {
                let processes = crate::k8s_lease::service(members, c);
                let endpoints = c.client_endpoints();
                let requests = K8sMsg::CLIENT_REQUESTS;
                let service = ServiceProcesses {
                    processes,
                    endpoints,
                    requests,
                };
                run_with_service(nodes, sim, info, options, service)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(service: &str) -> Lowered<ExternalClientConfig, ExternalError> {
        let text = format!("(command: [\"sh\"], service: {service})");
        // As scenarios are read: `Etcd(ttl: "5s")` for a newtype variant.
        let extensions = ron::extensions::Extensions::IMPLICIT_SOME
            | ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES;
        let options = ron::Options::default().with_default_extension(extensions);
        let settings: ExternalClientSettings = options.from_str(&text).expect("settings parse");
        ExternalClient::lower(settings, &Cluster { nodes: 3 })
    }

    fn unused(service: &str) -> Vec<(&'static str, ExternalError)> {
        let (_, problems) = lower(service);
        problems.into_iter().map(|p| (p.field, p.error)).collect()
    }

    fn refused(field: &'static str, unused: Unused) -> (&'static str, ExternalError) {
        let path = match field {
            "variant" => "service.variant",
            "client" => "service.client",
            "recipe" => "service.recipe",
            "on_disconnect" => "service.on_disconnect",
            "rules" => "service.rules",
            other => panic!("no path for {other}"),
        };
        (path, ExternalError::ServiceSettingUnused { field, unused })
    }

    /// Issue 47: the nodes run against a whole cluster (before, `Etcd(members: 3)` and
    /// `ZooKeeper(servers: 3)` were refused, and the Lease's `etcd_members` too).
    #[test]
    fn a_clustered_service_is_run_whole() {
        for (service, processes, names) in [
            ("Etcd(members: 3)", 3, "etcd-0 etcd-1 etcd-2"),
            (
                "ZooKeeper(servers: 3)",
                3,
                "ZooKeeper-0 ZooKeeper-1 ZooKeeper-2",
            ),
            (
                "K8sLease(etcd_members: 3, apiservers: 2)",
                5,
                "apiserver-0 apiserver-1 etcd-0 etcd-1 etcd-2",
            ),
            ("Etcd()", 1, "etcd"),
        ] {
            let (config, problems) = lower(service);
            assert_eq!(problems.len(), 0, "{service}");
            assert_eq!(ExternalClient::service_processes(&config), processes);
            assert_eq!(ExternalClient::service_names(&config).join(" "), names);
        }
        // `apiservers` alone is refused by the Lease's own rule, as at the top level.
        let (_, problems) = lower("K8sLease(apiservers: 2)");
        let fields: Vec<&str> = problems.iter().map(|p| p.field).collect();
        assert_eq!(fields, ["service"], "{:?}", problems[0].error.to_string());
    }

    /// Each list of a client's requests names message types of its service, none an answer.
    #[test]
    fn the_client_requests_are_the_services_request_types() {
        use splitbrain_sim::Message;
        for (requests, kinds) in [
            (EtcdMsg::CLIENT_REQUESTS, EtcdMsg::KINDS),
            (EtcdMsg::CLUSTER_CLIENT_REQUESTS, EtcdMsg::KINDS),
            (ZkMsg::CLIENT_REQUESTS, ZkMsg::KINDS),
            (K8sMsg::CLIENT_REQUESTS, K8sMsg::KINDS),
        ] {
            for name in requests {
                assert!(kinds.contains(name), "{name} is no message type");
                assert!(!name.ends_with("Resp"), "{name} is an answer");
            }
        }
        assert!(!EtcdMsg::CLUSTER_CLIENT_REQUESTS.contains(&"Raft"));
    }

    /// The built-in client's settings do nothing when the nodes are the clients.
    #[test]
    fn the_built_in_clients_settings_are_refused() {
        assert_eq!(
            unused("Etcd(ttl: \"5s\", variant: SetNx, client: Clientv3)"),
            [
                refused("variant", Unused::ClientOnly),
                refused("client", Unused::ClientOnly),
            ]
        );
        assert_eq!(
            unused("ZooKeeper(recipe: Herd, on_disconnect: StepDown)"),
            [
                refused("recipe", Unused::ClientOnly),
                refused("on_disconnect", Unused::ClientOnly),
            ]
        );
        assert_eq!(
            unused("K8sLease(rules: Strict)"),
            [refused("rules", Unused::ClientOnly)]
        );
        // What the service itself uses stays: the TTL, its timings, the DbRow variant.
        for used in [
            "Etcd(ttl: \"5s\", election_timeout: \"500ms\", lessor_phase: \"100ms\")",
            "ZooKeeper(tick: \"1s\", session_timeout: \"4s\")",
            "K8sLease(lease_duration: \"15s\", variant: DbRow)",
        ] {
            assert_eq!(unused(used), [], "{used}");
        }
    }

    /// A cluster's settings of the top-level forms are refused inside `service` too.
    #[test]
    fn a_clusters_settings_of_the_service_are_refused_without_a_cluster() {
        let fields = |service| -> Vec<&'static str> {
            let (_, problems) = lower(service);
            problems
                .into_iter()
                .map(|p| match p.error {
                    ExternalError::Service { field, .. } => field,
                    other => panic!("{other}"),
                })
                .collect()
        };
        assert_eq!(fields("Etcd(version: \"3.5\")"), ["version"]);
        assert_eq!(fields("ZooKeeper(init_limit: 5)"), ["init_limit"]);
    }

    /// Written back, the settings read back to the same configuration: nothing refused.
    #[test]
    fn the_settings_written_back_lower_to_the_same_config() {
        for service in [
            "Etcd(ttl: \"5s\")",
            "ZooKeeper(tick: \"1s\")",
            "K8sLease(variant: DbRow)",
        ] {
            let (config, problems) = lower(service);
            assert_eq!(problems.len(), 0, "{service}");
            let back = ExternalClient::settings(&config);
            let (again, problems) = ExternalClient::lower(back, &Cluster { nodes: 3 });
            assert_eq!(problems.len(), 0, "{service}");
            assert_eq!(again, config, "{service}");
        }
    }
}
