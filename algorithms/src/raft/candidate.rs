//! The asking side of an election: a pre-candidate's and a candidate's requests, their
//! retries, and the counting of answers.

use super::messages::RaftMsg;
use super::node::{RaftCtx, RaftNode, Role};
use splitbrain_sim::{NodeId, Signal};

impl RaftNode {
    /// Starts an election the way the options say: a pre-vote first (thesis §9.6), or a
    /// real election straight away (paper §5.2).
    pub(crate) fn campaign(&mut self, ctx: &mut RaftCtx<'_>) {
        if self.config.pre_vote {
            self.become_pre_candidate(ctx);
        } else {
            self.become_candidate(ctx, false);
        }
    }

    /// Paper §5.2: the election timer fired without word from a leader or a won election.
    pub(crate) fn on_election_timeout(&mut self, ctx: &mut RaftCtx<'_>) {
        match self.volatile.role {
            Role::Follower => ctx.signal(Signal::LeaderSuspected),
            Role::PreCandidate => {
                ctx.signal(Signal::ElectionRoundFailed {
                    term: self.durable.current_term + 1,
                });
            }
            // Paper §5.2: a split vote ends in a timeout and a new election with term + 1
            // (through a fresh pre-vote when pre-vote is on, thesis §9.6).
            Role::Candidate => {
                ctx.signal(Signal::ElectionRoundFailed {
                    term: self.durable.current_term,
                });
            }
            // A leader's election timer is cancelled; a stale firing means nothing.
            Role::Leader => return,
        }
        self.campaign(ctx);
    }

    /// The grants counted so far in this round, our own included.
    pub(crate) fn granted_votes(&self) -> usize {
        self.volatile
            .votes
            .iter()
            .filter(|vote| **vote == Some(true))
            .count()
    }

    /// Sends this round's request to every peer that has not answered yet: at the start of
    /// a round that is every peer, and on each retry (paper §5.1: servers retry RPCs that
    /// get no timely response) only the silent ones.
    pub(crate) fn send_vote_requests(&self, ctx: &mut RaftCtx<'_>) {
        let position = self.log_position();
        let request = match self.volatile.role {
            // Thesis §9.6: the pre-vote proposes the next term without taking it.
            Role::PreCandidate => RaftMsg::PreVote {
                term: self.durable.current_term + 1,
                last_log_index: position.last_index,
                last_log_term: position.last_term,
            },
            Role::Candidate => RaftMsg::RequestVote {
                term: self.durable.current_term,
                last_log_index: position.last_index,
                last_log_term: position.last_term,
                transfer: self.volatile.transfer_campaign,
            },
            Role::Follower | Role::Leader => return,
        };
        for peer in self.peers() {
            if self.volatile.votes[peer.index()].is_none() {
                ctx.send(peer, request.clone());
            }
        }
    }

    /// Thesis §9.6: count pre-votes; a majority (ourselves included) lets us run for real.
    pub(crate) fn handle_pre_vote_resp(
        &mut self,
        ctx: &mut RaftCtx<'_>,
        from: NodeId,
        term: u64,
        granted: bool,
    ) {
        // A refusal from a later term means we are behind: follow that term (paper §5.1).
        // A grant carries the term we proposed, which is never a reason to step down.
        if !granted && term > self.durable.current_term {
            self.become_follower(ctx, term, None);
            return;
        }
        if self.volatile.role != Role::PreCandidate {
            return;
        }
        if granted && term != self.durable.current_term + 1 {
            return; // a grant for a proposal we no longer make
        }
        let vote = &mut self.volatile.votes[from.index()];
        if vote.is_none() {
            *vote = Some(granted);
        }
        if self.granted_votes() >= self.quorum() {
            self.become_candidate(ctx, false);
        }
    }

    /// Paper §5.2: a candidate that gathers votes from a majority wins the election.
    pub(crate) fn handle_request_vote_resp(
        &mut self,
        ctx: &mut RaftCtx<'_>,
        from: NodeId,
        term: u64,
        granted: bool,
    ) {
        if term > self.durable.current_term {
            self.become_follower(ctx, term, None);
            return;
        }
        if self.volatile.role != Role::Candidate || term != self.durable.current_term {
            return; // late, duplicated, or for an earlier round
        }
        // One answer per voter: a duplicated grant must not count twice.
        let vote = &mut self.volatile.votes[from.index()];
        if vote.is_none() {
            *vote = Some(granted);
        }
        if self.granted_votes() >= self.quorum() {
            self.become_leader(ctx);
        }
    }
}
