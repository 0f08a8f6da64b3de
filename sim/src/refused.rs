//! How a run ends when it cannot go on ([`RunError`]): a limit outgrown, or an effect the
//! engine refuses; and what a process was handling ([`Handling`]), for both and for a panic
//! inside a handler ([`take_handler_panic`]).

use crate::ids::NodeId;
use crate::limits::LimitExceeded;
use crate::time::{format_duration, Nanos};
use std::cell::Cell;
use std::fmt;

/// Why [`Sim::run`](crate::Sim::run) ended without a report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The run outgrew a limit of its guard, or was stopped from outside
    /// ([`crate::limits`]).
    #[error(transparent)]
    Limit(#[from] LimitExceeded),
    /// A process asked for an effect the engine cannot carry out (a message to a node that
    /// does not exist, ...): a bug in that process, reported instead of a panic.
    #[error(transparent)]
    Refused(#[from] RefusedEffect),
}

impl RunError {
    /// The limit outgrown, if that is why the run ended.
    pub fn limit(&self) -> Option<&LimitExceeded> {
        match self {
            RunError::Limit(e) => Some(e),
            RunError::Refused(_) => None,
        }
    }

    /// The refused effect, if that is why the run ended.
    pub fn refused(&self) -> Option<&RefusedEffect> {
        match self {
            RunError::Refused(e) => Some(e),
            RunError::Limit(_) => None,
        }
    }
}

/// An effect a process asked for that the engine refused, and where: the run ends with it
/// ([`RunError::Refused`]) at the end of the handler that asked for it.
///
/// ```
/// use splitbrain_sim::{Handling, HandlerEvent, NodeId, Refusal, RefusedEffect};
///
/// let refused = RefusedEffect {
///     handling: Handling { node: NodeId(1), at_ns: 2_000_000, event: HandlerEvent::Start },
///     effect: "Send { to: NodeId(9), msg: Ping }".to_string(),
///     refusal: Refusal::NoSuchNode { node: NodeId(9), processes: 3 },
/// };
/// assert_eq!(
///     refused.to_string(),
///     "n1 asked for an effect the engine refuses while handling start at 2ms: \
///      Send { to: NodeId(9), msg: Ping }: n9 does not exist (this run has processes n0 to n2)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct RefusedEffect {
    /// The process that asked, the event it was handling and the true time.
    pub handling: Handling,
    /// The effect as the process asked for it (its `Debug` form).
    pub effect: String,
    /// Why the engine refused it.
    pub refusal: Refusal,
}

impl RefusedEffect {
    /// The error's text: a process that failed says what went wrong in its own words.
    fn describe(&self) -> String {
        let (node, event) = (self.handling.node, self.handling.event_at());
        match self.refusal {
            Refusal::ProcessFailed => format!("{node} failed while handling {event}: {}", self.effect),
            refusal => format!(
                "{node} asked for an effect the engine refuses while handling {event}: {}: {refusal}",
                self.effect
            ),
        }
    }
}

/// Why the engine refused an effect.
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The effect names a node that is not a process of the run: a message to it, a
    /// connection to close, a signal about it. (The resource is reached with
    /// [`Ctx::write`](crate::Ctx::write), never by id.)
    #[error("{node} does not exist (this run has processes n0 to n{})", processes.saturating_sub(1))]
    NoSuchNode {
        /// The id named.
        node: NodeId,
        /// How many processes the run has (ids `0..processes`).
        processes: usize,
    },
    /// A timer kind's [`TimerKind::index`](crate::TimerKind::index) is past its
    /// [`TimerKind::NAMES`](crate::TimerKind::NAMES).
    #[error("timer kind index {index} is past the {kinds} timer kinds named")]
    NoSuchTimerKind {
        /// The index the timer kind gave.
        index: usize,
        /// How many timer kinds are named.
        kinds: usize,
    },
    /// A message's [`Message::kind`](crate::Message::kind) is past its
    /// [`Message::KINDS`](crate::Message::KINDS).
    #[error("message kind index {index} is past the {kinds} message kinds named")]
    NoSuchMessageKind {
        /// The index the message gave.
        index: usize,
        /// How many message kinds are named.
        kinds: usize,
    },
    /// The process said it cannot go on ([`Ctx::fail`](crate::Ctx::fail)); the refused
    /// effect's text is its reason.
    #[error("the process failed")]
    ProcessFailed,
}

/// A process handling one event: which process, what event, at what true time. The engine
/// says it in a [`RefusedEffect`], and leaves it for whoever catches a panic that unwound out
/// of a handler ([`take_handler_panic`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Handling {
    /// The process.
    pub node: NodeId,
    /// True time of the event.
    pub at_ns: Nanos,
    /// The event.
    pub event: HandlerEvent,
}

impl Handling {
    /// `deliver of vote from n1 at 1.2s`.
    fn event_at(&self) -> String {
        format!("{} at {}", self.event, format_duration(self.at_ns))
    }
}

/// `n2 handling deliver of vote from n1 at 1.2s`.
impl fmt::Display for Handling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} handling {}", self.node, self.event_at())
    }
}

/// The event a handler was called for; [`HandlerEvent::kind`] is the trace's `ev` name.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HandlerEvent {
    /// `on_start`.
    Start,
    /// `on_message`.
    Message {
        /// The message type (its `Message::KINDS` name).
        message: &'static str,
        /// The sender.
        from: NodeId,
        /// True time it was sent.
        sent_ns: Nanos,
    },
    /// `on_timer`.
    Timer {
        /// The timer kind (its `TimerKind::NAMES` name).
        timer: &'static str,
    },
    /// `on_restart`.
    Restart,
    /// `on_resign`.
    Resign,
    /// `on_conf_change`.
    ConfChange {
        /// The change asked for.
        change: crate::fault::MemberChange,
    },
    /// The workload's write tick (`write_token`).
    Workload,
    /// `on_disconnect`.
    Disconnect {
        /// The other end of the broken connection.
        peer: NodeId,
    },
}

impl HandlerEvent {
    /// The event's kind, as the trace's `ev` column names it (`deliver`, `timer`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            HandlerEvent::Start => "start",
            HandlerEvent::Message { .. } => "deliver",
            HandlerEvent::Timer { .. } => "timer",
            HandlerEvent::Restart => "restart",
            HandlerEvent::Resign => "resign",
            HandlerEvent::ConfChange { .. } => "conf_change",
            HandlerEvent::Workload => "workload",
            HandlerEvent::Disconnect { .. } => "disconnect",
        }
    }
}

/// `deliver of vote from n1`, `timer election`, `start`.
impl fmt::Display for HandlerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandlerEvent::Message { message, from, .. } => {
                write!(f, "deliver of {message} from {from}")
            }
            HandlerEvent::Timer { timer } => write!(f, "timer {timer}"),
            HandlerEvent::Disconnect { peer } => write!(f, "disconnect from {peer}"),
            HandlerEvent::ConfChange { change } => write!(f, "conf_change {change}"),
            other => f.write_str(other.kind()),
        }
    }
}

thread_local! {
    /// The handler the last panic on this thread unwound out of, until taken.
    static HANDLER_PANIC: Cell<Option<Handling>> = const { Cell::new(None) };
}

/// The handler a panic unwound out of on this thread (the process, the event it was handling
/// and its true time), and forgets it: for whoever catches the panic with
/// [`std::panic::catch_unwind`] around a run, to say where a process's code panicked. `None`
/// if no panic left a handler since the last call (a panic in the engine itself, or none).
///
/// The engine writes it only while unwinding (a guard around every handler call that a
/// normal return forgets), so it costs the run nothing.
///
/// ```
/// // Nothing panicked on this thread.
/// assert_eq!(splitbrain_sim::take_handler_panic(), None);
/// ```
pub fn take_handler_panic() -> Option<Handling> {
    HANDLER_PANIC.with(Cell::take)
}

/// Set up around a handler call; a normal return [`std::mem::forget`]s it, so its `drop`
/// runs only when a panic unwinds out of the handler, and leaves the handling behind for
/// [`take_handler_panic`].
pub(crate) struct HandlerGuard<F: Fn() -> Handling> {
    pub(crate) handling: F,
}

impl<F: Fn() -> Handling> Drop for HandlerGuard<F> {
    fn drop(&mut self) {
        let handling = (self.handling)();
        HANDLER_PANIC.with(|cell| cell.set(Some(handling)));
    }
}
