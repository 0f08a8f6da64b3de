//! The nemesis' schedules: what each kind strikes, swarm draws, determinism.

use super::*;
use crate::fault::{PartitionShape, Target};
use crate::time::NANOS_PER_SEC as S;

/// A clustered service is struck through its leader or a follower, at the very draws that
/// strike a single-process service: the schedules differ only in those targets.
#[test]
fn a_clustered_service_is_struck_at_its_leader_or_a_follower_with_the_same_draws() {
    let single = NemesisConfig {
        mean_interval_ns: S / 10,
        strike_service: true,
        ..NemesisConfig::default()
    };
    let clustered = NemesisConfig {
        clustered_service: true,
        ..single.clone()
    };
    let a = generate(&single, 9, 3, 120 * S).faults;
    let b = generate(&clustered, 9, 3, 120 * S).faults;
    assert_eq!(a.len(), b.len());
    let (mut leaders, mut followers) = (0, 0);
    for (fa, fb) in a.iter().zip(&b) {
        let (ta, tb) = (fa.action.targets(), fb.action.targets());
        if ta.contains(&&Target::Service) {
            leaders += usize::from(tb.contains(&&Target::ServiceLeader));
            followers += usize::from(tb.contains(&&Target::ServiceFollower));
            assert_eq!(fa.at_ns, fb.at_ns);
        } else {
            assert_eq!(fa, fb);
        }
    }
    assert!(leaders > 0 && followers > 0, "{leaders} {followers}");
    assert!(!b
        .iter()
        .any(|f| f.action.targets().contains(&&Target::Service)));
}

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
        // Named only (not in `ALL`): drawn in the test after the next.
        FaultAction::ConfChange(..) => "ConfChange",
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
fn conf_change_is_drawn_only_by_name_and_asks_the_leader_about_a_member() {
    assert!(!NemesisKind::DEFAULT.contains(&NemesisKind::ConfChange));
    assert!(!NemesisKind::ALL.contains(&NemesisKind::ConfChange));
    let config = NemesisConfig {
        kinds: vec![NemesisKind::ConfChange],
        kinds_listed: true,
        mean_interval_ns: S / 2,
        ..NemesisConfig::default()
    };
    let mut ops = std::collections::BTreeMap::new();
    for seed in 0..100 {
        for fault in generate(&config, seed, 3, 60 * S).faults {
            let FaultAction::ConfChange(target, change) = &fault.action else {
                panic!("not a membership change: {fault:?}");
            };
            assert_eq!(*target, Target::Leader);
            assert!(change.member() < 3, "{change:?}");
            assert_eq!(fault.heal_after_ns, None);
            *ops.entry(change.op()).or_insert(0) += 1;
        }
    }
    assert_eq!(ops.len(), 4, "{ops:?}");
    assert!(
        ops["remove"] > ops["add"] && ops["add"] > ops["promote"],
        "{ops:?}"
    );
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

/// `targets: Leader` (or `Followers`) changes only whom each single-node fault strikes: the
/// times, kinds and sizes are the same draws.
#[test]
fn targets_change_only_whom_a_fault_strikes() {
    // A bridge strikes no node (its middle node talks to both sides), a resignation always
    // the leader: left out.
    let kinds = NemesisKind::DEFAULT
        .into_iter()
        .filter(|k| ![NemesisKind::Bridge, NemesisKind::Resign].contains(k))
        .collect();
    let any = NemesisConfig {
        kinds,
        kinds_listed: true,
        mean_interval_ns: S / 10,
        ..NemesisConfig::default()
    };
    let strikes_only = |targets: NemesisTargets, only: Target| {
        let config = NemesisConfig {
            targets,
            ..any.clone()
        };
        let a = generate(&any, 4, 5, 60 * S).faults;
        let b = generate(&config, 4, 5, 60 * S).faults;
        assert_eq!(a.len(), b.len());
        for (fa, fb) in a.iter().zip(&b) {
            assert_eq!((fa.at_ns, fa.heal_after_ns), (fb.at_ns, fb.heal_after_ns));
            let member_targets = fb.action.targets();
            for t in member_targets {
                let allowed = [only.clone(), Target::All, Target::Follower];
                assert!(allowed.contains(t), "{:?} strikes {t:?}", fb.action);
            }
        }
        let hits = b
            .iter()
            .filter(|f| f.action.targets().contains(&&only))
            .count();
        assert!(hits > 10, "{hits}");
    };
    strikes_only(NemesisTargets::Leader, Target::Leader);
    strikes_only(NemesisTargets::Followers, Target::Follower);
}

/// A crash for good never heals, and takes at most a minority: a majority is left to elect.
#[test]
fn crashes_for_good_never_heal_and_leave_a_majority() {
    for members in [3, 5] {
        let config = NemesisConfig {
            kinds: vec![NemesisKind::CrashForGood, NemesisKind::Pause],
            kinds_listed: true,
            mean_interval_ns: S / 10,
            ..NemesisConfig::default()
        };
        for seed in 1..=20 {
            let faults = generate(&config, seed, members, 60 * S).faults;
            let for_good: Vec<&FaultSpec> = faults
                .iter()
                .filter(|f| matches!(f.action, FaultAction::Crash(_)))
                .collect();
            assert_eq!(for_good.len(), (members - 1) / 2, "seed {seed}");
            assert!(for_good.iter().all(|f| f.heal_after_ns.is_none()));
            assert!(
                faults.len() > for_good.len(),
                "the other kind still strikes"
            );
        }
    }
}
