//! Write a splitbrain election node in Rust: the step protocol (version 2,
//! `docs/protocol.md`) spoken for you.
//!
//! splitbrain's `External(command: [...])` algorithm runs each election member as an OS
//! process and drives it over stdin/stdout, one JSON object per line. This crate reads the
//! events, answers `hello`, calls your [`Handler`] and writes exactly one reply per event,
//! flushed, with the effects the handler produced through its [`Ctx`].
//!
//! ```no_run
//! use splitbrain_node::{run, Body, Ctx, Handler, Result, Spec};
//! use serde_json::{json, Value};
//! use std::time::Duration;
//!
//! /// Node 0 leads term 1 for ever and pings the others every 50 ms.
//! #[derive(Default)]
//! struct Fixed {
//!     sent: u64,
//! }
//!
//! impl Handler for Fixed {
//!     fn init(&mut self, ctx: &mut Ctx, _durable: Option<&Value>) -> Result {
//!         *self = Fixed::default(); // init resets everything
//!         ctx.set_term(1);
//!         ctx.set_leader(0)?;
//!         if ctx.me == 0 {
//!             ctx.lead(1, 1);
//!             ctx.set_timer("tick", Duration::from_millis(50))?;
//!         }
//!         Ok(())
//!     }
//!     fn message(&mut self, ctx: &mut Ctx, _from: u64, body: &Body) -> Result {
//!         ctx.observe("last_ping", body.value["n"].as_i64().unwrap_or(0))
//!     }
//!     fn timer(&mut self, ctx: &mut Ctx, _name: &str) -> Result {
//!         ctx.write(1);
//!         self.sent += 1;
//!         for peer in ctx.peers() {
//!             ctx.send(peer, &json!({"type": "ping", "n": self.sent}))?;
//!         }
//!         ctx.set_timer("tick", Duration::from_millis(50))
//!     }
//! }
//!
//! fn main() {
//!     run(Spec::new(&["ping"], &["tick"]), Fixed::default());
//! }
//! ```
//!
//! **Determinism** (protocol rule 3): a node's only clocks are [`Ctx::mono_ns`] and
//! [`Ctx::wall_ns`], its only randomness [`Ctx::rng`], reseeded from the run's seed at every
//! `init`. Do not read `std::time`, OS randomness, the environment, files or the network, and
//! do not let the iteration order of a `HashMap` with the default (randomly keyed) hasher
//! reach a reply. `splitbrain run FILE --check-determinism` catches most of these.
//!
//! **`init` resets everything** (rule 4): the process is reused across the seeds of a hunt
//! and across restarts; [`Handler::init`] must reset all state, restoring only `durable`.
//!
//! **stdout is the protocol**: `println!` in a handler corrupts it (the simulator reports
//! the stray line). Log with `eprintln!`: stderr is the node's log.
//!
//! [`Node::step`] runs one event line without any pipe, for unit tests.

#![warn(missing_docs)]

use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::io::{BufRead, Write};
use std::panic::Location;
use std::time::Duration;

/// The protocol version this crate speaks.
pub const PROTOCOL: u64 = 2;

/// What went wrong: an event that cannot be read, or an effect misused by a handler (an
/// undeclared message type or timer, an id that is no node of the run, ...). The message
/// names the call and, for an effect, the source position of the handler's call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    msg: String,
}

impl Error {
    /// An error of your own, from a handler (for example an unreadable message body).
    pub fn new(msg: impl Into<String>) -> Error {
        Error { msg: msg.into() }
    }

    #[track_caller]
    fn call(call: &str, msg: impl fmt::Display) -> Error {
        let at = Location::caller();
        let file = at.file().rsplit('/').next().unwrap_or(at.file());
        Error {
            msg: format!("splitbrain: {call} at {file}:{}: {msg}", at.line()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error::new(format!("splitbrain: JSON: {e}"))
    }
}

/// A handler's result: `Ok(())`, or an error that ends the process (the simulator reports
/// it with the last lines of stderr).
pub type Result<T = ()> = std::result::Result<T, Error>;

/// What a node sends and arms, answered to the simulator's `hello`. The simulator refuses a
/// message type or timer that is not declared; so does this crate, with an error naming the
/// call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spec {
    /// The `"type"` of every message body the node sends to other members.
    pub messages: Vec<String>,
    /// The name of every timer the node arms.
    pub timers: Vec<String>,
}

impl Spec {
    /// A spec from string slices: `Spec::new(&["vote_request", "vote"], &["election"])`.
    pub fn new(messages: &[&str], timers: &[&str]) -> Spec {
        Spec {
            messages: messages.iter().map(|s| s.to_string()).collect(),
            timers: timers.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn check(&self) -> Result {
        for (what, names) in [
            ("Spec.messages", &self.messages),
            ("Spec.timers", &self.timers),
        ] {
            for (i, name) in names.iter().enumerate() {
                if !valid_name(name) {
                    return Err(Error::new(format!(
                        "splitbrain: {what} holds {name:?}: a name is 1 to 64 letters, digits, `_`, `-` or `.`"
                    )));
                }
                if names[..i].contains(name) {
                    return Err(Error::new(format!(
                        "splitbrain: {what} names {name:?} twice"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Protocol rule 6: 1 to 64 letters, digits, `_`, `-` or `.`.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// A received message body: its `"type"` and the whole JSON object, unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// The body's `"type"` field (`""` if it has none).
    pub ty: String,
    /// The object as the sender sent it.
    pub value: Value,
}

impl Body {
    /// Deserializes the body into `T` (any `serde::de::DeserializeOwned`, `Value` included).
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_value(self.value.clone()).map_err(|e| {
            Error::new(format!(
                "splitbrain: cannot decode the {:?} body {}: {e}",
                self.ty, self.value
            ))
        })
    }
}

/// An election node: the simulator's events, dispatched. Every method returns [`Result`]:
/// an error ends the process, as does a misused effect even if its error was dropped.
pub trait Handler {
    /// Starts (or, with `ctx.restart`, restarts after a crash) the node. It must reset every
    /// piece of state the node keeps: a process is reused across runs and restarts.
    /// `durable` is the last state the node persisted that reached its disk, or `None`.
    fn init(&mut self, ctx: &mut Ctx, durable: Option<&Value>) -> Result;
    /// Delivers a message that member (or the service) `from` sent.
    fn message(&mut self, ctx: &mut Ctx, from: u64, body: &Body) -> Result;
    /// Fires the armed timer `name`.
    fn timer(&mut self, ctx: &mut Ctx, name: &str) -> Result;
    /// The scenario asks the leader to hand over (the `Resign` fault). Default: nothing.
    fn resign(&mut self, _ctx: &mut Ctx) -> Result {
        Ok(())
    }
    /// The scenario asks this node (the leader, as a rule) to propose a membership change
    /// (the `ConfChange` fault): `op` on `member`, a member's id. Default: nothing.
    fn conf_change(&mut self, _ctx: &mut Ctx, _op: ConfOp, _member: u64) -> Result {
        Ok(())
    }
    /// On the `Stream` transport, the connection to `peer` broke. Default: nothing.
    fn disconnect(&mut self, _ctx: &mut Ctx, _peer: u64) -> Result {
        Ok(())
    }
}

/// A membership change's operation (`conf_change`'s `op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfOp {
    /// `add`: add the member as a voter.
    Add,
    /// `remove`: remove the member.
    Remove,
    /// `add_learner`: add the member as a learner (a non-voting member).
    AddLearner,
    /// `promote`: make a learner a voter.
    Promote,
}

impl ConfOp {
    /// The operation named `op` on the wire; `None` for a name a later protocol version may
    /// add.
    pub fn from_name(op: &str) -> Option<ConfOp> {
        Some(match op {
            "add" => ConfOp::Add,
            "remove" => ConfOp::Remove,
            "add_learner" => ConfOp::AddLearner,
            "promote" => ConfOp::Promote,
            _ => return None,
        })
    }
}

/// A small deterministic generator, the node's only randomness: SplitMix64 (Steele, Lea and
/// Flood, 2014; the seeding generator of xoshiro). State `s` starts at `init`'s seed; each
/// draw adds `0x9e3779b97f4a7c15` to `s` and returns `z = s`, mixed by
/// `z = (z ^ z>>30) * 0xbf58476d1ce4e5b9; z = (z ^ z>>27) * 0x94d049bb133111eb; z ^ z>>31`.
/// The same seed gives the same stream on every machine and Rust version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (unbiased: draws that would favour low values are
    /// rejected). Panics if `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let zone = u64::MAX - u64::MAX % n; // multiples of n below this are uniform
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// A uniform integer in `lo..=hi`. Panics if `lo > hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "Rng::range({lo}, {hi})");
        if hi - lo == u64::MAX {
            return self.next_u64();
        }
        lo + self.below(hi - lo + 1)
    }

    /// A uniform duration in `lo..=hi`, to the nanosecond.
    pub fn duration(&mut self, lo: Duration, hi: Duration) -> Duration {
        Duration::from_nanos(self.range(lo.as_nanos() as u64, hi.as_nanos() as u64))
    }
}

/// An observation's value (the `observe` effect): `null`, a bool, an integer or a pair of
/// non-negative integers. `From` converts `()`/`bool`/integers/`(u64, u64)`/`Option`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// `[a, b]`: pairs compare by their first number, then their second.
    Pair(u64, u64),
}

impl From<()> for Observation {
    fn from(_: ()) -> Observation {
        Observation::Null
    }
}
impl From<bool> for Observation {
    fn from(b: bool) -> Observation {
        Observation::Bool(b)
    }
}
impl From<i64> for Observation {
    fn from(v: i64) -> Observation {
        Observation::Int(v)
    }
}
impl From<i32> for Observation {
    fn from(v: i32) -> Observation {
        Observation::Int(v.into())
    }
}
impl From<u32> for Observation {
    fn from(v: u32) -> Observation {
        Observation::Int(v.into())
    }
}
impl From<(u64, u64)> for Observation {
    fn from((a, b): (u64, u64)) -> Observation {
        Observation::Pair(a, b)
    }
}
impl<T: Into<Observation>> From<Option<T>> for Observation {
    fn from(v: Option<T>) -> Observation {
        v.map_or(Observation::Null, Into::into)
    }
}

/// What a handler knows of the world and how it acts on it. The fields describe the node
/// (set by `init`) and the current event's clocks; the methods are the effects, written into
/// the reply in the order they are called. A misused effect returns an [`Error`] naming the
/// call, and the step fails even if the handler drops that error.
#[derive(Debug)]
pub struct Ctx {
    /// This node's id.
    pub me: u64,
    /// Every member's id, `me` included, ascending.
    pub members: Vec<u64>,
    /// The modeled coordination service's id, or `None` if the algorithm has none: its first
    /// process, when it runs as several (`services`).
    pub service: Option<u64>,
    /// Every service process a client may send requests to, ascending: the one service
    /// process, each member of a clustered etcd or ZooKeeper, the API servers of a
    /// Kubernetes Lease on etcd (`docs/protocol-services.md`, "Clusters"); empty without one.
    pub services: Vec<u64>,
    /// This node's random seed for this run.
    pub seed: u64,
    /// `false` at the start of a run, `true` when the node comes back after a crash.
    pub restart: bool,
    /// The node's monotonic clock at this event, ns: timers run on it.
    pub mono_ns: i64,
    /// The node's wall clock (time of day) at this event, ns: steps and drift move it.
    pub wall_ns: i64,
    /// The node's only randomness, seeded with `seed` at every `init`. Its state is part of
    /// the node's state: a reported digest includes it ([`Ctx::set_digest`]).
    pub rng: Rng,

    spec: Spec,
    effects: String,
    term: Option<u64>,
    leader: Option<Option<u64>>,
    digest: Option<String>,
    err: Option<Error>,
}

impl Ctx {
    fn new(spec: Spec) -> Ctx {
        Ctx {
            me: 0,
            members: Vec::new(),
            service: None,
            services: Vec::new(),
            seed: 0,
            restart: false,
            mono_ns: 0,
            wall_ns: 0,
            rng: Rng::new(0),
            spec,
            effects: String::new(),
            term: None,
            leader: None,
            digest: None,
            err: None,
        }
    }

    /// The members other than `me`, ascending.
    pub fn peers(&self) -> Vec<u64> {
        self.members
            .iter()
            .copied()
            .filter(|&m| m != self.me)
            .collect()
    }

    /// The size of a majority of the members.
    pub fn quorum(&self) -> usize {
        self.members.len() / 2 + 1
    }

    /// Records the first error of the step and returns it.
    fn fail(&mut self, e: Error) -> Result {
        if self.err.is_none() {
            self.err = Some(e.clone());
        }
        Err(e)
    }

    fn effect(&mut self, ty: &str, fields: &str) {
        if !self.effects.is_empty() {
            self.effects.push(',');
        }
        self.effects.push_str("{\"type\":\"");
        self.effects.push_str(ty);
        self.effects.push('"');
        self.effects.push_str(fields);
        self.effects.push('}');
    }

    #[track_caller]
    fn check_timer(&mut self, call: &str, name: &str) -> Result {
        if self.spec.timers.iter().any(|t| t == name) {
            return Ok(());
        }
        let e = Error::call(
            call,
            format!(
                "timer {name:?} is not declared in Spec.timers {:?}",
                self.spec.timers
            ),
        );
        self.fail(e)
    }

    #[track_caller]
    fn check_node(&mut self, call: &str, what: &str, id: u64, service_ok: bool) -> Result {
        if self.members.contains(&id) || (service_ok && self.services.contains(&id)) {
            return Ok(());
        }
        let service = match (service_ok, self.services.as_slice()) {
            (true, [one]) => format!(" or the service {one}"),
            (true, [first, .., last]) => format!(" or a service process {first} to {last}"),
            _ => String::new(),
        };
        let e = Error::call(
            call,
            format!("{what} {id} is no member {:?}{service}", self.members),
        );
        self.fail(e)
    }

    /// Sends `body` to node `to` over the simulated network: `{"type":"send","to":1,"body":{...}}`.
    /// `body` must serialize to a JSON object with a string `"type"`; to a member, one of
    /// `Spec.messages`; to a process of the coordination service (one of `services`, under
    /// `ExternalClient`) any of its requests (`docs/protocol-services.md`), which the
    /// simulator checks. `to` must be a member or a service process.
    #[track_caller]
    pub fn send(&mut self, to: u64, body: &impl Serialize) -> Result {
        self.check_node("send", "the destination", to, true)?;
        let value = match serde_json::to_value(body) {
            Ok(v) => v,
            Err(e) => {
                return self.fail(Error::call(
                    "send",
                    format!("cannot serialize the body: {e}"),
                ))
            }
        };
        let ty = match value.as_object().map(|o| o.get("type")) {
            Some(Some(Value::String(ty))) => ty.clone(),
            Some(_) => {
                return self.fail(Error::call(
                    "send",
                    format!(
                        "the body has no string \"type\": {}",
                        cut(&value.to_string())
                    ),
                ))
            }
            None => {
                return self.fail(Error::call(
                    "send",
                    format!(
                        "the body must be a JSON object with a \"type\", got {}",
                        cut(&value.to_string())
                    ),
                ))
            }
        };
        if !self.services.contains(&to) && !self.spec.messages.contains(&ty) {
            let e = Error::call(
                "send",
                format!(
                    "message type {ty:?} is not declared in Spec.messages {:?}",
                    self.spec.messages
                ),
            );
            return self.fail(e);
        }
        self.effect("send", &format!(",\"to\":{to},\"body\":{value}"));
        Ok(())
    }

    /// Arms (or re-arms) the timer `name` to fire after `after` of the monotonic clock:
    /// `{"type":"set_timer","name":"election","after_ns":150000000}`.
    #[track_caller]
    pub fn set_timer(&mut self, name: &str, after: Duration) -> Result {
        self.check_timer("set_timer", name)?;
        let ns = after.as_nanos().min(u64::MAX as u128);
        self.effect(
            "set_timer",
            &format!(",\"name\":{},\"after_ns\":{ns}", json_str(name)),
        );
        Ok(())
    }

    /// Arms the timer `name` to fire when the wall clock reads `at_wall_ns`:
    /// `{"type":"set_wall_timer","name":"lease","at_wall_ns":...}`.
    #[track_caller]
    pub fn set_wall_timer(&mut self, name: &str, at_wall_ns: i64) -> Result {
        self.check_timer("set_wall_timer", name)?;
        self.effect(
            "set_wall_timer",
            &format!(",\"name\":{},\"at_wall_ns\":{at_wall_ns}", json_str(name)),
        );
        Ok(())
    }

    /// Disarms the timer `name`: `{"type":"cancel_timer","name":"election"}`.
    #[track_caller]
    pub fn cancel_timer(&mut self, name: &str) -> Result {
        self.check_timer("cancel_timer", name)?;
        self.effect("cancel_timer", &format!(",\"name\":{}", json_str(name)));
        Ok(())
    }

    /// Writes `state` (any JSON, `null` included) to the node's disk and fsyncs it:
    /// `{"type":"persist","state":...}`. Sends after it wait for the write; a crash before it
    /// completes loses it; the next `init`'s `durable` gives back the last completed one.
    #[track_caller]
    pub fn persist(&mut self, state: &impl Serialize) -> Result {
        match serde_json::to_string(state) {
            Ok(s) => {
                self.effect("persist", &format!(",\"state\":{s}"));
                Ok(())
            }
            Err(e) => self.fail(Error::call(
                "persist",
                format!("cannot serialize the state: {e}"),
            )),
        }
    }

    /// This node now believes it leads `term` and fences its writes with `token` (checked:
    /// at most one leader per term): `{"type":"lead","term":3,"token":3}`.
    pub fn lead(&mut self, term: u64, token: u64) {
        self.effect("lead", &format!(",\"term\":{term},\"token\":{token}"));
    }

    /// This node no longer believes it leads: `{"type":"step_down"}`.
    pub fn step_down(&mut self) {
        self.effect("step_down", "");
    }

    /// Writes to the fenced resource with `token`: `{"type":"write","token":3}`.
    pub fn write(&mut self, token: u64) {
        self.effect("write", &format!(",\"token\":{token}"));
    }

    /// This node started an election for `term` (counted as an election):
    /// `{"type":"campaign","term":3}`.
    pub fn campaign(&mut self, term: u64) {
        self.effect("campaign", &format!(",\"term\":{term}"));
    }

    /// This node started a pre-vote for `term` (Raft's PreVote: a probe that raises no term;
    /// counted as a pre-vote, not an election): `{"type":"pre_campaign","term":3}`.
    pub fn pre_campaign(&mut self, term: u64) {
        self.effect("pre_campaign", &format!(",\"term\":{term}"));
    }

    /// This node's election for `term` ended without a winner (a split vote):
    /// `{"type":"round_failed","term":3}`.
    pub fn round_failed(&mut self, term: u64) {
        self.effect("round_failed", &format!(",\"term\":{term}"));
    }

    /// An observation for a property of your own (the scenario's `properties`):
    /// `{"type":"observe","name":"x","value":true}`. `value`: `()`/`None` for `null`, a
    /// bool, an integer, or a pair `(a, b)`.
    #[track_caller]
    pub fn observe(&mut self, name: &str, value: impl Into<Observation>) -> Result {
        if !valid_name(name) {
            let e = Error::call(
                "observe",
                format!("{name:?} is no name: 1 to 64 letters, digits, `_`, `-` or `.`"),
            );
            return self.fail(e);
        }
        let v = match value.into() {
            Observation::Null => "null".to_string(),
            Observation::Bool(b) => b.to_string(),
            Observation::Int(i) => i.to_string(),
            Observation::Pair(a, b) => format!("[{a},{b}]"),
        };
        self.effect(
            "observe",
            &format!(",\"name\":{},\"value\":{v}", json_str(name)),
        );
        Ok(())
    }

    /// Closes the `Stream` connection to `peer` (a member or the service):
    /// `{"type":"disconnect","peer":2}`.
    #[track_caller]
    pub fn disconnect(&mut self, peer: u64) -> Result {
        self.check_node("disconnect", "the peer", peer, true)?;
        self.effect("disconnect", &format!(",\"peer\":{peer}"));
        Ok(())
    }

    /// Reports the node's current term in this step's reply (`"term"`; checked:
    /// `term_monotonic`). Without it the reply leaves the term unchanged.
    pub fn set_term(&mut self, term: u64) {
        self.term = Some(term);
    }

    /// Reports in this step's reply the leader this node recognises, itself included
    /// (`"leader":1`); `id` must be a member. Without `set_leader` or `clear_leader` the
    /// reply leaves it unchanged.
    #[track_caller]
    pub fn set_leader(&mut self, id: u64) -> Result {
        self.check_node("set_leader", "the leader", id, false)?;
        self.leader = Some(Some(id));
        Ok(())
    }

    /// Reports in this step's reply that this node recognises no leader (`"leader":null`).
    pub fn clear_leader(&mut self) {
        self.leader = Some(None);
    }

    /// Reports in this step's reply a digest of the node's whole state after the step, for
    /// a systematic search (`splitbrain hunt --search systematic`, docs/hunting.md): a state
    /// already explored is not explored again. `digest` is serialized now, with serde_json
    /// (integers stay exact); [`Ctx::rng`]'s state is added as the step ends, as the reply's
    /// `"digest":{"state":<digest>,"rand":"<hex>"}`.
    ///
    /// Two states with equal digests (and equal term and leader) must go on alike: cover
    /// everything that decides what the node does next (role, vote, votes counted, anything
    /// a later event reads), and leave out, or write as an age, what only names the time (a
    /// deadline: the simulator digests the armed timers itself). Serialize maps in a fixed
    /// order (a `BTreeMap`, not a `HashMap`). Without `set_digest` the reply leaves the digest
    /// as the node last reported it, so a node that reports one must report it in every step
    /// that changes its state: call it at the end of every handler. A restart clears it on
    /// the simulator's side. An error if `digest` cannot be serialized.
    ///
    /// ```
    /// use splitbrain_node::{Body, Ctx, Handler, Node, Result, Spec};
    /// use serde_json::Value;
    /// use std::collections::BTreeSet;
    ///
    /// /// Counts the peers it heard from; that set is its whole state.
    /// #[derive(Default)]
    /// struct Heard(BTreeSet<u64>);
    ///
    /// impl Handler for Heard {
    ///     fn init(&mut self, ctx: &mut Ctx, _durable: Option<&Value>) -> Result {
    ///         *self = Heard::default();
    ///         ctx.set_digest(&self.0)
    ///     }
    ///     fn message(&mut self, ctx: &mut Ctx, from: u64, _body: &Body) -> Result {
    ///         self.0.insert(from);
    ///         ctx.set_digest(&self.0)
    ///     }
    ///     fn timer(&mut self, ctx: &mut Ctx, _name: &str) -> Result {
    ///         ctx.set_digest(&self.0)
    ///     }
    /// }
    ///
    /// let mut node = Node::new(Spec::new(&["ping"], &[]), Heard::default()).unwrap();
    /// node.step(r#"{"type":"init","protocol":2,"node":0,"members":[0,1,2],"service":null,"seed":7,"restart":false,"durable":null,"step":1,"mono_ns":0,"wall_ns":0}"#).unwrap();
    /// let reply = node.step(r#"{"type":"message","from":2,"body":{"type":"ping"},"step":2,"mono_ns":5,"wall_ns":5}"#).unwrap();
    /// assert_eq!(reply, r#"{"effects":[],"digest":{"state":[2],"rand":"0000000000000007"},"step":2}"#);
    /// ```
    #[track_caller]
    pub fn set_digest(&mut self, digest: &impl Serialize) -> Result {
        match serde_json::to_string(digest) {
            Ok(s) => {
                self.digest = Some(s);
                Ok(())
            }
            Err(e) => self.fail(Error::call(
                "set_digest",
                format!("cannot serialize the digest: {e}"),
            )),
        }
    }

    fn begin(&mut self, mono_ns: i64, wall_ns: i64) {
        self.mono_ns = mono_ns;
        self.wall_ns = wall_ns;
        self.effects.clear();
        self.term = None;
        self.leader = None;
        self.digest = None;
        self.err = None;
    }

    fn finish(&self, step: Option<u64>) -> String {
        let mut out = String::with_capacity(self.effects.len() + 48);
        out.push_str("{\"effects\":[");
        out.push_str(&self.effects);
        out.push(']');
        if let Some(t) = self.term {
            out.push_str(&format!(",\"term\":{t}"));
        }
        match self.leader {
            Some(Some(l)) => out.push_str(&format!(",\"leader\":{l}")),
            Some(None) => out.push_str(",\"leader\":null"),
            None => {}
        }
        if let Some(d) = &self.digest {
            // The generator's state is the node's too: taken as the step ends.
            let rand = self.rng.state;
            out.push_str(&format!(
                ",\"digest\":{{\"state\":{d},\"rand\":\"{rand:016x}\"}}"
            ));
        }
        if let Some(s) = step {
            out.push_str(&format!(",\"step\":{s}"));
        }
        out.push('}');
        out
    }
}

fn json_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Cuts a line for an error message.
fn cut(s: &str) -> String {
    let s = s.trim_end_matches('\n');
    if s.len() <= 300 {
        return s.to_string();
    }
    let mut end = 300;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// A node without pipes: the protocol one event line at a time. [`serve`] and [`run`] use
/// one; unit tests call [`Node::step`] directly.
pub struct Node<H: Handler> {
    handler: H,
    ctx: Ctx,
    hello: String,
}

impl<H: Handler> Node<H> {
    /// Checks `spec` (valid names, none twice) and returns a node that runs `handler`.
    pub fn new(spec: Spec, handler: H) -> Result<Node<H>> {
        spec.check()?;
        let hello = format!(
            "{{\"type\":\"hello_ok\",\"protocol\":{{}},\"messages\":{},\"timers\":{}}}",
            serde_json::to_string(&spec.messages)?,
            serde_json::to_string(&spec.timers)?
        );
        Ok(Node {
            handler,
            ctx: Ctx::new(spec),
            hello,
        })
    }

    /// The handler, as the last event left it.
    pub fn handler(&self) -> &H {
        &self.handler
    }

    /// The context as the last event left it (id, members, clocks).
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// Handles one event line (one JSON object, with or without its `\n`) and returns the
    /// reply line without its `\n`: `hello_ok` for `hello`, else the effects, `term`,
    /// `leader` and the echoed `step`. An event type this version does not know gets an
    /// empty reply. An error: the event cannot be read, or a handler failed or misused an
    /// effect (the error names the call and the event).
    pub fn step(&mut self, line: &str) -> Result<String> {
        let ev: Value = serde_json::from_str(line.trim_end()).map_err(|e| {
            Error::new(format!(
                "splitbrain: cannot read the event {:?}: {e}",
                cut(line)
            ))
        })?;
        let ev = match ev {
            Value::Object(o) => o,
            _ => {
                return Err(Error::new(format!(
                    "splitbrain: the event {:?} is not a JSON object",
                    cut(line)
                )))
            }
        };
        let bad = |what: &str| Error::new(format!("splitbrain: the event {:?}: {what}", cut(line)));
        let ty = ev
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no string \"type\""))?;
        if ty == "hello" {
            let theirs = ev.get("protocol").and_then(Value::as_u64).unwrap_or(1);
            return Ok(self
                .hello
                .replacen("{}", &theirs.clamp(1, PROTOCOL).to_string(), 1));
        }
        let int = |k: &str| ev.get(k).and_then(Value::as_i64);
        let uint = |k: &str| ev.get(k).and_then(Value::as_u64);
        let step = uint("step");
        let ctx = &mut self.ctx;
        ctx.begin(int("mono_ns").unwrap_or(0), int("wall_ns").unwrap_or(0));
        let result = match ty {
            "init" => {
                let members = ev
                    .get("members")
                    .and_then(Value::as_array)
                    .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                    .ok_or_else(|| bad("init without its members"))?;
                ctx.me = uint("node").ok_or_else(|| bad("init without its node"))?;
                ctx.members = members;
                ctx.service = uint("service");
                ctx.services = match ev.get("services").and_then(Value::as_array) {
                    Some(ids) => ids.iter().filter_map(Value::as_u64).collect(),
                    // A simulator from before clustered services: the one service.
                    None => ctx.service.into_iter().collect(),
                };
                ctx.seed = uint("seed").unwrap_or(0);
                ctx.restart = ev.get("restart").and_then(Value::as_bool).unwrap_or(false);
                ctx.rng = Rng::new(ctx.seed);
                let durable = ev.get("durable").filter(|d| !d.is_null());
                self.handler.init(ctx, durable)
            }
            "message" => {
                let from = uint("from").ok_or_else(|| bad("message without its from"))?;
                let value = ev.get("body").cloned().unwrap_or(Value::Object(Map::new()));
                let ty = value
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                self.handler.message(ctx, from, &Body { ty, value })
            }
            "timer" => {
                let name = ev
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("timer without its name"))?;
                self.handler.timer(ctx, name)
            }
            "resign" => self.handler.resign(ctx),
            "conf_change" => {
                let member = uint("node").ok_or_else(|| bad("conf_change without its node"))?;
                let op = ev.get("op").and_then(Value::as_str);
                match op.and_then(ConfOp::from_name) {
                    Some(op) => self.handler.conf_change(ctx, op, member),
                    None if op.is_some() => Ok(()), // a later version's operation
                    None => Err(bad("conf_change without its op")),
                }
            }
            "disconnect" => {
                let peer = uint("peer").ok_or_else(|| bad("disconnect without its peer"))?;
                self.handler.disconnect(ctx, peer)
            }
            _ => Ok(()), // a later protocol version's event: nothing to do
        };
        if let Some(e) = ctx.err.take().or(result.err()) {
            return Err(Error::new(format!("{e} (handling {})", cut(line))));
        }
        Ok(ctx.finish(step))
    }
}

/// Runs `handler` over `input` and `output`: one event per line in, one reply per line out,
/// flushed after each. Returns `Ok(())` at the end of the input; an error if `spec` is
/// invalid, an event cannot be read, a handler fails or misuses an effect, or I/O fails.
pub fn serve<H: Handler>(
    spec: Spec,
    handler: H,
    input: impl BufRead,
    mut output: impl Write,
) -> Result {
    let mut node = Node::new(spec, handler)?;
    for line in input.lines() {
        let line = line.map_err(|e| Error::new(format!("splitbrain: reading the events: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = node.step(&line)?;
        let io = |e: std::io::Error| Error::new(format!("splitbrain: writing a reply: {e}"));
        output.write_all(reply.as_bytes()).map_err(io)?;
        output.write_all(b"\n").map_err(io)?;
        output.flush().map_err(io)?;
    }
    Ok(())
}

/// The main loop of a node process: [`serve`] on stdin and stdout. Returns when stdin ends;
/// on an error it prints it to stderr and exits with status 1 (a handler's panic prints its
/// message and exits with Rust's status 101).
pub fn run<H: Handler>(spec: Spec, handler: H) {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    if let Err(e) = serve(spec, handler, stdin.lock(), stdout.lock()) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests;
