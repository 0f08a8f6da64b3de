//! The coordinator's side and the announcements every node receives: heartbeats, the
//! COORDINATOR message, the bully takeover by a higher id, and the choice between two
//! coordinators that coexist after a partition.

use super::messages::{BullyMsg, BullyTimer};
use super::node::{Announcement, BullyCtx, BullyNode, Role};
use splitbrain_sim::NodeId;

impl BullyNode {
    /// The heartbeat that followers' failure detectors watch, to every peer (the higher ids
    /// too: a restarted higher node learns from it that it should take over).
    pub(crate) fn on_heartbeat_timer(&mut self, ctx: &mut BullyCtx<'_>) {
        let Some(epoch) = self.volatile.leading else {
            return;
        };
        for peer in self.peers() {
            ctx.send(peer, BullyMsg::Heartbeat { epoch });
        }
        ctx.set_timer(BullyTimer::Heartbeat, self.config.heartbeat_ns);
    }

    /// A COORDINATOR or HEARTBEAT: `from` says it leads `epoch`.
    ///
    /// - Below the announcement this node follows (by epoch, then id), it is stale and
    ///   ignored: its sender will hear the newer one and give way. The one it follows, heard
    ///   again, refreshes a follower's failure detector and ends a wait for COORDINATOR.
    /// - From a higher id, it is followed (Coulouris 15.3.1: the receiver "sets its variable
    ///   elected to the identifier of the coordinator"); a coordinator steps down.
    /// - From a lower id, it is the reason the algorithm has its name: a node that is up
    ///   never lets a lower one lead. It starts an election (unless one is under way), which
    ///   it wins with a higher epoch (Coulouris: a restarted process "will decide that it is
    ///   the coordinator ... even though the current coordinator is functioning").
    pub(crate) fn handle_announcement(&mut self, ctx: &mut BullyCtx<'_>, from: NodeId, epoch: u64) {
        let highest_before = self.durable.highest_epoch;
        self.observe_epoch(epoch);
        let heard = Announcement {
            epoch,
            coordinator: from,
        };
        let stale = match self.volatile.followed {
            Some(followed) => heard < followed,
            // Nothing followed yet (just restarted): stale if older than an epoch we saw.
            None => epoch < highest_before,
        };
        // A candidate has asked the coordinator it followed directly (its ELECTION went to
        // every higher id): a heartbeat already in flight says nothing new, the answer to
        // the ELECTION will (an OK, then a reminder or a new announcement). So for one that
        // got an OK and awaits the COORDINATOR: a reminder answers an ELECTION of a lower
        // epoch, so the reminder answering its current ELECTION carries a newer announcement
        // than the one followed (one answering a late duplicate of an older ELECTION may
        // not; ignoring it only leaves the wait to its timeout). (Following
        // the old one again made a node that heard a crashed coordinator's last heartbeat
        // start a second election on the next ELECTION: 5 ELECTION and 3 OK more than the
        // textbook count, found by the counts differential test.)
        let asked_already = matches!(
            self.volatile.role,
            Role::Candidate | Role::AwaitingCoordinator
        ) && self.volatile.followed == Some(heard);
        if stale || asked_already || from == self.id {
            return;
        }
        if from > self.id {
            self.become_follower(ctx, heard);
            return;
        }
        self.volatile.followed = Some(heard);
        match self.volatile.role {
            Role::Follower | Role::Coordinator => self.start_election(ctx),
            Role::Candidate | Role::AwaitingCoordinator => {}
        }
    }
}
