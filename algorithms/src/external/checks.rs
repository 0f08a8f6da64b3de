//! Safety properties of a user's own, declared in the scenario over the observations an
//! external node reports (`observe` effects), for users who write no Rust:
//!
//! ```ron
//! algorithm: External(command: ["python3", "lock.py"],
//!                     properties: [AtMostOne("lock_held"), NeverDecreases("epoch"), Unique("grant")]),
//! ```
//!
//! Each is checked at every observation of every run, like the built-in invariants, and a
//! break is a violation named after the observation (`lock_held`).

use serde::{Deserialize, Serialize};
use splitbrain_sim::property::{Breach, Observation, Value};
use splitbrain_sim::{NodeId, Properties};
use std::collections::BTreeMap;

/// One declared property, over the observation it names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Check {
    /// At most one node at a time holds it: a node holds it from an observation that is true
    /// or a number other than 0 until one that is false, 0 or `null`, or its crash.
    AtMostOne(String),
    /// Each node's value never goes below one it observed before, restarts included.
    NeverDecreases(String),
    /// No value is observed by two different nodes (a lock epoch or a grant to one node).
    Unique(String),
}

impl Check {
    /// The observation it is about; also the property's (and the violation's) name.
    pub fn name(&self) -> &str {
        match self {
            Check::AtMostOne(name) | Check::NeverDecreases(name) | Check::Unique(name) => name,
        }
    }
}

/// Why a declared property cannot be checked.
pub(crate) fn problem(checks: &[Check]) -> Option<String> {
    for (i, check) in checks.iter().enumerate() {
        let name = check.name();
        let well_formed = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            return Some(format!(
                "`{name}` cannot name a property: use lowercase letters, digits and `_`, starting with a letter"
            ));
        }
        let reserved = splitbrain_sim::Invariant::from_name(name).is_some()
            || splitbrain_sim::property::RESERVED_NAMES.contains(&name);
        if reserved {
            return Some(format!(
                "`{name}` is a built-in invariant's or a hunt's own name"
            ));
        }
        if checks[..i].iter().any(|c| c.name() == name) {
            return Some(format!(
                "`{name}` is checked twice: one property per observation"
            ));
        }
    }
    None
}

/// The properties `checks` declare; none if one cannot be checked (lowering refuses those
/// settings, and says why).
pub(crate) fn properties(checks: &[Check]) -> Properties {
    if problem(checks).is_some() {
        return Properties::new();
    }
    checks.iter().fold(Properties::new(), |all, check| {
        let name = super::names::intern_one(check.name());
        match check {
            Check::AtMostOne(_) => all.always(name, move |holders: &mut Vec<NodeId>, _, o| {
                at_most_one(name, holders, o)
            }),
            Check::NeverDecreases(_) => all
                .always(name, move |last: &mut BTreeMap<NodeId, u64>, _, o| {
                    never_decreases(name, last, o)
                }),
            Check::Unique(_) => all.always(name, move |owner: &mut BTreeMap<u64, NodeId>, _, o| {
                unique(name, owner, o)
            }),
        }
    })
}

/// The observation `name` of a node, as a number (true 1, false and `null` 0; a pair: its
/// first number).
fn observed(name: &str, o: &Observation) -> Option<(NodeId, u64)> {
    let Observation::User {
        node,
        name: n,
        value,
    } = o
    else {
        return None;
    };
    if *n != name {
        return None;
    }
    let number = match *value {
        Value::Unit => 0,
        Value::Bool(b) => u64::from(b),
        Value::U64(v) | Value::Pair(v, _) => v,
        Value::I64(v) => u64::try_from(v).unwrap_or(0),
        Value::Node(n) => u64::from(n.0),
    };
    Some((*node, number))
}

fn at_most_one(name: &str, holders: &mut Vec<NodeId>, o: &Observation) -> Result<(), Breach> {
    if let Observation::Crash { node } = o {
        holders.retain(|h| h != node);
        return Ok(());
    }
    let Some((node, value)) = observed(name, o) else {
        return Ok(());
    };
    holders.retain(|h| *h != node);
    if value == 0 {
        return Ok(());
    }
    holders.push(node);
    match holders.as_slice() {
        [other, .., _] => {
            Err(Breach::new(format!("{other} and {node} both hold {name}")).nodes([*other, node]))
        }
        _ => Ok(()),
    }
}

fn never_decreases(
    name: &str,
    last: &mut BTreeMap<NodeId, u64>,
    o: &Observation,
) -> Result<(), Breach> {
    let Some((node, value)) = observed(name, o) else {
        return Ok(());
    };
    let before = last.insert(node, value).unwrap_or(0);
    if value < before {
        return Err(Breach::new(format!(
            "{node}'s {name} went from {before} to {value}"
        )));
    }
    Ok(())
}

fn unique(name: &str, owner: &mut BTreeMap<u64, NodeId>, o: &Observation) -> Result<(), Breach> {
    let Some((node, value)) = observed(name, o) else {
        return Ok(());
    };
    match owner.insert(value, node) {
        Some(first) if first != node => Err(Breach::new(format!(
            "{name} {value} was observed by {first} and by {node}"
        ))
        .nodes([first, node])),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(node: u32, name: &'static str, value: Value) -> Observation {
        Observation::User {
            node: NodeId(node),
            name,
            value,
        }
    }

    #[test]
    fn two_holders_at_once_break_at_most_one_and_a_release_or_a_crash_frees_it() {
        let mut holders = Vec::new();
        let check = |h: &mut Vec<NodeId>, o| at_most_one("lock", h, &o);
        assert!(check(&mut holders, user(0, "lock", Value::Bool(true))).is_ok());
        assert!(
            check(&mut holders, user(0, "lock", Value::Bool(true))).is_ok(),
            "again"
        );
        assert!(check(&mut holders, user(0, "lock", Value::Bool(false))).is_ok());
        assert!(check(&mut holders, user(1, "lock", Value::U64(4))).is_ok());
        assert!(check(&mut holders, Observation::Crash { node: NodeId(1) }).is_ok());
        assert!(check(&mut holders, user(2, "lock", Value::Bool(true))).is_ok());
        let breach = check(&mut holders, user(0, "lock", Value::Bool(true))).unwrap_err();
        assert!(
            breach.detail.contains("n2 and n0 both hold lock"),
            "{}",
            breach.detail
        );
        assert!(check(&mut holders, user(2, "other", Value::Bool(true))).is_ok());
    }

    #[test]
    fn a_value_that_goes_back_breaks_never_decreases_per_node() {
        let mut last = BTreeMap::new();
        let check = |l: &mut BTreeMap<NodeId, u64>, o| never_decreases("epoch", l, &o);
        assert!(check(&mut last, user(0, "epoch", Value::U64(3))).is_ok());
        assert!(
            check(&mut last, user(1, "epoch", Value::U64(1))).is_ok(),
            "another node"
        );
        assert!(check(&mut last, user(0, "epoch", Value::U64(3))).is_ok());
        assert!(check(&mut last, user(0, "epoch", Value::U64(2))).is_err());
    }

    #[test]
    fn one_value_from_two_nodes_breaks_unique() {
        let mut owner = BTreeMap::new();
        let check = |w: &mut BTreeMap<u64, NodeId>, o| unique("grant", w, &o);
        assert!(check(&mut owner, user(0, "grant", Value::U64(7))).is_ok());
        assert!(
            check(&mut owner, user(0, "grant", Value::U64(7))).is_ok(),
            "same node"
        );
        assert!(check(&mut owner, user(1, "grant", Value::U64(8))).is_ok());
        assert!(check(&mut owner, user(1, "grant", Value::U64(7))).is_err());
    }

    #[test]
    fn names_a_property_cannot_have_are_refused() {
        let ok = [
            Check::AtMostOne("lock_held".into()),
            Check::Unique("grant".into()),
        ];
        assert_eq!(problem(&ok), None);
        for bad in [
            vec![Check::AtMostOne("Lock".into())],
            vec![Check::Unique("election_safety".into())],
            vec![Check::Unique("x".into()), Check::AtMostOne("x".into())],
        ] {
            assert!(problem(&bad).is_some(), "{bad:?}");
        }
    }
}
