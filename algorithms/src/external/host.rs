//! The host of a run of external nodes: starts (or takes back from the pool) one process per
//! member, checks they declared the same messages and timers, and runs them with the
//! modeled service's processes after them ([`ServiceHost`]: etcd members, ZooKeeper servers,
//! API servers), one engine process each.

use super::config::ExternalConfig;
use super::names::run_names;
use super::node::{ExternalNode, NodeSetup};
use super::pipe::{self, Launch, NodeProc};
use super::process::{ExternalProcess, NodeHost, ServiceHost};
use crate::algorithm::run_named_processes;
use crate::RunOptions;
use serde::de::DeserializeOwned;
use serde::Serialize;
use splitbrain_sim::{
    AlgorithmInfo, HandlerEvent, Handling, Message, NodeId, Process, Refusal, RefusedEffect,
    RunError, RunReport, SimConfig, TimerKind,
};
use std::time::Duration;

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
    S: Process<Durable = ()> + 'static,
    S::Msg: Serialize + DeserializeOwned + 'static,
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
    let mut processes: Vec<ExternalProcess<S::Msg>> = procs
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
            let node = ExternalNode::new(NodeId::from(i), members, setup, proc);
            Box::new(NodeHost::<S::Msg>::new(node)) as ExternalProcess<S::Msg>
        })
        .collect();
    for process in service.processes {
        let host = ServiceHost::new(process, declared.messages.len(), declared.timers.len());
        processes.push(Box::new(host));
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
