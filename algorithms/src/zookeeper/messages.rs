//! ZooKeeper's messages (as the simulator counts them) and timer kinds.

use super::db::ZkDb;
pub use super::db::{Child, ZkTxn};
use serde::{Deserialize, Serialize};
use splitbrain_sim::NodeId;

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
    /// Ensemble only, server to server: a FastLeaderElection notification (the sender's
    /// proposed or elected leader and its state).
    Notification {
        /// The sender's election round (`logicalclock`).
        round: u64,
        /// The leader the sender proposes (LOOKING) or follows (FOLLOWING, LEADING).
        leader: NodeId,
        /// The proposed leader's last zxid.
        zxid: u64,
        /// The proposed leader's epoch.
        epoch: u64,
        /// The sender's state.
        state: ZkPeerState,
    },
    /// Ensemble: a follower's first message to its elected leader (`FOLLOWERINFO`).
    FollowerInfo {
        /// The epoch the follower last accepted.
        accepted_epoch: u64,
        /// The follower's last logged zxid.
        zxid: u64,
    },
    /// Ensemble: the new leader's epoch and its whole database (`NEWLEADER` after a `SNAP`).
    NewLeader {
        /// The new epoch.
        epoch: u64,
        /// The leader's committed database.
        snapshot: ZkDb,
    },
    /// Ensemble: a follower took the snapshot and the epoch (`ACK` of `NEWLEADER`).
    AckNewLeader {
        /// The epoch acknowledged.
        epoch: u64,
    },
    /// Ensemble: the leader has a synced quorum; the follower may serve (`UPTODATE`).
    UpToDate {
        /// The leader's epoch.
        epoch: u64,
    },
    /// Ensemble: a write the leader proposes (`PROPOSAL`); followers log it and ack.
    Proposal {
        /// The write's zxid (epoch in the high 32 bits).
        zxid: u64,
        /// The write.
        txn: ZkTxn,
    },
    /// Ensemble: a follower logged (fsynced) the proposal `zxid` (`ACK`).
    Ack {
        /// The proposal's zxid.
        zxid: u64,
    },
    /// Ensemble: a quorum logged `zxid`; apply it (`COMMIT`, carrying the write as `INFORM`
    /// does).
    Commit {
        /// The write's zxid.
        zxid: u64,
        /// The write.
        txn: ZkTxn,
        /// The server whose client asked for it: it answers the client.
        origin: Option<NodeId>,
    },
    /// Ensemble: the leader's ping, every half tick (`PING`).
    LeaderPing {
        /// The leader's epoch.
        epoch: u64,
    },
    /// Ensemble: a follower's answer to a ping, with the sessions its clients touched since
    /// the last one (`Learner.ping`, `getTouchSnapshot`).
    FollowerPing {
        /// The touched sessions.
        touches: Vec<u64>,
    },
    /// Ensemble: a follower forwards a client's write to the leader (`REQUEST`).
    Request {
        /// The client that asked.
        client: NodeId,
        /// The write asked for.
        op: ZkOp,
    },
    /// Ensemble: the leader's answer to a forwarded write that needed no proposal, for the
    /// follower to pass on to its client.
    Reply {
        /// The client to pass it to.
        client: NodeId,
        /// The answer.
        answer: Box<ZkMsg>,
    },
}

/// A ZooKeeper server's state in the ensemble (`QuorumPeer.ServerState`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ZkPeerState {
    /// Electing a leader.
    Looking,
    /// Following the elected leader.
    Following,
    /// Leading.
    Leading,
}

/// A client's write as a follower forwards it, before the leader assigns ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", deny_unknown_fields)]
pub enum ZkOp {
    /// Open a session with this (negotiated) timeout.
    CreateSession {
        /// The negotiated timeout.
        timeout_ns: u64,
    },
    /// Create the session's child.
    Create {
        /// The session.
        session: u64,
    },
    /// Close the session.
    CloseSession {
        /// The session.
        session: u64,
    },
    /// A client reconnected to a follower with this session: is it alive? The leader
    /// touches it if so (`Learner.validateSession`, `REVALIDATE`); answered with a `Pong`.
    Revalidate {
        /// The session.
        session: u64,
    },
}

impl ZkMsg {
    /// The requests a client sends a server (docs/protocol-services.md); the rest are
    /// answers, events and the ensemble's own traffic.
    pub const CLIENT_REQUESTS: &'static [&'static str] = &[
        "Connect",
        "Ping",
        "Create",
        "GetChildren",
        "Exists",
        "CloseSession",
    ];
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
            Notification => "Notification",
            FollowerInfo => "FollowerInfo",
            NewLeader => "NewLeader",
            AckNewLeader => "AckNewLeader",
            UpToDate => "UpToDate",
            Proposal => "Proposal",
            Ack => "Ack",
            Commit => "Commit",
            LeaderPing => "LeaderPing",
            FollowerPing => "FollowerPing",
            Request => "Request",
            Reply => "Reply",
        }

        fn term(&self) -> u64 {
            match *self {
                ZkMsg::CreateResp { czxid, .. } => czxid,
                ZkMsg::Children { zxid, .. }
                | ZkMsg::NodeDeleted { zxid, .. }
                | ZkMsg::ChildrenChanged { zxid }
                | ZkMsg::Proposal { zxid, .. }
                | ZkMsg::Commit { zxid, .. } => zxid,
                ZkMsg::NewLeader { epoch, .. }
                | ZkMsg::AckNewLeader { epoch }
                | ZkMsg::UpToDate { epoch }
                | ZkMsg::LeaderPing { epoch } => epoch,
                _ => 0,
            }
        }

        /// A list of children, a ping's touched sessions, a relayed answer: what the message
        /// owns on the heap.
        fn size_bytes(&self) -> usize {
            let owned = match self {
                ZkMsg::Children { children, .. } => children.len() * std::mem::size_of::<Child>(),
                ZkMsg::FollowerPing { touches } => touches.len() * std::mem::size_of::<u64>(),
                ZkMsg::Reply { answer, .. } => answer.size_bytes(),
                _ => 0,
            };
            std::mem::size_of::<Self>() + owned
        }
    }
}

splitbrain_sim::timer_kinds! {
    /// Timer slots. Clients use `Ping`, `Disconnect`, `Retry` (and `Reconnect` against an
    /// ensemble), the single server only `Expiry`, an ensemble server `Expiry` (leading)
    /// and the last four.
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
        /// Ensemble client: the random pause before connecting to the next server.
        Reconnect => "reconnect",
        /// FastLeaderElection: no notification within the (doubling) notification timeout.
        Notify => "notify",
        /// FastLeaderElection: `finalizeWait` after a quorum agreed.
        Finalize => "finalize",
        /// The leader's half-tick ping and tick count.
        LeaderTick => "leader-tick",
        /// The sync bound (initLimit ticks), or a follower's silent-leader bound (syncLimit
        /// ticks).
        Limit => "limit",
    }
}
