//! The scenario file as written: serde structs that mirror the RON text one to one, with
//! every optional field an `Option` so that validation knows what the author wrote.
//!
//! Struct names (`Scenario`, `Network`, ...) are the names RON accepts before `(`; enum names
//! are never written in RON, so they are the words error messages use (`unknown fault kind`).

use ron::error::{Position, Span, SpannedError};
use ron::value::RawValue;
use serde::Deserialize;
use splitbrain_algorithms::AlgorithmSettings;
use splitbrain_sim::duration::{
    parse_duration, parse_signed_duration, DurationError, DurationText, SignedDurationText,
    DURATION_EXPECTED, SIGNED_DURATION_EXPECTED,
};
use splitbrain_sim::nemesis::NemesisTargets;
use splitbrain_sim::TimerClock;

/// A whole scenario file. Read in two steps: first with each algorithm's settings as their
/// text (`ScenarioFile<&RawValue>`), then with them read by the registered algorithm the text
/// names ([`ScenarioFile::read_algorithms`]); the registry is open, so no type knows every
/// algorithm's settings in advance.
#[derive(Debug, Deserialize)]
#[serde(rename = "Scenario", deny_unknown_fields)]
pub(crate) struct ScenarioFile<A = AlgorithmSettings> {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub duration: Option<DurationText>,
    #[serde(default)]
    pub nodes: Option<u64>,
    pub algorithm: A,
    #[serde(default = "Vec::new")]
    pub designs: Vec<RawDesign<A>>,
    #[serde(default)]
    pub network: Option<RawNetwork>,
    #[serde(default)]
    pub clocks: Option<RawClocks>,
    #[serde(default)]
    pub disk: Option<RawDisk>,
    #[serde(default)]
    pub processing: Option<RawLatency>,
    #[serde(default)]
    pub workload: Option<RawWorkload>,
    #[serde(default)]
    pub resource: Option<RawResource>,
    #[serde(default)]
    pub liveness: Option<RawLiveness>,
    #[serde(default)]
    pub faults: Vec<RawFault>,
    #[serde(default)]
    pub nemesis: Option<RawNemesis>,
    #[serde(default)]
    pub objective: Option<RawObjective>,
    #[serde(default)]
    pub expect: Option<RawExpect>,
    #[serde(default)]
    pub expect_rate: Option<f64>,
    #[serde(default)]
    pub choices: Option<RawChoices>,
}

/// A named design for `compare`: an algorithm with its own settings, and optionally the
/// transport it runs on (else the scenario's `network.transport` if written, else its
/// algorithm's default).
#[derive(Debug, Deserialize)]
#[serde(rename = "Design", deny_unknown_fields)]
pub(crate) struct RawDesign<A = AlgorithmSettings> {
    pub name: String,
    pub algorithm: A,
    #[serde(default)]
    pub transport: Option<RawTransport>,
}

impl ScenarioFile<&RawValue> {
    /// Reads every algorithm's settings (the scenario's and each design's) from `source`, the
    /// text this file was read from, with the scenario's `options`; an error is located in
    /// `source`.
    pub fn read_algorithms(
        self,
        source: &str,
        options: &ron::Options,
    ) -> Result<ScenarioFile, SpannedError> {
        let read = |raw: &RawValue| read_algorithm(raw, source, options);
        let algorithm = read(self.algorithm)?;
        let designs = self
            .designs
            .into_iter()
            .map(|d| {
                Ok(RawDesign {
                    name: d.name,
                    algorithm: read(d.algorithm)?,
                    transport: d.transport,
                })
            })
            .collect::<Result<_, SpannedError>>()?;
        Ok(ScenarioFile {
            name: self.name,
            seed: self.seed,
            duration: self.duration,
            nodes: self.nodes,
            algorithm,
            designs,
            network: self.network,
            clocks: self.clocks,
            disk: self.disk,
            processing: self.processing,
            workload: self.workload,
            resource: self.resource,
            liveness: self.liveness,
            faults: self.faults,
            nemesis: self.nemesis,
            objective: self.objective,
            expect: self.expect,
            expect_rate: self.expect_rate,
            choices: self.choices,
        })
    }
}

/// Reads one algorithm's settings; an error's span is moved from `raw`'s text to `source`'s.
fn read_algorithm(
    raw: &RawValue,
    source: &str,
    options: &ron::Options,
) -> Result<AlgorithmSettings, SpannedError> {
    // Read from the value to the end of the file, so that an error at the value's end is
    // told as it is in the whole file (`Raft)`: "expected `(`" at the `)`).
    let offset = (raw.get_ron().as_ptr() as usize).saturating_sub(source.as_ptr() as usize);
    let text = source.get(offset..).unwrap_or_default();
    AlgorithmSettings::from_ron(text, options).map_err(|mut error| {
        let before = source.get(..offset).unwrap_or_default();
        let start = Position {
            line: 1 + before.matches('\n').count(),
            col: 1 + before.chars().rev().take_while(|&c| c != '\n').count(),
        };
        let shift = |p: Position| Position {
            line: p.line + start.line - 1,
            col: if p.line == 1 {
                p.col + start.col - 1
            } else {
                p.col
            },
        };
        error.span = Span {
            start: shift(error.span.start),
            end: shift(error.span.end),
        };
        error
    })
}

/// Random faults per seed (used by `hunt`, and by `run` with the seed it is given).
#[derive(Debug, Deserialize)]
#[serde(rename = "nemesis", deny_unknown_fields)]
pub(crate) struct RawNemesis {
    #[serde(default)]
    pub kinds: Option<Vec<RawNemesisKind>>,
    #[serde(default)]
    pub targets: Option<NemesisTargets>,
    #[serde(default)]
    pub mean_interval: Option<DurationText>,
    #[serde(default)]
    pub fault_duration: Option<(DurationText, DurationText)>,
    #[serde(default)]
    pub start: Option<DurationText>,
    #[serde(default)]
    pub quiet: Option<DurationText>,
    #[serde(default)]
    pub max_clock_jump: Option<DurationText>,
    #[serde(default)]
    pub max_drift_ppm: Option<u32>,
    #[serde(default)]
    pub max_loss: Option<f64>,
    #[serde(default)]
    pub max_fsync: Option<DurationText>,
    #[serde(default)]
    pub swarm: Option<bool>,
    #[serde(default)]
    pub swarm_ranges: Option<RawSwarmRanges>,
}

/// Where swarm mode draws each seed's rates from; each range absent is derived from the
/// nemesis' own setting (`splitbrain_sim::nemesis::SwarmRanges::around`).
#[derive(Debug, Deserialize)]
#[serde(rename = "swarm_ranges", deny_unknown_fields)]
pub(crate) struct RawSwarmRanges {
    #[serde(default)]
    pub mean_interval: Option<(DurationText, DurationText)>,
    #[serde(default)]
    pub longest_fault: Option<(DurationText, DurationText)>,
    #[serde(default)]
    pub max_loss: Option<(f64, f64)>,
    #[serde(default)]
    pub max_clock_jump: Option<(DurationText, DurationText)>,
    #[serde(default)]
    pub max_drift_ppm: Option<(u32, u32)>,
    #[serde(default)]
    pub max_fsync: Option<(DurationText, DurationText)>,
    #[serde(default)]
    pub latency: Option<(DurationText, DurationText)>,
}

/// A kind of fault the nemesis may inject.
#[derive(Copy, Clone, Debug, Deserialize)]
#[serde(rename = "nemesis kind")]
pub(crate) enum RawNemesisKind {
    Crash,
    Pause,
    Stall,
    Isolate,
    MajorityMinority,
    OneWay,
    CutLink,
    Bridge,
    LossBurst,
    Duplicate,
    ClockJump,
    ClockDrift,
    Resign,
    Suspend,
    SlowDisk,
    CrashForGood,
    ConfChange,
}

/// A recovery-time objective.
#[derive(Debug, Deserialize)]
#[serde(rename = "objective", deny_unknown_fields)]
pub(crate) struct RawObjective {
    #[serde(default)]
    pub failover_p99: Option<DurationText>,
    #[serde(default)]
    pub startup_delay: Option<DurationText>,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "Network", deny_unknown_fields)]
pub(crate) struct RawNetwork {
    #[serde(default)]
    pub latency: Option<RawLatency>,
    #[serde(default)]
    pub loss: Option<f64>,
    #[serde(default)]
    pub duplicate: Option<f64>,
    #[serde(default)]
    pub links: Vec<RawLink>,
    #[serde(default)]
    pub transport: Option<RawTransport>,
}

/// How members (and a service) exchange messages; absent fields take the defaults.
#[derive(Debug, Deserialize)]
#[serde(rename = "transport", deny_unknown_fields)]
pub(crate) enum RawTransport {
    Datagram,
    Stream {
        #[serde(default)]
        min_rto: Option<DurationText>,
        #[serde(default)]
        max_rto: Option<DurationText>,
        #[serde(default)]
        timeout: Option<DurationText>,
    },
}

/// An override for one directed link; absent fields take the network's values.
#[derive(Debug, Deserialize)]
#[serde(rename = "Link", deny_unknown_fields)]
pub(crate) struct RawLink {
    pub from: u64,
    pub to: u64,
    #[serde(default)]
    pub latency: Option<RawLatency>,
    #[serde(default)]
    pub loss: Option<f64>,
    #[serde(default)]
    pub duplicate: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "latency distribution", deny_unknown_fields)]
pub(crate) enum RawLatency {
    Constant(DurationText),
    Uniform(DurationText, DurationText),
    Exponential {
        mean: DurationText,
        #[serde(default)]
        min: Option<DurationText>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(rename = "Clocks", deny_unknown_fields)]
pub(crate) struct RawClocks {
    #[serde(default)]
    pub drift_ppm: Option<i64>,
    #[serde(default)]
    pub offset: Option<DurationText>,
    #[serde(default)]
    pub nodes: Vec<RawNodeClock>,
    #[serde(default)]
    pub service: Option<RawServiceClock>,
}

/// The coordination service's explicit clock; absent fields are zero.
#[derive(Debug, Deserialize)]
#[serde(rename = "ServiceClock", deny_unknown_fields)]
pub(crate) struct RawServiceClock {
    #[serde(default)]
    pub drift_ppm: Option<i64>,
    #[serde(default)]
    pub offset: Option<SignedDurationText>,
    #[serde(default)]
    pub timers: Option<TimerClock>,
}

/// One member's explicit clock; absent fields are zero.
#[derive(Debug, Deserialize)]
#[serde(rename = "NodeClock", deny_unknown_fields)]
pub(crate) struct RawNodeClock {
    pub node: u64,
    #[serde(default)]
    pub drift_ppm: Option<i64>,
    #[serde(default)]
    pub offset: Option<SignedDurationText>,
    #[serde(default)]
    pub timers: Option<TimerClock>,
}

/// The processes' disks: fsync latency by default, per member and for the service.
#[derive(Debug, Deserialize)]
#[serde(rename = "Disk", deny_unknown_fields)]
pub(crate) struct RawDisk {
    #[serde(default)]
    pub fsync: Option<RawLatency>,
    #[serde(default)]
    pub nodes: Vec<RawNodeDisk>,
    #[serde(default)]
    pub service: Option<RawLatency>,
    #[serde(default)]
    pub batch: Option<bool>,
}

/// One member's disk.
#[derive(Debug, Deserialize)]
#[serde(rename = "NodeDisk", deny_unknown_fields)]
pub(crate) struct RawNodeDisk {
    pub node: u64,
    pub fsync: RawLatency,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "Choices", deny_unknown_fields)]
pub(crate) struct RawChoices {
    #[serde(default)]
    pub timeouts: Option<u32>,
    #[serde(default)]
    pub take: Vec<splitbrain_sim::choice::Chosen>,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "Workload", deny_unknown_fields)]
pub(crate) struct RawWorkload {
    #[serde(default)]
    pub write_every: Option<DurationText>,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "Resource", deny_unknown_fields)]
pub(crate) struct RawResource {
    #[serde(default)]
    pub fencing: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "Liveness", deny_unknown_fields)]
pub(crate) struct RawLiveness {
    #[serde(default)]
    pub bound: Option<DurationText>,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "Fault", deny_unknown_fields)]
pub(crate) struct RawFault {
    pub at: DurationRange,
    #[serde(rename = "do")]
    pub action: RawAction,
    #[serde(default)]
    pub heal_after: Option<DurationRange>,
    #[serde(default)]
    pub after: Option<RawTrigger>,
}

/// What a triggered fault waits for: `(event: Sent("RequestVoteResp"), by: Node(1), nth: 2,
/// delay: "20ms")`; every field but `event` has a default.
#[derive(Debug, Deserialize)]
#[serde(rename = "Trigger", deny_unknown_fields)]
pub(crate) struct RawTrigger {
    pub event: RawTriggerEvent,
    #[serde(default)]
    pub by: Option<RawActor>,
    #[serde(default)]
    pub nth: Option<u64>,
    #[serde(default)]
    pub delay: Option<DurationRange>,
}

/// The event a trigger waits for.
#[derive(Debug, Deserialize)]
#[serde(rename = "trigger event", deny_unknown_fields)]
pub(crate) enum RawTriggerEvent {
    Sent(String),
    Signal(RawSignal),
    BecameLeader,
    SteppedDown,
    Observed(String),
}

/// A signal's kind, as the engine's `Signal` variants are named.
#[derive(Copy, Clone, Debug, Deserialize)]
#[serde(rename = "signal")]
pub(crate) enum RawSignal {
    ElectionStarted,
    PreVoteStarted,
    CampaignEligible,
    LeaderHeard,
    ElectionRoundFailed,
    LeaderSuspected,
    DisruptionPrevented,
    LeaseExpired,
    LeaseHeld,
    LeaseEnded,
}

/// Whom a trigger watches.
#[derive(Copy, Clone, Debug, Deserialize)]
#[serde(rename = "trigger actor")]
pub(crate) enum RawActor {
    Any,
    Node(u64),
    Leader,
    Follower,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "fault kind", deny_unknown_fields)]
pub(crate) enum RawAction {
    Crash(RawTarget),
    Restart(RawTarget),
    Pause(RawTarget, DurationRange),
    Suspend(RawTarget, DurationRange),
    Stall(RawTarget, DurationRange),
    Partition(RawShape),
    Heal,
    ClockJump(RawTarget, SignedDurationRange),
    ClockDrift(RawTarget, i64),
    Resign(RawTarget),
    ConfChange(RawTarget, RawMemberChange),
    Loss(f64),
    Duplicate(f64),
    SlowDisk(RawTarget, DurationRange),
}

/// A membership change as written: `Remove(2)`, the member by index.
#[derive(Copy, Clone, Debug, Deserialize)]
#[serde(rename = "membership change")]
pub(crate) enum RawMemberChange {
    Add(u64),
    Remove(u64),
    AddLearner(u64),
    Promote(u64),
}

/// The prefix of the serde custom message that carries a bad duration range's text to the
/// error converter (which re-parses it with [`parse_duration_range`]).
pub(crate) const DURATION_RANGE_MARKER: &str = "\u{0}splitbrain-duration-range\u{0}";
/// The prefix of the serde custom message that carries a bad signed duration range's text.
pub(crate) const SIGNED_DURATION_RANGE_MARKER: &str = "\u{0}splitbrain-signed-duration-range\u{0}";

/// A fault's duration, or a range of two drawn per seed: `"3s"`, or `"3s..8s"` (both ends
/// included). The ends in nanoseconds, equal for one duration; their order is checked by
/// validation, which can say where the range is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct DurationRange {
    pub low: u64,
    pub high: u64,
}

/// A clock step, or a range of two drawn per seed: `"-3s"`, or `"-3s..-1s"`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct SignedDurationRange {
    pub low: i64,
    pub high: i64,
}

/// Reads `"3s"` or `"3s..8s"`: the two ends (equal for one duration), or why either end is
/// not a duration.
pub(crate) fn parse_duration_range(text: &str) -> Result<(u64, u64), DurationError> {
    match text.split_once("..") {
        None => parse_duration(text).map(|d| (d, d)),
        Some((low, high)) => Ok((parse_duration(low)?, parse_duration(high)?)),
    }
}

/// Reads `"-3s"` or `"-3s..-1s"`, like [`parse_duration_range`].
pub(crate) fn parse_signed_duration_range(text: &str) -> Result<(i64, i64), DurationError> {
    match text.split_once("..") {
        None => parse_signed_duration(text).map(|d| (d, d)),
        Some((low, high)) => Ok((parse_signed_duration(low)?, parse_signed_duration(high)?)),
    }
}

impl<'de> Deserialize<'de> for DurationRange {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Range;
        impl serde::de::Visitor<'_> for Range {
            type Value = DurationRange;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                // As for one duration: the same message and hint (a range is rarer).
                f.write_str(DURATION_EXPECTED)
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<DurationRange, E> {
                // Parsed here so that ron reports the error at the string's position.
                parse_duration_range(text)
                    .map(|(low, high)| DurationRange { low, high })
                    .map_err(|_| E::custom(format!("{DURATION_RANGE_MARKER}{text}")))
            }
        }
        // `any`, not `str`: a number then reaches the visitor and gets its message.
        deserializer.deserialize_any(Range)
    }
}

impl<'de> Deserialize<'de> for SignedDurationRange {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Range;
        impl serde::de::Visitor<'_> for Range {
            type Value = SignedDurationRange;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(SIGNED_DURATION_EXPECTED)
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SignedDurationRange, E> {
                parse_signed_duration_range(text)
                    .map(|(low, high)| SignedDurationRange { low, high })
                    .map_err(|_| E::custom(format!("{SIGNED_DURATION_RANGE_MARKER}{text}")))
            }
        }
        deserializer.deserialize_any(Range)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename = "target")]
pub(crate) enum RawTarget {
    Leader,
    Follower,
    Node(u64),
    Random,
    Minority,
    Service,
    ServiceMember(u64),
    ServiceLeader,
    ServiceFollower,
    ServiceFollowers,
    ServiceQuorum,
    ServiceOfLeader,
    AllCrashed,
    All,
}

#[derive(Debug, Deserialize)]
#[serde(rename = "partition shape", deny_unknown_fields)]
pub(crate) enum RawShape {
    Groups(Vec<Vec<u64>>),
    Isolate(RawTarget),
    MajorityMinority(RawTarget),
    OneWay { from: RawTarget, to: RawTarget },
    CutLink(RawTarget, RawTarget),
    Bridge(RawTarget),
}

#[derive(Debug, Deserialize)]
#[serde(rename = "expectation")]
pub(crate) enum RawExpect {
    Safe,
    Violates(Vec<RawInvariant>),
}

/// Every invariant name parses, so that naming `liveness` gets its own error and hint; any
/// other name is kept for validation, which knows the algorithm's own properties.
#[derive(Clone, Debug)]
pub(crate) enum RawInvariant {
    ElectionSafety,
    FencingSafety,
    TermMonotonic,
    Liveness,
    /// Not a built-in invariant: one of the algorithm's own properties, or a mistake.
    Other(String),
}

impl<'de> Deserialize<'de> for RawInvariant {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = RawInvariant;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an invariant name")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<RawInvariant, E> {
                Ok(match name {
                    "election_safety" => RawInvariant::ElectionSafety,
                    "fencing_safety" => RawInvariant::FencingSafety,
                    "term_monotonic" => RawInvariant::TermMonotonic,
                    "liveness" => RawInvariant::Liveness,
                    other => RawInvariant::Other(other.to_string()),
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}
