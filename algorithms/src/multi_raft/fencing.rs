//! `range_fencing`: every range's resource, fenced by lease sequence, as CockroachDB fences
//! a range's state machine: a command carries the sequence of the lease it was proposed
//! under (`ProposerLeaseSequence`), and is refused below Raft unless that is the range's
//! lease now (`kvserverbase.CheckForcedErr`), so a leaseholder that lost its lease without
//! knowing cannot write. The property is the resource: it accepts a write whose token is at
//! least the highest it accepted for the range and refuses an older one (counted), and
//! breaks if it accepts one token from two stores (the engine's `fencing_safety`, per
//! range): the token then no longer tells the two holders apart. One observation costs
//! O(log R).

use super::properties::RANGE_WRITE;
use splitbrain_sim::property::{Breach, Measured, Observation, Property, Value};
use splitbrain_sim::{Nanos, NodeId};
use std::collections::BTreeMap;

/// Every range's resource.
#[derive(Debug, Default)]
pub struct RangeResources {
    /// Per range: the highest token accepted, and the store it was accepted from.
    accepted: BTreeMap<u64, (u64, NodeId)>,
    /// Writes accepted.
    writes: u64,
    /// Writes refused for an older token than one accepted.
    refused: u64,
}

impl Property for RangeResources {
    fn name(&self) -> &'static str {
        "range_fencing"
    }

    fn check(&mut self, _now_ns: Nanos, observation: &Observation) -> Result<(), Breach> {
        let Observation::User {
            node,
            name: RANGE_WRITE,
            value: Value::Pair(range, token),
        } = *observation
        else {
            return Ok(());
        };
        match self.accepted.get(&range) {
            Some(&(highest, _)) if token < highest => {
                self.refused += 1;
                return Ok(());
            }
            Some(&(highest, from)) if token == highest && from != node => {
                return Err(Breach::new(format!(
                    "range {range}'s resource accepted token {token} from {from} and from \
                     {node}"
                ))
                .nodes([from, node]));
            }
            _ => {}
        }
        self.accepted.insert(range, (token, node));
        self.writes += 1;
        Ok(())
    }

    fn measures(&self, _end_ns: Nanos) -> Vec<Measured> {
        vec![
            Measured::new("range_writes", self.writes as f64),
            Measured::new("range_writes_refused", self.refused as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(node: u32, range: u64, token: u64) -> Observation {
        Observation::User {
            node: NodeId(node),
            name: RANGE_WRITE,
            value: Value::Pair(range, token),
        }
    }

    #[test]
    fn an_older_token_is_refused_and_one_token_from_two_stores_breaks_fencing() {
        let mut resources = RangeResources::default();
        let outcomes: Vec<bool> = [
            write(0, 7, 1),
            write(0, 7, 1),
            write(1, 7, 2),
            write(0, 7, 1),
            write(2, 8, 2),
            write(2, 7, 2),
        ]
        .iter()
        .map(|w| resources.check(0, w).is_ok())
        .collect();
        assert_eq!(outcomes, [true, true, true, true, true, false]);
        let measured: Vec<f64> = resources.measures(0).iter().map(|m| m.value).collect();
        assert_eq!(measured, [4.0, 1.0], "4 accepted, n0's stale write refused");
    }
}
