//! `External(command: [...])` as a scenario writes it: the settings and their rules; the
//! run is the host's (`host.rs`).

use super::checks::Check;
use super::config::{ExternalConfig, Quorum, DEFAULT_DEADLINE_NS, DEFAULT_HEARTBEAT_NS};
use super::host::{run_with_service, ServiceProcesses};
use super::stderr::Stderr;
use super::wire::NoService;
use crate::algorithm::{Algorithm, Cluster, KnobValue, Lowered, Problem, SettingError};
use crate::rules::{at_most_a_day, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{AlgorithmInfo, Nanos, RunError, RunReport, SignalSupport, SimConfig};
use std::path::Path;
use thiserror::Error;

/// Election members in any language, over the step protocol (`docs/protocol.md`).
pub struct External;

/// The settings as written; only `command` is required.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSettings {
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
    pub properties: Option<Vec<Check>>,
    /// [`ExternalConfig::quorum`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<Quorum>,
    /// [`ExternalConfig::reference`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Vec<String>>,
}

/// A rule the settings broke.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ExternalError {
    /// A rule shared with other algorithms (a day at most, knobs).
    #[error(transparent)]
    Common(#[from] CommonRule),
    /// No command.
    #[error("an external algorithm needs a `command` to run for each member")]
    NoCommand,
    /// `reference: []`.
    #[error("`reference` names no program")]
    EmptyReference,
    /// `quorum: AtLeast(n)` with n of 0 or more than the members.
    #[error("a quorum of {quorum} is not between 1 and the {members} members")]
    QuorumOutOfRange {
        /// The quorum as written.
        quorum: u32,
        /// The scenario's members.
        members: u64,
    },
    /// The program cannot be found.
    #[error("the program `{program}` {problem}")]
    ProgramNotFound {
        /// The program as written.
        program: String,
        /// `is not a file` or `is not on the PATH`.
        problem: &'static str,
    },
    /// The program is a file, but no execute permission lets it be started.
    #[error("the program `{program}` is not executable")]
    ProgramNotExecutable {
        /// The program as written.
        program: String,
    },
    /// A declared property that cannot be checked.
    #[error("{0}")]
    Property(String),
    /// A timing of zero.
    #[error("`{field}` must be longer than zero")]
    Zero {
        /// The setting.
        field: &'static str,
    },
    /// `ExternalClient` without a `service`.
    #[error("an external client needs the `service` it is a client of")]
    NoService,
    /// A setting of the service's that an external client's run would leave unused.
    #[error("the service's `{field}` is {unused}")]
    ServiceSettingUnused {
        /// The service's setting.
        field: &'static str,
        /// Why it goes unused.
        unused: Unused,
    },
    /// A rule the service's own settings broke.
    #[error("the service's `{field}`: {message}")]
    Service {
        /// The service's setting.
        field: &'static str,
        /// The rule, as the service's algorithm words it.
        message: String,
        /// What to do, as the service's algorithm says it.
        hint: Option<String>,
    },
}

/// Why a setting of the service goes unused under `ExternalClient`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Error)]
pub enum Unused {
    /// It configures the service's built-in client (its recipe, variant or rules), which the
    /// external nodes replace.
    #[error("a setting of its built-in client, which the external nodes replace")]
    ClientOnly,
}

impl SettingError for ExternalError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            ExternalError::Common(rule) => return rule.hint(),
            ExternalError::EmptyReference => {
                "write the command of the version known to be right, as `command` is written: \
                 `reference: [\"sh\", \"clients/go/etcdraft/node.sh\", \"v3.3.17\"]`"
            }
            ExternalError::QuorumOutOfRange { .. } => {
                "write `quorum: Majority` (the default), `quorum: Any` or `quorum: AtLeast(n)` \
                 with n from 1 to `nodes`"
            }
            ExternalError::NoCommand => {
                "write the program and its arguments: `External(command: [\"python3\", \"my_node.py\"])`"
            }
            ExternalError::ProgramNotFound { .. } => {
                "a path is taken from the directory splitbrain runs in; a bare name is looked up on the PATH"
            }
            ExternalError::ProgramNotExecutable { .. } => {
                "make it executable (`chmod +x`), or run it through its interpreter: \
                 `command: [\"python3\", \"my_node.py\"]`"
            }
            ExternalError::Zero { .. } => "write a duration such as \"100ms\"",
            ExternalError::Property(_) => {
                "name each property after the observation it checks: `AtMostOne(\"lock_held\")`"
            }
            ExternalError::NoService => {
                "write `service: Etcd()`, `service: ZooKeeper()` or `service: K8sLease()`, with \
                 the service's settings as its own algorithm takes them"
            }
            ExternalError::ServiceSettingUnused { field, unused } => {
                return Some(match unused {
                    Unused::ClientOnly => format!(
                        "leave `{field}` out: your nodes are the clients, and make those choices \
                         themselves (docs/protocol-services.md)"
                    ),
                })
            }
            ExternalError::Service { hint, .. } => return hint.clone(),
        };
        Some(hint.to_string())
    }
}

/// Whether `program` can be started, found as `execvp` finds it but without starting it: a
/// path names an executable file; a bare name is an executable file in a folder of the PATH.
fn find_program(program: &str) -> Result<(), ExternalError> {
    let not_found = |problem| ExternalError::ProgramNotFound {
        program: program.to_string(),
        problem,
    };
    let not_executable = || ExternalError::ProgramNotExecutable {
        program: program.to_string(),
    };
    if program.contains('/') {
        let path = Path::new(program);
        return match (path.is_file(), is_executable(path)) {
            (false, _) => Err(not_found("is not a file")),
            (true, false) => Err(not_executable()),
            (true, true) => Ok(()),
        };
    }
    let candidates: Vec<_> = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(program))
                .collect()
        })
        .unwrap_or_default();
    let files: Vec<_> = candidates.iter().filter(|path| path.is_file()).collect();
    if files.iter().any(|path| is_executable(path)) {
        Ok(())
    } else if files.is_empty() {
        Err(not_found("is not on the PATH"))
    } else {
        Err(not_executable())
    }
}

/// Whether `path` may be executed by someone: an execute bit is set (root too needs one).
#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_path: &Path) -> bool {
    true
}

/// What is wrong with the command line written at `field`, if anything: no program at all
/// (`empty`), or a program that cannot be started.
fn command_problem(
    field: &'static str,
    command: &[String],
    empty: ExternalError,
) -> Option<Problem<ExternalError>> {
    let error = match command.first() {
        None => empty,
        Some(program) => find_program(program).err()?,
    };
    Some(Problem { field, error })
}

/// Lowers the settings shared by `External` and `ExternalClient`.
pub(crate) fn lower_common(settings: ExternalSettings) -> Lowered<ExternalConfig, ExternalError> {
    let heartbeat_ns = ns_or(settings.heartbeat, DEFAULT_HEARTBEAT_NS);
    let config = ExternalConfig {
        command: settings.command.unwrap_or_default(),
        heartbeat_ns,
        failure_detection_ns: ns_or(settings.failure_detection, heartbeat_ns.saturating_mul(10)),
        deadline_ns: ns_or(settings.deadline, DEFAULT_DEADLINE_NS),
        fresh_process: settings.fresh_process.unwrap_or(false),
        stderr: settings.stderr.unwrap_or_default(),
        properties: settings.properties.unwrap_or_default(),
        quorum: settings.quorum.unwrap_or_default(),
        reference: settings.reference,
    };
    let mut problems = Vec::new();
    if let Some(problem) = super::checks::problem(&config.properties) {
        problems.push(Problem {
            field: "properties",
            error: ExternalError::Property(problem),
        });
    }
    problems.extend(command_problem(
        "command",
        &config.command,
        ExternalError::NoCommand,
    ));
    if let Some(reference) = &config.reference {
        problems.extend(command_problem(
            "reference",
            reference,
            ExternalError::EmptyReference,
        ));
    }
    let timings = [
        ("heartbeat", config.heartbeat_ns),
        ("failure_detection", config.failure_detection_ns),
        ("deadline", config.deadline_ns),
    ];
    for (field, ns) in timings {
        if ns == 0 {
            problems.push(Problem {
                field,
                error: ExternalError::Zero { field },
            });
        }
        if let Some(p) = at_most_a_day(ns, field) {
            problems.push(Problem {
                field: p.field,
                error: p.error.into(),
            });
        }
    }
    (config, problems)
}

/// The settings written back in full.
pub(crate) fn settings_of(config: &ExternalConfig) -> ExternalSettings {
    ExternalSettings {
        command: Some(config.command.clone()),
        heartbeat: Some(DurationText(config.heartbeat_ns)),
        failure_detection: Some(DurationText(config.failure_detection_ns)),
        deadline: Some(DurationText(config.deadline_ns)),
        fresh_process: Some(config.fresh_process),
        stderr: Some(config.stderr),
        properties: (!config.properties.is_empty()).then(|| config.properties.clone()),
        quorum: Some(config.quorum),
        reference: config.reference.clone(),
    }
}

/// What the engine's checks need: nothing is known of the nodes' rules but their timings.
pub(crate) fn info_of(name: &str, config: &ExternalConfig, members: usize) -> AlgorithmInfo {
    AlgorithmInfo {
        service_names: Vec::new(),
        name: name.to_string(),
        failure_detection_ns: config.failure_detection_ns,
        min_group_for_progress: config.quorum.of(members),
        signals: SignalSupport::NONE,
        late_campaigns_lose: false,
    }
}

impl Algorithm for External {
    const NAME: &'static str = "external";
    const SCENARIO_NAME: &'static str = "External";
    const SUMMARY: &'static str =
        "your own election nodes, in any language, as OS processes over the step protocol \
         (docs/protocol.md): hunted, shrunk and replayed like the built-in ones";
    const SENDS_TO_EVERY_MEMBER: bool = true;
    const CHANGES_MEMBERSHIP: bool = true;

    type Settings = ExternalSettings;
    type Config = ExternalConfig;
    type Error = ExternalError;

    fn lower(
        settings: ExternalSettings,
        cluster: &Cluster,
    ) -> Lowered<ExternalConfig, ExternalError> {
        let (config, mut problems) = lower_common(settings);
        if let Quorum::AtLeast(quorum) = config.quorum
            && (quorum == 0 || u64::from(quorum) > cluster.nodes)
        {
            problems.push(Problem {
                field: "quorum",
                error: ExternalError::QuorumOutOfRange {
                    quorum,
                    members: cluster.nodes,
                },
            });
        }
        (config, problems)
    }

    fn settings(config: &ExternalConfig) -> ExternalSettings {
        settings_of(config)
    }

    fn info(config: &ExternalConfig, members: usize) -> AlgorithmInfo {
        info_of(Self::NAME, config, members)
    }

    fn timings(config: &ExternalConfig) -> Vec<(&'static str, Nanos)> {
        vec![
            ("heartbeat", config.heartbeat_ns),
            ("failure_detection", config.failure_detection_ns),
        ]
    }

    fn heartbeat_ns(config: &ExternalConfig) -> Nanos {
        config.heartbeat_ns
    }

    /// The same nodes' settings with `reference` as their command.
    fn reference(config: &ExternalConfig) -> Option<ExternalConfig> {
        let command = config.reference.clone()?;
        Some(ExternalConfig {
            command,
            reference: None,
            ..config.clone()
        })
    }

    fn properties(config: &ExternalConfig) -> splitbrain_sim::Properties {
        super::checks::properties(&config.properties)
    }

    fn watched_observations(config: &ExternalConfig) -> Vec<&'static str> {
        super::checks::watched(&config.properties)
    }

    /// The `command`, once per member and thread.
    fn programs(config: &ExternalConfig) -> Vec<Vec<String>> {
        vec![config.command.clone()]
    }

    fn vary(
        _: &ExternalConfig,
        _: &Cluster,
        name: &str,
        _: KnobValue,
    ) -> Result<ExternalConfig, Problem<ExternalError>> {
        Err(unknown_knob(name, ExternalError::Common))
    }

    fn run(
        config: &ExternalConfig,
        sim: SimConfig,
        info: AlgorithmInfo,
        options: RunOptions,
    ) -> Result<RunReport, RunError> {
        run_with_service::<NoService>(config, sim, info, options, ServiceProcesses::none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 43: a `command` whose program cannot be executed passed `check`, and failed only
    /// when a run started it. It is found without starting it, as `execvp` finds it.
    #[test]
    fn a_program_that_cannot_be_executed_is_refused_without_running_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("splitbrain-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let node = dir.join("node.sh");
        // It would leave a mark if it ran.
        let mark = dir.join("ran");
        std::fs::write(&node, format!("#!/bin/sh\ntouch {}\n", mark.display())).expect("write");
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let path = node.to_str().expect("UTF-8").to_string();
        let error = find_program(&path).expect_err("not executable");
        assert_eq!(
            error,
            ExternalError::ProgramNotExecutable {
                program: path.clone()
            }
        );
        assert!(error.hint().expect("a hint").contains("chmod +x"));
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(find_program(&path), Ok(()));
        assert!(!mark.exists(), "finding a program never runs it");
        let missing = dir.join("missing").to_str().expect("UTF-8").to_string();
        assert!(matches!(
            find_program(&missing),
            Err(ExternalError::ProgramNotFound {
                problem: "is not a file",
                ..
            })
        ));
        assert_eq!(find_program("sh"), Ok(()));
        assert!(matches!(
            find_program("no-such-program-43"),
            Err(ExternalError::ProgramNotFound {
                problem: "is not on the PATH",
                ..
            })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
