//! The election itself: answering ELECTION, counting OKs, and the two timeouts of
//! Coulouris 15.3.1 (`T` for the OK, `T'` for the COORDINATOR) with the restart of the
//! election when the second expires.

use super::messages::{BullyMsg, BullyTimer};
use super::node::{BullyCtx, BullyNode, Role};
use splitbrain_sim::{NodeId, Signal};

impl BullyNode {
    /// Coulouris 15.3.1: "If a process receives an election message, it sends back an answer
    /// message and begins another election unless it has begun one already."
    ///
    /// Two refinements keep a settled cluster from re-electing on a message that is only
    /// late: an ELECTION whose epoch is below the announcement the receiver follows was sent
    /// before that announcement, so it gets the OK but starts nothing; and a coordinator
    /// answers such a late ELECTION with a reminder (its COORDINATOR message again) instead
    /// of a new election, so the asker is not left waiting if the announcement was lost.
    pub(crate) fn handle_election(&mut self, ctx: &mut BullyCtx<'_>, from: NodeId, epoch: u64) {
        self.observe_epoch(epoch);
        if from > self.id {
            // ELECTION only ever goes to higher ids; nothing to answer.
            return;
        }
        ctx.send(
            from,
            BullyMsg::Ok {
                epoch: self.durable.highest_epoch,
            },
        );
        match self.volatile.role {
            Role::Coordinator => {
                let leading = self.volatile.leading.expect("a coordinator leads an epoch");
                if epoch < leading {
                    ctx.send(from, BullyMsg::Coordinator { epoch: leading });
                } else {
                    // The asker knows our epoch and still suspects us: hold the election it
                    // asks for (we keep leading meanwhile), which announces a new epoch.
                    self.start_election(ctx);
                }
            }
            Role::Follower => {
                let late = self.volatile.followed.is_some_and(|f| epoch < f.epoch);
                if !late {
                    self.start_election(ctx);
                }
            }
            Role::Candidate | Role::AwaitingCoordinator => {}
        }
    }

    /// Coulouris 15.3.1: a candidate that receives an answer waits for the COORDINATOR
    /// message (for `T'`). A coordinator holding an election of its own steps down: a higher
    /// node is alive and takes over.
    pub(crate) fn handle_ok(&mut self, ctx: &mut BullyCtx<'_>, from: NodeId, epoch: u64) {
        self.observe_epoch(epoch);
        if from < self.id || self.volatile.role != Role::Candidate {
            return; // late (we already moved on) or duplicated
        }
        ctx.cancel_timer(BullyTimer::Answer);
        if self.volatile.leading.take().is_some() {
            ctx.stepped_down();
            ctx.cancel_timer(BullyTimer::Heartbeat);
        }
        self.volatile.role = Role::AwaitingCoordinator;
        ctx.set_timer(BullyTimer::Coordinator, self.config.coordinator_timeout_ns);
    }

    /// `T` expired without an OK: no higher node is alive, so this node is the coordinator.
    pub(crate) fn on_answer_timeout(&mut self, ctx: &mut BullyCtx<'_>) {
        if self.volatile.role == Role::Candidate {
            self.become_coordinator(ctx);
        }
    }

    /// `T'` expired without a COORDINATOR: the node that answered failed meanwhile, so the
    /// election starts again (Coulouris 15.3.1).
    pub(crate) fn on_coordinator_timeout(&mut self, ctx: &mut BullyCtx<'_>) {
        if self.volatile.role != Role::AwaitingCoordinator {
            return;
        }
        ctx.signal(Signal::ElectionRoundFailed {
            term: self.durable.highest_epoch + 1,
        });
        self.start_election(ctx);
    }

    /// The failure detector: no heartbeat from the coordinator for `failure_timeout` (or,
    /// after a restart, no sign of any coordinator). The node suspects it and elects.
    pub(crate) fn on_failure_timeout(&mut self, ctx: &mut BullyCtx<'_>) {
        if self.volatile.role != Role::Follower {
            return;
        }
        ctx.signal(Signal::LeaderSuspected);
        self.start_election(ctx);
    }
}
