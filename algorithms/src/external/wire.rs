//! What travels between the processes of an external run: a node's message (its JSON body,
//! as written) or a modeled service's own message (its JSON form on the way to a node).

use serde::{Deserialize, Serialize};
use splitbrain_sim::Message;
use std::sync::Arc;

/// A message a node sent to another node: the body as the node wrote it (forwarded without
/// being parsed again), its type's index in the run's names, and its `term` for the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMsg {
    /// The index of the body's `type` in the run's message names.
    pub kind: u16,
    /// The body's `term` field, or 0.
    pub term: u64,
    /// The body, as JSON text.
    pub body: Arc<str>,
}

/// A message of an external run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wire<M> {
    /// Between nodes.
    Node(NodeMsg),
    /// To or from the modeled service, in its own form.
    Service {
        /// The index of the message's type in the run's names (after the nodes' own).
        kind: u16,
        /// The service's message.
        msg: M,
    },
}

impl<M: Message> Message for Wire<M> {
    /// The names are known at run time ([`splitbrain_sim::Names`]).
    const KINDS: &'static [&'static str] = &[];

    fn kind(&self) -> usize {
        match self {
            Wire::Node(msg) => usize::from(msg.kind),
            Wire::Service { kind, .. } => usize::from(*kind),
        }
    }

    fn term(&self) -> u64 {
        match self {
            Wire::Node(msg) => msg.term,
            Wire::Service { msg, .. } => msg.term(),
        }
    }

    /// A node's message holds its body, as the node wrote it: what `--max-memory` and
    /// `--max-node-in-flight` charge (a copy the network duplicates shares the body, and is
    /// charged again all the same, as a real copy would be).
    fn size_bytes(&self) -> usize {
        let inline = std::mem::size_of::<Self>();
        match self {
            Wire::Node(msg) => inline + msg.body.len(),
            Wire::Service { msg, .. } => inline - std::mem::size_of::<M>() + msg.size_bytes(),
        }
    }
}

/// The service of a run that has none: no message of it exists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoService {}

impl Message for NoService {
    const KINDS: &'static [&'static str] = &[];
    fn kind(&self) -> usize {
        match *self {}
    }
}
