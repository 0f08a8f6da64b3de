//! A process run inside another: an etcd member's Raft, an etcd member inside a Kubernetes
//! Lease run, a modeled service beside nodes in another language. [`Ctx::nested`] gives the
//! inner process a context of its own message, timer and durable types, on the outer one's
//! clocks, random stream and transport; [`Ctx::carry_out`] turns what it asked for into the
//! outer process's effects through an [`Embedding`], in the order it asked for them (a send
//! after a durable write still waits for it).
//!
//! The inner process draws its randomized timeouts from the random stream (a systematic
//! search's choices are the outer process's) and its observations ([`Ctx::observe`]) are
//! dropped.
//!
//! ```
//! use splitbrain_sim::nested::Embedding;
//! use splitbrain_sim::{Ctx, Effect, NodeId, SimRng, StreamId};
//!
//! /// Inner messages travel wrapped; inner timers take the outer slots after the first.
//! struct Wrap;
//! impl Embedding<u8, u8, ()> for Wrap {
//!     type Msg = (char, u8);
//!     type Timer = u8;
//!     type Durable = ();
//!     fn message(&self, to: NodeId, msg: u8) -> (NodeId, (char, u8)) {
//!         (to, ('w', msg))
//!     }
//!     fn timer(&self, timer: u8) -> u8 {
//!         timer + 1
//!     }
//!     fn durable(&self, (): ()) {}
//! }
//!
//! let mut rng = SimRng::stream(1, StreamId::NETWORK);
//! let mut out: Vec<Effect<(char, u8), u8>> = Vec::new();
//! let mut outer = Ctx::new(NodeId(3), 3, 1_000, &mut rng, &mut out);
//! let (answer, inner) = outer.nested(NodeId(0), 1, |c: &mut Ctx<'_, u8, u8>| {
//!     c.send(NodeId(4), 7);
//!     c.set_timer(0, 50);
//!     42
//! });
//! outer.carry_out(inner, &Wrap);
//! assert_eq!(answer, 42);
//! assert!(matches!(out[0], Effect::Send { to: NodeId(4), msg: ('w', 7) }));
//! assert!(matches!(out[1], Effect::SetTimer { timer: 1, after_local_ns: 50 }));
//! ```

use crate::ids::NodeId;
use crate::process::{Ctx, Effect};

/// How a nested process's effects become its host's: inner message types `M`, timers `T`
/// and durable state `D` into the host's.
pub trait Embedding<M, T, D> {
    /// The host's message type.
    type Msg;
    /// The host's timer type.
    type Timer;
    /// The host's durable state.
    type Durable;

    /// A send of `msg` to the inner id `to`: where it goes among the run's processes, and
    /// as what.
    fn message(&self, to: NodeId, msg: M) -> (NodeId, Self::Msg);

    /// The host's timer slot for an inner timer.
    fn timer(&self, timer: T) -> Self::Timer;

    /// The host's durable write for an inner one.
    fn durable(&self, durable: D) -> Self::Durable;

    /// Whether the engine sees the inner process as the host: its leadership claims and
    /// step-downs, signals, writes to the resource, disconnects and log lines become the
    /// host's. False for a process that is a part of the host and no election member (an
    /// etcd member's own Raft: its claims would count as an election member's): those
    /// effects are dropped. A failure always ends the run. Default: true.
    fn passes_through(&self) -> bool {
        true
    }
}

impl<'a, M, T, D> Ctx<'a, M, T, D> {
    /// Runs `handler` on a process nested in this one, as process `me` of `members`, with a
    /// context of its own types on this one's clocks, random stream and transport. Returns
    /// what `handler` returned and the effects it asked for, in order, for
    /// [`Ctx::carry_out`].
    pub fn nested<M2, T2, D2, R>(
        &mut self,
        me: NodeId,
        members: usize,
        handler: impl FnOnce(&mut Ctx<'_, M2, T2, D2>) -> R,
    ) -> (R, Vec<Effect<M2, T2, D2>>) {
        let mut out = Vec::new();
        let (monotonic, wall, stream) = (self.monotonic_now(), self.wall_now(), self.stream());
        let mut inner = Ctx::new(me, members, monotonic, self.rng(), &mut out)
            .with_wall_now(wall)
            .on_stream(stream);
        let result = handler(&mut inner);
        (result, out)
    }

    /// Carries out `effects` of a nested process ([`Ctx::nested`]) as this process's own,
    /// through `embedding`, in order.
    pub fn carry_out<M2, T2, D2, E>(&mut self, effects: Vec<Effect<M2, T2, D2>>, embedding: &E)
    where
        E: Embedding<M2, T2, D2, Msg = M, Timer = T, Durable = D>,
    {
        let passes = embedding.passes_through();
        for effect in effects {
            match effect {
                Effect::Send { to, msg } => {
                    let (to, msg) = embedding.message(to, msg);
                    self.send(to, msg);
                }
                Effect::SendUnordered { to, msg } => {
                    let (to, msg) = embedding.message(to, msg);
                    self.send_unordered(to, msg);
                }
                Effect::SetTimer {
                    timer,
                    after_local_ns,
                } => self.set_timer(embedding.timer(timer), after_local_ns),
                Effect::SetWallTimer { timer, at_wall_ns } => {
                    self.set_wall_timer(embedding.timer(timer), at_wall_ns)
                }
                Effect::CancelTimer { timer } => self.cancel_timer(embedding.timer(timer)),
                Effect::Persist(durable) => self.persist(embedding.durable(durable)),
                Effect::Fail { reason } => self.fail(reason),
                Effect::Disconnect { peer } if passes => self.disconnect(peer),
                Effect::Write { token } if passes => self.write(token),
                Effect::BecameLeader { term, token } if passes => self.became_leader(term, token),
                Effect::SteppedDown if passes => self.stepped_down(),
                Effect::Signal(signal) if passes => self.signal(signal),
                Effect::Log { text } if passes => self.log(text),
                Effect::Disconnect { .. }
                | Effect::Write { .. }
                | Effect::BecameLeader { .. }
                | Effect::SteppedDown
                | Effect::Signal(_)
                | Effect::Log { .. } => {}
            }
        }
    }

    /// [`Ctx::nested`] then [`Ctx::carry_out`]: runs `handler` on a nested process and
    /// carries out what it asked for.
    pub fn run_nested<M2, T2, D2, E, R>(
        &mut self,
        me: NodeId,
        members: usize,
        embedding: &E,
        handler: impl FnOnce(&mut Ctx<'_, M2, T2, D2>) -> R,
    ) -> R
    where
        E: Embedding<M2, T2, D2, Msg = M, Timer = T, Durable = D>,
    {
        let (result, effects) = self.nested(me, members, handler);
        self.carry_out(effects, embedding);
        result
    }
}
