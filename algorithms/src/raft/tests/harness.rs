//! A tiny deterministic network for driving Raft nodes by hand: a manual clock, a list of
//! messages in flight with seeded latency, one slot per (node, timer kind), crashes,
//! restarts and partitions. Either run it by time (`run_for`) or step it by hand
//! (`fire`, `deliver`) to stage an exact interleaving.

use crate::raft::node::Role;
use crate::raft::{RaftConfig, RaftMsg, RaftNode, RaftTimer};
use splitbrain_sim::{
    Ctx, Effect, Message, NodeId, Process, Signal, SimRng, StreamId, TimerKind, NANOS_PER_MILLI,
};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) const MS: u64 = NANOS_PER_MILLI;

/// What a node did that a test may ask about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Observed {
    BecameLeader { term: u64 },
    SteppedDown,
    Signal(Signal),
    Sent { to: usize, msg: RaftMsg },
}

#[derive(Clone, Debug)]
struct InFlight {
    deliver_at: u64,
    seq: u64,
    from: usize,
    to: usize,
    msg: RaftMsg,
}

/// A cluster of Raft nodes on an in-memory network. Local clocks equal true time.
pub(crate) struct Cluster {
    pub(crate) nodes: Vec<RaftNode>,
    rngs: Vec<SimRng>,
    network_rng: SimRng,
    now: u64,
    seq: u64,
    in_flight: Vec<InFlight>,
    /// Per node, per timer kind: `(deadline, seq)` when armed.
    timers: Vec<Vec<Option<(u64, u64)>>>,
    up: Vec<bool>,
    /// `blocked[from][to]`: messages on this directed link are lost.
    blocked: Vec<Vec<bool>>,
    /// Every observation, in order: `(true time, node, what)`.
    pub(crate) history: Vec<(u64, usize, Observed)>,
    /// Term claims, checked for election safety as they happen.
    pub(crate) claims: BTreeMap<u64, BTreeSet<usize>>,
    /// Latency is drawn uniformly from this range for every message.
    pub(crate) latency_ns: (u64, u64),
}

impl Cluster {
    /// `members` nodes, not started yet.
    pub(crate) fn new(members: usize, config: &RaftConfig, seed: u64) -> Self {
        Self {
            nodes: (0..members)
                .map(|i| RaftNode::new(NodeId::from(i), members, config))
                .collect(),
            rngs: (0..members)
                .map(|i| SimRng::stream(seed, StreamId::node(i)))
                .collect(),
            network_rng: SimRng::stream(seed, StreamId::NETWORK),
            now: 0,
            seq: 0,
            in_flight: Vec::new(),
            timers: vec![vec![None; RaftTimer::NAMES.len()]; members],
            up: vec![true; members],
            blocked: vec![vec![false; members]; members],
            history: Vec::new(),
            claims: BTreeMap::new(),
            latency_ns: (MS, 5 * MS),
        }
    }

    /// `members` nodes, each started at time zero in id order.
    pub(crate) fn started(members: usize, config: &RaftConfig, seed: u64) -> Self {
        let mut cluster = Self::new(members, config, seed);
        for i in 0..members {
            cluster.drive(i, |node, ctx| node.on_start(ctx));
        }
        cluster
    }

    pub(crate) fn now(&self) -> u64 {
        self.now
    }

    /// Calls one handler of node `i` and applies what it asked for.
    pub(crate) fn drive(
        &mut self,
        i: usize,
        handler: impl FnOnce(&mut RaftNode, &mut Ctx<'_, RaftMsg, RaftTimer>),
    ) {
        assert!(self.up[i], "n{i} is down");
        let term_before = self.nodes[i].term();
        let mut out = Vec::new();
        {
            let mut ctx = Ctx::new(
                NodeId::from(i),
                self.nodes.len(),
                self.now as i64,
                &mut self.rngs[i],
                &mut out,
            );
            handler(&mut self.nodes[i], &mut ctx);
        }
        assert!(
            self.nodes[i].term() >= term_before,
            "n{i}'s term went backwards"
        );
        for effect in out {
            self.apply(i, effect);
        }
    }

    fn apply(&mut self, i: usize, effect: Effect<RaftMsg, RaftTimer>) {
        match effect {
            Effect::Send { to, msg } => {
                self.history.push((
                    self.now,
                    i,
                    Observed::Sent {
                        to: to.index(),
                        msg: msg.clone(),
                    },
                ));
                let latency = self
                    .network_rng
                    .between(self.latency_ns.0, self.latency_ns.1);
                self.seq += 1;
                let flight = InFlight {
                    deliver_at: self.now + latency,
                    seq: self.seq,
                    from: i,
                    to: to.index(),
                    msg,
                };
                self.in_flight.push(flight);
            }
            Effect::SetTimer {
                timer,
                after_local_ns,
            } => {
                self.seq += 1;
                self.timers[i][timer.index()] = Some((self.now + after_local_ns, self.seq));
            }
            Effect::CancelTimer { timer } => self.timers[i][timer.index()] = None,
            Effect::BecameLeader { term, token } => {
                assert_eq!(term, token, "raft fences with its term");
                assert_eq!(self.nodes[i].role(), Role::Leader);
                self.claims.entry(term).or_default().insert(i);
                self.history
                    .push((self.now, i, Observed::BecameLeader { term }));
            }
            Effect::SteppedDown => self.history.push((self.now, i, Observed::SteppedDown)),
            Effect::Signal(signal) => self.history.push((self.now, i, Observed::Signal(signal))),
            other => panic!("raft never asks for {other:?}"),
        }
    }

    /// The earliest pending event: `(time, seq, Some(flight index) | None for a timer, node, kind)`.
    fn next_event(&self) -> Option<(u64, u64, Option<usize>, usize, usize)> {
        let flights = self
            .in_flight
            .iter()
            .enumerate()
            .map(|(index, f)| (f.deliver_at, f.seq, Some(index), f.to, 0));
        let timers = self.timers.iter().enumerate().flat_map(|(node, slots)| {
            slots
                .iter()
                .enumerate()
                .filter_map(move |(kind, slot)| slot.map(|(at, seq)| (at, seq, None, node, kind)))
        });
        flights
            .chain(timers)
            .min_by_key(|(at, seq, ..)| (*at, *seq))
    }

    /// Processes every event due up to `until`, then sets the clock to `until`.
    pub(crate) fn run_until(&mut self, until: u64) {
        while let Some((at, _, flight, node, kind)) = self.next_event() {
            if at > until {
                break;
            }
            self.now = at;
            match flight {
                Some(index) => {
                    let flight = self.in_flight.remove(index);
                    if self.up[flight.to] && !self.blocked[flight.from][flight.to] {
                        let (from, msg) = (NodeId::from(flight.from), flight.msg);
                        self.drive(node, |n, ctx| n.on_message(ctx, from, msg));
                    }
                }
                None => {
                    self.timers[node][kind] = None;
                    self.drive(node, |n, ctx| n.on_timer(ctx, RaftTimer::from_index(kind)));
                }
            }
        }
        self.now = self.now.max(until);
    }

    pub(crate) fn run_for(&mut self, duration: u64) {
        self.run_until(self.now + duration);
    }

    /// Fires node `i`'s timer `timer` now, by hand (its slot is cleared first).
    pub(crate) fn fire(&mut self, i: usize, timer: RaftTimer) {
        self.timers[i][timer.index()] = None;
        self.drive(i, |n, ctx| n.on_timer(ctx, timer));
    }

    /// Delivers now, by hand, the first message in flight from `from` to `to` of type
    /// `kind` (a name from `RaftMsg::KINDS`). Panics if there is none.
    pub(crate) fn deliver(&mut self, from: usize, to: usize, kind: &str) {
        let index = self
            .in_flight
            .iter()
            .position(|f| f.from == from && f.to == to && RaftMsg::KINDS[f.msg.kind()] == kind)
            .unwrap_or_else(|| panic!("no {kind} in flight from n{from} to n{to}"));
        let flight = self.in_flight.remove(index);
        self.drive(to, |n, ctx| {
            n.on_message(ctx, NodeId::from(from), flight.msg)
        });
    }

    /// Stops node `i`: its timers die, messages to it are lost.
    pub(crate) fn crash(&mut self, i: usize) {
        self.up[i] = false;
        self.timers[i].fill(None);
        self.in_flight.retain(|f| f.to != i);
    }

    /// Brings node `i` back with its durable state only.
    pub(crate) fn restart(&mut self, i: usize) {
        assert!(!self.up[i]);
        self.up[i] = true;
        self.drive(i, |n, ctx| n.on_restart(ctx));
    }

    pub(crate) fn resign(&mut self, i: usize) {
        self.drive(i, |n, ctx| n.on_resign(ctx));
    }

    /// Cuts node `i` off from everyone, both ways.
    pub(crate) fn isolate(&mut self, i: usize) {
        for other in 0..self.nodes.len() {
            if other != i {
                self.blocked[i][other] = true;
                self.blocked[other][i] = true;
            }
        }
    }

    /// Cuts the directed link `from -> to` only.
    pub(crate) fn cut_one_way(&mut self, from: usize, to: usize) {
        self.blocked[from][to] = true;
    }

    pub(crate) fn heal(&mut self) {
        for row in &mut self.blocked {
            row.fill(false);
        }
    }

    /// The live nodes that currently believe they lead.
    pub(crate) fn leaders(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|i| self.up[*i] && self.nodes[*i].role() == Role::Leader)
            .collect()
    }

    /// The single live leader; panics when there is none or several.
    pub(crate) fn leader(&self) -> usize {
        let leaders = self.leaders();
        assert_eq!(leaders.len(), 1, "expected one leader, found {leaders:?}");
        leaders[0]
    }

    /// Runs until some live node leads, at most `limit`; returns it.
    pub(crate) fn run_until_leader(&mut self, limit: u64) -> usize {
        let deadline = self.now + limit;
        while self.now < deadline {
            self.run_for(MS);
            if self.leaders().len() == 1 {
                return self.leaders()[0];
            }
        }
        panic!("no leader within {limit}ns: {:?}", self.leaders());
    }

    /// Election safety over the whole history: at most one claimant per term.
    pub(crate) fn assert_one_leader_per_term(&self) {
        for (term, claimants) in &self.claims {
            assert!(
                claimants.len() <= 1,
                "term {term} has leaders {claimants:?}"
            );
        }
    }

    /// A bookmark in the history, for the `*_since` queries.
    pub(crate) fn mark(&self) -> usize {
        self.history.len()
    }

    /// Observations of node `i` since the bookmark `mark`.
    pub(crate) fn observed_since(&self, i: usize, mark: usize) -> Vec<Observed> {
        self.history[mark..]
            .iter()
            .filter(|(_, node, _)| *node == i)
            .map(|(_, _, o)| o.clone())
            .collect()
    }

    /// Signals of any node since the bookmark `mark` that match `wanted`.
    pub(crate) fn count_signals_since(
        &self,
        mark: usize,
        wanted: impl Fn(&Signal) -> bool,
    ) -> usize {
        self.history[mark..]
            .iter()
            .filter(|(_, _, o)| matches!(o, Observed::Signal(s) if wanted(s)))
            .count()
    }

    /// The messages node `from` sent since the bookmark `mark`.
    pub(crate) fn sent_since(&self, from: usize, mark: usize) -> Vec<(usize, RaftMsg)> {
        self.history[mark..]
            .iter()
            .filter_map(|(_, node, o)| match o {
                Observed::Sent { to, msg } if *node == from => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    /// Whether node `i`'s timer slot `timer` is armed.
    pub(crate) fn timer_armed(&self, i: usize, timer: RaftTimer) -> bool {
        self.timers[i][timer.index()].is_some()
    }

    pub(crate) fn write_token(&self, i: usize) -> Option<u64> {
        self.nodes[i].write_token(self.now as i64)
    }
}

/// Settings that keep tests short: 150-300 ms timeouts, 50 ms heartbeats.
pub(crate) fn config(pre_vote: bool, check_quorum: bool) -> RaftConfig {
    RaftConfig {
        pre_vote,
        check_quorum,
        ..RaftConfig::default()
    }
}
