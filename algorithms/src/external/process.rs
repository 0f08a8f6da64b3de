//! The processes of an external run: the nodes, and the modeled service they may be clients
//! of, hosted so that its own messages and timers sit beside the nodes' in one run.

use super::node::{DurableText, ExternalNode, ExternalTimer};
use super::wire::Wire;
use serde::de::DeserializeOwned;
use serde::Serialize;
use splitbrain_sim::{Ctx, Effect, LocalNanos, MemberChange, Message, NodeId, Process, TimerKind};
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

    /// Runs one handler of the service with a context of its own types, and hands what it
    /// did to the run's context.
    fn call(
        &mut self,
        ctx: &mut XCtx<'_, S::Msg>,
        handler: impl FnOnce(&mut S, &mut Ctx<'_, S::Msg, S::Timer>),
    ) {
        let mut out = Vec::new();
        let (me, members, stream) = (ctx.me(), ctx.members(), ctx.stream());
        let (mono, wall) = (ctx.monotonic_now(), ctx.wall_now());
        {
            let mut inner = Ctx::new(me, members, mono, ctx.rng(), &mut out)
                .with_wall_now(wall)
                .on_stream(stream);
            handler(&mut self.inner, &mut inner);
        }
        for effect in out {
            self.forward(ctx, effect);
        }
    }

    fn forward(&self, ctx: &mut XCtx<'_, S::Msg>, effect: Effect<S::Msg, S::Timer>) {
        let timer = |t: S::Timer| ExternalTimer::from_index(self.timer_offset + t.index());
        match effect {
            Effect::Send { to, msg } => {
                let kind = u16::try_from(self.message_offset + msg.kind()).expect("names fit");
                ctx.send(to, Wire::Service { kind, msg });
            }
            Effect::SendUnordered { to, msg } => {
                let kind = u16::try_from(self.message_offset + msg.kind()).expect("names fit");
                ctx.send_unordered(to, Wire::Service { kind, msg });
            }
            Effect::Disconnect { peer } => ctx.disconnect(peer),
            Effect::SetTimer {
                timer: t,
                after_local_ns,
            } => ctx.set_timer(timer(t), after_local_ns),
            Effect::SetWallTimer {
                timer: t,
                at_wall_ns,
            } => ctx.set_wall_timer(timer(t), at_wall_ns),
            Effect::CancelTimer { timer: t } => ctx.cancel_timer(timer(t)),
            Effect::Write { token } => ctx.write(token),
            Effect::BecameLeader { term, token } => ctx.became_leader(term, token),
            Effect::SteppedDown => ctx.stepped_down(),
            Effect::Signal(signal) => ctx.signal(signal),
            Effect::Persist(()) => ctx.persist(Arc::from("null")),
            Effect::Fail { reason } => ctx.fail(reason),
            Effect::Log { text } => ctx.log(text),
        }
    }

    /// The service's own timer for the run's slot `timer`.
    fn own_timer(&self, timer: ExternalTimer) -> S::Timer {
        S::Timer::from_index(timer.index() - self.timer_offset)
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
