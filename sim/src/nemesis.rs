//! The nemesis: random fault schedules drawn from a seed. A schedule is materialised into
//! ordinary [`FaultSpec`]s before the run, so a failing schedule can be shrunk and written out
//! as an explicit scenario. Every fault heals before the run's quiet tail, so liveness is
//! checked too.
//!
//! Swarm mode (Groce et al., "Swarm Testing", ISSTA 2012): each seed first draws which fault
//! kinds are enabled and how often each occurs, so rare combinations get explored instead of
//! every run being the same average mix.

use crate::fault::{FaultAction, FaultSpec, PartitionShape, Target};
use crate::rng::{SimRng, StreamId, PPM};
use crate::time::Nanos;
use serde::Serialize;

/// A kind of fault the nemesis may inject.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
    /// The kinds that may occur (in swarm mode: the kinds each seed chooses among).
    pub kinds: Vec<NemesisKind>,
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
    /// Draw the enabled kinds and their weights per seed.
    pub swarm: bool,
    /// The algorithm runs a coordination service: crashes, pauses, stalls, isolations and
    /// clock faults strike it too (one in six of them). Not a scenario setting: the caller
    /// derives it from the algorithm when it draws the schedule.
    pub strike_service: bool,
}

impl Default for NemesisConfig {
    fn default() -> Self {
        Self {
            kinds: NemesisKind::DEFAULT.to_vec(),
            mean_interval_ns: 5_000_000_000,
            fault_duration_ns: (100_000_000, 5_000_000_000),
            start_ns: 1_000_000_000,
            quiet_ns: 10_000_000_000,
            max_clock_jump_ns: 2_000_000_000,
            max_drift_ppm: 100_000,
            max_loss_ppm: 500_000,
            swarm: false,
            strike_service: false,
        }
    }
}

/// What one seed's nemesis will do: the kinds it enabled with their weights, and the faults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Schedule {
    /// The kinds this seed enabled, each with its weight (1 without swarm mode).
    pub enabled: Vec<(NemesisKind, u32)>,
    /// The faults drawn, in time order, each healing before the quiet tail.
    pub faults: Vec<FaultSpec>,
}

/// Draws the schedule of `seed` for a run of `duration_ns` with `members` members.
pub fn generate(config: &NemesisConfig, seed: u64, members: usize, duration_ns: Nanos) -> Schedule {
    let mut rng = SimRng::stream(seed, StreamId::NEMESIS);
    let enabled = enabled_kinds(config, &mut rng);
    let total_weight: u32 = enabled.iter().map(|(_, w)| w).sum();
    let mut faults = Vec::new();
    if total_weight == 0 || config.mean_interval_ns == 0 {
        return Schedule { enabled, faults };
    }
    let end = duration_ns.saturating_sub(config.quiet_ns);
    let mut at = config.start_ns;
    loop {
        at = at.saturating_add(rng.exponential(config.mean_interval_ns).max(1));
        let (low, high) = config.fault_duration_ns;
        let lasts = rng.between(low.min(high), high.max(low)).max(1);
        if at.saturating_add(lasts) > end {
            break;
        }
        let kind = pick_weighted(&enabled, total_weight, &mut rng);
        let fault = fault_of(kind, at, lasts, config, members, &mut rng);
        faults.push(catch_up_before(fault, end));
    }
    Schedule { enabled, faults }
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
    let mut kinds = config.kinds.clone();
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
    /// Whether the kind strikes one process, which may be the service.
    fn strikes_one_process(self) -> bool {
        matches!(
            self,
            NemesisKind::Crash
                | NemesisKind::Pause
                | NemesisKind::Suspend
                | NemesisKind::Stall
                | NemesisKind::Isolate
                | NemesisKind::ClockJump
                | NemesisKind::ClockDrift
        )
    }
}

fn fault_of(
    kind: NemesisKind,
    at_ns: Nanos,
    lasts: Nanos,
    config: &NemesisConfig,
    members: usize,
    rng: &mut SimRng,
) -> FaultSpec {
    let service = config.strike_service && kind.strikes_one_process();
    let target = node_target(members, service, rng);
    let healing = |action| FaultSpec {
        at_ns,
        action,
        heal_after_ns: Some(lasts),
    };
    let once = |action| FaultSpec {
        at_ns,
        action,
        heal_after_ns: None,
    };
    let partition = |shape| FaultSpec {
        at_ns,
        action: FaultAction::Partition(shape),
        heal_after_ns: Some(lasts),
    };
    match kind {
        NemesisKind::Crash => healing(FaultAction::Crash(target)),
        NemesisKind::Pause => once(FaultAction::Pause(target, lasts)),
        NemesisKind::Suspend => once(FaultAction::Suspend(target, lasts)),
        NemesisKind::Stall => once(FaultAction::Stall(target, lasts)),
        NemesisKind::Isolate => partition(PartitionShape::Isolate(target)),
        NemesisKind::MajorityMinority => partition(PartitionShape::MajorityMinority(target)),
        NemesisKind::OneWay => partition(PartitionShape::OneWay {
            from: target,
            to: Target::All,
        }),
        NemesisKind::CutLink => partition(PartitionShape::CutLink(target, Target::Follower)),
        NemesisKind::Bridge => partition(PartitionShape::Bridge(Target::Random)),
        NemesisKind::LossBurst => {
            let ppm = rng.between(1, u64::from(config.max_loss_ppm.max(1))) as u32;
            healing(FaultAction::Loss(ppm))
        }
        NemesisKind::Duplicate => {
            let ppm = rng.between(1, u64::from(config.max_loss_ppm.max(1))) as u32;
            healing(FaultAction::Duplicate(ppm))
        }
        NemesisKind::ClockJump => {
            let max = config.max_clock_jump_ns.min(i64::MAX as u64) as i64;
            once(FaultAction::ClockJump(
                target,
                rng.between_signed(-max, max),
            ))
        }
        NemesisKind::ClockDrift => {
            let max = i64::from(config.max_drift_ppm.min(999_999));
            healing(FaultAction::ClockDrift(
                target,
                rng.between_signed(-max, max),
            ))
        }
        NemesisKind::Resign => once(FaultAction::Resign(Target::Leader)),
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
}
