//! What the processes report about the lease, and the property "no two members act on the
//! lease at once" that reads those reports.
//!
//! The built-in invariants see claims, terms and the writes that reach the resource. They do
//! not see a member *acting* on a lease it no longer holds when the resource's fencing then
//! rejects the write: `CheckThenActFenced` does exactly that, and every built-in invariant
//! stays quiet. The members and the server therefore report what they believe and do:
//!
//! | who | when | name | value |
//! |-----|------|------|-------|
//! | server | it grants lease `token` to `holder` | `lease_granted` | `(holder, token)` |
//! | member | it starts to believe it holds lease `token` | `lease_held` | `token` |
//! | member | it stops believing so | `lease_released` | `token` |
//! | member | it acts on its belief (a write) | `lease_acted` | `token` |
//!
//! and [`OneHolderAtATime`] checks them: once the server has granted lease `t`, no member
//! acts on a lease below `t`. Why not simply "no two members report `lease_held` at once"?
//! A member that is paused cannot report that its belief ended, though by its own clock it
//! has; what it *does* when it runs again is what matters, and that it reports.
//!
//! The reports go through `Ctx::observe`; [`property`] installs [`OneHolderAtATime`] over
//! them, and `OwnLease`'s `Algorithm::properties` returns it, so every run of the algorithm
//! (hunt, shrink, replay, the CLI) checks it at every event, under its name.

use crate::messages::{LeaseMsg, LeaseTimer};
use splitbrain_sim::{Breach, Ctx, NodeId, Observation, Properties, Value};

type LeaseCtx<'a> = Ctx<'a, LeaseMsg, LeaseTimer>;

/// The server granted lease `token` to `holder`.
pub(crate) fn granted(ctx: &mut LeaseCtx<'_>, holder: NodeId, token: u64) {
    ctx.observe("lease_granted", (u64::from(holder.0), token));
}

/// The member now believes it holds lease `token`.
pub(crate) fn holds(ctx: &mut LeaseCtx<'_>, token: u64) {
    ctx.observe("lease_held", token);
}

/// The member no longer believes it holds lease `token`.
pub(crate) fn released(ctx: &mut LeaseCtx<'_>, token: u64) {
    ctx.observe("lease_released", token);
}

/// The member acts (writes) on its belief that it holds lease `token`.
pub(crate) fn acted(ctx: &mut LeaseCtx<'_>, token: u64) {
    ctx.observe("lease_acted", token);
}

/// The property: a member acts only on the newest lease the server has granted, so no two
/// members act on the lease at once.
///
/// ```
/// use own_algorithm::belief::OneHolderAtATime;
/// use splitbrain_sim::NodeId;
///
/// let mut property = OneHolderAtATime::default();
/// property.granted(NodeId(0), 1);
/// assert!(property.acted(NodeId(0), 1).is_ok());
/// property.granted(NodeId(1), 2);
/// assert!(property.acted(NodeId(1), 2).is_ok());
/// let breach = property.acted(NodeId(0), 1).unwrap_err();
/// assert_eq!(breach, "n0 acted on lease 1 after the server granted lease 2 to n1");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OneHolderAtATime {
    /// The newest grant: its holder and token.
    newest: Option<(NodeId, u64)>,
}

impl OneHolderAtATime {
    /// The name the property's violations go by.
    pub const NAME: &'static str = "one_holder_at_a_time";

    /// The server granted lease `token` to `holder` (`lease_granted`).
    pub fn granted(&mut self, holder: NodeId, token: u64) {
        if self.newest.is_none_or(|(_, newest)| token > newest) {
            self.newest = Some((holder, token));
        }
    }

    /// `node` acted on lease `token` (`lease_acted`): a breach, described, if the server has
    /// granted a newer lease since.
    pub fn acted(&self, node: NodeId, token: u64) -> Result<(), String> {
        match self.newest {
            Some((holder, newest)) if newest > token => Err(format!(
                "{node} acted on lease {token} after the server granted lease {newest} to {holder}"
            )),
            _ => Ok(()),
        }
    }
}

/// The properties this crate's election is checked against besides the built-in invariants:
/// [`OneHolderAtATime`] over the members' and the server's reports.
pub fn property() -> Properties {
    Properties::new().always(
        OneHolderAtATime::NAME,
        |p: &mut OneHolderAtATime, _now_ns, observation| match *observation {
            Observation::User {
                name: "lease_granted",
                value: Value::Pair(holder, token),
                ..
            } => {
                let holder = u32::try_from(holder).map_or(NodeId(u32::MAX), NodeId);
                p.granted(holder, token);
                Ok(())
            }
            Observation::User {
                node,
                name: "lease_acted",
                value: Value::U64(token),
            } => p
                .acted(node, token)
                .map_err(|detail| Breach::new(detail).nodes([node])),
            _ => Ok(()),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acting_on_the_newest_lease_is_fine_whoever_granted_first() {
        let mut p = OneHolderAtATime::default();
        assert!(p.acted(NodeId(2), 0).is_ok(), "nothing granted yet");
        p.granted(NodeId(0), 1);
        p.granted(NodeId(1), 2);
        assert!(p.acted(NodeId(1), 2).is_ok());
        // A grant reported out of order does not move the newest lease back.
        p.granted(NodeId(0), 1);
        assert!(p.acted(NodeId(1), 2).is_ok());
    }

    #[test]
    fn acting_on_a_superseded_lease_is_a_breach_naming_both_holders() {
        let mut p = OneHolderAtATime::default();
        p.granted(NodeId(0), 4);
        p.granted(NodeId(2), 5);
        assert_eq!(
            p.acted(NodeId(0), 4),
            Err("n0 acted on lease 4 after the server granted lease 5 to n2".to_string())
        );
    }
}
