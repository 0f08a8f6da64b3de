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
    /// At most one node at a time holds it: a node holds it from an observation that is true,
    /// a number other than 0 or a pair other than `[0, 0]` until one that is false, 0 or
    /// `null`, or its crash.
    AtMostOne(String),
    /// Each node's value never goes below one it observed before, restarts included: numbers
    /// by value, pairs by their first number then their second (`[term, index]`).
    NeverDecreases(String),
    /// No value is observed by two different nodes (a lock epoch or a grant to one node):
    /// whole values compare, so `[3, 1]` and `[3, 2]` are two values; `null` is none.
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
                .always(name, move |last: &mut BTreeMap<NodeId, Value>, _, o| {
                    never_decreases(name, last, o)
                }),
            Check::Unique(_) => all
                .always(name, move |owner: &mut BTreeMap<Value, NodeId>, _, o| {
                    unique(name, owner, o)
                }),
        }
    })
}

/// The observations `checks` watch (each is named after its property).
pub(crate) fn watched(checks: &[Check]) -> Vec<&'static str> {
    if problem(checks).is_some() {
        return Vec::new();
    }
    checks
        .iter()
        .map(|check| super::names::intern_one(check.name()))
        .collect()
}

/// The observation `name` of a node, with its whole value.
fn observed(name: &str, o: &Observation) -> Option<(NodeId, Value)> {
    match o {
        Observation::User {
            node,
            name: n,
            value,
        } if *n == name => Some((*node, *value)),
        _ => None,
    }
}

/// Whether a value holds what `AtMostOne` counts: true, a number other than 0, a pair
/// other than `[0, 0]`; not false, 0 or `null`.
fn holds(value: Value) -> bool {
    !matches!(
        value,
        Value::Unit | Value::Bool(false) | Value::U64(0) | Value::I64(0) | Value::Pair(0, 0)
    )
}

/// How `NeverDecreases` orders values: numbers (false 0, true 1, `null` 0) by value, pairs
/// by their first number then their second; a number and a pair do not compare.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Number(i128),
    Pair(u64, u64),
}

fn rank(value: Value) -> Rank {
    match value {
        Value::Unit => Rank::Number(0),
        Value::Bool(b) => Rank::Number(i128::from(b)),
        Value::U64(v) => Rank::Number(i128::from(v)),
        Value::I64(v) => Rank::Number(i128::from(v)),
        Value::Node(n) => Rank::Number(i128::from(n.0)),
        Value::Pair(a, b) => Rank::Pair(a, b),
    }
}

/// A value as the node wrote it: `null`, `true`, `7`, `[3, 1]`.
fn shown(value: Value) -> String {
    match value {
        Value::Unit => "null".to_string(),
        Value::Pair(a, b) => format!("[{a}, {b}]"),
        other => other.to_string(),
    }
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
    if !holds(value) {
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
    last: &mut BTreeMap<NodeId, Value>,
    o: &Observation,
) -> Result<(), Breach> {
    let Some((node, value)) = observed(name, o) else {
        return Ok(());
    };
    let Some(before) = last.insert(node, value) else {
        return Ok(());
    };
    match (rank(before), rank(value)) {
        (Rank::Number(_), Rank::Pair(..)) | (Rank::Pair(..), Rank::Number(_)) => {
            Err(Breach::new(format!(
                "{node}'s {name} went from {} to {}: a number and a pair do not compare",
                shown(before),
                shown(value)
            )))
        }
        (was, now) if now < was => Err(Breach::new(format!(
            "{node}'s {name} went from {} to {}",
            shown(before),
            shown(value)
        ))),
        _ => Ok(()),
    }
}

/// `null` is no value: two nodes may both observe it.
fn unique(name: &str, owner: &mut BTreeMap<Value, NodeId>, o: &Observation) -> Result<(), Breach> {
    let Some((node, value)) = observed(name, o) else {
        return Ok(());
    };
    if value == Value::Unit {
        return Ok(());
    }
    match owner.insert(value, node) {
        Some(first) if first != node => Err(Breach::new(format!(
            "{name} {} was observed by {first} and by {node}",
            shown(value)
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
        let check = |l: &mut BTreeMap<NodeId, Value>, o| never_decreases("epoch", l, &o);
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
        let check = |w: &mut BTreeMap<Value, NodeId>, o| unique("grant", w, &o);
        assert!(check(&mut owner, user(0, "grant", Value::U64(7))).is_ok());
        assert!(
            check(&mut owner, user(0, "grant", Value::U64(7))).is_ok(),
            "same node"
        );
        assert!(check(&mut owner, user(1, "grant", Value::U64(8))).is_ok());
        assert!(check(&mut owner, user(1, "grant", Value::U64(7))).is_err());
    }

    #[test]
    fn pairs_compare_whole_under_unique_and_in_order_under_never_decreases() {
        // Votes as [term, voter]: one term, two voters, two values.
        let mut owner = BTreeMap::new();
        let vote = |w: &mut BTreeMap<Value, NodeId>, o| unique("vote", w, &o);
        assert!(vote(&mut owner, user(0, "vote", Value::Pair(1, 0))).is_ok());
        assert!(vote(&mut owner, user(1, "vote", Value::Pair(1, 1))).is_ok());
        let breach = vote(&mut owner, user(2, "vote", Value::Pair(1, 1))).unwrap_err();
        assert!(breach
            .detail
            .contains("vote [1, 1] was observed by n1 and by n2"));
        assert!(vote(&mut owner, user(0, "vote", Value::Unit)).is_ok());
        assert!(
            vote(&mut owner, user(1, "vote", Value::Unit)).is_ok(),
            "null is none"
        );
        // [term, index] goes forward when either grows, in that order.
        let mut last = BTreeMap::new();
        let log = |l: &mut BTreeMap<NodeId, Value>, o| never_decreases("log", l, &o);
        assert!(log(&mut last, user(0, "log", Value::Pair(1, 5))).is_ok());
        assert!(log(&mut last, user(0, "log", Value::Pair(2, 0))).is_ok());
        let back = log(&mut last, user(0, "log", Value::Pair(1, 9))).unwrap_err();
        assert!(
            back.detail.contains("went from [2, 0] to [1, 9]"),
            "{}",
            back.detail
        );
        let mixed = log(&mut last, user(0, "log", Value::U64(3))).unwrap_err();
        assert!(mixed.detail.contains("do not compare"), "{}", mixed.detail);
        // A pair holds unless it is [0, 0].
        let mut holders = Vec::new();
        let hold = |h: &mut Vec<NodeId>, o| at_most_one("lease", h, &o);
        assert!(hold(&mut holders, user(0, "lease", Value::Pair(0, 1))).is_ok());
        assert!(hold(&mut holders, user(1, "lease", Value::Pair(0, 0))).is_ok());
        assert!(hold(&mut holders, user(1, "lease", Value::Pair(0, 2))).is_err());
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
