//! `Stream` connections between pairs of processes: which are open, each one's epoch (a
//! broken connection's messages never arrive on its successor), and per direction the
//! messages waiting behind a lost or cut one (TCP's head-of-line blocking) and the arrival
//! time of the last one delivered (so that delivery keeps the send order).
//!
//! Plain data: the engine (engine/streams.rs) decides what happens; this module only keeps
//! the books, in a `BTreeMap` so that iteration order is deterministic.

use crate::ids::NodeId;
use crate::time::Nanos;
use std::collections::{BTreeMap, VecDeque};

/// The unordered pair of processes a connection joins, lower id first.
pub type Pair = (NodeId, NodeId);

/// The pair `a`-`b`, in canonical order.
pub fn pair(a: NodeId, b: NodeId) -> Pair {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// A message accepted by a connection and not yet delivered.
#[derive(Debug)]
pub struct Waiting<P> {
    /// The message's place in its direction's send order.
    pub seq: u64,
    /// True time the process sent it.
    pub sent_ns: Nanos,
    /// The message.
    pub payload: P,
}

/// One direction of a connection.
#[derive(Debug)]
pub struct Direction<P> {
    next_seq: u64,
    /// Messages held back, in send order: the first is being retransmitted, the rest wait
    /// behind it. Non-empty exactly while a retransmission is scheduled.
    pub waiting: VecDeque<Waiting<P>>,
    /// Retransmissions of the first waiting message so far.
    pub attempt: u32,
    /// True time the last message handed to the network in this direction arrives.
    pub last_arrival_ns: Nanos,
}

impl<P> Default for Direction<P> {
    fn default() -> Self {
        Self {
            next_seq: 0,
            waiting: VecDeque::new(),
            attempt: 0,
            last_arrival_ns: 0,
        }
    }
}

impl<P> Direction<P> {
    /// The next message's place in the send order.
    pub fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Holds `message` back, in send order (a message that met a cut on arrival may have
    /// been sent before messages already waiting). Returns whether it is now the first.
    pub fn hold(&mut self, message: Waiting<P>) -> bool {
        let at = self.waiting.partition_point(|w| w.seq < message.seq);
        self.waiting.insert(at, message);
        at == 0
    }

    /// When a message sent now with `latency_ns` arrives: never before the one sent
    /// before it.
    pub fn arrival_ns(&mut self, now_ns: Nanos, latency_ns: Nanos) -> Nanos {
        let arrival_ns = now_ns.saturating_add(latency_ns).max(self.last_arrival_ns);
        self.last_arrival_ns = arrival_ns;
        arrival_ns
    }
}

/// An open connection.
#[derive(Debug)]
pub struct Connection<P> {
    /// Which connection between this pair this is (the pair's first is 0).
    pub epoch: u64,
    /// Since when a partition has cut the pair apart, if one does.
    pub cut_since_ns: Option<Nanos>,
    /// Lower id to higher, then higher to lower.
    directions: [Direction<P>; 2],
}

impl<P> Connection<P> {
    /// The direction `from` -> `to` (`from` is one of the pair).
    pub fn direction(&mut self, from: NodeId, to: NodeId) -> &mut Direction<P> {
        &mut self.directions[usize::from(from > to)]
    }

    /// Every message still waiting, both directions (not emptied).
    pub fn waiting(&self) -> impl Iterator<Item = &Waiting<P>> {
        self.directions.iter().flat_map(|d| d.waiting.iter())
    }

    /// Every message still waiting, both directions, with its sender (`pair` is this
    /// connection's pair).
    #[cfg(test)]
    pub fn waiting_from(&self, pair: Pair) -> impl Iterator<Item = (NodeId, &Waiting<P>)> {
        let (low, high) = pair;
        let [up, down] = &self.directions;
        let up = up.waiting.iter().map(move |w| (low, w));
        let down = down.waiting.iter().map(move |w| (high, w));
        up.chain(down)
    }

    /// Every message still waiting, both directions, emptied, with its sender and receiver
    /// (`pair` is this connection's pair).
    pub fn drain_waiting(&mut self, pair: Pair) -> Vec<(NodeId, NodeId, Waiting<P>)> {
        let (low, high) = pair;
        let [up, down] = &mut self.directions;
        let up = up.waiting.drain(..).map(|w| (low, high, w));
        let down = down.waiting.drain(..).map(|w| (high, low, w));
        up.chain(down).collect()
    }
}

/// Every `Stream` connection of a run.
#[derive(Debug)]
pub struct Connections<P> {
    open: BTreeMap<Pair, Connection<P>>,
    /// The epoch the next connection gets: unique over the run, so a message of a broken
    /// connection never matches its pair's next one.
    next_epoch: u64,
}

impl<P> Default for Connections<P> {
    fn default() -> Self {
        Self {
            open: BTreeMap::new(),
            next_epoch: 0,
        }
    }
}

impl<P> Connections<P> {
    /// The open connection of `a`-`b`, opened now if there is none (`cut` says whether a
    /// partition separates them now), and whether it was opened by this call.
    pub fn open(
        &mut self,
        a: NodeId,
        b: NodeId,
        now_ns: Nanos,
        cut: bool,
    ) -> (&mut Connection<P>, bool) {
        let mut opened = false;
        let next_epoch = &mut self.next_epoch;
        let connection = self.open.entry(pair(a, b)).or_insert_with(|| {
            opened = true;
            *next_epoch += 1;
            Connection {
                epoch: *next_epoch - 1,
                cut_since_ns: cut.then_some(now_ns),
                directions: [Direction::default(), Direction::default()],
            }
        });
        (connection, opened)
    }

    /// The open connection of `a`-`b` if it is the one of `epoch`.
    pub fn current(&mut self, a: NodeId, b: NodeId, epoch: u64) -> Option<&mut Connection<P>> {
        self.open.get_mut(&pair(a, b)).filter(|c| c.epoch == epoch)
    }

    /// Closes `a`-`b`; returns the connection if it was open.
    pub fn close(&mut self, a: NodeId, b: NodeId) -> Option<Connection<P>> {
        self.open.remove(&pair(a, b))
    }

    /// The pairs of the open connections that `node` is part of.
    pub fn pairs_of(&self, node: NodeId) -> Vec<Pair> {
        self.open
            .keys()
            .filter(|(a, b)| *a == node || *b == node)
            .copied()
            .collect()
    }

    /// Every open connection, in pair order.
    pub fn iter(&self) -> impl Iterator<Item = (&Pair, &Connection<P>)> {
        self.open.iter()
    }

    /// Every open connection, in pair order, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&Pair, &mut Connection<P>)> {
        self.open.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(seq: u64) -> Waiting<u64> {
        Waiting {
            seq,
            sent_ns: 0,
            payload: seq,
        }
    }

    #[test]
    fn held_messages_keep_their_send_order() {
        let mut d = Direction::default();
        assert!(d.hold(waiting(3)));
        assert!(!d.hold(waiting(5)));
        assert!(d.hold(waiting(1)), "an earlier message goes first");
        let order: Vec<u64> = d.waiting.iter().map(|w| w.seq).collect();
        assert_eq!(order, vec![1, 3, 5]);
    }

    #[test]
    fn arrivals_never_overtake() {
        let mut d = Direction::<u64>::default();
        assert_eq!(d.arrival_ns(0, 10), 10);
        assert_eq!(d.arrival_ns(1, 2), 10, "a faster later message waits");
        assert_eq!(d.arrival_ns(20, 2), 22);
    }

    #[test]
    fn a_new_connection_gets_a_new_epoch_and_old_messages_are_stale() {
        let mut c = Connections::<u64>::default();
        let (a, b) = (NodeId(2), NodeId(0));
        assert_eq!(c.open(a, b, 0, false).0.epoch, 0);
        assert!(c.current(b, a, 0).is_some());
        c.close(a, b);
        assert!(c.current(a, b, 0).is_none());
        assert_eq!(c.open(b, a, 5, true).0.epoch, 1);
        let (same, opened) = c.open(a, b, 9, false);
        assert_eq!(
            (same.cut_since_ns, opened),
            (Some(5), false),
            "still the same"
        );
        assert_eq!(c.pairs_of(NodeId(0)), vec![(NodeId(0), NodeId(2))]);
        assert!(c.pairs_of(NodeId(1)).is_empty());
        assert_eq!(
            c.open(NodeId(1), NodeId(3), 9, false).0.epoch,
            2,
            "unique in the run"
        );
    }

    #[test]
    fn directions_are_separate() {
        let mut c = Connections::<u64>::default();
        let (conn, _) = c.open(NodeId(0), NodeId(1), 0, false);
        conn.direction(NodeId(0), NodeId(1)).hold(waiting(0));
        assert!(conn.direction(NodeId(1), NodeId(0)).waiting.is_empty());
        let lost = conn.drain_waiting(pair(NodeId(1), NodeId(0)));
        assert_eq!(lost.len(), 1);
        assert_eq!((lost[0].0, lost[0].1), (NodeId(0), NodeId(1)));
    }
}
