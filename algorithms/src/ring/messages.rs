//! The ring algorithms' messages and timer kinds, as the engine counts and traces them.

use serde::Serialize;
use splitbrain_sim::{Message, NodeId, TimerKind};

/// A ring message. The four ring messages (Election, Elected, Token, Coordinator) travel
/// from a node to its successor, carry the sender's sequence number `seq`, and are
/// acknowledged with an [`RingMsg::Ack`] of that number; a sender that gets no Ack in time
/// skips that successor. `epoch` on a ring message is the highest epoch seen along its way,
/// so the winner of a lap knows the highest epoch of every node it passed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum RingMsg {
    /// Chang & Roberts 1979: the candidacy of `candidate`, forwarded while it meets lower ids.
    Election {
        seq: u64,
        candidate: NodeId,
        epoch: u64,
    },
    /// Chang & Roberts' second lap: `leader` has won and leads `epoch`.
    Elected {
        seq: u64,
        leader: NodeId,
        epoch: u64,
    },
    /// The all-ids token started by `initiator`, with the id of every node it has visited.
    Token {
        seq: u64,
        initiator: NodeId,
        ids: Vec<NodeId>,
        epoch: u64,
    },
    /// The all-ids announcement lap started by `initiator`: `leader` leads `epoch`.
    Coordinator {
        seq: u64,
        leader: NodeId,
        initiator: NodeId,
        epoch: u64,
    },
    /// "I received your ring message `seq`."
    Ack { seq: u64 },
    /// The coordinator's periodic "I lead `epoch`", to every peer (not along the ring).
    Heartbeat { epoch: u64 },
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

impl Message for RingMsg {
    const KINDS: &'static [&'static str] = &[
        "Election",
        "Elected",
        "Token",
        "Coordinator",
        "Ack",
        "Heartbeat",
    ];

    fn kind(&self) -> usize {
        match self {
            RingMsg::Election { .. } => 0,
            RingMsg::Elected { .. } => 1,
            RingMsg::Token { .. } => 2,
            RingMsg::Coordinator { .. } => 3,
            RingMsg::Ack { .. } => 4,
            RingMsg::Heartbeat { .. } => 5,
        }
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
}

/// The ring algorithms' timer slots, each armed in local time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum RingTimer {
    /// The coordinator's heartbeat interval.
    Heartbeat,
    /// A follower's failure detector.
    Failure,
    /// The oldest unacknowledged ring message's deadline.
    Ack,
    /// A participant's wait for the election to end; on expiry it starts a new one.
    Election,
}

impl TimerKind for RingTimer {
    const NAMES: &'static [&'static str] = &["heartbeat", "failure", "ack", "election"];

    fn index(self) -> usize {
        match self {
            RingTimer::Heartbeat => 0,
            RingTimer::Failure => 1,
            RingTimer::Ack => 2,
            RingTimer::Election => 3,
        }
    }

    fn from_index(index: usize) -> Self {
        match index {
            0 => RingTimer::Heartbeat,
            1 => RingTimer::Failure,
            2 => RingTimer::Ack,
            3 => RingTimer::Election,
            _ => panic!("ring has no timer kind {index}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_kind_indexes_its_own_name_and_carries_its_epoch() {
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
            assert_eq!(msg.kind(), expected);
            let name = RingMsg::KINDS[msg.kind()];
            assert!(format!("{msg:?}").starts_with(name), "{name} vs {msg:?}");
            let epoch = if name == "Ack" {
                0
            } else {
                expected as u64 + 1
            };
            assert_eq!(msg.term(), epoch);
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

    #[test]
    fn timer_kinds_round_trip_through_their_index() {
        for (index, name) in RingTimer::NAMES.iter().enumerate() {
            let timer = RingTimer::from_index(index);
            assert_eq!(timer.index(), index);
            assert_eq!(format!("{timer:?}").to_lowercase(), *name);
        }
    }
}
