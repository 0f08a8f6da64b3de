//! The chooser of a systematic search's run: it replays the ways the schedule prescribes
//! (its scenario's `choices: (take: [...])`) and notes the choice points the run could
//! branch at, after the schedule's last step and inside the search's window.

use splitbrain_sim::choice::{Chosen, Prescribed};
use splitbrain_sim::{ChoiceKind, ChoicePoint, Chooser, Nanos};

/// A choice point a run met, that a schedule may take another way.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Met {
    /// Its place among the run's choice points, from 0.
    pub index: u32,
    /// What it chooses.
    pub kind: ChoiceKind,
    /// When.
    pub at_ns: Nanos,
    /// Its ways.
    pub options: u32,
    /// The way the run took.
    pub default: u32,
}

/// Replays a schedule's ways and notes the points met after it.
pub struct Replay {
    prescribed: Prescribed,
    /// Points are noted from this index and this time on, before `until_ns`.
    from_index: u32,
    from_ns: Nanos,
    until_ns: Nanos,
    /// The points noted.
    pub met: Vec<Met>,
}

impl Replay {
    /// The chooser of a run that takes `chosen`, noting points from `from_ns` (its last
    /// step's time) to `until_ns` (the search's horizon).
    pub fn new(chosen: &[Chosen], from_ns: Nanos, until_ns: Nanos) -> Self {
        let from_index = chosen.iter().map(|c| c.index + 1).max().unwrap_or(0);
        Self {
            prescribed: Prescribed::new(chosen.to_vec()),
            from_index,
            from_ns,
            until_ns,
            met: Vec::new(),
        }
    }
}

impl Chooser for Replay {
    fn choose(&mut self, point: &ChoicePoint) -> u32 {
        let index = self.prescribed.points();
        if let Some(option) = self.prescribed.take(point) {
            return option;
        }
        let inside = (self.from_ns..self.until_ns).contains(&point.at_ns);
        if inside && index >= self.from_index && point.options > 1 {
            self.met.push(Met {
                index,
                kind: point.kind,
                at_ns: point.at_ns,
                options: point.options,
                default: point.default,
            });
        }
        point.default
    }
}
