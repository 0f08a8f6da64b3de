//! Scenario errors: where (file, line, column), what (a structured [`ErrorKind`] that renders
//! as a lowercase fragment), and what to do about it (an optional hint on its own line).

use super::locate;
use super::raw::{
    parse_duration_range, parse_signed_duration_range, DURATION_RANGE_MARKER,
    SIGNED_DURATION_RANGE_MARKER,
};
use splitbrain_algorithms::{algorithms, AlgorithmEntry, AlgorithmError};
use splitbrain_sim::duration::{
    format_duration_ron, parse_duration, parse_signed_duration, DurationError, DURATION_EXPECTED,
    DURATION_HINT, DURATION_MARKER, SIGNED_DURATION_EXPECTED, SIGNED_DURATION_HINT,
    SIGNED_DURATION_MARKER,
};
use splitbrain_sim::Invariant;
use std::fmt;
use thiserror::Error;

/// The largest cluster a scenario may ask for.
pub const MAX_NODES: u64 = 10_000;
/// The largest cluster of an algorithm whose members send to every other member: its
/// messages in flight grow with the square of the cluster (a 4,000-node Raft peaked at
/// 792 MB; 10,000 nodes ran out of 4 GB within a simulated second).
pub const MAX_BROADCAST_NODES: u64 = 4_000;
/// A clock drift must stay above this (a clock at -100% would stop or run backwards).
pub const MIN_DRIFT_PPM: i64 = -1_000_000;
/// A clock drift may be at most this (a clock 1001 times too fast); larger values would
/// overflow the engine's clock arithmetic over a long run.
pub const MAX_DRIFT_PPM: i64 = 1_000_000_000;
/// The longest duration, and the largest clock offset or jump either way, that a scenario may
/// hold: 100 years (`"876600h"`). Any two such values add up without overflowing the engine's
/// true time (a `u64`, 584 years) or a local clock (an `i64`, 292 years either way).
pub const MAX_DURATION_NS: u64 = 3_155_760_000_000_000_000;
/// The most faults a nemesis may be expected to inject in one run.
pub const MAX_NEMESIS_FAULTS: u64 = 100_000;
/// The most events a run may be expected to handle (see
/// [`splitbrain_algorithms::expected_events`]): about ten minutes of simulation.
pub const MAX_EXPECTED_EVENTS: u128 = 1_000_000_000;

/// A scenario that could not be read, parsed or validated.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The file the scenario came from, as given to [`parse`](super::parse) or [`load`](super::load).
    pub origin: String,
    /// 1-based `(line, column)` of the offending text, when known. Columns count characters.
    pub location: Option<(usize, usize)>,
    /// What is wrong (boxed: it is large, and errors travel in `Result`s).
    pub kind: Box<ErrorKind>,
}

impl ScenarioError {
    /// An error at a known place (or none) in `origin`.
    pub fn new(
        origin: impl Into<String>,
        location: Option<(usize, usize)>,
        kind: ErrorKind,
    ) -> Self {
        Self {
            origin: origin.into(),
            location,
            kind: Box::new(kind),
        }
    }

    /// The lowercase message fragment, without location or hint.
    pub fn message(&self) -> String {
        self.kind.to_string()
    }

    /// What to do about it, if there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        self.kind.hint()
    }
}

impl fmt::Display for ScenarioError {
    /// `file:line:col: message`, then `  hint: ...` on its own line when there is a hint.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some((line, column)) => write!(f, "{}:{line}:{column}: {}", self.origin, self.kind)?,
            None => write!(f, "{}: {}", self.origin, self.kind)?,
        }
        if let Some(hint) = self.kind.hint() {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Who sends a message: the algorithm, or a design that runs it.
fn sender(algorithm: &str, design: &Option<String>) -> String {
    match design {
        None => algorithm.to_string(),
        Some(design) => format!("design `{}` ({algorithm})", echo(design)),
    }
}

fn dur(ns: &u64) -> String {
    format_duration_ron(*ns)
}

fn signed_dur(ns: &i64) -> String {
    splitbrain_sim::duration::format_signed_duration_ron(*ns)
}

/// What is wrong with a scenario.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum ErrorKind {
    // Reading and syntax.
    /// Reads "cannot read the scenario: {reason}".
    #[error("cannot read the scenario: {reason}")]
    Read {
        /// Why, as the operating system says it.
        reason: String,
    },
    /// Reads "the scenario file is empty".
    #[error("the scenario file is empty")]
    EmptyFile,
    /// Reads "the scenario is {kind}, not a regular file".
    #[error("the scenario is {kind}, not a regular file")]
    NotARegularFile {
        /// What it is instead.
        kind: NonRegularFile,
    },
    /// Reads "the scenario file is {size_bytes} bytes, over the limit of {max} bytes".
    #[error(
        "the scenario file is {size_bytes} bytes, over the limit of {max} bytes",
        max = super::file::MAX_SCENARIO_BYTES
    )]
    FileTooLarge {
        /// The file's size.
        size_bytes: u64,
    },
    /// Reads "the scenario is not valid UTF-8: invalid bytes at byte offset {byte_offset}".
    #[error("the scenario is not valid UTF-8: invalid bytes at byte offset {byte_offset}")]
    InvalidUtf8 {
        /// Where the invalid bytes start.
        byte_offset: usize,
    },
    /// Reads "unclosed block comment".
    #[error("unclosed block comment")]
    UnclosedBlockComment,
    /// Reads "`{}%` is not a number".
    #[error("`{}%` is not a number", echo(.number))]
    PercentSign {
        /// The number before the `%`.
        number: String,
    },
    /// Reads "unexpected control character U+{code:04X}".
    #[error("unexpected control character U+{code:04X}")]
    ControlCharacter {
        /// The character, as a code point.
        code: u32,
    },
    /// Reads "a carriage return (U+000D) without a line feed after it".
    #[error("a carriage return (U+000D) without a line feed after it")]
    LoneCarriageReturn,
    /// Reads "unexpected character U+{code:04X} {name}".
    #[error("unexpected character U+{code:04X} {name}")]
    UnusualCharacter {
        /// The character, as a code point.
        code: u32,
        /// The character's Unicode name.
        name: &'static str,
        /// The kind of character.
        class: super::text::CharClass,
    },
    /// A syntax or type error, in the parser's words.
    #[error("{message}")]
    Syntax {
        /// The parser's message.
        message: String,
    },
    /// Reads "unknown {context} `{}`".
    #[error("unknown {context} `{}`", echo(.found))]
    UnknownVariant {
        /// Where in the scenario it is (`the network`, `a fault`).
        context: String,
        /// What the file says.
        found: String,
        /// What may be written there.
        expected: Vec<String>,
    },
    /// Reads "unknown field `{}` in {context}".
    #[error("unknown field `{}` in {context}", echo(.found))]
    UnknownField {
        /// Where in the scenario it is (`the network`, `a fault`).
        context: String,
        /// What the file says.
        found: String,
        /// What may be written there.
        expected: Vec<String>,
    },
    /// Reads "missing field `{field}` in {context}".
    #[error("missing field `{field}` in {context}")]
    MissingField {
        /// Where in the scenario it is (`the network`, `a fault`).
        context: String,
        /// The field's name.
        field: String,
    },
    /// Reads "field `{field}` appears twice in {context}".
    #[error("field `{field}` appears twice in {context}")]
    DuplicateField {
        /// Where in the scenario it is (`the network`, `a fault`).
        context: String,
        /// The field's name.
        field: String,
    },
    /// Reads "expected `{expected}(...)` or `(...)`, found `{}(...)`".
    #[error("expected `{expected}(...)` or `(...)`, found `{}(...)`", echo(.found))]
    WrongStructName {
        /// What may be written there.
        expected: String,
        /// What the file says.
        found: String,
    },
    /// Reads "expected {expected}, found {}".
    #[error("expected {expected}, found {}", echo(.found))]
    WrongType {
        /// What may be written there.
        expected: String,
        /// What the file says.
        found: String,
    },
    /// Reads "{what} takes {expected}, found {found}".
    #[error("{what} takes {expected}, found {found}")]
    WrongLength {
        /// The value, in words.
        what: String,
        /// What may be written there.
        expected: String,
        /// What the file says.
        found: usize,
    },
    /// Reads "invalid duration "{}": {error}".
    #[error("invalid duration \"{}\": {error}", echo(.text))]
    BadDuration {
        /// The text as written.
        text: String,
        /// Why it is wrong.
        error: DurationError,
        /// Whether a signed duration (a clock step) was expected.
        signed: bool,
    },

    // Validation: the run.
    /// Reads "the run's duration must be longer than zero".
    #[error("the run's duration must be longer than zero")]
    ZeroDuration,
    /// Reads "nodes must be between 1 and {max}, not {nodes}".
    #[error("nodes must be between 1 and {max}, not {nodes}", max = MAX_NODES)]
    NodesOutOfRange {
        /// The number of nodes.
        nodes: u64,
    },
    /// Reads "{nodes} nodes is more than {algorithm} can run here (at most {MAX_BROADCAST_NODES})".
    #[error("{nodes} nodes is more than {algorithm} can run here (at most {MAX_BROADCAST_NODES})")]
    TooManyNodesForBroadcast {
        /// The number of nodes.
        nodes: u64,
        /// The algorithm's name.
        algorithm: &'static str,
    },

    // Validation: the algorithm's own rules.
    /// Reads "{0}".
    #[error("{0}")]
    Setting(AlgorithmError),

    // Validation: designs.
    /// Reads "design name "{}" is not a word of a-z, 0-9, `-` and `_`".
    #[error("design name \"{}\" is not a word of a-z, 0-9, `-` and `_`", echo(.name))]
    BadDesignName {
        /// The name as written.
        name: String,
    },
    /// Reads "design "{}" is named twice".
    #[error("design \"{}\" is named twice", echo(.name))]
    DuplicateDesign {
        /// The name as written.
        name: String,
    },
    /// Reads "design name "{}" is {bytes} characters, more than {max}".
    #[error("design name \"{}\" is {bytes} characters, more than {max}", echo(.name))]
    DesignNameTooLong {
        /// The name as written.
        name: String,
        /// Its length in bytes.
        bytes: usize,
        /// The most allowed.
        max: usize,
    },

    // Validation: nemesis and objective.
    /// Reads "the swarm range of {setting} is backwards: {low} is above {high}".
    #[error("the swarm range of {setting} is backwards: {low} is above {high}")]
    SwarmRangeBackwards {
        /// The setting, as written in `swarm_ranges`.
        setting: &'static str,
        /// The low end, as written.
        low: String,
        /// The high end, as written.
        high: String,
    },
    /// Reads "`swarm_ranges` is given but `swarm` is false: no seed would draw from it".
    #[error("`swarm_ranges` is given but `swarm` is false: no seed would draw from it")]
    SwarmRangesWithoutSwarm,
    /// Reads "the nemesis' mean interval must be longer than zero".
    #[error("the nemesis' mean interval must be longer than zero")]
    ZeroMeanInterval,
    /// Reads "the fault duration range is backwards: {} is above {}".
    #[error("the fault duration range is backwards: {} is above {}", dur(.low_ns), dur(.high_ns))]
    FaultDurationRangeBackwards {
        /// The low end.
        low_ns: u64,
        /// The high end.
        high_ns: u64,
    },
    /// Reads "the nemesis has no time to act: it starts at {} and must be quiet for the last {} of a {} run".
    #[error(
        "the nemesis has no time to act: it starts at {} and must be quiet for the last {} of a {} run",
        dur(.start_ns),
        dur(.quiet_ns),
        dur(.duration_ns)
    )]
    NemesisLeavesNoTime {
        /// When the nemesis starts.
        start_ns: u64,
        /// How long it stays quiet at the end.
        quiet_ns: u64,
        /// The run's duration.
        duration_ns: u64,
    },
    /// Reads "the nemesis has no fault kinds: it would inject nothing".
    #[error("the nemesis has no fault kinds: it would inject nothing")]
    NemesisWithoutKinds,
    /// Reads "the shortest nemesis fault ({}) does not fit in the {} the nemesis may act (from `start` to the quiet tail): it would inject nothing".
    #[error(
        "the shortest nemesis fault ({}) does not fit in the {} the nemesis may act (from `start` to the quiet tail): it would inject nothing",
        dur(.shortest_ns),
        dur(.window_ns)
    )]
    NemesisFaultDoesNotFit {
        /// The shortest, in nanoseconds.
        shortest_ns: u64,
        /// The window.
        window_ns: u64,
    },
    /// Reads "the nemesis waits {} on average between faults, longer than the {} it may act (from `start` to the quiet tail): most runs would get no fault".
    #[error(
        "the nemesis waits {} on average between faults, longer than the {} it may act (from `start` to the quiet tail): most runs would get no fault",
        dur(.mean_interval_ns),
        dur(.window_ns)
    )]
    NemesisTooRare {
        /// The nemesis' mean interval.
        mean_interval_ns: u64,
        /// The window.
        window_ns: u64,
    },
    /// Reads "nemesis kind `{kind}` would inject nothing: `{setting}` is zero".
    #[error("nemesis kind `{kind}` would inject nothing: `{setting}` is zero")]
    NemesisKindWithoutSize {
        /// What it is instead.
        kind: &'static str,
        /// The setting's name.
        setting: &'static str,
    },
    /// Reads "nemesis kind `{kind}` would inject nothing: with one node and no service, no message is ever sent".
    #[error(
        "nemesis kind `{kind}` would inject nothing: with one node and no service, no message is ever sent"
    )]
    NemesisKindWithoutMessages {
        /// What it is instead.
        kind: &'static str,
    },
    /// Reads "nemesis kind `Resign` would inject nothing: {algorithm} has no planned handover".
    #[error("nemesis kind `Resign` would inject nothing: {algorithm} has no planned handover")]
    NemesisResignWithoutHandover {
        /// The algorithm's name.
        algorithm: &'static str,
    },
    /// Reads "nemesis kind `ConfChange` would inject nothing: {algorithm} has a fixed membership".
    #[error("nemesis kind `ConfChange` would inject nothing: {algorithm} has a fixed membership")]
    NemesisConfChangeWithoutMembership {
        /// The algorithm's name.
        algorithm: &'static str,
    },
    /// Reads "the failover objective must be longer than zero".
    #[error("the failover objective must be longer than zero")]
    ZeroFailoverObjective,
    /// Reads "target `{target}` names no process: {algorithm} has no coordination service".
    #[error("target `{target}` names no process: {algorithm} has no coordination service")]
    NoServiceProcess {
        /// The target as written (`Service`, `ServiceLeader`, ...).
        target: &'static str,
        /// The algorithm's name.
        algorithm: String,
    },
    /// Reads "{what} names the coordination service, but design "{}" runs {algorithm}, which has none".
    #[error(
        "{what} names the coordination service, but design \"{}\" runs {algorithm}, which has none",
        echo(.design)
    )]
    NoServiceInDesign {
        /// The value, in words.
        what: &'static str,
        /// The design's name, if the problem is in one.
        design: String,
        /// The algorithm's name.
        algorithm: &'static str,
    },
    /// Reads "`clocks.service` sets no clock: {algorithm} has no coordination service".
    #[error("`clocks.service` sets no clock: {algorithm} has no coordination service")]
    NoServiceClock {
        /// The algorithm's name.
        algorithm: String,
    },

    // Validation: network and clocks.
    /// Reads "{what} must be between 0 and 1, not {value}".
    #[error("{what} must be between 0 and 1, not {value}")]
    ProbabilityOutOfRange {
        /// The value, in words.
        what: String,
        /// The value.
        value: f64,
    },
    /// Reads "the latency range is backwards: {} is above {}".
    #[error("the latency range is backwards: {} is above {}", dur(.low_ns), dur(.high_ns))]
    LatencyRangeBackwards {
        /// The low end.
        low_ns: u64,
        /// The high end.
        high_ns: u64,
    },
    /// Reads "the retransmission timeouts are backwards: min_rto {} is above max_rto {}".
    #[error("the retransmission timeouts are backwards: min_rto {} is above max_rto {}", dur(.min_ns), dur(.max_ns))]
    RtoRangeBackwards {
        /// The min, in nanoseconds.
        min_ns: u64,
        /// The max, in nanoseconds.
        max_ns: u64,
    },
    /// Reads "{what} must be longer than zero".
    #[error("{what} must be longer than zero")]
    ZeroStreamTiming {
        /// The value, in words.
        what: &'static str,
    },
    /// Reads "a link from node {node} to itself".
    #[error("a link from node {node} to itself")]
    LinkToItself {
        /// The node number.
        node: u64,
    },
    /// Reads "the link from node {from} to node {to} is overridden twice".
    #[error("the link from node {from} to node {to} is overridden twice")]
    RepeatedLinkOverride {
        /// The from.
        from: u64,
        /// The to.
        to: u64,
    },
    /// Reads "clock drift {drift_ppm} ppm is out of range".
    #[error("clock drift {drift_ppm} ppm is out of range")]
    DriftOutOfRange {
        /// The drift, in parts per million.
        drift_ppm: i64,
    },
    /// Reads "the random drift bound must be between 0 and 999999 ppm, not {drift_ppm}".
    #[error("the random drift bound must be between 0 and 999999 ppm, not {drift_ppm}")]
    DriftBoundOutOfRange {
        /// The drift, in parts per million.
        drift_ppm: i64,
    },
    /// Reads "node {node} has two clock overrides".
    #[error("node {node} has two clock overrides")]
    RepeatedClockOverride {
        /// The node number.
        node: u64,
    },
    /// Reads "node {node} has two disk overrides".
    #[error("node {node} has two disk overrides")]
    RepeatedDiskOverride {
        /// The node number.
        node: u64,
    },
    /// Reads "`disk.service` sets no disk: {algorithm} has no coordination service".
    #[error("`disk.service` sets no disk: {algorithm} has no coordination service")]
    NoServiceDisk {
        /// The algorithm's name.
        algorithm: String,
    },

    // Validation: faults.
    /// Reads "node {node} does not exist in a cluster of {nodes}".
    #[error("node {node} does not exist in a cluster of {nodes}")]
    NodeOutOfRange {
        /// The node number.
        node: u64,
        /// The number of nodes.
        nodes: u64,
    },
    /// Reads "member {member} does not exist in a cluster of {members}".
    #[error("member {member} does not exist in a cluster of {members}")]
    MemberOutOfRange {
        /// The member as written.
        member: u64,
        /// The number of members.
        members: u64,
    },
    /// Reads "service member {member} does not exist: {algorithm}'s service runs as {members} process(es)".
    #[error("service member {member} does not exist: {algorithm}'s service runs as {members} process(es)")]
    ServiceMemberOutOfRange {
        /// The member number as written.
        member: u64,
        /// How many processes the service runs as.
        members: usize,
        /// The algorithm's name.
        algorithm: String,
    },
    /// Reads "the fault at {} is not before the end of the run ({})".
    #[error("the fault at {} is not before the end of the run ({})", dur(.at_ns), dur(.duration_ns))]
    FaultAfterEnd {
        /// The at, in nanoseconds.
        at_ns: u64,
        /// The run's duration.
        duration_ns: u64,
    },
    /// Reads "the range "{first}..{second}" ends before it starts".
    #[error("the range \"{first}..{second}\" ends before it starts")]
    FaultRangeBackwards {
        /// The end written first (the larger).
        first: String,
        /// The end written second.
        second: String,
    },
    /// Reads "invalid duration range "{}": {error}".
    #[error("invalid duration range \"{}\": {error}", echo(.text))]
    BadDurationRange {
        /// The text as written.
        text: String,
        /// Why it is wrong (the first end that is not a duration).
        error: DurationError,
        /// Whether signed durations (a clock step) were expected.
        signed: bool,
    },
    /// Reads "`heal_after` does not apply to `{kind}`".
    #[error("`heal_after` does not apply to `{kind}`")]
    HealAfterNotAllowed {
        /// What it is instead.
        kind: String,
    },
    /// Reads "`choices.timeouts` is {given}: give 2 to 16 values, or 0 for any value".
    #[error("`choices.timeouts` is {given}: give 2 to 16 values, or 0 for any value")]
    TimeoutChoicesOutOfRange {
        /// What the file gave.
        given: u32,
    },
    /// Reads "`heal_after` must be longer than zero".
    #[error("`heal_after` must be longer than zero")]
    ZeroHealAfter,
    /// Reads "{who} sends no message of type `{found}`" (`raft sends no message of type
    /// ...`, or `design \`d\` (bully) sends ...`).
    #[error("{} sends no message of type `{}`", sender(.algorithm, .design), echo(.found))]
    UnknownMessageType {
        /// The type as written.
        found: String,
        /// The algorithm that would have to send it.
        algorithm: String,
        /// The design that runs it, when it is a design's (`compare` runs every design under
        /// the scenario's faults).
        design: Option<String>,
        /// The algorithm's message types.
        expected: Vec<String>,
    },
    /// Reads "`nth` is {nth}: occurrences are counted from 1 to 4294967295".
    #[error("`nth` is {nth}: occurrences are counted from 1 to 4294967295")]
    TriggerNthOutOfRange {
        /// The number as written.
        nth: u64,
    },
    /// Reads "a `{kind}` must last longer than zero".
    #[error("a `{kind}` must last longer than zero")]
    ZeroPause {
        /// What it is instead.
        kind: String,
    },
    /// Reads "target `AllCrashed` in `{kind}`".
    #[error("target `AllCrashed` in `{kind}`")]
    AllCrashedOutsideRestart {
        /// What it is instead.
        kind: String,
    },
    /// Reads "node {node} is in two partition groups".
    #[error("node {node} is in two partition groups")]
    NodeInTwoGroups {
        /// The node number.
        node: u64,
    },
    /// Reads "`{kind}` from {target} to itself".
    #[error("`{kind}` from {target} to itself")]
    CutToItself {
        /// The partition's shape.
        kind: String,
        /// The target named twice, as written.
        target: String,
    },
    /// Reads "empty partition group".
    #[error("empty partition group")]
    EmptyPartitionGroup,

    // Validation: limits that keep a run bounded.
    /// Reads "{} is longer than the longest duration a scenario may hold ({})".
    #[error("{} is longer than the longest duration a scenario may hold ({})", dur(.ns), dur(&MAX_DURATION_NS))]
    DurationTooLong {
        /// The ns.
        ns: u64,
    },
    /// Reads "a clock offset or jump of {} is beyond the largest a scenario may hold ({} either way)".
    #[error(
        "a clock offset or jump of {} is beyond the largest a scenario may hold ({} either way)",
        signed_dur(.ns),
        dur(&MAX_DURATION_NS)
    )]
    ClockStepTooLarge {
        /// The ns.
        ns: i64,
    },
    /// Reads "the nemesis would inject about {expected} faults per run (one every {} over {}), more than {max}".
    #[error(
        "the nemesis would inject about {expected} faults per run (one every {} over {}), more than {max}",
        dur(.mean_interval_ns),
        dur(.window_ns),
        max = MAX_NEMESIS_FAULTS
    )]
    TooManyNemesisFaults {
        /// What may be written there.
        expected: u64,
        /// The nemesis' mean interval.
        mean_interval_ns: u64,
        /// The window.
        window_ns: u64,
    },
    /// Reads "the run would handle about {expected} events ({processes} processes acting every {} for {}{}{}{}), more than {max}".
    #[error(
        "the run would handle about {expected} events ({processes} processes acting every {} for {}{}{}{}), more than {max}",
        dur(.period_ns),
        dur(.duration_ns),
        fast_clocks(*.fastest_drift_ppm),
        storm(*.per_act),
        stream_retransmissions(*.retransmissions),
        max = MAX_EXPECTED_EVENTS
    )]
    TooManyEvents {
        /// What may be written there.
        expected: u128,
        /// The processes it lists.
        processes: u64,
        /// The period.
        period_ns: u64,
        /// The run's duration.
        duration_ns: u64,
        /// The fastest clock's drift: its timers fire `1 + ppm / 10^6` times as often.
        fastest_drift_ppm: i64,
        /// Events per act: `1 + 2 (n - 1)` when messages are slower than the acting period
        /// and every act can be a campaign to every member (a storm), else 1.
        per_act: u128,
        /// `Stream` retransmissions in the estimate (every connection, once per `max_rto`).
        retransmissions: u128,
    },

    // Validation: liveness and expectations.
    /// Reads "the liveness bound must be longer than zero".
    #[error("the liveness bound must be longer than zero")]
    ZeroLivenessBound,
    /// Reads "`Violates` names no invariant".
    #[error("`Violates` names no invariant")]
    EmptyViolates,
    /// Reads "`liveness` cannot be expected to be violated".
    #[error("`liveness` cannot be expected to be violated")]
    LivenessExpected,
}

impl ErrorKind {
    /// What to do about the error, when there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        let hint = match self {
            ErrorKind::UnknownVariant {
                context,
                found,
                expected,
            } => {
                let lower = found.to_lowercase();
                if context == "fault kind" && (lower.starts_with("gc") || lower.contains("garbage")) {
                    return Some(GC_PAUSE_HINT.to_string());
                }
                if context == "algorithm"
                    && let Some(feature) = splitbrain_algorithms::registry::missing_feature(found) {
                        return Some(missing_feature_hint(found, feature));
                    }
                let candidates: Vec<&str> = if context == "invariant" {
                    // `liveness` parses, but only to be rejected; never suggest it.
                    Invariant::SAFETY.iter().map(|inv| inv.name()).collect()
                } else {
                    expected.iter().map(String::as_str).collect()
                };
                names_hint(found, &candidates).unwrap_or_else(|| NO_NAMES_HINT.to_string())
            }
            ErrorKind::UnknownField {
                found, expected, ..
            } => {
                let candidates: Vec<&str> = expected.iter().map(String::as_str).collect();
                names_hint(found, &candidates).unwrap_or_else(|| NO_NAMES_HINT.to_string())
            }
            ErrorKind::NotARegularFile { kind } => kind.hint().to_string(),
            ErrorKind::FileTooLarge { .. } => {
                "a scenario is a few kilobytes of RON; splitbrain reads at most 16 MiB: is this \
                 the right file?"
                    .to_string()
            }
            ErrorKind::InvalidUtf8 { .. } => {
                "save the file as UTF-8 (RON is UTF-8 text); the line and column point at the \
                 first invalid byte"
                    .to_string()
            }
            ErrorKind::UnclosedBlockComment => {
                "this `/*` has no matching `*/`; block comments nest, so every `/*` inside it \
                 needs its own `*/`"
                    .to_string()
            }
            ErrorKind::ControlCharacter { .. } => {
                "RON is plain text: remove the character (a NUL byte or other binary data \
                 suggests this is not a text file)"
                    .to_string()
            }
            ErrorKind::PercentSign { number } if number.len() <= MAX_ECHO_CHARS => format!(
                "RON has no percentages; a probability is a fraction between 0 and 1: write `{}` \
                 for {number}%",
                percent_as_fraction(number)
            ),
            ErrorKind::PercentSign { .. } => {
                "RON has no percentages; a probability is a fraction between 0 and 1: write \
                 `0.01` for 1%"
                    .to_string()
            }
            ErrorKind::EmptyFile => {
                format!(
                    "a scenario file holds one `Scenario(...)`, e.g. `Scenario(algorithm: {}())`",
                    algorithms()[0].scenario_name
                )
            }
            ErrorKind::MissingField { field, .. } if field == "algorithm" => {
                format!(
                    "every scenario names its algorithm, e.g. `algorithm: {}()`",
                    algorithms()[0].scenario_name
                )
            }
            ErrorKind::WrongStructName { expected, .. } => {
                format!("the name before `(` is optional; when given it must be `{expected}`")
            }
            ErrorKind::WrongType { expected, .. } if expected == DURATION_EXPECTED => {
                DURATION_HINT.to_string()
            }
            ErrorKind::WrongType { expected, .. } if expected == SIGNED_DURATION_EXPECTED => {
                SIGNED_DURATION_HINT.to_string()
            }
            ErrorKind::Syntax { message } if message == EXPECTED_OPEN_PAREN => {
                format!(
                    "settings and arguments go in parentheses, even when empty: `{}()`, \
                     `Crash(Leader)`, `(\"150ms\", \"300ms\")`",
                    algorithms()[0].scenario_name
                )
            }
            ErrorKind::Syntax { message } if message == EXPECTED_BARE_NAME => {
                "names such as `Leader` or `election_safety` are written without quotes".to_string()
            }
            ErrorKind::Syntax { message } => syntax_hint(message),
            ErrorKind::DuplicateField { field, .. } => {
                format!("a field is given once: keep the `{field}` you mean and remove the other")
            }
            ErrorKind::BadDuration { signed: false, .. } => DURATION_HINT.to_string(),
            ErrorKind::BadDuration { signed: true, .. } => SIGNED_DURATION_HINT.to_string(),
            ErrorKind::NodesOutOfRange { .. } => {
                format!("a cluster has between 1 and {MAX_NODES} election members")
            }
            ErrorKind::TooManyNodesForBroadcast { .. } => format!(
                "its members send to every other member, so messages in flight and memory grow with the square of the cluster: use at most {MAX_BROADCAST_NODES} nodes (algorithms whose members do not send to every other member take up to {MAX_NODES})"
            ),
            ErrorKind::Setting(error) => error.hint().unwrap_or_else(|| {
                "docs/scenario-format.md lists each algorithm's settings and their rules"
                    .to_string()
            }),
            ErrorKind::BadDesignName { .. } => {
                "a design's name labels its curves, columns and chart files: use lowercase \
                 letters, digits, `-` and `_`, like `etcd-10s`"
                    .to_string()
            }
            ErrorKind::DuplicateDesign { .. } => {
                "give every design its own name: `compare` reports them side by side".to_string()
            }
            ErrorKind::DesignNameTooLong { .. } => {
                "a design's name is part of its chart files' names (`failover_cdf_NAME-unfenced.json`), \
                 which file systems cap at 255 bytes: shorten it"
                    .to_string()
            }
            ErrorKind::NemesisLeavesNoTime { .. } => {
                "lower `start` or `quiet`, or raise `duration`: every nemesis fault must strike \
                 after `start` and heal before the last `quiet` of the run"
                    .to_string()
            }
            ErrorKind::NemesisWithoutKinds => {
                "name the kinds it may inject, like `kinds: [Crash, Isolate]`, or leave `kinds` \
                 out for every kind but Suspend; a scenario without random faults has no \
                 `nemesis`"
                    .to_string()
            }
            ErrorKind::NemesisFaultDoesNotFit { .. } => {
                "shorten `fault_duration`, lower `start` or `quiet`, or raise `duration`: every \
                 nemesis fault strikes after `start` and heals before the last `quiet` of the run"
                    .to_string()
            }
            ErrorKind::NemesisTooRare { .. } => {
                "lower `mean_interval` (the mean gap between two faults), or lengthen the run: \
                 (duration - start - quiet) / mean_interval faults are expected per run"
                    .to_string()
            }
            ErrorKind::NemesisKindWithoutSize { kind, setting } => format!(
                "give `{setting}` a size above zero, or leave `{kind}` out of `kinds`"
            ),
            ErrorKind::NemesisKindWithoutMessages { .. } => {
                "list only kinds that strike the process or its clock (`kinds: [Crash, Pause, \
                 Stall, ClockJump, ClockDrift]`), or run more nodes: partitions, loss and \
                 duplication act on messages"
                    .to_string()
            }
            ErrorKind::MemberOutOfRange { members, .. } => format!(
                "a membership change names a member the scenario runs, numbered from 0 to {}: \
                 a member can be removed and added back, or added as a learner and promoted, \
                 but no process is started for a member past the last",
                members.saturating_sub(1)
            ),
            ErrorKind::NemesisConfChangeWithoutMembership { .. } => {
                "leave `ConfChange` out of `kinds`: only `External` nodes are told of \
                 membership changes (the `conf_change` event); the built-in algorithms ignore \
                 the fault"
                    .to_string()
            }
            ErrorKind::NemesisResignWithoutHandover { .. } => {
                "leave `Resign` out of `kinds`: Bully and Ring leaders do not hand over when \
                 asked, so the fault does nothing"
                    .to_string()
            }
            ErrorKind::FaultDurationRangeBackwards { .. } => {
                "write the shortest fault duration first, like (\"100ms\", \"5s\")".to_string()
            }
            ErrorKind::SwarmRangeBackwards { setting, low, high } => format!(
                "each seed draws its {setting} between the two ends, the smaller first: \
                 ({high}, {low})"
            ),
            ErrorKind::SwarmRangesWithoutSwarm => {
                "drop `swarm: false` to hunt in swarm mode with these ranges, or drop \
                 `swarm_ranges` to draw every seed from the settings as written"
                    .to_string()
            }
            ErrorKind::NoServiceProcess { .. }
            | ErrorKind::NoServiceClock { .. }
            | ErrorKind::NoServiceDisk { .. } => {
                format!(
                    "only algorithms with a modeled service ({}) have a `Service` process",
                    algorithms_with_service()
                )
            }
            ErrorKind::NoServiceInDesign { .. } => format!(
                "`compare` runs every design under the same faults, clocks and disks: give the \
                 design an algorithm with a service ({}), drop it, or strike a node instead",
                algorithms_with_service()
            ),
            ErrorKind::ServiceMemberOutOfRange { members, .. } => match members {
                1 => "the only service process is `ServiceMember(0)`, the same as `Service`"
                    .to_string(),
                n => format!("service members are numbered from 0 to {}", n - 1),
            },
            ErrorKind::NodeOutOfRange { nodes, .. } => match nodes {
                0 => "the cluster has no nodes".to_string(),
                1 => "the only node is `Node(0)`".to_string(),
                n => format!("nodes are numbered from 0 to {}", n - 1),
            },
            ErrorKind::FaultRangeBackwards { first, second } => format!(
                "a range is drawn per seed between its two ends, the smaller first: \
                 \"{second}..{first}\""
            ),
            ErrorKind::BadDurationRange { signed: false, .. } => format!(
                "{DURATION_HINT}; or a range drawn per seed, both ends included, like \"20s..40s\""
            ),
            ErrorKind::BadDurationRange { signed: true, .. } => format!(
                "{SIGNED_DURATION_HINT}; or a range drawn per seed, both ends included, like \
                 \"-3s..-1s\""
            ),
            ErrorKind::FaultAfterEnd { .. } => {
                "a fault must strike before the run ends: move it earlier or raise `duration`"
                    .to_string()
            }
            ErrorKind::HealAfterNotAllowed { .. } => {
                "only `Crash`, `Partition`, `ClockDrift`, `Loss` and `Duplicate` heal; `Pause` \
                 and `Stall` end after their own duration"
                    .to_string()
            }
            ErrorKind::AllCrashedOutsideRestart { .. } => {
                "`AllCrashed` is only for `Restart`; use `All` to strike every member".to_string()
            }
            ErrorKind::DriftOutOfRange { .. } => format!(
                "a drift must be above {MIN_DRIFT_PPM} ppm (a clock cannot stop) and at most \
                 {MAX_DRIFT_PPM} ppm"
            ),
            ErrorKind::RtoRangeBackwards { .. } => {
                "min_rto is the first retransmission's wait and max_rto caps the doubling; \
                 Linux uses 200ms and 120s"
                    .to_string()
            }
            ErrorKind::ZeroStreamTiming { .. } => {
                "write a positive duration, or leave the field out for the default \
                 (min_rto: \"200ms\", max_rto: \"120s\", timeout: \"8s\")"
                    .to_string()
            }
            ErrorKind::RepeatedLinkOverride { .. } | ErrorKind::RepeatedDiskOverride { .. } => {
                "merge the two overrides into one".to_string()
            }
            ErrorKind::EmptyViolates => {
                "use `expect: Safe` when no violation is expected".to_string()
            }
            ErrorKind::DurationTooLong { .. } => format!(
                "splitbrain keeps every duration within {} so that no sum of two overflows its \
                 clocks; a fault meant to outlast the run needs no `heal_after` at all",
                dur(&MAX_DURATION_NS)
            ),
            ErrorKind::ClockStepTooLarge { .. } => format!(
                "clock offsets and jumps are kept within {} either way: a local clock reads at \
                 most about 292 years, and one that reached its end would stand still",
                dur(&MAX_DURATION_NS)
            ),
            ErrorKind::TooManyNemesisFaults { .. } => format!(
                "raise `mean_interval`: (duration - start - quiet) / mean_interval is the expected \
                 number of faults per run, at most {MAX_NEMESIS_FAULTS}"
            ),
            ErrorKind::TooManyEvents { .. } => format!(
                "raise the shortest timing (the algorithm's heartbeat, timeout, keep-alive, tick or \
                 retry period, or `workload.write_every`), shorten `duration`, use fewer nodes, \
                 lower the clocks' largest drift or the network's latency, or raise a `Stream`'s \
                 `max_rto` and `timeout`: duration / shortest timing x processes x (1 + largest \
                 drift / 10^6) (x (1 + 2 (nodes - 1)) for Raft, raft-rs and Bully when a message \
                 can take longer than their smallest election or failure timeout), plus duration \
                 / max_rto + 3 x duration / timeout per connection on `Stream`, plus nodes x \
                 (nodes - 1) per start, fault and heal for Bully, must stay within \
                 {MAX_EXPECTED_EVENTS}"
            ),
            ErrorKind::LivenessExpected => {
                "a liveness failure is reported as exit code 3, not as an expectation; `Violates` \
                 names safety invariants only (election_safety, fencing_safety, term_monotonic)"
                    .to_string()
            }
            ErrorKind::LoneCarriageReturn => {
                "RON ends a line (and a `//` comment) only at a line feed: save the file with \
                 LF (Unix) or CRLF (Windows) line endings, not CR alone (classic Mac)"
                    .to_string()
            }
            ErrorKind::UnusualCharacter { class, .. } => class.hint().to_string(),
            ErrorKind::Read { .. } => {
                "check the path and that the file can be read; `splitbrain list` shows the \
                 scenario library"
                    .to_string()
            }
            ErrorKind::MissingField { field, .. } => format!(
                "add `{field}: ...` here; docs/scenario-format.md lists every field with its type"
            ),
            ErrorKind::WrongType { expected, .. } => format!(
                "this value must be {expected}; docs/scenario-format.md lists every field with \
                 its type"
            ),
            ErrorKind::WrongLength { expected, .. } => format!(
                "write exactly {expected}, separated by commas; docs/scenario-format.md shows \
                 each fault and setting with its arguments"
            ),
            ErrorKind::ZeroDuration => {
                "give the run a length, like `duration: \"60s\"`, or leave `duration` out for \
                 60s"
                    .to_string()
            }
            ErrorKind::ZeroMeanInterval => {
                "give the mean gap between two nemesis faults, like `mean_interval: \"5s\"`"
                    .to_string()
            }
            ErrorKind::ZeroFailoverObjective => {
                "give the longest acceptable failover, like `failover_p99: \"10s\"`, or leave \
                 it out"
                    .to_string()
            }
            ErrorKind::ProbabilityOutOfRange { .. } => {
                "a probability is a fraction: 0 is never, 1 is always, 0.01 is 1%".to_string()
            }
            ErrorKind::LatencyRangeBackwards { .. } => {
                "write the shorter latency first, like `Uniform(\"1ms\", \"5ms\")`".to_string()
            }
            ErrorKind::LinkToItself { .. } => {
                "a link override connects two different nodes: `from` and `to` must differ"
                    .to_string()
            }
            ErrorKind::DriftBoundOutOfRange { .. } => {
                "`clocks.drift_ppm` bounds the drift drawn for every clock, either way: give \
                 0 to 999999 (NTP-disciplined clocks: 100 or less); a single clock's drift goes \
                 in `clocks.nodes`"
                    .to_string()
            }
            ErrorKind::RepeatedClockOverride { .. } => {
                "give each node one clock override: merge the two".to_string()
            }
            ErrorKind::TimeoutChoicesOutOfRange { .. } => {
                "each randomized timeout (an election timeout) then takes one of that many \
                 evenly spaced values between its bounds, like `choices: (timeouts: 3)`; a \
                 systematic search tries each"
                    .to_string()
            }
            ErrorKind::UnknownMessageType {
                found, expected, ..
            } => {
                let candidates: Vec<&str> = expected.iter().map(String::as_str).collect();
                names_hint(found, &candidates).unwrap_or_else(|| NO_NAMES_HINT.to_string())
            }
            ErrorKind::TriggerNthOutOfRange { .. } => {
                "`nth: 1` (the default) fires the fault after the first occurrence, `nth: 2` \
                 after the second"
                    .to_string()
            }
            ErrorKind::ZeroHealAfter => {
                "give how long the fault lasts, like `heal_after: \"10s\"`, or leave it out \
                 for a fault that never heals"
                    .to_string()
            }
            ErrorKind::ZeroPause { .. } => {
                "give how long it lasts, like \"3s\"; a fault of zero length does nothing"
                    .to_string()
            }
            ErrorKind::NodeInTwoGroups { .. } => {
                "partition groups are disjoint: put each node in at most one group (nodes in \
                 no group are cut off from every group)"
                    .to_string()
            }
            ErrorKind::CutToItself { .. } => {
                "a link joins two processes: name another one at this end (`Follower`, \
                 `ServiceFollower`, another `Node(i)`), or cut one off with `Isolate(...)`"
                    .to_string()
            }
            ErrorKind::EmptyPartitionGroup => {
                "remove the empty `[]`: every group holds at least one node".to_string()
            }
            ErrorKind::ZeroLivenessBound => {
                "give the longest time without a leader to accept, like `bound: \"10s\"`, or \
                 leave `liveness` out for the algorithm's own bound"
                    .to_string()
            }
        };
        Some(hint)
    }
}

/// The algorithms with a modeled coordination service, as a scenario names them.
pub(crate) fn algorithms_with_service() -> String {
    let names: Vec<String> = algorithms()
        .iter()
        .filter(|e| e.has_service)
        .map(|e| format!("`{}`", e.scenario_name))
        .collect();
    names.join(", ")
}

/// The hint for a name where no names are expected.
const NO_NAMES_HINT: &str = "docs/scenario-format.md lists the names each field takes";

/// Hints for ron's syntax messages that say what is wrong but not what to write; a pointer
/// to the format for the rest.
fn syntax_hint(message: &str) -> String {
    if message.starts_with("expected a field name") {
        return "a field is written `name: value` with a bare name before the colon, like \
                `nodes: 5`; a value here suggests a lost name or comma before it"
            .to_string();
    }
    if let Some(name) = message
        .strip_prefix("expected `")
        .and_then(|rest| rest.strip_suffix("(...)` or `(...)`"))
    {
        return format!(
            "this field holds settings in parentheses: `(...)`, or `{name}(...)` with the \
             optional name; a list, a string or a bare name does not fit here"
        );
    }
    if message.starts_with("unexpected character") {
        return "this character does not belong here: fields are `name: value` pairs separated \
                by commas, inside the `(...)` of `Scenario`"
            .to_string();
    }
    if message.starts_with("invalid digit") {
        return "write whole numbers in decimal digits, like `5` or `300000`".to_string();
    }
    let hint = match message {
        "expected `:`" => "a field is written `name: value`: put a colon after the name",
        "expected `)`" | "expected `]`" => {
            "the value before this is complete, so a comma is missing before what follows, or \
             a `)` or `]` is missing, or an extra one closed too early"
        }
        "expected `[`" => "this field takes a list in brackets, like `faults: [...]` or `[0, 1]`",
        "expected a whole number" => {
            "this field takes a whole number, without quotes or a unit, like `nodes: 5`"
        }
        "expected a number" => {
            "this field takes a number, like `0.01` for a probability of 1%; no quotes"
        }
        "expected a string in double quotes" => {
            "durations and names are strings in double quotes, like `\"150ms\"` or \
             `name: \"my-scenario\"`"
        }
        "expected `true` or `false`" => "this setting is on or off: `true` or `false`, no quotes",
        "unexpected text after the end of the scenario" => {
            "the scenario ended at the `)` that closes `Scenario(`: remove what follows, or \
             look for a `)` that closes it too early"
        }
        "nested too deep" => "a scenario nests a few levels of `(...)` and `[...]`, not hundreds",
        "number out of range" => {
            "the number does not fit its field: counts such as `nodes` and `seed` are never \
             negative, and a seed fits in 64 bits"
        }
        "expected a comma" => {
            "fields and list items are separated by commas; where a whole number is expected \
             (`seed`, `nodes`), a fraction or a unit after it also stops here"
        }
        "expected end of string" => "the string is not closed: end it with `\"`",
        "unexpected end of file" => {
            "the file ends inside a `(` or `[`: every `(` needs its `)` and every `[` its `]`"
        }
        "not a valid Unicode-escaped character" => {
            "a `\\u{...}` escape must name a Unicode character: at most 10FFFF, and not \
             D800 to DFFF (surrogates)"
        }
        _ => {
            "a scenario is `Scenario(field: value, ...)` in RON: names, numbers, \"strings\", \
             (...) and [...] separated by commas; docs/scenario-format.md shows every field"
        }
    };
    hint.to_string()
}

/// The hint for a fault named after a garbage-collection pause, which two faults model.
const GC_PAUSE_HINT: &str = "a GC pause is `Stall(target, \"3s\")` when it strikes inside a \
    handler, between the decision and its effects (the check-then-act race of a leader that \
    checked its lease, then wrote), or `Pause(target, \"3s\")` when it freezes the process \
    between handlers (docs/scenario-format.md, `faults`)";

/// The part of the events estimate's explanation that a fast clock adds.
fn fast_clocks(drift_ppm: i64) -> String {
    if drift_ppm < 1_000 {
        return String::new(); // under 0.1% faster: not what makes a run too long
    }
    let rate = 1.0 + drift_ppm as f64 / 1e6;
    format!(", on clocks up to {rate:.3}x fast (drift +{drift_ppm} ppm)")
}

/// The part of the events estimate's explanation that a possible storm adds.
fn storm(per_act: u128) -> String {
    if per_act <= 1 {
        return String::new();
    }
    format!(
        ", each act up to {per_act} events: messages can take longer than a member waits \
         before it campaigns, so every act can be a campaign to every member and their answers"
    )
}

/// The part of the events estimate's explanation that `Stream` retransmissions add.
fn stream_retransmissions(count: u128) -> String {
    if count == 0 {
        return String::new();
    }
    format!(
        ", plus about {count} Stream retransmissions and reconnections (every connection once \
         per max_rto, and three events per timeout)"
    )
}

/// The hint for a built-in algorithm this build was made without.
fn missing_feature_hint(scenario_name: &str, feature: &str) -> String {
    format!(
        "this build has no `{scenario_name}`: it comes with the `{feature}` feature of \
         splitbrain-algorithms (the `splitbrain` command has it; a crate of yours adds \
         `features = [\"{feature}\"]` to its splitbrain-algorithms dependency)"
    )
}

/// "did you mean `X`?" when one name is close, else the list of valid names.
fn names_hint(found: &str, candidates: &[&str]) -> Option<String> {
    if let Some(best) = suggest(found, candidates) {
        return Some(format!("did you mean `{best}`?"));
    }
    match candidates {
        [] => None,
        [only] => Some(format!("expected `{only}`")),
        _ => {
            let list: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
            Some(format!("expected one of {}", list.join(", ")))
        }
    }
}

/// The candidate nearest to `found`, if it is close enough to be what the author meant.
/// A name longer than `MAX_SUGGEST_CHARS` is nobody's typo, and comparing it would cost
/// time and memory in proportion to its length: it gets no suggestion.
pub fn suggest<'a>(found: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if found.chars().nth(MAX_SUGGEST_CHARS).is_some() {
        return None;
    }
    let found_lower = found.to_lowercase();
    candidates
        .iter()
        .map(|&candidate| {
            let candidate_lower = candidate.to_lowercase();
            let score = strsim::jaro_winkler(&found_lower, &candidate_lower).max(
                strsim::normalized_damerau_levenshtein(&found_lower, &candidate_lower),
            );
            (candidate, score)
        })
        .filter(|(_, score)| *score >= 0.8)
        .fold(
            None,
            |best: Option<(&str, f64)>, (candidate, score)| match best {
                Some((_, best_score)) if best_score >= score => best,
                _ => Some((candidate, score)),
            },
        )
        .map(|(candidate, _)| candidate)
}

/// The longest name that gets a "did you mean" suggestion.
const MAX_SUGGEST_CHARS: usize = 64;

/// The most characters of a name or text from the file that a message repeats.
pub(crate) const MAX_ECHO_CHARS: usize = 40;

/// `text` as a message repeats it: its first [`MAX_ECHO_CHARS`] characters, then `…` if cut.
fn echo(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// `1` -> `0.01`, `12.5` -> `0.125`: the decimal point moved two places left, exactly.
fn percent_as_fraction(number: &str) -> String {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits_only = |part: &str| part.chars().all(|c| c.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits_only(whole) || !digits_only(fraction) {
        return format!("{number} / 100");
    }
    // At least three digits before the point, so that two can move after it.
    let padded = format!("{whole:0>3}");
    let (kept, moved) = padded.split_at(padded.len() - 2);
    let kept = kept.trim_start_matches('0');
    let fraction = format!("{moved}{fraction}");
    let fraction = fraction.trim_end_matches('0');
    match (kept.is_empty(), fraction.is_empty()) {
        (true, true) => "0".to_string(),
        (false, true) => kept.to_string(),
        (true, false) => format!("0.{fraction}"),
        (false, false) => format!("{kept}.{fraction}"),
    }
}

/// What kind of file a scenario path named when it was not a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonRegularFile {
    /// Directory.
    Directory,
    /// A FIFO: reading it waits for a writer.
    NamedPipe,
    /// Such as `/dev/zero` or a terminal: reading it may never end.
    CharacterDevice,
    /// Block device.
    BlockDevice,
    /// Socket.
    Socket,
    /// Other.
    Other,
}

impl NonRegularFile {
    fn hint(self) -> &'static str {
        match self {
            NonRegularFile::Directory => {
                "give a `.ron` file; `splitbrain list --dir DIR` lists the scenarios in a folder"
            }
            _ => {
                "give the path of a `.ron` file; to use text from a pipe or a device, save it \
                 to a file first"
            }
        }
    }
}

impl fmt::Display for NonRegularFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NonRegularFile::Directory => "a directory",
            NonRegularFile::NamedPipe => "a named pipe (FIFO)",
            NonRegularFile::CharacterDevice => "a character device",
            NonRegularFile::BlockDevice => "a block device",
            NonRegularFile::Socket => "a socket",
            NonRegularFile::Other => "a special file",
        })
    }
}

/// Converts ron's error into ours, with a location that points at the offending token.
pub(crate) fn from_ron(
    error: ron::error::SpannedError,
    source: &str,
    origin: &str,
) -> ScenarioError {
    use ron::error::Error as Ron;
    let only_trivia = locate::skip_trivia_from(source, (1, 1)).is_none();
    if only_trivia || matches!(error.code, Ron::UnclosedBlockComment) {
        // A comment that never closes hides the rest of the file: point at where it opens.
        if let Some(at) = locate::unclosed_comment(source) {
            return ScenarioError::new(origin, Some(at), ErrorKind::UnclosedBlockComment);
        }
    }
    if only_trivia {
        return ScenarioError::new(origin, Some((1, 1)), ErrorKind::EmptyFile);
    }
    let start = (error.span.start.line, error.span.start.col);
    let mut location = locate::skip_trivia_from(source, start)
        .map(|at| locate::include_sign(source, at))
        .or(Some(start));
    let kind = match error.code {
        Ron::Message(message) => {
            if let Some(text) = message.strip_prefix(DURATION_MARKER) {
                location = Some(locate::string_start(source, start));
                bad_duration(text, false)
            } else if let Some(text) = message.strip_prefix(SIGNED_DURATION_MARKER) {
                location = Some(locate::string_start(source, start));
                bad_duration(text, true)
            } else if let Some(text) = message.strip_prefix(DURATION_RANGE_MARKER) {
                location = Some(locate::string_start(source, start));
                bad_range(text, false)
            } else if let Some(text) = message.strip_prefix(SIGNED_DURATION_RANGE_MARKER) {
                location = Some(locate::string_start(source, start));
                bad_range(text, true)
            } else {
                ErrorKind::Syntax {
                    message: lowercase_first(&message),
                }
            }
        }
        Ron::NoSuchEnumVariant {
            expected,
            found,
            outer,
        } => ErrorKind::UnknownVariant {
            context: outer.unwrap_or_else(|| "variant".to_string()),
            found,
            expected: expected.iter().map(|s| s.to_string()).collect(),
        },
        Ron::NoSuchStructField {
            expected,
            found,
            outer,
        } => ErrorKind::UnknownField {
            context: struct_context(outer.as_deref()),
            found,
            expected: expected.iter().map(|s| s.to_string()).collect(),
        },
        Ron::MissingStructField { field, outer } => ErrorKind::MissingField {
            context: struct_context(outer.as_deref()),
            field: field.to_string(),
        },
        Ron::DuplicateStructField { field, outer } => ErrorKind::DuplicateField {
            context: struct_context(outer.as_deref()),
            field: field.to_string(),
        },
        Ron::ExpectedDifferentStructName { expected, found } => ErrorKind::WrongStructName {
            expected: expected.to_string(),
            found,
        },
        Ron::InvalidValueForType { expected, found } => ErrorKind::WrongType { expected, found },
        Ron::ExpectedDifferentLength { expected, found } => wrong_length(&expected, found),
        Ron::Eof => {
            location = Some(locate::end_position(source));
            ErrorKind::Syntax {
                message: "unexpected end of file".to_string(),
            }
        }
        Ron::UnclosedBlockComment => {
            location = Some(start);
            ErrorKind::UnclosedBlockComment
        }
        Ron::TrailingCharacters => ErrorKind::Syntax {
            message: "unexpected text after the end of the scenario".to_string(),
        },
        Ron::ExpectedNamedStructLike(name) if !name.is_empty() => ErrorKind::Syntax {
            message: format!("expected `{name}(...)` or `(...)`"),
        },
        // ron's "try the raw identifier `r#3`" misleads: a value stands where a name belongs.
        Ron::SuggestRawIdentifier(found) | Ron::InvalidIdentifier(found) => ErrorKind::Syntax {
            message: format!("expected a field name, found `{}`", echo(&found)),
        },
        Ron::UnexpectedChar(c) => ErrorKind::Syntax {
            message: format!("unexpected character `{c}`"),
        },
        other => ErrorKind::Syntax {
            message: plain_words(&other),
        },
    };
    // `loss: 1%`: ron stops at the `%`; say what a probability looks like instead.
    if let Some((at, number)) = location.and_then(|at| locate::number_before_percent(source, at)) {
        return ScenarioError::new(origin, Some(at), ErrorKind::PercentSign { number });
    }
    // A NUL byte or another control character: ron's complaint about it would mislead.
    if let Some(c) = location
        .and_then(|at| locate::char_at(source, at))
        .filter(|c| c.is_control() && !c.is_whitespace())
    {
        return ScenarioError::new(
            origin,
            location,
            ErrorKind::ControlCharacter { code: c.into() },
        );
    }
    // "expected X" with nothing but whitespace and comments after it: the text is cut short.
    let end = (error.span.end.line, error.span.end.col);
    let cut_short = matches!(&kind, ErrorKind::Syntax { message } if message.starts_with("expected"))
        && locate::skip_trivia_from(source, end).is_none();
    if cut_short {
        location = Some(locate::end_position(source));
        return ScenarioError::new(
            origin,
            location,
            ErrorKind::Syntax {
                message: "unexpected end of file".to_string(),
            },
        );
    }
    ScenarioError::new(origin, location, kind)
}

const EXPECTED_OPEN_PAREN: &str = "expected `(`";
const EXPECTED_BARE_NAME: &str = "expected a name";

/// ron's terse messages for the mistakes people make most, in plainer words.
fn plain_words(error: &ron::error::Error) -> String {
    use ron::error::Error as Ron;
    let words = match error {
        Ron::ExpectedString => "expected a string in double quotes",
        Ron::ExpectedInteger => "expected a whole number",
        Ron::ExpectedFloat => "expected a number",
        Ron::ExpectedBoolean => "expected `true` or `false`",
        Ron::ExpectedComma => "expected a comma",
        Ron::ExpectedStructLike => EXPECTED_OPEN_PAREN,
        Ron::ExpectedStructLikeEnd => "expected `)`",
        Ron::ExpectedArray => "expected `[`",
        Ron::ExpectedArrayEnd => "expected `]`",
        Ron::ExpectedIdentifier => EXPECTED_BARE_NAME,
        Ron::ExpectedMapColon => "expected `:`",
        Ron::ExceededRecursionLimit => "nested too deep",
        Ron::IntegerOutOfBounds => "number out of range",
        other => return lowercase_first(&other.to_string()),
    };
    words.to_string()
}

fn bad_duration(text: &str, signed: bool) -> ErrorKind {
    let parsed = if signed {
        parse_signed_duration(text).err()
    } else {
        parse_duration(text).err()
    };
    // The visitor only reports texts that failed to parse; re-parsing recovers the reason.
    let error = parsed.unwrap_or(DurationError::Empty);
    ErrorKind::BadDuration {
        text: text.to_string(),
        error,
        signed,
    }
}

/// A bad duration where a range may stand: told as a bad duration unless it is a range.
fn bad_range(text: &str, signed: bool) -> ErrorKind {
    if !text.contains("..") {
        return bad_duration(text, signed);
    }
    let parsed = if signed {
        parse_signed_duration_range(text).err()
    } else {
        parse_duration_range(text).err()
    };
    ErrorKind::BadDurationRange {
        text: text.to_string(),
        error: parsed.unwrap_or(DurationError::Empty),
        signed,
    }
}

/// serde says "tuple variant RawAction::Pause with 2 elements": keep what a user wrote.
fn wrong_length(expected: &str, found: usize) -> ErrorKind {
    if let Some(rest) = expected.strip_prefix("tuple variant ")
        && let Some((variant, count)) = rest.split_once(" with ")
    {
        let variant = variant.rsplit("::").next().unwrap_or(variant);
        return ErrorKind::WrongLength {
            what: format!("`{variant}`"),
            expected: count
                .replace("elements", "values")
                .replace("element", "value"),
            found,
        };
    }
    if let Some(count) = expected.strip_prefix("a tuple of size ") {
        return ErrorKind::WrongLength {
            what: "this tuple".to_string(),
            expected: format!("{count} values"),
            found,
        };
    }
    ErrorKind::WrongLength {
        what: "this value".to_string(),
        expected: expected.to_string(),
        found,
    }
}

/// The words for a struct in messages, from its RON name.
fn struct_context(name: Option<&str>) -> String {
    match name {
        Some("Scenario") => "the scenario".to_string(),
        Some(name) if AlgorithmEntry::named(name).is_some_and(|e| e.scenario_name == name) => {
            format!("`{name}` settings")
        }
        Some("Network") => "network settings".to_string(),
        Some("Link") => "a link override".to_string(),
        Some("Clocks") => "clock settings".to_string(),
        Some("NodeClock") => "a clock override".to_string(),
        Some("Workload") => "workload settings".to_string(),
        Some("Resource") => "resource settings".to_string(),
        Some("Liveness") => "liveness settings".to_string(),
        Some("Fault") => "a fault".to_string(),
        Some("Trigger") => "a fault's trigger (`after`)".to_string(),
        Some(other) => format!("`{other}`"),
        None => "this value".to_string(),
    }
}

pub(crate) fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_misspellings_get_a_suggestion() {
        let kinds = ["Crash", "Restart", "Partition", "Heal", "Pause", "Stall"];
        assert_eq!(suggest("Partiton", &kinds), Some("Partition"));
        assert_eq!(suggest("partition", &kinds), Some("Partition"));
        assert_eq!(suggest("Crsh", &kinds), Some("Crash"));
        assert_eq!(
            suggest(
                "elction_timeout",
                &["election_timeout", "heartbeat", "pre_vote"]
            ),
            Some("election_timeout")
        );
    }

    #[test]
    fn a_name_too_long_to_be_a_typo_gets_no_suggestion() {
        let kinds = ["Crash", "Partition"];
        // Close enough by Jaro-Winkler (a shared prefix), but 69 characters long.
        let long = format!("Partition{}", "n".repeat(60));
        assert_eq!(suggest(&long, &kinds), None);
        assert_eq!(suggest(&"Partition".repeat(100_000), &kinds), None);
        assert_eq!(suggest("Partitionn", &kinds), Some("Partition"));
    }

    #[test]
    fn echoes_are_cut_after_forty_characters() {
        assert_eq!(echo("Partiton"), "Partiton");
        assert_eq!(echo(&"x".repeat(40)), "x".repeat(40));
        assert_eq!(echo(&"ü".repeat(41)), format!("{}…", "ü".repeat(40)));
    }

    #[test]
    fn a_percentage_becomes_the_same_fraction_written_exactly() {
        let cases = [
            ("1", "0.01"),
            ("12.5", "0.125"),
            ("0.5", "0.005"),
            (".5", "0.005"),
            ("50", "0.5"),
            ("100", "1"),
            ("150", "1.5"),
            ("0", "0"),
            ("007", "0.07"),
            ("1e3", "1e3 / 100"),
        ];
        for (percent, fraction) in cases {
            assert_eq!(percent_as_fraction(percent), fraction, "{percent}%");
        }
    }

    #[test]
    fn names_that_are_nothing_alike_get_the_list_instead() {
        let kinds = ["Crash", "Restart", "Heal"];
        assert_eq!(suggest("Explode", &kinds), None);
        assert_eq!(
            names_hint("Explode", &kinds).as_deref(),
            Some("expected one of `Crash`, `Restart`, `Heal`")
        );
    }

    #[test]
    fn an_algorithm_left_out_of_the_build_names_the_feature_that_brings_it() {
        let hint = missing_feature_hint("RaftRs", "raft-rs");
        assert!(hint.contains("no `RaftRs`"), "{hint}");
        assert!(hint.contains("`raft-rs` feature"), "{hint}");
        assert!(hint.contains(r#"features = ["raft-rs"]"#), "{hint}");
        // This workspace builds it, so a scenario naming it parses.
        assert_eq!(
            splitbrain_algorithms::registry::missing_feature("RaftRs"),
            None
        );
        crate::parse("(algorithm: RaftRs())", "x.ron").expect("RaftRs is built here");
    }

    #[test]
    fn syntax_errors_that_say_what_but_not_how_get_a_hint() {
        for source in [
            "(algorithm: Raft(), nodes: -1)",
            "(algorithm: Raft(), seed: 1.5)",
            "(algorithm: Raft(), nodes: 3, nodes: 4)",
            "(algorithm: Raft(), name: \"abc)",
            "(algorithm: Raft(), nodes: 3",
            "(algorithm: Raft(), name: \"\\u{D800}\")",
        ] {
            let error = crate::parse(source, "x.ron").expect_err(source);
            assert!(error.hint().is_some(), "{source}: {error}");
        }
    }

    #[test]
    fn a_fault_named_after_a_gc_pause_is_told_of_stall_and_pause() {
        let kind = ErrorKind::UnknownVariant {
            context: "fault kind".into(),
            found: "GcPause".into(),
            expected: vec!["Pause".into(), "Stall".into()],
        };
        let hint = kind.hint().expect("a hint");
        assert!(
            hint.contains("`Stall(") && hint.contains("`Pause("),
            "{hint}"
        );
        // Names that merely contain the letters keep their "did you mean".
        let kind = ErrorKind::UnknownVariant {
            context: "fault kind".into(),
            found: "LongCrash".into(),
            expected: vec!["Crash".into(), "Stall".into()],
        };
        assert!(!kind.hint().unwrap().contains("GC pause"));
    }

    #[test]
    fn an_unknown_invariant_is_never_told_to_use_liveness() {
        let kind = ErrorKind::UnknownVariant {
            context: "invariant".into(),
            found: "livenes".into(),
            expected: vec!["election_safety".into(), "liveness".into()],
        };
        assert_eq!(
            kind.hint().as_deref(),
            Some("expected one of `election_safety`, `fencing_safety`, `term_monotonic`")
        );
    }

    #[test]
    fn errors_render_as_file_line_column_message_then_hint() {
        let error = ScenarioError::new(
            "scenarios/x.ron",
            Some((12, 7)),
            ErrorKind::UnknownVariant {
                context: "fault kind".into(),
                found: "Partiton".into(),
                expected: vec!["Crash".into(), "Partition".into()],
            },
        );
        assert_eq!(
            error.to_string(),
            "scenarios/x.ron:12:7: unknown fault kind `Partiton`\n  hint: did you mean `Partition`?"
        );
        let read = ErrorKind::Read {
            reason: "no such file or directory".into(),
        };
        let without_location = ScenarioError::new("scenarios/x.ron", None, read);
        assert_eq!(
            without_location.to_string(),
            "scenarios/x.ron: cannot read the scenario: no such file or directory
  hint: check \
             the path and that the file can be read; `splitbrain list` shows the scenario library"
        );
    }

    #[test]
    fn serde_length_errors_name_the_variant_not_the_rust_type() {
        assert_eq!(
            wrong_length("tuple variant RawAction::Pause with 2 elements", 1).to_string(),
            "`Pause` takes 2 values, found 1"
        );
        assert_eq!(
            wrong_length("a tuple of size 2", 3).to_string(),
            "this tuple takes 2 values, found 3"
        );
    }
}
