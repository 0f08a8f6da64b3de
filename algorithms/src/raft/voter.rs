//! The receiving side of an election, in any role: answering PreVote and RequestVote,
//! following a leader's heartbeats, and obeying TimeoutNow.

use super::log::LogPosition;
use super::messages::RaftMsg;
use super::node::{DurableWrite, RaftCtx, RaftNode, Role};
use splitbrain_sim::{NodeId, Signal};

impl RaftNode {
    /// Thesis §9.6: answer a pre-vote. The answer never changes this node's term, vote or
    /// timers: a pre-vote that cannot lead to a won election must leave no trace.
    pub(crate) fn handle_pre_vote(
        &mut self,
        ctx: &mut RaftCtx<'_>,
        from: NodeId,
        proposed_term: u64,
        candidate_log: LogPosition,
    ) {
        let current_term = self.durable.current_term;
        // A proposal for a term this node already reached cannot be won; the refusal carries
        // our term so that the lagging pre-candidate catches up (paper §5.1).
        let refuse = RaftMsg::PreVoteResp {
            term: current_term,
            granted: false,
        };
        if proposed_term <= current_term {
            ctx.send(from, refuse);
            return;
        }
        // Thesis §9.6: grant only if no heartbeat from a valid leader arrived within the
        // minimum election timeout.
        if self.leader_heard_recently(ctx.monotonic_now()) {
            ctx.signal(Signal::DisruptionPrevented);
            ctx.send(from, refuse);
            return;
        }
        // Paper §5.4.1, applied to the proposed election.
        if !candidate_log.at_least_as_up_to_date_as(self.log_position()) {
            ctx.send(from, refuse);
            return;
        }
        ctx.send(
            from,
            RaftMsg::PreVoteResp {
                term: proposed_term,
                granted: true,
            },
        );
    }

    /// Paper §5.2 and §5.4.1: grant at most one vote per term, first come first served, and
    /// only to a candidate whose log is at least as up-to-date as ours.
    pub(crate) fn handle_request_vote(
        &mut self,
        ctx: &mut RaftCtx<'_>,
        from: NodeId,
        term: u64,
        candidate_log: LogPosition,
        transfer: bool,
    ) {
        // Paper §5.1: a request from a stale term is rejected.
        if term < self.durable.current_term {
            let current_term = self.durable.current_term;
            ctx.send(
                from,
                RaftMsg::RequestVoteResp {
                    term: current_term,
                    granted: false,
                },
            );
            return;
        }
        // Thesis §4.2.3: with check-quorum, a server that heard from a current leader within
        // the minimum election timeout neither updates its term nor grants its vote, unless
        // the leader itself asked for this election (thesis §3.10).
        if self.config.check_quorum && !transfer && self.leader_heard_recently(ctx.monotonic_now())
        {
            ctx.signal(Signal::DisruptionPrevented);
            let current_term = self.durable.current_term;
            ctx.send(
                from,
                RaftMsg::RequestVoteResp {
                    term: current_term,
                    granted: false,
                },
            );
            return;
        }
        // Paper §5.1: a higher term is adopted at once, and the vote is cleared with it.
        // Whether that alone restarts the election timer is `timer_reset`'s choice: under
        // the paper's rule a vote refused below keeps this node's deadline.
        if term > self.durable.current_term {
            self.become_follower(ctx, term, None);
        }
        let vote_free = match self.durable.voted_for {
            None => true,
            Some(voted) => voted == from,
        };
        let granted = vote_free && candidate_log.at_least_as_up_to_date_as(self.log_position());
        if granted {
            // Paper figure 2: the vote is durable before the reply leaves.
            self.durable.voted_for = Some(from);
            self.persist(ctx, DurableWrite::Vote);
            // Paper figure 2 and §5.2: a follower that grants a vote resets its election
            // timer (LogCabin `handleRequestVote`: `setElectionTimer` after the grant).
            self.reset_election_timer(ctx);
        }
        ctx.send(from, RaftMsg::RequestVoteResp { term, granted });
    }

    /// Paper §5.2: a heartbeat from a leader of our term or later makes us its follower and
    /// resets the election timer; one from an older term is answered with our term so the
    /// stale leader steps down (paper §5.1).
    pub(crate) fn handle_append_entries(&mut self, ctx: &mut RaftCtx<'_>, from: NodeId, term: u64) {
        let position = self.log_position();
        if term < self.durable.current_term {
            let current_term = self.durable.current_term;
            ctx.send(
                from,
                RaftMsg::AppendEntriesResp {
                    term: current_term,
                    success: false,
                    last_log_index: position.last_index,
                    last_log_term: position.last_term,
                },
            );
            return;
        }
        if !self.follow(ctx, from, term) {
            return;
        }
        ctx.send(
            from,
            RaftMsg::AppendEntriesResp {
                term,
                success: true,
                last_log_index: position.last_index,
                last_log_term: position.last_term,
            },
        );
    }

    /// Paper §5.2: `from`, leader of `term` (no older than ours), is followed: the first
    /// message of a new leader makes this node its follower, every later one restarts the
    /// election timer. Returns false, following nobody, on a leader of the same term: two
    /// leaders in one term are impossible in correct Raft (election safety), so only a
    /// broken variant gets here; the checker reports it, and this node keeps its claim so
    /// that the violation stays visible.
    pub(crate) fn follow(&mut self, ctx: &mut RaftCtx<'_>, from: NodeId, term: u64) -> bool {
        if self.volatile.role == Role::Leader && term == self.durable.current_term {
            return false;
        }
        let same_leader = self.volatile.role == Role::Follower
            && term == self.durable.current_term
            && self.volatile.leader_id == Some(from);
        if same_leader {
            self.volatile.leader_contact_local = Some(ctx.monotonic_now());
            self.reset_election_timer(ctx);
        } else {
            self.become_follower(ctx, term, Some(from));
            // The first message of this leader in this term that this node accepts.
            ctx.signal(Signal::LeaderHeard { leader: from, term });
        }
        true
    }

    /// Thesis §3.10: the leader asks this node to start an election at once, skipping
    /// pre-vote and the election timeout.
    pub(crate) fn handle_timeout_now(&mut self, ctx: &mut RaftCtx<'_>, from: NodeId, term: u64) {
        if term < self.durable.current_term {
            return;
        }
        if term > self.durable.current_term {
            // TimeoutNow comes only from the leader of its term.
            self.become_follower(ctx, term, Some(from));
        }
        if self.volatile.role == Role::Leader {
            return;
        }
        self.become_candidate(ctx, true);
    }
}
