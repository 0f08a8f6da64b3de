//! Chang & Roberts 1979, "An improved algorithm for decentralized extrema-finding in
//! circular configurations of processes" (CACM 22(5)), with the participant flag of
//! Coulouris et al. 15.3.1: candidacies travel along the ring, each forwarded only by nodes
//! with a lower id; the one that comes back to its owner is the maximum; an elected lap
//! tells everyone.

use super::config::RingInitiators;
use super::messages::RingMsg;
use super::node::{Announcement, RingCtx, RingNode};
use splitbrain_sim::NodeId;

impl RingNode {
    /// Sends this node's own candidacy to its successor.
    pub(crate) fn send_candidacy(&mut self, ctx: &mut RingCtx<'_>) {
        let msg = RingMsg::Election {
            seq: 0,
            candidate: self.id,
            epoch: self.durable.highest_epoch,
        };
        self.send_ring(ctx, msg);
    }

    /// Coulouris 15.3.1: "If the arrived identifier is greater, then it forwards the message
    /// to its neighbour. If the arrived identifier is smaller and the receiver is not a
    /// participant, then it substitutes its own identifier in the message and forwards it;
    /// but it does not forward the message if it is already a participant. ... If, however,
    /// the received identifier is that of the receiver itself, then this process's identifier
    /// must be the greatest, and it becomes the coordinator."
    ///
    /// With `initiators: All`, a node that learns of an election puts its own candidacy in
    /// circulation first (every process initiates, as in Chang & Roberts' analysis); it is
    /// then a participant and a smaller candidacy stops at it.
    pub(crate) fn handle_candidacy(
        &mut self,
        ctx: &mut RingCtx<'_>,
        candidate: NodeId,
        epoch: u64,
    ) {
        if self.started_before_the_announcement(epoch) {
            return;
        }
        self.observe_epoch(epoch);
        if candidate == self.id {
            // Our id went all the way round: every node it passed has a lower id. Only the
            // first return counts (a participant that already won has left the election).
            if self.volatile.participant && self.volatile.campaigned {
                self.win(ctx);
            }
            return;
        }
        let was_participant = self.volatile.participant;
        if !was_participant {
            self.join_election(ctx);
        }
        if self.config.initiators == RingInitiators::All {
            self.campaign(ctx);
        }
        if candidate > self.id {
            if self.volatile.forwarded.insert(candidate) {
                let msg = RingMsg::Election {
                    seq: 0,
                    candidate,
                    epoch: self.durable.highest_epoch,
                };
                self.send_ring(ctx, msg);
            }
        } else if !was_participant {
            // The substitution: a smaller id meets a non-participant, which runs instead.
            self.campaign(ctx);
        }
    }

    /// Our candidacy came back: this node has the highest id on the (live part of the)
    /// ring, and the candidacy carries the highest epoch of every node it passed. It leads
    /// that epoch + 1 from now on, then sends the elected lap (so the engine's record of
    /// this election ends at the claim; the elected lap shows in the run totals).
    fn win(&mut self, ctx: &mut RingCtx<'_>) {
        let epoch = self.durable.highest_epoch + 1;
        let announcement = Announcement {
            epoch,
            coordinator: self.id,
        };
        let accepted = self.accept(ctx, announcement);
        assert!(accepted, "a fresh epoch is above everything seen");
        self.volatile.announced = Some(announcement);
        let msg = RingMsg::Elected {
            seq: 0,
            leader: self.id,
            epoch,
        };
        self.send_ring(ctx, msg);
    }

    /// Coulouris 15.3.1: "When a process receives an elected message, it marks itself as a
    /// non-participant, sets its variable elected to the identifier in the message and,
    /// unless it is the new coordinator, forwards the message to its neighbour." A stale
    /// announcement, or one already forwarded (the winner died, so it is on a second lap),
    /// goes no further.
    pub(crate) fn handle_elected(&mut self, ctx: &mut RingCtx<'_>, leader: NodeId, epoch: u64) {
        self.observe_epoch(epoch);
        if leader == self.id {
            return; // the lap is complete
        }
        let announcement = Announcement {
            epoch,
            coordinator: leader,
        };
        if self.volatile.announced == Some(announcement) {
            return;
        }
        if self.accept(ctx, announcement) {
            self.volatile.announced = Some(announcement);
            let msg = RingMsg::Elected {
                seq: 0,
                leader,
                epoch,
            };
            self.send_ring(ctx, msg);
        }
    }
}
