//! ZooKeeper's messages (as the simulator counts them) and timer kinds.

use splitbrain_sim::NodeId;

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
