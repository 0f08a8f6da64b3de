//! The leader's side: heartbeats, check-quorum, and leadership transfer.

use super::log::LogPosition;
use super::messages::{RaftMsg, RaftTimer};
use super::node::{RaftCtx, RaftNode, Role};
use splitbrain_sim::NodeId;

impl RaftNode {
    /// Paper §5.2: the leader sends empty AppendEntries to every peer to keep its authority.
    pub(crate) fn broadcast_heartbeat(&self, ctx: &mut RaftCtx<'_>) {
        let term = self.durable.current_term;
        for peer in self.peers() {
            let matched = self.volatile.peers[peer.index()].match_index;
            let commit = self.commit_index.min(matched);
            ctx.send(peer, RaftMsg::AppendEntries { term, commit });
        }
    }

    /// Records a follower's answer to a heartbeat: it is alive (thesis §6.2) and its log
    /// ends at `position` (thesis §3.10 picks the transfer target by it).
    pub(crate) fn handle_append_entries_resp(
        &mut self,
        ctx: &mut RaftCtx<'_>,
        from: NodeId,
        term: u64,
        position: LogPosition,
    ) {
        if term > self.durable.current_term {
            // Paper §5.1: a leader that learns of a later term steps down.
            self.become_follower(ctx, term, None);
            return;
        }
        if self.volatile.role != Role::Leader || term != self.durable.current_term {
            return;
        }
        let progress = &mut self.volatile.peers[from.index()];
        progress.heard_this_round = true;
        progress.last_response_local = Some(ctx.monotonic_now());
        progress.position = Some(position);
        self.resume_probe(ctx, from);
        if self.embedded {
            self.catch_up(ctx, from, position);
        }
    }

    /// Thesis §6.2: every minimum election timeout, a leader that did not hear from a
    /// majority (itself included) since the last check steps down, in the same term.
    pub(crate) fn on_check_quorum(&mut self, ctx: &mut RaftCtx<'_>) {
        if self.volatile.role != Role::Leader || !self.config.check_quorum {
            return;
        }
        let heard = 1 + self
            .volatile
            .peers
            .iter()
            .filter(|progress| progress.heard_this_round)
            .count();
        if heard < self.quorum() {
            let term = self.durable.current_term;
            self.become_follower(ctx, term, None);
            return;
        }
        for progress in &mut self.volatile.peers {
            progress.heard_this_round = false;
        }
        ctx.set_timer(RaftTimer::CheckQuorum, self.config.election_timeout_min_ns);
    }

    /// Thesis §3.10: hand leadership to the most up-to-date peer that answered recently.
    /// The leader stops serving writes, sends TimeoutNow, and gives up on the transfer after
    /// one maximum election timeout. Nothing happens on a non-leader, during a transfer, or
    /// when no peer answered recently.
    pub(crate) fn start_transfer(&mut self, ctx: &mut RaftCtx<'_>) {
        if self.volatile.role != Role::Leader || self.volatile.transfer_target.is_some() {
            return;
        }
        let Some(target) = self.transfer_candidate(ctx.monotonic_now()) else {
            return;
        };
        self.volatile.transfer_target = Some(target);
        ctx.set_timer(RaftTimer::Transfer, self.config.election_timeout_max_ns);
        let term = self.durable.current_term;
        ctx.send(target, RaftMsg::TimeoutNow { term });
    }

    /// The peer with the most up-to-date log (paper §5.4.1 order) among those whose last
    /// answer is within the minimum election timeout; ties go to the lowest id.
    pub(crate) fn transfer_candidate(&self, local_now: i64) -> Option<NodeId> {
        let recent_ns = i128::from(self.config.election_timeout_min_ns);
        let mut best: Option<(NodeId, LogPosition)> = None;
        for peer in self.peers() {
            let progress = &self.volatile.peers[peer.index()];
            let (Some(answered), Some(position)) =
                (progress.last_response_local, progress.position)
            else {
                continue;
            };
            if i128::from(local_now) - i128::from(answered) > recent_ns {
                continue;
            }
            // Peers come in id order, so only a strictly better log replaces the best.
            let better = match best {
                None => true,
                Some((_, best_position)) => !best_position.at_least_as_up_to_date_as(position),
            };
            if better {
                best = Some((peer, position));
            }
        }
        best.map(|(peer, _)| peer)
    }

    /// Thesis §3.10: a transfer that did not complete within an election timeout is
    /// aborted, and the leader serves again.
    pub(crate) fn on_transfer_timeout(&mut self, _ctx: &mut RaftCtx<'_>) {
        if self.volatile.role == Role::Leader {
            self.volatile.transfer_target = None;
        }
    }
}
