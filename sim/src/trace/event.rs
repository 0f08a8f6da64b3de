//! The trace's vocabulary: one typed value per event the engine handled. The engine builds
//! them only when a sink is attached; JSON Lines ([`super::json`]) is one rendering of them.

use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::time::{LocalNanos, Nanos};
use std::borrow::Cow;
use std::fmt;

/// A message type or timer name. The engine hands out the algorithm's own names
/// ([`crate::Message::KINDS`], [`crate::TimerKind::NAMES`]) without copying them; a trace
/// read back from a file owns its names.
pub type Name = Cow<'static, str>;

/// What the `quiet` event says in the `what` column (docs/trace-format.md).
pub const QUIET_WHAT: &str = "liveness watch starts";

/// One event as the engine handled it (the columns of docs/trace-format.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// True time in nanoseconds since the start of the run.
    pub t_ns: Nanos,
    /// The process the event happened at; `None` for run-wide events (faults, heals,
    /// liveness).
    pub node: Option<NodeId>,
    /// That process's own clock reading (may be negative after a backward jump); `None` for
    /// the resource and run-wide events.
    pub local_ns: Option<LocalNanos>,
    /// What happened.
    pub kind: EventKind,
    /// The process's term or epoch after the event; `None` for the resource and run-wide
    /// events.
    pub term: Option<u64>,
    /// Whether the process believes it leads after the event.
    pub leader: bool,
    /// The invariants the checker found broken at this event (empty: `ok`).
    pub broken: Broken,
}

impl TraceEvent {
    /// Whether the checker found a broken invariant at this event.
    pub fn broke_invariant(&self) -> bool {
        !self.broken.is_empty()
    }
}

/// The event kinds (`ev` in docs/trace-format.md), with what each carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The process started (true time 0).
    Start,
    /// A message was handled.
    Deliver {
        /// The message type (its `Message::KINDS` name).
        message: Name,
        /// The sender (of the message, or of the write).
        from: NodeId,
        /// True time the message or write was sent.
        sent_ns: Nanos,
    },
    /// A timer fired and was handled.
    Timer {
        /// The timer kind (its `TimerKind::NAMES` name).
        timer: Name,
    },
    /// The write tick: the node was asked whether it leads and wrote if so.
    Workload,
    /// A message arrived while the node was paused; it is handled at resume.
    Held {
        /// The message type (its `Message::KINDS` name).
        message: Name,
        /// The sender (of the message, or of the write).
        from: NodeId,
        /// True time the message or write was sent.
        sent_ns: Nanos,
    },
    /// A message in flight was dropped on arrival (receiver crashed, or a partition began).
    Drop {
        /// The message type (its `Message::KINDS` name).
        message: Name,
        /// The sender (of the message, or of the write).
        from: NodeId,
        /// True time the message or write was sent.
        sent_ns: Nanos,
    },
    /// The node heard that its `Stream` connection to `peer` broke (docs/engine.md,
    /// "Transports"); the `what` column names the peer.
    Disconnect {
        /// The other end of the connection.
        peer: NodeId,
    },
    /// The node asked for a durable write that takes time (docs/engine.md, "Disks and
    /// processing"); the `what` column is the true time it completes, in nanoseconds.
    Persist {
        /// True time the write is on disk.
        done_ns: Nanos,
    },
    /// A line of the node's own log (an external node's stderr, when its settings ask for
    /// it: docs/protocol.md); the `what` column is the line.
    Log {
        /// The line, without its end.
        text: String,
    },
    /// A pause, stall or suspend froze the node (or lengthened its freeze) until `until_ns`;
    /// the `what` column is that true time, in nanoseconds.
    Freeze {
        /// True time the node resumes.
        until_ns: Nanos,
    },
    /// A pause or stall ended.
    Resume,
    /// The process stopped.
    Crash,
    /// The process came back with only its durable state.
    Restart,
    /// A planned handover was asked of the process.
    Resign,
    /// A membership change was asked of the process; the `what` column is the change
    /// (`remove 2`).
    ConfChange {
        /// The change asked for.
        change: crate::fault::MemberChange,
    },
    /// A member of a clustered coordination service now leads its service
    /// ([`Process::leads_service`](crate::Process::leads_service) turned true after its
    /// handler): an etcd member became Raft leader, a ZooKeeper server `LEADING`.
    ServiceLeads,
    /// That member no longer leads its service (stepped down, or crashed).
    ServiceFollows,
    /// The resource accepted a write of `token` from `from`.
    WriteAccepted {
        /// The fencing token the write carried.
        token: u64,
        /// The sender (of the message, or of the write).
        from: NodeId,
        /// True time the message or write was sent.
        sent_ns: Nanos,
    },
    /// The resource's fencing refused a stale `token` from `from`.
    WriteRejected {
        /// The fencing token the write carried.
        token: u64,
        /// The sender (of the message, or of the write).
        from: NodeId,
        /// True time the message or write was sent.
        sent_ns: Nanos,
    },
    /// A scheduled fault fired; `description` names its resolved targets.
    Fault {
        /// The fault as the trace's `what` column shows it.
        description: String,
    },
    /// A fault was undone.
    Heal {
        /// What was healed, as the trace's `what` column shows it.
        description: String,
    },
    /// The node's clock reads again what it read before a backward jump.
    ClockCaughtUp,
    /// Every fault has fired and healed: the liveness watch starts.
    Quiet,
    /// The liveness bound ran out.
    LivenessDeadline,
}

impl EventKind {
    /// The stable name (the `ev` column).
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::Deliver { .. } => "deliver",
            EventKind::Timer { .. } => "timer",
            EventKind::Workload => "workload",
            EventKind::Held { .. } => "held",
            EventKind::Drop { .. } => "drop",
            EventKind::Disconnect { .. } => "disconnect",
            EventKind::Persist { .. } => "persist",
            EventKind::Log { .. } => "log",
            EventKind::Freeze { .. } => "freeze",
            EventKind::Resume => "resume",
            EventKind::Crash => "crash",
            EventKind::Restart => "restart",
            EventKind::Resign => "resign",
            EventKind::ConfChange { .. } => "conf_change",
            EventKind::ServiceLeads => "service_leads",
            EventKind::ServiceFollows => "service_follows",
            EventKind::WriteAccepted { .. } => "write_accepted",
            EventKind::WriteRejected { .. } => "write_rejected",
            EventKind::Fault { .. } => "fault",
            EventKind::Heal { .. } => "heal",
            EventKind::ClockCaughtUp => "clock_caught_up",
            EventKind::Quiet => "quiet",
            EventKind::LivenessDeadline => "liveness_deadline",
        }
    }

    /// The sender and send time of a message event or a write (`from`, `sent`).
    pub fn sender(&self) -> Option<(NodeId, Nanos)> {
        match self {
            EventKind::Deliver { from, sent_ns, .. }
            | EventKind::Held { from, sent_ns, .. }
            | EventKind::Drop { from, sent_ns, .. }
            | EventKind::WriteAccepted { from, sent_ns, .. }
            | EventKind::WriteRejected { from, sent_ns, .. } => Some((*from, *sent_ns)),
            _ => None,
        }
    }

    /// Whether this is a write reaching the resource.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            EventKind::WriteAccepted { .. } | EventKind::WriteRejected { .. }
        )
    }
}

/// The invariants one event broke, in the order the checker flagged them (the `check`
/// column). Almost always empty; a flag can repeat (two claims of one term in one handler
/// each break election safety), and the trace keeps every one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Broken(Vec<Invariant>);

impl Broken {
    /// Whether nothing broke.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The flags, in order.
    pub fn iter(&self) -> impl Iterator<Item = Invariant> + '_ {
        self.0.iter().copied()
    }

    /// Whether `invariant` is among them.
    pub fn contains(&self, invariant: Invariant) -> bool {
        self.0.contains(&invariant)
    }
}

impl From<Vec<Invariant>> for Broken {
    fn from(flags: Vec<Invariant>) -> Self {
        Self(flags)
    }
}

impl FromIterator<Invariant> for Broken {
    fn from_iter<I: IntoIterator<Item = Invariant>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// The comma-separated names (empty when nothing broke; the JSON rendering writes `ok`).
impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, invariant) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(invariant.name())?;
        }
        Ok(())
    }
}
