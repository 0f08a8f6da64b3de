//! ZooKeeper's messages (as the simulator counts them) and timer kinds.

use serde::{Deserialize, Serialize};
use splitbrain_sim::NodeId;

/// A child of the election node: sequence number, creation zxid, owner. In JSON, an array
/// `[seq, czxid, node]`.
pub type Child = (u64, u64, NodeId);

/// A request to the modeled ZooKeeper server or its answer. Requests are client -> server;
/// any request on a live session renews it.
///
/// Its JSON form, `{"type":"<kind>", <fields>}` with the kind's name as `message_kinds!`
/// lists it, is stable (protocol version 1): `docs/protocol-services.md`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum ZkMsg {
    /// Open a session asking for `timeout_ns`.
    Connect {
        /// The session timeout asked for
        /// ([`ZkConfig::session_timeout_ns`](super::ZkConfig::session_timeout_ns)).
        timeout_ns: u64,
    },
    /// The session id and negotiated timeout.
    ConnectResp {
        /// The new session's id (never 0).
        session: u64,
        /// The timeout granted: the one asked for, bounded to 2..=20 ticks.
        timeout_ns: u64,
    },
    /// A client ping (any request also renews the session).
    Ping {
        /// The sender's session id.
        session: u64,
    },
    /// The ping's answer, and the answer to a create on an expired session.
    Pong {
        /// The session the request named.
        session: u64,
        /// The session is gone: the client must start over with a new one.
        expired: bool,
    },
    /// Create an ephemeral sequential child of the election node.
    Create {
        /// The sender's session id.
        session: u64,
    },
    /// The session's child (the existing one, for a retried create).
    CreateResp {
        /// The child's sequence number: its place in line.
        seq: u64,
        /// The zxid that created it: the leader's term and fencing token.
        czxid: u64,
    },
    /// getChildren, with a one-shot child watch when `watch`.
    GetChildren {
        /// The sender's session id.
        session: u64,
        /// Whether to leave a one-shot child watch (the herd recipe).
        watch: bool,
    },
    /// The answer to [`ZkMsg::GetChildren`].
    Children {
        /// The server's zxid at the answer.
        zxid: u64,
        /// Every child of the election node, lowest sequence number (the leader's) first.
        children: Vec<Child>,
    },
    /// exists(child), with a one-shot watch on it.
    Exists {
        /// The sender's session id.
        session: u64,
        /// The sequence number of the child to watch (the sender's predecessor).
        seq: u64,
    },
    /// The answer to [`ZkMsg::Exists`]; a watch was left only if the child exists.
    ExistsResp {
        /// The sequence number asked about.
        seq: u64,
        /// Whether the child still exists.
        exists: bool,
    },
    /// A one-shot watch fired: the watched child was deleted.
    NodeDeleted {
        /// The sequence number of the deleted child.
        seq: u64,
        /// The zxid of the delete.
        zxid: u64,
    },
    /// A one-shot child watch fired: the children changed.
    ChildrenChanged {
        /// The zxid of the change.
        zxid: u64,
    },
    /// Close the session (deletes its ephemeral node): resignation.
    CloseSession {
        /// The session to close.
        session: u64,
    },
}

splitbrain_sim::message_kinds! {
    impl Message for ZkMsg {
        kinds {
            Connect => "Connect",
            ConnectResp => "ConnectResp",
            Ping => "Ping",
            Pong => "Pong",
            Create => "Create",
            CreateResp => "CreateResp",
            GetChildren => "GetChildren",
            Children => "Children",
            Exists => "Exists",
            ExistsResp => "ExistsResp",
            NodeDeleted => "NodeDeleted",
            ChildrenChanged => "ChildrenChanged",
            CloseSession => "CloseSession",
        }

        fn term(&self) -> u64 {
            match *self {
                ZkMsg::CreateResp { czxid, .. } => czxid,
                ZkMsg::Children { zxid, .. }
                | ZkMsg::NodeDeleted { zxid, .. }
                | ZkMsg::ChildrenChanged { zxid } => zxid,
                _ => 0,
            }
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// Timer slots. Clients use the first three, the server only `Expiry`.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum ZkTimer {
        /// The client's ping interval.
        Ping => "ping",
        /// The client's connection check: nothing heard for 2/3 of the session timeout.
        Disconnect => "disconnect",
        /// Retry an unanswered request; a waiter's resync.
        Retry => "retry",
        /// The server's next expiry bucket.
        Expiry => "expiry",
    }
}
