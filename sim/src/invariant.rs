//! The invariants the checker enforces, by their stable names.

use serde::{Serialize, Serializer};
use std::fmt;

/// A checked property. The names are stable: they appear in output, traces and `expect`.
/// It serializes as its name (`"election_safety"`, or a user property's own name).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// No two different nodes claim leadership for the same term or epoch.
    ElectionSafety,
    /// The resource never accepts a lower token after a higher one, nor one token from two
    /// nodes, nor rejects a write of a newer leadership in favour of an older one's token.
    FencingSafety,
    /// A node's term never goes backwards, restarts included.
    TermMonotonic,
    /// After the last fault heals, a leader every live connected member recognises appears in time.
    Liveness,
    /// A safety property of the user's own ([`crate::property::Property`]), by its name.
    /// Recorded, flagged and counted exactly like the built-in safety invariants.
    Property(&'static str),
}

impl Serialize for Invariant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl Invariant {
    /// Every invariant, in output order.
    pub const ALL: [Invariant; 4] = [
        Invariant::ElectionSafety,
        Invariant::FencingSafety,
        Invariant::TermMonotonic,
        Invariant::Liveness,
    ];

    /// The safety invariants (those an `expect: Violates([...])` may name).
    pub const SAFETY: [Invariant; 3] = [
        Invariant::ElectionSafety,
        Invariant::FencingSafety,
        Invariant::TermMonotonic,
    ];

    /// The stable snake_case name (a user property's own name).
    pub fn name(self) -> &'static str {
        match self {
            Invariant::ElectionSafety => "election_safety",
            Invariant::FencingSafety => "fencing_safety",
            Invariant::TermMonotonic => "term_monotonic",
            Invariant::Liveness => "liveness",
            Invariant::Property(name) => name,
        }
    }

    /// The built-in invariant with this stable name (user properties are not known here).
    pub fn from_name(name: &str) -> Option<Invariant> {
        Self::ALL.into_iter().find(|inv| inv.name() == name)
    }

    /// Whether this is a safety invariant (as opposed to liveness); user properties are.
    pub fn is_safety(self) -> bool {
        self != Invariant::Liveness
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariants_serialize_as_their_plain_names() {
        let json = serde_json::to_string(&[
            Invariant::ElectionSafety,
            Invariant::Liveness,
            Invariant::Property("one_lock_holder"),
        ])
        .unwrap();
        assert_eq!(json, r#"["election_safety","liveness","one_lock_holder"]"#);
    }

    #[test]
    fn a_user_property_is_a_safety_invariant_named_as_given() {
        let property = Invariant::Property("one_lock_holder");
        assert_eq!(property.name(), "one_lock_holder");
        assert_eq!(property.to_string(), "one_lock_holder");
        assert!(property.is_safety());
        assert_eq!(Invariant::from_name("one_lock_holder"), None);
    }
}
