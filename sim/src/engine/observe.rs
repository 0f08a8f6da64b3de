//! The observation stream shown to the run's own properties ([`crate::property`]), and the
//! effects the engine refuses ([`crate::RefusedEffect`]).
//!
//! Both cost a run without properties next to nothing: an observation is built only behind
//! one test of "are there properties?", and a refusal is a bounds comparison on the effects
//! a handler asked for, in the loop that applies them anyway.

use super::{Halt, Sim};
use crate::ids::NodeId;
use crate::process::{Effect, Message, Process, Signal, TimerKind};
use crate::property::Observation;
use crate::refused::{Handling, Refusal, RefusedEffect};

type NodeEffect<P> = Effect<<P as Process>::Msg, <P as Process>::Timer, <P as Process>::Durable>;

impl<P: Process> Sim<'_, P> {
    /// Whether the run checks properties of its own (and so builds observations).
    #[inline]
    pub(super) fn observing(&self) -> bool {
        !self.properties.is_empty()
    }

    /// Shows `observation` to the run's properties, if it has any.
    #[inline]
    pub(super) fn observe(&mut self, observation: Observation) {
        if self.observing() {
            self.check_properties(&observation);
        }
    }

    /// After `node`'s handler: its own observations, then its term.
    #[inline]
    pub(super) fn observe_handler(&mut self, node: NodeId) {
        if self.observing() {
            self.check_handler(node);
        }
    }

    #[cold]
    #[inline(never)]
    fn check_handler(&mut self, node: NodeId) {
        let mut observed = std::mem::take(&mut self.observed);
        for user in observed.drain(..) {
            self.count_observation(user.name);
            self.check_properties(&Observation::User {
                node,
                name: user.name,
                value: user.value,
            });
        }
        self.observed = observed;
        let term = self.processes[node.index()].term();
        self.check_properties(&Observation::Term { node, term });
    }

    fn count_observation(&mut self, name: &'static str) {
        match self.observation_counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => self.observation_counts.push((name, 1)),
        }
    }

    #[inline(never)]
    fn check_properties(&mut self, observation: &Observation) {
        let now = self.now;
        for index in 0..self.properties.len() {
            let installed = &mut self.properties[index];
            if let Err(breach) = installed.check(now, observation) {
                let name = installed.name;
                let nodes = if breach.nodes.is_empty() {
                    vec![observation.node()]
                } else {
                    breach.nodes
                };
                let broken = self
                    .checker
                    .record_property(now, name, nodes, breach.detail);
                self.flag(Some(broken));
            }
        }
    }

    /// Whether the engine cannot carry out `effect` of a handler: the per-effect test, a
    /// comparison or two ([`Sim::refusal`] says why, once it is known to be refused).
    #[inline]
    pub(super) fn refused(&self, effect: &NodeEffect<P>) -> bool {
        match effect {
            // The resource's id is the number of processes: the first that is none.
            Effect::Send { to, msg } | Effect::SendUnordered { to, msg } => {
                *to >= self.resource_id || msg.kind() >= self.names.messages.len()
            }
            // The engine's busiest effects: a comparison each, no refusal built.
            Effect::SetTimer { timer, .. }
            | Effect::SetWallTimer { timer, .. }
            | Effect::CancelTimer { timer } => timer.index() >= self.names.timers.len(),
            Effect::Write { .. }
            | Effect::BecameLeader { .. }
            | Effect::SteppedDown
            | Effect::Persist(_)
            | Effect::Log { .. } => false,
            _ => self.refusal(effect).is_some(),
        }
    }

    /// Why the engine cannot carry out `effect` of a handler, if it cannot.
    fn refusal(&self, effect: &NodeEffect<P>) -> Option<Refusal> {
        let processes = self.processes.len();
        let no_such_node = |node: NodeId| {
            (node.index() >= processes).then_some(Refusal::NoSuchNode { node, processes })
        };
        let timer_kind = |index: usize| {
            let kinds = self.names.timers.len();
            (index >= kinds).then_some(Refusal::NoSuchTimerKind { index, kinds })
        };
        match effect {
            Effect::Send { to, msg } | Effect::SendUnordered { to, msg } => no_such_node(*to)
                .or_else(|| {
                    let (index, kinds) = (msg.kind(), self.names.messages.len());
                    (index >= kinds).then_some(Refusal::NoSuchMessageKind { index, kinds })
                }),
            Effect::Disconnect { peer } => no_such_node(*peer),
            Effect::SetTimer { timer, .. }
            | Effect::SetWallTimer { timer, .. }
            | Effect::CancelTimer { timer } => timer_kind(timer.index()),
            Effect::Signal(signal) => match *signal {
                Signal::LeaseExpired { holder }
                | Signal::LeaseHeld { holder }
                | Signal::LeaseEnded { holder } => no_such_node(holder),
                Signal::LeaderHeard { leader, .. } => no_such_node(leader),
                _ => None,
            },
            Effect::Write { .. }
            | Effect::BecameLeader { .. }
            | Effect::SteppedDown
            | Effect::Persist(_)
            | Effect::Log { .. } => None,
            Effect::Fail { .. } => Some(Refusal::ProcessFailed),
        }
    }

    /// Records that the engine refused `effect`, asked for by the handler `handling` says
    /// (the first refusal ends the run before its next event); the effect is dropped.
    #[cold]
    #[inline(never)]
    pub(super) fn refuse(&mut self, handling: Handling, effect: NodeEffect<P>) {
        let Some(refusal) = self.refusal(&effect) else {
            return;
        };
        if matches!(self.halt, Some(Halt::Refused(_))) {
            return;
        }
        self.halt = Some(Halt::Refused(Box::new(RefusedEffect {
            handling,
            effect: match effect {
                Effect::Fail { reason } => reason,
                effect => format!("{effect:?}"),
            },
            refusal,
        })));
    }
}
