//! The invariants the checker enforces, by their stable names.

use serde::Serialize;
use std::fmt;

/// A checked property. The names are stable: they appear in output, traces and `expect`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Invariant {
    /// No two different nodes claim leadership for the same term or epoch.
    ElectionSafety,
    /// The resource never accepts a lower token after a higher one, nor one token from two nodes.
    FencingSafety,
    /// A node's term never goes backwards, restarts included.
    TermMonotonic,
    /// After the last fault heals, a leader every live connected member recognises appears in time.
    Liveness,
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

    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::ElectionSafety => "election_safety",
            Invariant::FencingSafety => "fencing_safety",
            Invariant::TermMonotonic => "term_monotonic",
            Invariant::Liveness => "liveness",
        }
    }

    /// The invariant with this stable name.
    pub fn from_name(name: &str) -> Option<Invariant> {
        Self::ALL.into_iter().find(|inv| inv.name() == name)
    }

    /// Whether this is a safety invariant (as opposed to liveness).
    pub fn is_safety(self) -> bool {
        self != Invariant::Liveness
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
