//! ZooKeeper's messages (as the simulator counts them) and timer kinds.

use splitbrain_sim::{Message, NodeId, TimerKind};

/// A child of the election node: sequence number, creation zxid, owner.
pub type Child = (u64, u64, NodeId);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkMsg {
    /// Open a session asking for `timeout_ns`.
    Connect {
        timeout_ns: u64,
    },
    /// The session id and negotiated timeout.
    ConnectResp {
        session: u64,
        timeout_ns: u64,
    },
    /// A client ping (any request also renews the session).
    Ping {
        session: u64,
    },
    /// The ping's answer; `expired` when the session is gone (the client must start over).
    Pong {
        session: u64,
        expired: bool,
    },
    /// Create an ephemeral sequential child of the election node.
    Create {
        session: u64,
    },
    CreateResp {
        seq: u64,
        czxid: u64,
    },
    /// getChildren, with a one-shot child watch when `watch`.
    GetChildren {
        session: u64,
        watch: bool,
    },
    Children {
        zxid: u64,
        children: Vec<Child>,
    },
    /// exists(child), with a one-shot watch on it.
    Exists {
        session: u64,
        seq: u64,
    },
    ExistsResp {
        seq: u64,
        exists: bool,
    },
    /// A one-shot watch fired: the watched child was deleted.
    NodeDeleted {
        seq: u64,
        zxid: u64,
    },
    /// A one-shot child watch fired: the children changed.
    ChildrenChanged {
        zxid: u64,
    },
    /// Close the session (deletes its ephemeral node): resignation.
    CloseSession {
        session: u64,
    },
}

impl Message for ZkMsg {
    const KINDS: &'static [&'static str] = &[
        "Connect",
        "ConnectResp",
        "Ping",
        "Pong",
        "Create",
        "CreateResp",
        "GetChildren",
        "Children",
        "Exists",
        "ExistsResp",
        "NodeDeleted",
        "ChildrenChanged",
        "CloseSession",
    ];

    fn kind(&self) -> usize {
        match self {
            ZkMsg::Connect { .. } => 0,
            ZkMsg::ConnectResp { .. } => 1,
            ZkMsg::Ping { .. } => 2,
            ZkMsg::Pong { .. } => 3,
            ZkMsg::Create { .. } => 4,
            ZkMsg::CreateResp { .. } => 5,
            ZkMsg::GetChildren { .. } => 6,
            ZkMsg::Children { .. } => 7,
            ZkMsg::Exists { .. } => 8,
            ZkMsg::ExistsResp { .. } => 9,
            ZkMsg::NodeDeleted { .. } => 10,
            ZkMsg::ChildrenChanged { .. } => 11,
            ZkMsg::CloseSession { .. } => 12,
        }
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

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ZkTimer {
    /// The client's ping interval.
    Ping,
    /// The client's connection check: nothing heard for 2/3 of the session timeout.
    Disconnect,
    /// Retry an unanswered request; a waiter's resync.
    Retry,
    /// The server's next expiry bucket.
    Expiry,
}

impl TimerKind for ZkTimer {
    const NAMES: &'static [&'static str] = &["ping", "disconnect", "retry", "expiry"];

    fn index(self) -> usize {
        match self {
            ZkTimer::Ping => 0,
            ZkTimer::Disconnect => 1,
            ZkTimer::Retry => 2,
            ZkTimer::Expiry => 3,
        }
    }

    fn from_index(index: usize) -> Self {
        match index {
            0 => ZkTimer::Ping,
            1 => ZkTimer::Disconnect,
            2 => ZkTimer::Retry,
            3 => ZkTimer::Expiry,
            _ => panic!("zookeeper has no timer kind {index}"),
        }
    }
}
