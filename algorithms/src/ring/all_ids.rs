//! The ring algorithm of Tanenbaum & van Steen, *Distributed Systems: Principles and
//! Paradigms*, 2nd ed., section 6.5.1: the initiator sends a token around the ring; every
//! node adds its id; back at the initiator, the token holds every live id, and a coordinator
//! lap announces the highest one. 2n messages for one initiator (plus acknowledgements).
//!
//! With several initiators, each token would cost a full lap and an announcement. Here a
//! node that has put its own token in circulation swallows the tokens of lower initiators
//! (Chang & Roberts' extinction rule applied to initiators), so exactly one token, the
//! highest initiator's, comes back and one announcement is made.

use super::config::RingInitiators;
use super::messages::RingMsg;
use super::node::{Announcement, RingCtx, RingNode};
use splitbrain_sim::NodeId;

impl RingNode {
    /// Starts this node's token.
    pub(crate) fn send_token(&mut self, ctx: &mut RingCtx<'_>) {
        self.volatile.forwarded.insert(self.id);
        let msg = RingMsg::Token {
            seq: 0,
            initiator: self.id,
            ids: vec![self.id],
            epoch: self.durable.highest_epoch,
        };
        self.send_ring(ctx, msg);
    }

    /// Tanenbaum & van Steen 6.5.1: each node adds its own id and passes the token on;
    /// when the token is back at its initiator, the lap is over.
    pub(crate) fn handle_token(
        &mut self,
        ctx: &mut RingCtx<'_>,
        initiator: NodeId,
        mut ids: Vec<NodeId>,
        epoch: u64,
    ) {
        if self.started_before_the_announcement(epoch) {
            return;
        }
        self.observe_epoch(epoch);
        if initiator == self.id {
            if self.volatile.participant && self.volatile.campaigned {
                self.announce(ctx, &ids);
            }
            return;
        }
        if !self.volatile.participant {
            self.join_election(ctx);
        }
        if self.config.initiators == RingInitiators::All {
            self.campaign(ctx);
        }
        if self.volatile.campaigned && initiator < self.id {
            return; // extinction: our own token is the one that matters
        }
        if !self.volatile.forwarded.insert(initiator) {
            return; // a second lap: its initiator is gone
        }
        ids.push(self.id);
        let msg = RingMsg::Token {
            seq: 0,
            initiator,
            ids,
            epoch: self.durable.highest_epoch,
        };
        self.send_ring(ctx, msg);
    }

    /// The token is back: the highest collected id leads the highest epoch seen + 1. The
    /// coordinator lap leaves first; the initiator then follows (or becomes) the coordinator.
    fn announce(&mut self, ctx: &mut RingCtx<'_>, ids: &[NodeId]) {
        let leader = *ids.iter().max().expect("the token holds its initiator");
        let epoch = self.durable.highest_epoch + 1;
        let announcement = Announcement {
            epoch,
            coordinator: leader,
        };
        self.volatile.announced = Some(announcement);
        let msg = RingMsg::Coordinator {
            seq: 0,
            leader,
            initiator: self.id,
            epoch,
        };
        self.send_ring(ctx, msg);
        let accepted = self.accept(ctx, announcement);
        assert!(accepted, "a fresh epoch is above everything seen");
    }

    /// Tanenbaum & van Steen 6.5.1: the coordinator message circulates once to tell
    /// everyone who leads; the named node takes up leadership when it arrives. It is
    /// forwarded before it is followed, so that the messages of the lap up to the new
    /// leader count in the engine's record of the election.
    pub(crate) fn handle_coordinator(
        &mut self,
        ctx: &mut RingCtx<'_>,
        leader: NodeId,
        initiator: NodeId,
        epoch: u64,
    ) {
        self.observe_epoch(epoch);
        if initiator == self.id {
            return; // the lap is complete
        }
        let announcement = Announcement {
            epoch,
            coordinator: leader,
        };
        let stale = self.volatile.followed.is_some_and(|f| announcement < f);
        if stale || self.volatile.announced == Some(announcement) {
            return;
        }
        self.volatile.announced = Some(announcement);
        let msg = RingMsg::Coordinator {
            seq: 0,
            leader,
            initiator,
            epoch,
        };
        self.send_ring(ctx, msg);
        self.accept(ctx, announcement);
    }
}
