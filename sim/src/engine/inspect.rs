//! Stepping through a run: stop it at a true time or after a trace event
//! ([`Sim::run_until`]), look at every process ([`Sim::inspect`]), then go on or end it.
//!
//! Nothing here runs per event except the stop test of the run loop and the campaign note of
//! a few effects; a snapshot is built only when asked for.

use super::{EventData, Held, Payload, Sim, Status};
use crate::ids::NodeId;
use crate::process::{Message, Process, Signal};
use crate::time::{LocalNanos, Nanos};
use serde::Serialize;

/// Where [`Sim::run_until`] stops.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// After every event due at or before this true time (ns); the snapshot reads the
    /// clocks at this time.
    Time(Nanos),
    /// After the engine step that handed the trace its `n`-th event (counting from 1: the
    /// line number in a `--trace` file). One step may write several lines (a fault and the
    /// crash it causes, a `persist` and the delivery that asked for it): the run stops after
    /// the last of them. Needs a trace sink ([`Sim::with_trace`]); without one no event is
    /// counted and the run goes to its end.
    TraceEvent(u64),
}

/// Whether [`Sim::run_until`] got to its stop.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reached {
    /// The run stopped where asked.
    Stop,
    /// The run ended first: the stop lies past its duration or its last trace event.
    End,
}

/// What the engine last saw a process do about elections, for its role in a snapshot.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) enum Campaign {
    /// Nothing since its last claim, step-down, crash or leader heard.
    #[default]
    None,
    /// It started a pre-vote for this term.
    PreVote(u64),
    /// It started an election for this term.
    Election(u64),
}

/// A process's role as the engine knows it from the process's own effects: a claim
/// (`became_leader`), a step-down, a campaign (`ElectionStarted` / `PreVoteStarted`
/// signals), a leader heard (`LeaderHeard`), and whether it names a leader
/// (`Process::known_leader`: a node that does follows it). The algorithm's own view, where it
/// has one, is in [`NodeSnapshot::state`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// It believes it leads.
    Leader,
    /// It started an election for its current term (or a later one), has neither won nor
    /// stepped down since, and names no leader.
    Candidate,
    /// It started a pre-vote and has not moved on since.
    PreCandidate,
    /// Any other member.
    Follower,
    /// A modeled coordination service (the process after the members).
    Service,
}

/// A process's run state in a snapshot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum NodeStatus {
    /// Handling events as they come due.
    Up,
    /// Frozen by a `Pause` or `Stall` until this true time: what comes due is held.
    Paused {
        /// True time the pause ends.
        until_ns: Nanos,
    },
    /// Frozen by a `Suspend` until this true time: its monotonic clock stands still too.
    Suspended {
        /// True time the suspend ends.
        until_ns: Nanos,
    },
    /// Down until a restart.
    Crashed,
}

/// A process's clocks at the snapshot's time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClockSnapshot {
    /// The reading its timers and elapsed-time checks use (`Ctx::monotonic_now`): the
    /// monotonic clock, or the wall clock for a node with `timers: Wall`.
    pub monotonic_ns: LocalNanos,
    /// The wall clock (time of day, `Ctx::wall_now`).
    pub wall_ns: LocalNanos,
    /// The drift in force, in parts per million.
    pub drift_ppm: i64,
    /// Whether its timers run on its wall clock (`timers: Wall`).
    pub timers_on_wall: bool,
}

/// An armed timer of a process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArmedTimer {
    /// The timer's name (the algorithm's, or `workload` for the write tick).
    pub name: &'static str,
    /// Whether it is a wall-clock timer (`set_wall_timer`); else it runs on the timer clock.
    pub wall: bool,
    /// The reading of its clock at which it fires.
    pub due_local_ns: LocalNanos,
    /// The true time at which it fires, as the clocks stand now.
    pub due_ns: Nanos,
}

/// A process's disk and the output waiting for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DiskSnapshot {
    /// The true times at which its durable writes under way complete, oldest first.
    pub pending_fsyncs_ns: Vec<Nanos>,
    /// Sends and writes waiting for those writes or for processing time.
    pub waiting_output: usize,
}

/// One named value of a process's own state ([`Process::inspect`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateField {
    /// The value's name (`voted_for`).
    pub name: &'static str,
    /// The value, as the algorithm prints it.
    pub value: String,
}

/// One process at the snapshot's time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeSnapshot {
    /// The process.
    pub node: NodeId,
    /// Its role as the engine knows it.
    pub role: Role,
    /// Its term or epoch.
    pub term: u64,
    /// The term it believes it leads, if it does.
    pub leads_term: Option<u64>,
    /// The leader it recognises (for the liveness check).
    pub known_leader: Option<NodeId>,
    /// Up, paused, suspended or crashed.
    #[serde(flatten)]
    pub status: NodeStatus,
    /// A stall armed to strike inside its next handler: its length.
    pub stall_armed_ns: Option<Nanos>,
    /// Sends and timer changes of a stalled handler, released at its resume.
    pub deferred_effects: usize,
    /// Messages, timers and disconnections held for it while it is paused.
    pub held_events: usize,
    /// Its clocks.
    pub clocks: ClockSnapshot,
    /// Its armed timers, soonest first.
    pub timers: Vec<ArmedTimer>,
    /// Its disk.
    pub disk: DiskSnapshot,
    /// The algorithm's own view of its state ([`Process::inspect`]).
    pub state: Vec<StateField>,
}

/// Where a message in a snapshot is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Whereabouts {
    /// On the network, due to arrive at `due_ns`.
    Travelling,
    /// Arrived while its receiver was paused: handled at the resume.
    Held,
}

/// A message not yet handled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InFlight {
    /// The sender.
    pub from: NodeId,
    /// The receiver (the resource for a write).
    pub to: NodeId,
    /// The message type (`write` for a write to the resource).
    pub message: &'static str,
    /// True time it was sent.
    pub sent_ns: Nanos,
    /// True time it arrives (travelling messages only).
    pub due_ns: Option<Nanos>,
    /// On the network, or held at a paused receiver.
    pub whereabouts: Whereabouts,
}

/// Every process's state and every message under way at one point of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// The true time of the snapshot.
    pub at_ns: Nanos,
    /// Engine events handled so far.
    pub events: u64,
    /// Trace events written so far (0 when the run is not traced).
    pub trace_events: u64,
    /// Every process, members first.
    pub nodes: Vec<NodeSnapshot>,
    /// Messages sent and not yet handled, by due time (held ones last).
    pub in_flight: Vec<InFlight>,
    /// Messages held back on `Stream` connections behind a lost or cut one (not listed).
    pub held_on_streams: u64,
}

impl<'t, P: Process> Sim<'t, P> {
    /// Runs until `stop` (after [`Sim::with_trace`] and the rest), and says whether it got
    /// there. The run is left where it stopped: look at it with [`Sim::inspect`], go on with
    /// another `run_until` or with [`Sim::run`], or end it with [`Sim::finish_here`].
    /// Stopping changes nothing of what happens: the events up to the stop are those of the
    /// whole run, and going on gives the whole run.
    ///
    /// ```
    /// use splitbrain_sim::engine::{Reached, StopAt};
    /// use splitbrain_sim::storm::{storm_config, StormNode};
    /// use splitbrain_sim::Sim;
    ///
    /// let (config, info) = storm_config(1, 3);
    /// let mut sim = Sim::new(config, info, vec![StormNode::default(); 3]);
    /// assert_eq!(sim.run_until(StopAt::Time(1_000_000)).unwrap(), Reached::Stop);
    /// let snapshot = sim.inspect();
    /// assert_eq!(snapshot.at_ns, 1_000_000);
    /// assert_eq!(snapshot.nodes.len(), 3);
    /// ```
    pub fn run_until(&mut self, stop: StopAt) -> Result<Reached, crate::RunError> {
        let reached = self.run_events(Some(stop))?;
        match (stop, reached) {
            // A stop before where the run stands (a second call with an earlier time)
            // leaves the clock where it is: time never goes back.
            (StopAt::Time(at_ns), Reached::Stop) => self.now = self.now.max(at_ns),
            (_, Reached::End) if self.max_events.is_none() => self.now = self.config.duration_ns,
            _ => {}
        }
        Ok(reached)
    }

    /// Ends the run where it stands and reports it as if it had been the run's end (failovers
    /// still open are unresolved; liveness is judged as of now, so inconclusive if its bound
    /// has not run out). The run cannot go on after this.
    pub fn finish_here(&mut self) -> crate::RunReport {
        self.finish()
    }

    /// Every process's state and every message under way, now.
    pub fn inspect(&self) -> Snapshot {
        let nodes = (0..self.processes.len())
            .map(|index| self.inspect_node(NodeId::from(index)))
            .collect();
        Snapshot {
            at_ns: self.now,
            events: self.events,
            trace_events: self.trace_lines,
            nodes,
            in_flight: self.in_flight_now(),
            held_on_streams: self.held_in_streams,
        }
    }

    /// Notes a campaign, a claim or a step-down of `node` for its role
    /// (`signal` is `None` for a claim or a step-down).
    pub(super) fn note_campaign(&mut self, node: NodeId, signal: Option<Signal>) {
        let campaign = &mut self.campaigns[node.index()];
        *campaign = match signal {
            Some(Signal::ElectionStarted { term }) => Campaign::Election(term),
            Some(Signal::PreVoteStarted { term }) => Campaign::PreVote(term),
            Some(Signal::LeaderHeard { .. }) | None => Campaign::None,
            Some(_) => *campaign,
        };
    }

    fn inspect_node(&self, node: NodeId) -> NodeSnapshot {
        let state = &self.nodes[node.index()];
        let process = &self.processes[node.index()];
        let (monotonic_ns, wall_ns) = state.clocks.readings(self.now);
        let status = match state.status {
            Status::Up => NodeStatus::Up,
            Status::Crashed => NodeStatus::Crashed,
            Status::Paused { until_ns } if state.suspended => NodeStatus::Suspended { until_ns },
            Status::Paused { until_ns } => NodeStatus::Paused { until_ns },
        };
        NodeSnapshot {
            node,
            role: self.role_of(node),
            term: process.term(),
            leads_term: self.leadership.term_of(node),
            known_leader: process.known_leader(),
            status,
            stall_armed_ns: state.stall_next.map(|(ns, _)| ns),
            deferred_effects: state.deferred.len(),
            held_events: state.held.len(),
            clocks: ClockSnapshot {
                monotonic_ns,
                wall_ns,
                drift_ppm: state.clocks.drift_ppm(),
                timers_on_wall: self.timers_on_wall(node),
            },
            timers: self.armed_timers(node),
            disk: DiskSnapshot {
                pending_fsyncs_ns: state.writing.iter().map(|(done, ..)| *done).collect(),
                waiting_output: state.outgoing.len(),
            },
            state: process
                .inspect()
                .into_iter()
                .map(|(name, value)| StateField { name, value })
                .collect(),
        }
    }

    /// Whether the scenario makes `node` time with its wall clock.
    fn timers_on_wall(&self, node: NodeId) -> bool {
        let fixed = self
            .config
            .clocks
            .per_node
            .iter()
            .find(|c| c.node as usize == node.index());
        let service = self
            .config
            .clocks
            .service
            .filter(|_| node.index() >= self.config.members);
        let timers = service.map(|s| s.timers).or(fixed.map(|f| f.timers));
        timers == Some(crate::clock::TimerClock::Wall)
    }

    fn role_of(&self, node: NodeId) -> Role {
        if node.index() >= self.config.members {
            return Role::Service;
        }
        if self.leadership.believes(node) {
            return Role::Leader;
        }
        let process = &self.processes[node.index()];
        // A node that names a leader follows it, whatever it campaigned for before.
        if process.known_leader().is_some() {
            return Role::Follower;
        }
        let term = process.term();
        match self.campaigns[node.index()] {
            Campaign::Election(t) if t >= term => Role::Candidate,
            Campaign::PreVote(t) if t >= term => Role::PreCandidate,
            _ => Role::Follower,
        }
    }

    fn armed_timers(&self, node: NodeId) -> Vec<ArmedTimer> {
        let state = &self.nodes[node.index()];
        let mut timers: Vec<ArmedTimer> = (0..self.slots_per_node)
            .filter_map(|kind| {
                let due_ns = self.queue.slot_time(self.slot_of(node, kind))?;
                let name = self.names.timers.get(kind).copied().unwrap_or("workload");
                Some(ArmedTimer {
                    name,
                    wall: state.wall_slot[kind],
                    due_local_ns: state.local_deadline[kind],
                    due_ns,
                })
            })
            .collect();
        timers.sort_by_key(|t| t.due_ns);
        timers
    }

    fn slot_of(&self, node: NodeId, kind: usize) -> u32 {
        (node.index() * self.slots_per_node + kind) as u32
    }

    /// Messages on the network (by due time, then send order) and held at paused receivers.
    fn in_flight_now(&self) -> Vec<InFlight> {
        let slots = self.queue_slots() as u32;
        let mut entries = self.queue.other_entries();
        entries.sort_by_key(|e| (e.time, e.seq));
        let mut listed: Vec<InFlight> = entries
            .iter()
            .filter_map(|entry| {
                let item = self.slab.items.get((entry.handle - slots) as usize)?;
                let Some(EventData::Deliver {
                    from,
                    to,
                    sent_ns,
                    payload,
                    ..
                }) = item
                else {
                    return None;
                };
                Some(InFlight {
                    from: *from,
                    to: *to,
                    message: self.message_name(payload),
                    sent_ns: *sent_ns,
                    due_ns: Some(entry.time),
                    whereabouts: Whereabouts::Travelling,
                })
            })
            .collect();
        for (index, state) in self.nodes.iter().enumerate() {
            for held in &state.held {
                if let Held::Message { from, sent_ns, msg } = held {
                    listed.push(InFlight {
                        from: *from,
                        to: NodeId::from(index),
                        message: self.kind_name(msg.kind()),
                        sent_ns: *sent_ns,
                        due_ns: None,
                        whereabouts: Whereabouts::Held,
                    });
                }
            }
        }
        listed
    }

    fn message_name(&self, payload: &Payload<P::Msg>) -> &'static str {
        self.kind_name(Self::kind_of(self.names, payload))
    }

    /// The name of message kind `kind` (one past the algorithm's: a write).
    fn kind_name(&self, kind: usize) -> &'static str {
        self.names
            .messages
            .get(kind)
            .copied()
            .unwrap_or(crate::report::WRITE_KIND)
    }
}
