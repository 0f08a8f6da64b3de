//! The nemesis: random fault schedules drawn from a seed. A schedule is materialised into
//! ordinary [`FaultSpec`]s before the run, so a failing schedule can be shrunk and written out
//! as an explicit scenario. Every fault heals before the run's quiet tail, so liveness is
//! checked too, but a crash for good ([`NemesisKind::CrashForGood`]), which stays: liveness
//! is then judged among the members left.
//!
//! Swarm mode (Groce et al., "Swarm Testing", ISSTA 2012): each seed first draws which fault
//! kinds are enabled and how often each occurs, and its own rates and magnitudes (how often
//! faults come, how long they last, how much loss, how far clocks jump, how slow disks get,
//! optionally the network's latency) from the [`SwarmRanges`], so rare combinations get
//! explored instead of every run being the same average mix. The rates come from their own
//! stream ([`StreamId::SWARM`]), the kinds and faults from [`StreamId::NEMESIS`].

mod strike;
mod swarm;
#[cfg(test)]
mod tests;

pub use swarm::{Drawn, Rates, Schedule, SwarmRanges};

use crate::fault::FaultAction;
use crate::fault::FaultSpec;
use crate::rng::{SimRng, StreamId, PPM};
use crate::time::Nanos;
use serde::{Deserialize, Serialize};
use strike::{fault_of, Strike};

/// A kind of fault the nemesis may inject.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum NemesisKind {
    /// [`FaultAction::Crash`] of a node, restarted after the fault's duration.
    Crash,
    /// [`FaultAction::Pause`] of a node for the fault's duration.
    Pause,
    /// [`FaultAction::Stall`] of a node for the fault's duration.
    Stall,
    /// [`PartitionShape::Isolate`](crate::fault::PartitionShape::Isolate): one node cut off from everyone, then healed.
    Isolate,
    /// [`PartitionShape::MajorityMinority`](crate::fault::PartitionShape::MajorityMinority): a minority around one node against the rest.
    MajorityMinority,
    /// [`PartitionShape::OneWay`](crate::fault::PartitionShape::OneWay): one node's messages to everyone lost, the other way open.
    OneWay,
    /// [`PartitionShape::CutLink`](crate::fault::PartitionShape::CutLink): the link between one node and a follower cut.
    CutLink,
    /// [`PartitionShape::Bridge`](crate::fault::PartitionShape::Bridge): two halves that talk only through one random node.
    Bridge,
    /// [`FaultAction::Loss`] on every link, up to [`NemesisConfig::max_loss_ppm`].
    LossBurst,
    /// [`FaultAction::Duplicate`] on every link, up to [`NemesisConfig::max_loss_ppm`]
    /// (the same bound as loss).
    Duplicate,
    /// [`FaultAction::ClockJump`] of a node's clock, up to
    /// [`NemesisConfig::max_clock_jump_ns`] either way.
    ClockJump,
    /// [`FaultAction::ClockDrift`] of a node's clock, up to [`NemesisConfig::max_drift_ppm`]
    /// either way, restored after the fault's duration.
    ClockDrift,
    /// [`FaultAction::Resign`] of the leader: a planned handover.
    Resign,
    /// [`FaultAction::Suspend`] of a node for the fault's duration (VM suspend, live
    /// migration). Not in [`NemesisKind::DEFAULT`]: asked for by name, so that hunts written
    /// before it keep their fault schedules seed for seed.
    Suspend,
    /// [`FaultAction::SlowDisk`] of a process for the fault's duration: every fsync takes up
    /// to [`NemesisConfig::max_fsync_ns`]. Not in [`NemesisKind::DEFAULT`], as `Suspend`.
    SlowDisk,
    /// [`FaultAction::Crash`] of a member that never restarts (a dead machine): the fault a
    /// liveness bug after a leader's death needs. At most a minority of the members,
    /// `(n - 1) / 2`, per schedule (later draws of the kind are dropped), so that a majority
    /// is left to elect. Asked for by name only: not in [`NemesisKind::DEFAULT`] nor in
    /// [`NemesisKind::ALL`], so that swarm hunts written before keep their schedules.
    CrashForGood,
    /// [`FaultAction::ConfChange`] asked of the leader: a membership change of a member
    /// drawn uniformly, its operation drawn among remove (one half), add (one quarter),
    /// add as a learner and promote (one eighth each). Only external nodes act on it. Asked
    /// for by name only, as `CrashForGood`.
    ConfChange,
}

impl NemesisKind {
    /// The kinds a nemesis draws from when the scenario names none, in a stable order:
    /// every kind but `Suspend`.
    pub const DEFAULT: [NemesisKind; 13] = [
        NemesisKind::Crash,
        NemesisKind::Pause,
        NemesisKind::Stall,
        NemesisKind::Isolate,
        NemesisKind::MajorityMinority,
        NemesisKind::OneWay,
        NemesisKind::CutLink,
        NemesisKind::Bridge,
        NemesisKind::LossBurst,
        NemesisKind::Duplicate,
        NemesisKind::ClockJump,
        NemesisKind::ClockDrift,
        NemesisKind::Resign,
    ];

    /// Every kind but [`NemesisKind::CrashForGood`], in a stable order: what swarm mode draws
    /// from when the scenario names no kinds.
    pub const ALL: [NemesisKind; 15] = [
        NemesisKind::Crash,
        NemesisKind::Pause,
        NemesisKind::Stall,
        NemesisKind::Isolate,
        NemesisKind::MajorityMinority,
        NemesisKind::OneWay,
        NemesisKind::CutLink,
        NemesisKind::Bridge,
        NemesisKind::LossBurst,
        NemesisKind::Duplicate,
        NemesisKind::ClockJump,
        NemesisKind::ClockDrift,
        NemesisKind::Resign,
        NemesisKind::Suspend,
        NemesisKind::SlowDisk,
    ];

    /// Whether the kind acts on messages (cuts links, loses or duplicates them): it does
    /// nothing in a run where no message is ever sent.
    pub fn acts_on_messages(self) -> bool {
        matches!(
            self,
            NemesisKind::Isolate
                | NemesisKind::MajorityMinority
                | NemesisKind::OneWay
                | NemesisKind::CutLink
                | NemesisKind::Bridge
                | NemesisKind::LossBurst
                | NemesisKind::Duplicate
        )
    }
}

/// Which members the nemesis's single-node faults strike.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename = "nemesis targets")]
pub enum NemesisTargets {
    /// Mostly the leader, else followers and anyone (the default mix).
    #[default]
    Any,
    /// Always the leader when the fault fires (a liveness bug after the leader's death).
    Leader,
    /// Always a follower (a bug in how a follower rejoins or is elected).
    Followers,
}

/// How the nemesis behaves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NemesisConfig {
    /// The kinds that may occur (in swarm mode: the kinds each seed chooses among, when
    /// `kinds_listed`; else swarm mode chooses among [`NemesisKind::ALL`]).
    pub kinds: Vec<NemesisKind>,
    /// Which members its single-node faults strike. The draws are the same whatever this
    /// is: only the target of each fault changes.
    pub targets: NemesisTargets,
    /// Whether the scenario listed `kinds`; `false`: they are [`NemesisKind::DEFAULT`].
    pub kinds_listed: bool,
    /// The mean time between two faults (exponentially distributed gaps).
    pub mean_interval_ns: Nanos,
    /// How long each fault lasts, uniform in this inclusive range.
    pub fault_duration_ns: (Nanos, Nanos),
    /// No fault starts before this time.
    pub start_ns: Nanos,
    /// Every fault has healed this long before the run ends (liveness gets checked).
    pub quiet_ns: Nanos,
    /// The largest clock jump, either way.
    pub max_clock_jump_ns: Nanos,
    /// The largest drift a drift fault sets, either way, in parts per million.
    pub max_drift_ppm: u32,
    /// The highest loss rate of a loss burst, in parts per million.
    pub max_loss_ppm: u32,
    /// The longest fsync a slow disk takes; each slow disk draws its fsync time between a
    /// tenth of this and this.
    pub max_fsync_ns: Nanos,
    /// Draw the enabled kinds, their weights and the rates per seed. The default of a
    /// scenario file with a nemesis; `false` in [`NemesisConfig::default`], so that schedules
    /// drawn from it in code stay the same.
    pub swarm: bool,
    /// Where swarm mode draws each seed's rates from.
    pub swarm_ranges: SwarmRanges,
    /// The algorithm runs a coordination service: single-process faults strike it too (one in
    /// six of them). Not a scenario setting: the caller derives it from the algorithm when it
    /// draws the schedule.
    pub strike_service: bool,
    /// The coordination service runs as several processes (an etcd cluster, a ZooKeeper
    /// ensemble): a strike on the service names its leader or one of its followers
    /// (`ServiceLeader`, `ServiceFollower`) instead of the whole service. Derived like
    /// `strike_service`.
    pub clustered_service: bool,
}

impl Default for NemesisConfig {
    fn default() -> Self {
        let mut config = Self {
            kinds: NemesisKind::DEFAULT.to_vec(),
            kinds_listed: false,
            targets: NemesisTargets::Any,
            mean_interval_ns: 5_000_000_000,
            fault_duration_ns: (100_000_000, 5_000_000_000),
            start_ns: 1_000_000_000,
            quiet_ns: 10_000_000_000,
            max_clock_jump_ns: 2_000_000_000,
            max_drift_ppm: 100_000,
            max_loss_ppm: 500_000,
            max_fsync_ns: 1_000_000_000,
            swarm: false,
            swarm_ranges: SwarmRanges::default(),
            strike_service: false,
            clustered_service: false,
        };
        config.swarm_ranges = SwarmRanges::around(&config);
        config
    }
}

impl NemesisConfig {
    /// The kinds a seed chooses among: every kind in swarm mode unless the scenario listed
    /// some, else `kinds`.
    pub fn kinds_drawn(&self) -> Vec<NemesisKind> {
        if self.swarm && !self.kinds_listed {
            NemesisKind::ALL.to_vec()
        } else {
            self.kinds.clone()
        }
    }

    /// The rates of a run without swarm mode: the scalar settings as they are.
    pub fn fixed_rates(&self) -> Rates {
        Rates {
            mean_interval_ns: self.mean_interval_ns,
            longest_fault_ns: self.fault_duration_ns.1.max(self.fault_duration_ns.0),
            max_loss_ppm: self.max_loss_ppm,
            max_duplicate_ppm: self.max_loss_ppm,
            max_clock_jump_ns: self.max_clock_jump_ns,
            max_drift_ppm: self.max_drift_ppm,
            max_fsync_ns: self.max_fsync_ns,
            latency_max_ns: None,
        }
    }
}

/// Draws the schedule of `seed` for a run of `duration_ns` with `members` members.
pub fn generate(config: &NemesisConfig, seed: u64, members: usize, duration_ns: Nanos) -> Schedule {
    let mut rng = SimRng::stream(seed, StreamId::NEMESIS);
    let enabled = enabled_kinds(config, &mut rng);
    let rates = if config.swarm {
        config.swarm_ranges.draw(seed)
    } else {
        config.fixed_rates()
    };
    let total_weight: u32 = enabled.iter().map(|(_, w)| w).sum();
    let mut faults = Vec::new();
    if total_weight == 0 || rates.mean_interval_ns == 0 {
        return Schedule {
            enabled,
            rates,
            faults,
        };
    }
    let end = duration_ns.saturating_sub(config.quiet_ns);
    let mut at = config.start_ns;
    let mut for_good_left = members.saturating_sub(1) / 2;
    let shortest_ns = config.fault_duration_ns.0.min(rates.longest_fault_ns);
    loop {
        at = at.saturating_add(rng.exponential(rates.mean_interval_ns).max(1));
        let lasts = rng.between(shortest_ns, rates.longest_fault_ns).max(1);
        if at.saturating_add(lasts) > end {
            break;
        }
        let kind = pick_weighted(&enabled, total_weight, &mut rng);
        let strike = Strike {
            at_ns: at,
            lasts_ns: lasts,
            members,
            targets: config.targets,
            service: config.strike_service && kind.strikes_service(config.swarm),
            clustered_service: config.clustered_service,
        };
        let fault = fault_of(kind, &strike, &rates, &mut rng);
        if kind == NemesisKind::CrashForGood {
            if for_good_left == 0 {
                continue;
            }
            for_good_left -= 1;
        }
        faults.push(catch_up_before(fault, end));
    }
    Schedule {
        enabled,
        rates,
        faults,
    }
}

/// A clock stepped back lags (its timers, its elapsed-time checks) until it has caught up
/// with what it read before: the step is shortened so that this ends by `end`, like every
/// other fault, and the quiet tail really is quiet. Only the size changes: the random
/// draws, and so every other fault, stay as they were.
fn catch_up_before(mut fault: FaultSpec, end: Nanos) -> FaultSpec {
    if let FaultAction::ClockJump(_, delta) = &mut fault.action {
        let room_ns = end.saturating_sub(fault.at_ns).min(i64::MAX as u64) as i64;
        *delta = (*delta).max(-room_ns);
    }
    fault
}

fn enabled_kinds(config: &NemesisConfig, rng: &mut SimRng) -> Vec<(NemesisKind, u32)> {
    let mut kinds = config.kinds_drawn();
    kinds.sort();
    kinds.dedup();
    if !config.swarm {
        return kinds.into_iter().map(|k| (k, 1)).collect();
    }
    // Each kind is on with probability 1/2 and weighted 1 to 4; at least one stays on.
    let mut enabled: Vec<(NemesisKind, u32)> = Vec::new();
    for kind in &kinds {
        let on = rng.chance_ppm(PPM / 2);
        let weight = rng.between(1, 4) as u32;
        if on {
            enabled.push((*kind, weight));
        }
    }
    if enabled.is_empty() && !kinds.is_empty() {
        let kind = kinds[rng.index(kinds.len())];
        enabled.push((kind, 1));
    }
    enabled
}

fn pick_weighted(enabled: &[(NemesisKind, u32)], total: u32, rng: &mut SimRng) -> NemesisKind {
    let mut ticket = rng.below(u64::from(total)) as u32;
    for (kind, weight) in enabled {
        if ticket < *weight {
            return *kind;
        }
        ticket -= weight;
    }
    unreachable!("the tickets add up to the total weight")
}
