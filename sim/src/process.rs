//! The contract between the engine and an algorithm. An algorithm is a pure state machine:
//! a start, a message, a timer, a restart or a resignation in; effects out through [`Ctx`].
//! It never owns time, randomness or the network.

use crate::choice::{ChoiceKind, ChoicePoint, Chooser};
use crate::ids::NodeId;
use crate::property::{UserObservation, Value};
use crate::rng::SimRng;
use crate::time::{LocalNanos, Nanos};
use serde::Serialize;
use std::fmt::Debug;

/// A protocol message. Its type is counted, traced and charted by name.
pub trait Message: Clone + Debug {
    /// The stable name of every message type, indexed by [`Message::kind`].
    const KINDS: &'static [&'static str];
    /// The index of this message's type in [`Message::KINDS`].
    fn kind(&self) -> usize;
    /// The sender's term or epoch, for the trace (0 if the message carries none).
    fn term(&self) -> u64 {
        0
    }
    /// The bytes this message holds: its own size plus whatever it owns on the heap (a body,
    /// a vector of entries). The engine charges it to the run, and to its sender, from the
    /// end of the handler that sent it until the receiver's handler takes it or it is lost
    /// (the runtime guard's `--max-memory` and `--max-node-in-flight`, docs/engine.md,
    /// "Memory charged per run"). It must be a function of the message alone, so that a
    /// run's verdict is too. The default, `size_of::<Self>()`, is right for a message that
    /// owns nothing on the heap; one that carries a body of its own adds the body's length.
    ///
    /// ```
    /// use splitbrain_sim::Message;
    ///
    /// #[derive(Clone, Debug)]
    /// struct Blob(Vec<u8>);
    /// impl Message for Blob {
    ///     const KINDS: &'static [&'static str] = &["blob"];
    ///     fn kind(&self) -> usize {
    ///         0
    ///     }
    ///     fn size_bytes(&self) -> usize {
    ///         std::mem::size_of::<Self>() + self.0.len()
    ///     }
    /// }
    /// assert_eq!(Blob(vec![0; 1000]).size_bytes(), 1000 + std::mem::size_of::<Blob>());
    /// ```
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
    }
    /// This message with every node id in it renamed (node `i` is called `names[i]`, see
    /// [`NodeId::renamed`]), for a systematic search's symmetry reduction
    /// ([`Sim::digest_symmetric`](crate::Sim::digest_symmetric)); `None` (the default) if
    /// it cannot tell, and the search then compares states exactly. A message that carries
    /// no node id returns a copy of itself.
    ///
    /// ```
    /// use splitbrain_sim::{Message, NodeId};
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct Vote(NodeId);
    /// impl Message for Vote {
    ///     const KINDS: &'static [&'static str] = &["vote"];
    ///     fn kind(&self) -> usize {
    ///         0
    ///     }
    ///     fn renamed(&self, names: &[NodeId]) -> Option<Self> {
    ///         Some(Vote(self.0.renamed(names)))
    ///     }
    /// }
    /// assert_eq!(Vote(NodeId(0)).renamed(&[NodeId(2), NodeId(1), NodeId(0)]), Some(Vote(NodeId(2))));
    /// ```
    fn renamed(&self, names: &[NodeId]) -> Option<Self> {
        let _ = names;
        None
    }
}

/// A process's durable state ([`Process::Durable`]): what it writes to its disk with
/// [`Ctx::persist`] and gets back at a restart.
///
/// The engine charges each write to the run from the moment it is asked for until a later
/// write replaces it on the disk (docs/engine.md, "Memory charged per run"): implement it
/// with the default for state that owns nothing on the heap (`impl DurableState for MyState
/// {}`), and override [`DurableState::size_bytes`] for state that does (a log of entries).
pub trait DurableState: Clone + Debug {
    /// The bytes this state holds: its own size plus whatever it owns on the heap; a
    /// function of the state alone. The default is `size_of::<Self>()`.
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
    }
    /// This state with every node id in it renamed (node `i` is called `names[i]`), as
    /// [`Message::renamed`]: for the writes a disk holds when a systematic search compares
    /// states up to a renaming. `None` (the default): it cannot tell.
    ///
    /// ```
    /// use splitbrain_sim::{DurableState, NodeId};
    ///
    /// #[derive(Clone, Debug, PartialEq)]
    /// struct VotedFor(Option<NodeId>);
    /// impl DurableState for VotedFor {
    ///     fn renamed(&self, names: &[NodeId]) -> Option<Self> {
    ///         Some(VotedFor(self.0.map(|n| n.renamed(names))))
    ///     }
    /// }
    /// let swap = [NodeId(1), NodeId(0)];
    /// assert_eq!(VotedFor(Some(NodeId(1))).renamed(&swap), Some(VotedFor(Some(NodeId(0)))));
    /// ```
    fn renamed(&self, names: &[NodeId]) -> Option<Self> {
        let _ = names;
        None
    }
}

/// Holds nothing, so no node id.
impl DurableState for () {
    fn renamed(&self, _names: &[NodeId]) -> Option<Self> {
        Some(())
    }
}
impl DurableState for bool {}
impl DurableState for u32 {}
impl DurableState for u64 {}
impl DurableState for i64 {}

impl DurableState for String {
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.len()
    }
}

impl DurableState for std::sync::Arc<str> {
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.len()
    }
}

impl DurableState for Vec<u8> {
    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.len()
    }
}

impl<T: DurableState> DurableState for Option<T> {
    fn size_bytes(&self) -> usize {
        match self {
            // The inline part is counted once, as part of `Self`.
            Some(inner) => {
                std::mem::size_of::<Self>() - std::mem::size_of::<T>() + inner.size_bytes()
            }
            None => std::mem::size_of::<Self>(),
        }
    }
}

/// A timer kind of an algorithm. Each (node, kind) has one slot: setting it again re-keys it.
pub trait TimerKind: Copy + Debug + Eq {
    /// The stable name of every timer kind, indexed by [`TimerKind::index`].
    const NAMES: &'static [&'static str];
    /// The kind's position in [`TimerKind::NAMES`]: the engine keeps one slot per index.
    fn index(self) -> usize;
    /// The kind at position `index` of [`TimerKind::NAMES`], the inverse of
    /// [`TimerKind::index`]; it may panic on an index past the last kind.
    fn from_index(index: usize) -> Self;
}

/// The names of a run's message types and timer kinds, by index: what the engine counts,
/// traces and checks [`Message::kind`] and [`TimerKind::index`] against. Usually the types'
/// own [`Message::KINDS`] and [`TimerKind::NAMES`] ([`Names::of`]); a process whose names are
/// known only at run time (a node in another language declares its own) gives them to
/// [`Sim::with_names`](crate::Sim::with_names).
///
/// ```
/// use splitbrain_sim::{storm::StormNode, Names};
/// let names = Names::of::<StormNode>();
/// assert_eq!(names.messages, ["hop"]);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// The message types' names, indexed by [`Message::kind`].
    pub messages: &'static [&'static str],
    /// The timer kinds' names, indexed by [`TimerKind::index`].
    pub timers: &'static [&'static str],
}

impl Names {
    /// The names `P`'s message and timer types declare.
    pub fn of<P: Process>() -> Self {
        Self {
            messages: P::Msg::KINDS,
            timers: P::Timer::NAMES,
        }
    }
}

/// What a process tells the engine that is not a send or a timer: observations the checker,
/// the metrics and the coverage counters use. None of them changes what happens next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// The process started a real election (Raft candidate, Bully ELECTION, lease attempt).
    ElectionStarted {
        /// The term the election is for (a service's revision or zxid at the vacancy).
        term: u64,
    },
    /// The process started a pre-election probe (Raft pre-vote); counts as acting on a fault.
    PreVoteStarted {
        /// The term the probe proposes.
        term: u64,
    },
    /// The candidate of the election it just started (its `ElectionStarted` of `term`)
    /// could win it, as far as the election rules go: for Raft, its log is at least as
    /// up-to-date as the logs of a majority of the members, itself included (paper §5.4.1),
    /// so a majority may grant it. Emitted only by algorithms that declare
    /// [`SignalSupport::campaign_eligibility`](crate::SignalSupport); the others leave the
    /// eligible-rounds measures `n/a`.
    CampaignEligible {
        /// The term of the election.
        term: u64,
    },
    /// The process accepted the first heartbeat (or other leader message) of `leader` in
    /// `term`: it now follows that leader. Emitted once per follower and term, only by
    /// algorithms that declare [`SignalSupport::leader_heard`](crate::SignalSupport).
    LeaderHeard {
        /// The leader heard.
        leader: NodeId,
        /// The leader's term.
        term: u64,
    },
    /// An election round ended without a winner (split vote, timeout while candidate).
    ElectionRoundFailed {
        /// The term of the failed round.
        term: u64,
    },
    /// The process noticed that its leader or lease is gone and acts on it.
    LeaderSuspected,
    /// The process refused a request because it heard from a leader recently.
    DisruptionPrevented,
    /// A coordination service expired `holder`'s lease or session (by the service's clock),
    /// while it led. Counted; the lease's end is signalled with `LeaseEnded` as well.
    LeaseExpired {
        /// The member whose lease expired.
        holder: NodeId,
    },
    /// A coordination service now holds a lease for `holder`'s candidacy (a key or znode
    /// created, a lock or Lease record acquired): a lease window opens on the timeline.
    LeaseHeld {
        /// The member the lease is held for.
        holder: NodeId,
    },
    /// That lease ended: expired, revoked, released, closed or taken over.
    LeaseEnded {
        /// The member whose lease ended.
        holder: NodeId,
    },
}

impl Signal {
    /// Which kind of signal it is, without its fields (what a fault's trigger names).
    pub fn kind(&self) -> SignalKind {
        match self {
            Signal::ElectionStarted { .. } => SignalKind::ElectionStarted,
            Signal::PreVoteStarted { .. } => SignalKind::PreVoteStarted,
            Signal::CampaignEligible { .. } => SignalKind::CampaignEligible,
            Signal::LeaderHeard { .. } => SignalKind::LeaderHeard,
            Signal::ElectionRoundFailed { .. } => SignalKind::ElectionRoundFailed,
            Signal::LeaderSuspected => SignalKind::LeaderSuspected,
            Signal::DisruptionPrevented => SignalKind::DisruptionPrevented,
            Signal::LeaseExpired { .. } => SignalKind::LeaseExpired,
            Signal::LeaseHeld { .. } => SignalKind::LeaseHeld,
            Signal::LeaseEnded { .. } => SignalKind::LeaseEnded,
        }
    }
}

/// The kinds of [`Signal`], without their fields: what a fault's trigger
/// ([`crate::fault::TriggerEvent::Signal`]) waits for. Named as the variants of [`Signal`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum SignalKind {
    /// [`Signal::ElectionStarted`].
    ElectionStarted,
    /// [`Signal::PreVoteStarted`].
    PreVoteStarted,
    /// [`Signal::CampaignEligible`].
    CampaignEligible,
    /// [`Signal::LeaderHeard`].
    LeaderHeard,
    /// [`Signal::ElectionRoundFailed`].
    ElectionRoundFailed,
    /// [`Signal::LeaderSuspected`].
    LeaderSuspected,
    /// [`Signal::DisruptionPrevented`].
    DisruptionPrevented,
    /// [`Signal::LeaseExpired`].
    LeaseExpired,
    /// [`Signal::LeaseHeld`].
    LeaseHeld,
    /// [`Signal::LeaseEnded`].
    LeaseEnded,
}

/// An effect a handler asks for. Observations take effect at once; sends and timers are
/// held back until the end of a stall; what leaves the process (sends, writes, closes) waits
/// for the durable writes before it and for the handler's processing time.
#[derive(Clone, Debug)]
pub enum Effect<M, T, D = ()> {
    /// Send a message over the simulated network ([`Ctx::send`]).
    Send {
        /// The receiving process.
        to: NodeId,
        /// The message.
        msg: M,
    },
    /// Send a message that does not wait for the process's durable writes
    /// ([`Ctx::send_unordered`]): it leaves at once (after a stall, like any send).
    SendUnordered {
        /// The receiving process.
        to: NodeId,
        /// The message.
        msg: M,
    },
    /// Close the `Stream` connection to `peer` (nothing on `Datagram`): what is in flight
    /// on it either way is lost, and `peer` hears of it.
    Disconnect {
        /// The other end.
        peer: NodeId,
    },
    /// Arm or re-arm a timer slot ([`Ctx::set_timer`]).
    SetTimer {
        /// The slot.
        timer: T,
        /// When it fires, as a duration of the process's own clock from now.
        after_local_ns: Nanos,
    },
    /// Arm or re-arm a timer slot for a wall-clock reading ([`Ctx::set_wall_timer`]).
    SetWallTimer {
        /// The slot.
        timer: T,
        /// The wall-clock reading it fires at.
        at_wall_ns: LocalNanos,
    },
    /// Disarm a timer slot ([`Ctx::cancel_timer`]).
    CancelTimer {
        /// The slot.
        timer: T,
    },
    /// A write to the fenced resource, carrying a fencing token.
    Write {
        /// The fencing token; with fencing on, the resource rejects one below the highest it
        /// has accepted.
        token: u64,
    },
    /// The process now believes it leads ([`Ctx::became_leader`]).
    BecameLeader {
        /// The term it leads (checked for `election_safety`).
        term: u64,
        /// The fencing token it writes with.
        token: u64,
    },
    /// The process no longer believes it leads ([`Ctx::stepped_down`]).
    SteppedDown,
    /// An observation for metrics and coverage ([`Ctx::signal`]).
    Signal(Signal),
    /// A durable write of the process's durable state ([`Ctx::persist`]).
    Persist(D),
    /// A line of the process's own log, for the trace ([`Ctx::log`]).
    Log {
        /// The line.
        text: String,
    },
    /// The process cannot go on ([`Ctx::fail`]): the run ends, located at this handler.
    Fail {
        /// What went wrong, in words.
        reason: String,
    },
}

impl<M, T, D> Effect<M, T, D> {
    /// Whether the effect leaves the process (and so waits out a stall).
    pub fn is_deferrable(&self) -> bool {
        matches!(
            self,
            Effect::Send { .. }
                | Effect::SendUnordered { .. }
                | Effect::Disconnect { .. }
                | Effect::Write { .. }
                | Effect::SetTimer { .. }
                | Effect::SetWallTimer { .. }
                | Effect::CancelTimer { .. }
        )
    }

    /// Whether the effect leaves the process, and so waits for the durable writes asked for
    /// before it (and for the handler's processing time).
    pub fn leaves_process(&self) -> bool {
        matches!(
            self,
            Effect::Send { .. } | Effect::Disconnect { .. } | Effect::Write { .. }
        )
    }
}

/// The handle a process acts through during one handler call. `D` is the process's durable
/// state ([`Process::Durable`]).
pub struct Ctx<'a, M, T, D = ()> {
    me: NodeId,
    members: usize,
    monotonic_now_ns: LocalNanos,
    wall_now_ns: LocalNanos,
    rng: &'a mut SimRng,
    out: &'a mut Vec<Effect<M, T, D>>,
    stream: bool,
    /// Where [`Ctx::observe`] puts observations; none: they are dropped.
    observed: Option<&'a mut Vec<UserObservation>>,
    /// Messages sent through this handle ([`Ctx::sent`]).
    sent: usize,
    /// Randomized timeouts as a choice among this many values (0: any value).
    timeout_choices: u32,
    /// Who picks among them, at what true time; none: the random stream does.
    chooser: Option<(&'a mut dyn Chooser, Nanos)>,
}

impl<'a, M, T, D> Ctx<'a, M, T, D> {
    /// Built by the engine (and by tests that drive a process by hand). `monotonic_now_ns` is
    /// the reading of the clock timers run on; the wall clock reads the same until
    /// [`Ctx::with_wall_now`] says otherwise.
    pub fn new(
        me: NodeId,
        members: usize,
        monotonic_now_ns: LocalNanos,
        rng: &'a mut SimRng,
        out: &'a mut Vec<Effect<M, T, D>>,
    ) -> Self {
        Self {
            me,
            members,
            monotonic_now_ns,
            wall_now_ns: monotonic_now_ns,
            rng,
            out,
            stream: false,
            observed: None,
            sent: 0,
            timeout_choices: 0,
            chooser: None,
        }
    }

    /// The same handle, drawing randomized timeouts ([`Ctx::draw_timeout`]) among
    /// `values` evenly spaced values (0: any value), picked by `chooser` if given (at true
    /// time `now_ns`), else by the random stream. The engine sets this from the scenario.
    pub fn with_timeout_choices(
        mut self,
        values: u32,
        chooser: Option<(&'a mut dyn Chooser, Nanos)>,
    ) -> Self {
        self.timeout_choices = values;
        self.chooser = chooser;
        self
    }

    /// The same handle, collecting the process's [`Ctx::observe`] calls in `observed` (the
    /// engine does this; a test that drives a process by hand may too, to see them).
    pub fn with_observations(mut self, observed: &'a mut Vec<UserObservation>) -> Self {
        self.observed = Some(observed);
        self
    }

    /// The same handle, with the wall clock (time of day) reading `wall_now_ns`.
    pub fn with_wall_now(mut self, wall_now_ns: LocalNanos) -> Self {
        self.wall_now_ns = wall_now_ns;
        self
    }

    /// The same handle, telling the process that its messages travel on `Stream`
    /// connections (the engine sets this from the scenario's transport).
    pub fn on_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The same handle, collecting observations in `observed` if given (the engine gives
    /// it only when the run checks properties).
    pub(crate) fn observing(mut self, observed: Option<&'a mut Vec<UserObservation>>) -> Self {
        self.observed = observed;
        self
    }

    /// Whether messages travel on `Stream` connections: delayed, never silently lost; a
    /// process hears of a broken connection through [`Process::on_disconnect`] and can
    /// re-send what it was waiting for then, instead of retrying on a timer.
    pub fn stream(&self) -> bool {
        self.stream
    }

    /// This process's id.
    pub fn me(&self) -> NodeId {
        self.me
    }

    /// The number of election members; they are the ids `0..members`.
    pub fn members(&self) -> usize {
        self.members
    }

    /// The ids of every member other than this process, in id order.
    pub fn peers(&self) -> impl Iterator<Item = NodeId> + '_ {
        let me = self.me;
        (0..self.members)
            .map(NodeId::from)
            .filter(move |id| *id != me)
    }

    /// This process's monotonic clock reading (not true time): the clock its timers run on,
    /// for elapsed-time checks (Go's `time.Since`, Java's `nanoTime`, `CLOCK_MONOTONIC`).
    /// Clock steps never move it; it stands still while the machine is suspended. (A node the
    /// scenario makes time with its wall clock reads its wall clock here.)
    pub fn monotonic_now(&self) -> LocalNanos {
        self.monotonic_now_ns
    }

    /// This process's wall clock (time of day) reading: for timestamps and for whatever the
    /// real system reads from the time of day (a database's `now()`, a Redis key's expiry).
    /// Clock steps move it; a suspend does not stop it.
    pub fn wall_now(&self) -> LocalNanos {
        self.wall_now_ns
    }

    /// A randomized timeout between `low_ns` and `high_ns` (inclusive): uniform from the
    /// process's random stream, the same draw as `rng().between(low_ns, high_ns)`; or, when
    /// the scenario makes timeouts a choice (`choices: (timeouts: N)`), one of N evenly
    /// spaced values, which a systematic search enumerates. Draw election timeouts with it.
    ///
    /// ```
    /// use splitbrain_sim::{Ctx, NodeId, SimRng};
    ///
    /// let mut rng = SimRng::stream(1, 0);
    /// let mut out: Vec<splitbrain_sim::Effect<(), ()>> = Vec::new();
    /// let mut ctx = Ctx::new(NodeId(0), 3, 0, &mut rng, &mut out).with_timeout_choices(3, None);
    /// let drawn = ctx.draw_timeout(150, 300);
    /// assert!([150, 225, 300].contains(&drawn));
    /// ```
    pub fn draw_timeout(&mut self, low_ns: Nanos, high_ns: Nanos) -> Nanos {
        let values = self.timeout_choices;
        if values < 2 || high_ns <= low_ns {
            return self.rng.between(low_ns, high_ns);
        }
        let drawn = self.rng.below(u64::from(values)) as u32;
        let index = match self.chooser.as_mut() {
            Some((chooser, at_ns)) => chooser.choose(&ChoicePoint {
                kind: ChoiceKind::Timeout,
                at_ns: *at_ns,
                node: self.me,
                options: values,
                default: drawn,
            }),
            None => drawn,
        };
        crate::choice::timeout_value(low_ns, high_ns, values, index)
    }

    /// This process's own random stream.
    pub fn rng(&mut self) -> &mut SimRng {
        self.rng
    }

    /// Sends `msg` to `to` over the simulated network.
    pub fn send(&mut self, to: NodeId, msg: M) {
        self.sent += 1;
        self.out.push(Effect::Send { to, msg });
    }

    /// How many messages this handler has sent so far ([`Ctx::send`],
    /// [`Ctx::send_unordered`]): a process that measures its own traffic reads it before and
    /// after its work.
    pub fn sent(&self) -> usize {
        self.sent
    }

    /// Sends `msg` to `to` without waiting for this handler's or earlier durable writes, nor
    /// for what the process queued behind them: a message another thread of the real process
    /// sends, not behind its write-ahead log (an etcd member's gRPC goroutines forward a
    /// keep-alive to the leader or fail a request while its Raft loop is stuck in
    /// `fdatasync`). It still waits out a stall (the whole process is frozen then) and the
    /// handler's processing time is not added.
    pub fn send_unordered(&mut self, to: NodeId, msg: M) {
        self.sent += 1;
        self.out.push(Effect::SendUnordered { to, msg });
    }

    /// Arms (or re-arms) the timer slot `timer` to fire after a duration of monotonic time.
    pub fn set_timer(&mut self, timer: T, after_local_ns: Nanos) {
        self.out.push(Effect::SetTimer {
            timer,
            after_local_ns,
        });
    }

    /// Arms (or re-arms) the timer slot `timer` to fire when the wall clock reads
    /// `at_wall_ns` (an absolute `CLOCK_REALTIME` timer): a step of the wall clock moves it,
    /// a suspend does not delay it. For what the real system times by the time of day (a
    /// database row's or a Redis key's expiry), never for intervals.
    pub fn set_wall_timer(&mut self, timer: T, at_wall_ns: LocalNanos) {
        self.out.push(Effect::SetWallTimer { timer, at_wall_ns });
    }

    /// Disarms the timer slot `timer`, if armed.
    pub fn cancel_timer(&mut self, timer: T) {
        self.out.push(Effect::CancelTimer { timer });
    }

    /// Writes to the fenced resource with `token` (over the network, like any message).
    pub fn write(&mut self, token: u64) {
        self.out.push(Effect::Write { token });
    }

    /// Declares that this process now believes it leads `term`, fencing with `token`.
    pub fn became_leader(&mut self, term: u64, token: u64) {
        self.out.push(Effect::BecameLeader { term, token });
    }

    /// Declares that this process no longer believes it leads.
    pub fn stepped_down(&mut self) {
        self.out.push(Effect::SteppedDown);
    }

    /// Closes the `Stream` connection to `peer` (as a client does on its own read
    /// timeout); the next send to `peer` opens a new one. No effect on `Datagram`.
    pub fn disconnect(&mut self, peer: NodeId) {
        self.out.push(Effect::Disconnect { peer });
    }

    /// Reports an observation for metrics and coverage.
    pub fn signal(&mut self, signal: Signal) {
        self.out.push(Effect::Signal(signal));
    }

    /// Reports `name = value` about this process to the run's own properties
    /// ([`crate::property`]): what a user's safety property needs to see that the engine
    /// cannot (`lock_acquired`, `committed (term, index)`, `lease_until`). It changes
    /// nothing that happens next, and is dropped at once when the run checks no property.
    /// The handler's observations reach the properties in the order it made them, after
    /// its claims and step-downs and before its term report.
    ///
    /// ```
    /// use splitbrain_sim::property::{UserObservation, Value};
    /// use splitbrain_sim::{Ctx, NodeId, SimRng};
    ///
    /// let (mut rng, mut out, mut seen) = (SimRng::stream(1, 0), Vec::<splitbrain_sim::Effect<(), ()>>::new(), Vec::new());
    /// let mut ctx = Ctx::new(NodeId(0), 3, 0, &mut rng, &mut out).with_observations(&mut seen);
    /// ctx.observe("lock_acquired", 7u64);
    /// drop(ctx);
    /// assert_eq!(seen, vec![UserObservation { name: "lock_acquired", value: Value::U64(7) }]);
    /// ```
    pub fn observe(&mut self, name: &'static str, value: impl Into<Value>) {
        if let Some(observed) = self.observed.as_mut() {
            observed.push(UserObservation {
                name,
                value: value.into(),
            });
        }
    }

    /// Writes `durable` (the process's durable state as it is now) to its disk, and fsyncs.
    /// What the handler sends after this call leaves only once the write is on disk, and so
    /// does whatever the process sends after this handler (its output is one ordered stream,
    /// as a server's event loop that blocks on its fsync). A crash before the write completes
    /// loses it: the process restarts with the last write that completed
    /// ([`Process::restore`]). Sends before the call leave at once (a Raft leader's
    /// AppendEntries go out while it writes its own log, thesis 10.2.1).
    pub fn persist(&mut self, durable: D) {
        self.out.push(Effect::Persist(durable));
    }

    /// Puts `text` in the trace as a `log` event of this process (dropped when the run is
    /// not traced): an external node's stderr, when its settings ask for it.
    pub fn log(&mut self, text: String) {
        self.out.push(Effect::Log { text });
    }

    /// Ends the run: this process cannot go on (a node in another language broke the step
    /// protocol, exited or hung). The engine refuses the effect at the end of the handler
    /// ([`Refusal::ProcessFailed`](crate::Refusal::ProcessFailed)), so the run's error names
    /// the process, the event it was handling and the true time, with `reason`.
    ///
    /// ```
    /// use splitbrain_sim::{Ctx, Effect, NodeId, SimRng};
    ///
    /// let (mut rng, mut out) = (SimRng::stream(1, 0), Vec::<Effect<(), ()>>::new());
    /// Ctx::new(NodeId(0), 3, 0, &mut rng, &mut out).fail("step 4: the process exited".into());
    /// assert!(matches!(&out[0], Effect::Fail { reason } if reason.contains("exited")));
    /// ```
    pub fn fail(&mut self, reason: String) {
        self.out.push(Effect::Fail { reason });
    }
}

/// A process's reaction to events. `Self::Msg` and `Self::Timer` are the algorithm's own.
pub trait Process {
    /// The algorithm's message type.
    type Msg: Message;
    /// The algorithm's timer kinds.
    type Timer: TimerKind;
    /// What the process writes to its disk with [`Ctx::persist`] and gets back at a restart.
    /// `()` for a model that keeps its durable state in memory, as if written at once.
    type Durable: DurableState;

    /// Called once at true time zero, in id order.
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>);
    /// Called when `msg` from `from` is delivered (held while the process is paused, dropped
    /// while it is crashed).
    fn on_message(
        &mut self,
        ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        from: NodeId,
        msg: Self::Msg,
    );
    /// Called when the armed slot `timer` comes due on the process's own clock.
    fn on_timer(
        &mut self,
        ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        timer: Self::Timer,
    );
    /// Called when a crashed process comes back, after [`Process::restore`]. It must drop
    /// its volatile state and keep only what it had made durable (and must not claim
    /// leadership it held before).
    fn on_restart(&mut self, ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>);
    /// Before [`Process::on_restart`]: the last durable write that completed before the
    /// crash, or `None` if none did (the disk holds what the process was created with). A
    /// process must put it in place of its durable state. The default keeps the state in
    /// memory, for models that never call [`Ctx::persist`].
    fn restore(&mut self, _durable: Option<Self::Durable>) {}
    /// A planned handover was asked of this process. The default does nothing.
    fn on_resign(&mut self, _ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>) {}
    /// A membership change was asked of this process (the `ConfChange` fault): propose it,
    /// if it leads. The default does nothing: the built-in algorithms have a fixed
    /// membership.
    fn on_conf_change(
        &mut self,
        _ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        _change: crate::fault::MemberChange,
    ) {
    }
    /// The `Stream` connection to `peer` broke: the peers were cut apart longer than its
    /// timeout, `peer` crashed, or `peer` closed it. What was in flight on it is lost. Not
    /// called on `Datagram`.
    fn on_disconnect(
        &mut self,
        _ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        _peer: NodeId,
    ) {
    }

    /// The process's current term or epoch (checked for `term_monotonic`).
    fn term(&self) -> u64;
    /// The fencing token to write with, if the process believes it leads by its own clock
    /// at `local_now_ns` and is willing to serve; asked by the workload before every write.
    fn write_token(&self, local_now_ns: LocalNanos) -> Option<u64>;
    /// The leader this process recognises (itself included), for the liveness check. For the
    /// coordination service (the process after the members): whom it would name if a client
    /// asked who leads now (`None` if it cannot tell).
    fn known_leader(&self) -> Option<NodeId>;
    /// Whether this member, now, keeps no track of who leads but would learn it by asking the
    /// service when it needs to (a ZooKeeper recipe waiter). The liveness check then counts
    /// it as recognising what the service's `known_leader` names, not its own last view. A
    /// member that knows it cannot ask now (no connection, no session) says false. Default:
    /// false.
    fn learns_leader_on_demand(&self) -> bool {
        false
    }

    /// For a member of a coordination service that runs as a cluster (a process after the
    /// election members: an etcd member, a ZooKeeper server): whether it leads its service
    /// now (etcd's Raft leader, ZooKeeper's `LEADING` server), as its own state says. The
    /// `ServiceLeader` and `ServiceFollower` fault targets are resolved with it. Election
    /// members and single-process services say false (the default).
    fn leads_service(&self) -> bool {
        false
    }

    /// For a process of a coordination service: whether it keeps no state of its own and
    /// serves clients by relaying to the service's other processes (a Kubernetes API server
    /// in front of its etcd cluster). Such a gateway serves while it can talk to a serving
    /// quorum of the others; it is never a quorum member, never `ServiceLeader`,
    /// `ServiceFollower(s)` nor in `ServiceQuorum`. Default: false.
    fn is_service_gateway(&self) -> bool {
        false
    }

    /// For an election member: the coordination-service process its client talks to now
    /// (the single service process, the etcd member its client is connected to, the
    /// ZooKeeper server its session is on, the API server its Kubernetes elector uses), or
    /// `None` if it talks to none. The `ServiceOfLeader` fault target is resolved with it,
    /// asked of the election leader. Default: `None` (algorithms without a service).
    ///
    /// ```
    /// use splitbrain_sim::{Ctx, LocalNanos, Message, NodeId, Process, TimerKind};
    ///
    /// #[derive(Clone, Debug)]
    /// struct Hello;
    /// impl Message for Hello {
    ///     const KINDS: &'static [&'static str] = &["hello"];
    ///     fn kind(&self) -> usize { 0 }
    /// }
    /// #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    /// struct Tick;
    /// impl TimerKind for Tick {
    ///     const NAMES: &'static [&'static str] = &["tick"];
    ///     fn index(self) -> usize { 0 }
    ///     fn from_index(_: usize) -> Self { Tick }
    /// }
    ///
    /// /// A client of a service of `servers` processes after the `members` clients: it
    /// /// starts on server `me % servers` and moves to the next one when it fails over.
    /// #[derive(Clone, Debug)]
    /// struct Client { members: usize, servers: usize, current: usize }
    ///
    /// impl Process for Client {
    ///     type Msg = Hello;
    ///     type Timer = Tick;
    ///     type Durable = ();
    ///     fn on_start(&mut self, _: &mut Ctx<'_, Hello, Tick>) {}
    ///     fn on_message(&mut self, _: &mut Ctx<'_, Hello, Tick>, _: NodeId, _: Hello) {}
    ///     fn on_timer(&mut self, _: &mut Ctx<'_, Hello, Tick>, _: Tick) {
    ///         self.current = (self.current + 1) % self.servers;
    ///     }
    ///     fn on_restart(&mut self, _: &mut Ctx<'_, Hello, Tick>) {}
    ///     fn term(&self) -> u64 { 0 }
    ///     fn write_token(&self, _: LocalNanos) -> Option<u64> { None }
    ///     fn known_leader(&self) -> Option<NodeId> { None }
    ///     fn service_member_used(&self) -> Option<NodeId> {
    ///         Some(NodeId::from(self.members + self.current))
    ///     }
    /// }
    ///
    /// // Member 1 of 3 on a service of 3 servers (processes 3, 4, 5) talks to server 1.
    /// let client = Client { members: 3, servers: 3, current: 1 };
    /// assert_eq!(client.service_member_used(), Some(NodeId(4)));
    /// ```
    fn service_member_used(&self) -> Option<NodeId> {
        None
    }

    /// The process's own state, for a person stepping through a run (`splitbrain run
    /// --stop-at`, [`Sim::inspect`](crate::Sim::inspect)): named values such as a Raft
    /// node's `role`, `voted_for`, `log_length` or a lease's deadline, in the order to show
    /// them. The engine knows no algorithm: it shows these as given, beside what it knows
    /// itself (term, leadership belief, timers, clocks, disk, messages). Read-only, never
    /// called during a run. Default: nothing.
    fn inspect(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// A digest of the process's whole state, for a systematic search to tell states it
    /// has explored ([`Sim::digest`](crate::Sim::digest)): equal digests must mean the
    /// process goes on alike from here. Leave out or make relative what only names the time
    /// (a deadline read on its clock): `local_now_ns` is what its timer clock reads now.
    /// `None` (the default): the engine digests [`Process::inspect`], which is sound only
    /// if that shows the whole state.
    fn digest(&self, _local_now_ns: LocalNanos) -> Option<u64> {
        None
    }

    /// [`Process::digest`] of this process's state with every node id in it renamed: node
    /// `i` is called `names[i]` ([`NodeId::renamed`]; per-peer vectors rearranged with
    /// [`crate::ids::renamed_vec`]). A systematic search compares states up to a renaming
    /// of interchangeable members with it ([`Sim::digest_symmetric`](crate::Sim::digest_symmetric)):
    /// two states whose members differ only by their names are explored once. Return
    /// `Some` only if every id in the state is renamed (an id left as it was would merge
    /// states that differ); `None`, the default, keeps the search exact. The digest of the
    /// identity renaming needs not equal [`Process::digest`].
    ///
    /// ```
    /// use splitbrain_sim::ids::renamed_vec;
    /// use splitbrain_sim::{Ctx, LocalNanos, Message, NodeId, Process, TimerKind};
    /// use std::hash::{DefaultHasher, Hash, Hasher};
    ///
    /// #[derive(Clone, Debug)]
    /// struct Hello;
    /// impl Message for Hello {
    ///     const KINDS: &'static [&'static str] = &["hello"];
    ///     fn kind(&self) -> usize { 0 }
    /// }
    /// #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    /// struct Tick;
    /// impl TimerKind for Tick {
    ///     const NAMES: &'static [&'static str] = &["tick"];
    ///     fn index(self) -> usize { 0 }
    ///     fn from_index(_: usize) -> Self { Tick }
    /// }
    ///
    /// /// Votes for the first member it hears from; remembers whom each peer voted for.
    /// #[derive(Clone, Debug)]
    /// struct Voter { voted_for: Option<NodeId>, heard: Vec<Option<NodeId>> }
    ///
    /// impl Process for Voter {
    ///     type Msg = Hello;
    ///     type Timer = Tick;
    ///     type Durable = ();
    ///     fn on_start(&mut self, _: &mut Ctx<'_, Hello, Tick>) {}
    ///     fn on_message(&mut self, _: &mut Ctx<'_, Hello, Tick>, from: NodeId, _: Hello) {
    ///         self.voted_for.get_or_insert(from);
    ///     }
    ///     fn on_timer(&mut self, _: &mut Ctx<'_, Hello, Tick>, _: Tick) {}
    ///     fn on_restart(&mut self, _: &mut Ctx<'_, Hello, Tick>) {}
    ///     fn term(&self) -> u64 { 0 }
    ///     fn write_token(&self, _: LocalNanos) -> Option<u64> { None }
    ///     fn known_leader(&self) -> Option<NodeId> { self.voted_for }
    ///     fn digest_renamed(&self, _: LocalNanos, names: &[NodeId]) -> Option<u64> {
    ///         let rename = |n: &Option<NodeId>| n.map(|n| n.renamed(names));
    ///         let heard: Vec<_> = renamed_vec(&self.heard, names).iter().map(rename).collect();
    ///         let mut h = DefaultHasher::new();
    ///         (rename(&self.voted_for), heard).hash(&mut h);
    ///         Some(h.finish())
    ///     }
    /// }
    ///
    /// // n0 voted for n1 and heard n1 vote for n2; renamed by swapping n1 and n2 it is the
    /// // n0 that voted for n2 and heard n2 vote for n1.
    /// let a = Voter { voted_for: Some(NodeId(1)), heard: vec![None, Some(NodeId(2)), None] };
    /// let b = Voter { voted_for: Some(NodeId(2)), heard: vec![None, None, Some(NodeId(1))] };
    /// let swap = [NodeId(0), NodeId(2), NodeId(1)];
    /// assert_eq!(a.digest_renamed(0, &swap), b.digest_renamed(0, &[NodeId(0), NodeId(1), NodeId(2)]));
    /// ```
    fn digest_renamed(&self, _local_now_ns: LocalNanos, _names: &[NodeId]) -> Option<u64> {
        None
    }
}

/// A boxed process is a process: a run may host processes of several types behind one
/// `Box<dyn Process<..>>` (a client and the processes of its service), each answering for
/// itself, with no enum of them to dispatch by hand.
///
/// ```
/// use splitbrain_sim::{Ctx, NodeId, Process};
/// # use splitbrain_sim::{Message, TimerKind, LocalNanos};
/// # #[derive(Clone, Debug, PartialEq)] struct Ping;
/// # impl Message for Ping { const KINDS: &'static [&'static str] = &["Ping"]; fn kind(&self) -> usize { 0 } }
/// # #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)] struct Tick;
/// # impl TimerKind for Tick {
/// #     const NAMES: &'static [&'static str] = &["Tick"];
/// #     fn index(self) -> usize { 0 }
/// #     fn from_index(_: usize) -> Self { Tick }
/// # }
/// struct Quiet(u64);
/// impl Process for Quiet {
///     type Msg = Ping;
///     type Timer = Tick;
///     type Durable = ();
///     fn on_start(&mut self, _: &mut Ctx<'_, Ping, Tick>) {}
///     fn on_message(&mut self, _: &mut Ctx<'_, Ping, Tick>, _: NodeId, _: Ping) {}
///     fn on_timer(&mut self, _: &mut Ctx<'_, Ping, Tick>, _: Tick) {}
///     fn on_restart(&mut self, _: &mut Ctx<'_, Ping, Tick>) {}
///     fn term(&self) -> u64 { self.0 }
///     fn write_token(&self, _: LocalNanos) -> Option<u64> { None }
///     fn known_leader(&self) -> Option<NodeId> { None }
/// }
/// let hosted: Vec<Box<dyn Process<Msg = Ping, Timer = Tick, Durable = ()>>> =
///     vec![Box::new(Quiet(1)), Box::new(Quiet(2))];
/// assert_eq!(hosted.iter().map(|p| p.term()).sum::<u64>(), 3);
/// ```
impl<P: Process + ?Sized> Process for Box<P> {
    type Msg = P::Msg;
    type Timer = P::Timer;
    type Durable = P::Durable;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>) {
        (**self).on_start(ctx)
    }
    fn on_message(
        &mut self,
        ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        from: NodeId,
        msg: Self::Msg,
    ) {
        (**self).on_message(ctx, from, msg)
    }
    fn on_timer(
        &mut self,
        ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        timer: Self::Timer,
    ) {
        (**self).on_timer(ctx, timer)
    }
    fn on_restart(&mut self, ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>) {
        (**self).on_restart(ctx)
    }
    fn restore(&mut self, durable: Option<Self::Durable>) {
        (**self).restore(durable)
    }
    fn on_resign(&mut self, ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>) {
        (**self).on_resign(ctx)
    }
    fn on_conf_change(
        &mut self,
        ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        change: crate::fault::MemberChange,
    ) {
        (**self).on_conf_change(ctx, change)
    }
    fn on_disconnect(
        &mut self,
        ctx: &mut Ctx<'_, Self::Msg, Self::Timer, Self::Durable>,
        peer: NodeId,
    ) {
        (**self).on_disconnect(ctx, peer)
    }
    fn term(&self) -> u64 {
        (**self).term()
    }
    fn write_token(&self, local_now_ns: LocalNanos) -> Option<u64> {
        (**self).write_token(local_now_ns)
    }
    fn known_leader(&self) -> Option<NodeId> {
        (**self).known_leader()
    }
    fn learns_leader_on_demand(&self) -> bool {
        (**self).learns_leader_on_demand()
    }
    fn leads_service(&self) -> bool {
        (**self).leads_service()
    }
    fn is_service_gateway(&self) -> bool {
        (**self).is_service_gateway()
    }
    fn service_member_used(&self) -> Option<NodeId> {
        (**self).service_member_used()
    }
    fn inspect(&self) -> Vec<(&'static str, String)> {
        (**self).inspect()
    }
    fn digest(&self, local_now_ns: LocalNanos) -> Option<u64> {
        (**self).digest(local_now_ns)
    }
    fn digest_renamed(&self, local_now_ns: LocalNanos, names: &[NodeId]) -> Option<u64> {
        (**self).digest_renamed(local_now_ns, names)
    }
}
