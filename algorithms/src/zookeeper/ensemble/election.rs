//! FastLeaderElection between the servers (`server/quorum/FastLeaderElection.java`,
//! `lookForLeader`): each LOOKING server proposes the best vote it knows (higher epoch, then
//! zxid, then id: `totalOrderPredicate`), tells every other server on each change, and
//! decides `finalizeWait` (200 ms) after a quorum agrees if no better vote arrives. Without
//! news it re-sends its notifications, the wait doubling from 200 ms to 60 s
//! (`notTimeout`, `maxNotificationInterval`). A server that follows or leads answers a
//! LOOKING one with its elected vote (`WorkerReceiver`); a quorum of such answers naming a
//! leader that says LEADING makes the LOOKING server follow it (`outofelection`,
//! `checkLeader`).

use super::{Vote, ZkCtx, ZkServer};
use crate::zookeeper::messages::{ZkMsg, ZkPeerState, ZkTimer};
use splitbrain_sim::NodeId;

/// `FastLeaderElection.finalizeWait`, also the first notification timeout
/// (`minNotificationInterval`).
pub const FINALIZE_WAIT_NS: u64 = 200_000_000;

/// `FastLeaderElection.maxNotificationInterval`.
pub const MAX_NOTIFICATION_INTERVAL_NS: u64 = 60_000_000_000;

impl ZkServer {
    fn own_vote(&self) -> Vote {
        Vote {
            leader: self.me,
            zxid: self.last_zxid(),
            epoch: self.current_epoch,
        }
    }

    fn notification(&self, vote: Vote) -> ZkMsg {
        ZkMsg::Notification {
            round: self.election.round,
            leader: vote.leader,
            zxid: vote.zxid,
            epoch: vote.epoch,
            state: self.state(),
        }
    }

    fn send_notifications(&self, ctx: &mut ZkCtx<'_, '_>) {
        let msg = self.notification(self.election.vote);
        let peers: Vec<NodeId> = self.peers().collect();
        for peer in peers {
            ctx.send(peer, msg.clone());
        }
    }

    /// Leaves service (if serving) and starts a new election round.
    pub(super) fn start_looking(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        self.leave_service(ctx);
        self.elected = None;
        let vote = self.own_vote();
        let e = &mut self.election;
        e.round += 1;
        e.vote = vote;
        e.votes.clear();
        e.votes.insert(self.me, vote);
        e.out_of_election.clear();
        e.not_timeout_ns = FINALIZE_WAIT_NS;
        e.finalizing = false;
        ctx.cancel_timer(ZkTimer::Finalize);
        self.send_notifications(ctx);
        ctx.set_timer(ZkTimer::Notify, self.election.not_timeout_ns);
    }

    /// A notification from server `from`.
    pub(super) fn on_notification(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        from: NodeId,
        round: u64,
        vote: Vote,
        state: ZkPeerState,
    ) {
        if !matches!(self.state(), ZkPeerState::Looking) {
            // WorkerReceiver: a LOOKING sender is told whom this server follows.
            if state == ZkPeerState::Looking
                && let Some(elected) = self.elected
            {
                ctx.send(from, self.notification(elected));
            }
            return;
        }
        match state {
            ZkPeerState::Looking => self.looking_vote(ctx, from, round, vote),
            ZkPeerState::Following | ZkPeerState::Leading => {
                self.settled_vote(ctx, from, round, vote, state)
            }
        }
    }

    fn looking_vote(&mut self, ctx: &mut ZkCtx<'_, '_>, from: NodeId, round: u64, vote: Vote) {
        let before = self.election.vote;
        if round > self.election.round {
            let own = self.own_vote();
            let e = &mut self.election;
            e.round = round;
            e.votes.clear();
            e.vote = if vote.beats(&own) { vote } else { own };
            self.send_notifications(ctx);
        } else if round < self.election.round {
            // WorkerReceiver: a sender behind is sent this server's current vote.
            ctx.send(from, self.notification(self.election.vote));
            return;
        } else if vote.beats(&self.election.vote) {
            self.election.vote = vote;
            self.send_notifications(ctx);
        }
        let e = &mut self.election;
        e.votes.insert(from, vote);
        e.votes.insert(self.me, e.vote);
        let agreeing = e.votes.values().filter(|v| **v == e.vote).count();
        if agreeing >= self.config.quorum() {
            // The finalize wait restarts with every notification; a better one (the vote
            // changed) ends it and the loop goes on.
            if before != e.vote && e.finalizing {
                e.finalizing = false;
            }
            e.finalizing = true;
            ctx.cancel_timer(ZkTimer::Notify);
            ctx.set_timer(ZkTimer::Finalize, FINALIZE_WAIT_NS);
        } else {
            e.finalizing = false;
            ctx.cancel_timer(ZkTimer::Finalize);
            ctx.set_timer(ZkTimer::Notify, e.not_timeout_ns);
        }
    }

    fn settled_vote(
        &mut self,
        ctx: &mut ZkCtx<'_, '_>,
        from: NodeId,
        round: u64,
        vote: Vote,
        state: ZkPeerState,
    ) {
        let e = &mut self.election;
        e.out_of_election.insert(from, (vote, state));
        // The server itself joins whoever a quorum (itself counted) follows, if the leader
        // said so itself.
        let naming = e
            .out_of_election
            .values()
            .filter(|(v, _)| *v == vote)
            .count()
            + 1;
        let leader_says = e
            .out_of_election
            .get(&vote.leader)
            .is_some_and(|(v, s)| *v == vote && *s == ZkPeerState::Leading);
        if vote.leader != self.me && naming >= self.config.quorum() && leader_says {
            self.election.round = self.election.round.max(round);
            self.election.vote = vote;
            self.decide(ctx);
        } else if !self.election.finalizing {
            ctx.set_timer(ZkTimer::Notify, self.election.not_timeout_ns);
        }
    }

    /// No notification within `notTimeout`: send again, wait twice as long.
    pub(super) fn on_notify_timeout(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if self.state() != ZkPeerState::Looking || self.election.finalizing {
            return;
        }
        self.send_notifications(ctx);
        let e = &mut self.election;
        e.not_timeout_ns = (e.not_timeout_ns * 2).min(MAX_NOTIFICATION_INTERVAL_NS);
        ctx.set_timer(ZkTimer::Notify, e.not_timeout_ns);
    }

    /// `finalizeWait` passed with no better vote: the election is decided.
    pub(super) fn on_finalize(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        if self.state() == ZkPeerState::Looking && self.election.finalizing {
            self.decide(ctx);
        }
    }

    fn decide(&mut self, ctx: &mut ZkCtx<'_, '_>) {
        ctx.cancel_timer(ZkTimer::Notify);
        ctx.cancel_timer(ZkTimer::Finalize);
        self.election.finalizing = false;
        let vote = self.election.vote;
        self.elected = Some(vote);
        if vote.leader == self.me {
            self.become_leader(ctx);
        } else {
            self.become_follower(ctx, vote.leader);
        }
    }
}
