//! What a run holds, counted in bytes as it grows (docs/engine.md, "Memory charged per run"):
//! every message from the end of the handler that sent it until its receiver's handler takes
//! it or it is lost, every durable write from the handler that asked for it until a later
//! write replaces it on the disk, and what the trace sink keeps in memory.
//!
//! Each count is an addition or a subtraction where the thing is made or let go, and each
//! growth is compared with the run's limits at once: the same run outgrows `--max-memory`
//! or `--max-node-in-flight` at the same event on every machine and for any `--jobs`, and
//! never grows past them between two samples. No allocation, no system call.

use super::{EventData, Halt, Payload, Sim};
use crate::ids::NodeId;
use crate::limits::{format_bytes, Limit, LimitExceeded, RunLimits};
use crate::process::{DurableState, Effect, Message, Process};

type NodeEffect<P> = Effect<<P as Process>::Msg, <P as Process>::Timer, <P as Process>::Durable>;

/// The byte counts of one run, and the limits they are held to.
pub(super) struct Books {
    /// Everything the run holds: messages in flight, durable state, the trace kept.
    held_bytes: u64,
    /// Per process: what the messages it sent that are still in flight hold.
    in_flight_bytes: Vec<u64>,
    /// The part of `held_bytes` that is durable state, on disk or being written.
    durable_bytes: u64,
    /// The part of `held_bytes` that the trace sink keeps ([`crate::TraceSink::held_bytes`]).
    trace_bytes: u64,
    max_held_bytes: u64,
    max_node_bytes: u64,
}

impl Books {
    /// Empty books for a run of `processes` processes under `limits`.
    pub(super) fn new(processes: usize, limits: &RunLimits) -> Self {
        Self {
            held_bytes: 0,
            in_flight_bytes: vec![0; processes],
            durable_bytes: 0,
            trace_bytes: 0,
            max_held_bytes: limits.max_memory_bytes,
            max_node_bytes: limits.max_node_in_flight_bytes,
        }
    }

    /// Charges `bytes` of a message to `from` and the run; whether a limit is now passed.
    #[inline]
    fn charge_message(&mut self, from: NodeId, bytes: u64) -> bool {
        // No overflow check: the bytes a run holds fit in memory, far below 2^64.
        self.held_bytes = self.held_bytes.wrapping_add(bytes);
        let node = &mut self.in_flight_bytes[from.index()];
        *node = node.wrapping_add(bytes);
        // One branch for both limits.
        (*node > self.max_node_bytes) | (self.held_bytes > self.max_held_bytes)
    }

    /// Takes back what [`Books::charge_message`] charged. An underflow is a message let go
    /// twice: a broken count, which the overflow checks of every profile catch.
    #[inline]
    fn release_message(&mut self, from: NodeId, bytes: u64) {
        self.held_bytes -= bytes;
        self.in_flight_bytes[from.index()] -= bytes;
    }

    /// Charges `bytes` of durable state to the run; whether the limit is now passed.
    fn charge_durable(&mut self, bytes: u64) -> bool {
        self.held_bytes += bytes;
        self.durable_bytes += bytes;
        self.held_bytes > self.max_held_bytes
    }

    fn release_durable(&mut self, bytes: u64) {
        self.held_bytes -= bytes;
        self.durable_bytes -= bytes;
    }

    /// The trace sink now keeps `bytes`; whether the run passed its limit by it.
    fn set_trace(&mut self, bytes: u64) -> bool {
        let grew = bytes > self.trace_bytes;
        self.held_bytes = self.held_bytes - self.trace_bytes + bytes;
        self.trace_bytes = bytes;
        grew && self.held_bytes > self.max_held_bytes
    }

    /// Everything the run holds now, in bytes.
    pub(super) fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    /// What `node`'s messages in flight hold now, in bytes.
    pub(super) fn in_flight_bytes(&self, node: NodeId) -> u64 {
        self.in_flight_bytes[node.index()]
    }
}

/// What made a byte count pass its limit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Growth {
    /// A message `from` -> `to` of type `kind` (the resource's writes after the algorithm's
    /// types), charged `bytes`.
    Message {
        from: NodeId,
        to: NodeId,
        kind: usize,
        bytes: u64,
    },
    /// A durable write of `node`, charged `bytes`.
    Durable { node: NodeId, bytes: u64 },
    /// The trace sink, now keeping `bytes`.
    Trace { bytes: u64 },
}

impl<P: Process> Sim<'_, P> {
    /// The bytes of the engine's slot for one queued event: what a message costs beyond what
    /// it owns (sender, receiver, times, connection, and the message's own inline bytes).
    const SLOT_BYTES: usize = std::mem::size_of::<Option<EventData<P::Msg>>>();

    /// What a message is charged: the slot it fills, with what it holds in place of its
    /// inline part.
    #[inline]
    pub(super) fn message_bytes(msg: &P::Msg) -> u64 {
        let envelope = Self::SLOT_BYTES - std::mem::size_of::<P::Msg>();
        envelope.saturating_add(msg.size_bytes()) as u64
    }

    /// What a payload on the network is charged: as [`Sim::message_bytes`], a write to the
    /// resource its slot.
    #[inline]
    pub(super) fn payload_bytes(payload: &Payload<P::Msg>) -> u64 {
        match payload {
            Payload::Algo(msg) => Self::message_bytes(msg),
            Payload::Write { .. } => Self::SLOT_BYTES as u64,
        }
    }

    /// Charges `bytes` of a message `from` -> `to` of type `kind` to its sender and the run;
    /// past a limit, the run ends before its next event.
    #[inline]
    pub(super) fn charge_message(&mut self, from: NodeId, to: NodeId, kind: usize, bytes: u64) {
        if self.books.charge_message(from, bytes) {
            self.bytes_passed(Growth::Message {
                from,
                to,
                kind,
                bytes,
            });
        }
    }

    /// A message of `from` that was charged `bytes` was taken by its receiver's handler or
    /// lost.
    #[inline]
    pub(super) fn release_message(&mut self, from: NodeId, bytes: u64) {
        self.books.release_message(from, bytes);
    }

    /// Charges what `node` asked for in `effect`, if it is a message (a send or a write to
    /// the resource), as it leaves the handler.
    #[inline(always)]
    pub(super) fn charge_effect(&mut self, node: NodeId, effect: &NodeEffect<P>) {
        match effect {
            Effect::Send { to, msg } | Effect::SendUnordered { to, msg } => {
                self.charge_message(node, *to, msg.kind(), Self::message_bytes(msg));
            }
            Effect::Write { .. } => {
                let kind = self.names.messages.len();
                let to = self.resource_id;
                self.charge_message(node, to, kind, Self::SLOT_BYTES as u64);
            }
            _ => {}
        }
    }

    /// Takes back what [`Sim::charge_effect`] charged for `effect` of `node` (it was lost
    /// before it left: a crash).
    pub(super) fn release_effect(&mut self, node: NodeId, effect: &NodeEffect<P>) {
        match effect {
            Effect::Send { msg, .. } | Effect::SendUnordered { msg, .. } => {
                self.release_message(node, Self::message_bytes(msg));
            }
            Effect::Write { .. } => self.release_message(node, Self::SLOT_BYTES as u64),
            _ => {}
        }
    }

    /// Charges a durable write of `node` to the run as its handler asks for it.
    pub(super) fn charge_durable(&mut self, node: NodeId, durable: &P::Durable) {
        let bytes = durable.size_bytes() as u64;
        if self.books.charge_durable(bytes) {
            self.bytes_passed(Growth::Durable { node, bytes });
        }
    }

    /// Durable state that held `bytes` was replaced on its disk or lost in a crash.
    pub(super) fn release_durable(&mut self, bytes: u64) {
        self.books.release_durable(bytes);
    }

    /// The trace sink now keeps `bytes` in memory.
    pub(super) fn trace_holds(&mut self, bytes: u64) {
        if self.books.set_trace(bytes) {
            self.bytes_passed(Growth::Trace { bytes });
        }
    }

    /// A byte count passed its limit by `growth`: the run ends before its next event, unless
    /// something ends it already (a refused effect, or the queued events' count).
    #[cold]
    #[inline(never)]
    fn bytes_passed(&mut self, growth: Growth) {
        let limit = match growth {
            Growth::Message { from, .. }
                if self.books.in_flight_bytes(from) > self.books.max_node_bytes =>
            {
                Limit::NodeInFlight
            }
            _ => Limit::Memory,
        };
        let reached = match (limit, growth) {
            (Limit::NodeInFlight, Growth::Message { from, .. }) => self.books.in_flight_bytes(from),
            _ => self.books.held_bytes(),
        };
        if self.halt.is_none() {
            self.halt = Some(Halt::Bytes {
                limit,
                reached,
                growth,
            });
        }
    }

    /// The guard's error for a byte limit passed by `growth`, with `reached` bytes: what
    /// passed it (the node, the message type, its size) and what the run held then.
    #[cold]
    pub(super) fn exceeded_bytes(
        &self,
        limit: Limit,
        reached: u64,
        growth: Growth,
    ) -> LimitExceeded {
        let mut e = self.exceeded(limit, reached);
        let what = match growth {
            Growth::Message {
                from,
                to,
                kind,
                bytes,
            } => {
                e.node = Some(from);
                let kind = self.message_stats[kind].kind.as_str();
                let message = format!("a message of type `{kind}`, {},", format_bytes(bytes));
                if limit == Limit::NodeInFlight {
                    format!(
                        "{from} has {} of messages in flight (sent, not yet handled by their \
                         receivers nor lost); the last: {message} to {to}",
                        format_bytes(reached)
                    )
                } else {
                    format!("what passed it: {message} from {from} to {to}")
                }
            }
            Growth::Durable { node, bytes } => {
                e.node = Some(node);
                format!(
                    "what passed it: a durable write of {} by {node}",
                    format_bytes(bytes)
                )
            }
            Growth::Trace { bytes } => {
                format!(
                    "what passed it: the trace kept in memory, now {}",
                    format_bytes(bytes)
                )
            }
        };
        let held = self.held_words();
        e.where_ = format!("{what}; {held}; {}", e.where_);
        e
    }

    /// What the run holds, in words: messages (and the process with most in flight),
    /// durable state, trace.
    fn held_words(&self) -> String {
        let books = &self.books;
        let messages = books.held_bytes - books.durable_bytes - books.trace_bytes;
        let mut words = format!("held: {} of messages in flight", format_bytes(messages));
        let most = (0..books.in_flight_bytes.len())
            .map(NodeId::from)
            .max_by_key(|n| (books.in_flight_bytes(*n), std::cmp::Reverse(*n)));
        if let Some(node) = most.filter(|n| books.in_flight_bytes(*n) > 0) {
            words.push_str(&format!(
                " (most from {node}: {})",
                format_bytes(books.in_flight_bytes(node))
            ));
        }
        words.push_str(&format!(
            ", {} of durable state, {} of trace kept in memory",
            format_bytes(books.durable_bytes),
            format_bytes(books.trace_bytes)
        ));
        words
    }

    /// What the run holds by the books: everything, then per process its messages in
    /// flight, in bytes.
    #[cfg(test)]
    pub(super) fn booked_bytes(&self) -> (u64, Vec<u64>) {
        (self.books.held_bytes, self.books.in_flight_bytes.clone())
    }

    /// What the run holds by a walk over everything it holds, as [`Sim::booked_bytes`]: the
    /// dumb oracle the books are tested against.
    #[cfg(test)]
    pub(super) fn recounted_bytes(&self) -> (u64, Vec<u64>) {
        use super::Held;
        let mut per_node = vec![0u64; self.books.in_flight_bytes.len()];
        let mut durable = 0u64;
        for item in self.slab.items.iter().flatten() {
            if let EventData::Deliver { from, payload, .. } = item {
                per_node[from.index()] += Self::payload_bytes(payload);
            }
        }
        for (pair, connection) in self.connections.iter() {
            for (from, waiting) in connection.waiting_from(*pair) {
                per_node[from.index()] += Self::payload_bytes(&waiting.payload);
            }
        }
        for (index, state) in self.nodes.iter().enumerate() {
            for held in &state.held {
                if let Held::Message { from, msg, .. } = held {
                    per_node[from.index()] += Self::message_bytes(msg);
                }
            }
            let effects = state
                .deferred
                .iter()
                .chain(state.outgoing.iter().map(|(_, e)| e));
            for effect in effects {
                per_node[index] += match effect {
                    Effect::Send { msg, .. } | Effect::SendUnordered { msg, .. } => {
                        Self::message_bytes(msg)
                    }
                    Effect::Write { .. } => Self::SLOT_BYTES as u64,
                    _ => 0,
                };
            }
            let writing = state.writing.iter().map(|(_, d, _)| d);
            for d in writing.chain(state.persisted.iter()) {
                durable += d.size_bytes() as u64;
            }
        }
        let total = per_node.iter().sum::<u64>() + durable + self.books.trace_bytes;
        (total, per_node)
    }
}
