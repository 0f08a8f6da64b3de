//! Unit tests of the modeled ZooKeeper: timeout negotiation, session expiry at its tick
//! bucket, one-shot watch delivery order, the herd's fan-out, the client's ping and
//! connection check. A test of a timing rule cites the source the rule follows, as the table
//! "Timing rules, with their ZooKeeper source" in `docs/algorithms/zookeeper.md` does; the
//! paths are under `zookeeper-server/src/main/java/org/apache/zookeeper/`.

use super::*;
use splitbrain_sim::{Ctx, Process as _};
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

/// Client `from` connects at `now`, asking for a 1s session timeout.
fn connect(s: &mut ZkService, now: i64, from: usize) -> Out {
    let timeout_ns = 1000 * MS as u64;
    call(s, now, from, ZkMsg::Connect { timeout_ns })
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
    let out = connect(s, now, from);
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

/// Source: `server/ZooKeeperServer.java`, `processConnectRequest` (the asked timeout raised
/// to `minSessionTimeout`, lowered to `maxSessionTimeout`) and `setMinSessionTimeout` /
/// `setMaxSessionTimeout` (`tickTime * 2`, `tickTime * 20` by default).
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

/// Source: `server/ExpiryQueue.java`, `update`: `roundToNextInterval(now + timeout)`, and
/// `poll`: nothing expires while `now < expirationTime`; the interval is the tick
/// (`server/SessionTrackerImpl.java`: `new ExpiryQueue<SessionImpl>(tickTime)`).
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

/// Source: `server/watch/WatchManager.java`, `triggerWatch`: `watchTable.remove(path)`, so a
/// watch fires once. The order among the watchers of one node is the model's choice
/// (ZooKeeper's is its `HashSet`'s).
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

/// Source: `zookeeper-docs/.../recipes.md`, "Leader Election": with every process watching,
/// "all other processes receive a notification" (the herd effect); measured in
/// `docs/conformance.md`, `zk waiters notified, herd`: N-1.
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
    let mut engine = Sim::new(
        sim,
        info(zk, members),
        crate::zookeeper::processes(members, zk),
    );
    engine.run().expect("within the default limits")
}

fn stall_leader() -> Vec<FaultSpec> {
    vec![FaultSpec {
        at_ns: 5 * S,
        action: FaultAction::Stall(Target::Leader, 3 * S),
        heal_after_ns: None,
        after: None,
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

/// Source: `zookeeper-docs/.../recipes.md`, "Leader Election": a waiter watches "the next
/// znode down on the sequence" to avoid the herd effect; measured in `docs/conformance.md`,
/// `zk waiters notified`: N-1 for the herd, 1 for the predecessor.
#[test]
fn the_herd_wakes_every_waiter_and_the_recipe_one() {
    let crash = |at: u64| FaultSpec {
        at_ns: at * S,
        action: FaultAction::Crash(Target::Leader),
        heal_after_ns: Some(S),
        after: None,
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

/// Source: `ClientCnxn.java`, `SendThread.run`: disconnected once `readTimeout - idleRecv <= 0`,
/// `readTimeout = negotiatedSessionTimeout * 2 / 3`; Curator's `LeaderLatch.handleStateChange`:
/// `SUSPENDED` → `setLeadership(false)`. The server expires the cut-off session by
/// `server/ExpiryQueue.java` (T to T + tick later), after the leader stepped down.
#[test]
fn a_partitioned_leader_steps_down_on_disconnect_or_keeps_leading_until_expired() {
    let isolate = vec![FaultSpec {
        at_ns: 5 * S,
        action: FaultAction::Partition(PartitionShape::Isolate(Target::Leader)),
        heal_after_ns: Some(3 * S),
        after: None,
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
        crate::zookeeper::processes(members, zk),
        faults,
    )
}

/// The true times at which the server (process `members`) took delivery of anything from
/// `client` before `until_ns`: every request renews the client's session.
fn touches(events: &Events, members: usize, client: NodeId, until_ns: u64) -> Vec<u64> {
    deliveries(events, members, client, &[], until_ns)
}

/// Source: `server/ZooKeeperServer.java`, `submitRequestNow`: `touch(si.cnxn)` for every
/// request; `server/ExpiryQueue.java`, `update`: `roundToNextInterval(now + timeout)`; the
/// expiry closes the session (`ZooKeeperServer.expire` → `close`), deleting its node. Measured
/// in `docs/conformance.md`, `zk failover after kill -9`.
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
    let first = connect(&mut s, 0, 0);
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
    let out = connect(&mut again, 4, 3);
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

// The timing rules one by one, each against the source it follows (the table in
// `docs/algorithms/zookeeper.md`).

fn timers(out: &Out) -> Vec<(ZkTimer, u64)> {
    out.iter()
        .filter_map(|e| match e {
            Effect::SetTimer {
                timer,
                after_local_ns,
            } => Some((*timer, *after_local_ns)),
            _ => None,
        })
        .collect()
}

fn ping(s: &mut ZkService, now: i64, session: u64) -> ZkMsg {
    sends(&call(s, now, 0, ZkMsg::Ping { session }))[0]
        .1
        .clone()
}

fn pong(session: u64, expired: bool) -> ZkMsg {
    ZkMsg::Pong { session, expired }
}

/// Source: `server/ZooKeeperServer.java`, `processConnectRequest`: the clamped timeout is the
/// session's (`cnxn.setSessionTimeout(sessionTimeout)`, `createSession(cnxn, passwd,
/// sessionTimeout)`) and goes back in the connect response. Measured in
/// `docs/conformance.md`, `zk negotiate`.
#[test]
fn the_server_grants_and_answers_the_negotiated_timeout() {
    let mut s = ZkService::new(&config());
    let granted = |s: &mut ZkService, asked_ms: u64| {
        let out = call(
            s,
            0,
            0,
            ZkMsg::Connect {
                timeout_ns: asked_ms * NANOS_PER_MILLI,
            },
        );
        match sends(&out)[0].1 {
            ZkMsg::ConnectResp { timeout_ns, .. } => timeout_ns / NANOS_PER_MILLI,
            ref other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        [50, 700, 5000].map(|asked| granted(&mut s, asked)),
        [200, 700, 2000]
    );
}

/// Source: `server/ExpiryQueue.java`, `roundToNextInterval`: `(time / expirationInterval + 1)
/// * expirationInterval`, the first tick strictly after `now + timeout`, so a session touched
/// on a tick lives a whole tick past its timeout; `server/SessionTrackerImpl.java`, `run`:
/// the tracker sleeps `getWaitTime()`, until that bucket.
#[test]
fn a_session_touched_on_a_tick_expires_a_whole_tick_after_its_timeout() {
    let mut s = ZkService::new(&config());
    let out = connect(&mut s, 0, 0);
    // Touched at 0 with a 1s timeout: 1000ms is a tick, the bucket is the next one.
    assert!(timers(&out).contains(&(ZkTimer::Expiry, 1100 * MS as u64)));
    let ZkMsg::ConnectResp { session, .. } = sends(&out)[0].1 else {
        panic!()
    };
    assert_eq!(
        ping(&mut s.clone(), 1100 * MS - 1, session),
        pong(session, false)
    );
    assert_eq!(ping(&mut s, 1100 * MS, session), pong(session, true));
}

/// Source: `server/ZooKeeperServer.java`, `submitRequestNow`: `touch(si.cnxn)` for every
/// request, which `server/SessionTrackerImpl.java`, `touchSession`, turns into
/// `sessionExpiryQueue.update(s, timeout)`: a getChildren or an exists renews the session as a
/// ping does.
#[test]
fn any_request_renews_the_session_from_its_arrival() {
    let requests: [fn(u64) -> ZkMsg; 3] = [
        |session| ZkMsg::GetChildren {
            session,
            watch: false,
        },
        |session| ZkMsg::Exists { session, seq: 0 },
        |session| ZkMsg::Create { session },
    ];
    for request in requests {
        let mut s = ZkService::new(&config());
        let (session, _) = join(&mut s, 0, 0);
        // Left alone, the session would expire at 1100ms; the request at 500ms moves its
        // bucket to 1600ms.
        let request = request(session);
        call(&mut s, 500 * MS, 0, request.clone());
        assert_eq!(
            ping(&mut s.clone(), 1600 * MS - 1, session),
            pong(session, false),
            "{request:?}"
        );
        assert_eq!(
            ping(&mut s, 1600 * MS, session),
            pong(session, true),
            "{request:?}"
        );
    }
}

/// Source: `server/SessionTrackerImpl.java`, the constructor: every session of the snapshot
/// (`zkDb.getSessionWithTimeOuts()`) goes through `trackSession`, which sets its expiry from
/// now: a full timeout from the restart.
#[test]
fn a_restarted_server_gives_every_session_a_full_timeout_from_the_restart() {
    let mut s = ZkService::new(&config());
    let (session, _) = join(&mut s, 0, 0);
    let mut rng = SimRng::stream(1, StreamId::node(5));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId(5), 5, 900 * MS, &mut rng, &mut out);
    s.on_restart(&mut ctx);
    // Restarted at 900ms: the bucket moves from 1100ms to 2000ms.
    assert!(timers(&out).contains(&(ZkTimer::Expiry, 1100 * MS as u64)));
    assert_eq!(
        ping(&mut s.clone(), 2000 * MS - 1, session),
        pong(session, false)
    );
    assert_eq!(ping(&mut s, 2000 * MS, session), pong(session, true));
}

/// Drives one client (member 0 of 3) by hand at local time `now`.
fn client_call(
    c: &mut ZkClient,
    now: i64,
    f: impl FnOnce(&mut ZkClient, &mut Ctx<'_, ZkMsg, ZkTimer>),
) -> Out {
    let mut rng = SimRng::stream(1, StreamId::node(0));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId(0), 3, now, &mut rng, &mut out);
    f(c, &mut ctx);
    out
}

fn deliver(c: &mut ZkClient, now: i64, msg: ZkMsg) -> Out {
    client_call(c, now, |c, ctx| c.on_message(ctx, NodeId(3), msg))
}

fn fire(c: &mut ZkClient, now: i64, timer: ZkTimer) -> Out {
    client_call(c, now, |c, ctx| c.on_timer(ctx, timer))
}

/// A client of `cfg` that asked for its session at 0 and was granted `granted_ms` (session 7)
/// at 10ms, with the answer's effects.
fn client_with_session(cfg: &ZkConfig, granted_ms: u64) -> (ZkClient, Out) {
    let mut c = ZkClient::new(NodeId(0), 3, cfg);
    client_call(&mut c, 0, |c, ctx| c.on_start(ctx));
    let out = deliver(
        &mut c,
        10 * MS,
        ZkMsg::ConnectResp {
            session: 7,
            timeout_ns: granted_ms * NANOS_PER_MILLI,
        },
    );
    (c, out)
}

/// The same client, its child (sequence 0, czxid 2) created and seen lowest at 20ms: it leads.
fn leader(cfg: &ZkConfig) -> ZkClient {
    let (mut c, _) = client_with_session(cfg, 1000);
    deliver(&mut c, 20 * MS, ZkMsg::CreateResp { seq: 0, czxid: 2 });
    let out = deliver(
        &mut c,
        20 * MS,
        ZkMsg::Children {
            zxid: 2,
            children: vec![(0, 2, NodeId(0))],
        },
    );
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::BecameLeader { token: 2, .. })));
    c
}

/// Source: `ClientCnxn.java`, `SendThread.run`: a ping once `readTimeout / 2` has passed
/// without a send, with `readTimeout = negotiatedSessionTimeout * 2 / 3` (`onConnected`): a
/// third of the timeout the server granted, not of the one asked for. The model pings on a
/// fixed grid (the Java client counts from its last send, 1s sooner once idle over 1s).
#[test]
fn the_client_pings_every_third_of_the_granted_timeout() {
    // Asked for 1s, granted 2s: pings every 666.67ms.
    let (mut c, out) = client_with_session(&config(), 2000);
    let third = 2000 * NANOS_PER_MILLI / 3;
    assert!(timers(&out).contains(&(ZkTimer::Ping, third)));
    let out = fire(&mut c, 10 * MS + third as i64, ZkTimer::Ping);
    assert_eq!(sends(&out), vec![(3, ZkMsg::Ping { session: 7 })]);
    assert_eq!(timers(&out), vec![(ZkTimer::Ping, third)]);
}

/// Source: `ClientCnxn.java`, `SendThread.run`: `to = readTimeout - getIdleRecv()`, disconnected
/// when `to <= 0`, `readTimeout = negotiatedSessionTimeout * 2 / 3`; `ClientCnxnSocketNIO.java`,
/// `doIO`: `updateLastHeard()` after any packet read (here a watch notification). Measured in
/// `docs/conformance.md`, `zk disconnect seen (Java client)`. kazoo detects earlier; the model
/// follows the Java client.
#[test]
fn a_leader_is_disconnected_two_thirds_of_the_timeout_after_it_last_heard_anything() {
    let mut c = leader(&config());
    let two_thirds = (2 * 1000 * NANOS_PER_MILLI / 3) as i64;
    // Last heard at 20ms.
    assert_eq!(c.write_token(20 * MS + two_thirds - 1), Some(2));
    assert_eq!(c.write_token(20 * MS + two_thirds), None);
    // Any packet counts: a notification at 500ms moves the limit.
    let out = deliver(&mut c, 500 * MS, ZkMsg::ChildrenChanged { zxid: 3 });
    assert!(timers(&out).contains(&(ZkTimer::Disconnect, two_thirds as u64)));
    assert_eq!(c.write_token(500 * MS + two_thirds - 1), Some(2));
    assert_eq!(c.write_token(500 * MS + two_thirds), None);
    // The unsafe variant keeps its token until told the session expired.
    let keep = leader(&ZkConfig {
        on_disconnect: ZkOnDisconnect::KeepUntilExpired,
        ..config()
    });
    assert_eq!(keep.write_token(20 * MS + 10 * two_thirds), Some(2));
}

/// Source: Curator's `LeaderLatch.handleStateChange`: `SUSPENDED` (the client's
/// `Disconnected`) → `setLeadership(false)`, `RECONNECTED` → `getChildren()`, and
/// `checkLeadership`: `ourIndex == 0` → `setLeadership(true)`. An expired session
/// (`ClientCnxn.SendThread.onConnected`: `negotiatedSessionTimeout <= 0` → `Expired`) starts over.
#[test]
fn a_disconnected_leader_steps_down_and_claims_again_after_hearing_from_its_live_session() {
    let mut c = leader(&config());
    let two_thirds = (2 * 1000 * NANOS_PER_MILLI / 3) as i64;
    let out = fire(&mut c, 20 * MS + two_thirds, ZkTimer::Disconnect);
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::Signal(Signal::LeaderSuspected))));
    assert!(out.iter().any(|e| matches!(e, Effect::SteppedDown)));
    let mut expired = c.clone();
    // Its session is alive: list the children, claim again as the lowest.
    let out = deliver(&mut c, 900 * MS, pong(7, false));
    assert_eq!(
        sends(&out),
        vec![(
            3,
            ZkMsg::GetChildren {
                session: 7,
                watch: false
            }
        )]
    );
    let out = deliver(
        &mut c,
        901 * MS,
        ZkMsg::Children {
            zxid: 3,
            children: vec![(0, 2, NodeId(0)), (1, 3, NodeId(1))],
        },
    );
    assert!(out
        .iter()
        .any(|e| matches!(e, Effect::BecameLeader { token: 2, .. })));
    // Its session expired: a new session.
    let out = deliver(&mut expired, 900 * MS, pong(7, true));
    assert_eq!(
        sends(&out),
        vec![(
            3,
            ZkMsg::Connect {
                timeout_ns: 1000 * NANOS_PER_MILLI
            }
        )]
    );
}

/// Source: `zookeeper-docs/.../recipes.md`, "Leader Election": watch "ELECTION/guid-n_j, where
/// j is the largest sequence number such that j < i"; the herd instead has every waiter
/// execute getChildren with a watch on the election node.
#[test]
fn a_waiter_watches_its_predecessor_and_a_herd_waiter_the_children() {
    let children = vec![(0, 2, NodeId(1)), (2, 4, NodeId(2)), (5, 7, NodeId(0))];
    let (mut c, _) = client_with_session(&config(), 1000);
    deliver(&mut c, 20 * MS, ZkMsg::CreateResp { seq: 5, czxid: 7 });
    let out = deliver(
        &mut c,
        21 * MS,
        ZkMsg::Children {
            zxid: 7,
            children: children.clone(),
        },
    );
    assert_eq!(sends(&out), vec![(3, ZkMsg::Exists { session: 7, seq: 2 })]);

    let herd = ZkConfig {
        recipe: ZkRecipe::Herd,
        ..config()
    };
    let (mut c, _) = client_with_session(&herd, 1000);
    let out = deliver(&mut c, 20 * MS, ZkMsg::CreateResp { seq: 5, czxid: 7 });
    assert!(sends(&out).contains(&(
        3,
        ZkMsg::GetChildren {
            session: 7,
            watch: true
        }
    )));
    let out = deliver(&mut c, 21 * MS, ZkMsg::Children { zxid: 7, children });
    assert!(sends(&out).is_empty(), "{:?}", sends(&out));
}

/// No ZooKeeper source: the model's own retries and resync. The Java client resends nothing
/// (TCP) and a waiter of the recipe sends nothing but pings; `docs/conformance.md`, `zk
/// requests by 20 waiters in 20s`, measures the difference (0 real, 100 in the model).
#[test]
fn requests_are_retried_every_third_and_a_waiter_resyncs_once_per_timeout() {
    let third = 1000 * NANOS_PER_MILLI / 3;
    let mut c = ZkClient::new(NodeId(0), 3, &config());
    client_call(&mut c, 0, |c, ctx| c.on_start(ctx));
    let out = fire(&mut c, third as i64, ZkTimer::Retry);
    assert_eq!(
        sends(&out),
        vec![(
            3,
            ZkMsg::Connect {
                timeout_ns: 1000 * NANOS_PER_MILLI
            }
        )]
    );
    assert_eq!(timers(&out), vec![(ZkTimer::Retry, third)]);
    let (mut c, _) = client_with_session(&config(), 1000);
    let out = deliver(&mut c, 20 * MS, ZkMsg::CreateResp { seq: 5, czxid: 7 });
    assert!(timers(&out).contains(&(ZkTimer::Retry, 1000 * NANOS_PER_MILLI)));
    let out = fire(&mut c, 1020 * MS, ZkTimer::Retry);
    assert_eq!(
        sends(&out),
        vec![(
            3,
            ZkMsg::GetChildren {
                session: 7,
                watch: false
            }
        )]
    );
    assert_eq!(timers(&out), vec![(ZkTimer::Retry, 1000 * NANOS_PER_MILLI)]);
}

/// Children reads the server took from clients that do not lead, over a quiet 15 s run.
fn waiter_reads(transport: splitbrain_sim::Transport) -> usize {
    let zk = config();
    let members = 3;
    let (report, events) = traced::run_traced_on(
        transport,
        members,
        info(&zk, members),
        crate::zookeeper::processes(members, &zk),
        Vec::new(),
    );
    let leader = report.leaders[0].node;
    (0..members)
        .map(NodeId::from)
        .filter(|m| *m != leader)
        .map(|m| deliveries(&events, members, m, &["GetChildren"], u64::MAX).len())
        .sum()
}

/// The recipe's waiter reads the children once after creating its node, sets its watch and
/// then only pings (Curator's LeaderLatch waits on the watcher). On Stream the model's
/// waiters do the same; on Datagram they also resync once per session timeout.
#[test]
fn on_stream_a_waiter_reads_the_children_once_and_on_datagram_it_resyncs() {
    let stream = splitbrain_sim::Transport::Stream(splitbrain_sim::StreamConfig::default());
    assert_eq!(waiter_reads(stream), 2, "one read per waiter");
    assert!(waiter_reads(splitbrain_sim::Transport::Datagram) > 4);
}

/// A client of `cfg` started on `Stream` and granted session 7 at 10ms, its child (sequence
/// 5) created at 20ms behind `children` read at 21ms.
fn stream_waiter(cfg: &ZkConfig, children: Vec<(u64, u64, NodeId)>) -> ZkClient {
    let mut c = ZkClient::new(NodeId(0), 3, cfg);
    let mut rng = SimRng::stream(1, StreamId::node(0));
    let mut out = Vec::new();
    let mut ctx = Ctx::new(NodeId(0), 3, 0, &mut rng, &mut out).on_stream(true);
    c.on_start(&mut ctx);
    let session = ZkMsg::ConnectResp {
        session: 7,
        timeout_ns: 1000 * NANOS_PER_MILLI,
    };
    deliver(&mut c, 10 * MS, session);
    deliver(&mut c, 20 * MS, ZkMsg::CreateResp { seq: 5, czxid: 7 });
    deliver(&mut c, 21 * MS, ZkMsg::Children { zxid: 7, children });
    c
}

/// Curator's `LeaderLatch.getLeader()` polls the server; a waiter of the recipe on `Stream`
/// keeps no other track of who leads, so it says it would ask, unless it is reconnecting.
/// A herd waiter and a waiter on `Datagram` keep track; a leader names itself while it serves.
#[test]
fn who_a_client_names_for_the_liveness_check() {
    let children = vec![(0, 2, NodeId(1)), (2, 4, NodeId(2)), (5, 7, NodeId(0))];
    let mut waiter = stream_waiter(&config(), children.clone());
    assert!(waiter.learns_leader_on_demand());
    client_call(&mut waiter, 30 * MS, |c, ctx| {
        c.on_disconnect(ctx, NodeId(3))
    });
    assert!(
        !waiter.learns_leader_on_demand(),
        "reconnecting: it cannot ask"
    );
    assert_eq!(
        waiter.known_leader(),
        Some(NodeId(1)),
        "its last view counts"
    );

    let herd = ZkConfig {
        recipe: ZkRecipe::Herd,
        ..config()
    };
    assert!(!stream_waiter(&herd, children.clone()).learns_leader_on_demand());

    let (mut datagram, _) = client_with_session(&config(), 1000);
    deliver(
        &mut datagram,
        20 * MS,
        ZkMsg::CreateResp { seq: 5, czxid: 7 },
    );
    deliver(
        &mut datagram,
        21 * MS,
        ZkMsg::Children { zxid: 7, children },
    );
    assert!(!datagram.learns_leader_on_demand());
    assert_eq!(datagram.known_leader(), Some(NodeId(1)));

    let step_down = ZkConfig {
        on_disconnect: ZkOnDisconnect::StepDown,
        ..config()
    };
    let mut cut_off = leader(&step_down);
    assert_eq!(cut_off.known_leader(), Some(NodeId(0)));
    fire(&mut cut_off, 700 * MS, ZkTimer::Disconnect);
    assert_eq!(
        cut_off.known_leader(),
        None,
        "it stepped down (nothing heard for 2/3 of the timeout): it leads without serving"
    );

    let mut leader = leader(&config());
    assert_eq!(leader.known_leader(), Some(NodeId(0)));
    assert!(!leader.learns_leader_on_demand());
    deliver(&mut leader, 900 * MS, pong(7, true));
    assert_eq!(
        leader.known_leader(),
        None,
        "its session expired: it starts over and names nobody, itself least"
    );
}

/// What a client asking who leads is told: the owner of the lowest child, the next once it
/// goes (Curator's `LeaderLatch.getLeader()` takes the first participant).
#[test]
fn the_server_names_the_owner_of_the_lowest_child() {
    let mut s = ZkService::new(&config());
    assert_eq!(s.leader(), None);
    let (first, _) = join(&mut s, 0, 1);
    join(&mut s, 0, 2);
    assert_eq!(s.leader(), Some(NodeId(1)));
    call(&mut s, 10, 1, ZkMsg::CloseSession { session: first });
    assert_eq!(s.leader(), Some(NodeId(2)));
}
