//! The `Stream` transport at run time (docs/engine.md, "Transports"): a TCP-like connection
//! per pair of processes, opened at the first send. While it is up nothing is lost silently:
//! a send the link loses or a partition cuts is held back and sent again after a
//! retransmission timeout that doubles each time (the minimum to the maximum of the
//! [`StreamConfig`]), and what was sent after it waits behind it, so each direction delivers
//! in send order. The connection breaks when its peers have been cut apart for its timeout,
//! when a held-back message has waited that long, when an end crashes, or when an end closes
//! it ([`crate::Ctx::disconnect`]); what it still carried is lost and both ends (the closer
//! excepted) hear of it through `on_disconnect`. A connection costs nothing to open.

use super::nodes::{Input, Status};
use super::{EventData, Held, Payload, Sim, Via};
use crate::connections::{pair, Pair, Waiting};
use crate::ids::NodeId;
use crate::network::Transit;
use crate::network_config::{StreamConfig, Transport};
use crate::process::Process;
use crate::time::Nanos;

impl<P: Process> Sim<'_, P> {
    /// The `Stream` settings, if messages travel on connections.
    pub(super) fn stream_config(&self) -> Option<StreamConfig> {
        match self.config.network.transport {
            Transport::Stream(config) => Some(config),
            Transport::Datagram => None,
        }
    }

    /// Hands a message to the connection `from` -> `to`, opening it if needed.
    pub(super) fn stream_send(&mut self, from: NodeId, to: NodeId, payload: Payload<P::Msg>) {
        let config = self.stream_config().expect("called on Stream only");
        let now = self.now;
        let cut = !self.network.connected(from, to);
        let (connection, opened) = self.connections.open(from, to, now, cut);
        let epoch = connection.epoch;
        if opened && cut {
            self.arm_cut_timeout(pair(from, to), epoch, now, config);
        }
        let Some(connection) = self.connections.current(from, to, epoch) else {
            unreachable!("the connection is open")
        };
        let direction = connection.direction(from, to);
        let seq = direction.take_seq();
        let message = Waiting {
            seq,
            sent_ns: now,
            payload,
        };
        if !direction.waiting.is_empty() {
            direction.hold(message);
            self.note_held(1);
        } else {
            match self.network.transmit(from, to) {
                Transit::Deliver { latency_ns, .. } => {
                    // TCP drops a duplicated segment: only the first copy counts.
                    let arrival_ns = direction.arrival_ns(now, latency_ns);
                    let via = Some(Via::new(epoch, seq));
                    self.push_deliver(arrival_ns, from, to, message, via);
                }
                Transit::LostToPartition | Transit::LostToLoss => {
                    direction.hold(message);
                    direction.attempt = 0;
                    self.note_held(1);
                    self.drops.retransmissions += 1;
                    let at_ns = now.saturating_add(config.rto_ns(0));
                    self.push_event(at_ns, EventData::Retransmit { from, to, epoch });
                }
            }
        }
    }

    fn push_deliver(
        &mut self,
        at_ns: Nanos,
        from: NodeId,
        to: NodeId,
        message: Waiting<Payload<P::Msg>>,
        via: Option<Via>,
    ) {
        let data = EventData::Deliver {
            from,
            to,
            sent_ns: message.sent_ns,
            payload: message.payload,
            via,
        };
        self.push_event(at_ns, data);
    }

    /// The first held-back message of `from` -> `to` goes again; if it gets through, so does
    /// everything behind it, in order.
    pub(super) fn on_retransmit(&mut self, from: NodeId, to: NodeId, epoch: u64) {
        let config = self.stream_config().expect("scheduled on Stream only");
        let now = self.now;
        let Some(connection) = self.connections.current(from, to, epoch) else {
            return;
        };
        let direction = connection.direction(from, to);
        let Some(first_sent_ns) = direction.waiting.front().map(|w| w.sent_ns) else {
            return;
        };
        let receiver_down = self.nodes[to.index()].status == Status::Crashed;
        match self.network.transmit(from, to) {
            Transit::Deliver { latency_ns, .. } if !receiver_down => {
                direction.attempt = 0;
                let arrival_ns = direction.arrival_ns(now, latency_ns);
                let released: Vec<_> = direction.waiting.drain(..).collect();
                self.held_in_streams = self.held_in_streams.saturating_sub(released.len() as u64);
                for message in released {
                    let via = Some(Via::new(epoch, message.seq));
                    self.push_deliver(arrival_ns, from, to, message, via);
                }
            }
            _ if now.saturating_sub(first_sent_ns) >= config.timeout_ns => {
                self.break_connection(pair(from, to), None);
            }
            _ => {
                direction.attempt += 1;
                let at_ns = now.saturating_add(config.rto_ns(direction.attempt));
                self.drops.retransmissions += 1;
                self.push_event(at_ns, EventData::Retransmit { from, to, epoch });
            }
        }
    }

    /// A message on connection `via` arrives: whether the receiver gets it now. A message of
    /// a broken connection is lost; one that meets a partition or a crashed receiver (a host
    /// that does not answer), or arrives while an earlier one is held back, is held back
    /// itself.
    pub(super) fn stream_arrival(
        &mut self,
        from: NodeId,
        to: NodeId,
        sent_ns: Nanos,
        payload: Payload<P::Msg>,
        via: Via,
    ) -> Option<Payload<P::Msg>> {
        let config = self.stream_config().expect("a connection implies Stream");
        let cut = self.network.is_cut(from, to) || self.nodes[to.index()].status == Status::Crashed;
        let Some(connection) = self.connections.current(from, to, via.epoch()) else {
            let kind = Self::kind_of(self.names, &payload);
            self.message_stats[kind].dropped += 1;
            self.drops.broken_connection += 1;
            self.release_message(from, Self::payload_bytes(&payload));
            return None;
        };
        let direction = connection.direction(from, to);
        let behind = direction.waiting.front().is_some_and(|w| w.seq < via.seq);
        if !cut && !behind {
            return Some(payload);
        }
        let message = Waiting {
            seq: via.seq,
            sent_ns,
            payload,
        };
        let was_idle = direction.waiting.is_empty();
        direction.hold(message);
        if was_idle {
            direction.attempt = 0;
            self.drops.retransmissions += 1;
            let at_ns = self.now.saturating_add(config.rto_ns(0));
            let epoch = via.epoch();
            self.push_event(at_ns, EventData::Retransmit { from, to, epoch });
        }
        self.note_held(1);
        None
    }

    /// Counts `count` more messages held back on connections toward the in-flight limit.
    fn note_held(&mut self, count: u64) {
        self.held_in_streams = self.held_in_streams.saturating_add(count);
        let queued = (self.slab.items.len() as u64).saturating_add(self.held_in_streams);
        if queued > self.config.limits.max_in_flight {
            self.overflowed(queued);
        }
    }

    /// Closes the connection of `pair`: what it held back is lost, and each end other than
    /// `closer` hears of it.
    pub(super) fn break_connection(&mut self, pair: Pair, closer: Option<NodeId>) {
        let Some(mut connection) = self.connections.close(pair.0, pair.1) else {
            return;
        };
        self.drops.connections_broken += 1;
        for (from, _, message) in connection.drain_waiting(pair) {
            self.held_in_streams = self.held_in_streams.saturating_sub(1);
            let kind = Self::kind_of(self.names, &message.payload);
            self.message_stats[kind].dropped += 1;
            self.drops.broken_connection += 1;
            self.release_message(from, Self::payload_bytes(&message.payload));
        }
        for (node, peer) in [(pair.0, pair.1), (pair.1, pair.0)] {
            if Some(node) != closer && self.nodes[node.index()].status != Status::Crashed {
                self.push_event(self.now, EventData::Disconnected { node, peer });
            }
        }
    }

    /// A crashed process's connections break; its peers hear of it at once (the kernel
    /// resets the sockets of a killed process).
    pub(super) fn break_connections_of(&mut self, node: NodeId) {
        for pair in self.connections.pairs_of(node) {
            self.break_connection(pair, Some(node));
        }
    }

    /// After a partition began or ended: notes which connections are cut now, and arms
    /// the timeout of each newly cut one.
    pub(super) fn recheck_stream_cuts(&mut self) {
        let Some(config) = self.stream_config() else {
            return;
        };
        let now = self.now;
        let mut newly_cut = Vec::new();
        for (&(a, b), connection) in self.connections.iter_mut() {
            let cut = !self.network.connected(a, b);
            match (connection.cut_since_ns, cut) {
                (None, true) => {
                    connection.cut_since_ns = Some(now);
                    newly_cut.push(((a, b), connection.epoch));
                }
                (Some(_), false) => connection.cut_since_ns = None,
                _ => {}
            }
        }
        for (pair, epoch) in newly_cut {
            self.arm_cut_timeout(pair, epoch, now, config);
        }
    }

    fn arm_cut_timeout(&mut self, (a, b): Pair, epoch: u64, since_ns: Nanos, config: StreamConfig) {
        let at_ns = since_ns.saturating_add(config.timeout_ns);
        let data = EventData::StreamCutTimeout {
            a,
            b,
            epoch,
            since_ns,
        };
        self.push_event(at_ns, data);
    }

    /// The cut that began at `since_ns` has lasted the connection's timeout: if it still
    /// holds, the connection breaks (TCP's keep-alive or user timeout gives up).
    pub(super) fn on_stream_cut_timeout(
        &mut self,
        a: NodeId,
        b: NodeId,
        epoch: u64,
        since_ns: Nanos,
    ) {
        let still_cut = self
            .connections
            .current(a, b, epoch)
            .is_some_and(|c| c.cut_since_ns == Some(since_ns));
        if still_cut {
            self.break_connection(pair(a, b), None);
        }
    }

    /// `node` hears that its connection to `peer` broke (held while it is paused).
    pub(super) fn on_disconnected(&mut self, node: NodeId, peer: NodeId) {
        match self.nodes[node.index()].status {
            Status::Crashed => {}
            Status::Paused { .. } => {
                let held = Held::Disconnected { peer };
                self.nodes[node.index()].held.push_back(held);
            }
            Status::Up => self.invoke(node, Input::Disconnected { peer }),
        }
    }
}
