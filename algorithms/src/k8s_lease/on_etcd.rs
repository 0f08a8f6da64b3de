//! An etcd cluster member inside a Kubernetes Lease run (`etcd_members` > 1): the cluster
//! model of `crate::etcd::cluster`, unchanged, run on a context of its own whose effects
//! become the run's (etcd messages travel as [`K8sMsg::Etcd`], etcd timers in the
//! [`K8sTimer::Etcd`] slots), in the order the member asked for them: a send after a disk
//! write still waits for it.

use super::messages::{K8sMsg, K8sTimer};
use crate::etcd::{EtcdMember, EtcdMsg, EtcdTimer};
use splitbrain_sim::{Ctx, Effect};

type K8sCtx<'a, 'b> = Ctx<'a, K8sMsg, K8sTimer>;

/// Calls `f` on `member` with an etcd context and carries out what it asked for.
pub(super) fn member_call(
    member: &mut EtcdMember,
    ctx: &mut K8sCtx<'_, '_>,
    f: impl FnOnce(&mut EtcdMember, &mut Ctx<'_, EtcdMsg, EtcdTimer>),
) {
    let mut out = Vec::new();
    let (me, members, stream) = (ctx.me(), ctx.members(), ctx.stream());
    let (now, wall) = (ctx.monotonic_now(), ctx.wall_now());
    let mut inner = Ctx::new(me, members, now, ctx.rng(), &mut out)
        .with_wall_now(wall)
        .on_stream(stream);
    f(member, &mut inner);
    for effect in out {
        match effect {
            Effect::Send { to, msg } => ctx.send(to, K8sMsg::Etcd { msg }),
            Effect::SendUnordered { to, msg } => ctx.send_unordered(to, K8sMsg::Etcd { msg }),
            Effect::Disconnect { peer } => ctx.disconnect(peer),
            Effect::SetTimer {
                timer,
                after_local_ns,
            } => ctx.set_timer(K8sTimer::Etcd(timer), after_local_ns),
            Effect::SetWallTimer { timer, at_wall_ns } => {
                ctx.set_wall_timer(K8sTimer::Etcd(timer), at_wall_ns)
            }
            Effect::CancelTimer { timer } => ctx.cancel_timer(K8sTimer::Etcd(timer)),
            Effect::Write { token } => ctx.write(token),
            Effect::BecameLeader { term, token } => ctx.became_leader(term, token),
            Effect::SteppedDown => ctx.stepped_down(),
            Effect::Signal(signal) => ctx.signal(signal),
            Effect::Persist(()) => ctx.persist(()),
            Effect::Log { text } => ctx.log(text),
            Effect::Fail { reason } => ctx.fail(reason),
        }
    }
}
