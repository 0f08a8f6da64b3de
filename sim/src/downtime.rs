//! Leadership downtime from the user's side: the stretches of true time in which the group had
//! no leader that could act, whatever the cause, and the time two leaders that could act
//! overlapped.
//!
//! A member *can act* while it believes it leads ([`LeadershipSpan`]) and is not frozen: not
//! crashed, paused, suspended or stalled (a [`FaultRecord`] of those kinds on it, from when it
//! fired to when it healed). A *downtime episode* opens when the group stops having a member
//! that can act, after it first had one (the election at start-up is not downtime), and closes
//! when a member can act again; one still open when the run ends is unrecovered. An episode
//! closed by the member that held leadership before it is a *same-holder* re-acquisition (a
//! lease renewed late, a leader that resumed): no leader change, but downtime all the same.
//!
//! Its cause is the latest fault to strike among those that count: one that fired after the
//! group's last recovery and no later than the episode opened, or that was still in effect
//! then (not healed, for the kinds that last). If it touched a service process (a modeled
//! coordination service's member, process `members` and up) the episode is a service fault,
//! else a member fault (a member or the network); with no fault that counts it is spurious
//! (a timeout that fired with nothing wrong).

use crate::ids::NodeId;
use crate::report::{FaultRecord, LeadershipSpan};
use crate::time::Nanos;
use serde::Serialize;

/// What an episode of downtime is put down to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DowntimeCause {
    /// A fault on an election member or the network, none on the service.
    MemberFault,
    /// A fault on a process of the modeled coordination service.
    ServiceFault,
    /// No fault: a timeout or a race with nothing wrong.
    Spurious,
}

impl DowntimeCause {
    /// Every cause, in the order tables list them.
    pub const ALL: [DowntimeCause; 3] = [
        DowntimeCause::MemberFault,
        DowntimeCause::ServiceFault,
        DowntimeCause::Spurious,
    ];

    /// Its name in tables and JSON: `member_fault`, `service_fault`, `spurious`.
    pub fn name(self) -> &'static str {
        match self {
            DowntimeCause::MemberFault => "member_fault",
            DowntimeCause::ServiceFault => "service_fault",
            DowntimeCause::Spurious => "spurious",
        }
    }
}

/// One stretch with no leader that could act.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Downtime {
    /// True time the last member that could act stopped being able to.
    pub from_ns: Nanos,
    /// True time a member could act again, or the end of the run.
    pub to_ns: Nanos,
    /// Whether a member could act again before the run ended.
    pub recovered: bool,
    /// The member that could act last before it.
    pub leader_before: NodeId,
    /// The member that could act first after it, if one did.
    pub leader_after: Option<NodeId>,
    /// What it is put down to.
    pub cause: DowntimeCause,
}

impl Downtime {
    /// How long it lasted.
    ///
    /// ```
    /// use splitbrain_sim::downtime::{Downtime, DowntimeCause};
    /// use splitbrain_sim::NodeId;
    /// let d = Downtime {
    ///     from_ns: 2_000,
    ///     to_ns: 5_000,
    ///     recovered: true,
    ///     leader_before: NodeId::from(1),
    ///     leader_after: Some(NodeId::from(1)),
    ///     cause: DowntimeCause::Spurious,
    /// };
    /// assert_eq!(d.duration_ns(), 3_000);
    /// assert!(d.same_holder());
    /// ```
    pub fn duration_ns(&self) -> Nanos {
        self.to_ns - self.from_ns
    }

    /// Whether the member that held leadership before it took it back.
    pub fn same_holder(&self) -> bool {
        self.leader_after == Some(self.leader_before)
    }
}

/// The fault kinds during which a process cannot act.
const FROZEN_KINDS: [&str; 4] = ["crash", "pause", "suspend", "stall"];

/// When members could act: each leadership span less the times its member was frozen, as
/// `(member, from, to)` with `from < to`, in no particular order.
fn acting_spans(
    spans: &[LeadershipSpan],
    faults: &[FaultRecord],
    end_ns: Nanos,
) -> Vec<(NodeId, Nanos, Nanos)> {
    let mut acting = Vec::new();
    for span in spans {
        let mut frozen: Vec<(Nanos, Nanos)> = faults
            .iter()
            .filter(|f| {
                !f.skipped
                    && FROZEN_KINDS.contains(&f.kind.as_str())
                    && f.nodes.contains(&span.node)
            })
            .map(|f| (f.at_ns, f.healed_at_ns.unwrap_or(end_ns)))
            .collect();
        frozen.sort_unstable();
        let mut from = span.from_ns;
        for (stop, resume) in frozen {
            if stop >= span.to_ns {
                break;
            }
            if stop > from {
                acting.push((span.node, from, stop));
            }
            from = from.max(resume);
        }
        if from < span.to_ns {
            acting.push((span.node, from, span.to_ns));
        }
    }
    acting
}

/// A maximal stretch in which some member could act, with the members that could act at its
/// start and its end.
struct Covered {
    from_ns: Nanos,
    to_ns: Nanos,
    first: NodeId,
    last: NodeId,
}

/// The union of the acting spans, in time order.
fn covered(mut acting: Vec<(NodeId, Nanos, Nanos)>) -> Vec<Covered> {
    acting.sort_unstable_by_key(|&(node, from, to)| (from, to, node));
    let mut out: Vec<Covered> = Vec::new();
    for (node, from, to) in acting {
        match out.last_mut() {
            Some(c) if from <= c.to_ns => {
                if to >= c.to_ns {
                    c.to_ns = to;
                    c.last = node;
                }
            }
            _ => out.push(Covered {
                from_ns: from,
                to_ns: to,
                first: node,
                last: node,
            }),
        }
    }
    out
}

/// What an episode opening at `from_ns`, after the group last recovered at `recovered_ns`, is
/// put down to.
fn cause_of(
    faults: &[FaultRecord],
    members: usize,
    recovered_ns: Nanos,
    from_ns: Nanos,
) -> DowntimeCause {
    let counts = |f: &&FaultRecord| {
        let since = f.at_ns >= recovered_ns && f.at_ns <= from_ns;
        let lasting = f.at_ns <= from_ns && f.healed_at_ns.is_some_and(|h| h > from_ns);
        let never_healed = f.at_ns <= from_ns && f.healed_at_ns.is_none() && lasts(&f.kind);
        !f.skipped && (since || lasting || never_healed)
    };
    // The latest to strike decides (a service fault first at one instant): the leader's crash
    // that ends a long quiet stretch is the cause, not a service blip it rode out before.
    let latest = faults
        .iter()
        .filter(counts)
        .max_by_key(|f| (f.at_ns, touches_service(f, members)));
    match latest {
        None => DowntimeCause::Spurious,
        Some(f) if touches_service(f, members) => DowntimeCause::ServiceFault,
        Some(_) => DowntimeCause::MemberFault,
    }
}

/// Whether `fault` struck a process of the coordination service (process `members` and up).
fn touches_service(fault: &FaultRecord, members: usize) -> bool {
    fault.nodes.iter().any(|n| n.index() >= members)
}

/// Whether a fault of `kind` stays in effect until it heals (a crash for good, a partition
/// never healed), rather than acting once (a clock step, a resignation).
fn lasts(kind: &str) -> bool {
    !matches!(
        kind,
        "clock_jump" | "resign" | "conf_change" | "restart" | "heal"
    )
}

/// The downtime episodes of a run of `members` election members that ended at `end_ns`.
///
/// ```
/// use splitbrain_sim::downtime::{downtime, DowntimeCause};
/// use splitbrain_sim::report::LeadershipSpan;
/// use splitbrain_sim::NodeId;
/// // n0 leads from 1 s to 4 s, then n1 from 6 s: 2 s without a leader, no fault.
/// let spans = [
///     LeadershipSpan { node: NodeId::from(0), term: 1, from_ns: 1_000, to_ns: 4_000 },
///     LeadershipSpan { node: NodeId::from(1), term: 2, from_ns: 6_000, to_ns: 9_000 },
/// ];
/// let episodes = downtime(&spans, &[], 3, 9_000);
/// assert_eq!(episodes.len(), 1);
/// assert_eq!(episodes[0].duration_ns(), 2_000);
/// assert_eq!(episodes[0].cause, DowntimeCause::Spurious);
/// ```
pub fn downtime(
    spans: &[LeadershipSpan],
    faults: &[FaultRecord],
    members: usize,
    end_ns: Nanos,
) -> Vec<Downtime> {
    let covered = covered(acting_spans(spans, faults, end_ns));
    let mut episodes = Vec::new();
    for (i, c) in covered.iter().enumerate() {
        let next = covered.get(i + 1);
        let to_ns = next.map_or(end_ns, |n| n.from_ns);
        if to_ns <= c.to_ns {
            continue;
        }
        episodes.push(Downtime {
            from_ns: c.to_ns,
            to_ns,
            recovered: next.is_some(),
            leader_before: c.last,
            leader_after: next.map(|n| n.first),
            cause: cause_of(faults, members, c.from_ns, c.to_ns),
        });
    }
    episodes
}

/// How long two or more members that could act believed they led at once (a frozen leader
/// that believes it still leads cannot act, and does not count).
///
/// ```
/// use splitbrain_sim::downtime::acting_overlap_ns;
/// use splitbrain_sim::report::LeadershipSpan;
/// use splitbrain_sim::NodeId;
/// let spans = [
///     LeadershipSpan { node: NodeId::from(0), term: 1, from_ns: 0, to_ns: 5_000 },
///     LeadershipSpan { node: NodeId::from(1), term: 2, from_ns: 4_000, to_ns: 9_000 },
/// ];
/// assert_eq!(acting_overlap_ns(&spans, &[], 9_000), 1_000);
/// ```
pub fn acting_overlap_ns(spans: &[LeadershipSpan], faults: &[FaultRecord], end_ns: Nanos) -> Nanos {
    // +1 at a start, -1 at an end; ends before starts at the same instant.
    let mut edges: Vec<(Nanos, i8)> = acting_spans(spans, faults, end_ns)
        .into_iter()
        .flat_map(|(_, from, to)| [(from, 1), (to, -1)])
        .collect();
    edges.sort_unstable();
    let (mut acting, mut since, mut total) = (0i64, 0, 0);
    for (at, step) in edges {
        if acting >= 2 {
            total += at - since;
        }
        acting += i64::from(step);
        since = at;
    }
    total
}

#[cfg(test)]
mod tests;
