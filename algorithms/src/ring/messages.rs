//! The ring algorithms' messages and timer kinds, as the engine counts and traces them.

use serde::Serialize;
use splitbrain_sim::NodeId;

/// A ring message. The four ring messages (Election, Elected, Token, Coordinator) travel
/// from a node to its successor, carry the sender's sequence number `seq`, and are
/// acknowledged with an [`RingMsg::Ack`] of that number; a sender that gets no Ack in time
/// skips that successor. `epoch` on a ring message is the highest epoch seen along its way,
/// so the winner of a lap knows the highest epoch of every node it passed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum RingMsg {
    /// Chang & Roberts 1979: the candidacy of `candidate`, forwarded while it meets lower ids.
    Election {
        /// The sender's sequence number, returned in its [`RingMsg::Ack`].
        seq: u64,
        /// The id standing for election.
        candidate: NodeId,
        /// The highest epoch seen along the lap so far.
        epoch: u64,
    },
    /// Chang & Roberts' second lap: `leader` has won and leads `epoch`.
    Elected {
        /// The sender's sequence number, returned in its [`RingMsg::Ack`].
        seq: u64,
        /// The winner, whose candidacy came back to it.
        leader: NodeId,
        /// The epoch the winner leads: one above the highest its candidacy collected.
        epoch: u64,
    },
    /// The all-ids token started by `initiator`, with the id of every node it has visited.
    Token {
        /// The sender's sequence number, returned in its [`RingMsg::Ack`].
        seq: u64,
        /// The node that put the token in circulation; the token's lap ends there.
        initiator: NodeId,
        /// The ids of the live nodes visited so far, in ring order from the initiator.
        ids: Vec<NodeId>,
        /// The highest epoch seen along the lap so far.
        epoch: u64,
    },
    /// The all-ids announcement lap started by `initiator`: `leader` leads `epoch`.
    Coordinator {
        /// The sender's sequence number, returned in its [`RingMsg::Ack`].
        seq: u64,
        /// The highest id the token collected: the new coordinator.
        leader: NodeId,
        /// The node whose token it was; the announcement lap ends there.
        initiator: NodeId,
        /// The epoch the new coordinator leads.
        epoch: u64,
    },
    /// "I received your ring message `seq`."
    Ack {
        /// The sequence number of the ring message received.
        seq: u64,
    },
    /// The coordinator's periodic "I lead `epoch`", to every peer (not along the ring).
    Heartbeat {
        /// The epoch the sender leads.
        epoch: u64,
    },
}

impl RingMsg {
    /// The sequence number of a ring message (`None` for Ack and Heartbeat).
    pub fn seq(&self) -> Option<u64> {
        match *self {
            RingMsg::Election { seq, .. }
            | RingMsg::Elected { seq, .. }
            | RingMsg::Token { seq, .. }
            | RingMsg::Coordinator { seq, .. } => Some(seq),
            RingMsg::Ack { .. } | RingMsg::Heartbeat { .. } => None,
        }
    }

    /// Gives a ring message its sequence number before it is sent (or sent again).
    pub(crate) fn set_seq(&mut self, number: u64) {
        match self {
            RingMsg::Election { seq, .. }
            | RingMsg::Elected { seq, .. }
            | RingMsg::Token { seq, .. }
            | RingMsg::Coordinator { seq, .. } => *seq = number,
            RingMsg::Ack { .. } | RingMsg::Heartbeat { .. } => {
                panic!("only ring messages are numbered")
            }
        }
    }
}

splitbrain_sim::message_kinds! {
    impl Message for RingMsg {
        kinds {
            Election => "Election",
            Elected => "Elected",
            Token => "Token",
            Coordinator => "Coordinator",
            Ack => "Ack",
            Heartbeat => "Heartbeat",
        }

        fn term(&self) -> u64 {
            match *self {
                RingMsg::Election { epoch, .. }
                | RingMsg::Elected { epoch, .. }
                | RingMsg::Token { epoch, .. }
                | RingMsg::Coordinator { epoch, .. }
                | RingMsg::Heartbeat { epoch } => epoch,
                RingMsg::Ack { .. } => 0,
            }
        }

        /// A token holds the ids it collected: a 1,000-node ring's is 4 kB.
        fn size_bytes(&self) -> usize {
            let ids = match self {
                RingMsg::Token { ids, .. } => ids.len() * std::mem::size_of::<NodeId>(),
                _ => 0,
            };
            std::mem::size_of::<Self>() + ids
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// The ring algorithms' timer slots, each armed in local time.
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
    pub enum RingTimer {
        /// The coordinator's heartbeat interval.
        Heartbeat => "heartbeat",
        /// A follower's failure detector.
        Failure => "failure",
        /// The oldest unacknowledged ring message's deadline.
        Ack => "ack",
        /// A participant's wait for the election to end; on expiry it starts a new one.
        Election => "election",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::Message;

    #[test]
    fn every_message_but_ack_carries_its_epoch_as_its_term() {
        let samples = [
            RingMsg::Election {
                seq: 0,
                candidate: NodeId(1),
                epoch: 1,
            },
            RingMsg::Elected {
                seq: 0,
                leader: NodeId(1),
                epoch: 2,
            },
            RingMsg::Token {
                seq: 0,
                initiator: NodeId(1),
                ids: vec![NodeId(1)],
                epoch: 3,
            },
            RingMsg::Coordinator {
                seq: 0,
                leader: NodeId(1),
                initiator: NodeId(0),
                epoch: 4,
            },
            RingMsg::Ack { seq: 0 },
            RingMsg::Heartbeat { epoch: 6 },
        ];
        for (expected, msg) in samples.iter().enumerate() {
            let epoch = if matches!(msg, RingMsg::Ack { .. }) {
                0
            } else {
                expected as u64 + 1
            };
            assert_eq!(msg.term(), epoch, "{msg:?}");
        }
    }

    #[test]
    fn ring_messages_are_numbered_and_the_others_are_not() {
        let mut token = RingMsg::Token {
            seq: 0,
            initiator: NodeId(0),
            ids: Vec::new(),
            epoch: 0,
        };
        token.set_seq(9);
        assert_eq!(token.seq(), Some(9));
        assert_eq!(RingMsg::Ack { seq: 3 }.seq(), None);
        assert_eq!(RingMsg::Heartbeat { epoch: 1 }.seq(), None);
    }
}
