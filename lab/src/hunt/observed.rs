//! The user's own observations as features of guided search: every `observe(name, value)` a
//! process makes (`Ctx::observe` in Rust, an `observe` effect of an external node) is
//! counted by name, and its value put in a coarse class, so that a run reaching a new count
//! or a new class of value of a name is kept and bred from, as one reaching a new bucket of
//! a built-in coverage counter is (docs/hunting.md, "Guided search").
//!
//! The engine shows observations only to a run's properties, so a run is watched by a
//! property that never breaks ([`Watch`]): nothing the run does changes, and every kind of
//! process (a built-in algorithm, a crate of the user's, an external node) is watched alike.

use splitbrain_scenario::Scenario;
use splitbrain_sim::property::{Breach, Observation, Properties, Property, Value};
use splitbrain_sim::Nanos;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};

/// Classes of value kept per name in one run: a name observed with more kinds of value
/// counts only its first this many (in the order the run made them).
pub const CLASSES_PER_NAME: usize = 32;

/// Names kept per run: a run observing more names counts only the first this many.
pub const NAMES_PER_RUN: usize = 64;

/// Numbers below this are their own class; larger ones fall in log-2 classes (8-15, 16-31...).
pub const EXACT_BELOW: u64 = 8;

/// A number's class: itself if small, else its power of two.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Magnitude {
    /// A number below [`EXACT_BELOW`], as it is.
    Exact(u64),
    /// A number in `2^k..2^(k+1)` (k at least 3).
    Log2(u32),
}

impl Magnitude {
    /// The class of `n`.
    ///
    /// ```
    /// use splitbrain_lab::hunt::observed::Magnitude;
    /// assert_eq!(Magnitude::of(5), Magnitude::Exact(5));
    /// assert_eq!(Magnitude::of(9), Magnitude::Log2(3));
    /// assert_eq!(Magnitude::of(1 << 40).to_string(), "2^40..2^41-1");
    /// ```
    pub fn of(n: u64) -> Self {
        if n < EXACT_BELOW {
            Magnitude::Exact(n)
        } else {
            Magnitude::Log2(u64::BITS - 1 - n.leading_zeros())
        }
    }
}

impl fmt::Display for Magnitude {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Magnitude::Exact(n) => write!(f, "{n}"),
            Magnitude::Log2(k) if k < 20 => write!(f, "{}..{}", 1u64 << k, (2u64 << k) - 1),
            Magnitude::Log2(k) => write!(f, "2^{k}..2^{}-1", k + 1),
        }
    }
}

/// The class of an observed value: what guided search tells apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ValueClass {
    /// A flag, as it is.
    Bool(bool),
    /// A non-negative number (`U64`, or an `I64` of at least 0).
    Number(Magnitude),
    /// A negative `I64`, by its magnitude.
    Negative(Magnitude),
    /// A node, as it is.
    Node(u32),
    /// A pair, each number by its class.
    Pair(Magnitude, Magnitude),
}

impl ValueClass {
    /// The class of `value`; none for [`Value::Unit`] (its name says it all).
    ///
    /// ```
    /// use splitbrain_lab::hunt::observed::{Magnitude, ValueClass};
    /// use splitbrain_sim::property::Value;
    /// assert_eq!(ValueClass::of(Value::Pair(2, 100)),
    ///            Some(ValueClass::Pair(Magnitude::Exact(2), Magnitude::Log2(6))));
    /// assert_eq!(ValueClass::of(Value::I64(-3)), Some(ValueClass::Negative(Magnitude::Exact(3))));
    /// assert_eq!(ValueClass::of(Value::Unit), None);
    /// ```
    pub fn of(value: Value) -> Option<Self> {
        Some(match value {
            Value::Unit => return None,
            Value::Bool(b) => ValueClass::Bool(b),
            Value::U64(n) => ValueClass::Number(Magnitude::of(n)),
            Value::I64(n) if n >= 0 => ValueClass::Number(Magnitude::of(n.unsigned_abs())),
            Value::I64(n) => ValueClass::Negative(Magnitude::of(n.unsigned_abs())),
            Value::Node(node) => ValueClass::Node(node.0),
            Value::Pair(a, b) => ValueClass::Pair(Magnitude::of(a), Magnitude::of(b)),
        })
    }
}

impl fmt::Display for ValueClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueClass::Bool(b) => write!(f, "{b}"),
            ValueClass::Number(m) => write!(f, "{m}"),
            ValueClass::Negative(m) => write!(f, "-({m})"),
            ValueClass::Node(n) => write!(f, "n{n}"),
            ValueClass::Pair(a, b) => write!(f, "[{a}, {b}]"),
        }
    }
}

/// One feature a run's observations reached.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObservedFeature {
    /// `name` was observed a number of times in this log-2 bucket (0: once, 1: 2-3,
    /// 2: 4-7...).
    Count {
        /// The observation's name.
        name: &'static str,
        /// The bucket of how many times.
        bucket: u32,
    },
    /// `name` was observed with a value of this class.
    Value {
        /// The observation's name.
        name: &'static str,
        /// The value's class.
        class: ValueClass,
    },
}

impl ObservedFeature {
    /// The observation's name.
    pub fn name(&self) -> &'static str {
        match self {
            ObservedFeature::Count { name, .. } | ObservedFeature::Value { name, .. } => name,
        }
    }
}

impl fmt::Display for ObservedFeature {
    /// `lease_acted x4-7` (observed 4 to 7 times), `lease_acted=8..15` (a value).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ObservedFeature::Count { name, bucket: 0 } => write!(f, "{name} x1"),
            ObservedFeature::Count { name, bucket } if bucket < 63 => {
                write!(f, "{name} x{}-{}", 1u64 << bucket, (2u64 << bucket) - 1)
            }
            ObservedFeature::Count { name, bucket } => write!(f, "{name} x2^{bucket}+"),
            ObservedFeature::Value { name, class } => write!(f, "{name}={class}"),
        }
    }
}

/// What one run observed, by name.
#[derive(Clone, Debug, Default)]
struct Tally {
    names: BTreeMap<&'static str, NameTally>,
}

#[derive(Clone, Debug, Default)]
struct NameTally {
    count: u64,
    classes: BTreeSet<ValueClass>,
}

impl Tally {
    fn add(&mut self, name: &'static str, value: Value) {
        if !self.names.contains_key(name) && self.names.len() >= NAMES_PER_RUN {
            return;
        }
        let tally = self.names.entry(name).or_default();
        tally.count += 1;
        if tally.classes.len() < CLASSES_PER_NAME {
            tally.classes.extend(ValueClass::of(value));
        }
    }

    /// The features, in order (by name, count first).
    fn features(&self) -> Vec<ObservedFeature> {
        let mut features = Vec::new();
        for (&name, tally) in &self.names {
            let bucket = u64::BITS - 1 - tally.count.leading_zeros();
            features.push(ObservedFeature::Count { name, bucket });
            features.extend(
                tally
                    .classes
                    .iter()
                    .map(|&class| ObservedFeature::Value { name, class }),
            );
        }
        features
    }
}

/// Watches the user observations of one run: [`Watch::watching`] adds a property that never
/// breaks and tallies them; [`Watch::features`] says what they reached.
///
/// ```
/// use splitbrain_lab::hunt::observed::Watch;
/// use splitbrain_sim::property::{Observation, Value};
/// use splitbrain_sim::NodeId;
///
/// let watch = Watch::default();
/// let properties = watch.properties(&[]).expect("a free name");
/// let mut states = properties.instantiate();
/// for value in [1u64, 2, 100] {
///     let o = Observation::User { node: NodeId(0), name: "stage", value: Value::U64(value) };
///     assert!(states[0].check(0, &o).is_ok(), "it never breaks");
/// }
/// let seen: Vec<String> = watch.features().iter().map(|f| f.to_string()).collect();
/// assert_eq!(seen, ["stage x2-3", "stage=1", "stage=2", "stage=64..127"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Watch {
    tally: Arc<Mutex<Tally>>,
}

/// The names the watching property may take: the first that no property of the run has.
const WATCHER_NAMES: [&str; 3] = [
    "guided_observations",
    "guided_observations_2",
    "guided_observations_3",
];

impl Watch {
    /// The watching property alone, named so as not to clash with `taken` (the run's own
    /// property names); none if every name it may take is taken (the run is then not
    /// watched).
    pub fn properties(&self, taken: &[&str]) -> Option<Properties> {
        let name = *WATCHER_NAMES.iter().find(|n| !taken.contains(n))?;
        let tally = Arc::clone(&self.tally);
        Some(Properties::new().with(Arc::new(move || {
            Box::new(Watcher {
                name,
                tally: Arc::clone(&tally),
            })
        })))
    }

    /// `scenario` with the watching property added after its own; unchanged if its algorithm
    /// never observes anything (`Algorithm::OBSERVES`: watching costs a run about 10%) or no
    /// name is free (see [`Watch::properties`]).
    pub fn watching(&self, mut scenario: Scenario) -> Scenario {
        if !scenario.algorithm.observes() {
            return scenario;
        }
        let mut taken = scenario.properties.names();
        taken.extend(scenario.algorithm.property_names());
        if let Some(watcher) = self.properties(&taken) {
            scenario.properties = scenario.properties.and(&watcher);
        }
        scenario
    }

    /// What the watched run's observations reached, in order.
    pub fn features(&self) -> Vec<ObservedFeature> {
        lock(&self.tally).features()
    }
}

fn lock(tally: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    // A run that panicked may have left it poisoned; what it tallied is still right.
    tally.lock().unwrap_or_else(|e| e.into_inner())
}

/// The property [`Watch`] adds: it tallies user observations and never breaks.
struct Watcher {
    name: &'static str,
    tally: Arc<Mutex<Tally>>,
}

impl Property for Watcher {
    fn name(&self) -> &'static str {
        self.name
    }

    fn check(&mut self, _now_ns: Nanos, observation: &Observation) -> Result<(), Breach> {
        if let Observation::User { name, value, .. } = *observation {
            lock(&self.tally).add(name, value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_sim::NodeId;

    fn user(name: &'static str, value: Value) -> Observation {
        Observation::User {
            node: NodeId(1),
            name,
            value,
        }
    }

    #[test]
    fn counts_bucket_by_powers_of_two_and_values_by_class() {
        let mut t = Tally::default();
        for n in 0..5u64 {
            t.add("epoch", Value::U64(n * 10));
        }
        t.add("held", Value::Bool(true));
        t.add("unit", Value::Unit);
        let shown: Vec<String> = t.features().iter().map(|f| f.to_string()).collect();
        assert_eq!(
            shown,
            [
                "epoch x4-7",
                "epoch=0",
                "epoch=8..15",
                "epoch=16..31",
                "epoch=32..63",
                "held x1",
                "held=true",
                "unit x1"
            ]
        );
    }

    #[test]
    fn a_run_keeps_at_most_its_caps_of_names_and_classes() {
        let mut t = Tally::default();
        for n in 0..100u64 {
            t.add("big", Value::U64(1 << (n % 64)));
        }
        let values = t.features().len() - 1;
        assert_eq!(values, CLASSES_PER_NAME);
        let names: Vec<&'static str> = (0..NAMES_PER_RUN + 5)
            .map(|i| &*Box::leak(format!("n{i:03}").into_boxed_str()))
            .collect();
        let mut t = Tally::default();
        names.iter().for_each(|n| t.add(n, Value::Unit));
        assert_eq!(t.names.len(), NAMES_PER_RUN);
    }

    #[test]
    fn the_watcher_takes_a_name_no_property_of_the_run_has() {
        let watch = Watch::default();
        let first = watch.properties(&[]).unwrap();
        assert_eq!(first.names(), ["guided_observations"]);
        let second = watch.properties(&["guided_observations"]).unwrap();
        assert_eq!(second.names(), ["guided_observations_2"]);
        assert!(watch.properties(&WATCHER_NAMES).is_none());
        let mut states = second.instantiate();
        assert!(states[0].check(5, &user("x", Value::I64(-9))).is_ok());
        assert!(states[0]
            .check(6, &Observation::Crash { node: NodeId(0) })
            .is_ok());
        let shown: Vec<String> = watch.features().iter().map(|f| f.to_string()).collect();
        assert_eq!(shown, ["x x1", "x=-(8..15)"]);
    }
}
