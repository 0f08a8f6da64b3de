//! A systematic search's first failing schedule, as outputs and shard files carry it.

use super::{Explored, Space, Step};
use crate::hunt::record::Failure;
use serde::{Deserialize, Serialize};
use splitbrain_scenario::format_duration_ron;
use splitbrain_sim::ChoiceKind;

/// The first failing schedule of a search (or of a shard of one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counterexample {
    /// Its place in the search (1 = the fault-free run).
    pub schedule: u64,
    /// Its steps: faults as a scenario writes them, then the other choices.
    pub steps: Vec<String>,
    /// How it failed: the failure keys, with details.
    pub failures: Vec<Failure>,
}

impl Counterexample {
    /// The failing run `found` of `space`, the `number`-th the search ran.
    pub fn of(space: &Space, found: &Explored, number: u64) -> Self {
        let lines = splitbrain_scenario::fault_lines(&space.scenario(&found.schedule));
        let faults = (found.schedule.iter())
            .filter(|s| matches!(s, Step::Fault { .. }))
            .count();
        let choices = found.schedule.iter().filter_map(choice_line);
        Counterexample {
            schedule: number,
            steps: lines[lines.len() - faults..]
                .iter()
                .cloned()
                .chain(choices)
                .collect(),
            failures: found.record.failures.clone(),
        }
    }

    /// The failure keys it breaks, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.failures.iter().map(|f| f.key.as_str())
    }
}

/// A choice step in words; `None` for a fault.
fn choice_line(step: &Step) -> Option<String> {
    let Step::Choose {
        index,
        option,
        at_ns,
        kind,
    } = step
    else {
        return None;
    };
    let what = match kind {
        ChoiceKind::Timeout => "a timeout",
        ChoiceKind::Order => "the order of events at one instant",
    };
    Some(format!(
        "choice point {index} ({what}, at {}) takes way {option}",
        format_duration_ron(*at_ns)
    ))
}
