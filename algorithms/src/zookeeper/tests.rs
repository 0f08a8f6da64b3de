//! Unit tests of the modeled ZooKeeper: timeout negotiation, session expiry at its tick
//! bucket, one-shot watch delivery order, the herd's fan-out.

use super::*;
use splitbrain_sim::{Effect, Signal, SimRng, StreamId, NANOS_PER_MILLI};

const MS: i64 = NANOS_PER_MILLI as i64;
type Out = Vec<Effect<ZkMsg, ZkTimer>>;

fn call(s: &mut ZkService, now: i64, from: usize, m: ZkMsg) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(5));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId(5), 5, now, &mut rng, &mut out);
    s.on_message(&mut ctx, NodeId::from(from), m);
    out
}

fn sends(out: &Out) -> Vec<(usize, ZkMsg)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Send { to, msg } => Some((to.index(), msg.clone())),
            _ => None,
        })
        .collect()
}

fn config() -> ZkConfig {
    ZkConfig {
        tick_ns: 100 * NANOS_PER_MILLI,
        session_timeout_ns: 1000 * NANOS_PER_MILLI,
        ..ZkConfig::default()
    }
}

/// Connects `from` at `now` and creates its node; returns (session, seq).
fn join(s: &mut ZkService, now: i64, from: usize) -> (u64, u64) {
    let out = call(
        s,
        now,
        from,
        ZkMsg::Connect {
            timeout_ns: 1000 * MS as u64,
        },
    );
    let ZkMsg::ConnectResp { session, .. } = sends(&out)[0].1 else {
        panic!()
    };
    let out = call(s, now, from, ZkMsg::Create { session });
    let seq = sends(&out)
        .iter()
        .find_map(|(_, m)| match m {
            ZkMsg::CreateResp { seq, .. } => Some(*seq),
            _ => None,
        })
        .expect("a create response");
    (session, seq)
}

#[test]
fn the_session_timeout_is_negotiated_into_two_to_twenty_ticks() {
    let c = |t: u64| {
        ZkConfig {
            session_timeout_ns: t * NANOS_PER_MILLI,
            ..config()
        }
        .negotiated_timeout_ns()
            / NANOS_PER_MILLI
    };
    assert_eq!(
        (c(50), c(200), c(1000), c(2000), c(5000)),
        (200, 200, 1000, 2000, 2000)
    );
}

#[test]
fn a_session_expires_at_the_tick_after_its_timeout_and_not_before() {
    let mut s = ZkService::new(&config());
    let (session, _) = join(&mut s, 50 * MS, 0);
    // Touched at 50ms with a 1s timeout: the bucket is the next tick multiple after 1050ms.
    let mut early = s.clone();
    let out = call(&mut early, 1100 * MS - 1, 0, ZkMsg::Ping { session });
    assert_eq!(
        sends(&out)[0].1,
        ZkMsg::Pong {
            session,
            expired: false
        }
    );
    let out = call(&mut s, 1100 * MS, 0, ZkMsg::Ping { session });
    assert_eq!(
        sends(&out)[0].1,
        ZkMsg::Pong {
            session,
            expired: true
        }
    );
    assert!(out.iter().any(
        |e| matches!(e, Effect::Signal(Signal::LeaseExpired { holder }) if holder.index() == 0)
    ));
    assert_eq!(s.session_count(), 0);
}

#[test]
fn an_exists_watch_fires_once_in_registration_order() {
    let mut s = ZkService::new(&config());
    let (s0, n0) = join(&mut s, 0, 0);
    let (s1, _) = join(&mut s, 0, 1);
    let (s2, _) = join(&mut s, 0, 2);
    call(
        &mut s,
        1,
        2,
        ZkMsg::Exists {
            session: s2,
            seq: n0,
        },
    );
    call(
        &mut s,
        2,
        1,
        ZkMsg::Exists {
            session: s1,
            seq: n0,
        },
    );
    let out = call(&mut s, 3, 0, ZkMsg::CloseSession { session: s0 });
    let to: Vec<usize> = sends(&out).iter().map(|(to, _)| *to).collect();
    assert_eq!(to, vec![2, 1]);
    // One-shot: nothing is left to fire.
    let (_, n3) = join(&mut s, 4, 3);
    assert!(n3 > n0);
}

#[test]
fn a_child_watch_wakes_every_watcher_on_any_change() {
    let mut s = ZkService::new(&config());
    let (s0, _) = join(&mut s, 0, 0);
    let sessions: Vec<u64> = (1..5).map(|i| join(&mut s, 0, i).0).collect();
    for (i, session) in sessions.into_iter().enumerate() {
        call(
            &mut s,
            0,
            i + 1,
            ZkMsg::GetChildren {
                session,
                watch: true,
            },
        );
    }
    let out = call(&mut s, 1, 0, ZkMsg::CloseSession { session: s0 });
    assert_eq!(sends(&out).len(), 4);
}

#[test]
fn info_counts_the_timeout_a_tick_and_a_third() {
    let about = info(&config(), 3);
    assert_eq!(about.name, "zookeeper");
    assert_eq!(
        about.failure_detection_ns,
        (1000 + 100 + 333) * NANOS_PER_MILLI + 333_333
    );
}

// End-to-end runs on the engine (the algorithm is not wired into scenarios yet).

use splitbrain_sim::{
    FaultAction, FaultSpec, Invariant, PartitionShape, RunReport, Sim, SimConfig, Target,
};

const S: u64 = 1_000_000_000;

fn run(members: usize, zk: &ZkConfig, fencing: bool, faults: Vec<FaultSpec>) -> RunReport {
    let mut sim = SimConfig::quiet(7, members, 15 * S);
    sim.write_every_ns = 100 * NANOS_PER_MILLI;
    sim.fencing = fencing;
    sim.faults = faults;
    let mut engine = Sim::new(sim, info(zk, members), ZkProcess::cluster(members, zk));
    engine.run()
}

fn stall_leader() -> Vec<FaultSpec> {
    vec![FaultSpec {
        at_ns: 5 * S,
        action: FaultAction::Stall(Target::Leader, 3 * S),
        heal_after_ns: None,
    }]
}

fn sent(report: &RunReport, kind: &str) -> u64 {
    report
        .messages
        .iter()
        .find(|m| m.kind == kind)
        .map_or(0, |m| m.sent)
}

#[test]
fn a_stalled_holder_is_fenced_by_its_creation_zxid_and_caught_without_fencing() {
    let zk = config();
    let fenced = run(3, &zk, true, stall_leader());
    assert!(
        fenced.violated_safety().is_empty(),
        "{:?}",
        fenced.violations
    );
    assert!(fenced.leaders.len() >= 2);
    assert!(fenced.counters.leases_expired_while_leading >= 1);
    let unfenced = run(3, &zk, false, stall_leader());
    assert_eq!(unfenced.violated_safety(), vec![Invariant::FencingSafety]);
}

#[test]
fn the_herd_wakes_every_waiter_and_the_recipe_one() {
    let crash = |at: u64| FaultSpec {
        at_ns: at * S,
        action: FaultAction::Crash(Target::Leader),
        heal_after_ns: Some(S),
    };
    let faults = vec![crash(4), crash(8)];
    let recipe = run(20, &config(), true, faults.clone());
    let herd = run(
        20,
        &ZkConfig {
            recipe: ZkRecipe::Herd,
            ..config()
        },
        true,
        faults,
    );
    assert!(recipe.violated_safety().is_empty() && herd.violated_safety().is_empty());
    let (r, h) = (sent(&recipe, "NodeDeleted"), sent(&herd, "ChildrenChanged"));
    // Each failover wakes one waiter under the recipe, every waiter (19) under the herd.
    assert!(h >= 10 * r.max(1), "herd {h} vs recipe {r}");
}

#[test]
fn a_partitioned_leader_steps_down_on_disconnect_or_keeps_leading_until_expired() {
    let isolate = vec![FaultSpec {
        at_ns: 5 * S,
        action: FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
        heal_after_ns: Some(3 * S),
    }];
    let step_down = run(3, &config(), false, isolate.clone());
    assert!(
        step_down.violated_safety().is_empty(),
        "{:?}",
        step_down.violations
    );
    let keep = run(
        3,
        &ZkConfig {
            on_disconnect: ZkOnDisconnect::KeepUntilExpired,
            ..config()
        },
        false,
        isolate,
    );
    assert_eq!(keep.violated_safety(), vec![Invariant::FencingSafety]);
    assert!(keep.overlap_ns > step_down.overlap_ns);
}

// What an election record means for the recipe: it opens when the server deletes the
// leader's node (or creates the first node of all) and closes at the next claim.

use crate::testing::traced::{self, crash_leader, deliveries, Events};

fn run_traced(members: usize, zk: &ZkConfig, faults: Vec<FaultSpec>) -> (RunReport, Events) {
    traced::run_traced(
        members,
        info(zk, members),
        ZkProcess::cluster(members, zk),
        faults,
    )
}

/// The true times at which the server (process `members`) took delivery of anything from
/// `client` before `until_ns`: every request renews the client's session.
fn touches(events: &Events, members: usize, client: NodeId, until_ns: u64) -> Vec<u64> {
    deliveries(events, members, client, &[], until_ns)
}

#[test]
fn each_failover_is_one_election_from_the_servers_expiry_of_the_dead_leader_to_the_next_claim() {
    let zk = config();
    let (report, events) = run_traced(5, &zk, vec![crash_leader(4, 3), crash_leader(10, 3)]);
    assert!(
        report.violated_safety().is_empty(),
        "{:?}",
        report.violations
    );
    // The initial election, then one per failover. The dead leader's session expires at
    // the first tick after its last request plus the timeout, by the server's (here
    // perfect) clock.
    traced::assert_one_election_per_failover(&report, |failover| {
        let restart_ns = failover.at_ns + 3 * S;
        let last = *touches(&events, 5, failover.old_leader, restart_ns)
            .last()
            .expect("the leader was heard");
        ((last + zk.session_timeout_ns) / zk.tick_ns + 1) * zk.tick_ns
    });
    // It ends at the next claim, which is the failover's.
    for (failover, next) in report.failovers.iter().zip(&report.leaders[1..]) {
        assert_eq!(failover.election_ns, Some(next.at_ns - failover.at_ns));
    }
}

#[test]
fn a_quiet_run_has_one_election_and_leaves_none_open() {
    let (report, _) = run_traced(5, &config(), Vec::new());
    traced::assert_one_election_and_none_left_open(&report, "zookeeper");
    assert_eq!(report.counters.minority_elections, 0);
}

#[test]
fn with_no_candidate_left_the_election_waits_for_the_next_one_without_starting_twice() {
    // One candidate: its session expires while it is down, and it wins again on restart.
    let (report, _) = run_traced(1, &config(), vec![crash_leader(3, 5)]);
    assert_eq!(report.elections.len(), 2, "{:#?}", report.elections);
    let vacancy = &report.elections[1];
    assert!(vacancy.started_ns > 3 * S && vacancy.started_ns < 5 * S);
    assert!(vacancy.decided_ns.is_some_and(|d| d > 8 * S));
    assert_eq!(vacancy.campaigns, 1);
    assert_eq!(report.counters.elections_started, 2);
}

#[test]
fn a_resignation_starts_the_election_when_the_server_closes_the_session() {
    let (report, _) = run_traced(3, &config(), vec![traced::resign_leader(5)]);
    // The close travels one message latency (1 to 10ms here); nobody waits for an expiry.
    traced::assert_handover_election_starts_at_the_service(&report);
    let handover = &report.elections[1];
    assert_ne!(handover.winner, Some(report.leaders[0].node));
}

#[test]
fn a_closed_sessions_watches_do_not_fire() {
    let mut s = ZkService::new(&config());
    let (s0, n0) = join(&mut s, 0, 0);
    let (s1, _) = join(&mut s, 0, 1);
    call(
        &mut s,
        1,
        1,
        ZkMsg::Exists {
            session: s1,
            seq: n0,
        },
    );
    call(
        &mut s,
        1,
        1,
        ZkMsg::GetChildren {
            session: s1,
            watch: true,
        },
    );
    call(&mut s, 2, 1, ZkMsg::CloseSession { session: s1 });
    let out = call(&mut s, 3, 0, ZkMsg::CloseSession { session: s0 });
    assert!(sends(&out).is_empty(), "{:?}", sends(&out));
}

fn elections_started(out: &Out) -> usize {
    out.iter()
        .filter(|e| matches!(e, Effect::Signal(Signal::ElectionStarted { .. })))
        .count()
}

#[test]
fn the_server_starts_an_election_for_the_first_node_and_for_the_leaders_only() {
    let mut s = ZkService::new(&config());
    let first = call(
        &mut s,
        0,
        0,
        ZkMsg::Connect {
            timeout_ns: 1000 * MS as u64,
        },
    );
    assert_eq!(elections_started(&first), 0);
    let (s0, _) = join(&mut s, 0, 0);
    let (s1, _) = join(&mut s, 0, 1);
    let (s2, _) = join(&mut s, 0, 2);
    // A waiter leaving is no vacancy; the leader leaving is one.
    assert_eq!(
        elections_started(&call(&mut s, 1, 1, ZkMsg::CloseSession { session: s1 })),
        0
    );
    assert_eq!(
        elections_started(&call(&mut s, 2, 0, ZkMsg::CloseSession { session: s0 })),
        1
    );
    assert_eq!(
        elections_started(&call(&mut s, 3, 2, ZkMsg::CloseSession { session: s2 })),
        1
    );
    // The seat is already vacant: a new first node does not start another election.
    let mut again = s.clone();
    let out = call(
        &mut again,
        4,
        3,
        ZkMsg::Connect {
            timeout_ns: 1000 * MS as u64,
        },
    );
    let ZkMsg::ConnectResp { session, .. } = sends(&out)[0].1 else {
        panic!()
    };
    assert_eq!(
        elections_started(&call(&mut again, 4, 3, ZkMsg::Create { session })),
        0
    );
}

#[test]
fn sessions_expiring_together_leave_the_seat_vacant_once() {
    let mut s = ZkService::new(&config());
    for client in 0..3 {
        join(&mut s, 0, client);
    }
    let mut rng = SimRng::stream(1, StreamId::node(5));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId(5), 5, 1100 * MS, &mut rng, &mut out);
    s.on_timer(&mut ctx, ZkTimer::Expiry);
    assert_eq!(s.session_count(), 0);
    assert_eq!(elections_started(&out), 1);
}
