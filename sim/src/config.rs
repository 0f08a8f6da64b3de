//! What the engine needs to run: the validated scenario, lowered to engine terms.

use crate::clock::TimerClock;
use crate::fault::FaultSpec;
use crate::network_config::NetworkConfig;
use crate::time::{LocalNanos, Nanos};
use serde::Serialize;

/// Clock settings: random drift and offset bounds, and explicit per-node values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClockConfig {
    /// Each process draws a drift uniformly from `[-max_drift_ppm, +max_drift_ppm]`.
    pub max_drift_ppm: u32,
    /// Each process draws an initial offset uniformly from `[-max_offset_ns, +max_offset_ns]`.
    pub max_offset_ns: Nanos,
    /// Explicit settings that replace the random draws for one member.
    pub per_node: Vec<NodeClock>,
    /// An explicit clock for the coordination service's process (id `members`), if any.
    pub service: Option<FixedClock>,
}

/// An explicit clock: drift and initial offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FixedClock {
    /// How much faster than true time the clock runs, in parts per million (negative: slower).
    pub drift_ppm: i64,
    /// The clock's reading at true time zero.
    pub offset_ns: LocalNanos,
    /// Which clock its timers and elapsed-time checks read.
    pub timers: TimerClock,
}

/// One member's explicit clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeClock {
    /// The member's index.
    pub node: u32,
    /// How much faster than true time the clock runs, in parts per million (negative: slower).
    pub drift_ppm: i64,
    /// The clock's reading at true time zero.
    pub offset_ns: LocalNanos,
    /// Which clock its timers and elapsed-time checks read.
    pub timers: TimerClock,
}

/// Facts about the algorithm that the engine's checks need, without knowing the algorithm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AlgorithmInfo {
    /// The algorithm's name, for output (`raft`, `bully`, ...).
    pub name: String,
    /// How long the algorithm takes to notice a dead leader at worst (liveness bound unit).
    pub failure_detection_ns: Nanos,
    /// The smallest group of live, connected members that can elect a leader.
    pub min_group_for_progress: usize,
    /// Which optional signals the algorithm emits.
    pub signals: SignalSupport,
    /// Whether a campaign for a term someone already claimed cannot win (a quorum or a
    /// single authority decides each term: Raft, the coordination services): such a late
    /// campaign then opens no election record. False for Bully and Ring, where two nodes may
    /// claim one epoch on two sides of a partition.
    pub late_campaigns_lose: bool,
    /// The names of the service's processes (ids `members..`, in order) as every output
    /// gives them (`etcd-0`, `apiserver-1`); fault descriptions use them. Empty: `nN`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub service_names: Vec<String>,
}

/// The optional [`Signal`](crate::Signal)s an algorithm emits. A measure built on a signal
/// the algorithm does not emit is `None` (`n/a`), never 0.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SignalSupport {
    /// It follows every `ElectionStarted` whose candidate could win with
    /// [`Signal::CampaignEligible`](crate::Signal::CampaignEligible).
    pub campaign_eligibility: bool,
    /// Its followers say when they first hear a new leader
    /// ([`Signal::LeaderHeard`](crate::Signal::LeaderHeard)).
    pub leader_heard: bool,
}

impl SignalSupport {
    /// No optional signal.
    pub const NONE: Self = Self {
        campaign_eligibility: false,
        leader_heard: false,
    };
}

/// The whole configuration of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SimConfig {
    /// The root seed every random stream of the run derives from.
    pub seed: u64,
    /// How much true time the run simulates.
    pub duration_ns: Nanos,
    /// Election members are the ids `0..members`; further processes are services.
    pub members: usize,
    /// Latency, loss and duplication, by default and per link.
    pub network: crate::network_config::NetworkConfig,
    /// The processes' clocks: random drift and offset bounds, and explicit clocks.
    pub clocks: ClockConfig,
    /// The processes' disks: how long a durable write (fsync) takes.
    pub disk: crate::disk::DiskConfig,
    /// How long each handler call takes before what it sends leaves (processing jitter),
    /// for every process; `None`: no time at all.
    pub processing: Option<crate::network_config::Latency>,
    /// How often the leader writes to the resource, by its own clock; 0 disables writes.
    pub write_every_ns: Nanos,
    /// Whether the resource rejects tokens lower than the highest it accepted.
    pub fencing: bool,
    /// A new leader's start-up time (loading state, warming caches) before it serves: its
    /// workload writes nothing for this long after its claim, by true time.
    pub startup_delay_ns: Nanos,
    /// The scheduled faults.
    pub faults: Vec<FaultSpec>,
    /// Liveness: a leader must appear within this long after the last fault heals.
    /// `None` means ten times the algorithm's failure-detection time.
    pub liveness_bound_ns: Option<Nanos>,
    /// The runtime guard: events, queued messages and memory the run may use before it ends
    /// with [`crate::limits::LimitExceeded`]. Not part of a scenario's results.
    #[serde(skip)]
    pub limits: crate::limits::RunLimits,
    /// Randomized timeouts ([`Ctx::draw_timeout`](crate::Ctx::draw_timeout)) take one of
    /// this many evenly spaced values between their bounds instead of any value: a choice
    /// point a systematic search enumerates ([`crate::choice`]). 0: any value (the default).
    #[serde(default)]
    pub timeout_choices: u32,
    /// Choice points that take another way than their default (a systematic search's
    /// counterexample, replayed); empty: every point takes its default.
    #[serde(default)]
    pub chosen: Vec<crate::choice::Chosen>,
}

impl SimConfig {
    /// A fault-free configuration with defaults, for tests and benchmarks.
    pub fn quiet(seed: u64, members: usize, duration_ns: Nanos) -> Self {
        Self {
            seed,
            duration_ns,
            members,
            network: NetworkConfig::default(),
            clocks: ClockConfig::default(),
            disk: crate::disk::DiskConfig::default(),
            processing: None,
            write_every_ns: 0,
            fencing: true,
            startup_delay_ns: 0,
            faults: Vec::new(),
            liveness_bound_ns: None,
            limits: crate::limits::RunLimits::default(),
            timeout_choices: 0,
            chosen: Vec::new(),
        }
    }
}
