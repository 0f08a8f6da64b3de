//! The engine: one run of one scenario, single-threaded, event by event.
//!
//! Events are ordered by `(time, seq)` ([`crate::queue`]). Each member process has one timer
//! slot per timer kind plus one for the workload; messages and engine events live in a slab.
//! After every handler the checker sees the process's claims, term and writes.

mod digest;
mod faults;
mod inspect;
mod memory;
mod nodes;
mod observe;
mod order;
mod output;
mod streams;
mod symmetry;
mod trace_events;
mod triggers;
mod windows;

use crate::checker::Checker;
use crate::clock::{NodeClocks, TimerClock};
use crate::config::{AlgorithmInfo, SimConfig};
use crate::failover::FailoverTracker;
use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::leadership::Leadership;
use crate::limits::{Limit, LimitExceeded, STOP_CHECK_EVERY_EVENTS};
use crate::liveness::LivenessMonitor;
use crate::network::Network;
use crate::process::{Effect, Message, Names, Process};
use crate::property::{Installed, Properties, UserObservation};
use crate::queue::EventQueue;
use crate::refused::{RefusedEffect, RunError};
use crate::report::{
    Counters, DropStats, FaultRecord, MessageStats, RunReport, WriteStats, WRITE_KIND,
};
use crate::resource::Resource;
use crate::rng::{SimRng, StreamId};
use crate::time::{LocalNanos, Nanos};
use crate::trace::{EventKind, TraceSink};
use std::collections::{BTreeMap, VecDeque};
use std::num::NonZeroU64;

pub use inspect::{
    ArmedTimer, ClockSnapshot, DiskSnapshot, InFlight, NodeSnapshot, NodeStatus, Reached, Role,
    Snapshot, StateField, StopAt, Whereabouts,
};
pub use nodes::Status;

/// How many events pass between two calls of a run's progress observer: often enough for a
/// progress bar (about ten times a second), rarely enough to cost nothing.
pub const PROGRESS_EVERY_EVENTS: u64 = 1 << 20;

/// How many events ahead the run loop fetches a payload into cache, when the queue knows.
const PREFETCH_AHEAD: usize = 2;

/// What travels on a link.
#[derive(Clone, Debug)]
enum Payload<M> {
    Algo(M),
    /// A write to the resource, with the term its writer believed it led when it sent it.
    Write {
        token: u64,
        term: Option<u64>,
    },
}

/// A queued event that is not a timer.
/// The connection a message rides on: none for a datagram, else its epoch and its place
/// in its direction's send order.
#[derive(Copy, Clone, Debug)]
struct Via {
    /// The epoch plus one: never zero, so that `Option<Via>` takes no more room than `Via`
    /// (a queued message is 56 bytes instead of 64).
    epoch_plus_one: NonZeroU64,
    seq: u64,
}

impl Via {
    fn new(epoch: u64, seq: u64) -> Self {
        // Epochs count the connections one run opens: far below 2^64 - 1.
        let epoch_plus_one = NonZeroU64::MIN.saturating_add(epoch);
        Self {
            epoch_plus_one,
            seq,
        }
    }

    fn epoch(self) -> u64 {
        self.epoch_plus_one.get() - 1
    }
}

#[derive(Debug)]
enum EventData<M> {
    Deliver {
        from: NodeId,
        to: NodeId,
        sent_ns: Nanos,
        payload: Payload<M>,
        via: Option<Via>,
    },
    /// The first held-back message of `from` -> `to` on connection `epoch` is sent again.
    Retransmit {
        from: NodeId,
        to: NodeId,
        epoch: u64,
    },
    /// The connection `a`-`b` of `epoch` has been cut since `since_ns` for its timeout.
    StreamCutTimeout {
        a: NodeId,
        b: NodeId,
        epoch: u64,
        since_ns: Nanos,
    },
    /// `node` hears that its connection to `peer` broke.
    Disconnected {
        node: NodeId,
        peer: NodeId,
    },
    Fault(usize),
    HealFault(usize),
    Resume {
        node: NodeId,
        generation: u32,
    },
    LivenessDeadline,
    /// A node's clock reads again what it read before a backward jump.
    ClockCaughtUp {
        node: NodeId,
    },
    /// What `node` sends that was waiting for its disk or its processing time may leave.
    Release {
        node: NodeId,
        generation: u32,
    },
}

/// Something that came due while its process was paused, handled at resume in order.
#[derive(Debug)]
enum Held<M> {
    Message {
        from: NodeId,
        sent_ns: Nanos,
        msg: M,
    },
    Timer {
        kind: usize,
        generation: u32,
    },
    Disconnected {
        peer: NodeId,
    },
}

/// Per-process engine state (the process itself lives in `Sim::processes`).
struct NodeState<M, T, D> {
    status: Status,
    clocks: NodeClocks,
    /// Suspended (a `Suspend` fault): the monotonic clock stands still until the resume.
    suspended: bool,
    rng: SimRng,
    /// The local deadline of each timer slot (valid while armed).
    local_deadline: Vec<LocalNanos>,
    /// Whether each slot's deadline is a wall-clock reading (else on the timer clock).
    wall_slot: Vec<bool>,
    /// Bumped on every arm and disarm, so a held timer that was re-armed is skipped.
    timer_generation: Vec<u32>,
    held: VecDeque<Held<M>>,
    /// A stall waiting to strike inside the next handler: its length and its fault.
    stall_next: Option<(Nanos, usize)>,
    /// Effects of a stalled handler, released at resume.
    deferred: Vec<Effect<M, T, D>>,
    pause_generation: u32,
    /// The disk durable writes go to.
    disk: crate::disk::Disk,
    /// The last durable write that completed.
    persisted: Option<D>,
    /// The process's term after the handler that asked for `persisted`.
    persisted_term: u64,
    /// Durable writes under way, with the true time each completes and the process's term
    /// after the handler that asked for it, oldest first.
    writing: VecDeque<(Nanos, D, u64)>,
    /// What leaves the process but waits for a durable write or for processing time, with
    /// the true time it may leave, oldest first.
    outgoing: VecDeque<(Nanos, Effect<M, T, D>)>,
    /// The true time everything queued in `outgoing` has left.
    output_free_ns: Nanos,
    /// Bumped when a crash empties `outgoing`, so that its pending releases are skipped.
    output_generation: u32,
}

impl<P: Process> Sim<'_, P> {
    /// The applied record of fault `index` (it has fired).
    fn record_mut(&mut self, index: usize) -> &mut FaultRecord {
        let place = self.record_of_fault[index];
        assert!(
            place != usize::MAX,
            "fault {index} is recorded when it fires"
        );
        &mut self.fault_records[place]
    }
}

/// The failover tracker's calls that need to know which members can hear a leader: up (not
/// crashed) and not cut off from it by a partition.
impl<P: Process> Sim<'_, P> {
    /// Hands `node`'s signal to the failover tracker.
    fn failover_signal(&mut self, node: NodeId, signal: crate::process::Signal) {
        let (nodes, network) = (&self.nodes, &self.network);
        self.failovers
            .on_signal(self.now, node, signal, |leader, n| {
                nodes[n.index()].status != Status::Crashed && !network.is_cut(leader, n)
            });
    }

    /// Tells the failover tracker of `node`'s claim of `term`.
    fn failover_claim(&mut self, node: NodeId, term: u64) {
        let (nodes, network) = (&self.nodes, &self.network);
        self.failovers.on_claim(self.now, node, term, |leader, n| {
            nodes[n.index()].status != Status::Crashed && !network.is_cut(leader, n)
        });
    }

    /// Tells the failover tracker that a member just crashed or a partition formed.
    fn failover_reach_changed(&mut self) {
        let (nodes, network) = (&self.nodes, &self.network);
        self.failovers.on_reach_changed(self.now, |leader, n| {
            nodes[n.index()].status != Status::Crashed && !network.is_cut(leader, n)
        });
    }
}

/// An election under way (see [`crate::report::ElectionRecord`]).
struct OpenElection {
    started_ns: Nanos,
    campaigns: u64,
    sent_by_kind: Vec<u64>,
    /// Per member: it campaigned in this election and has not accepted a leader since.
    campaigning: Vec<bool>,
}

/// Why the run ends before its next event.
enum Halt {
    /// The events and messages queued passed the guard's limit: how many were queued.
    InFlight(u64),
    /// A process asked for an effect the engine refuses.
    Refused(Box<RefusedEffect>),
    /// What the run holds passed `limit` ([`Limit::Memory`] or [`Limit::NodeInFlight`]),
    /// reaching `reached` bytes, by `growth`.
    Bytes {
        limit: Limit,
        reached: u64,
        growth: memory::Growth,
    },
}

/// A slab of events with a free list; handles are stable while the event is queued.
struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Slab<T> {
    fn insert(&mut self, item: T) -> u32 {
        match self.free.pop() {
            Some(index) => {
                self.items[index as usize] = Some(item);
                index
            }
            None => {
                self.items.push(Some(item));
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Asks the processor to bring item `index` into cache: a hint, with no effect on what
    /// the program computes.
    #[inline]
    fn prefetch(&self, index: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(item) = self.items.get(index as usize) {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let address: *const Option<T> = item;
            // SAFETY: a prefetch reads nothing the program can observe and cannot fault;
            // `address` comes from a live reference anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = index;
    }

    fn take(&mut self, index: u32) -> T {
        let item = self.items[index as usize]
            .take()
            .expect("a queued event is in the slab");
        self.free.push(index);
        item
    }
}

/// One simulation run.
pub struct Sim<'t, P: Process> {
    config: SimConfig,
    info: AlgorithmInfo,
    now: Nanos,
    events: u64,
    max_events: Option<u64>,
    queue: EventQueue,
    slab: Slab<EventData<P::Msg>>,
    /// Timer slots per process: the algorithm's kinds plus the workload's.
    slots_per_node: usize,
    /// Timer slots in all (`slots_per_node` per process): queue handles below it are timers,
    /// the rest slab entries offset by it.
    timer_slots: u32,
    processes: Vec<P>,
    nodes: Vec<NodeState<P::Msg, P::Timer, P::Durable>>,
    outbox: Vec<Effect<P::Msg, P::Timer, P::Durable>>,
    /// The draws of fsync latencies (drawn only when a disk takes time).
    disk_rng: SimRng,
    /// The draws of handler processing times (drawn only when they are configured).
    processing_rng: SimRng,
    network: Network,
    /// `Stream` connections, if the transport is `Stream`.
    connections: crate::connections::Connections<Payload<P::Msg>>,
    resource: Resource,
    resource_id: NodeId,
    checker: Checker,
    leadership: Leadership,
    lease_windows: crate::lease_windows::LeaseWindows,
    failovers: FailoverTracker,
    /// The steady state's books.
    steady: steady::SteadyBooks,
    /// Per failover opened, in order: the place of its fault in `fault_records`.
    failover_faults: Vec<usize>,
    liveness: LivenessMonitor,
    /// What each service process (in order after the members) would answer a client asking
    /// who leads; the liveness check reads their agreement ([`Sim::service_answered`]).
    service_answers: Vec<Option<NodeId>>,
    /// Whether each service process led its service after its last handler
    /// ([`Process::leads_service`]); a change is traced (`service_leads`, `service_follows`).
    service_leads: Vec<bool>,
    message_stats: Vec<MessageStats>,
    drops: DropStats,
    writes: WriteStats,
    counters: Counters,
    /// The election under way: its start, campaign count and messages by type.
    open_election: Option<OpenElection>,
    elections: Vec<crate::report::ElectionRecord>,
    /// Per member: it campaigned while it could not win, and has not been seen able to
    /// since (its traffic is counted in `futile_sent_by_kind`, not in an election).
    futile: Vec<bool>,
    /// How many members are flagged in `futile`.
    futile_nodes: usize,
    /// Messages of futile campaigns, by type.
    futile_sent_by_kind: Vec<u64>,
    /// First candidate of each term, and whether a second one was already counted.
    candidates: BTreeMap<u64, (NodeId, bool)>,
    /// The stream of the fault being applied (each fault has its own).
    fault_rng: SimRng,
    /// Faults as they were applied, in firing order.
    fault_records: Vec<FaultRecord>,
    /// For each fault (by its index in the scenario), its place in `fault_records`; faults
    /// need not be listed in time order.
    record_of_fault: Vec<usize>,
    /// Resolved nodes of each fault, for its heal.
    fault_nodes: Vec<Vec<NodeId>>,
    saved_drift_ppm: Vec<Vec<(NodeId, i64)>>,
    faults_fired: usize,
    /// Heals, resumes and stalls still to come: the run is quiet when this reaches zero.
    pending_heals: usize,
    quiet: bool,
    /// The liveness windows while faults are active (`windows.rs`).
    windows: windows::Windows,
    /// The faults that wait for an event (`triggers.rs`).
    triggers: triggers::Triggers,
    /// Whether handlers collect their user observations (`Ctx::observe`): for the run's
    /// properties, or for a trigger that waits for one.
    collect_observed: bool,
    trace: Option<&'t mut dyn TraceSink>,
    /// Told the true time every [`PROGRESS_EVERY_EVENTS`] events (a progress bar).
    progress: Option<&'t mut dyn FnMut(Nanos)>,
    /// Picks at the run's choice points ([`crate::choice`]); none: `prescribed` does.
    chooser: Option<&'t mut dyn crate::Chooser>,
    /// The ways the scenario prescribes (`config.chosen`), when no chooser is given.
    prescribed: crate::choice::Prescribed,
    /// Whether the run has choice points to ask about: a chooser, or prescribed ways.
    choosing: bool,
    /// Violations found since the last trace event (kept only when tracing).
    flagged: Vec<Invariant>,
    /// Set when the run must end before its next event: the events queued passed the
    /// guard's limit, or a process asked for an effect the engine refuses.
    halt: Option<Halt>,
    /// The run's own properties ([`Sim::with_properties`]); empty: no observation is built.
    properties: Vec<Installed>,
    /// What the process in its handler reported through `Ctx::observe` (collected only when
    /// the run has properties).
    observed: Vec<UserObservation>,
    /// How many of the processes' own observations were made, by name, in the order first
    /// made (a property over a name never observed held without being tested).
    observation_counts: Vec<(&'static str, u64)>,
    /// Messages held back on `Stream` connections (behind a lost or cut one): they count
    /// toward the in-flight limit with the queued events.
    held_in_streams: u64,
    /// The bytes the run holds, counted as they grow, and their limits.
    books: memory::Books,
    /// Asked every [`STOP_CHECK_EVERY_EVENTS`] events whether to stop now.
    stop: Option<&'t (dyn Fn() -> Option<crate::limits::Stop> + Sync)>,
    /// The names of the processes' message types and timer kinds.
    names: Names,
    /// Whether the processes have been started (a stepped run starts once).
    started: bool,
    /// Trace events handed to the sink so far.
    trace_lines: u64,
    /// Per process: its last campaign, for its role in a snapshot.
    campaigns: Vec<inspect::Campaign>,
}

impl<'t, P: Process> Sim<'t, P> {
    /// A run of `processes` (members first, then services) under `config`.
    pub fn new(config: SimConfig, info: AlgorithmInfo, processes: Vec<P>) -> Self {
        Self::with_names(config, info, processes, Names::of::<P>())
    }

    /// [`Sim::new`] for processes whose message and timer names are known only at run time
    /// (a node in another language declares them when it starts): `names` replaces
    /// [`Message::KINDS`] and [`TimerKind::NAMES`](crate::TimerKind::NAMES)
    /// everywhere the engine counts, traces or checks them.
    pub fn with_names(
        config: SimConfig,
        info: AlgorithmInfo,
        processes: Vec<P>,
        names: Names,
    ) -> Self {
        assert!(config.members >= 1, "a run needs at least one member");
        assert!(
            processes.len() >= config.members,
            "every member needs a process"
        );
        let count = processes.len();
        let slots_per_node = names.timers.len() + 1;
        let nodes = Self::initial_nodes(&config, count, slots_per_node);
        let mut message_stats: Vec<MessageStats> = names
            .messages
            .iter()
            .map(|k| MessageStats {
                kind: k.to_string(),
                ..MessageStats::default()
            })
            .collect();
        message_stats.push(MessageStats {
            kind: WRITE_KIND.to_string(),
            ..MessageStats::default()
        });
        let bound = config
            .liveness_bound_ns
            .unwrap_or(info.failure_detection_ns.saturating_mul(10));
        let triggers = triggers::Triggers::new(&config.faults, names);
        Self {
            network: Network::new(
                config.network.clone(),
                SimRng::stream(config.seed, StreamId::NETWORK),
            ),
            connections: Default::default(),
            resource: Resource::new(config.fencing),
            resource_id: NodeId::from(count),
            checker: Checker::new(count),
            leadership: Leadership::new(count),
            lease_windows: crate::lease_windows::LeaseWindows::new(count),
            failovers: FailoverTracker::new(config.members, info.signals),
            failover_faults: Vec::new(),
            steady: steady::SteadyBooks::default(),
            liveness: LivenessMonitor::new(config.members, bound),
            service_answers: vec![None; count.saturating_sub(config.members)],
            service_leads: vec![false; count.saturating_sub(config.members)],
            fault_rng: SimRng::stream(config.seed, StreamId::FAULTS),
            fault_records: Vec::with_capacity(config.faults.len()),
            record_of_fault: vec![usize::MAX; config.faults.len()],
            fault_nodes: vec![Vec::new(); config.faults.len()],
            saved_drift_ppm: vec![Vec::new(); config.faults.len()],
            queue: EventQueue::new(count * slots_per_node),
            slab: Slab {
                items: Vec::with_capacity(1024),
                free: Vec::new(),
            },
            slots_per_node,
            timer_slots: u32::try_from(count * slots_per_node).expect("timer slots fit a u32"),
            processes,
            nodes,
            outbox: Vec::with_capacity(64),
            disk_rng: SimRng::stream(config.seed, StreamId::DISK),
            processing_rng: SimRng::stream(config.seed, StreamId::PROCESSING),
            now: 0,
            events: 0,
            max_events: None,
            message_stats,
            drops: DropStats::default(),
            writes: WriteStats::default(),
            counters: Counters::default(),
            candidates: BTreeMap::new(),
            open_election: None,
            elections: Vec::new(),
            futile: vec![false; config.members],
            futile_nodes: 0,
            futile_sent_by_kind: vec![0; names.messages.len() + 1],
            faults_fired: 0,
            pending_heals: 0,
            quiet: false,
            windows: windows::Windows::default(),
            collect_observed: triggers.observes,
            triggers,
            trace: None,
            progress: None,
            chooser: None,
            prescribed: crate::choice::Prescribed::new(config.chosen.clone()),
            choosing: !config.chosen.is_empty(),
            flagged: Vec::new(),
            halt: None,
            properties: Vec::new(),
            observed: Vec::new(),
            observation_counts: Vec::new(),
            held_in_streams: 0,
            books: memory::Books::new(count, &config.limits),
            stop: None,
            names,
            started: false,
            trace_lines: 0,
            campaigns: vec![inspect::Campaign::None; count],
            config,
            info,
        }
    }

    fn initial_nodes(
        config: &SimConfig,
        count: usize,
        slots: usize,
    ) -> Vec<NodeState<P::Msg, P::Timer, P::Durable>> {
        let mut clock_rng = SimRng::stream(config.seed, StreamId::CLOCKS);
        let max_drift = i64::from(config.clocks.max_drift_ppm);
        // Validation keeps the bound far below `i64::MAX`; saturate if handed more.
        let max_offset = i64::try_from(config.clocks.max_offset_ns).unwrap_or(i64::MAX);
        (0..count)
            .map(|index| {
                // Always draw both, so an explicit override does not shift other nodes' draws.
                let mut drift = clock_rng.between_signed(-max_drift, max_drift);
                let mut offset = clock_rng.between_signed(-max_offset, max_offset);
                let mut timers = TimerClock::Monotonic;
                if let Some(fixed) = config
                    .clocks
                    .per_node
                    .iter()
                    .find(|c| c.node as usize == index)
                {
                    drift = fixed.drift_ppm;
                    offset = fixed.offset_ns;
                    timers = fixed.timers;
                }
                if let Some(fixed) = config.clocks.service.filter(|_| index >= config.members) {
                    drift = fixed.drift_ppm;
                    offset = fixed.offset_ns;
                    timers = fixed.timers;
                }
                NodeState {
                    status: Status::Up,
                    clocks: NodeClocks::new(offset, drift, timers),
                    suspended: false,
                    rng: SimRng::stream(config.seed, StreamId::node(index)),
                    local_deadline: vec![0; slots],
                    wall_slot: vec![false; slots],
                    timer_generation: vec![0; slots],
                    held: VecDeque::new(),
                    stall_next: None,
                    deferred: Vec::new(),
                    pause_generation: 0,
                    disk: crate::disk::Disk::default(),
                    persisted: None,
                    persisted_term: 0,
                    writing: VecDeque::new(),
                    outgoing: VecDeque::new(),
                    output_free_ns: 0,
                    output_generation: 0,
                }
            })
            .collect()
    }

    /// Hands every event (typed) and measurement milestone to `sink`.
    pub fn with_trace(mut self, sink: &'t mut dyn TraceSink) -> Self {
        self.trace = Some(sink);
        self
    }

    /// Lets `chooser` pick the way the run goes at each choice point ([`crate::choice`]):
    /// each randomized timeout when the scenario makes timeouts a choice, and the order of
    /// events due at one instant for one process. Without it each takes its default.
    pub fn with_chooser(mut self, chooser: &'t mut dyn crate::Chooser) -> Self {
        self.chooser = Some(chooser);
        self.choosing = true;
        self
    }

    /// Calls `progress` with the true time every [`PROGRESS_EVERY_EVENTS`] events.
    pub fn with_progress(mut self, progress: &'t mut dyn FnMut(Nanos)) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Asks `stop` every [`STOP_CHECK_EVERY_EVENTS`] events (a thousand times a second or so)
    /// whether to end the run now; if it says why, [`Sim::run`] ends with
    /// [`Limit::Interrupted`] (a hunt stopping on a signal does not wait for a long seed) or
    /// [`Limit::WallTime`] (the caller's clock says the run took too long: the engine reads
    /// no clock itself).
    pub fn with_stop(mut self, stop: &'t (dyn Fn() -> Option<crate::limits::Stop> + Sync)) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Checks `properties` at every observation of the run, besides the built-in invariants
    /// (fresh states, made now; see [`crate::property`]). A property that breaks is
    /// recorded as a [`crate::Violation`] of [`Invariant::Property`] under its name.
    ///
    /// ```
    /// use splitbrain_sim::property::{Observation, Properties};
    /// use splitbrain_sim::storm::{storm_config, StormNode};
    /// use splitbrain_sim::{Invariant, Sim};
    ///
    /// // Deliberately wrong of the storm: "nobody's term is ever reported".
    /// let properties = Properties::new().always("no_term_report", |_: &mut (), _now, o: &Observation| {
    ///     match o {
    ///         Observation::Term { node, .. } => Err(format!("{node} reported a term").into()),
    ///         _ => Ok(()),
    ///     }
    /// });
    /// let (config, info) = storm_config(1, 3);
    /// let report = Sim::new(config, info, vec![StormNode::default(); 3])
    ///     .with_event_limit(100)
    ///     .with_properties(&properties)
    ///     .run()
    ///     .unwrap();
    /// let violation = &report.violations[0];
    /// assert_eq!(violation.invariant, Invariant::Property("no_term_report"));
    /// assert_eq!(violation.detail, "n0 reported a term (at 0s)");
    /// assert_eq!(violation.count, 3 + 100); // every handler: 3 starts, then 100 deliveries
    /// ```
    pub fn with_properties(mut self, properties: &Properties) -> Self {
        self.properties = Installed::all(properties);
        self.collect_observed = self.observing() || self.triggers.observes;
        self
    }

    /// Stops after `limit` events even if simulated time remains (benchmarks, bounded runs).
    pub fn with_event_limit(mut self, limit: u64) -> Self {
        self.max_events = Some(limit);
        self
    }

    /// The processes, members first (for tests and benchmarks that inspect final state).
    pub fn processes(&self) -> &[P] {
        &self.processes
    }

    /// The current true time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Runs to the configured duration (or event limit) and reports; or, when the run
    /// outgrows its [`crate::limits::RunLimits`] (`config.limits`), ends it there and says
    /// what grew ([`RunError::Limit`]); or, when a process asks for an effect the engine
    /// cannot carry out, ends it after that handler and says which, where and why
    /// ([`RunError::Refused`]).
    pub fn run(&mut self) -> Result<RunReport, RunError> {
        self.run_events(None)?;
        if self.max_events.is_none() {
            self.now = self.config.duration_ns;
        }
        Ok(self.finish())
    }

    /// Handles events to the end of the run or, if given, until `stop`. With a stop, the
    /// next event is looked at before it is taken, so that nothing is taken that the stop
    /// leaves for later.
    fn run_events(&mut self, stop: Option<StopAt>) -> Result<Reached, RunError> {
        if !self.started {
            self.started = true;
            self.start();
        }
        let stop_lines = match stop {
            Some(StopAt::TraceEvent(n)) => n,
            _ => u64::MAX,
        };
        let stop_ns = match stop {
            Some(StopAt::Time(at_ns)) => at_ns,
            _ => self.config.duration_ns,
        };
        let event_limit = self.max_events.unwrap_or(u64::MAX);
        let guard_events = self.config.limits.max_events;
        // One comparison per event for both event limits; which one it was is sorted out once.
        let stop_at = event_limit.min(guard_events);
        loop {
            if self.halt.is_some() {
                return Err(self.halted());
            }
            if stop.is_some() {
                if self.trace_lines >= stop_lines {
                    return Ok(Reached::Stop);
                }
                let next_ns = self.queue.peek_time();
                if next_ns.is_none_or(|t| t > stop_ns.min(self.config.duration_ns)) {
                    let time_stop = matches!(stop, Some(StopAt::Time(_)));
                    let inside = stop_ns <= self.config.duration_ns;
                    return Ok(if time_stop && inside {
                        Reached::Stop
                    } else {
                        Reached::End
                    });
                }
            }
            // An event past the end, or past a limit, is taken and dropped: nothing runs
            // after the loop.
            let Some(entry) = self.queue.take_min() else {
                break;
            };
            let entry = if self.choosing {
                self.choose_order(entry)
            } else {
                entry
            };
            if entry.time > self.config.duration_ns {
                break;
            }
            if entry.time >= self.windows.next_check_ns {
                self.before_event_at(entry.time);
            }
            // There is one more event to handle: a run of exactly the limit stays within it.
            if self.events >= stop_at {
                if self.events >= event_limit {
                    return Ok(Reached::End);
                }
                return Err(self.exceeded(Limit::Events, self.events).into());
            }
            self.now = entry.time;
            self.events += 1;
            if let Some(next) = self.queue.upcoming(PREFETCH_AHEAD) {
                // Half a million messages in flight: fetch a coming payload while this runs.
                self.slab.prefetch(next.handle - self.queue_slots() as u32);
            }
            self.dispatch(entry.handle);
            if self.triggers.pending {
                self.settle_triggers();
            }
            self.update_steady();
            if self.events.is_multiple_of(STOP_CHECK_EVERY_EVENTS) {
                self.check_stop()?;
                if self.events.is_multiple_of(PROGRESS_EVERY_EVENTS)
                    && let Some(progress) = self.progress.as_mut()
                {
                    progress(self.now);
                }
            }
        }
        Ok(Reached::End)
    }

    /// Why the run ends before its next event ([`Sim::halt`] is set).
    #[cold]
    fn halted(&mut self) -> RunError {
        match self.halt.take().expect("the run is halted") {
            Halt::InFlight(queued) => self.exceeded(Limit::InFlight, queued).into(),
            Halt::Refused(refused) => RunError::Refused(*refused),
            Halt::Bytes {
                limit,
                reached,
                growth,
            } => self.exceeded_bytes(limit, reached, growth).into(),
        }
    }

    /// Ends the run if the caller's stop callback says why it should.
    fn check_stop(&self) -> Result<(), LimitExceeded> {
        match self.stop.as_ref().and_then(|stop| stop()) {
            None => Ok(()),
            Some(crate::limits::Stop::Interrupted) => {
                Err(self.exceeded(Limit::Interrupted, self.events))
            }
            Some(crate::limits::Stop::WallTime { elapsed_ms }) => {
                Err(self.exceeded(Limit::WallTime, elapsed_ms))
            }
        }
    }

    /// What the guard reports when `limit` was passed with `reached`: where the run was, the
    /// message type sent most, and the link holding most queued messages.
    fn exceeded(&self, limit: Limit, reached: u64) -> LimitExceeded {
        let allowed = match limit {
            Limit::Events => self.config.limits.max_events,
            Limit::InFlight => self.config.limits.max_in_flight,
            Limit::Memory => self.config.limits.max_memory_bytes,
            Limit::NodeInFlight => self.config.limits.max_node_in_flight_bytes,
            Limit::WallTime => self.config.limits.max_wall_ms,
            Limit::Interrupted => 0,
        };
        LimitExceeded {
            limit,
            allowed,
            reached,
            at_ns: self.now,
            duration_ns: self.config.duration_ns,
            events: self.events,
            node: None,
            where_: self.where_growth(limit),
        }
    }

    /// The message type sent most, and the link with the most messages queued, in words
    /// (not for the byte limits: [`Sim::exceeded_bytes`] names the process with most bytes in
    /// flight instead, and counting per link of a large cluster takes memory too).
    fn where_growth(&self, limit: Limit) -> String {
        let mut words = Vec::new();
        if let Some(most) = self.message_stats.iter().max_by_key(|m| m.sent)
            && most.sent > 0
        {
            words.push(format!(
                "most sent: {} {} messages",
                crate::limits::group_thousands(most.sent),
                most.kind
            ));
        }
        let mut per_link: BTreeMap<(NodeId, NodeId), u64> = BTreeMap::new();
        let queued = self.slab.items.iter().flatten();
        let bytes = matches!(limit, Limit::Memory | Limit::NodeInFlight);
        for item in queued.filter(|_| !bytes) {
            if let EventData::Deliver { from, to, .. } = item {
                *per_link.entry((*from, *to)).or_default() += 1;
            }
        }
        if let Some(((from, to), count)) = per_link.into_iter().max_by_key(|(_, c)| *c) {
            let plural = if count == 1 { "" } else { "s" };
            words.push(format!(
                "most queued: {} message{plural} from {from} to {to}",
                crate::limits::group_thousands(count)
            ));
        }
        if self.held_in_streams > 0 {
            words.push(format!(
                "held back on Stream connections: {} messages",
                crate::limits::group_thousands(self.held_in_streams)
            ));
        }
        if words.is_empty() {
            words.push("no messages sent".to_string());
        }
        words.join("; ")
    }

    fn start(&mut self) {
        for (index, fault) in self.config.faults.iter().enumerate() {
            // A triggered fault is scheduled when its trigger happens.
            if fault.after.is_some() {
                continue;
            }
            let handle = self.slab.insert(EventData::Fault(index));
            self.queue.push(fault.at_ns, self.slab_handle(handle));
        }
        for index in 0..self.processes.len() {
            // A start that outgrew a limit or was refused ends the run before the next one:
            // a thousand members that each send a thousand messages at once need not all
            // have started to be stopped.
            if self.halt.is_some() {
                return;
            }
            let node = NodeId::from(index);
            self.invoke(node, nodes::Input::Start);
            self.arm_workload(node);
        }
        // Faults triggered by a start fire once every process has started.
        if self.triggers.pending {
            self.settle_triggers();
        }
        self.check_quiet();
    }

    fn slab_handle(&self, index: u32) -> u32 {
        (self.queue_slots() as u32) + index
    }

    fn queue_slots(&self) -> usize {
        self.timer_slots as usize
    }

    fn push_event(&mut self, at_ns: Nanos, data: EventData<P::Msg>) {
        let index = self.slab.insert(data);
        // The slab grows only when no entry is free: its length is then what is queued.
        if index as usize + 1 == self.slab.items.len() {
            let queued = (self.slab.items.len() as u64).saturating_add(self.held_in_streams);
            if queued > self.config.limits.max_in_flight {
                self.overflowed(queued);
            }
        }
        let handle = self.slab_handle(index);
        self.queue.push(at_ns, handle);
    }

    /// The events and messages queued (`queued`) passed the guard's limit: the run ends
    /// before its next event, unless a refused effect or a byte limit ends it already (the
    /// run's first problem stays the reason it ends).
    #[cold]
    fn overflowed(&mut self, queued: u64) {
        if matches!(self.halt, None | Some(Halt::InFlight(_))) {
            self.halt = Some(Halt::InFlight(queued));
        }
    }

    fn dispatch(&mut self, handle: u32) {
        let slots = self.queue_slots() as u32;
        if handle < slots {
            let node = NodeId::from(handle as usize / self.slots_per_node);
            self.on_timer_slot(node, handle as usize % self.slots_per_node);
            return;
        }
        match self.slab.take(handle - slots) {
            EventData::Deliver {
                from,
                to,
                sent_ns,
                payload,
                via,
            } => self.on_deliver(from, to, sent_ns, payload, via),
            EventData::Retransmit { from, to, epoch } => self.on_retransmit(from, to, epoch),
            EventData::StreamCutTimeout {
                a,
                b,
                epoch,
                since_ns,
            } => self.on_stream_cut_timeout(a, b, epoch, since_ns),
            EventData::Disconnected { node, peer } => self.on_disconnected(node, peer),
            EventData::Fault(index) => {
                self.apply_fault(index);
                self.watch_during_faults();
            }
            EventData::HealFault(index) => {
                self.heal_fault(index);
                self.watch_during_faults();
            }
            EventData::Resume { node, generation } => {
                self.on_resume(node, generation);
                self.watch_during_faults();
            }
            EventData::LivenessDeadline => self.on_liveness_deadline(),
            EventData::ClockCaughtUp { node } => self.on_clock_caught_up(node),
            EventData::Release { node, generation } => self.on_release(node, generation),
        }
    }

    /// Starts the liveness watch once every fault has fired and healed.
    fn check_quiet(&mut self) {
        if self.quiet || self.faults_fired < self.config.faults.len() || self.pending_heals > 0 {
            return;
        }
        self.quiet = true;
        match self.service_down() {
            Some(reason) => self.liveness.rule_out(self.now, reason),
            None => {
                let group = self.live_connected_group();
                let (members, min_group) = (self.config.members, self.info.min_group_for_progress);
                self.liveness.start(self.now, group, members, min_group);
            }
        }
        let deadline = self.liveness.deadline_ns();
        if deadline <= self.config.duration_ns {
            self.push_event(deadline, EventData::LivenessDeadline);
        }
        self.trace_global(EventKind::Quiet);
    }

    /// Whether members elect through a coordination service (the processes after them).
    fn has_service(&self) -> bool {
        self.processes.len() > self.config.members
    }

    /// The service's processes that can serve now: a single-process service if it is up; of
    /// a clustered one, the largest group of live members that talk to each other both ways,
    /// if it is a majority of them (etcd and ZooKeeper serve nothing without a quorum); where
    /// clients talk to gateways in front of the cluster (API servers before etcd), the live
    /// gateways that talk both ways with that group. Empty without a service or when it
    /// cannot serve.
    pub(super) fn serving_service(&self) -> Vec<NodeId> {
        let service = (self.config.members..self.processes.len()).map(NodeId::from);
        let (gateways, quorum): (Vec<NodeId>, Vec<NodeId>) =
            service.partition(|n| self.processes[n.index()].is_service_gateway());
        let live = |nodes: &[NodeId]| -> Vec<NodeId> {
            let up = |n: &&NodeId| self.nodes[n.index()].status != Status::Crashed;
            nodes.iter().filter(up).copied().collect()
        };
        let group = self.largest_connected(&live(&quorum));
        if group.len() <= quorum.len() / 2 {
            return Vec::new();
        }
        if gateways.is_empty() {
            return group;
        }
        live(&gateways)
            .into_iter()
            .filter(|g| group.iter().any(|q| self.network.connected(*g, *q)))
            .collect()
    }

    /// Why no member can be elected after the last fault, if the service is the reason.
    fn service_down(&self) -> Option<String> {
        if !self.has_service() || !self.serving_service().is_empty() {
            return None;
        }
        let first = NodeId::from(self.config.members);
        Some(if self.processes.len() - self.config.members == 1 {
            format!(
                "the coordination service ({first}) is down after the last fault; \
                 no member can be elected without it"
            )
        } else if self.has_gateway() {
            format!(
                "the coordination service (from {first}) has no quorum of live, connected \
                 members, or no gateway reaches one, after the last fault; no member can be \
                 elected without it"
            )
        } else {
            format!(
                "the coordination service (from {first}) has no quorum of live, connected \
                 members after the last fault; no member can be elected without it"
            )
        })
    }

    /// Whether the service has gateways in front of its quorum
    /// ([`Process::is_service_gateway`]).
    fn has_gateway(&self) -> bool {
        self.processes[self.config.members..]
            .iter()
            .any(|p| p.is_service_gateway())
    }

    /// Whether `member` can talk both ways with a process of the serving service.
    pub(super) fn reaches_service(&self, member: NodeId) -> bool {
        self.serving_service()
            .into_iter()
            .any(|s| self.network.connected(member, s))
    }

    /// The group that must agree on a leader: the live members that can all talk to each
    /// other both ways or, where members elect through a coordination service and never talk
    /// to each other, the live members that can talk both ways with the service.
    fn live_connected_group(&self) -> Vec<NodeId> {
        let live: Vec<NodeId> = (0..self.config.members)
            .map(NodeId::from)
            .filter(|n| self.nodes[n.index()].status != Status::Crashed)
            .collect();
        if !self.network.is_partitioned() {
            return live;
        }
        if self.has_service() {
            return live
                .into_iter()
                .filter(|member| self.reaches_service(*member))
                .collect();
        }
        self.largest_connected(&live)
    }

    /// The largest group of `live` that talk to each other both ways (the first found among
    /// equals), in id order.
    fn largest_connected(&self, live: &[NodeId]) -> Vec<NodeId> {
        if !self.network.is_partitioned() {
            return live.to_vec();
        }
        // Greedy components over mutual connectivity (O(n^2): after the last fault, and after
        // each fault of a run with liveness windows).
        let mut assigned = vec![false; live.len()];
        let mut best: Vec<NodeId> = Vec::new();
        for start in 0..live.len() {
            if assigned[start] {
                continue;
            }
            let mut component = vec![live[start]];
            assigned[start] = true;
            let mut frontier = 0;
            while frontier < component.len() {
                let at = component[frontier];
                for (j, other) in live.iter().enumerate() {
                    if !assigned[j] && self.network.connected(at, *other) {
                        assigned[j] = true;
                        component.push(*other);
                    }
                }
                frontier += 1;
            }
            if component.len() > best.len() {
                best = component;
            }
        }
        best.sort();
        best
    }

    fn on_liveness_deadline(&mut self) {
        if let Some((group, detail)) = self.liveness.on_deadline() {
            self.checker.record_liveness(self.now, group, detail);
            self.flag(Some(Invariant::Liveness));
        }
        self.trace_global(EventKind::LivenessDeadline);
    }

    /// The message counts with what is still under way at the end counted `in_flight`:
    /// queued deliveries (an event past the end is still in the slab), messages held back
    /// on `Stream` connections, and messages held for paused receivers.
    fn message_stats_at_end(&self) -> Vec<MessageStats> {
        let mut stats = self.message_stats.clone();
        for item in self.slab.items.iter().flatten() {
            if let EventData::Deliver { payload, .. } = item {
                stats[Self::kind_of(self.names, payload)].in_flight += 1;
            }
        }
        for (_, connection) in self.connections.iter() {
            for waiting in connection.waiting() {
                stats[Self::kind_of(self.names, &waiting.payload)].in_flight += 1;
            }
        }
        for state in &self.nodes {
            for held in &state.held {
                if let Held::Message { msg, .. } = held {
                    stats[msg.kind()].in_flight += 1;
                }
            }
        }
        stats
    }

    /// The messages of futile campaigns, by type (types with none left out).
    fn futile_campaign_messages(&self) -> Vec<crate::report::KindCount> {
        self.named_counts(&self.futile_sent_by_kind)
    }

    /// Counts indexed by message kind, named by type (types with none left out).
    pub(super) fn named_counts(&self, by_kind: &[u64]) -> Vec<crate::report::KindCount> {
        by_kind
            .iter()
            .zip(&self.message_stats)
            .filter(|(count, _)| **count > 0)
            .map(|(count, stats)| crate::report::KindCount {
                kind: stats.kind.clone(),
                count: *count,
            })
            .collect()
    }

    /// Measures each failover's episode (leaderless time, claims) once the leadership spans
    /// are closed. Stable means one leader held for twice the algorithm's failure-detection
    /// time with the fault over (docs/reports.md, "Leaderless time").
    fn measure_failover_episodes(&mut self, end_ns: Nanos) {
        let over_ns: Vec<Nanos> = self
            .failover_faults
            .iter()
            .map(|&place| {
                let record = &self.fault_records[place];
                record.healed_at_ns.unwrap_or(record.at_ns)
            })
            .collect();
        let inputs = crate::failover::EpisodeInputs {
            spans: &self.leadership.spans,
            claims: &self.leadership.claims,
            over_ns: &over_ns,
            window_ns: self.info.failure_detection_ns.saturating_mul(2),
            end_ns,
        };
        crate::failover::measure_episodes(&mut self.failovers.done, &inputs);
    }

    fn finish(&mut self) -> RunReport {
        if !self.triggers.watches_none() {
            self.record_unfired_triggers();
        }
        self.close_window_due_by(self.now);
        let end = self.now;
        let closed_before = self.failovers.done.len();
        self.failovers
            .close(crate::report::FailoverOutcome::Unresolved);
        self.tell_closed_failovers(closed_before);
        let final_leader = self.leadership.leader();
        let steady_state = self.steady_state_at_end();
        self.leadership.finish(end);
        self.lease_windows.finish(end);
        self.measure_failover_episodes(end);
        let (spans, faults) = (&self.leadership.spans, &self.fault_records);
        let downtime = crate::downtime::downtime(spans, faults, self.config.members, end);
        let acting_overlap_ns = crate::downtime::acting_overlap_ns(spans, faults, end);
        if let Some(trace) = self.trace.as_mut() {
            // A failed trace write is reported by the caller through `TraceSink::finish`.
            let _ = trace.finish();
        }
        RunReport {
            algorithm: self.info.name.clone(),
            seed: self.config.seed,
            members: self.config.members,
            signals: self.info.signals,
            end_ns: end,
            events: self.events,
            leaders: std::mem::take(&mut self.leadership.claims),
            leadership_spans: std::mem::take(&mut self.leadership.spans),
            lease_spans: std::mem::take(&mut self.lease_windows.spans),
            failovers: std::mem::take(&mut self.failovers.done),
            elections: std::mem::take(&mut self.elections),
            futile_campaign_messages: self.futile_campaign_messages(),
            messages: self.message_stats_at_end(),
            drops: self.drops.clone(),
            steady_state,
            writes: WriteStats {
                accepted: self.resource.accepted,
                rejected_stale: self.resource.rejected_stale,
                accepted_stale: self.resource.accepted_stale,
                ..self.writes.clone()
            },
            counters: Counters {
                leader_changes: self.leadership.leader_changes,
                reacquisitions: self.leadership.reacquisitions,
                ..self.counters.clone()
            },
            overlap_ns: self.leadership.overlap_ns,
            acting_overlap_ns,
            downtime,
            faults: self.fault_records.clone(),
            violations: self.checker.violations().to_vec(),
            liveness: self.liveness.verdict(end),
            stall: self.liveness.stall().cloned(),
            final_leader,
            observations: self
                .observation_counts
                .iter()
                .map(|&(name, count)| crate::report::KindCount {
                    kind: name.to_string(),
                    count,
                })
                .collect(),
            measures: self
                .properties
                .iter()
                .flat_map(|installed| installed.measures(end))
                .collect(),
            curves: self
                .properties
                .iter()
                .flat_map(|installed| installed.curves(end))
                .collect(),
        }
    }
}

mod steady;

#[cfg(test)]
mod disk_tests;
#[cfg(test)]
mod symmetry_tests;
#[cfg(test)]
mod tests;
