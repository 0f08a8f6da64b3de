//! ZooKeeper's database, the one place its rules of sessions, ephemeral sequential children
//! and zxids are written: sessions, the election node's children, the last applied zxid.
//! Every server of an ensemble applies the same committed transactions in zxid order
//! (`DataTree.processTxn`), and a new leader sends it whole to its followers (`SNAP`); the
//! one-process server applies each transaction as it takes it (`service.rs`).

use serde::{Deserialize, Serialize};
use splitbrain_sim::NodeId;
use std::collections::BTreeMap;

/// A child of the election node: sequence number, creation zxid, owner. In JSON, an array
/// `[seq, czxid, node]`.
pub type Child = (u64, u64, NodeId);

/// A write as the leader proposes it, ids assigned: the transaction every server applies in
/// zxid order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", deny_unknown_fields)]
pub enum ZkTxn {
    /// createSession.
    CreateSession {
        /// The new session's id.
        session: u64,
        /// The client that owns it.
        owner: NodeId,
        /// Its negotiated timeout.
        timeout_ns: u64,
    },
    /// Create the session's ephemeral sequential child.
    Create {
        /// The session.
        session: u64,
        /// The child's sequence number.
        seq: u64,
    },
    /// closeSession: asked by the client, or the leader's session tracker expired it.
    CloseSession {
        /// The session.
        session: u64,
        /// Whether the tracker expired it.
        expired: bool,
    },
}

/// A session as the database holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DbSession {
    /// The client that owns it.
    pub owner: NodeId,
    /// Its negotiated timeout.
    pub timeout_ns: u64,
    /// Its ephemeral child's sequence number, if it created one.
    pub node: Option<u64>,
}

/// The replicated state: what `NEWLEADER` carries and every commit changes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZkDb {
    /// The last applied zxid (epoch in the high 32 bits).
    pub zxid: u64,
    /// The next session id to hand out (ids start at 1).
    pub next_session: u64,
    /// The next sequence number of the election node.
    pub next_seq: u64,
    /// Live sessions by id (in JSON, `[id, session]` pairs).
    #[serde(with = "pairs")]
    pub sessions: BTreeMap<u64, DbSession>,
    /// The election node's children by sequence number: (czxid, owner, session) (in
    /// JSON, `[seq, [czxid, owner, session]]` pairs).
    #[serde(with = "pairs")]
    pub children: BTreeMap<u64, (u64, NodeId, u64)>,
}

/// What applying a transaction changed, for the answers, watches and signals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// A session opened.
    Session {
        /// Its id.
        session: u64,
        /// Its owner.
        owner: NodeId,
        /// Its timeout.
        timeout_ns: u64,
    },
    /// A child was created.
    Created {
        /// Its sequence number.
        seq: u64,
        /// Its owner.
        owner: NodeId,
    },
    /// A session closed, with its child if it had one.
    Closed {
        /// The session.
        session: u64,
        /// Its owner.
        owner: NodeId,
        /// Its child, and whether that child was the lowest (the leader's).
        child: Option<(u64, bool)>,
        /// Whether the leader's tracker expired it.
        expired: bool,
    },
    /// Nothing (a create on a closed session, a close of an unknown one).
    Nothing,
}

impl ZkDb {
    /// An empty database; session ids start at 1.
    pub fn new() -> Self {
        Self {
            next_session: 1,
            ..Self::default()
        }
    }

    /// The election node's children, lowest sequence number first.
    pub fn children(&self) -> Vec<Child> {
        self.children
            .iter()
            .map(|(seq, (czxid, owner, _))| (*seq, *czxid, *owner))
            .collect()
    }

    /// The children as `run --stop-at` shows them: `[seq:owner ...]`, lowest first.
    pub fn children_text(&self) -> String {
        let children: Vec<String> = self
            .children
            .iter()
            .map(|(seq, (_, owner, _))| format!("{seq}:{owner}"))
            .collect();
        format!("[{}]", children.join(" "))
    }

    /// The owner of the lowest child: whom a client asking who leads would be told.
    pub fn leader(&self) -> Option<NodeId> {
        self.children.values().next().map(|(_, owner, _)| *owner)
    }

    /// Applies the committed `txn` of `zxid`.
    pub fn apply(&mut self, zxid: u64, txn: &ZkTxn) -> Applied {
        self.zxid = self.zxid.max(zxid);
        match *txn {
            ZkTxn::CreateSession {
                session,
                owner,
                timeout_ns,
            } => {
                self.next_session = self.next_session.max(session + 1);
                self.sessions.insert(
                    session,
                    DbSession {
                        owner,
                        timeout_ns,
                        node: None,
                    },
                );
                Applied::Session {
                    session,
                    owner,
                    timeout_ns,
                }
            }
            ZkTxn::Create { session, seq } => {
                self.next_seq = self.next_seq.max(seq + 1);
                let Some(s) = self.sessions.get_mut(&session) else {
                    return Applied::Nothing;
                };
                if s.node.is_some() {
                    return Applied::Nothing;
                }
                s.node = Some(seq);
                let owner = s.owner;
                self.children.insert(seq, (zxid, owner, session));
                Applied::Created { seq, owner }
            }
            ZkTxn::CloseSession { session, expired } => {
                let Some(s) = self.sessions.remove(&session) else {
                    return Applied::Nothing;
                };
                let child = s.node.map(|seq| {
                    let led = self.children.keys().next() == Some(&seq);
                    self.children.remove(&seq);
                    (seq, led)
                });
                Applied::Closed {
                    session,
                    owner: s.owner,
                    child,
                    expired,
                }
            }
        }
    }
}

/// A map with number keys as a JSON array of `[key, value]` pairs: an internally tagged
/// message cannot read number keys back from JSON object keys.
mod pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<V: Serialize, S: Serializer>(
        map: &BTreeMap<u64, V>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(map.iter())
    }

    pub fn deserialize<'de, V: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<u64, V>, D::Error> {
        Ok(Vec::<(u64, V)>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}
