//! The parameters `sweep --param` (and `run --param`) vary: a setting of the algorithm (its
//! knobs), of the scenario (nodes, loss, latency, the nemesis' fault lengths), or of its
//! faults (`fault::FAULT_PARAMS`: the length of every pause, stall, suspend, crash or partition, a
//! slow disk's fsync time and length, the size of every clock step, the drift, a loss or
//! duplication burst's probability).

use crate::group::Invalidated;
use splitbrain_algorithms::{
    algorithms, AlgorithmEntry, AlgorithmError, Cluster, Knob, KnobShape, KnobValue,
};
use splitbrain_scenario::{self as scenario, Scenario};
use splitbrain_sim::Latency;
use thiserror::Error;

/// The parameters of the scenario itself (the algorithms' own come from their knobs, the
/// faults' from `FAULT_PARAMS`), with an example value and what they take.
const SCENARIO_PARAMS: &[(&str, &str, &str)] = &[
    ("nodes", "3,5,7", "integers >= 1"),
    ("loss", "0,0.05", "0..1"),
    ("latency", "1ms..10ms", "uniform) or latency=5ms (constant"),
    (
        "fault_duration",
        "100ms..5s,1s..10s",
        "the nemesis' fault lengths",
    ),
];

/// Every parameter with an example and who takes it, for hints.
fn params_help() -> String {
    let mut knobs: Vec<(Knob, Vec<&str>)> = Vec::new();
    for entry in algorithms() {
        for knob in entry.knobs {
            match knobs.iter_mut().find(|(k, _)| k.name == knob.name) {
                Some((_, algorithms)) => algorithms.push(entry.name),
                None => knobs.push((*knob, vec![entry.name])),
            }
        }
    }
    let algorithm_params = knobs
        .iter()
        .map(|(k, algorithms)| format!("{}={} ({})", k.name, k.example, algorithms.join(", ")));
    let scenario_params = SCENARIO_PARAMS
        .iter()
        .map(|(name, example, takes)| format!("{name}={example} ({takes})"));
    let fault_params = FAULT_PARAMS
        .iter()
        .map(|f| format!("{}={} ({})", f.name, f.values, f.takes()));
    algorithm_params
        .chain(scenario_params)
        .chain(fault_params)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A parameter, a value or a setting that `sweep --param` (or `run --param`) cannot use.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum ParamError {
    /// Not `NAME=V1,V2,...`.
    #[error(
        "invalid --param {text:?}: expected NAME=V1,V2,...\n  hint: the parameters: {}",
        params_help()
    )]
    Malformed {
        /// The text as given.
        text: String,
    },
    /// A name no sweep knows.
    #[error("unknown parameter {name:?}\n  hint: {}", unknown_hint(name))]
    Unknown {
        /// The name as given.
        name: String,
    },
    /// A value the parameter does not take.
    #[error("invalid value {raw:?} for {name}\n  hint: a value of {name} is {form}")]
    InvalidValue {
        /// The value as given.
        raw: String,
        /// The parameter's name.
        name: String,
        /// What its values look like.
        form: String,
    },
    /// A value given twice, or spelt two ways (`3` and `03`).
    #[error("{}\n  hint: give each value once", same_text(label, same))]
    Repeated {
        /// `NAME=V` as given the second time.
        label: String,
        /// `NAME=V` as given the first time.
        same: String,
    },
    /// An algorithm's setting that the scenario's algorithm does not have.
    #[error("{param} does not apply to the scenario's algorithm, {algorithm}\n  hint: {param} is a parameter of {algorithms}")]
    NotForAlgorithm {
        /// The parameter.
        param: &'static str,
        /// The scenario's algorithm.
        algorithm: &'static str,
        /// The algorithms that have it, comma-separated.
        algorithms: String,
    },
    /// More nodes than the algorithm may run.
    #[error("cannot resize to {n} nodes: {algorithm} runs at most {most} nodes here")]
    CannotResize {
        /// The cluster size asked for.
        n: usize,
        /// The scenario's algorithm.
        algorithm: &'static str,
        /// The most it runs.
        most: u64,
    },
    /// A fault setting, and no fault of that kind to set.
    #[error("{param} sets {what}, and the scenario has no such fault\n  hint: add one to its faults, like {example}")]
    NoFaultOfKind {
        /// The parameter.
        param: &'static str,
        /// What it sets: `every SlowDisk's fsync time`.
        what: String,
        /// A fault of that kind, as a scenario writes it.
        example: &'static str,
    },
    /// `fault_duration` on a scenario without a nemesis.
    #[error("fault_duration sets how long the nemesis' faults last, and the scenario has no nemesis\n  hint: add one, like nemesis: (fault_duration: (\"100ms\", \"5s\")); the explicit faults' lengths have their own parameters ({})", fault_param_names())]
    NoNemesis,
    /// A value the algorithm's rules refuse.
    #[error("{knob}={value}: {error}{}", hint_line(error.hint()))]
    Setting {
        /// The setting.
        knob: &'static str,
        /// The value, as a scenario writes it.
        value: String,
        /// The rule it breaks.
        error: AlgorithmError,
    },
    /// `--heartbeat-fraction` not strictly between 0 and 1.
    #[error("invalid --heartbeat-fraction {fraction}: it must be between 0 and 1\n  hint: the heartbeat as a fraction of the minimum election timeout, like --heartbeat-fraction 0.1")]
    FractionOutOfRange {
        /// The fraction as given.
        fraction: f64,
    },
    /// `--heartbeat-fraction` without `--param election_timeout=...`.
    #[error("--heartbeat-fraction needs --param election_timeout=...\n  hint: it sets each value's heartbeat from its minimum election timeout, like --param election_timeout=150ms..300ms,300ms..600ms --heartbeat-fraction 0.1")]
    FractionNeedsTimeout,
    /// A heartbeat that rounds to nothing.
    #[error("--heartbeat-fraction {fraction} of {} is no heartbeat\n  hint: give a larger fraction or longer timeouts", scenario::format_duration_ron(*min_ns))]
    NoHeartbeat {
        /// The fraction as given.
        fraction: f64,
        /// The minimum election timeout.
        min_ns: u64,
    },
    /// `run --param` with more than one value.
    #[error(
        "--param {text:?} gives {count} values; run takes one\n  hint: like --param {example}"
    )]
    OneValueOnly {
        /// The text as given.
        text: String,
        /// How many values it gives.
        count: usize,
        /// Its first value, `NAME=V`.
        example: String,
    },
    /// The value made the scenario invalid.
    #[error("{0}")]
    Invalid(#[from] Invalidated),
    /// One of the scenario's designs cannot take the value.
    #[error("design {design}: {error}")]
    InDesign {
        /// The design's name.
        design: String,
        /// What is wrong.
        error: Box<ParamError>,
    },
}

/// The fault parameters' names, comma-separated.
fn fault_param_names() -> String {
    let names: Vec<&str> = FAULT_PARAMS.iter().map(|f| f.name).collect();
    names.join(", ")
}

fn same_text(label: &str, same: &str) -> String {
    if same == label {
        format!("{label} is given twice")
    } else {
        format!("{label} is the same value as {same}")
    }
}

fn hint_line(hint: Option<String>) -> String {
    hint.map_or(String::new(), |hint| format!("\n  hint: {hint}"))
}

/// The hint for a parameter name no sweep knows: a lease timing written as a scenario field
/// is pointed at `lease`, a near miss gets "did you mean", anything else the list.
fn unknown_hint(name: &str) -> String {
    const LEASE_FIELDS: [&str; 7] = [
        "lease_duration",
        "ttl",
        "session_timeout",
        "renew_deadline",
        "retry_period",
        "keepalive",
        "lease_ttl",
    ];
    if LEASE_FIELDS.contains(&name) {
        format!(
            "a lease's timings are swept together as `lease` (etcd's ttl, ZooKeeper's \
             session_timeout, the Kubernetes lease_duration), like `lease=1s,2s`; the other \
             timings keep their ratio to it (the sweep prints the settings as they ran). To \
             vary `{name}` alone, use a scenario's `designs`"
        )
    } else {
        let names: Vec<&str> = algorithms()
            .into_iter()
            .flat_map(|entry| entry.knobs.iter().map(|k| k.name))
            .chain(SCENARIO_PARAMS.iter().map(|(name, ..)| *name))
            .chain(FAULT_PARAMS.iter().map(|f| f.name))
            .collect();
        match scenario::suggest(name, &names) {
            Some(best) => format!("did you mean `{best}`? The parameters: {}", params_help()),
            None => format!("the parameters: {}", params_help()),
        }
    }
}

/// The parameters a sweep can vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// A setting of the scenario's algorithm (one of its knobs).
    Algorithm(Knob),
    /// The cluster size.
    Nodes,
    /// The network's message loss.
    Loss,
    /// The network's latency.
    Latency,
    /// The nemesis' `fault_duration`: how long each fault it draws lasts.
    FaultDuration,
    /// A setting of every explicit fault of one kind.
    Fault(&'static FaultParam),
}

mod fault;
pub use fault::FaultParam;
use fault::{to_ppm, Field, FAULT_PARAMS};

impl Param {
    /// The parameter named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "nodes" => Param::Nodes,
            "loss" => Param::Loss,
            "latency" => Param::Latency,
            "fault_duration" => Param::FaultDuration,
            _ if FAULT_PARAMS.iter().any(|f| f.name == name) => {
                Param::Fault(FAULT_PARAMS.iter().find(|f| f.name == name)?)
            }
            _ => Param::Algorithm(
                *algorithms()
                    .into_iter()
                    .flat_map(|entry| entry.knobs)
                    .find(|knob| knob.name == name)?,
            ),
        })
    }

    /// The parameter's name.
    pub fn name(self) -> &'static str {
        match self {
            Param::Algorithm(knob) => knob.name,
            Param::Nodes => "nodes",
            Param::Loss => "loss",
            Param::Latency => "latency",
            Param::FaultDuration => "fault_duration",
            Param::Fault(f) => f.name,
        }
    }

    /// The parameter as a chart's axis names it.
    pub fn axis_label(self) -> String {
        match self {
            Param::Fault(f) => f.axis.to_string(),
            other => other.name().to_string(),
        }
    }

    /// The form of a value, for hints.
    fn form(self) -> String {
        let form = match self {
            Param::Algorithm(Knob {
                shape: KnobShape::DurationRange,
                ..
            }) => "a range MIN..MAX of durations, MIN no longer than MAX, like 150ms..300ms",
            Param::Algorithm(Knob {
                shape: KnobShape::Duration,
                ..
            }) => "a duration longer than zero, like 50ms",
            Param::Algorithm(Knob {
                shape: KnobShape::Choice(names),
                ..
            }) => return format!("one of {}", names.join(", ")),
            Param::Nodes => {
                return format!(
                    "an integer from 1 to {} (the largest cluster a scenario may ask for), like 5",
                    scenario::MAX_NODES
                )
            }
            Param::Loss => "a probability from 0 to 1, like 0.05",
            Param::Latency => "a range MIN..MAX of durations (uniform), MIN no longer than MAX, like 1ms..10ms, or one duration (constant), like 5ms",
            Param::FaultDuration => "a range MIN..MAX of durations longer than zero, MIN no longer than MAX, like 100ms..5s, or one duration (every fault that long), like 2s",
            Param::Fault(f) => match f.field {
                Field::Step => "a signed duration, like 2s or -500ms",
                Field::Ppm => "an integer in parts per million, like 1000 or -50000",
                Field::Probability => "a probability from 0 to 1, like 0.3",
                Field::Length | Field::HealAfter => "a duration longer than zero, like 5s",
            },
        };
        form.to_string()
    }

    /// The algorithms that have the parameter (`None`: every algorithm).
    fn algorithms(self) -> Option<Vec<&'static str>> {
        let Param::Algorithm(knob) = self else {
            return None;
        };
        let has_knob = |entry: &&AlgorithmEntry| entry.knobs.iter().any(|k| k.name == knob.name);
        Some(
            algorithms()
                .into_iter()
                .filter(has_knob)
                .map(|e| e.name)
                .collect(),
        )
    }
}

/// One value of the parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A range of durations, in nanoseconds.
    Range(u64, u64),
    /// A duration, in nanoseconds.
    Duration(u64),
    /// One of a setting's choices.
    Choice(&'static str),
    /// A count (of nodes).
    Count(usize),
    /// A probability.
    Fraction(f64),
    /// A signed duration in nanoseconds, or a drift in ppm.
    Signed(i64),
}

fn parse_range(text: &str) -> Option<(u64, u64)> {
    let (a, b) = text.split_once("..")?;
    let a = scenario::parse_duration(a.trim()).ok()?;
    let b = scenario::parse_duration(b.trim()).ok()?;
    (a <= b).then_some((a, b))
}

/// Whether two values run alike: probabilities as the parts per million the network takes.
fn same_value(a: &Value, b: &Value) -> bool {
    let ppm = |p: f64| (p * 1_000_000.0).round();
    match (a, b) {
        (Value::Fraction(x), Value::Fraction(y)) => ppm(*x) == ppm(*y),
        _ => a == b,
    }
}

/// Where the value `text` of `param` lies on a numeric axis, with the axis's unit (`""` for
/// counts and probabilities): durations in seconds, drifts in ppm. `None` for ranges and
/// choices, which have no place on a line.
pub fn position(param: Param, text: &str) -> Option<(f64, &'static str)> {
    let seconds = |ns: f64| ns / 1e9;
    match (param, parse_value(param, text)?) {
        (
            Param::Fault(FaultParam {
                field: Field::Ppm, ..
            }),
            Value::Signed(ppm),
        ) => Some((ppm as f64, "ppm")),
        (_, Value::Duration(ns)) => Some((seconds(ns as f64), "s")),
        (_, Value::Signed(ns)) => Some((seconds(ns as f64), "s")),
        (_, Value::Count(n)) => Some((n as f64, "")),
        (_, Value::Fraction(p)) => Some((p, "")),
        (_, Value::Range(..) | Value::Choice(_)) => None,
    }
}

fn parse_value(param: Param, text: &str) -> Option<Value> {
    match param {
        Param::Algorithm(Knob {
            shape: KnobShape::DurationRange,
            ..
        }) => parse_range(text).map(|(a, b)| Value::Range(a, b)),
        Param::Algorithm(Knob {
            shape: KnobShape::Duration,
            ..
        }) => {
            let d = scenario::parse_duration(text).ok()?;
            (d > 0).then_some(Value::Duration(d))
        }
        Param::Algorithm(Knob {
            shape: KnobShape::Choice(names),
            ..
        }) => names
            .iter()
            .find(|name| **name == text)
            .map(|name| Value::Choice(name)),
        Param::Nodes => {
            let n: usize = text.parse().ok()?;
            (n >= 1 && n as u64 <= scenario::MAX_NODES).then_some(Value::Count(n))
        }
        Param::Loss => {
            let p: f64 = text.parse().ok()?;
            (0.0..=1.0).contains(&p).then_some(Value::Fraction(p))
        }
        Param::Latency => {
            if text.contains("..") {
                parse_range(text).map(|(a, b)| Value::Range(a, b))
            } else {
                scenario::parse_duration(text).ok().map(Value::Duration)
            }
        }
        Param::FaultDuration => {
            let (a, b) = match parse_range(text) {
                Some(range) => range,
                None if text.contains("..") => return None,
                None => {
                    let d = scenario::parse_duration(text).ok()?;
                    (d, d)
                }
            };
            (a > 0).then_some(Value::Range(a, b))
        }
        Param::Fault(f) => match f.field {
            Field::Step => scenario::parse_signed_duration(text)
                .ok()
                .map(Value::Signed),
            Field::Ppm => text.parse().ok().map(Value::Signed),
            Field::Probability => parse_value(Param::Loss, text),
            Field::Length | Field::HealAfter => {
                let d = scenario::parse_duration(text).ok()?;
                (d > 0).then_some(Value::Duration(d))
            }
        },
    }
}

/// Parses `NAME=V1,V2,...`: the parameter and its values with their labels.
pub fn parse_param(text: &str) -> Result<(Param, Vec<(String, Value)>), ParamError> {
    let Some((name, values)) = text.split_once('=') else {
        return Err(ParamError::Malformed {
            text: text.to_string(),
        });
    };
    let name = name.trim();
    let Some(param) = Param::parse(name) else {
        return Err(ParamError::Unknown {
            name: name.to_string(),
        });
    };
    let mut parsed: Vec<(String, Value)> = Vec::new();
    for raw in values.split(',') {
        let raw = raw.trim();
        let Some(value) = parse_value(param, raw) else {
            return Err(ParamError::InvalidValue {
                raw: raw.to_string(),
                name: name.to_string(),
                form: param.form(),
            });
        };
        let label = format!("{name}={raw}");
        // Compared as values: `3` and `03`, `1ms` and `1000us`, `0` and `0.0` are one value.
        if let Some((same, _)) = parsed.iter().find(|(_, v)| same_value(v, &value)) {
            let same = same.clone();
            return Err(ParamError::Repeated { label, same });
        }
        parsed.push((label, value));
    }
    Ok((param, parsed))
}

/// The scenario with the parameter set to `value`; an error when it does not apply.
pub fn apply(scenario: &Scenario, param: Param, value: &Value) -> Result<Scenario, ParamError> {
    let mut s = scenario.clone();
    let alg_name = s.algorithm.name();
    if let Some(algs) = param.algorithms()
        && !algs.contains(&alg_name)
    {
        return Err(ParamError::NotForAlgorithm {
            param: param.name(),
            algorithm: alg_name,
            algorithms: algs.join(", "),
        });
    }
    match (param, value) {
        (Param::Algorithm(knob), value) => {
            let value = match *value {
                Value::Range(a, b) => KnobValue::Range(a, b),
                Value::Duration(d) => KnobValue::Duration(d),
                Value::Choice(name) => KnobValue::Choice(name),
                Value::Count(_) | Value::Fraction(_) | Value::Signed(_) => {
                    unreachable!("knob values are parsed as durations or names")
                }
            };
            let cluster = Cluster {
                nodes: s.sim.members as u64,
            };
            s.algorithm = s
                .algorithm
                .vary(&cluster, knob.name, value)
                .map_err(|problem| setting_error(knob.name, value, &problem.error))?;
        }
        (Param::Nodes, Value::Count(n)) => {
            s = s.resized(*n).ok_or_else(|| ParamError::CannotResize {
                n: *n,
                algorithm: s.algorithm.name(),
                most: scenario::max_members(&s.algorithm),
            })?;
        }
        (Param::Loss, Value::Fraction(p)) => {
            s.sim.network.default.loss_ppm = to_ppm(*p);
        }
        (Param::Latency, Value::Range(a, b)) => {
            s.sim.network.default.latency = Latency::Uniform(*a, *b);
        }
        (Param::Latency, Value::Duration(d)) => {
            s.sim.network.default.latency = Latency::Constant(*d);
        }
        (Param::FaultDuration, Value::Range(a, b)) => {
            let Some(nemesis) = s.nemesis.as_mut() else {
                return Err(ParamError::NoNemesis);
            };
            nemesis.fault_duration_ns = (*a, *b);
            // Swarm mode draws each seed's longest fault in a range derived from
            // `fault_duration` when the scenario was read: derived again from the value.
            nemesis.swarm_ranges.longest_fault_ns = (*a, *b);
        }
        (Param::Fault(f), value) => {
            let mut set = 0;
            for (index, fault) in s.sim.faults.iter_mut().enumerate() {
                if !f.set(fault, value) {
                    continue;
                }
                set += 1;
                // The swept value replaces the range the fault had, if any.
                if let Some(spread) = s.fault_spreads.get_mut(index) {
                    f.replace_range(spread);
                }
            }
            if set == 0 {
                return Err(ParamError::NoFaultOfKind {
                    param: f.name,
                    what: f.takes(),
                    example: f.example,
                });
            }
        }
        _ => unreachable!("values are parsed for their parameter"),
    }
    Ok(s)
}

/// A knob value the algorithm's rules refuse: which value, what rule, and the rule's hint.
fn setting_error(knob: &'static str, value: KnobValue, error: &AlgorithmError) -> ParamError {
    let value = match value {
        KnobValue::Duration(ns) => scenario::format_duration_ron(ns),
        KnobValue::Range(a, b) => format!(
            "{}..{}",
            scenario::format_duration_ron(a),
            scenario::format_duration_ron(b)
        ),
        KnobValue::Choice(name) => name.to_string(),
    };
    ParamError::Setting {
        knob,
        value,
        error: error.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_parameter_is_pointed_at_the_one_meant() {
        let error = parse_param("lease_duration=15s").unwrap_err().to_string();
        assert!(error.contains("swept together as `lease`"), "{error}");
        let error = parse_param("election_timout=1s..2s")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("did you mean `election_timeout`?"),
            "{error}"
        );
        let error = parse_param("frobnicate=1").unwrap_err().to_string();
        assert!(error.contains("hint: the parameters: "), "{error}");
    }

    #[test]
    fn one_value_spelt_two_ways_is_refused_as_given_twice() {
        for (text, same) in [
            ("nodes=3,03", "nodes=03 is the same value as nodes=3"),
            ("loss=0,0.0", "loss=0.0 is the same value as loss=0"),
            (
                "latency=1ms,1000us",
                "latency=1000us is the same value as latency=1ms",
            ),
            ("nodes=3,3", "nodes=3 is given twice"),
            (
                "loss=0.1234567,0.1234568",
                "loss=0.1234568 is the same value as loss=0.1234567",
            ),
        ] {
            let error = parse_param(text).expect_err(text).to_string();
            assert!(error.starts_with(same), "{text}: {error}");
        }
        assert!(parse_param("nodes=3,4").is_ok());
    }
}
