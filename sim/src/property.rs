//! Your own safety properties, checked at every event like the built-in invariants.
//!
//! As a run goes, the engine produces a typed stream of [`Observation`]s: leadership claims,
//! step-downs, crashes and restarts, every process's term after each of its handlers, every
//! write the fenced resource received with its verdict, and whatever a process reports about
//! itself through [`Ctx::observe`](crate::Ctx::observe). A [`Property`] is shown every
//! observation, in order, with the true time; when it says it broke, the break is recorded
//! as a [`Violation`](crate::Violation) of [`Invariant::Property`](crate::Invariant) under
//! the property's name, exactly like `election_safety` or `fencing_safety`: in the report,
//! in the trace's `check` column, in a hunt, a shrink and a replay.
//!
//! A run gets its properties from [`Properties`] (a list of factories, cheap to clone and
//! share between threads): every run makes fresh property states, so a hunt over many seeds
//! never carries one seed's state into the next. With no property installed the engine builds
//! no observation at all.
//!
//! ```
//! use splitbrain_sim::property::{Breach, Observation, Properties};
//!
//! // Once a node has claimed a term, nobody claims a lower one later (terms only rise).
//! let properties = Properties::new().always(
//!     "claims_rise",
//!     |highest: &mut u64, _now, observation: &Observation| {
//!         if let Observation::Claim { node, term, .. } = *observation {
//!             if term < *highest {
//!                 return Err(Breach::new(format!("{node} claimed term {term} after term {highest}")));
//!             }
//!             *highest = term;
//!         }
//!         Ok(())
//!     },
//! );
//! assert_eq!(properties.names(), vec!["claims_rise"]);
//! ```

use crate::ids::NodeId;
use crate::invariant::Invariant;
use crate::time::Nanos;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// One thing the engine saw happen, in the order it happened. Properties are shown every
/// observation of a run ([`Property::check`]); nothing in it borrows engine state, so a
/// property may keep what it likes.
///
/// Within one handler call the order is: the effects it asked for that take effect at once
/// (claims and step-downs, in the order it asked), then its own [`Observation::User`]s (in
/// the order it made them), then its [`Observation::Term`]. Writes are observed when they
/// reach the resource, over the network, later.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Observation {
    /// `node` now believes it leads `term` and writes with `token`
    /// ([`Ctx::became_leader`](crate::Ctx::became_leader)).
    Claim {
        /// The claimant.
        node: NodeId,
        /// The term or epoch it claims.
        term: u64,
        /// The fencing token it writes with.
        token: u64,
    },
    /// `node` no longer believes it leads ([`Ctx::stepped_down`](crate::Ctx::stepped_down)).
    StepDown {
        /// The node that stepped down.
        node: NodeId,
    },
    /// `node` crashed: it stops, and no longer believes it leads.
    Crash {
        /// The node that crashed.
        node: NodeId,
    },
    /// `node` came back from a crash with only its durable state (observed before its
    /// restart handler's own observations).
    Restart {
        /// The node that restarted.
        node: NodeId,
    },
    /// `node`'s term or epoch after one of its handlers ([`Process::term`](crate::Process::term)),
    /// reported after every handler call, changed or not.
    Term {
        /// The node.
        node: NodeId,
        /// Its term after the handler.
        term: u64,
    },
    /// A write from `from` carrying `token` reached the fenced resource.
    Write {
        /// The writer.
        from: NodeId,
        /// The fencing token the write carried.
        token: u64,
        /// True time the writer sent it.
        sent_ns: Nanos,
        /// What the resource did with it.
        verdict: WriteOutcome,
    },
    /// Something a process reported about itself ([`Ctx::observe`](crate::Ctx::observe)).
    User {
        /// The process that reported it.
        node: NodeId,
        /// The observation's name, as the process gave it.
        name: &'static str,
        /// Its value.
        value: Value,
    },
}

impl Observation {
    /// The node the observation is about (the writer, for a write).
    pub fn node(&self) -> NodeId {
        match *self {
            Observation::Claim { node, .. }
            | Observation::StepDown { node }
            | Observation::Crash { node }
            | Observation::Restart { node }
            | Observation::Term { node, .. }
            | Observation::User { node, .. } => node,
            Observation::Write { from, .. } => from,
        }
    }
}

/// What the fenced resource did with a write.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum WriteOutcome {
    /// Accepted. `stale` when the token was below the highest accepted before it (possible
    /// only with fencing off: `fencing_safety` breaks).
    Accepted {
        /// The token was below the highest the resource had accepted.
        stale: bool,
    },
    /// Rejected by fencing: the token was below `highest`, the highest accepted so far.
    Rejected {
        /// The highest token accepted so far.
        highest: u64,
    },
}

impl WriteOutcome {
    /// Whether the resource accepted the write.
    pub fn accepted(self) -> bool {
        matches!(self, WriteOutcome::Accepted { .. })
    }
}

/// The value of a user observation ([`Ctx::observe`](crate::Ctx::observe)).
///
/// Why this shape: a value is a few machine words with no heap and no floating point, so
/// recording one costs a few stores, it is `Copy` (a property can keep it as it is), it
/// compares and orders the same way on every machine (determinism: no `NaN`, no rounding),
/// and it prints the same way everywhere. What a safety property about leadership looks at
/// fits: a flag, a count or term, a node, a (term, index) or (key, version) pair. A richer
/// value belongs in the process's own state, observed as several values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// No value: the name says it all (`lock_released`).
    Unit,
    /// A flag.
    Bool(bool),
    /// A count, term, index or token.
    U64(u64),
    /// A signed quantity (a clock reading, a difference).
    I64(i64),
    /// A node.
    Node(NodeId),
    /// Two numbers: (term, index), (key, version), (holder, token).
    Pair(u64, u64),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unit => Ok(()),
            Value::Bool(b) => write!(f, "{b}"),
            Value::U64(n) => write!(f, "{n}"),
            Value::I64(n) => write!(f, "{n}"),
            Value::Node(node) => write!(f, "{node}"),
            Value::Pair(a, b) => write!(f, "({a}, {b})"),
        }
    }
}

impl From<()> for Value {
    fn from((): ()) -> Self {
        Value::Unit
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::U64(n)
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Self {
        Value::U64(u64::from(n))
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::I64(n)
    }
}

impl From<NodeId> for Value {
    fn from(node: NodeId) -> Self {
        Value::Node(node)
    }
}

impl From<(u64, u64)> for Value {
    fn from((a, b): (u64, u64)) -> Self {
        Value::Pair(a, b)
    }
}

/// A process's own observation as the engine collects it during one handler call.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UserObservation {
    /// The observation's name.
    pub name: &'static str,
    /// Its value.
    pub value: Value,
}

/// How a property broke: what happened, for people, and the nodes involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    /// What happened, for people: `n0 and n2 both hold the lock`. The engine appends the
    /// true time, as for the built-in invariants.
    pub detail: String,
    /// The nodes involved; empty means the node of the observation that broke it.
    pub nodes: Vec<NodeId>,
}

impl Breach {
    /// A breach described by `detail`, involving the node of the observation that broke it.
    pub fn new(detail: impl Into<String>) -> Self {
        Self {
            detail: detail.into(),
            nodes: Vec::new(),
        }
    }

    /// The same breach, naming the nodes involved (the two holders, ...).
    pub fn nodes(mut self, nodes: impl IntoIterator<Item = NodeId>) -> Self {
        self.nodes = nodes.into_iter().collect();
        self
    }
}

impl From<String> for Breach {
    fn from(detail: String) -> Self {
        Breach::new(detail)
    }
}

impl From<&str> for Breach {
    fn from(detail: &str) -> Self {
        Breach::new(detail)
    }
}

/// A safety property of your own, checked at every observation of a run.
///
/// The engine calls [`Property::check`] with every [`Observation`] of the run, in order, and
/// the true time it happened at. A property that returns `Err` broke there: the engine
/// records a [`Violation`](crate::Violation) of
/// [`Invariant::Property`](crate::Invariant) named [`Property::name`] (the first
/// break in full, later ones counted) and goes on showing it observations. A property that
/// panics is recorded as broken by its panic (the detail says so and quotes the message)
/// and is not asked again in that run.
///
/// A property must be deterministic: its verdict may depend only on what it was shown (no
/// clock, no unseeded randomness, no iteration over a `HashMap`), or replays and shrinks
/// stop reproducing it.
///
/// ```
/// use splitbrain_sim::property::{Breach, Observation, Property};
/// use splitbrain_sim::{Nanos, NodeId};
///
/// /// No write is rejected by fencing: leaders hand over cleanly.
/// struct NoRejectedWrite;
///
/// impl Property for NoRejectedWrite {
///     fn name(&self) -> &'static str {
///         "no_rejected_write"
///     }
///     fn check(&mut self, _now: Nanos, observation: &Observation) -> Result<(), Breach> {
///         match *observation {
///             Observation::Write { from, token, verdict, .. } if !verdict.accepted() => {
///                 Err(Breach::new(format!("the resource rejected token {token} from {from}")))
///             }
///             _ => Ok(()),
///         }
///     }
/// }
///
/// let mut property = NoRejectedWrite;
/// let write = Observation::Write {
///     from: NodeId(1),
///     token: 3,
///     sent_ns: 0,
///     verdict: splitbrain_sim::property::WriteOutcome::Rejected { highest: 4 },
/// };
/// assert!(property.check(10, &write).is_err());
/// ```
pub trait Property: Send {
    /// The property's stable name: it names the violation in every output (report, trace
    /// `check` column, hunt, junit) and must differ from the built-in invariants' names
    /// (`election_safety`, ...) and from the other properties of the run. snake_case reads
    /// best next to the built-in names.
    fn name(&self) -> &'static str;

    /// Shown one observation at true time `now_ns`; `Err` if the property broke there.
    fn check(&mut self, now_ns: Nanos, observation: &Observation) -> Result<(), Breach>;

    /// What the property measured over the run, asked once at its end (`end_ns`): numbers
    /// the report carries beside the built-in measures (`RunReport::measures`), and that
    /// `compare`, `sweep` and `hunt` aggregate over seeds. A property that only checks
    /// measures nothing (the default). Like its verdict, a measure may depend only on what
    /// the property was shown.
    ///
    /// ```
    /// use splitbrain_sim::property::{Breach, Measured, Observation, Property};
    /// use splitbrain_sim::Nanos;
    ///
    /// /// How many leadership claims a run made: a measure, never a breach.
    /// #[derive(Default)]
    /// struct Claims(u64);
    ///
    /// impl Property for Claims {
    ///     fn name(&self) -> &'static str {
    ///         "claims"
    ///     }
    ///     fn check(&mut self, _now: Nanos, observation: &Observation) -> Result<(), Breach> {
    ///         self.0 += u64::from(matches!(observation, Observation::Claim { .. }));
    ///         Ok(())
    ///     }
    ///     fn measures(&self, _end_ns: Nanos) -> Vec<Measured> {
    ///         vec![Measured::new("claims", self.0 as f64)]
    ///     }
    /// }
    /// assert_eq!(Claims(3).measures(0)[0].value, 3.0);
    /// ```
    fn measures(&self, _end_ns: Nanos) -> Vec<Measured> {
        Vec::new()
    }

    /// What the property followed over the run, asked once at its end (`end_ns`): step
    /// curves the report carries (`RunReport::curves`) and that `compare` draws, one line
    /// per design, as each time's median over the seeds. A property that follows nothing
    /// gives none (the default).
    ///
    /// ```
    /// use splitbrain_sim::property::{Breach, Curve, Observation, Property};
    /// use splitbrain_sim::Nanos;
    ///
    /// /// How many leadership claims were made by each moment of a run.
    /// #[derive(Default)]
    /// struct Claims(Vec<(Nanos, f64)>);
    ///
    /// impl Property for Claims {
    ///     fn name(&self) -> &'static str {
    ///         "claims"
    ///     }
    ///     fn check(&mut self, now: Nanos, observation: &Observation) -> Result<(), Breach> {
    ///         if matches!(observation, Observation::Claim { .. }) {
    ///             self.0.push((now, self.0.len() as f64 + 1.0));
    ///         }
    ///         Ok(())
    ///     }
    ///     fn curves(&self, end_ns: Nanos) -> Vec<Curve> {
    ///         vec![Curve::new("claims", self.0.clone(), end_ns)]
    ///     }
    /// }
    /// let claims = Claims(vec![(5, 1.0)]);
    /// assert_eq!(claims.curves(9)[0].points, [(0, 0.0), (5, 1.0), (9, 1.0)]);
    /// ```
    fn curves(&self, _end_ns: Nanos) -> Vec<Curve> {
        Vec::new()
    }
}

/// A quantity a property followed over a run ([`Property::curves`]): a step function,
/// each point's value holding from its time to the next point's, from 0 to the run's end.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Curve {
    /// The curve's name, unique in the run, snake_case.
    pub name: &'static str,
    /// `(true time, value)`, sorted by time, the first at 0 and the last at the run's end.
    pub points: Vec<(Nanos, f64)>,
}

impl Curve {
    /// The step curve through `steps` (sorted by time; a later step at the same time
    /// wins), starting at 0 from time 0 and held to `end_ns`.
    pub fn new(name: &'static str, steps: Vec<(Nanos, f64)>, end_ns: Nanos) -> Self {
        let mut points: Vec<(Nanos, f64)> = Vec::with_capacity(steps.len() + 2);
        points.push((0, 0.0));
        for (at, value) in steps.into_iter().filter(|&(at, _)| at <= end_ns) {
            match points.last_mut() {
                Some(last) if last.0 == at => last.1 = value,
                _ => points.push((at, value)),
            }
        }
        let last = points.last().map_or(0.0, |&(_, value)| value);
        if points.last().is_some_and(|&(at, _)| at < end_ns) {
            points.push((end_ns, last));
        }
        Self { name, points }
    }

    /// The value at `at_ns`: the last point's at or before it.
    pub fn at(&self, at_ns: Nanos) -> f64 {
        let after = self.points.partition_point(|&(t, _)| t <= at_ns);
        after.checked_sub(1).map_or(0.0, |i| self.points[i].1)
    }
}

/// One number a property measured over a run ([`Property::measures`]), under a stable
/// snake_case name that ends in its unit where it has one (`_s`, `_range_s`, `_per_s`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measured {
    /// The measure's name, unique in the run.
    pub name: &'static str,
    /// Its value (NaN when the run gave nothing to measure: a quantile of no sample).
    pub value: f64,
}

impl Measured {
    /// `value` under `name`.
    pub fn new(name: &'static str, value: f64) -> Self {
        Self { name, value }
    }
}

/// Makes a fresh property state for one run.
pub type PropertyFactory = Arc<dyn Fn() -> Box<dyn Property> + Send + Sync>;

/// The properties a run checks besides the built-in invariants: factories, so that every run
/// gets fresh states. Cheap to clone (the factories are shared), `Send + Sync`, and printed
/// by their names.
///
/// ```
/// use splitbrain_sim::property::{Observation, Properties};
///
/// // At most one node claims leadership over the whole run (a "sticky leader" design).
/// let properties = Properties::new().always(
///     "one_leader_ever",
///     |first: &mut Option<splitbrain_sim::NodeId>, _now, observation: &Observation| {
///         if let Observation::Claim { node, .. } = *observation {
///             match *first {
///                 Some(leader) if leader != node => {
///                     return Err(format!("{node} claimed after {leader}").into());
///                 }
///                 _ => *first = Some(node),
///             }
///         }
///         Ok(())
///     },
/// );
/// assert_eq!(format!("{properties:?}"), r#"Properties(["one_leader_ever"])"#);
/// ```
#[derive(Clone, Default)]
pub struct Properties {
    factories: Vec<PropertyFactory>,
}

impl Properties {
    /// No properties.
    pub fn new() -> Self {
        Self::default()
    }

    /// These properties and the one `factory` makes.
    ///
    /// # Panics
    ///
    /// If its name is a built-in invariant's, a hunt's failure key ([`RESERVED_NAMES`]),
    /// another property's here (a violation must say which property broke), or not lowercase
    /// letters, digits and `_` (it names files and columns).
    pub fn with(mut self, factory: PropertyFactory) -> Self {
        let name = factory().name();
        assert!(
            Invariant::from_name(name).is_none() && !RESERVED_NAMES.contains(&name),
            "property name {name:?} is a built-in invariant's or a hunt's failure key"
        );
        assert!(
            is_well_formed(name),
            "property name {name:?}: use lowercase letters, digits and `_`, starting with a letter"
        );
        assert!(
            !self.names().contains(&name),
            "two properties are named {name:?}"
        );
        self.factories.push(factory);
        self
    }

    /// These properties and `name`, a property written as a closure over a state of type
    /// `S` (fresh from `S::default()` in every run): the stateright style.
    pub fn always<S, F>(self, name: &'static str, check: F) -> Self
    where
        S: Default + Send + 'static,
        F: Fn(&mut S, Nanos, &Observation) -> Result<(), Breach> + Send + Sync + 'static,
    {
        self.with(always(name, check))
    }

    /// These properties and `other`'s after them (an algorithm's own, then a test's).
    ///
    /// # Panics
    ///
    /// As [`Properties::with`], if two have the same name.
    pub fn and(&self, other: &Properties) -> Properties {
        other
            .factories
            .iter()
            .fold(self.clone(), |all, factory| all.with(factory.clone()))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.factories.is_empty()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.factories.len()
    }

    /// Their names, in the order they were added.
    pub fn names(&self) -> Vec<&'static str> {
        self.factories.iter().map(|f| f().name()).collect()
    }

    /// Fresh states of every property, for one run.
    pub fn instantiate(&self) -> Vec<Box<dyn Property>> {
        self.factories.iter().map(|f| f()).collect()
    }
}

/// Whether `name` can name a property: lowercase letters, digits and `_`, starting with a
/// letter (it names files, columns and failure keys).
pub(crate) fn is_well_formed(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Failure keys a hunt gives outcomes that are not invariants (a panic, a run past its
/// limits, a refused effect, a missed objective): no property may take them.
pub const RESERVED_NAMES: &[&str] = &["panic", "limit", "refused", "objective"];

/// Two sets of properties are equal when they hold the same names in the same order (code
/// cannot be compared; a name says which property it is).
impl PartialEq for Properties {
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names()
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Properties").field(&self.names()).finish()
    }
}

/// A factory of the property `name` written as a closure over a state of type `S`, fresh
/// from `S::default()` in every run.
///
/// ```
/// use splitbrain_sim::property::{always, Observation};
///
/// let factory = always("no_step_down", |_: &mut (), _now, observation: &Observation| {
///     match observation {
///         Observation::StepDown { node } => Err(format!("{node} stepped down").into()),
///         _ => Ok(()),
///     }
/// });
/// assert_eq!(factory().name(), "no_step_down");
/// ```
pub fn always<S, F>(name: &'static str, check: F) -> PropertyFactory
where
    S: Default + Send + 'static,
    F: Fn(&mut S, Nanos, &Observation) -> Result<(), Breach> + Send + Sync + 'static,
{
    let check = Arc::new(check);
    Arc::new(move || {
        Box::new(Always {
            name,
            state: S::default(),
            check: Arc::clone(&check),
        })
    })
}

/// A closure property and its state ([`always`]).
struct Always<S, F> {
    name: &'static str,
    state: S,
    check: Arc<F>,
}

impl<S, F> Property for Always<S, F>
where
    S: Send,
    F: Fn(&mut S, Nanos, &Observation) -> Result<(), Breach> + Send + Sync,
{
    fn name(&self) -> &'static str {
        self.name
    }

    fn check(&mut self, now_ns: Nanos, observation: &Observation) -> Result<(), Breach> {
        (self.check)(&mut self.state, now_ns, observation)
    }
}

/// The properties of one run, as the engine holds them: each with its state, and whether it
/// panicked (then it is asked nothing more).
pub(crate) struct Installed {
    pub(crate) property: Box<dyn Property>,
    pub(crate) name: &'static str,
    pub(crate) panicked: bool,
}

impl Installed {
    pub(crate) fn all(properties: &Properties) -> Vec<Installed> {
        properties
            .instantiate()
            .into_iter()
            .map(|property| Installed {
                name: property.name(),
                property,
                panicked: false,
            })
            .collect()
    }

    /// What the property measured (nothing if it panicked: its state is not to be trusted).
    pub(crate) fn measures(&self, end_ns: Nanos) -> Vec<Measured> {
        if self.panicked {
            return Vec::new();
        }
        self.property.measures(end_ns)
    }

    /// What the property followed (nothing if it panicked).
    pub(crate) fn curves(&self, end_ns: Nanos) -> Vec<Curve> {
        if self.panicked {
            return Vec::new();
        }
        self.property.curves(end_ns)
    }

    /// Asks the property about `observation`; a panic comes back as a breach that says so.
    pub(crate) fn check(&mut self, now_ns: Nanos, observation: &Observation) -> Result<(), Breach> {
        if self.panicked {
            return Ok(());
        }
        let property = &mut self.property;
        let asked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            property.check(now_ns, observation)
        }));
        asked.unwrap_or_else(|payload| {
            self.panicked = true;
            let message = panic_text(payload.as_ref());
            Err(Breach::new(format!(
                "the property panicked at {observation_kind} of {node}: {message}",
                observation_kind = observation_kind(observation),
                node = observation.node(),
            )))
        })
    }
}

/// A panic's message, when it has one.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// The observation's kind, for messages.
fn observation_kind(observation: &Observation) -> &'static str {
    match observation {
        Observation::Claim { .. } => "a claim",
        Observation::StepDown { .. } => "a step-down",
        Observation::Crash { .. } => "a crash",
        Observation::Restart { .. } => "a restart",
        Observation::Term { .. } => "a term report",
        Observation::Write { .. } => "a write",
        Observation::User { name, .. } => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closure_property_gets_fresh_state_in_every_instance() {
        let properties = Properties::new().always("count", |n: &mut u64, _, _: &Observation| {
            *n += 1;
            if *n > 1 {
                Err("twice".into())
            } else {
                Ok(())
            }
        });
        let crash = Observation::Crash { node: NodeId(0) };
        for _ in 0..2 {
            let mut states = properties.instantiate();
            assert!(states[0].check(0, &crash).is_ok());
            assert!(states[0].check(1, &crash).is_err());
        }
    }

    #[test]
    #[should_panic(expected = "built-in invariant")]
    fn a_property_may_not_take_a_built_in_name() {
        let _ = Properties::new().always("election_safety", |_: &mut (), _, _| Ok(()));
    }

    #[test]
    #[should_panic(expected = "two properties")]
    fn two_properties_may_not_share_a_name() {
        let _ = Properties::new()
            .always("same", |_: &mut (), _, _| Ok(()))
            .always("same", |_: &mut (), _, _| Ok(()));
    }

    #[test]
    fn values_print_plainly() {
        assert_eq!(Value::from(3u64).to_string(), "3");
        assert_eq!(Value::from(NodeId(2)).to_string(), "n2");
        assert_eq!(Value::from((1, 2)).to_string(), "(1, 2)");
        assert_eq!(Value::from(()).to_string(), "");
    }
}
