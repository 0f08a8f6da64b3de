//! Runs the member's [`RaftNode`] (algorithms/src/raft, unchanged in its election rules) on a
//! context of its own (ids `0..n`, the member's clocks, the member's random stream) and
//! turns what it asks for into the member's effects: Raft messages travel as
//! [`EtcdMsg::Raft`] to process `first + i`, with the proposals of the entries an `Append`
//! carries; Raft's timers become the member's `Raft*` timer slots; its durable writes are the
//! member's (the WAL: what the member sends after one waits for it). Its leadership claims,
//! step-downs and signals never reach the engine: a service member is not an election member,
//! and the checker would count it as a leader. The member reads the Raft's role instead.

use super::EtcdMember;
use crate::etcd::messages::{EtcdMsg, EtcdTimer};
use crate::raft::{Durable, RaftMsg, RaftNode, RaftTimer};
use splitbrain_sim::nested::Embedding;
use splitbrain_sim::{Ctx, Effect, NodeId};

type MemberCtx<'a, 'b> = Ctx<'a, EtcdMsg, EtcdTimer>;
type RaftEffect = Effect<RaftMsg, RaftTimer, Durable>;

/// The member's timer slot for a Raft timer.
pub(crate) fn outer_timer(timer: RaftTimer) -> EtcdTimer {
    match timer {
        RaftTimer::Election => EtcdTimer::RaftElection,
        RaftTimer::Heartbeat => EtcdTimer::RaftHeartbeat,
        RaftTimer::CheckQuorum => EtcdTimer::RaftCheckQuorum,
        RaftTimer::Transfer => EtcdTimer::RaftTransfer,
        RaftTimer::Propose => EtcdTimer::RaftPropose,
    }
}

/// The Raft timer behind a member's timer slot, if it is one.
pub(crate) fn inner_timer(timer: EtcdTimer) -> Option<RaftTimer> {
    Some(match timer {
        EtcdTimer::RaftElection => RaftTimer::Election,
        EtcdTimer::RaftHeartbeat => RaftTimer::Heartbeat,
        EtcdTimer::RaftCheckQuorum => RaftTimer::CheckQuorum,
        EtcdTimer::RaftTransfer => RaftTimer::Transfer,
        EtcdTimer::RaftPropose => RaftTimer::Propose,
        _ => return None,
    })
}

/// The Raft node's effects as the member's: its messages to process `first + i` with their
/// proposals, its timers in the member's `Raft*` slots, its durable writes the member's (the
/// WAL: the member's state is kept in memory, see the module doc of `cluster`; the write's
/// latency and ordering are the disk's). Its claims, step-downs, signals, writes,
/// disconnects and log lines stay inside: the member reads its Raft's role instead.
impl Embedding<RaftMsg, RaftTimer, Durable> for EtcdMember {
    type Msg = EtcdMsg;
    type Timer = EtcdTimer;
    type Durable = ();

    fn message(&self, to: NodeId, msg: RaftMsg) -> (NodeId, EtcdMsg) {
        let proposals = self.proposals_for(&msg);
        (
            self.process_of(to.index()),
            EtcdMsg::Raft { msg, proposals },
        )
    }

    fn timer(&self, timer: RaftTimer) -> EtcdTimer {
        outer_timer(timer)
    }

    fn durable(&self, _: Durable) {}

    fn passes_through(&self) -> bool {
        false
    }
}

impl EtcdMember {
    /// Calls `f` on the Raft node with a context of its own; returns its result and effects.
    pub(crate) fn raft_call<R>(
        &mut self,
        ctx: &mut MemberCtx<'_, '_>,
        f: impl FnOnce(&mut RaftNode, &mut Ctx<'_, RaftMsg, RaftTimer, Durable>) -> R,
    ) -> (R, Vec<RaftEffect>) {
        let me = NodeId::from(self.index);
        let raft = &mut self.raft;
        ctx.nested(me, self.size, |c| f(raft, c))
    }

    /// Carries out what the Raft node asked for, as the member's own effects.
    pub(crate) fn raft_effects(&self, ctx: &mut MemberCtx<'_, '_>, out: Vec<RaftEffect>) {
        ctx.carry_out(out, self);
    }

    /// The proposals of the entries an `Append` carries, by index.
    fn proposals_for(&self, msg: &RaftMsg) -> Vec<(u64, crate::etcd::messages::Proposal)> {
        let RaftMsg::Append {
            prev_log_index,
            entry_term,
            entries,
            ..
        } = *msg
        else {
            return Vec::new();
        };
        let last = prev_log_index.saturating_add(entries);
        self.proposals
            .range(prev_log_index.saturating_add(1)..=last)
            .filter(|(_, (term, _))| *term == entry_term)
            .map(|(index, (_, proposal))| (*index, proposal.clone()))
            .collect()
    }
}
