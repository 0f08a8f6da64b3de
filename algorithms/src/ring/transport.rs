//! Sending along the ring with acknowledgements: every ring message is acknowledged by its
//! receiver; a sender that gets no acknowledgement within `ack_timeout` takes that successor
//! for dead, skips it, and sends everything it had sent there to the next one (the repair
//! Tanenbaum & van Steen describe in 6.5.1: a sender whose successor is down skips over it
//! to the next member along the ring, and the one after that, until one is running).

use super::messages::{RingMsg, RingTimer};
use super::node::{RingCtx, RingNode};
use splitbrain_sim::{LocalNanos, NodeId};

/// A ring message sent and not yet acknowledged.
#[derive(Clone, Debug)]
pub(crate) struct Pending {
    pub(crate) seq: u64,
    pub(crate) to: NodeId,
    pub(crate) msg: RingMsg,
    pub(crate) deadline_local: LocalNanos,
}

impl RingNode {
    /// Sends a ring message to the next successor not skipped, numbered and remembered until
    /// acknowledged. With every other node skipped, the message has gone round a ring of
    /// one: it is handled here at once, as if it had come back.
    pub(crate) fn send_ring(&mut self, ctx: &mut RingCtx<'_>, mut msg: RingMsg) {
        let skipped = &self.volatile.skipped;
        let Some(to) = self.topology.next_live(self.id, |id| skipped[id.index()]) else {
            self.receive_ring(ctx, self.id, msg);
            return;
        };
        let seq = self.durable.next_seq;
        self.durable.next_seq += 1;
        msg.set_seq(seq);
        ctx.send(to, msg.clone());
        let ack_timeout =
            LocalNanos::try_from(self.config.ack_timeout_ns).unwrap_or(LocalNanos::MAX);
        let deadline_local = ctx.monotonic_now().saturating_add(ack_timeout);
        if self.volatile.pending.is_empty() {
            ctx.set_timer(RingTimer::Ack, self.config.ack_timeout_ns);
        }
        self.volatile.pending.push_back(Pending {
            seq,
            to,
            msg,
            deadline_local,
        });
    }

    /// A ring message arrived (or came back round a ring of one): acknowledge it, then let
    /// the variant handle it.
    pub(crate) fn receive_ring(&mut self, ctx: &mut RingCtx<'_>, from: NodeId, msg: RingMsg) {
        if from != self.id {
            let seq = msg.seq().expect("ring messages are numbered");
            ctx.send(from, RingMsg::Ack { seq });
            // A node we skipped is alive after all.
            self.volatile.skipped[from.index()] = false;
        }
        match msg {
            RingMsg::Election {
                candidate, epoch, ..
            } => self.handle_candidacy(ctx, candidate, epoch),
            RingMsg::Elected { leader, epoch, .. } => self.handle_elected(ctx, leader, epoch),
            RingMsg::Token {
                initiator,
                ids,
                epoch,
                ..
            } => self.handle_token(ctx, initiator, ids, epoch),
            RingMsg::Coordinator {
                leader,
                initiator,
                epoch,
                ..
            } => self.handle_coordinator(ctx, leader, initiator, epoch),
            RingMsg::Ack { .. } | RingMsg::Heartbeat { .. } => {
                unreachable!("not a ring message")
            }
        }
    }

    /// An acknowledgement: forget that message; the ack timer follows the oldest one left.
    pub(crate) fn handle_ack(&mut self, ctx: &mut RingCtx<'_>, from: NodeId, seq: u64) {
        self.volatile.skipped[from.index()] = false;
        let pending = &mut self.volatile.pending;
        let Some(at) = pending.iter().position(|p| p.seq == seq && p.to == from) else {
            return; // late (already sent elsewhere) or duplicated
        };
        pending.remove(at);
        if at == 0 {
            self.rearm_ack_timer(ctx);
        }
    }

    /// The oldest message was not acknowledged in time: its receiver is skipped, and every
    /// message still waiting on that receiver goes to the next live successor instead.
    pub(crate) fn on_ack_timeout(&mut self, ctx: &mut RingCtx<'_>) {
        let Some(oldest) = self.volatile.pending.front() else {
            return;
        };
        if oldest.deadline_local > ctx.monotonic_now() {
            // The clock jumped back: not due yet by this clock.
            self.rearm_ack_timer(ctx);
            return;
        }
        let dead = oldest.to;
        self.volatile.skipped[dead.index()] = true;
        let (resend, keep): (Vec<Pending>, Vec<Pending>) =
            self.volatile.pending.drain(..).partition(|p| p.to == dead);
        self.volatile.pending.extend(keep);
        self.rearm_ack_timer(ctx);
        for pending in resend {
            self.send_ring(ctx, pending.msg);
        }
    }

    fn rearm_ack_timer(&mut self, ctx: &mut RingCtx<'_>) {
        match self.volatile.pending.front() {
            Some(oldest) => {
                let left = oldest
                    .deadline_local
                    .saturating_sub(ctx.monotonic_now())
                    .max(0) as u64;
                ctx.set_timer(RingTimer::Ack, left);
            }
            None => ctx.cancel_timer(RingTimer::Ack),
        }
    }
}
