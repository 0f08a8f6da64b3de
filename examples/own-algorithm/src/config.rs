//! The validated settings the processes run with.

use serde::{Deserialize, Serialize};

/// How a member uses the lease it believes it holds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename(deserialize = "own-lease variant"))]
pub enum Variant {
    /// Checks its lease by its own monotonic clock, with a margin for drift, in the same
    /// handler as every write, and writes with the lease's fencing token.
    #[default]
    Correct,
    /// Checks "do I hold the lease?", then writes `act_delay` later without checking again,
    /// and with the constant token 0: a client that trusts the lock and never hands the
    /// resource its token. Unsafe on purpose.
    CheckThenAct,
    /// The same check-then-act race, but the write carries the lease's token, so a resource
    /// that checks tokens rejects the stale write: the built-in invariants stay quiet while
    /// two members act on the lease at once. Unsafe on purpose; only a property about the
    /// members' beliefs (see [`crate::belief`]) catches it.
    CheckThenActFenced,
}

impl Variant {
    /// Every variant, as a scenario writes it (the `variant` knob's choices).
    pub const NAMES: &'static [&'static str] = &["Correct", "CheckThenAct", "CheckThenActFenced"];

    /// The variant a scenario names `name`.
    pub fn named(name: &str) -> Option<Variant> {
        match name {
            "Correct" => Some(Variant::Correct),
            "CheckThenAct" => Some(Variant::CheckThenAct),
            "CheckThenActFenced" => Some(Variant::CheckThenActFenced),
            _ => None,
        }
    }

    /// Whether the member acts later than it checks (the race).
    pub fn acts_late(self) -> bool {
        self != Variant::Correct
    }
}

/// The lock server's and the members' timings. A duration is measured by whoever acts on it:
/// the TTL by the server's clock (expiry) and by the member's (its belief), the rest by the
/// member's clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OwnLeaseConfig {
    /// How long a grant or renewal keeps the lease, from when the server handles it.
    pub ttl_ns: u64,
    /// How often the holder renews, and how often a waiter asks for the lease.
    pub renew_every_ns: u64,
    /// How much sooner than the TTL a member stops believing, counted from the send time of
    /// the request the server answered: room for the member's clock running slow and the
    /// server's running fast. A quarter of the TTL covers two clocks 10% apart either way
    /// (the nemesis's largest drift by default): `(1 - 1/4) / 0.9 < 1 / 1.1`.
    pub margin_ns: u64,
    /// How often the holder writes to the fenced resource.
    pub work_every_ns: u64,
    /// The late variants: how long after its check a member writes.
    pub act_delay_ns: u64,
    /// The way a member uses its lease.
    pub variant: Variant,
}

impl OwnLeaseConfig {
    /// How long after the send time of an answered request a member believes its lease.
    pub fn belief_ns(&self) -> u64 {
        self.ttl_ns.saturating_sub(self.margin_ns)
    }
}

impl Default for OwnLeaseConfig {
    fn default() -> Self {
        let ttl_ns = 2_000_000_000;
        Self {
            ttl_ns,
            renew_every_ns: ttl_ns / 4,
            margin_ns: ttl_ns / 4,
            work_every_ns: 100_000_000,
            act_delay_ns: 50_000_000,
            variant: Variant::Correct,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_name_names_its_variant_and_nothing_else_does() {
        for name in Variant::NAMES {
            let variant = Variant::named(name).expect(name);
            assert_eq!(format!("{variant:?}"), *name);
        }
        assert_eq!(Variant::named("correct"), None);
    }

    #[test]
    fn the_default_margin_covers_two_clocks_ten_percent_apart() {
        let c = OwnLeaseConfig::default();
        // The member's belief on a clock 10% slow (belief / 0.9 in true time) must end before
        // the server's expiry on a clock 10% fast (ttl / 1.1): both sides times 99.
        let belief_true = c.belief_ns() as u128 * 110;
        let expiry_true = c.ttl_ns as u128 * 90;
        assert!(belief_true < expiry_true);
    }
}
