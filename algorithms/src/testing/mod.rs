//! A tiny deterministic network for driving any [`Process`] by hand, shared by the
//! whole-cluster tests of every algorithm: a manual clock equal to every node's local clock,
//! messages in flight with seeded latency, one slot per (node, timer kind), crashes,
//! restarts and cut links. Run it by time (`run_for`), or stage an exact interleaving
//! (`fire`, `disarm`, `deliver`). What differs between algorithms is data: [`Rules`].
//!
//! The random draws are part of every seeded test's schedule: node `i` draws from
//! `StreamId::node(i)` and the network from `StreamId::NETWORK`, one latency per message in
//! the order the messages are sent. Changing that order changes what those tests exercise.

mod history;
pub(crate) mod traced;

pub(crate) use history::counts_of;

use splitbrain_sim::{
    Ctx, Effect, Message, NodeId, Process, Signal, SimRng, StreamId, TimerKind, NANOS_PER_MILLI,
};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) const MS: u64 = NANOS_PER_MILLI;

/// What a node did that a test may ask about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Observed<M> {
    BecameLeader { term: u64, token: u64 },
    SteppedDown,
    Signal(Signal),
    Sent { to: usize, msg: M },
}

/// What a crash does to the messages already on their way to the crashed node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnCrash {
    /// Nothing: each is lost if it arrives while the node is down, and delivered if the node
    /// is back by then (as in the engine).
    KeepInFlight,
    /// They are all lost at once, even if the node restarts before they would arrive.
    DropInFlight,
}

/// What the harness does differently for one algorithm's tests.
pub(crate) struct Rules<P> {
    /// Latency is drawn uniformly from this inclusive range for every message.
    pub(crate) latency_ns: (u64, u64),
    pub(crate) on_crash: OnCrash,
    /// Asserts the algorithm's own facts about a leadership claim `(claimant, term, token)`,
    /// with the claimant as the step that claimed left it.
    pub(crate) check_claim: fn(&P, u64, u64),
}

impl<P> Default for Rules<P> {
    /// 1-5 ms latency, messages to a crashed node lost only if they arrive while it is down,
    /// nothing checked beyond what the harness checks for every algorithm.
    fn default() -> Self {
        Self {
            latency_ns: (MS, 5 * MS),
            on_crash: OnCrash::KeepInFlight,
            check_claim: |_, _, _| {},
        }
    }
}

#[derive(Clone, Debug)]
struct InFlight<M> {
    deliver_at: u64,
    seq: u64,
    from: usize,
    to: usize,
    msg: M,
}

/// A cluster of processes on an in-memory network. Local clocks equal true time.
pub(crate) struct Cluster<P: Process> {
    pub(crate) nodes: Vec<P>,
    rngs: Vec<SimRng>,
    network_rng: SimRng,
    now: u64,
    seq: u64,
    in_flight: Vec<InFlight<P::Msg>>,
    /// Per node, per timer kind: `(deadline, seq)` when armed.
    timers: Vec<Vec<Option<(u64, u64)>>>,
    up: Vec<bool>,
    /// `blocked[from][to]`: messages on this directed link are lost.
    blocked: Vec<Vec<bool>>,
    /// Every observation, in order: `(true time, node, what)`.
    pub(crate) history: Vec<(u64, usize, Observed<P::Msg>)>,
    /// Term claims, as they happened: term -> claimants.
    pub(crate) claims: BTreeMap<u64, BTreeSet<usize>>,
    /// The term each node believes it leads, if any.
    believes: Vec<Option<u64>>,
    /// Latency is drawn uniformly from this inclusive range for every message.
    pub(crate) latency_ns: (u64, u64),
    /// Messages sent to a crashed node or across a cut link, by kind name.
    pub(crate) lost: BTreeMap<&'static str, u64>,
    on_crash: OnCrash,
    check_claim: fn(&P, u64, u64),
    /// Per node, the last durable write ([`Ctx::persist`]): this harness's disk is
    /// instant, so every write is on disk at once.
    persisted: Vec<Option<P::Durable>>,
}

impl<P: Process> Cluster<P> {
    /// The given processes (member `i` is `nodes[i]`) under the default [`Rules`], not
    /// started yet.
    pub(crate) fn new(nodes: Vec<P>, seed: u64) -> Self {
        Self::with_rules(nodes, seed, Rules::default())
    }

    /// The given processes (member `i` is `nodes[i]`) under `rules`, not started yet.
    pub(crate) fn with_rules(nodes: Vec<P>, seed: u64, rules: Rules<P>) -> Self {
        let members = nodes.len();
        Self {
            rngs: (0..members)
                .map(|i| SimRng::stream(seed, StreamId::node(i)))
                .collect(),
            nodes,
            network_rng: SimRng::stream(seed, StreamId::NETWORK),
            now: 0,
            seq: 0,
            in_flight: Vec::new(),
            timers: vec![vec![None; P::Timer::NAMES.len()]; members],
            up: vec![true; members],
            blocked: vec![vec![false; members]; members],
            history: Vec::new(),
            claims: BTreeMap::new(),
            believes: vec![None; members],
            latency_ns: rules.latency_ns,
            lost: BTreeMap::new(),
            on_crash: rules.on_crash,
            check_claim: rules.check_claim,
            persisted: vec![None; members],
        }
    }

    /// Starts every node at the current time, in id order.
    pub(crate) fn start(&mut self) {
        for i in 0..self.nodes.len() {
            self.drive(i, |node, ctx| node.on_start(ctx));
        }
    }

    pub(crate) fn now(&self) -> u64 {
        self.now
    }

    pub(crate) fn is_up(&self, i: usize) -> bool {
        self.up[i]
    }

    /// Calls one handler of node `i` and applies what it asked for.
    pub(crate) fn drive(
        &mut self,
        i: usize,
        handler: impl FnOnce(&mut P, &mut Ctx<'_, P::Msg, P::Timer, P::Durable>),
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

    fn apply(&mut self, i: usize, effect: Effect<P::Msg, P::Timer, P::Durable>) {
        match effect {
            Effect::Persist(durable) => self.persisted[i] = Some(durable),
            Effect::Fail { reason } => panic!("n{i} failed: {reason}"),
            Effect::Log { .. } => {}
            Effect::Send { to, msg } | Effect::SendUnordered { to, msg } => {
                assert_ne!(to.index(), i, "n{i} sent a message to itself");
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
                self.in_flight.push(InFlight {
                    deliver_at: self.now + latency,
                    seq: self.seq,
                    from: i,
                    to: to.index(),
                    msg,
                });
            }
            // This harness's links are datagrams: there is no connection to close.
            Effect::Disconnect { .. } => {}
            Effect::SetTimer {
                timer,
                after_local_ns,
            } => {
                self.seq += 1;
                self.timers[i][timer.index()] = Some((self.now + after_local_ns, self.seq));
            }
            // This harness's clocks are true time: a wall-clock deadline is a true time.
            Effect::SetWallTimer { timer, at_wall_ns } => {
                self.seq += 1;
                let at = self.now.max(at_wall_ns.max(0) as u64);
                self.timers[i][timer.index()] = Some((at, self.seq));
            }
            Effect::CancelTimer { timer } => self.timers[i][timer.index()] = None,
            Effect::BecameLeader { term, token } => {
                (self.check_claim)(&self.nodes[i], term, token);
                self.claims.entry(term).or_default().insert(i);
                self.believes[i] = Some(term);
                self.history
                    .push((self.now, i, Observed::BecameLeader { term, token }));
            }
            Effect::SteppedDown => {
                assert!(
                    self.believes[i].is_some(),
                    "n{i} stepped down without leading"
                );
                self.believes[i] = None;
                self.history.push((self.now, i, Observed::SteppedDown));
            }
            Effect::Signal(signal) => self.history.push((self.now, i, Observed::Signal(signal))),
            Effect::Write { .. } => panic!("the harness has no workload: nobody should write"),
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
                    } else {
                        self.count_lost(&flight.msg);
                    }
                }
                None => {
                    self.timers[node][kind] = None;
                    self.drive(node, |n, ctx| n.on_timer(ctx, P::Timer::from_index(kind)));
                }
            }
        }
        self.now = self.now.max(until);
    }

    pub(crate) fn run_for(&mut self, duration: u64) {
        self.run_until(self.now + duration);
    }

    fn count_lost(&mut self, msg: &P::Msg) {
        *self.lost.entry(P::Msg::KINDS[msg.kind()]).or_default() += 1;
    }

    /// Fires node `i`'s timer `timer` now, by hand (its slot is cleared first).
    pub(crate) fn fire(&mut self, i: usize, timer: P::Timer) {
        self.timers[i][timer.index()] = None;
        self.drive(i, |n, ctx| n.on_timer(ctx, timer));
    }

    /// Disarms node `i`'s timer `timer` without firing it.
    pub(crate) fn disarm(&mut self, i: usize, timer: P::Timer) {
        self.timers[i][timer.index()] = None;
    }

    /// Whether node `i`'s timer slot `timer` is armed.
    pub(crate) fn timer_armed(&self, i: usize, timer: P::Timer) -> bool {
        self.timers[i][timer.index()].is_some()
    }

    /// When node `i`'s timer `timer` will fire (true time, equal to local time here), if
    /// armed.
    pub(crate) fn timer_deadline(&self, i: usize, timer: P::Timer) -> Option<u64> {
        self.timers[i][timer.index()].map(|(deadline, _)| deadline)
    }

    /// Delivers now, by hand, the first message in flight from `from` to `to` of type
    /// `kind` (a name from `P::Msg::KINDS`), whatever the links. Panics if there is none.
    pub(crate) fn deliver(&mut self, from: usize, to: usize, kind: &str) {
        let index = self
            .in_flight
            .iter()
            .position(|f| f.from == from && f.to == to && P::Msg::KINDS[f.msg.kind()] == kind)
            .unwrap_or_else(|| panic!("no {kind} in flight from n{from} to n{to}"));
        let flight = self.in_flight.remove(index);
        self.drive(to, |n, ctx| {
            n.on_message(ctx, NodeId::from(from), flight.msg)
        });
    }

    /// Stops node `i`: its timers die, its leadership belief ends, messages to it are lost
    /// (those already in flight as [`OnCrash`] says).
    pub(crate) fn crash(&mut self, i: usize) {
        self.up[i] = false;
        self.timers[i].fill(None);
        self.believes[i] = None;
        if self.on_crash == OnCrash::DropInFlight {
            let (dropped, kept) = std::mem::take(&mut self.in_flight)
                .into_iter()
                .partition(|f| f.to == i);
            self.in_flight = kept;
            for flight in dropped {
                self.count_lost(&flight.msg);
            }
        }
    }

    /// Brings node `i` back with its durable state only.
    pub(crate) fn restart(&mut self, i: usize) {
        assert!(!self.up[i]);
        self.up[i] = true;
        let durable = self.persisted[i].clone();
        self.drive(i, |n, ctx| {
            n.restore(durable);
            n.on_restart(ctx)
        });
    }

    /// Asks node `i` for a planned handover.
    pub(crate) fn resign(&mut self, i: usize) {
        self.drive(i, |n, ctx| n.on_resign(ctx));
    }

    /// Splits the members into groups that can only talk within their group.
    pub(crate) fn partition(&mut self, groups: &[&[usize]]) {
        let members = self.nodes.len();
        let mut group_of = vec![usize::MAX; members];
        for (g, group) in groups.iter().enumerate() {
            for &node in *group {
                group_of[node] = g;
            }
        }
        for from in 0..members {
            for to in 0..members {
                self.blocked[from][to] = group_of[from] != group_of[to];
            }
        }
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

    /// The live nodes that currently believe they lead, in id order.
    pub(crate) fn leaders(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|i| self.up[*i] && self.believes[*i].is_some())
            .collect()
    }

    /// The single live leader; panics when there is none or several.
    pub(crate) fn leader(&self) -> usize {
        let leaders = self.leaders();
        assert_eq!(leaders.len(), 1, "expected one leader, found {leaders:?}");
        leaders[0]
    }

    /// Runs until exactly one live node leads, at most `limit`; returns it.
    pub(crate) fn run_until_leader(&mut self, limit: u64) -> usize {
        let deadline = self.now + limit;
        while self.now < deadline {
            self.run_for(MS);
            if self.leaders().len() == 1 {
                return self.leaders()[0];
            }
        }
        panic!("no single leader within {limit}ns: {:?}", self.leaders());
    }

    /// Whether every live node recognises `leader` (through `known_leader`).
    pub(crate) fn all_recognise(&self, leader: usize) -> bool {
        (0..self.nodes.len())
            .filter(|i| self.up[*i])
            .all(|i| self.nodes[i].known_leader() == Some(NodeId::from(leader)))
    }

    pub(crate) fn write_token(&self, i: usize) -> Option<u64> {
        self.nodes[i].write_token(self.now as i64)
    }
}
