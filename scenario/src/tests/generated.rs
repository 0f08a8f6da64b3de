//! Generated valid scenarios survive `to_ron` and `parse`.

use super::*;
use proptest::prelude::*;
use splitbrain_sim::{
    Actor, DiskConfig, MemberChange, NodeDisk, SignalKind, TimerClock, Trigger, TriggerEvent,
};

/// The longest duration, and largest clock step either way, that a scenario may hold.
const LIMIT_NS: u64 = crate::error::MAX_DURATION_NS;
const LIMIT_SIGNED_NS: i64 = LIMIT_NS as i64;

fn target(nodes: u32) -> impl Strategy<Value = Target> {
    prop_oneof![
        Just(Target::Leader),
        Just(Target::Follower),
        (0..nodes).prop_map(Target::Node),
        Just(Target::Random),
        Just(Target::Minority),
        Just(Target::All),
    ]
}

/// A link's two ends: never one fixed process twice (refused as a link to itself).
fn two_ends(nodes: u32) -> impl Strategy<Value = (Target, Target)> {
    (target(nodes), target(nodes)).prop_filter("a link joins two processes", |(a, b)| {
        a != b || !crate::validate::one_fixed_process(a)
    })
}

fn shape(nodes: u32) -> impl Strategy<Value = PartitionShape> {
    prop_oneof![
        Just(PartitionShape::Groups(vec![(0..nodes).collect()])),
        target(nodes).prop_map(PartitionShape::Isolate),
        target(nodes).prop_map(PartitionShape::MajorityMinority),
        two_ends(nodes).prop_map(|(from, to)| PartitionShape::OneWay { from, to }),
        two_ends(nodes).prop_map(|(a, b)| PartitionShape::CutLink(a, b)),
        target(nodes).prop_map(PartitionShape::Bridge),
    ]
}

fn action(nodes: u32) -> impl Strategy<Value = FaultAction> {
    prop_oneof![
        target(nodes).prop_map(FaultAction::Crash),
        prop_oneof![target(nodes), Just(Target::AllCrashed)].prop_map(FaultAction::Restart),
        (target(nodes), 1..=LIMIT_NS).prop_map(|(t, d)| FaultAction::Pause(t, d)),
        (target(nodes), 1..=LIMIT_NS).prop_map(|(t, d)| FaultAction::Suspend(t, d)),
        (target(nodes), 1..=LIMIT_NS).prop_map(|(t, d)| FaultAction::Stall(t, d)),
        shape(nodes).prop_map(FaultAction::Partition),
        Just(FaultAction::Heal),
        (target(nodes), -LIMIT_SIGNED_NS..=LIMIT_SIGNED_NS)
            .prop_map(|(t, d)| FaultAction::ClockJump(t, d)),
        (target(nodes), -999_999..=MAX_DRIFT_PPM).prop_map(|(t, p)| FaultAction::ClockDrift(t, p)),
        target(nodes).prop_map(FaultAction::Resign),
        (target(nodes), 0..4usize, 0..nodes).prop_map(|(t, op, m)| {
            let change = MemberChange::from_op(MemberChange::OPS[op], m).unwrap();
            FaultAction::ConfChange(t, change)
        }),
        (0..=1_000_000u32).prop_map(FaultAction::Loss),
        (0..=1_000_000u32).prop_map(FaultAction::Duplicate),
        (target(nodes), 0..=LIMIT_NS).prop_map(|(t, d)| FaultAction::SlowDisk(t, d)),
    ]
}

/// A trigger on anything but a message type (which must be one of the algorithm's: tested
/// in `triggers.rs`); observation names are any text.
fn trigger(nodes: u32) -> impl Strategy<Value = Trigger> {
    let kinds = [
        SignalKind::ElectionStarted,
        SignalKind::PreVoteStarted,
        SignalKind::LeaderHeard,
        SignalKind::LeaseEnded,
    ];
    let event = prop_oneof![
        proptest::sample::select(kinds.to_vec()).prop_map(TriggerEvent::Signal),
        Just(TriggerEvent::BecameLeader),
        Just(TriggerEvent::SteppedDown),
        ".{0,12}".prop_map(TriggerEvent::Observed),
    ];
    let by = prop_oneof![
        Just(Actor::Any),
        Just(Actor::Leader),
        Just(Actor::Follower),
        (0..nodes).prop_map(Actor::Node),
    ];
    (event, by, 1..=u32::MAX, 0..=LIMIT_NS).prop_map(|(event, by, nth, delay_ns)| Trigger {
        event,
        by,
        nth,
        delay_ns,
    })
}

fn fault(nodes: u32, duration_ns: u64) -> impl Strategy<Value = FaultSpec> {
    (
        0..duration_ns,
        action(nodes),
        proptest::option::of(1..=LIMIT_NS),
        proptest::option::of(trigger(nodes)),
    )
        .prop_map(|(at_ns, action, heal, after)| FaultSpec {
            at_ns,
            heal_after_ns: if action.can_heal() { heal } else { None },
            action,
            after,
        })
}

fn latency() -> impl Strategy<Value = Latency> {
    prop_oneof![
        (0..=LIMIT_NS).prop_map(Latency::Constant),
        (0..=LIMIT_NS, 0..=LIMIT_NS).prop_map(|(a, b)| Latency::Uniform(a.min(b), a.max(b))),
        (0..=LIMIT_NS, 0..=LIMIT_NS)
            .prop_map(|(mean_ns, min_ns)| Latency::Exponential { mean_ns, min_ns }),
    ]
}

fn link(nodes: u32) -> impl Strategy<Value = LinkOverride> {
    (
        0..nodes,
        1..nodes.max(2),
        latency(),
        0..=1_000_000u32,
        0..=1_000_000u32,
    )
        .prop_map(
            move |(from, step, latency, loss_ppm, duplicate_ppm)| LinkOverride {
                from,
                // Never a link to itself (needs two nodes; filtered below otherwise).
                to: (from + step) % nodes,
                link: LinkConfig {
                    latency,
                    loss_ppm,
                    duplicate_ppm,
                },
            },
        )
}

/// Link overrides for distinct directed links between distinct nodes.
fn links(nodes: u32) -> impl Strategy<Value = Vec<LinkOverride>> {
    proptest::collection::vec(link(nodes), 0..4).prop_map(|links| {
        let mut seen = BTreeSet::new();
        links
            .into_iter()
            .filter(|l| l.from != l.to && seen.insert((l.from, l.to)))
            .collect()
    })
}

/// Clock overrides for distinct nodes.
fn node_clocks(nodes: u32) -> impl Strategy<Value = Vec<NodeClock>> {
    proptest::collection::btree_map(
        0..nodes,
        (
            -999_999..=MAX_DRIFT_PPM,
            -LIMIT_SIGNED_NS..=LIMIT_SIGNED_NS,
            any::<bool>(),
        ),
        0..4,
    )
    .prop_map(|clocks| {
        clocks
            .into_iter()
            .map(|(node, (drift_ppm, offset_ns, on_wall))| NodeClock {
                node,
                drift_ppm,
                offset_ns,
                timers: if on_wall {
                    TimerClock::Wall
                } else {
                    TimerClock::Monotonic
                },
            })
            .collect()
    })
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1u32..8, 1..=LIMIT_NS).prop_flat_map(|(nodes, duration_ns)| {
        (
            ("[ -~]{0,12}", any::<u64>(), 0..=LIMIT_NS, any::<bool>()),
            (
                latency(),
                0..=1_000_000u32,
                0..=1_000_000u32,
                0..=999_999u32,
                0..=LIMIT_NS,
            ),
            (links(nodes), node_clocks(nodes)),
            proptest::collection::vec(fault(nodes, duration_ns), 0..6),
            (
                proptest::option::of(1..=LIMIT_NS),
                any::<bool>(),
                any::<bool>(),
            ),
            (
                1..LIMIT_NS / 2,
                any::<bool>(),
                any::<bool>(),
                proptest::collection::vec(0..5u64, 0..2),
                any::<bool>(),
            ),
            (0..3u8, 0..3u8, 1..LIMIT_NS / 4),
        )
            .prop_map(
                move |(
                    basics,
                    net,
                    (overrides, per_node),
                    faults,
                    (liveness, violates, fencing_bug),
                    raft,
                    (which, choice, timeout_ns),
                )| {
                    let (name, seed, write_every_ns, fencing) = basics;
                    let (latency, loss_ppm, duplicate_ppm, max_drift_ppm, max_offset_ns) = net;
                    let (heartbeat_ns, pre_vote, check_quorum, lengths, etcd_timer) = raft;
                    let log_lengths = if lengths.is_empty() {
                        Vec::new()
                    } else {
                        vec![lengths[0]; nodes as usize]
                    };
                    let expect = if violates {
                        let mut set = BTreeSet::from([Invariant::TermMonotonic]);
                        if fencing_bug {
                            set.insert(Invariant::FencingSafety);
                        }
                        Expect::Violates(set)
                    } else {
                        Expect::Safe
                    };
                    Scenario {
                        name,
                        sim: SimConfig {
                            seed,
                            duration_ns,
                            members: nodes as usize,
                            network: NetworkConfig {
                                default: LinkConfig {
                                    latency: latency.clone(),
                                    loss_ppm,
                                    duplicate_ppm,
                                },
                                overrides,
                                transport: transport_for(seed),
                            },
                            clocks: ClockConfig {
                                max_drift_ppm,
                                max_offset_ns,
                                per_node,
                                service: None,
                            },
                            // Disks and processing follow the seed, to keep the
                            // strategy's tuple small.
                            disk: if seed % 3 == 0 {
                                DiskConfig {
                                    fsync: Some(latency.clone()),
                                    per_node: vec![NodeDisk {
                                        node: 0,
                                        fsync: Latency::Constant(max_offset_ns),
                                    }],
                                    service: None,
                                    batch: seed % 2 == 0,
                                }
                            } else {
                                DiskConfig::default()
                            },
                            processing: (seed % 5 == 0).then(|| latency.clone()),
                            write_every_ns,
                            fencing,
                            startup_delay_ns: 0,
                            faults,
                            liveness_bound_ns: liveness,
                            limits: splitbrain_sim::RunLimits::default(),
                            timeout_choices: if seed % 7 == 0 { 3 } else { 0 },
                            chosen: if seed % 11 == 0 {
                                vec![splitbrain_sim::choice::Chosen {
                                    index: 4,
                                    option: 1,
                                }]
                            } else {
                                Vec::new()
                            },
                        },
                        algorithm: match which {
                            0 => AlgorithmConfig::from(RaftConfig {
                                election_timeout_min_ns: heartbeat_ns + 1,
                                election_timeout_max_ns: heartbeat_ns * 2,
                                heartbeat_ns,
                                pre_vote,
                                check_quorum,
                                log_lengths,
                                variant: if fencing_bug {
                                    RaftVariant::ForgetsVoteOnRestart
                                } else {
                                    RaftVariant::Correct
                                },
                                timer_reset: if etcd_timer {
                                    RaftTimerReset::OnAnyStepDown
                                } else {
                                    RaftTimerReset::OnGrantOrLeader
                                },
                                propose_every_ns: (seed % 4 == 1).then_some(heartbeat_ns / 2 + 1),
                                timeout_draw: if seed % 3 == 1 {
                                    RaftTimeoutDraw::OnRoleChange
                                } else {
                                    RaftTimeoutDraw::EveryRestart
                                },
                            }),
                            1 => AlgorithmConfig::from(BullyConfig {
                                heartbeat_ns,
                                failure_timeout_ns: heartbeat_ns + 1,
                                answer_timeout_ns: timeout_ns,
                                coordinator_timeout_ns: timeout_ns * 3,
                            }),
                            _ => AlgorithmConfig::from(RingConfig {
                                variant: if pre_vote {
                                    RingVariant::AllIds
                                } else {
                                    RingVariant::ChangRoberts
                                },
                                order: [
                                    RingOrder::Ascending,
                                    RingOrder::Descending,
                                    RingOrder::Random,
                                ][usize::from(choice)],
                                initiators: if check_quorum {
                                    RingInitiators::All
                                } else {
                                    RingInitiators::Detector
                                },
                                heartbeat_ns,
                                failure_timeout_ns: heartbeat_ns * 2,
                                ack_timeout_ns: timeout_ns,
                            }),
                        },
                        // A named design on one seed in four, for the round trip.
                        designs: if seed % 4 == 2 {
                            vec![Design {
                                name: format!("ring-{seed}"),
                                algorithm: AlgorithmConfig::from(RingConfig {
                                    variant: RingVariant::ChangRoberts,
                                    order: RingOrder::Ascending,
                                    initiators: RingInitiators::All,
                                    heartbeat_ns,
                                    failure_timeout_ns: heartbeat_ns * 2,
                                    ack_timeout_ns: timeout_ns,
                                }),
                                transport: transport_for(seed / 4),
                            }]
                        } else {
                            Vec::new()
                        },
                        // Datagram, these algorithms' default, on even seeds: written out or
                        // not, it reads back the same.
                        transport_explicit: !(seed % 2 == 0 && seed % 3 == 0),
                        expect,
                        // Written out only below every seed: both forms round-trip.
                        expect_rate_ppm: if seed % 2 == 0 {
                            crate::EVERY_SEED_PPM
                        } else {
                            (seed % 1_000_000) as u32
                        },
                        nemesis: None,
                        objective: None,
                        properties: Default::default(),
                        fault_spreads: Vec::new(),
                        nemesis_drew: None,
                    }
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn every_valid_scenario_is_written_so_that_it_reads_back_equal(scenario in scenario()) {
        // A run expected to handle too many events is refused (and so not valid).
        let work = splitbrain_algorithms::expected_events(&scenario.algorithm, &scenario.sim);
        prop_assume!(work <= crate::error::MAX_EXPECTED_EVENTS);
        // Each design's too, on its own transport.
        for design in &scenario.designs {
            let ran = scenario.with_design(design);
            let work = splitbrain_algorithms::expected_events(&ran.algorithm, &ran.sim);
            prop_assume!(work <= crate::error::MAX_EXPECTED_EVENTS);
        }
        let text = to_ron(&scenario);
        prop_assert_eq!(parse(&text, ORIGIN), Ok(scenario), "{}", text);
    }
}

/// Both transports, and `Stream` timings off the defaults, chosen by the seed.
fn transport_for(seed: u64) -> splitbrain_sim::Transport {
    if seed.is_multiple_of(2) {
        return splitbrain_sim::Transport::Datagram;
    }
    let ms = splitbrain_sim::NANOS_PER_MILLI;
    splitbrain_sim::Transport::Stream(splitbrain_sim::StreamConfig {
        min_rto_ns: (1 + seed % 300) * ms,
        max_rto_ns: (300 + seed % 1000) * ms,
        timeout_ns: (1 + seed % 20_000) * ms,
    })
}
