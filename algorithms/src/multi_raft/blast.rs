//! The blast radius of whatever strikes the stores, measured from what the stores report
//! (`campaign`, `range_leader`, `leader_ready`, `leader_end`, `lease_start`, `lease_end`) and
//! the crashes the engine
//! reports: how many ranges became unavailable, for how long each, the range-seconds
//! lost, how many at once (and, as curves, how many at every moment); the same for ranges
//! without a Raft leader; how often leases
//! moved (by failures and by transfers), how evenly leases and leaderships sit on the stores
//! (at the end, and the lease balance as a curve), and how many messages per second each
//! store sends (from the counts the stores report on each heartbeat round). A stretch that
//! begins with a lease transfer is a handover, counted apart from the failures. A property
//! that never breaks, only measures (`Property::measures`): `run`, `compare` and `sweep`
//! show the numbers.
//!
//! A range is *available* while one store both holds a usable lease of it and leads it
//! (only the leader can propose: a leaseholder that does not lead serves nothing new until
//! the leadership comes to it, and one cut off from its leader never does, which is the
//! hazard of epoch-based leases). It is *unavailable* from the moment that stops (a lease
//! end, a crash, a leadership lost) to the moment it holds again; the first time it
//! becomes available is its birth, not a recovery. A crash ends every lease and leadership
//! of the crashed store at once. A lease kept by a store that is cut off or paused counts
//! as held, and a leader as leading, until they report otherwise. The cost of an
//! observation does not grow with the number of ranges; a crash costs the leases and
//! leaderships of the crashed store.

use super::properties::{
    CAMPAIGN, LEADER_END, LEADER_READY, LEASE_END, LEASE_START, LEASE_TRANSFER, MESSAGES_SENT,
    RANGE_LEADER,
};
use splitbrain_sim::property::{Breach, Curve, Measured, Observation, Property, Value};
use splitbrain_sim::{Nanos, NodeId, NANOS_PER_SEC};
use std::collections::BTreeSet;

/// The measures' names, in the order they are reported.
pub const MEASURES: [&str; 26] = [
    "ranges_lost",
    "never_available",
    "peak_unavailable",
    "outage_min_s",
    "outage_p50_s",
    "outage_p99_s",
    "outage_max_s",
    "outage_max_one_round_s",
    "unavailable_range_s",
    "ranges_leaderless",
    "leaderless_min_s",
    "leaderless_p50_s",
    "leaderless_p99_s",
    "leaderless_max_s",
    "leaderless_max_one_round_s",
    "multi_round_elections",
    "leader_moves",
    "lease_moves",
    "lease_balance_max_over_mean",
    "leader_balance_max_over_mean",
    "lease_transfers",
    "handovers",
    "handover_max_s",
    "messages_per_s_mean_store",
    "messages_per_s_max_store",
    "messages_per_s_peak",
];

/// Stretches of one condition of one range (unavailable, or leaderless).
#[derive(Clone, Debug, Default)]
struct Stretches {
    /// In the condition since, if it is now (after its first time out of it).
    since: Option<Nanos>,
    /// Its longest stretch so far.
    longest_ns: Nanos,
    /// Every stretch, summed.
    total_ns: Nanos,
    /// Whether it ever entered the condition.
    ever: bool,
    /// Whether the open stretch saw an election that took more than one term (a split
    /// vote, or a campaign nobody answered).
    rounds_over_one: bool,
    /// Its longest stretch without such an election.
    longest_one_round_ns: Nanos,
    /// Whether the open stretch began with a lease transfer (a handover, not a failure).
    handover: bool,
    /// Handovers ended, and the longest of them.
    handovers: u64,
    longest_handover_ns: Nanos,
}

impl Stretches {
    /// Enters the condition at `now_ns`, by a lease transfer (`handover`) or a failure.
    fn enter(&mut self, now_ns: Nanos, handover: bool) -> bool {
        let entered = self.since.is_none();
        if entered {
            self.since = Some(now_ns);
            self.handover = handover;
            self.ever |= !handover;
        }
        entered
    }

    fn leave(&mut self, now_ns: Nanos) -> bool {
        let Some(since) = self.since.take() else {
            return false;
        };
        let gap = now_ns.saturating_sub(since);
        self.total_ns += gap;
        if std::mem::take(&mut self.handover) {
            self.handovers += 1;
            self.longest_handover_ns = self.longest_handover_ns.max(gap);
            self.rounds_over_one = false;
            return true;
        }
        self.longest_ns = self.longest_ns.max(gap);
        if !std::mem::take(&mut self.rounds_over_one) {
            self.longest_one_round_ns = self.longest_one_round_ns.max(gap);
        }
        true
    }

    /// The failure stretch open at `end_ns`, if one is: its length.
    fn open_failure_to(&self, end_ns: Nanos) -> Option<Nanos> {
        let since = self.since.filter(|_| !self.handover)?;
        Some(end_ns.saturating_sub(since))
    }

    /// Its handovers, one still open counted to `end_ns`: how many, and the longest.
    fn handovers_to(&self, end_ns: Nanos) -> (u64, Nanos) {
        match self.since.filter(|_| self.handover) {
            Some(since) => (
                self.handovers + 1,
                (self.longest_handover_ns).max(end_ns.saturating_sub(since)),
            ),
            None => (self.handovers, self.longest_handover_ns),
        }
    }

    /// Its longest stretch with one-round elections only, one still open lasting to
    /// `end_ns`.
    fn longest_one_round_to(&self, end_ns: Nanos) -> Nanos {
        let open = match self.open_failure_to(end_ns) {
            Some(open) if !self.rounds_over_one => open,
            _ => 0,
        };
        self.longest_one_round_ns.max(open)
    }

    /// Its longest failure stretch, one still open lasting to `end_ns`.
    fn longest_to(&self, end_ns: Nanos) -> Nanos {
        self.longest_ns
            .max(self.open_failure_to(end_ns).unwrap_or(0))
    }

    fn total_to(&self, end_ns: Nanos) -> Nanos {
        self.total_ns + self.since.map_or(0, |since| end_ns.saturating_sub(since))
    }
}

/// One range, as the stores reported it.
#[derive(Clone, Debug, Default)]
struct Range {
    /// The store holding its lease now.
    holder: Option<NodeId>,
    /// The store that held it last (for moves).
    last_holder: Option<NodeId>,
    /// Its leader now, with the term.
    leader: Option<(NodeId, u64)>,
    /// Its last leader (for moves).
    last_leader: Option<NodeId>,
    /// The term of its last leader.
    last_term: u64,
    /// Whether it was ever available.
    born: bool,
    /// Whether its lease is being transferred: the stretches it opens are handovers.
    handing_over: bool,
    unavailable: Stretches,
    leaderless: Stretches,
}

impl Range {
    fn available(&self) -> bool {
        self.holder.is_some() && self.holder == self.leader.map(|(node, _)| node)
    }
}

/// A count per store of what it holds, for balance and for crashes.
#[derive(Debug, Default)]
struct PerStore(Vec<BTreeSet<u64>>);

impl PerStore {
    fn of(&mut self, node: NodeId) -> &mut BTreeSet<u64> {
        if self.0.len() <= node.index() {
            self.0.resize(node.index() + 1, BTreeSet::new());
        }
        &mut self.0[node.index()]
    }

    /// The most on one of `stores` stores over the mean per store (1: even), NaN with none.
    fn balance(&self, stores: usize) -> f64 {
        let total: usize = self.0.iter().map(BTreeSet::len).sum();
        if total == 0 || stores == 0 {
            return f64::NAN;
        }
        let max = self.0.iter().map(BTreeSet::len).max().unwrap_or(0);
        max as f64 / (total as f64 / stores as f64)
    }
}

/// The blast-radius measures of one run over `ranges` ranges.
#[derive(Debug)]
pub struct BlastRadius {
    ranges: Vec<Range>,
    /// Per store: the ranges whose lease it holds.
    held: PerStore,
    /// Per store: the ranges it leads.
    led: PerStore,
    /// How many stores showed up.
    stores: usize,
    /// The stores down now (crashed, not restarted): the balances are over the others.
    down: BTreeSet<NodeId>,
    /// Whether half the ranges have held a lease at once yet: the balance curve starts
    /// then (before, a few leases on one store read as a balance of 7).
    balance_started: bool,
    /// Ranges unavailable now, after their birth.
    unavailable_now: usize,
    /// Ranges without a leader now, after their first.
    leaderless_now: usize,
    /// `(time, ranges unavailable from then)`, at every change.
    unavailable_steps: Vec<(Nanos, f64)>,
    /// `(time, ranges without a leader from then)`, at every change.
    leaderless_steps: Vec<(Nanos, f64)>,
    /// `(time, lease balance from then)`, at every change.
    balance_steps: Vec<(Nanos, f64)>,
    lease_transfers: u64,
    /// Per store: its last report of messages sent, `(true time, count)`.
    sent: Vec<(Nanos, u64)>,
    /// The most messages per second one store sent between two of its reports.
    peak_rate: f64,
    peak_unavailable: usize,
    lease_moves: u64,
    leader_moves: u64,
    /// Elections won more than one term after the last leader's.
    multi_round_elections: u64,
}

impl BlastRadius {
    /// A run of `ranges` ranges, none led or leased yet.
    pub fn new(ranges: usize) -> Self {
        Self {
            ranges: vec![Range::default(); ranges],
            held: PerStore::default(),
            led: PerStore::default(),
            stores: 0,
            down: BTreeSet::new(),
            balance_started: false,
            unavailable_now: 0,
            leaderless_now: 0,
            unavailable_steps: Vec::new(),
            leaderless_steps: Vec::new(),
            balance_steps: Vec::new(),
            lease_transfers: 0,
            sent: Vec::new(),
            peak_rate: 0.0,
            peak_unavailable: 0,
            lease_moves: 0,
            leader_moves: 0,
            multi_round_elections: 0,
        }
    }

    /// Looks at `range`'s availability after a change.
    fn settle(&mut self, now_ns: Nanos, range: usize) {
        let r = &mut self.ranges[range];
        if r.available() {
            r.born = true;
            r.handing_over = false;
            if r.unavailable.leave(now_ns) {
                self.unavailable_now -= 1;
                step(&mut self.unavailable_steps, now_ns, self.unavailable_now);
            }
        } else if r.born && r.unavailable.enter(now_ns, r.handing_over) {
            self.unavailable_now += 1;
            self.peak_unavailable = self.peak_unavailable.max(self.unavailable_now);
            step(&mut self.unavailable_steps, now_ns, self.unavailable_now);
        }
    }

    fn lease_start(&mut self, now_ns: Nanos, node: NodeId, range: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        let previous = r.holder.replace(node);
        if r.last_holder.is_some_and(|last| last != node) {
            self.lease_moves += 1;
        }
        r.last_holder = Some(node);
        if let Some(previous) = previous.filter(|&p| p != node) {
            self.held.of(previous).remove(&range);
        }
        self.held.of(node).insert(range);
        self.settle(now_ns, range as usize);
        self.lease_balance_changed(now_ns);
    }

    /// `range`'s holder starts moving its lease: until the range is available again, what
    /// it goes through is a handover.
    fn lease_transfer(&mut self, range: u64) {
        if let Some(r) = self.ranges.get_mut(range as usize) {
            r.handing_over = true;
            self.lease_transfers += 1;
        }
    }

    /// Records the lease balance over the live stores after a lease started or ended, if
    /// it changed, from the first time half the ranges held a lease.
    fn lease_balance_changed(&mut self, now_ns: Nanos) {
        let leases: usize = self.held.0.iter().map(BTreeSet::len).sum();
        self.balance_started |= 2 * leases >= self.ranges.len();
        if !self.balance_started {
            return;
        }
        let balance = self.held.balance(self.live_stores());
        let last = self.balance_steps.last();
        if balance.is_nan() || last.is_some_and(|&(_, b)| b == balance) {
            return;
        }
        match self.balance_steps.last_mut() {
            Some(last) if last.0 == now_ns => last.1 = balance,
            _ => self.balance_steps.push((now_ns, balance)),
        }
    }

    fn lease_end(&mut self, now_ns: Nanos, node: NodeId, range: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        if r.holder != Some(node) {
            return;
        }
        r.holder = None;
        self.held.of(node).remove(&range);
        self.settle(now_ns, range as usize);
        self.lease_balance_changed(now_ns);
    }

    fn leader_start(&mut self, now_ns: Nanos, node: NodeId, range: u64, term: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        if r.leader.is_some_and(|(_, current)| current > term) {
            return;
        }
        if r.last_leader.is_some_and(|last| last != node) {
            self.leader_moves += 1;
        }
        r.last_leader = Some(node);
        if r.last_term > 0 && term > r.last_term + 1 {
            self.multi_round_elections += 1;
        }
        r.last_term = r.last_term.max(term);
        if let Some((previous, _)) = r.leader.replace((node, term)) {
            self.led.of(previous).remove(&range);
        }
        self.led.of(node).insert(range);
        self.settle(now_ns, range as usize);
    }

    /// The leader of `term` committed its first entry: the range has a leader again.
    fn leader_ready(&mut self, now_ns: Nanos, node: NodeId, range: u64, term: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        if r.leader == Some((node, term)) && r.leaderless.leave(now_ns) {
            self.leaderless_now -= 1;
            step(&mut self.leaderless_steps, now_ns, self.leaderless_now);
        }
    }

    /// A campaign for `term`: one more than a round past the last leader's term marks the
    /// open stretches as having taken more than one round.
    fn campaign(&mut self, range: u64, term: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        if r.last_term > 0 && term > r.last_term + 1 {
            r.leaderless.rounds_over_one |= r.leaderless.since.is_some();
            r.unavailable.rounds_over_one |= r.unavailable.since.is_some();
        }
    }

    fn leader_end(&mut self, now_ns: Nanos, node: NodeId, range: u64, term: u64) {
        let Some(r) = self.ranges.get_mut(range as usize) else {
            return;
        };
        if r.leader != Some((node, term)) {
            return;
        }
        r.leader = None;
        if r.leaderless.enter(now_ns, r.handing_over) {
            self.leaderless_now += 1;
            step(&mut self.leaderless_steps, now_ns, self.leaderless_now);
        }
        self.led.of(node).remove(&range);
        self.settle(now_ns, range as usize);
    }

    fn crash(&mut self, now_ns: Nanos, node: NodeId) {
        for range in std::mem::take(self.held.of(node)) {
            self.lease_end(now_ns, node, range);
        }
        for range in std::mem::take(self.led.of(node)) {
            if let Some((leader, term)) = self.ranges[range as usize].leader {
                self.leader_end(now_ns, leader, range, term);
            }
        }
    }

    /// The stores that showed up and are not down now.
    fn live_stores(&self) -> usize {
        self.stores.saturating_sub(self.down.len())
    }

    /// `node` reports `count` messages sent since the run began.
    fn messages_sent(&mut self, now_ns: Nanos, node: NodeId, count: u64) {
        if self.sent.len() <= node.index() {
            self.sent.resize(node.index() + 1, (0, 0));
        }
        let (at, last) = std::mem::replace(&mut self.sent[node.index()], (now_ns, count));
        if now_ns > at && count >= last {
            let rate = (count - last) as f64 * NANOS_PER_SEC as f64 / (now_ns - at) as f64;
            self.peak_rate = self.peak_rate.max(rate);
        }
    }

    /// Messages per second per store, over the run to each store's last report: the mean
    /// over the stores, and the busiest store's.
    fn message_rates(&self) -> (f64, f64) {
        let rates: Vec<f64> = (self.sent.iter())
            .filter(|&&(at, _)| at > 0)
            .map(|&(at, count)| count as f64 * NANOS_PER_SEC as f64 / at as f64)
            .collect();
        if rates.is_empty() {
            return (f64::NAN, f64::NAN);
        }
        let mean = rates.iter().sum::<f64>() / self.stores.max(rates.len()) as f64;
        (mean, rates.iter().copied().fold(0.0, f64::max))
    }

    /// Each range's longest stretch in one condition, for the ranges that were ever in it,
    /// sorted.
    fn longest_ns(&self, end_ns: Nanos, of: impl Fn(&Range) -> &Stretches) -> Vec<Nanos> {
        let mut longest: Vec<Nanos> = (self.ranges.iter().map(&of))
            .filter(|s| s.ever)
            .map(|s| s.longest_to(end_ns))
            .collect();
        longest.sort_unstable();
        longest
    }

    /// The longest stretch in one condition that saw only one-round elections, in seconds.
    fn longest_one_round_s(&self, end_ns: Nanos, of: impl Fn(&Range) -> &Stretches) -> f64 {
        let ever = self.ranges.iter().map(&of).filter(|s| s.ever);
        let longest = ever.map(|s| s.longest_one_round_to(end_ns)).max();
        longest.map_or(f64::NAN, |ns| ns as f64 / NANOS_PER_SEC as f64)
    }
}

/// Records that a count is `now` from `at_ns` on (a later change at the same time wins).
fn step(steps: &mut Vec<(Nanos, f64)>, at_ns: Nanos, now: usize) {
    match steps.last_mut() {
        Some(last) if last.0 == at_ns => last.1 = now as f64,
        _ => steps.push((at_ns, now as f64)),
    }
}

/// `[min, p50, p99, max]` of sorted `values`, in seconds (NaN without values).
fn spread_s(values: &[Nanos]) -> [f64; 4] {
    let seconds = |ns: Nanos| ns as f64 / NANOS_PER_SEC as f64;
    let quantile = |permille: usize| match values.len() {
        0 => f64::NAN,
        n => seconds(values[(n * permille).div_ceil(1000).clamp(1, n) - 1]),
    };
    [quantile(0), quantile(500), quantile(990), quantile(1000)]
}

impl Property for BlastRadius {
    fn name(&self) -> &'static str {
        "blast_radius"
    }

    fn check(&mut self, now_ns: Nanos, observation: &Observation) -> Result<(), Breach> {
        // Every store shows up (its terms after each handler): the balances' denominator.
        self.stores = self.stores.max(observation.node().index() + 1);
        if let Observation::User {
            node,
            name: MESSAGES_SENT,
            value: Value::U64(count),
        } = *observation
        {
            self.messages_sent(now_ns, node, count);
            return Ok(());
        }
        let Observation::User {
            node,
            name,
            value: Value::Pair(range, second),
        } = *observation
        else {
            match *observation {
                Observation::Crash { node } => {
                    self.down.insert(node);
                    self.crash(now_ns, node);
                }
                Observation::Restart { node } => {
                    self.down.remove(&node);
                }
                _ => {}
            }
            return Ok(());
        };
        match name {
            LEASE_START => self.lease_start(now_ns, node, range),
            LEASE_END => self.lease_end(now_ns, node, range),
            RANGE_LEADER => self.leader_start(now_ns, node, range, second),
            LEADER_END => self.leader_end(now_ns, node, range, second),
            CAMPAIGN => self.campaign(range, second),
            LEADER_READY => self.leader_ready(now_ns, node, range, second),
            LEASE_TRANSFER => self.lease_transfer(range),
            _ => {}
        }
        Ok(())
    }

    fn measures(&self, end_ns: Nanos) -> Vec<Measured> {
        let seconds = |ns: Nanos| ns as f64 / NANOS_PER_SEC as f64;
        let outages = self.longest_ns(end_ns, |r| &r.unavailable);
        let leaderless = self.longest_ns(end_ns, |r| &r.leaderless);
        let never = self.ranges.iter().filter(|r| !r.born).count();
        let unavailable_ns: Nanos = (self.ranges.iter())
            .map(|r| r.unavailable.total_to(end_ns))
            .sum();
        let (handovers, handover_max_ns) = (self.ranges.iter())
            .map(|r| r.unavailable.handovers_to(end_ns))
            .fold((0, 0), |(n, longest), (count, ns)| {
                (n + count, longest.max(ns))
            });
        let [o_min, o_p50, o_p99, o_max] = spread_s(&outages);
        let (rate_mean, rate_max) = self.message_rates();
        let peak = if rate_mean.is_nan() {
            f64::NAN
        } else {
            self.peak_rate
        };
        let [l_min, l_p50, l_p99, l_max] = spread_s(&leaderless);
        let values = [
            outages.len() as f64,
            never as f64,
            self.peak_unavailable as f64,
            o_min,
            o_p50,
            o_p99,
            o_max,
            self.longest_one_round_s(end_ns, |r| &r.unavailable),
            seconds(unavailable_ns),
            leaderless.len() as f64,
            l_min,
            l_p50,
            l_p99,
            l_max,
            self.longest_one_round_s(end_ns, |r| &r.leaderless),
            self.multi_round_elections as f64,
            self.leader_moves as f64,
            self.lease_moves as f64,
            self.held.balance(self.live_stores()),
            self.led.balance(self.live_stores()),
            self.lease_transfers as f64,
            handovers as f64,
            if handovers == 0 {
                f64::NAN
            } else {
                seconds(handover_max_ns)
            },
            rate_mean,
            rate_max,
            peak,
        ];
        MEASURES
            .iter()
            .zip(values)
            .map(|(&name, value)| Measured::new(name, value))
            .collect()
    }

    fn curves(&self, end_ns: Nanos) -> Vec<Curve> {
        vec![
            Curve::new("ranges_unavailable", self.unavailable_steps.clone(), end_ns),
            Curve::new("ranges_leaderless", self.leaderless_steps.clone(), end_ns),
            Curve::new("lease_balance", self.balance_steps.clone(), end_ns),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = NANOS_PER_SEC;

    fn pair(name: &'static str, node: usize, range: u64, second: u64) -> Observation {
        Observation::User {
            node: NodeId::from(node),
            name,
            value: Value::Pair(range, second),
        }
    }

    /// `node` leads `range` in `term` and takes its lease.
    fn lead_and_lease(blast: &mut BlastRadius, at: Nanos, node: usize, range: u64, term: u64) {
        blast
            .check(at, &pair(RANGE_LEADER, node, range, term))
            .unwrap();
        blast
            .check(at, &pair(LEADER_READY, node, range, term))
            .unwrap();
        blast.check(at, &pair(LEASE_START, node, range, 1)).unwrap();
    }

    fn measured(blast: &BlastRadius, end_ns: Nanos) -> impl Fn(&str) -> f64 + use<> {
        let m: Vec<(&'static str, f64)> = blast
            .measures(end_ns)
            .into_iter()
            .map(|m| (m.name, m.value))
            .collect();
        move |name| m.iter().find(|(n, _)| *n == name).unwrap().1
    }

    #[test]
    fn a_crash_makes_the_ranges_of_its_store_unavailable_until_others_lead_and_lease_them() {
        let mut blast = BlastRadius::new(4);
        for range in 0..4 {
            lead_and_lease(&mut blast, 0, range as usize % 2, range, 1);
        }
        // Store 0 (ranges 0 and 2) crashes at 10 s; store 1 leads range 0 at 12 s (term 2)
        // and takes its lease at 13 s; range 2 takes three terms (a split vote) and its
        // lease at 16 s; range 3's lease lapses at 20 s and is back on store 1 at 21 s.
        let crash = Observation::Crash {
            node: NodeId::from(0usize),
        };
        blast.check(10 * S, &crash).unwrap();
        blast.check(11 * S, &pair(CAMPAIGN, 1, 2, 2)).unwrap();
        blast.check(12 * S, &pair(RANGE_LEADER, 1, 0, 2)).unwrap();
        blast.check(12 * S, &pair(LEADER_READY, 1, 0, 2)).unwrap();
        blast.check(13 * S, &pair(LEASE_START, 1, 0, 2)).unwrap();
        blast.check(14 * S, &pair(CAMPAIGN, 1, 2, 3)).unwrap();
        blast.check(15 * S, &pair(RANGE_LEADER, 1, 2, 3)).unwrap();
        blast.check(15 * S, &pair(LEADER_READY, 1, 2, 3)).unwrap();
        blast.check(16 * S, &pair(LEASE_START, 1, 2, 2)).unwrap();
        blast.check(20 * S, &pair(LEASE_END, 1, 3, 1)).unwrap();
        blast.check(21 * S, &pair(LEASE_START, 1, 3, 2)).unwrap();
        let get = measured(&blast, 30 * S);
        assert_eq!(get("ranges_lost"), 3.0);
        assert_eq!(get("never_available"), 0.0);
        assert_eq!(get("peak_unavailable"), 2.0);
        assert_eq!((get("outage_min_s"), get("outage_p50_s")), (1.0, 3.0));
        assert_eq!(get("outage_max_s"), 6.0);
        assert_eq!(
            get("outage_max_one_round_s"),
            3.0,
            "range 2 took two rounds"
        );
        assert_eq!(get("unavailable_range_s"), 10.0);
        assert_eq!(get("ranges_leaderless"), 2.0);
        assert_eq!(
            (get("leaderless_min_s"), get("leaderless_max_s")),
            (2.0, 5.0)
        );
        assert_eq!(get("leaderless_max_one_round_s"), 2.0);
        assert_eq!(get("multi_round_elections"), 1.0);
        assert_eq!((get("leader_moves"), get("lease_moves")), (2.0, 2.0));
        // Store 0 is still down: store 1, the only live one, holds all 4 (even).
        assert_eq!(get("lease_balance_max_over_mean"), 1.0);
        assert_eq!(get("leader_balance_max_over_mean"), 1.0);
        blast
            .check(30 * S, &Observation::Restart { node: NodeId(0) })
            .unwrap();
        let get = measured(&blast, 30 * S);
        assert_eq!(get("lease_balance_max_over_mean"), 2.0, "all 4 on one of 2");
        let curves = blast.curves(30 * S);
        assert_eq!(curves[0].name, "ranges_unavailable");
        let down: Vec<(Nanos, f64)> = curves[0].points.clone();
        let expected = [0, 10, 13, 16, 20, 21, 30].map(|s| s * S);
        let values = [0.0, 2.0, 1.0, 0.0, 1.0, 0.0, 0.0];
        assert_eq!(down, expected.into_iter().zip(values).collect::<Vec<_>>());
        assert_eq!(
            curves[1].at(11 * S),
            2.0,
            "ranges 0 and 2 leaderless at 11 s"
        );
        assert_eq!(curves[1].at(13 * S), 1.0);
    }

    #[test]
    fn a_leaseholder_that_loses_the_leadership_leaves_its_range_unavailable() {
        let mut blast = BlastRadius::new(3);
        lead_and_lease(&mut blast, S, 0, 0, 1);
        // Store 1 leads range 0 in term 2 while store 0 keeps the lease (an epoch lease
        // whose holder is cut off from the new leader): unavailable to the end.
        blast.check(2 * S, &pair(RANGE_LEADER, 1, 0, 2)).unwrap();
        // A stale leader's end (term 1) changes nothing; a lease end from a store that
        // does not hold the range neither.
        blast.check(3 * S, &pair(LEADER_END, 0, 0, 1)).unwrap();
        blast.check(3 * S, &pair(LEASE_END, 1, 1, 1)).unwrap();
        let get = measured(&blast, 10 * S);
        assert_eq!((get("ranges_lost"), get("never_available")), (1.0, 2.0));
        assert_eq!(
            (get("outage_max_s"), get("unavailable_range_s")),
            (8.0, 8.0)
        );
        assert_eq!(get("ranges_leaderless"), 0.0, "it always had a leader");
        assert!(get("leaderless_max_s").is_nan());
    }
}
