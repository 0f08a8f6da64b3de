//! Rules that the settings of several algorithms share (a heartbeat above zero, a failure
//! timeout above the heartbeat, no timer longer than a day), so that each is worded and
//! hinted once.

use crate::algorithm::{Problem, SettingError, MAX_TIMING_NS};
use splitbrain_sim::duration::{format_duration_ron, DurationText};
use splitbrain_sim::Nanos;
use thiserror::Error;

pub(crate) fn dur(ns: &u64) -> String {
    format_duration_ron(*ns)
}

/// A rule that several algorithms' settings share.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CommonRule {
    /// A heartbeat interval of zero: the leader's heartbeat timer would fire again at the same
    /// instant, for ever.
    #[error("the heartbeat interval must be longer than zero")]
    ZeroHeartbeat,
    /// A failure timeout no longer than the heartbeat interval: followers would suspect a
    /// live leader between two of its heartbeats.
    #[error(
        "the failure timeout ({}) must be longer than the heartbeat ({})",
        dur(.failure_timeout_ns),
        dur(.heartbeat_ns)
    )]
    FailureTimeoutNotAboveHeartbeat {
        /// The failure timeout, in nanoseconds of local time.
        failure_timeout_ns: u64,
        /// The heartbeat interval, in nanoseconds of local time.
        heartbeat_ns: u64,
    },
    /// A timing longer than [`MAX_TIMING_NS`] (a day).
    #[error("the timing {} is longer than a day", dur(.ns))]
    TimingTooLong {
        /// The timing, in nanoseconds.
        ns: u64,
    },
    /// A knob the algorithm does not have, or a value of the wrong shape: callers pass only
    /// knobs from `Algorithm::KNOBS` with values of their shape, so this is never shown to a
    /// user, but it names the mistake instead of panicking.
    #[error("`{knob}` is not a knob of this algorithm, or not of this shape")]
    UnknownKnob {
        /// The knob name as passed.
        knob: String,
    },
}

impl SettingError for CommonRule {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            CommonRule::ZeroHeartbeat => {
                "give the interval between two heartbeats, like \"50ms\", or leave it out for \
                 the algorithm's default"
            }
            CommonRule::UnknownKnob { .. } => {
                "`splitbrain list` shows each algorithm's settings that --param takes"
            }
            CommonRule::FailureTimeoutNotAboveHeartbeat { .. } => {
                "followers suspect the coordinator when its heartbeats stop; keep the heartbeat \
                 well below the failure timeout (a quarter of it, say)"
            }
            CommonRule::TimingTooLong { .. } => {
                "leases, sessions and their timers run for seconds to minutes; splitbrain takes \
                 them up to a day"
            }
        };
        Some(hint.to_string())
    }
}

/// The timing as written, or `default_ns`.
pub(crate) fn ns_or(written: Option<DurationText>, default_ns: Nanos) -> Nanos {
    written.map_or(default_ns, |d| d.0)
}

/// The heartbeat and failure timeout of a heartbeat failure detector (Bully, Ring): the
/// heartbeat above zero, the failure timeout above the heartbeat (reported at the failure
/// timeout when it is written, else at the heartbeat).
pub(crate) fn heartbeat_and_failure_timeout(
    heartbeat: Option<DurationText>,
    failure_timeout: Option<DurationText>,
    default_heartbeat_ns: Nanos,
    default_failure_timeout_ns: Nanos,
    problems: &mut Vec<Problem<CommonRule>>,
) -> (Nanos, Nanos) {
    let heartbeat_ns = ns_or(heartbeat, default_heartbeat_ns);
    let failure_timeout_ns = ns_or(failure_timeout, default_failure_timeout_ns);
    let field = if failure_timeout.is_some() {
        "failure_timeout"
    } else {
        "heartbeat"
    };
    if heartbeat_ns == 0 {
        problems.push(Problem {
            field: "heartbeat",
            error: CommonRule::ZeroHeartbeat,
        });
    } else if failure_timeout_ns <= heartbeat_ns {
        problems.push(Problem {
            field,
            error: CommonRule::FailureTimeoutNotAboveHeartbeat {
                failure_timeout_ns,
                heartbeat_ns,
            },
        });
    }
    (heartbeat_ns, failure_timeout_ns)
}

/// A problem if `ns` is longer than [`MAX_TIMING_NS`].
pub(crate) fn at_most_a_day(ns: Nanos, field: &'static str) -> Option<Problem<CommonRule>> {
    (ns > MAX_TIMING_NS).then_some(Problem {
        field,
        error: CommonRule::TimingTooLong { ns },
    })
}

/// Wraps every problem's error into the algorithm's own error type.
pub(crate) fn wrap<E>(
    problems: Vec<Problem<CommonRule>>,
    into: fn(CommonRule) -> E,
) -> impl Iterator<Item = Problem<E>> {
    problems.into_iter().map(move |p| Problem {
        field: p.field,
        error: into(p.error),
    })
}

/// The problem of an unknown knob, for [`crate::algorithm::Algorithm::vary`].
pub(crate) fn unknown_knob<E>(name: &str, into: fn(CommonRule) -> E) -> Problem<E> {
    Problem {
        field: "",
        error: into(CommonRule::UnknownKnob {
            knob: name.to_string(),
        }),
    }
}

/// `x`, which was tied to `old_ns`, scaled to keep its ratio to `new_ns` (rounded down).
pub(crate) fn scaled(x: Nanos, old_ns: Nanos, new_ns: Nanos) -> Nanos {
    let ns = u128::from(x) * u128::from(new_ns) / u128::from(old_ns.max(1));
    Nanos::try_from(ns).unwrap_or(Nanos::MAX)
}
