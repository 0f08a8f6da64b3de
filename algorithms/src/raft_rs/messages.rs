//! raft-rs' wire messages as the engine counts and traces them, its one timer, and the
//! mapping between splitbrain's node ids (from 0) and raft-rs' (from 1; 0 means none).

use raft::eraftpb::{Message as RaftMessage, MessageType};
use splitbrain_sim::{Message, NodeId};

/// A raft-rs message (`raft::eraftpb::Message`) on its way between two members, unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct RaftRsMsg(RaftMessage);

impl RaftRsMsg {
    /// Wraps a message raft-rs asked to send.
    pub fn new(message: RaftMessage) -> Self {
        Self(message)
    }

    /// The raft-rs message inside.
    pub fn raft_message(&self) -> &RaftMessage {
        &self.0
    }

    /// The raft-rs message inside, to step a `RawNode` with.
    pub fn into_raft_message(self) -> RaftMessage {
        self.0
    }
}

/// The message types that elections, heartbeats and a leadership handover use, by their
/// raft-rs names, in [`Message::KINDS`] order; everything else counts as `other`.
const NAMED_KINDS: [MessageType; 9] = [
    MessageType::MsgRequestVote,
    MessageType::MsgRequestVoteResponse,
    MessageType::MsgRequestPreVote,
    MessageType::MsgRequestPreVoteResponse,
    MessageType::MsgHeartbeat,
    MessageType::MsgHeartbeatResponse,
    MessageType::MsgAppend,
    MessageType::MsgAppendResponse,
    MessageType::MsgTimeoutNow,
];

impl Message for RaftRsMsg {
    const KINDS: &'static [&'static str] = &[
        "MsgRequestVote",
        "MsgRequestVoteResponse",
        "MsgRequestPreVote",
        "MsgRequestPreVoteResponse",
        "MsgHeartbeat",
        "MsgHeartbeatResponse",
        "MsgAppend",
        "MsgAppendResponse",
        "MsgTimeoutNow",
        "other",
    ];

    fn kind(&self) -> usize {
        let message_type = self.0.get_msg_type();
        NAMED_KINDS
            .iter()
            .position(|named| *named == message_type)
            .unwrap_or(NAMED_KINDS.len())
    }

    fn term(&self) -> u64 {
        self.0.term
    }
}

splitbrain_sim::timer_kinds! {
    /// The adapter's one timer: every tick of local time it calls `RawNode::tick`, which
    /// counts every raft-rs timeout (raft-rs' "logical clock", `src/raw_node.rs`
    /// `RawNode::tick`).
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum RaftRsTimer {
        /// One tick of raft-rs' logical clock.
        Tick => "tick",
    }
}

/// raft-rs' id of member `node`: raft-rs reserves 0 for "none" (`raft::INVALID_ID`).
pub(crate) fn raft_id(node: NodeId) -> u64 {
    node.index() as u64 + 1
}

/// The member raft-rs calls `raft_id`; `None` for raft-rs' "none".
pub(crate) fn node_id(raft_id: u64) -> Option<NodeId> {
    let index = raft_id.checked_sub(1)?;
    Some(NodeId::from(
        usize::try_from(index).expect("raft ids come from member indices"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_kind_is_counted_under_its_raft_rs_name() {
        for (index, message_type) in NAMED_KINDS.iter().enumerate() {
            let mut message = RaftMessage::default();
            message.set_msg_type(*message_type);
            message.term = index as u64 + 7;
            let msg = RaftRsMsg::new(message);
            assert_eq!(msg.kind(), index);
            assert_eq!(RaftRsMsg::KINDS[index], format!("{message_type:?}"));
            assert_eq!(msg.term(), index as u64 + 7);
        }
    }

    #[test]
    fn message_types_outside_elections_are_counted_as_other() {
        for message_type in [
            MessageType::MsgSnapshot,
            MessageType::MsgReadIndex,
            MessageType::MsgPropose,
        ] {
            let mut message = RaftMessage::default();
            message.set_msg_type(message_type);
            let kind = RaftRsMsg::new(message).kind();
            assert_eq!(RaftRsMsg::KINDS[kind], "other", "{message_type:?}");
        }
    }

    #[test]
    fn node_ids_map_to_raft_ids_from_one_and_back() {
        for index in [0usize, 1, 4, 99] {
            let node = NodeId::from(index);
            assert_eq!(raft_id(node), index as u64 + 1);
            assert_eq!(node_id(raft_id(node)), Some(node));
        }
        assert_eq!(node_id(raft::INVALID_ID), None);
    }
}
