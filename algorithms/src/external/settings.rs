//! `External(command: [...])` as a scenario writes it: the settings, their rules, and the
//! run that starts (or reuses) one process per member.

use super::checks::Check;
use super::names::run_names;
use super::node::{ExternalNode, NodeSetup};
use super::pipe::{self, Launch, NodeProc};
use super::process::{ExternalProcess, ServiceHost};
use super::wire::NoService;
use crate::algorithm::{
    run_named_processes, Algorithm, Cluster, KnobValue, Lowered, Problem, SettingError,
};
use crate::rules::{at_most_a_day, ns_or, unknown_knob, CommonRule};
use crate::RunOptions;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use splitbrain_sim::duration::DurationText;
use splitbrain_sim::{
    AlgorithmInfo, HandlerEvent, Handling, Message, Nanos, NodeId, Process, Refusal, RefusedEffect,
    RunError, RunReport, SignalSupport, SimConfig, TimerKind,
};
use std::path::Path;
use std::time::Duration;
use thiserror::Error;

/// Election members in any language, over the step protocol (`docs/protocol.md`).
pub struct External;

/// Where a node's stderr (its log) goes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Stderr {
    /// Kept: its last lines are quoted when the node fails.
    #[default]
    Keep,
    /// Passed through to splitbrain's own stderr as the node writes it.
    Show,
    /// Put in the trace as `log` events, each line at the step whose reply followed it
    /// (what the node writes before it answers an event belongs to that event); and quoted
    /// when the node fails.
    Trace,
}

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

/// How many live members that talk to each other the nodes need to elect a leader. The
/// liveness check judges a run only when at least that many are live and connected (fewer
/// cannot elect, so their silence is no failure), and a shrink that leaves fewer keeps no
/// failure.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Quorum {
    /// A majority of the members (Raft, ZAB, Paxos): the default.
    #[default]
    Majority,
    /// Any one member can elect itself (Bully, a lock through a service).
    Any,
    /// At least this many members, from 1 to the number of members.
    AtLeast(u32),
}

impl Quorum {
    /// The smallest group of `members` members that can elect.
    pub fn of(self, members: usize) -> usize {
        match self {
            Quorum::Majority => members / 2 + 1,
            Quorum::Any => 1,
            Quorum::AtLeast(n) => (n as usize).clamp(1, members.max(1)),
        }
    }
}

/// The validated settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExternalConfig {
    /// The program every member runs, and its arguments (relative paths: from the directory
    /// splitbrain runs in).
    pub command: Vec<String>,
    /// The shortest interval at which a node acts on its own timers: the basis of the events
    /// estimate and of `sweep`'s phases (default 100 ms).
    pub heartbeat_ns: Nanos,
    /// How long the nodes may take to notice a dead leader and elect another: liveness
    /// allows ten times this after the last fault (default ten heartbeats).
    pub failure_detection_ns: Nanos,
    /// The longest real time a node may stay silent while its answer to an event is awaited
    /// (default 10 s): a node silent that long is hung.
    pub deadline_ns: Nanos,
    /// Whether a restart starts a new process (default: the same process gets `init` again).
    pub fresh_process: bool,
    /// Where the nodes' stderr goes.
    pub stderr: Stderr,
    /// Safety properties of the user's own over the nodes' observations, checked at every
    /// event ([`Check`]).
    pub properties: Vec<Check>,
    /// How many members it takes to elect (default: a majority).
    pub quorum: Quorum,
    /// The command of a version known to be right (the fixed release of a library whose
    /// bug the hunt looks for): a `hunt` counts a failure, and its shrinker keeps a step,
    /// only if this command passes the same schedule.
    pub reference: Option<Vec<String>>,
}

/// The heartbeat when none is written.
pub const DEFAULT_HEARTBEAT_NS: Nanos = 100_000_000;
/// The deadline per event when none is written.
pub const DEFAULT_DEADLINE_NS: Nanos = 10_000_000_000;

impl Default for ExternalConfig {
    fn default() -> Self {
        Self {
            command: Vec::new(),
            heartbeat_ns: DEFAULT_HEARTBEAT_NS,
            failure_detection_ns: 10 * DEFAULT_HEARTBEAT_NS,
            deadline_ns: DEFAULT_DEADLINE_NS,
            fresh_process: false,
            stderr: Stderr::Keep,
            properties: Vec::new(),
            quorum: Quorum::Majority,
            reference: None,
        }
    }
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

/// The modeled service's processes of an external run, ids from `members` on.
pub(crate) struct ServiceProcesses<S> {
    /// Every process of the service, in id order.
    pub processes: Vec<S>,
    /// How many of the first of them a client may send requests to: all of a clustered
    /// etcd or ZooKeeper, the API servers in front of the Kubernetes Lease's etcd.
    pub endpoints: usize,
    /// The message types a client may send them, by name.
    pub requests: &'static [&'static str],
}

impl<S> ServiceProcesses<S> {
    /// No service: the nodes elect among themselves.
    pub fn none() -> Self {
        Self {
            processes: Vec::new(),
            endpoints: 0,
            requests: &[],
        }
    }
}

/// Runs the nodes of `config`, and the service's processes after them.
pub(crate) fn run_with_service<S>(
    config: &ExternalConfig,
    sim: SimConfig,
    info: AlgorithmInfo,
    options: RunOptions,
    service: ServiceProcesses<S>,
) -> Result<RunReport, RunError>
where
    S: Process<Durable = ()>,
    S::Msg: Serialize + DeserializeOwned,
{
    let members = sim.members;
    let deadline = Duration::from_nanos(config.deadline_ns);
    let launch = |node| Launch {
        command: config.command.clone(),
        stderr: config.stderr,
        node,
    };
    let mut procs: Vec<NodeProc> = Vec::with_capacity(members);
    for i in 0..members {
        match pipe::take(&launch(i), deadline) {
            Ok(proc) => procs.push(proc),
            Err(reason) => {
                give_all_back(procs, &launch);
                return Err(start_failure(i, reason));
            }
        }
    }
    if let Some(i) = (1..members).find(|&i| procs[i].declared != procs[0].declared) {
        let reason = procs[i].declared.difference(&procs[0].declared);
        give_all_back(procs, &launch);
        return Err(start_failure(i, reason));
    }
    let declared = procs[0].declared.clone();
    let names = run_names(&declared, S::Msg::KINDS, S::Timer::NAMES);
    let endpoints = service.endpoints.min(service.processes.len());
    let services: Vec<NodeId> = (members..members + endpoints).map(NodeId::from).collect();
    let mut processes: Vec<ExternalProcess<S>> = procs
        .into_iter()
        .enumerate()
        .map(|(i, proc)| {
            let setup = NodeSetup {
                launch: launch(i),
                deadline,
                fresh_process: config.fresh_process,
                members,
                services: services.clone(),
                requests: service.requests,
                names,
                own_messages: declared.messages.len(),
                own_timers: declared.timers.len(),
            };
            ExternalProcess::Node(ExternalNode::new(NodeId::from(i), members, setup, proc))
        })
        .collect();
    for process in service.processes {
        let host = ServiceHost::new(process, declared.messages.len(), declared.timers.len());
        processes.push(ExternalProcess::Service(host));
    }
    run_named_processes(sim, info, processes, names, options)
}

fn give_all_back(procs: Vec<NodeProc>, launch: &impl Fn(usize) -> Launch) {
    for (i, proc) in procs.into_iter().enumerate() {
        pipe::give_back(launch(i), proc);
    }
}

/// A node that could not be started: the run's error, at its start.
fn start_failure(node: usize, reason: String) -> RunError {
    RunError::Refused(RefusedEffect {
        handling: Handling {
            node: NodeId::from(node),
            at_ns: 0,
            event: HandlerEvent::Start,
        },
        effect: format!("starting its process: {reason}"),
        refusal: Refusal::ProcessFailed,
    })
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
