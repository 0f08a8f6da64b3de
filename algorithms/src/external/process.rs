//! The processes of an external run: the nodes, and the modeled service they may be clients
//! of, hosted so that its own messages and timers sit beside the nodes' in one run.

use super::node::{DurableText, ExternalNode, ExternalTimer};
use super::wire::Wire;
use serde::de::DeserializeOwned;
use serde::Serialize;
use splitbrain_sim::nested::Embedding;
use splitbrain_sim::{Ctx, LocalNanos, MemberChange, Message, NodeId, Process, TimerKind};
use std::sync::Arc;

/// A process of an external run: a node, or the modeled service `S`.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum ExternalProcess<S> {
    /// An election member, run as an OS process.
    Node(ExternalNode),
    /// A process of the modeled coordination service (ids from `members`: the one service
    /// process, or each member of a clustered one).
    Service(ServiceHost<S>),
}

/// A modeled service in an external run: its messages and timers numbered after the
/// nodes' own.
#[derive(Debug)]
pub struct ServiceHost<S> {
    inner: S,
    /// The index of the service's first message type in the run's names.
    message_offset: usize,
    /// The index of the service's first timer in the run's names.
    timer_offset: usize,
}

impl<S> ServiceHost<S>
where
    S: Process<Durable = ()>,
    S::Msg: Serialize + DeserializeOwned,
{
    /// `inner`, its names after the nodes' `own_messages` message types and `own_timers`
    /// timers.
    pub fn new(inner: S, own_messages: usize, own_timers: usize) -> Self {
        Self {
            inner,
            message_offset: own_messages,
            timer_offset: own_timers,
        }
    }

    /// Runs one handler of the service nested ([`splitbrain_sim::nested`]), with a context of
    /// its own types, and hands what it did to the run's context.
    fn call(
        &mut self,
        ctx: &mut XCtx<'_, S::Msg>,
        handler: impl FnOnce(&mut S, &mut Ctx<'_, S::Msg, S::Timer>),
    ) {
        let (me, members) = (ctx.me(), ctx.members());
        let ((), out) = ctx.nested(me, members, |c| handler(&mut self.inner, c));
        ctx.carry_out(out, &*self);
    }

    /// The service's own timer for the run's slot `timer`.
    fn own_timer(&self, timer: ExternalTimer) -> S::Timer {
        S::Timer::from_index(timer.index() - self.timer_offset)
    }
}

/// The service's effects as the run's: its messages numbered after the nodes' own, its
/// timers in the slots after theirs, its (empty) durable state `null`.
impl<S> Embedding<S::Msg, S::Timer, ()> for ServiceHost<S>
where
    S: Process<Durable = ()>,
    S::Msg: Serialize + DeserializeOwned,
{
    type Msg = Wire<S::Msg>;
    type Timer = ExternalTimer;
    type Durable = DurableText;

    fn message(&self, to: NodeId, msg: S::Msg) -> (NodeId, Wire<S::Msg>) {
        let kind = u16::try_from(self.message_offset + msg.kind()).expect("names fit");
        (to, Wire::Service { kind, msg })
    }

    fn timer(&self, timer: S::Timer) -> ExternalTimer {
        ExternalTimer::from_index(self.timer_offset + timer.index())
    }

    fn durable(&self, (): ()) -> DurableText {
        Arc::from("null")
    }
}

type XCtx<'a, M> = Ctx<'a, Wire<M>, ExternalTimer, DurableText>;

impl<S> Process for ExternalProcess<S>
where
    S: Process<Durable = ()>,
    S::Msg: Serialize + DeserializeOwned,
{
    type Msg = Wire<S::Msg>;
    type Timer = ExternalTimer;
    type Durable = DurableText;

    fn on_start(&mut self, ctx: &mut XCtx<'_, S::Msg>) {
        match self {
            ExternalProcess::Node(node) => node.on_init(ctx, false),
            ExternalProcess::Service(host) => host.call(ctx, |s, c| s.on_start(c)),
        }
    }

    fn on_message(&mut self, ctx: &mut XCtx<'_, S::Msg>, from: NodeId, msg: Wire<S::Msg>) {
        match self {
            ExternalProcess::Node(node) => node.on_message(ctx, from, msg),
            // A node's own message sent to the service: the node's send already turned every
            // body for the service into the service's form, so this does not happen.
            ExternalProcess::Service(host) => {
                if let Wire::Service { msg, .. } = msg {
                    host.call(ctx, |s, c| s.on_message(c, from, msg));
                }
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut XCtx<'_, S::Msg>, timer: ExternalTimer) {
        match self {
            ExternalProcess::Node(node) => node.on_timer(ctx, timer),
            ExternalProcess::Service(host) => {
                let own = host.own_timer(timer);
                host.call(ctx, |s, c| s.on_timer(c, own));
            }
        }
    }

    fn on_restart(&mut self, ctx: &mut XCtx<'_, S::Msg>) {
        match self {
            ExternalProcess::Node(node) => node.on_init(ctx, true),
            ExternalProcess::Service(host) => host.call(ctx, |s, c| s.on_restart(c)),
        }
    }

    fn restore(&mut self, durable: Option<DurableText>) {
        match self {
            ExternalProcess::Node(node) => node.restore(durable),
            ExternalProcess::Service(host) => host.inner.restore(durable.map(|_| ())),
        }
    }

    fn on_resign(&mut self, ctx: &mut XCtx<'_, S::Msg>) {
        if let ExternalProcess::Node(node) = self {
            node.on_resign(ctx);
        }
    }

    fn on_conf_change(&mut self, ctx: &mut XCtx<'_, S::Msg>, change: MemberChange) {
        if let ExternalProcess::Node(node) = self {
            node.on_conf_change(ctx, change);
        }
    }

    fn on_disconnect(&mut self, ctx: &mut XCtx<'_, S::Msg>, peer: NodeId) {
        match self {
            ExternalProcess::Node(node) => node.on_disconnect(ctx, peer),
            ExternalProcess::Service(host) => host.call(ctx, |s, c| s.on_disconnect(c, peer)),
        }
    }

    fn term(&self) -> u64 {
        match self {
            ExternalProcess::Node(node) => node.term(),
            ExternalProcess::Service(host) => host.inner.term(),
        }
    }

    /// A node writes with its own `write` effects; the workload does not write for it.
    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        match self {
            ExternalProcess::Node(node) => node.known_leader(),
            ExternalProcess::Service(host) => host.inner.known_leader(),
        }
    }

    fn leads_service(&self) -> bool {
        match self {
            ExternalProcess::Node(_) => false,
            ExternalProcess::Service(host) => host.inner.leads_service(),
        }
    }

    fn is_service_gateway(&self) -> bool {
        match self {
            ExternalProcess::Node(_) => false,
            ExternalProcess::Service(host) => host.inner.is_service_gateway(),
        }
    }

    fn service_member_used(&self) -> Option<NodeId> {
        match self {
            ExternalProcess::Node(node) => node.service_member_used(),
            ExternalProcess::Service(_) => None,
        }
    }

    /// What the node last reported (its term and leader); the engine asks it nothing more.
    fn inspect(&self) -> Vec<(&'static str, String)> {
        match self {
            ExternalProcess::Node(node) => node.inspect(),
            ExternalProcess::Service(host) => host.inner.inspect(),
        }
    }

    fn digest(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        match self {
            ExternalProcess::Node(node) => node.digest(),
            ExternalProcess::Service(_) => None,
        }
    }
}

/// The service of a run without one: it never runs.
impl Process for super::wire::NoService {
    type Msg = super::wire::NoService;
    type Timer = ExternalTimer;
    type Durable = ();
    fn on_start(&mut self, _: &mut Ctx<'_, Self::Msg, ExternalTimer>) {
        match *self {}
    }
    fn on_message(&mut self, _: &mut Ctx<'_, Self::Msg, ExternalTimer>, _: NodeId, _: Self::Msg) {
        match *self {}
    }
    fn on_timer(&mut self, _: &mut Ctx<'_, Self::Msg, ExternalTimer>, _: ExternalTimer) {
        match *self {}
    }
    fn on_restart(&mut self, _: &mut Ctx<'_, Self::Msg, ExternalTimer>) {
        match *self {}
    }
    fn term(&self) -> u64 {
        match *self {}
    }
    fn write_token(&self, _: LocalNanos) -> Option<u64> {
        match *self {}
    }
    fn known_leader(&self) -> Option<NodeId> {
        match *self {}
    }
}
