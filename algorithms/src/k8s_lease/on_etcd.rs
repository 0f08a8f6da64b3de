//! An etcd cluster member inside a Kubernetes Lease run (`etcd_members` > 1): the cluster
//! model of `crate::etcd::cluster`, unchanged, run nested ([`splitbrain_sim::nested`]): etcd
//! messages travel as [`K8sMsg::Etcd`], etcd timers in the [`K8sTimer::Etcd`] slots, in the
//! order the member asked for them: a send after a disk write still waits for it.

use super::messages::{K8sMsg, K8sTimer};
use crate::etcd::{EtcdMember, EtcdMsg, EtcdTimer};
use splitbrain_sim::nested::Embedding;
use splitbrain_sim::{Ctx, NodeId};

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

/// Calls `f` on `member` with an etcd context and carries out what it asked for.
pub(super) fn member_call(
    member: &mut EtcdMember,
    ctx: &mut K8sCtx<'_, '_>,
    f: impl FnOnce(&mut EtcdMember, &mut Ctx<'_, EtcdMsg, EtcdTimer>),
) {
    let (me, members) = (ctx.me(), ctx.members());
    ctx.run_nested(me, members, &OnEtcd, |c| f(member, c));
}
