//! The processes of an external run: the nodes, and the modeled service they may be clients
//! of, hosted so that its own messages and timers sit beside the nodes' in one run.

use super::node::{DurableText, ExternalNode, ExternalTimer};
use super::wire::Wire;
use serde::de::DeserializeOwned;
use serde::Serialize;
use splitbrain_sim::nested::Embedding;
use splitbrain_sim::{Ctx, LocalNanos, MemberChange, Message, NodeId, Process, TimerKind};
use std::marker::PhantomData;
use std::sync::Arc;

/// A process of an external run whose service speaks `M`: a node ([`NodeHost`]) or a process
/// of the modeled service ([`ServiceHost`]), each a [`Process`] of its own, hosted side by
/// side as the built-in algorithms' clients and service processes are
/// ([`crate::hosted`]).
pub type ExternalProcess<M> =
    Box<dyn Process<Msg = Wire<M>, Timer = ExternalTimer, Durable = DurableText>>;

/// An election member run as an OS process, in a run whose service speaks `M` (no service:
/// [`super::NoService`]).
#[derive(Debug)]
pub struct NodeHost<M> {
    node: ExternalNode,
    service: PhantomData<fn() -> M>,
}

impl<M> NodeHost<M> {
    /// `node`, hosted.
    pub fn new(node: ExternalNode) -> Self {
        Self {
            node,
            service: PhantomData,
        }
    }
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

impl<M> Process for NodeHost<M>
where
    M: Message + Serialize + DeserializeOwned,
{
    type Msg = Wire<M>;
    type Timer = ExternalTimer;
    type Durable = DurableText;

    fn on_start(&mut self, ctx: &mut XCtx<'_, M>) {
        self.node.on_init(ctx, false);
    }

    fn on_message(&mut self, ctx: &mut XCtx<'_, M>, from: NodeId, msg: Wire<M>) {
        self.node.on_message(ctx, from, msg);
    }

    fn on_timer(&mut self, ctx: &mut XCtx<'_, M>, timer: ExternalTimer) {
        self.node.on_timer(ctx, timer);
    }

    fn on_restart(&mut self, ctx: &mut XCtx<'_, M>) {
        self.node.on_init(ctx, true);
    }

    fn restore(&mut self, durable: Option<DurableText>) {
        self.node.restore(durable);
    }

    fn on_resign(&mut self, ctx: &mut XCtx<'_, M>) {
        self.node.on_resign(ctx);
    }

    fn on_conf_change(&mut self, ctx: &mut XCtx<'_, M>, change: MemberChange) {
        self.node.on_conf_change(ctx, change);
    }

    fn on_disconnect(&mut self, ctx: &mut XCtx<'_, M>, peer: NodeId) {
        self.node.on_disconnect(ctx, peer);
    }

    fn term(&self) -> u64 {
        self.node.term()
    }

    /// A node writes with its own `write` effects; the workload does not write for it.
    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        self.node.known_leader()
    }

    fn service_member_used(&self) -> Option<NodeId> {
        self.node.service_member_used()
    }

    /// What the node last reported (its term and leader); the engine asks it nothing more.
    fn inspect(&self) -> Vec<(&'static str, String)> {
        self.node.inspect()
    }

    fn digest(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        self.node.digest()
    }
}

impl<S> Process for ServiceHost<S>
where
    S: Process<Durable = ()>,
    S::Msg: Serialize + DeserializeOwned,
{
    type Msg = Wire<S::Msg>;
    type Timer = ExternalTimer;
    type Durable = DurableText;

    fn on_start(&mut self, ctx: &mut XCtx<'_, S::Msg>) {
        self.call(ctx, |s, c| s.on_start(c));
    }

    /// The service's own messages; a node's own message never reaches it (the node's send
    /// turned every body for the service into the service's form).
    fn on_message(&mut self, ctx: &mut XCtx<'_, S::Msg>, from: NodeId, msg: Wire<S::Msg>) {
        if let Wire::Service { msg, .. } = msg {
            self.call(ctx, |s, c| s.on_message(c, from, msg));
        }
    }

    fn on_timer(&mut self, ctx: &mut XCtx<'_, S::Msg>, timer: ExternalTimer) {
        let own = self.own_timer(timer);
        self.call(ctx, |s, c| s.on_timer(c, own));
    }

    fn on_restart(&mut self, ctx: &mut XCtx<'_, S::Msg>) {
        self.call(ctx, |s, c| s.on_restart(c));
    }

    fn restore(&mut self, durable: Option<DurableText>) {
        self.inner.restore(durable.map(|_| ()));
    }

    fn on_disconnect(&mut self, ctx: &mut XCtx<'_, S::Msg>, peer: NodeId) {
        self.call(ctx, |s, c| s.on_disconnect(c, peer));
    }

    fn term(&self) -> u64 {
        self.inner.term()
    }

    fn write_token(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        None
    }

    fn known_leader(&self) -> Option<NodeId> {
        self.inner.known_leader()
    }

    fn leads_service(&self) -> bool {
        self.inner.leads_service()
    }

    fn is_service_gateway(&self) -> bool {
        self.inner.is_service_gateway()
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        self.inner.inspect()
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
