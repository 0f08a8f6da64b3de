//! The nemesis: random fault schedules drawn from a seed. A schedule is materialised into
//! ordinary [`FaultSpec`]s before the run, so a failing schedule can be shrunk and written out
//! as an explicit scenario. Every fault heals before the run's quiet tail, so liveness is
//! checked too.
//!
//! Swarm mode (Groce et al., "Swarm Testing", ISSTA 2012): each seed first draws which fault
//! kinds are enabled and how often each occurs, and its own rates and magnitudes (how often
//! faults come, how long they last, how much loss, how far clocks jump, how slow disks get,
//! optionally the network's latency) from the [`SwarmRanges`], so rare combinations get
//! explored instead of every run being the same average mix. The rates come from their own
//! stream ([`StreamId::SWARM`]), the kinds and faults from [`StreamId::NEMESIS`].

use crate::fault::{FaultAction, FaultSpec, PartitionShape, Target};
use crate::network_config::Latency;
use crate::rng::{SimRng, StreamId, PPM};
use crate::time::Nanos;
use serde::{Deserialize, Serialize};

/// A kind of fault the nemesis may inject.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum NemesisKind {
    /// [`FaultAction::Crash`] of a node, restarted after the fault's duration.
    Crash,
    /// [`FaultAction::Pause`] of a node for the fault's duration.
    Pause,
    /// [`FaultAction::Stall`] of a node for the fault's duration.
    Stall,
    /// [`PartitionShape::Isolate`]: one node cut off from everyone, then healed.
    Isolate,
    /// [`PartitionShape::MajorityMinority`]: a minority around one node against the rest.
    MajorityMinority,
    /// [`PartitionShape::OneWay`]: one node's messages to everyone lost, the other way open.
    OneWay,
    /// [`PartitionShape::CutLink`]: the link between one node and a follower cut.
    CutLink,
    /// [`PartitionShape::Bridge`]: two halves that talk only through one random node.
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

    /// Every kind, in a stable order: what swarm mode draws from when the scenario names no
    /// kinds.
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

/// How the nemesis behaves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NemesisConfig {
    /// The kinds that may occur (in swarm mode: the kinds each seed chooses among, when
    /// `kinds_listed`; else swarm mode chooses among [`NemesisKind::ALL`]).
    pub kinds: Vec<NemesisKind>,
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
}

impl Default for NemesisConfig {
    fn default() -> Self {
        let mut config = Self {
            kinds: NemesisKind::DEFAULT.to_vec(),
            kinds_listed: false,
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

/// The inclusive ranges swarm mode draws each seed's [`Rates`] from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SwarmRanges {
    /// The seed's mean gap between faults.
    pub mean_interval_ns: (Nanos, Nanos),
    /// The seed's longest fault: its faults last between the low end of
    /// [`NemesisConfig::fault_duration_ns`] and this.
    pub longest_fault_ns: (Nanos, Nanos),
    /// The seed's highest loss rate of a burst, and (drawn apart) of duplication, in ppm.
    pub max_loss_ppm: (u32, u32),
    /// The seed's largest clock jump, either way.
    pub max_clock_jump_ns: (Nanos, Nanos),
    /// The seed's largest drift, either way, in ppm.
    pub max_drift_ppm: (u32, u32),
    /// The seed's longest fsync of a slow disk.
    pub max_fsync_ns: (Nanos, Nanos),
    /// The seed's longest one-way message latency: its links' default latency becomes uniform
    /// between the low end of this range and the drawn value. `None`: the scenario's
    /// network as written.
    pub latency_ns: Option<(Nanos, Nanos)>,
}

impl SwarmRanges {
    /// The ranges a scenario gets when it gives none: around its scalar settings. Half to
    /// twice the mean interval; the longest fault anywhere in `fault_duration`; a tenth of
    /// each maximum up to it (loss, clock jump, drift, fsync); the latency as written.
    pub fn around(config: &NemesisConfig) -> Self {
        let tenth_up_to = |max: Nanos| ((max / 10).max(1).min(max), max);
        let tenth_up_to_ppm = |max: u32| ((max / 10).max(1).min(max), max);
        let (low, high) = config.fault_duration_ns;
        Self {
            mean_interval_ns: (
                (config.mean_interval_ns / 2).max(1),
                config.mean_interval_ns.saturating_mul(2),
            ),
            longest_fault_ns: (low.min(high), high.max(low)),
            max_loss_ppm: tenth_up_to_ppm(config.max_loss_ppm),
            max_clock_jump_ns: tenth_up_to(config.max_clock_jump_ns),
            max_drift_ppm: tenth_up_to_ppm(config.max_drift_ppm),
            max_fsync_ns: tenth_up_to(config.max_fsync_ns),
            latency_ns: None,
        }
    }

    /// Draws one seed's rates, from that seed's own [`StreamId::SWARM`] stream: the same
    /// eight draws in the same order whatever the kinds, so the rates never move the faults'
    /// draws nor each other.
    pub fn draw(&self, seed: u64) -> Rates {
        let mut rng = SimRng::stream(seed, StreamId::SWARM);
        let mut within = |(low, high): (u64, u64)| rng.between(low.min(high), high.max(low));
        let mean_interval_ns = within(self.mean_interval_ns).max(1);
        let longest_fault_ns = within(self.longest_fault_ns);
        let ppm = |(low, high): (u32, u32)| (u64::from(low), u64::from(high));
        let max_loss_ppm = within(ppm(self.max_loss_ppm)) as u32;
        let max_duplicate_ppm = within(ppm(self.max_loss_ppm)) as u32;
        let max_clock_jump_ns = within(self.max_clock_jump_ns);
        let max_drift_ppm = within(ppm(self.max_drift_ppm)) as u32;
        let max_fsync_ns = within(self.max_fsync_ns);
        let latency = within(self.latency_ns.unwrap_or((0, 0)));
        Rates {
            mean_interval_ns,
            longest_fault_ns,
            max_loss_ppm,
            max_duplicate_ppm,
            max_clock_jump_ns,
            max_drift_ppm,
            max_fsync_ns,
            latency_max_ns: self.latency_ns.map(|_| latency),
        }
    }
}

/// The rates and magnitudes one seed's nemesis runs with: drawn in swarm mode, the scalar
/// settings otherwise ([`NemesisConfig::fixed_rates`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rates {
    /// The mean gap between faults.
    pub mean_interval_ns: Nanos,
    /// The longest a fault lasts.
    pub longest_fault_ns: Nanos,
    /// The highest loss rate of a loss burst, in ppm.
    pub max_loss_ppm: u32,
    /// The highest duplication rate of a duplication burst, in ppm.
    pub max_duplicate_ppm: u32,
    /// The largest clock jump, either way.
    pub max_clock_jump_ns: Nanos,
    /// The largest drift, either way, in ppm.
    pub max_drift_ppm: u32,
    /// The longest fsync of a slow disk.
    pub max_fsync_ns: Nanos,
    /// The longest one-way latency of the run's links, when swarm mode varies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_max_ns: Option<Nanos>,
}

/// What one seed's nemesis will do: the kinds it enabled with their weights, its rates, and
/// the faults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// The kinds this seed enabled, each with its weight (1 without swarm mode).
    pub enabled: Vec<(NemesisKind, u32)>,
    /// The rates and magnitudes the faults were drawn with.
    pub rates: Rates,
    /// The faults drawn, in time order, each healing before the quiet tail.
    pub faults: Vec<FaultSpec>,
}

impl Schedule {
    /// The links' default latency of this seed's run, when swarm mode drew one: uniform
    /// between the low end of the range and the drawn maximum.
    pub fn latency(&self, config: &NemesisConfig) -> Option<Latency> {
        let (low, _) = config.swarm_ranges.latency_ns?;
        let high = self.rates.latency_max_ns?;
        Some(Latency::Uniform(low.min(high), high))
    }
}

impl Schedule {
    /// What the seed drew, without its faults: what a hunt's record, a reproducer and a
    /// summary show of it.
    pub fn drawn(&self, swarm: bool) -> Drawn {
        Drawn {
            swarm,
            enabled: self.enabled.clone(),
            rates: self.rates.clone(),
        }
    }
}

/// What one seed's nemesis drew: the kinds it enabled with their weights and its rates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drawn {
    /// Whether swarm mode drew them (else they are the scenario's settings).
    pub swarm: bool,
    /// The kinds enabled, each with its weight.
    pub enabled: Vec<(NemesisKind, u32)>,
    /// The rates and magnitudes.
    pub rates: Rates,
}

impl Drawn {
    /// One line for people: `swarm: Crash x3, Stall x1; a fault every 3.2s on average,
    /// lasting up to 1.1s`, then the magnitudes of the kinds that are on.
    pub fn describe(&self) -> String {
        let kinds: Vec<String> = self
            .enabled
            .iter()
            .map(|(kind, weight)| format!("{kind:?} x{weight}"))
            .collect();
        let r = &self.rates;
        let on = |kind: NemesisKind| self.enabled.iter().any(|(k, _)| *k == kind);
        let pct = |ppm: u32| format!("{:.1}%", f64::from(ppm) / 10_000.0);
        let time = crate::time::format_duration;
        let mut parts = vec![format!(
            "a fault every {} on average, lasting up to {}",
            time(r.mean_interval_ns),
            time(r.longest_fault_ns)
        )];
        let magnitudes = [
            (
                NemesisKind::LossBurst,
                format!("loss up to {}", pct(r.max_loss_ppm)),
            ),
            (
                NemesisKind::Duplicate,
                format!("duplication up to {}", pct(r.max_duplicate_ppm)),
            ),
            (
                NemesisKind::ClockJump,
                format!("clock jumps up to {}", time(r.max_clock_jump_ns)),
            ),
            (
                NemesisKind::ClockDrift,
                format!("drift up to {} ppm", r.max_drift_ppm),
            ),
            (
                NemesisKind::SlowDisk,
                format!("fsync up to {}", time(r.max_fsync_ns)),
            ),
        ];
        parts.extend(
            magnitudes
                .into_iter()
                .filter(|(kind, _)| on(*kind))
                .map(|(_, part)| part),
        );
        if let Some(latency) = r.latency_max_ns {
            parts.push(format!("latency up to {}", time(latency)));
        }
        format!(
            "{}: {}; {}",
            if self.swarm { "swarm" } else { "fixed" },
            kinds.join(", "),
            parts.join(", ")
        )
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
            service: config.strike_service && kind.strikes_service(config.swarm),
        };
        let fault = fault_of(kind, &strike, &rates, &mut rng);
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

/// A node target: mostly the leader (the interesting case), else followers and anyone, and
/// with `service` the coordination service.
fn node_target(members: usize, service: bool, rng: &mut SimRng) -> Target {
    match rng.below(if service { 12 } else { 10 }) {
        0..=3 => Target::Leader,
        4..=6 => Target::Follower,
        7..=8 => Target::Random,
        9 => Target::Node(rng.below(members as u64) as u32),
        _ => Target::Service,
    }
}

impl NemesisKind {
    /// Whether the kind may strike the coordination service. Without swarm mode, only the
    /// kinds that did before swarm mode reached every fault (so those schedules stay the same
    /// seed for seed); in swarm mode, every kind that strikes one process.
    fn strikes_service(self, swarm: bool) -> bool {
        let before = matches!(
            self,
            NemesisKind::Crash
                | NemesisKind::Pause
                | NemesisKind::Suspend
                | NemesisKind::Stall
                | NemesisKind::Isolate
                | NemesisKind::ClockJump
                | NemesisKind::ClockDrift
        );
        let since = matches!(
            self,
            NemesisKind::OneWay | NemesisKind::CutLink | NemesisKind::SlowDisk
        );
        before || (swarm && since)
    }
}

/// Where and when one fault strikes.
struct Strike {
    at_ns: Nanos,
    lasts_ns: Nanos,
    members: usize,
    /// Whether it may strike the coordination service.
    service: bool,
}

impl Strike {
    fn healing(&self, action: FaultAction) -> FaultSpec {
        FaultSpec {
            at_ns: self.at_ns,
            action,
            heal_after_ns: Some(self.lasts_ns),
        }
    }

    fn once(&self, action: FaultAction) -> FaultSpec {
        FaultSpec {
            at_ns: self.at_ns,
            action,
            heal_after_ns: None,
        }
    }

    fn partition(&self, shape: PartitionShape) -> FaultSpec {
        self.healing(FaultAction::Partition(shape))
    }
}

fn fault_of(kind: NemesisKind, strike: &Strike, rates: &Rates, rng: &mut SimRng) -> FaultSpec {
    let target = node_target(strike.members, strike.service, rng);
    let lasts = strike.lasts_ns;
    match kind {
        NemesisKind::Crash => strike.healing(FaultAction::Crash(target)),
        NemesisKind::Pause => strike.once(FaultAction::Pause(target, lasts)),
        NemesisKind::Suspend => strike.once(FaultAction::Suspend(target, lasts)),
        NemesisKind::Stall => strike.once(FaultAction::Stall(target, lasts)),
        NemesisKind::Isolate => strike.partition(PartitionShape::Isolate(target)),
        NemesisKind::MajorityMinority => strike.partition(PartitionShape::MajorityMinority(target)),
        NemesisKind::OneWay => strike.partition(PartitionShape::OneWay {
            from: target,
            to: Target::All,
        }),
        NemesisKind::CutLink => strike.partition(PartitionShape::CutLink(target, Target::Follower)),
        NemesisKind::Bridge => strike.partition(PartitionShape::Bridge(Target::Random)),
        NemesisKind::LossBurst => {
            let ppm = rng.between(1, u64::from(rates.max_loss_ppm.max(1))) as u32;
            strike.healing(FaultAction::Loss(ppm))
        }
        NemesisKind::Duplicate => {
            let ppm = rng.between(1, u64::from(rates.max_duplicate_ppm.max(1))) as u32;
            strike.healing(FaultAction::Duplicate(ppm))
        }
        NemesisKind::ClockJump => {
            let max = rates.max_clock_jump_ns.min(i64::MAX as u64) as i64;
            strike.once(FaultAction::ClockJump(
                target,
                rng.between_signed(-max, max),
            ))
        }
        NemesisKind::ClockDrift => {
            let max = i64::from(rates.max_drift_ppm.min(999_999));
            strike.healing(FaultAction::ClockDrift(
                target,
                rng.between_signed(-max, max),
            ))
        }
        NemesisKind::SlowDisk => {
            let max = rates.max_fsync_ns.max(1);
            let fsync_ns = rng.between((max / 10).max(1), max);
            strike.healing(FaultAction::SlowDisk(target, fsync_ns))
        }
        NemesisKind::Resign => strike.once(FaultAction::Resign(Target::Leader)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_SEC as S;

    #[test]
    fn the_service_is_struck_only_when_there_is_one_and_only_by_single_process_kinds() {
        let without = NemesisConfig {
            mean_interval_ns: S / 10,
            ..NemesisConfig::default()
        };
        let with = NemesisConfig {
            strike_service: true,
            ..without.clone()
        };
        let targets_service = |f: &FaultSpec| f.action.targets().contains(&&Target::Service);
        let plain = generate(&without, 9, 3, 120 * S);
        assert!(!plain.faults.iter().any(targets_service));
        let struck = generate(&with, 9, 3, 120 * S);
        let on_service: Vec<&FaultSpec> = struck
            .faults
            .iter()
            .filter(|f| targets_service(f))
            .collect();
        assert!(
            !on_service.is_empty(),
            "one in six single-process faults strikes the service"
        );
        for f in on_service {
            assert!(
                matches!(
                    f.action,
                    FaultAction::Crash(_)
                        | FaultAction::Pause(..)
                        | FaultAction::Stall(..)
                        | FaultAction::Partition(PartitionShape::Isolate(_))
                        | FaultAction::ClockJump(..)
                        | FaultAction::ClockDrift(..)
                ),
                "{f:?}"
            );
        }
    }

    #[test]
    fn a_schedule_is_a_pure_function_of_the_seed() {
        let config = NemesisConfig {
            swarm: true,
            ..NemesisConfig::default()
        };
        assert_eq!(
            generate(&config, 3, 5, 60 * S),
            generate(&config, 3, 5, 60 * S)
        );
        assert_ne!(
            generate(&config, 3, 5, 60 * S),
            generate(&config, 4, 5, 60 * S)
        );
    }

    #[test]
    fn every_fault_heals_before_the_quiet_tail() {
        let config = NemesisConfig::default();
        for seed in 0..200 {
            let schedule = generate(&config, seed, 5, 60 * S);
            for fault in &schedule.faults {
                assert!(fault.at_ns >= config.start_ns);
                let healed = fault.healed_by_ns().expect("nemesis faults heal");
                assert!(healed <= 50 * S, "{fault:?} heals at {healed}");
            }
        }
    }

    #[test]
    fn clocks_stepped_back_catch_up_before_the_quiet_tail() {
        let config = NemesisConfig {
            kinds: vec![NemesisKind::ClockJump],
            max_clock_jump_ns: 3_600 * S,
            swarm: false,
            ..NemesisConfig::default()
        };
        let mut backward = 0;
        for seed in 0..50 {
            for fault in generate(&config, seed, 5, 60 * S).faults {
                let healed = fault.healed_by_ns().expect("nemesis faults heal");
                assert!(healed <= 50 * S, "{fault:?} catches up at {healed}");
                backward += usize::from(fault.action.clock_catch_up_ns().is_some());
            }
        }
        assert!(backward > 10, "backward steps were drawn: {backward}");
    }

    #[test]
    fn suspends_are_drawn_only_when_asked_for_and_last_the_fault_duration() {
        let default = NemesisConfig::default();
        assert!(!default.kinds.contains(&NemesisKind::Suspend));
        let config = NemesisConfig {
            kinds: vec![NemesisKind::Suspend],
            swarm: false,
            ..NemesisConfig::default()
        };
        let (low, high) = config.fault_duration_ns;
        let mut drawn = 0;
        for seed in 0..50 {
            for fault in generate(&config, seed, 5, 60 * S).faults {
                let FaultAction::Suspend(_, lasts) = fault.action else {
                    panic!("{fault:?}");
                };
                assert!((low..=high).contains(&lasts));
                drawn += 1;
            }
        }
        assert!(drawn > 50, "{drawn}");
    }

    #[test]
    fn only_listed_kinds_occur() {
        let config = NemesisConfig {
            kinds: vec![NemesisKind::Crash],
            mean_interval_ns: S,
            ..NemesisConfig::default()
        };
        let schedule = generate(&config, 1, 5, 60 * S);
        assert!(schedule.faults.len() > 10);
        assert!(schedule
            .faults
            .iter()
            .all(|f| matches!(f.action, FaultAction::Crash(_))));
    }

    #[test]
    fn swarm_mode_varies_the_enabled_kinds_across_seeds() {
        let config = NemesisConfig {
            swarm: true,
            ..NemesisConfig::default()
        };
        let mixes: std::collections::BTreeSet<Vec<NemesisKind>> = (0..50)
            .map(|seed| {
                generate(&config, seed, 5, 60 * S)
                    .enabled
                    .iter()
                    .map(|(k, _)| *k)
                    .collect()
            })
            .collect();
        assert!(mixes.len() > 30, "only {} distinct mixes", mixes.len());
        assert!(mixes
            .iter()
            .all(|m| !m.is_empty() && m.len() < NemesisKind::DEFAULT.len() + 1));
    }

    #[test]
    fn the_mean_interval_sets_how_many_faults_occur() {
        let sparse = NemesisConfig {
            mean_interval_ns: 10 * S,
            fault_duration_ns: (S / 10, S / 10),
            ..NemesisConfig::default()
        };
        let dense = NemesisConfig {
            mean_interval_ns: S,
            ..sparse.clone()
        };
        let count = |c: &NemesisConfig| {
            (0..100)
                .map(|s| generate(c, s, 5, 110 * S).faults.len())
                .sum::<usize>()
        };
        let (few, many) = (count(&sparse), count(&dense));
        assert!(many > 5 * few, "dense {many} vs sparse {few}");
    }

    fn swarm() -> NemesisConfig {
        NemesisConfig {
            swarm: true,
            ..NemesisConfig::default()
        }
    }

    #[test]
    fn swarm_rates_stay_within_their_ranges_are_deterministic_and_differ_between_seeds() {
        let mut config = swarm();
        config.swarm_ranges.latency_ns = Some((S / 1000, S / 20));
        let ranges = config.swarm_ranges.clone();
        let within = |v: u64, (low, high): (u64, u64)| (low..=high).contains(&v);
        let ppm = |(low, high): (u32, u32)| (u64::from(low), u64::from(high));
        let mut drawn = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let rates = ranges.draw(seed);
            assert_eq!(rates, ranges.draw(seed));
            assert!(within(rates.mean_interval_ns, ranges.mean_interval_ns));
            assert!(within(rates.longest_fault_ns, ranges.longest_fault_ns));
            assert!(within(
                u64::from(rates.max_loss_ppm),
                ppm(ranges.max_loss_ppm)
            ));
            assert!(within(
                u64::from(rates.max_duplicate_ppm),
                ppm(ranges.max_loss_ppm)
            ));
            assert!(within(rates.max_clock_jump_ns, ranges.max_clock_jump_ns));
            assert!(within(
                u64::from(rates.max_drift_ppm),
                ppm(ranges.max_drift_ppm)
            ));
            assert!(within(rates.max_fsync_ns, ranges.max_fsync_ns));
            let latency = rates.latency_max_ns.expect("a latency range was given");
            assert!(within(latency, (S / 1000, S / 20)));
            drawn.insert(rates.mean_interval_ns);
            let schedule = generate(&config, seed, 5, 60 * S);
            assert_eq!(
                schedule.rates, rates,
                "the schedule runs with the seed's rates"
            );
        }
        assert!(
            drawn.len() > 190,
            "seeds draw different rates: {}",
            drawn.len()
        );
    }

    #[test]
    fn the_default_ranges_surround_the_scalar_settings() {
        let config = NemesisConfig::default();
        let ranges = &config.swarm_ranges;
        assert_eq!(ranges.mean_interval_ns, (2_500_000_000, 10_000_000_000));
        assert_eq!(ranges.longest_fault_ns, config.fault_duration_ns);
        assert_eq!(ranges.max_loss_ppm, (50_000, 500_000));
        assert_eq!(ranges.max_clock_jump_ns, (200_000_000, 2_000_000_000));
        assert_eq!(ranges.max_drift_ppm, (10_000, 100_000));
        assert_eq!(ranges.max_fsync_ns, (100_000_000, 1_000_000_000));
        assert_eq!(ranges.latency_ns, None);
        assert_eq!(ranges.draw(1).latency_max_ns, None);
    }

    #[test]
    fn without_swarm_mode_the_rates_are_the_settings_and_every_seed_shares_them() {
        let config = NemesisConfig::default();
        for seed in 0..20 {
            assert_eq!(
                generate(&config, seed, 5, 60 * S).rates,
                config.fixed_rates()
            );
        }
    }

    #[test]
    fn swarm_faults_obey_the_seeds_rates() {
        let config = NemesisConfig {
            mean_interval_ns: S,
            ..swarm()
        };
        for seed in 0..100 {
            let schedule = generate(&config, seed, 5, 120 * S);
            let rates = &schedule.rates;
            for fault in &schedule.faults {
                let lasts = fault
                    .heal_after_ns
                    .or(fault.action.built_in_duration())
                    .unwrap_or(0);
                assert!(lasts <= rates.longest_fault_ns, "{fault:?} {rates:?}");
                match fault.action {
                    FaultAction::Loss(ppm) => assert!(ppm <= rates.max_loss_ppm),
                    FaultAction::Duplicate(ppm) => assert!(ppm <= rates.max_duplicate_ppm),
                    FaultAction::ClockJump(_, d) => {
                        assert!(d.unsigned_abs() <= rates.max_clock_jump_ns)
                    }
                    FaultAction::ClockDrift(_, d) => {
                        assert!(d.unsigned_abs() <= u64::from(rates.max_drift_ppm))
                    }
                    FaultAction::SlowDisk(_, d) => {
                        assert!((rates.max_fsync_ns / 10..=rates.max_fsync_ns).contains(&d))
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn a_draw_is_described_with_the_magnitudes_of_the_kinds_it_enabled() {
        let drawn = Drawn {
            swarm: true,
            enabled: vec![(NemesisKind::Crash, 2), (NemesisKind::SlowDisk, 1)],
            rates: NemesisConfig::default().fixed_rates(),
        };
        assert_eq!(
            drawn.describe(),
            "swarm: Crash x2, SlowDisk x1; a fault every 5s on average, lasting up to 5s, \
             fsync up to 1s"
        );
    }

    #[test]
    fn swarm_mode_draws_every_kind_unless_the_scenario_lists_some() {
        let all = swarm();
        assert_eq!(all.kinds_drawn(), NemesisKind::ALL.to_vec());
        let listed = NemesisConfig {
            kinds: vec![NemesisKind::Crash, NemesisKind::SlowDisk],
            kinds_listed: true,
            ..swarm()
        };
        assert_eq!(listed.kinds_drawn(), listed.kinds);
        let plain = NemesisConfig::default();
        assert_eq!(plain.kinds_drawn(), NemesisKind::DEFAULT.to_vec());
    }

    /// Every variant of [`FaultAction`], by name: a new variant fails to compile here until
    /// the test below says where the nemesis draws it.
    fn variant(action: &FaultAction) -> &'static str {
        match action {
            FaultAction::Crash(_) => "Crash",
            FaultAction::Restart(_) => "Restart",
            FaultAction::Pause(..) => "Pause",
            FaultAction::Suspend(..) => "Suspend",
            FaultAction::Stall(..) => "Stall",
            FaultAction::Partition(_) => "Partition",
            FaultAction::Heal => "Heal",
            FaultAction::ClockJump(..) => "ClockJump",
            FaultAction::ClockDrift(..) => "ClockDrift",
            FaultAction::Resign(_) => "Resign",
            FaultAction::Loss(_) => "Loss",
            FaultAction::Duplicate(_) => "Duplicate",
            FaultAction::SlowDisk(..) => "SlowDisk",
        }
    }

    #[test]
    fn swarm_mode_reaches_every_fault_on_members_and_on_the_service() {
        let config = NemesisConfig {
            mean_interval_ns: S / 2,
            strike_service: true,
            ..swarm()
        };
        let mut on_members = std::collections::BTreeSet::new();
        let mut on_service = std::collections::BTreeSet::new();
        let mut healed = std::collections::BTreeSet::new();
        for seed in 0..300 {
            for fault in generate(&config, seed, 5, 60 * S).faults {
                let name = match &fault.action {
                    FaultAction::Partition(shape) => format!("Partition::{shape:?}")
                        .split('(')
                        .next()
                        .unwrap_or_default()
                        .split(' ')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    action => variant(action).to_string(),
                };
                if fault.heal_after_ns.is_some() {
                    // Healing a crash restarts it; healing the rest is a heal.
                    let undo = match fault.action {
                        FaultAction::Crash(_) => "Restart",
                        _ => "Heal",
                    };
                    healed.insert(undo);
                }
                if fault.action.targets().contains(&&Target::Service) {
                    on_service.insert(name);
                } else {
                    on_members.insert(name);
                }
            }
        }
        let members = [
            "Crash",
            "Pause",
            "Suspend",
            "Stall",
            "ClockJump",
            "ClockDrift",
            "Resign",
            "Loss",
            "Duplicate",
            "SlowDisk",
            "Partition::Isolate",
            "Partition::MajorityMinority",
            "Partition::OneWay",
            "Partition::CutLink",
            "Partition::Bridge",
        ];
        for name in members {
            assert!(
                on_members.contains(name),
                "{name} on a member: {on_members:?}"
            );
        }
        let service = [
            "Crash",
            "Pause",
            "Suspend",
            "Stall",
            "ClockJump",
            "ClockDrift",
            "SlowDisk",
            "Partition::Isolate",
            "Partition::OneWay",
            "Partition::CutLink",
        ];
        for name in service {
            assert!(
                on_service.contains(name),
                "{name} on the service: {on_service:?}"
            );
        }
        assert!(healed.contains("Restart") && healed.contains("Heal"));
        // Every variant is accounted for: drawn, or (Restart, Heal) the healing of one.
        let mut reached: std::collections::BTreeSet<&str> = on_members
            .iter()
            .map(|n| n.split("::").next().unwrap_or_default())
            .collect();
        reached.extend(healed.iter().copied());
        let every = [
            FaultAction::Crash(Target::Leader),
            FaultAction::Restart(Target::Leader),
            FaultAction::Pause(Target::Leader, 1),
            FaultAction::Suspend(Target::Leader, 1),
            FaultAction::Stall(Target::Leader, 1),
            FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
            FaultAction::Heal,
            FaultAction::ClockJump(Target::Leader, 1),
            FaultAction::ClockDrift(Target::Leader, 1),
            FaultAction::Resign(Target::Leader),
            FaultAction::Loss(1),
            FaultAction::Duplicate(1),
            FaultAction::SlowDisk(Target::Leader, 1),
        ];
        for action in &every {
            assert!(reached.contains(variant(action)), "{action:?}: {reached:?}");
        }
    }

    #[test]
    fn without_swarm_mode_the_service_is_struck_only_by_the_kinds_it_was_before() {
        let config = NemesisConfig {
            kinds: NemesisKind::ALL.to_vec(),
            kinds_listed: true,
            mean_interval_ns: S / 2,
            strike_service: true,
            ..NemesisConfig::default()
        };
        for seed in 0..50 {
            for fault in generate(&config, seed, 5, 60 * S).faults {
                if fault.action.targets().contains(&&Target::Service) {
                    assert!(
                        !matches!(
                            fault.action,
                            FaultAction::SlowDisk(..)
                                | FaultAction::Partition(PartitionShape::OneWay { .. })
                                | FaultAction::Partition(PartitionShape::CutLink(..))
                        ),
                        "{fault:?}"
                    );
                }
            }
        }
    }
}
