//! The leader's seat as a coordination service sees it, for the election recipes on etcd and
//! ZooKeeper: the holder's record (its key under the prefix, its child of the election
//! node) goes with its lease or session, and the lowest record is the leader's. Written once
//! for the one-process services, the etcd cluster and the ZooKeeper ensemble.

use splitbrain_sim::{Ctx, Message, NodeId, Signal, TimerKind};

/// `holder`'s record is gone: its lease ended. If it was the lowest (`led`), an expiry
/// (`expired`) is the leader's lease expiring, and the seat is vacant until the next claim
/// (`term`: the service's revision or zxid after the removal), signalled once while
/// `vacancy_signalled` stays set (records removed by one event leave the seat vacant once).
pub(crate) fn record_removed<M: Message, T: TimerKind>(
    ctx: &mut Ctx<'_, M, T>,
    holder: NodeId,
    (led, expired): (bool, bool),
    term: u64,
    vacancy_signalled: &mut bool,
) {
    ctx.signal(Signal::LeaseEnded { holder });
    if expired && led {
        ctx.signal(Signal::LeaseExpired { holder });
    }
    if led && !*vacancy_signalled {
        *vacancy_signalled = true;
        ctx.signal(Signal::ElectionStarted { term });
    }
}
