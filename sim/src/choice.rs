//! Choice points: where one run could go more than one way besides its faults, for a
//! systematic search to enumerate ([`Sim::with_chooser`](crate::Sim::with_chooser)).
//!
//! Two kinds: a randomized timeout a process draws ([`Ctx::draw_timeout`](crate::Ctx::draw_timeout))
//! when the scenario makes timeouts a choice among a few values
//! ([`SimConfig::timeout_choices`](crate::SimConfig::timeout_choices)), and the order of
//! events due at one instant for one process (events for different processes commute: their
//! order is no choice). Without a chooser a run takes each point's default: the value its
//! random stream drew, the events in the order they were queued.

use crate::ids::NodeId;
use crate::time::Nanos;
use serde::Serialize;

/// What a choice point chooses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceKind {
    /// A randomized timeout: which of the evenly spaced values between its bounds.
    Timeout,
    /// Events due at one instant, some of them for one process: which goes first.
    Order,
}

/// One point where a run may go more than one way.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChoicePoint {
    /// What it chooses.
    pub kind: ChoiceKind,
    /// True time of the point.
    pub at_ns: Nanos,
    /// The process it is about (for an order: the first event's).
    pub node: NodeId,
    /// How many ways it can go (at least 2).
    pub options: u32,
    /// The way the run goes without a chooser: the drawn value, or the queued order (0).
    pub default: u32,
}

/// Picks the way a run goes at each choice point. Called in the order the points come; the
/// same answers give the same run.
pub trait Chooser {
    /// The option to take at `point`, below `point.options`.
    fn choose(&mut self, point: &ChoicePoint) -> u32;
}

/// A choice point that takes another way than its default: the run's `index`-th (from 0)
/// takes `option`. What a reproducer of a systematic search's counterexample replays
/// (`choices: (take: [...])` in a scenario).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Chosen {
    /// The choice point's place among the run's, from 0.
    pub index: u32,
    /// The way it takes.
    pub option: u32,
}

/// Replays a list of [`Chosen`] ways, in index order: every other point takes its default.
///
/// ```
/// use splitbrain_sim::choice::{Chosen, Prescribed};
/// use splitbrain_sim::{ChoiceKind, ChoicePoint, Chooser, NodeId};
///
/// let mut p = Prescribed::new(vec![Chosen { index: 1, option: 2 }]);
/// let point = ChoicePoint { kind: ChoiceKind::Timeout, at_ns: 0, node: NodeId(0), options: 3, default: 0 };
/// assert_eq!(p.choose(&point), 0);
/// assert_eq!(p.choose(&point), 2);
/// assert_eq!(p.choose(&point), 0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Prescribed {
    chosen: Vec<Chosen>,
    next: usize,
    count: u32,
}

impl Prescribed {
    /// Replays `chosen` (sorted by index here).
    pub fn new(mut chosen: Vec<Chosen>) -> Self {
        chosen.sort_by_key(|c| c.index);
        Self {
            chosen,
            next: 0,
            count: 0,
        }
    }

    /// The way prescribed for the next point, if one is; counts the point. Its index is
    /// [`Prescribed::points`] before the call.
    pub fn take(&mut self, point: &ChoicePoint) -> Option<u32> {
        let index = self.count;
        self.count += 1;
        let chosen = self.chosen.get(self.next).filter(|c| c.index == index)?;
        self.next += 1;
        Some(chosen.option.min(point.options.saturating_sub(1)))
    }

    /// The points met so far.
    pub fn points(&self) -> u32 {
        self.count
    }
}

impl Chooser for Prescribed {
    fn choose(&mut self, point: &ChoicePoint) -> u32 {
        self.take(point).unwrap_or(point.default)
    }
}

/// The values a timeout between `low` and `high` (inclusive) may take when it is a choice
/// among `values` of them: evenly spaced, both ends included (`low` alone for one value).
///
/// ```
/// use splitbrain_sim::choice::timeout_value;
///
/// assert_eq!(timeout_value(150, 300, 4, 0), 150);
/// assert_eq!(timeout_value(150, 300, 4, 1), 200);
/// assert_eq!(timeout_value(150, 300, 4, 3), 300);
/// ```
pub fn timeout_value(low: Nanos, high: Nanos, values: u32, index: u32) -> Nanos {
    if values <= 1 || high <= low {
        return low;
    }
    let span = u128::from(high - low);
    let step = span * u128::from(index.min(values - 1)) / u128::from(values - 1);
    low + step as Nanos
}
