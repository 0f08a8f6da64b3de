//! The per-range safety properties, checked at every observation of every run
//! (`Algorithm::properties`); `range_fencing` is in `fencing.rs`. Each keeps maps keyed by range: one observation costs
//! O(log R) whatever the number of ranges.

use splitbrain_sim::property::{Breach, Observation, Properties, Value};
use splitbrain_sim::NodeId;
use std::collections::BTreeMap;

/// The observation a store makes when it becomes a range's leader: `(range, term)`.
pub const RANGE_LEADER: &str = "range_leader";
/// The observation a store makes when it campaigns in a range: `(range, term)`.
pub const CAMPAIGN: &str = "campaign";
/// The observation a leader makes when the entry it appended on election commits: the
/// election is over. `(range, term)`.
pub const LEADER_READY: &str = "leader_ready";
/// The observation a store makes when it stops leading a range: `(range, term)`.
pub const LEADER_END: &str = "leader_end";
/// The observation a store makes when it starts holding a usable lease: `(range, seq)`.
pub const LEASE_START: &str = "lease_start";
/// The observation a store makes when its lease stops being usable: `(range, seq)`.
pub const LEASE_END: &str = "lease_end";
/// The observation a leaseholder makes when it starts moving its lease to another store:
/// `(range, the new lease's seq)`; its `lease_end` follows at once.
pub const LEASE_TRANSFER: &str = "lease_transfer";
/// The observation a store makes on each heartbeat round: how many messages it has sent
/// since the run began, restarts included (a count).
pub const MESSAGES_SENT: &str = "messages_sent";
/// The observation a store serving a range (leading it and holding its lease) makes for
/// each write it sends to the range's resource: `(range, seq)`, its lease's sequence as
/// the fencing token.
pub const RANGE_WRITE: &str = "range_write";

/// `range_election_safety`, `lease_disjointness` and `range_fencing`.
pub fn properties() -> Properties {
    Properties::new()
        .always("range_election_safety", range_election_safety)
        .always("lease_disjointness", lease_disjointness)
        .with(std::sync::Arc::new(|| {
            Box::new(super::fencing::RangeResources::default())
        }))
}

/// Raft's election safety, per range: at most one leader per term of each range.
fn range_election_safety(
    leaders: &mut BTreeMap<(u64, u64), NodeId>,
    _now_ns: u64,
    observation: &Observation,
) -> Result<(), Breach> {
    let Observation::User {
        node,
        name: RANGE_LEADER,
        value: Value::Pair(range, term),
    } = *observation
    else {
        return Ok(());
    };
    match leaders.insert((range, term), node) {
        Some(first) if first != node => Err(Breach::new(format!(
            "{first} and {node} both lead term {term} of range {range}"
        ))
        .nodes([first, node])),
        _ => Ok(()),
    }
}

/// Who holds each range's lease now, as the stores report it.
#[derive(Default)]
struct Holders {
    /// Per range: the holder, its lease sequence, and the holder's incarnation then.
    by_range: BTreeMap<u64, (NodeId, u64, u64)>,
    /// Per store: how many times it crashed. A crash ends every lease it held at once
    /// without touching the map (O(1)): entries of an older incarnation are not held.
    incarnations: Vec<u64>,
}

impl Holders {
    fn incarnation(&mut self, node: NodeId) -> &mut u64 {
        if self.incarnations.len() <= node.index() {
            self.incarnations.resize(node.index() + 1, 0);
        }
        &mut self.incarnations[node.index()]
    }

    /// The live holder of `range`'s lease, with its sequence.
    fn holder(&mut self, range: u64) -> Option<(NodeId, u64)> {
        let (node, seq, incarnation) = *self.by_range.get(&range)?;
        (*self.incarnation(node) == incarnation).then_some((node, seq))
    }
}

/// At most one store believes it holds a usable lease of a range at any true time.
fn lease_disjointness(
    holders: &mut Holders,
    _now_ns: u64,
    observation: &Observation,
) -> Result<(), Breach> {
    match *observation {
        Observation::Crash { node } => *holders.incarnation(node) += 1,
        Observation::User {
            node,
            name: LEASE_START,
            value: Value::Pair(range, seq),
        } => {
            if let Some((other, other_seq)) = holders.holder(range).filter(|(n, _)| *n != node) {
                return Err(Breach::new(format!(
                    "{node} holds lease {seq} of range {range} while {other} holds lease \
                     {other_seq}"
                ))
                .nodes([other, node]));
            }
            let incarnation = *holders.incarnation(node);
            holders.by_range.insert(range, (node, seq, incarnation));
        }
        Observation::User {
            node,
            name: LEASE_END,
            value: Value::Pair(range, _),
        } if holders.holder(range).is_some_and(|(n, _)| n == node) => {
            holders.by_range.remove(&range);
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(node: u32, name: &'static str, a: u64, b: u64) -> Observation {
        Observation::User {
            node: NodeId(node),
            name,
            value: Value::Pair(a, b),
        }
    }

    fn check(observations: &[Observation]) -> Vec<bool> {
        let mut states = properties().instantiate();
        observations
            .iter()
            .map(|o| states.iter_mut().any(|p| p.check(0, o).is_err()))
            .collect()
    }

    #[test]
    fn two_leaders_of_one_term_of_one_range_break_range_election_safety() {
        let broke = check(&[
            user(0, RANGE_LEADER, 5, 1),
            user(1, RANGE_LEADER, 6, 1),
            user(1, RANGE_LEADER, 5, 2),
            user(2, RANGE_LEADER, 5, 1),
        ]);
        assert_eq!(broke, [false, false, false, true]);
    }

    #[test]
    fn a_lease_started_while_another_store_holds_the_range_breaks_disjointness() {
        let broke = check(&[
            user(0, LEASE_START, 3, 1),
            user(1, LEASE_START, 4, 1),
            user(1, LEASE_START, 3, 2),
        ]);
        assert_eq!(broke, [false, false, true]);
    }

    #[test]
    fn a_lease_that_ended_or_whose_holder_crashed_leaves_the_range_free() {
        let broke = check(&[
            user(0, LEASE_START, 3, 1),
            user(0, LEASE_END, 3, 1),
            user(1, LEASE_START, 3, 2),
            Observation::Crash { node: NodeId(1) },
            user(2, LEASE_START, 3, 3),
        ]);
        assert_eq!(broke, [false, false, false, false, false]);
    }
}
