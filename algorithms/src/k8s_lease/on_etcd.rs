//! An etcd cluster member inside a Kubernetes Lease run (`etcd_members` > 1): the cluster
//! model of `crate::etcd::cluster`, unchanged, run nested ([`splitbrain_sim::nested`]): etcd
//! messages travel as [`K8sMsg::Etcd`], etcd timers in the [`K8sTimer::Etcd`] slots, in the
//! order the member asked for them: a send after a disk write still waits for it.

use super::messages::{K8sMsg, K8sTimer};
use crate::etcd::{EtcdMember, EtcdMsg, EtcdTimer};
use splitbrain_sim::nested::Embedding;
use splitbrain_sim::{Ctx, LocalNanos, NodeId, Process};

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

/// An etcd member's effects as the run's: its messages as [`K8sMsg::Etcd`], its timers in
/// the [`K8sTimer::Etcd`] slots, everything else as it is.
struct OnEtcd;

impl Embedding<EtcdMsg, EtcdTimer, ()> for OnEtcd {
    type Msg = K8sMsg;
    type Timer = K8sTimer;
    type Durable = ();

    fn message(&self, to: NodeId, msg: EtcdMsg) -> (NodeId, K8sMsg) {
        (to, K8sMsg::Etcd { msg })
    }

    fn timer(&self, timer: EtcdTimer) -> K8sTimer {
        K8sTimer::Etcd(timer)
    }

    fn durable(&self, (): ()) {}
}

/// An etcd member storing the Lease, hosted in a Kubernetes Lease run: each handler runs
/// nested with an etcd context, and what it asked for is carried out as the run's.
#[derive(Clone, Debug)]
pub struct EtcdOnK8s {
    /// The member, unchanged.
    pub member: EtcdMember,
}

impl EtcdOnK8s {
    /// Calls `f` on the member with an etcd context and carries out what it asked for.
    fn call(
        &mut self,
        ctx: &mut K8sCtx<'_, '_>,
        f: impl FnOnce(&mut EtcdMember, &mut Ctx<'_, EtcdMsg, EtcdTimer>),
    ) {
        let (me, members) = (ctx.me(), ctx.members());
        let member = &mut self.member;
        ctx.run_nested(me, members, &OnEtcd, |c| f(member, c));
    }
}

impl Process for EtcdOnK8s {
    type Msg = K8sMsg;
    type Timer = K8sTimer;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        self.call(ctx, |m, c| m.on_start(c));
    }

    /// etcd's messages reach the member; nothing else is sent to it.
    fn on_message(&mut self, ctx: &mut K8sCtx<'_, '_>, from: NodeId, msg: K8sMsg) {
        if let K8sMsg::Etcd { msg } = msg {
            self.call(ctx, |m, c| m.on_message(c, from, msg));
        }
    }

    fn on_timer(&mut self, ctx: &mut K8sCtx<'_, '_>, timer: K8sTimer) {
        if let K8sTimer::Etcd(timer) = timer {
            self.call(ctx, |m, c| m.on_timer(c, timer));
        }
    }

    fn on_restart(&mut self, ctx: &mut K8sCtx<'_, '_>) {
        self.call(ctx, |m, c| m.on_restart(c));
    }

    /// The member's revision.
    fn term(&self) -> u64 {
        self.member.revision()
    }

    fn write_token(&self, _now: LocalNanos) -> Option<u64> {
        None
    }

    /// The etcd members never name an elector: the Lease's holder is the API servers'
    /// business.
    fn known_leader(&self) -> Option<NodeId> {
        None
    }

    /// An etcd member leads the cluster while its Raft leads.
    fn leads_service(&self) -> bool {
        self.member.leads()
    }

    fn inspect(&self) -> Vec<(&'static str, String)> {
        self.member.inspect()
    }
}
